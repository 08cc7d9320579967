"""Provider access for every model call Atelier makes: generation, splitting, checklists, judging, embeddings, renders.

* :mod:`engine.providers.client` — :class:`ProviderConfig`, :class:`OpenAICompatibleClient`
  (``chat``, ``chat_many``, ``embed``), :class:`ChatRequest`, :class:`ChatResult`, :class:`ProviderError`.
* :mod:`engine.providers.cache` — :class:`RequestCache`, the persistent answer store that makes runs resumable.
* :mod:`engine.providers.usage` — :class:`UsageLedger`, token and cost accounting per run.
* :mod:`engine.providers.json_reply` — :func:`parse_json_object`, reading a "strict JSON" reply.
* :mod:`engine.providers.images` — :class:`~engine.providers.images.ImageGenerationClient`, the same client
  for ``images/generations`` (the App. I.1 renders), and :func:`~engine.providers.images.read_image`.

The package re-exports nothing: import each name from the module it lives in.
"""

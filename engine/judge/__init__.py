"""Checklist-assisted pairwise judging (Ekphrasis §4.1, App. D, App. E, App. F.2).

* :mod:`~engine.judge.comparison` — the contract: :class:`PairJudgeRequest`, :class:`PairJudgement`,
  :class:`Candidate`, :class:`ComparisonKind`, the :class:`Judge` protocol, comparison identity;
* :mod:`~engine.judge.prompt` — the judge prompt and the repair prompt;
* :mod:`~engine.judge.schema` — strict validation of the App. E JSON;
* :mod:`~engine.judge.repair` — validate, repair once, or fail: the path every reply takes;
* :mod:`~engine.judge.llm` — :class:`LLMJudge`, through an OpenAI-compatible provider;
* :mod:`~engine.judge.simulated` — :class:`SimulatedJudge`, labelled ``"simulated"``;
* :mod:`~engine.judge.sampling` — A/B order, swap share, fixed samples for duplicates and auxiliaries.

The package re-exports nothing: import each name from the module it lives in.
"""

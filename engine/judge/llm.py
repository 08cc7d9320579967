"""The LLM pairwise judge: checklist-assisted A/B comparison through a provider (Ekphrasis §4.1, App. E).

``LLMJudge(client)`` sends one prompt per comparison (:mod:`engine.judge.prompt`)
concurrently through the client, validates each reply against the App. E
schema and repairs an invalid one with a single call — to the same model
unless a ``repair_client`` is given (App. C.2: the repair route is the judge's
route) — via the shared path of :mod:`engine.judge.repair`.

Caching: each comparison's cache ``sample_index`` is ``"<kind>:<repeat>"``, so
a duplicate repeat is a fresh call although its prompt equals the primary's,
while a resumed run reads every answered comparison back from the cache. The
run id is not in it: two runs sharing a cache file reuse each other's answers
to identical prompts, unless each passes its own ``cache_namespace``. A
request with ``retry > 0`` (a re-submission after a failed judgement)
bypasses the cache and overwrites it.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.judge.comparison import PairJudgement, PairJudgeRequest
from engine.judge.prompt import judge_messages, repair_messages
from engine.judge.repair import Reply, ReplyHook, judge_with_repair
from engine.providers.client import ChatRequest, OpenAICompatibleClient

__all__ = ["LLMJudge"]

JSON_MODE = {"type": "json_object"}


class LLMJudge:
    """A judge backed by an OpenAI-compatible model; ``name`` defaults to the model id."""

    def __init__(
        self,
        client: OpenAICompatibleClient,
        *,
        name: str | None = None,
        repair_client: OpenAICompatibleClient | None = None,
        json_mode: bool = False,
        cache_namespace: str = "",
    ) -> None:
        self.client = client
        self.repair_client = repair_client or client
        self.name = name or client.config.model
        self.json_mode = json_mode
        self.cache_namespace = cache_namespace

    def __repr__(self) -> str:
        return f"LLMJudge(name={self.name!r}, client={self.client!r})"

    def judge_pairs(self, requests: Sequence[PairJudgeRequest]) -> list[PairJudgement]:
        """Judge every request; same order, one judgement each (failures included)."""
        return judge_with_repair(requests, judge_name=self.name, ask=self._ask, repair=self._repair)

    def _sample_index(self, request: PairJudgeRequest) -> str:
        prefix = f"{self.cache_namespace}/" if self.cache_namespace else ""
        return f"{prefix}{request.kind.value}:{request.repeat}"

    def _ask(self, requests: Sequence[PairJudgeRequest], on_reply: ReplyHook) -> list[Reply]:
        return self.client.chat_many(
            [
                ChatRequest(
                    messages=judge_messages(request),
                    sample_index=self._sample_index(request),
                    response_format=JSON_MODE if self.json_mode else None,
                    refresh=request.retry > 0,
                )
                for request in requests
            ],
            on_result=on_reply,
        )

    def _repair(self, batch: Sequence[tuple[PairJudgeRequest, str, list[str]]]) -> list[Reply]:
        return self.repair_client.chat_many(
            [
                ChatRequest(
                    messages=repair_messages(request, raw, problems),
                    sample_index=self._sample_index(request),
                    response_format=JSON_MODE if self.json_mode else None,
                    refresh=request.retry > 0,
                )
                for request, raw, problems in batch
            ]
        )

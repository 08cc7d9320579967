"""Validate, repair once, or record a failure: the one path every judge reply takes (Ekphrasis App. E, D.2).

:func:`judge_with_repair` is shared by the LLM judge and the simulated judge,
so both exercise exactly the same schema checks and repair bookkeeping:

1. comparisons with an empty inspected field get the automatic App. F.2
   record and are never sent;
2. the rest are asked (``ask``) in one concurrent batch;
3. each reply is validated (:func:`~engine.judge.schema.validate_judge_reply`);
4. invalid replies get exactly one repair call (``repair``), batched; a valid
   repair is recorded with ``repaired=True``;
5. anything still invalid, and any provider failure, is a judgement with
   ``ok=False`` and its error — returned, never dropped, so the caller can
   record it and retry (``PairJudgeRequest.retry``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.judge.comparison import PairJudgement, PairJudgeRequest, automatic_judgement
from engine.judge.schema import JudgeReply, JudgeSchemaError, validate_judge_payload, validate_judge_reply
from engine.providers.client import ChatResult, ProviderError

__all__ = ["Ask", "EncodedReply", "Repair", "judge_with_repair"]

Reply = ChatResult | ProviderError
ReplyHook = Callable[[int, Reply], None]
# ask(requests, on_reply) -> replies in order; it may call on_reply(i, reply) as each arrives, so validation
# overlaps with the calls still in flight.
Ask = Callable[[Sequence[PairJudgeRequest], ReplyHook], list[Reply]]
Repair = Callable[[Sequence[tuple[PairJudgeRequest, str, list[str]]]], list[Reply]]


class _EncodedText:
    """An :class:`EncodedReply`'s ``text``: given, or (given as None) its ``encode`` of its payload, written the
    first time it is read."""

    def __get__(self, reply, owner=None):
        if reply is None:
            return self
        text = reply.__dict__["_text"]
        if text is None:
            text = reply.__dict__["_text"] = reply.encode(reply.payload)
        return text

    def __set__(self, reply, text) -> None:
        reply.__dict__["_text"] = text


@dataclass(frozen=True)
class EncodedReply(ChatResult):
    """A reply whose judge wrote its ``text`` as the JSON encoding of ``payload`` (a JSON object), and whose
    text holds no NUL and no lone surrogate (:func:`engine.strict_json.storable_text`): reading the text back
    strictly gives exactly ``payload`` with no problem, so the payload is validated without reading the text
    (the simulated judge's replies; a provider's are read from their text). The text is the reply all the
    same (``raw_output``); given as None, it is ``encode(payload)``, written only when read (a judgement holds
    the reply, :class:`~engine.judge.comparison.PairJudgement`): a judge run never reads it."""

    payload: dict[str, Any] = field(default_factory=dict)
    encode: Callable[[dict[str, Any]], str] | None = None

    text = _EncodedText()  # type: ignore[assignment]  # ChatResult's first field, written on read


def _validate(request: PairJudgeRequest, reply: ChatResult) -> JudgeReply:
    if type(reply) is EncodedReply:
        return validate_judge_payload(reply.payload, dimension=request.dimension, item_count=len(request.checklist.items))
    return validate_judge_reply(reply.text, dimension=request.dimension, item_count=len(request.checklist.items))


def _judged(
    request: PairJudgeRequest,
    judge_name: str,
    reply: JudgeReply,
    first: ChatResult,
    repair: ChatResult | None = None,
) -> PairJudgement:
    # the answers' figures added up as sum() and all() did over the one or two answers, written out: most
    # judgements have one answer, and the generators cost more than building the judgement
    if repair is None:
        calls, cached, prompt_tokens = 1, bool(first.cached), 0 + first.prompt_tokens
        completion_tokens, cost_usd = 0 + first.completion_tokens, 0 + first.cost_usd
    else:
        calls, cached = 2, bool(first.cached) and bool(repair.cached)
        prompt_tokens = 0 + first.prompt_tokens + repair.prompt_tokens
        completion_tokens = 0 + first.completion_tokens + repair.completion_tokens
        cost_usd = 0 + first.cost_usd + repair.cost_usd
    return PairJudgement(
        request=request,
        judge_name=judge_name,
        ok=True,
        winner=reply.winner,
        confidence=reply.confidence,
        overall_rationale=reply.overall_rationale,
        per_item_outcomes=reply.per_item_outcomes,
        repaired=repair is not None,
        calls=calls,
        cached=cached,
        raw_output=first,  # its text, read when the judgement's is (an EncodedReply writes it only then)
        repair_output=repair,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=cost_usd,
    )


def _failed(
    request: PairJudgeRequest,
    judge_name: str,
    error: str,
    first: ChatResult | None = None,
    repair: ChatResult | None = None,
    *,
    calls: int,
    provider_unreachable: bool = False,
) -> PairJudgement:
    answers = [answer for answer in (first, repair) if answer is not None]
    return PairJudgement(
        request=request,
        judge_name=judge_name,
        ok=False,
        repaired=False,
        calls=calls,
        raw_output=None if first is None else first.text,
        repair_output=None if repair is None else repair.text,
        error=error,
        provider_unreachable=provider_unreachable,
        prompt_tokens=sum(answer.prompt_tokens for answer in answers),
        completion_tokens=sum(answer.completion_tokens for answer in answers),
        cost_usd=sum(answer.cost_usd for answer in answers),
    )


def judge_with_repair(
    requests: Sequence[PairJudgeRequest], *, judge_name: str, ask: Ask, repair: Repair
) -> list[PairJudgement]:
    """Judge ``requests`` through ``ask`` and at most one ``repair`` each; results in input order."""
    results: list[PairJudgement | None] = [None] * len(requests)
    to_ask: list[int] = []
    for index, request in enumerate(requests):
        automatic = automatic_judgement(request, judge_name)
        if automatic is None:
            to_ask.append(index)
        else:
            results[index] = automatic
    if not to_ask:
        return results  # type: ignore[return-value]

    checked: dict[int, JudgeReply | JudgeSchemaError] = {}

    def check(position: int, reply: Reply) -> None:
        if isinstance(reply, ChatResult):
            try:
                checked[position] = _validate(requests[to_ask[position]], reply)
            except JudgeSchemaError as invalid:
                checked[position] = invalid

    replies = ask([requests[i] for i in to_ask], check)
    needs_repair: list[tuple[int, ChatResult, list[str]]] = []
    for position, (index, reply) in enumerate(zip(to_ask, replies, strict=True)):
        request = requests[index]
        if isinstance(reply, ProviderError):
            results[index] = _failed(request, judge_name, f"provider: {reply.message}", calls=1,
                                     provider_unreachable=reply.retryable)
            continue
        if position not in checked:
            check(position, reply)
        verdict = checked[position]
        if isinstance(verdict, JudgeSchemaError):
            needs_repair.append((index, reply, verdict.problems))
        else:
            results[index] = _judged(request, judge_name, verdict, reply)

    if needs_repair:
        repairs = repair([(requests[i], first.text, problems) for i, first, problems in needs_repair])
        for (index, first, problems), fixed in zip(needs_repair, repairs, strict=True):
            request = requests[index]
            if isinstance(fixed, ProviderError):
                error = f"invalid reply ({'; '.join(problems)}); repair call failed: {fixed.message}"
                results[index] = _failed(request, judge_name, error, first, calls=2,
                                         provider_unreachable=fixed.retryable)
                continue
            try:
                results[index] = _judged(request, judge_name, _validate(request, fixed), first, fixed)
            except JudgeSchemaError as still:
                error = f"invalid reply ({'; '.join(problems)}); invalid after repair ({still})"
                results[index] = _failed(request, judge_name, error, first, fixed, calls=2)

    assert all(result is not None for result in results)
    return results  # type: ignore[return-value]

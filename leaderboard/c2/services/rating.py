"""Rating divergent samples with the rubric rater (c2-eval.txt §3.2.2).

The rater is chosen by name: ``simulated`` is the engine's labelled :class:`~engine.c2.simulated.SimulatedRater`
(only that name selects it); any other name is a ``SubjectModel`` with role *judge* reached through the
one provider client. The rater sees the task's prompt, the sample and (visual story telling) the image —
never the model's name. Its reply is strict JSON; an invalid reply gets one repair turn
(:func:`engine.providers.json_reply.repair_turn`), as in the Ekphrasis judge. The sample is framed as data
the rater must not obey (:func:`engine.c2.rater.build_rater_messages`); a sample that addresses the rater
anyway (:func:`engine.c2.rater.injection_signals`) is logged as a warning with its run, sample and signals
when it is sent, so a researcher can read those ratings.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from engine.c2.rater import build_rater_messages, injection_signals, parse_rating, repair_messages
from engine.c2.simulated import SimulatedRater
from engine.providers.client import ChatRequest, ProviderError
from leaderboard.c2.models import C2Rating, C2Run
from leaderboard.models import SubjectModel, Task
from leaderboard.providers import provider_client_for
from leaderboard.run_usage import client_usage_take
from leaderboard.runs.errors import ProviderCallsUnanswered, provider_outage_of

RATER_TEMPERATURE = 0.0

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RatingOutcome:
    ok: bool
    u: int | None = None
    o: int | None = None
    s: int | None = None
    rationale_u: str = ""
    rationale_o: str = ""
    rationale_s: str = ""
    raw: str = ""
    repaired: bool = False
    error: str = ""


@dataclass
class RatingJob:
    rating: C2Rating
    task: Task
    text: str
    image_url: str | None


def _outcome(rating, raw: str, repaired: bool) -> RatingOutcome:
    return RatingOutcome(
        ok=True, u=int(rating.u), o=int(rating.o), s=int(rating.s), rationale_u=rating.rationale_u,
        rationale_o=rating.rationale_o, rationale_s=rating.rationale_s, raw=raw, repaired=repaired,
    )


class ProviderRater:
    is_simulated = False

    def __init__(self, model: SubjectModel) -> None:
        self.name = model.display_name
        self.client = provider_client_for(model, temperature=RATER_TEMPERATURE, cache_name="c2-rater")

    def _chat_many(self, requests: list[ChatRequest]) -> list:
        """The batch's replies; an outage stops the batch unstored (resumed, it asks again, answered calls
        from the cache) rather than recording its ratings as failed."""
        replies = self.client.chat_many(requests)
        outage = provider_outage_of(replies)
        if outage is not None:
            raise ProviderCallsUnanswered(outage, who=f"rater {self.name!r}")
        return replies

    def rate(self, jobs: list[RatingJob]) -> list[RatingOutcome]:
        for job in jobs:
            signals = injection_signals(job.text)
            if signals:
                logger.warning("C² run %s: sample %s (rating %s, repeat %s) addresses the rater (%s); rated as data",
                               job.rating.sample.run_id, job.rating.sample_id, job.rating.pk, job.rating.repeat,
                               ", ".join(signals))
        messages = [build_rater_messages(job.task.brief, job.text, image=job.image_url) for job in jobs]
        first = self._chat_many([
            ChatRequest(messages=m, temperature=RATER_TEMPERATURE, sample_index=f"c2-rate:{job.rating.repeat}")
            for m, job in zip(messages, jobs, strict=True)
        ])
        outcomes: list[RatingOutcome | None] = [None] * len(jobs)
        repairs: list[tuple[int, list]] = []
        for k, reply in enumerate(first):
            parsed, problem = _parse(reply)
            if parsed is not None:
                outcomes[k] = _outcome(parsed, reply.text, False)
            elif problem.startswith("provider:"):
                outcomes[k] = RatingOutcome(ok=False, error=problem)
            else:
                repairs.append((k, repair_messages(messages[k], reply.text, problem)))
        if repairs:
            second = self._chat_many([
                ChatRequest(messages=m, temperature=RATER_TEMPERATURE, sample_index=f"c2-rate-repair:{jobs[k].rating.repeat}")
                for k, m in repairs
            ])
            for (k, _), reply in zip(repairs, second, strict=True):
                parsed, problem = _parse(reply)
                outcomes[k] = (_outcome(parsed, reply.text, True) if parsed is not None
                               else RatingOutcome(ok=False, raw=getattr(reply, "text", ""), repaired=True, error=problem))
        return outcomes  # type: ignore[return-value]

    def usage(self) -> dict:
        return client_usage_take(self.client)


def _parse(reply):
    """(rating, "") or (None, what was wrong)."""
    if isinstance(reply, ProviderError):
        return None, f"provider: {str(reply)[:500]}"
    try:
        return parse_rating(reply.text), ""
    except ValueError as exc:  # MalformedReply and the rater's own schema errors are ValueErrors
        return None, str(exc)[:500]


class SimulatedRaterAdapter:
    """The engine's labelled simulated rater: it reads the prompt and the response text only."""

    is_simulated = True

    def __init__(self, run: C2Run) -> None:
        self.rater = SimulatedRater(seed=run.seed, **(run.config.get("simulated_rater") or {}))

    def rate(self, jobs: list[RatingJob]) -> list[RatingOutcome]:
        return [_outcome(self.rater.rate(job.task.brief, job.text, repeat=job.rating.repeat), "", False) for job in jobs]

    def usage(self) -> dict:
        return {}


def rater_for(run: C2Run, name: str):
    """The run's primary or second rater, by its name."""
    model = run.rater_model if name == run.rater_name else run.second_rater_model
    if model is None:
        return SimulatedRaterAdapter(run)
    return ProviderRater(model)

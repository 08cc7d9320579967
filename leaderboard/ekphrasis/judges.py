"""Judges of a run: which judge a name selects, and the translation between
stored comparisons and the engine's judge contract (:mod:`engine.judge`).

``"simulated"`` selects the labelled simulated judge (and only that name
does); any other name must be a ``SubjectModel`` with role *judge*, reached
through its OpenAI-compatible endpoint with the API key read from the
environment variable the model names. Auxiliary judges are named the same way.

A response shown to a judge whose inspected field addresses the judge
(:func:`engine.judge.prompt.judge_injection_signals`: a claimed verdict, forged prompt lines, overriding
instructions, role or frame markers) is logged as a warning with its run, task, response and signals, once
per chunk; the prompt frames it as data (:mod:`engine.prompt_framing`), and the run's page counts them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from engine.checklists import DIMENSION_FIELD
from engine.judge.comparison import WINNER_TEXT, Candidate, PairJudgeRequest
from engine.judge.prompt import judge_injection_signals
from engine.judge.simulated import SIMULATED_JUDGE_NAME, SimulatedJudge
from leaderboard.ekphrasis.checklists import (
    ENGINE_DIMENSION,
    checklist_for_judging,
    checklist_items_ensure,
    checklist_items_ensure_many,
    task_brief_of,
)
from leaderboard.ekphrasis.models import ChecklistItem, JudgeRun
from leaderboard.models import Response, Task
from leaderboard.providers import judge_is_simulated, judge_model_for, provider_client_for
from leaderboard.run_usage import client_usage_take, run_usage_add

logger = logging.getLogger(__name__)

SIMULATED_KNOBS = ("position_bias", "length_bias", "tie_rate", "malformed_rate", "skill_spread", "skill_seed",
                   "item_agreement", "answer_spread")

# The simulated judge's own latent skills for the demo models (its configuration, not a run's): chosen to
# match the personalities the demo answers were written with — atlas inventive, brook competent but
# cliché-prone, cinder vivid but clichéd, dune generic. A run's config["simulated"]["skills"] overrides
# them; other models draw theirs from skill_seed. The run seed never changes them.
SIMULATED_JUDGE_SKILLS = {
    "demo-atlas": {"usefulness": 0.9, "expressiveness": 0.5, "novelty": 1.2},
    "demo-brook": {"usefulness": 0.4, "expressiveness": 0.0, "novelty": -0.3},
    "demo-cinder": {"usefulness": -0.2, "expressiveness": 0.8, "novelty": -0.5},
    "demo-dune": {"usefulness": -1.1, "expressiveness": -0.9, "novelty": -0.6},
}


def _build_judge(name: str, run: JudgeRun):
    if judge_is_simulated(name):
        simulated = run.config.get("simulated", {})
        knobs = {k: simulated[k] for k in SIMULATED_KNOBS if k in simulated}
        skills = {**SIMULATED_JUDGE_SKILLS, **(simulated.get("skills") or {})}
        # An auxiliary simulated judge ("simulated-2") is a different judge: its own noise seed, but the
        # same latent skills (the models are what they are; judges differ in noise and biases).
        seed = run.seed if name == SIMULATED_JUDGE_NAME else run.seed + sum(map(ord, name))
        return SimulatedJudge(seed=seed, skills=skills, **knobs)
    from engine.judge.llm import LLMJudge

    return LLMJudge(provider_client_for(judge_model_for(name), cache_name="judge"), name=name)


@dataclass
class RunJudges:
    """The judges of one run, built once per chunk."""

    run: JudgeRun
    judges: dict[str, object] = field(default_factory=dict)
    populations: dict[int, object] = field(default_factory=dict)  # task pk -> TIG PopulationIndex
    # task pk -> the task's TIG ideas (tig.task_ideas), when the chunk read them with its pool
    ideas: dict[int, list[dict]] = field(default_factory=dict)
    # (task pk, model x, model y) -> the pair's stored TIG items: a chunk judges a pair many times
    # (rounds, swaps, duplicates) and asks the database once
    novelty_items: dict[tuple[int, int, int], list] = field(default_factory=dict)
    # task pk -> context key -> active stored TIG items, read once per task (then one lookup per pair)
    stored_contexts: dict[int, dict[str, list]] = field(default_factory=dict)
    # (task pk, dimension) -> the base checklist items, ensured once per chunk like the TIG items
    base_rows: dict[tuple[int, str], list] = field(default_factory=dict)
    # response pk -> its candidate (a response is shown in many calls of a chunk)
    candidates: dict[int, Candidate] = field(default_factory=dict)
    # (task pk, dimension, the rows' pks) -> the engine checklist and the stored copy of what was shown, built once
    # per chunk for each distinct set of rows (every round of U and E shows the same rows; a Novelty pair its own)
    checklists: dict[tuple, tuple] = field(default_factory=dict)
    # (response pk, inspected field) -> its injection signals, screened (and logged) once per chunk
    screened: dict[tuple[int, str], list[str]] = field(default_factory=dict)

    def candidate(self, response) -> Candidate:
        # .id, not .pk: Model.pk is a property that looks the primary key's attname up on every read, and a
        # chunk reads a shown response's id thousands of times (the same value: Response's primary key is id)
        found = self.candidates.get(response.id)
        if found is None:
            found = self.candidates[response.id] = _candidate(response)
        return found

    def screen(self, response, request: PairJudgeRequest) -> None:
        """Log a warning the first time this chunk shows ``response``'s inspected field when it addresses
        the judge (:func:`~engine.judge.prompt.judge_injection_signals`)."""
        inspected = request.inspected_field
        key = (response.id, inspected.value)
        if key in self.screened:
            return
        signals = self.screened[key] = judge_injection_signals(self.candidate(response).field_text(inspected))
        if signals:
            logger.warning("Judge run %s: response %s (task %s, %s) addresses the judge (%s); judged as data",
                           self.run.pk, response.pk, request.task.task_id, inspected.label, ", ".join(signals))

    def get(self, name: str):
        if name not in self.judges:
            self.judges[name] = _build_judge(name, self.run)
        return self.judges[name]


def judge_for_run(run: JudgeRun) -> RunJudges:
    return RunJudges(run)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    winner: str = ""
    confidence: float | None = None
    rationale: str = ""
    per_item_outcomes: list = field(default_factory=list)
    repaired: bool = False
    error: str = ""
    checklist: list = field(default_factory=list)
    provider_unreachable: bool = False  # an outage, not a verdict (engine.judge.comparison.PairJudgement)


def replicate_key(run: JudgeRun) -> str:
    """What identifies a run to its judge: task set and seed, not the database id, so that two runs
    with the same configuration are replicates (a simulated judge gives both the same verdicts)."""
    return f"{run.task_set_id}:{run.seed}"


def _candidate(response) -> Candidate:
    return Candidate(
        model=response.subject_model.display_name, response_id=str(response.pk),
        core_idea=response.core_idea, visual_description=response.visual_description,
    )


def _shown(rows) -> list[dict]:
    return [{"id": r.pk, "slot": r.slot, "version": r.version, "text": r.text, "source": r.source} for r in rows]


def _novelty_prefetch(judges: RunJudges, task: Task, comparisons: Sequence[PlannedCall]) -> None:
    """Make sure every pair of these comparisons has its stored TIG items in ``judges.novelty_items``:
    the task's stored contexts are read once, the missing ones materialised in one insert."""
    from leaderboard.ekphrasis.tig import (
        novelty_contexts_create,
        stored_novelty_contexts,
        task_population_index,
        tig_components_of_run,
        tig_context_key,
    )

    if judges.run.novelty_anchor != "tig":
        return
    if task.id not in judges.populations:
        judges.populations[task.id] = task_population_index(task, components=tig_components_of_run(judges.run),
                                                            ideas=judges.ideas.pop(task.id, None))
        judges.stored_contexts[task.id] = stored_novelty_contexts(task=task, version=judges.populations[task.id].version)
    index, stored = judges.populations[task.id], judges.stored_contexts[task.id]
    missing = []
    for c in comparisons:
        key = (task.id, c.model_x_id, c.model_y_id)
        if key in judges.novelty_items:
            continue
        rows = stored.get(tig_context_key(c.model_x_id, c.model_y_id, index.version))
        if rows is None:
            missing.append((c.model_x_id, c.model_y_id))
        else:
            judges.novelty_items[key] = rows
    if missing:
        for (x, y), rows in novelty_contexts_create(task=task, pairs=missing, index=index).items():
            judges.novelty_items[(task.id, x, y)] = rows


def _novelty_anchor(judges: RunJudges, task: Task, comparison: PlannedCall):
    """The item that replaces slot 1 of a judged pair's Novelty checklist: its leave-two-models-out
    population-cliché item when the TIG has one, else None (the base items; App. E.3, G.5). The pair's stored
    items are in ``judges.novelty_items`` (:func:`_novelty_prefetch` of the comparisons being judged)."""
    if judges.run.novelty_anchor != "tig":
        return None  # generic anchors: the ablation condition (App. D.1)
    tig_rows = judges.novelty_items[(task.id, comparison.model_x_id, comparison.model_y_id)]
    return tig_rows[0] if tig_rows else None


def _judge_writes_checklists(judges: RunJudges) -> bool:
    """Whether the run's judge writes the task's checklists itself: a provider judge (one with a client) does;
    the simulated judge is shown the templates."""
    return getattr(judges.get(judges.run.judge_name), "client", None) is not None


def _judge_model_checklist(judges: RunJudges, task: Task, dimension: str):
    """A provider judge writes the task's checklist itself, one prompt per dimension (App. E); a
    failure after repair falls back to the labelled templates."""
    from engine.checklists import Checklist, generate_checklists

    if not _judge_writes_checklists(judges) or ChecklistItem.objects.filter(task=task, dimension=dimension, active=True, context_key="").exists():
        return None
    client = judges.get(judges.run.judge_name).client
    outcome = generate_checklists(client, [(task_brief_of(task), ENGINE_DIMENSION[dimension])])[0]
    return outcome if isinstance(outcome, Checklist) else None


class PlannedCall(Protocol):
    """What judging reads of a planned comparison: a :class:`~leaderboard.ekphrasis.models.Comparison` with its shown
    responses, or the chunk's lighter record of one (:class:`leaderboard.ekphrasis.judge_chunk._Call`)."""

    model_x_id: int
    model_y_id: int
    kind: str
    repeat: int
    judge_name: str
    attempts: int
    shown_a: Response
    shown_b: Response


def judge_comparisons(judges: RunJudges, *, run: JudgeRun, task: Task, dimension: str,
                      comparisons: Sequence[PlannedCall]) -> list[Verdict]:
    """Judge planned comparisons; one verdict each, in order (failures included, never dropped)."""
    from leaderboard.ekphrasis.tig import TIG_SLOT

    if (task.id, dimension) not in judges.base_rows:
        if not _judge_writes_checklists(judges):
            # a judge that writes no checklist is shown the templates: those of every dimension of the run the
            # chunk has not read yet are ensured in one transaction (the chunk judges them all)
            unread = [d for d in dict.fromkeys([dimension, *run.dimensions]) if (task.id, d) not in judges.base_rows]
            for d, rows in checklist_items_ensure_many(task=task, dimensions=unread).items():
                judges.base_rows[(task.id, d)] = rows
        else:
            judges.base_rows[(task.id, dimension)] = checklist_items_ensure(
                task=task, dimension=dimension, generated=_judge_model_checklist(judges, task, dimension)
            )
    base_rows = judges.base_rows[(task.id, dimension)]
    brief = task_brief_of(task)
    by_judge: dict[str, list[int]] = {}
    for k, c in enumerate(comparisons):
        by_judge.setdefault(c.judge_name, []).append(k)
    verdicts: list[Verdict | None] = [None] * len(comparisons)
    if dimension == "N":
        _novelty_prefetch(judges, task, comparisons)
    # The engine checklist and the stored copy of what was shown, built once per chunk for each distinct set of
    # rows (judges.checklists): the task and dimension's base items with, on Novelty, slot 1 replaced by the
    # pair's population-cliché item, so named by that item (the base items are fixed for the chunk). The
    # checklist is immutable, the copy is only ever serialised.
    built = judges.checklists
    task_pk = task.id

    def checklist_of(comparison) -> tuple:
        anchor = _novelty_anchor(judges, task, comparison) if dimension == "N" else None
        key = (task_pk, dimension, None if anchor is None else anchor.pk)
        if key not in built:
            rows = base_rows if anchor is None else [anchor if row.slot == TIG_SLOT else row for row in base_rows]
            built[key] = (checklist_for_judging(rows, task=task, dimension=dimension), _shown(rows))
        return built[key]

    # what every request of the call shares, worked out once: the replicate key, the engine's dimension and the
    # field it inspects (a response is screened once a chunk: judges.screen is asked only for unscreened ones)
    run_key, engine_dimension = replicate_key(run), ENGINE_DIMENSION[dimension]
    screened, inspected = judges.screened, DIMENSION_FIELD[engine_dimension].value
    for judge_name, positions in by_judge.items():
        shown_of = {k: checklist_of(comparisons[k]) for k in positions}
        requests = [
            PairJudgeRequest(
                run_id=run_key, task=brief, dimension=engine_dimension,
                checklist=shown_of[k][0],
                a=judges.candidate(comparisons[k].shown_a), b=judges.candidate(comparisons[k].shown_b),
                kind=comparisons[k].kind, repeat=comparisons[k].repeat, retry=comparisons[k].attempts,
            )
            for k in positions
        ]
        for k, request in zip(positions, requests, strict=True):
            for shown in (comparisons[k].shown_a, comparisons[k].shown_b):
                if (shown.id, inspected) not in screened:
                    judges.screen(shown, request)
        judge = judges.get(judge_name)
        judgements = judge.judge_pairs(requests)
        for k, judgement in zip(positions, judgements, strict=True):
            verdicts[k] = _verdict(judgement, shown_of[k][1])
        _record_usage(run, judge)
    return verdicts  # type: ignore[return-value]


def _verdict(judgement, shown) -> Verdict:
    if not judgement.ok:
        return Verdict(ok=False, error=judgement.error or "judge failed", checklist=shown, repaired=judgement.repaired,
                       provider_unreachable=judgement.provider_unreachable)
    return Verdict(
        ok=True,
        winner=WINNER_TEXT[judgement.winner],
        confidence=judgement.confidence,
        rationale=judgement.overall_rationale or "",
        per_item_outcomes=[
            {"item_index": o.item_index, "item": o.item, "winner": WINNER_TEXT[o.winner], "confidence": o.confidence,
             "evidence_a": o.evidence_a, "evidence_b": o.evidence_b, "rationale": o.rationale}
            for o in judgement.per_item_outcomes
        ],
        repaired=judgement.repaired,
        checklist=shown,
    )


def _record_usage(run: JudgeRun, judge) -> None:
    """Fold a provider judge's token and cost ledger into the run."""
    run_usage_add(run, client_usage_take(getattr(judge, "client", None)))

"""Automatic judging runs (Ekphrasis §4.1, App. D, E, F).

A run is task set × dimensions × judge × budget per task × seed. Its unit of
work is one task (a :class:`JudgeRunTask` chunk): for each dimension the
chunk spends the task's budget in rounds — warm start, then active selection
from the engine (:func:`engine.active_sampling.select_pairs`) — and then adds
the diagnostic layers (order swaps, duplicate repeats, auxiliary judges).

Resumability is built on one rule: **a call is written as a planned
comparison before it is made**. A chunk first finishes every planned
comparison it finds, and only plans the next round when none is pending. The
plan depends only on the finished comparisons of the same task and dimension
and on seeds derived from identities (:mod:`engine.seeding`), so a worker
killed at any point and restarted — or another worker picking the chunk up —
plans exactly what an uninterrupted run would, and the unique constraint on a
comparison's identity (run, task, dimension, pair, kind, repeat, judge) makes
a duplicate impossible.

The active selector is fed the task's own comparisons only (not the other
tasks'), so that chunks can run on any number of workers in any order and
still give the same plan.
"""

from __future__ import annotations

import logging
import subprocess
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F
from django.utils import timezone

from engine.active_sampling import ActiveState, select_pairs
from engine.bt import is_empty_response
from engine.seeding import derived_seed, unit_interval
from leaderboard.models import (
    Comparison,
    JudgeRun,
    JudgeRunTask,
    Response,
    SubjectModel,
    Task,
)
from leaderboard.selectors import subject_models_of

logger = logging.getLogger(__name__)

#: Field each dimension inspects (normalisation invariant, Ekphrasis App. C.3).
INSPECTED_FIELD = {"U": "core_idea", "E": "visual_description", "N": "core_idea"}
#: Attempts of one call (first try + retries of a call that failed validation and repair).
MAX_CALL_ATTEMPTS = 3
DEFAULT_CONFIG = {
    "swap_share": 0.10,  # App. D: about 10% of sampled pairs are re-judged in reverse order
    "duplicate_share": 0.05,  # share of primary pairs judged twice more for repeat stability
    "duplicate_dimensions": "EN",  # Table 12 reports duplicates for E and N
    "auxiliary_judges": [],  # names of auxiliary judges run on a fixed sample of pairs
    "auxiliary_share": 0.05,
    "rule": None,  # None: the engine's default active rule
    "active_batch": 10,  # calls per active round: the fit is refreshed between rounds
    "n_boot": 1000,
}
#: A fixed-pair run judges each given pair once, in the given order, with no diagnostic layers: the
#: Novelty ablation "preserves the original response order" and reruns the same rows (Ekphrasis App. D.1).
FIXED_PAIR_DEFAULTS = {"swap_share": 0.0, "duplicate_share": 0.0, "auxiliary_judges": []}


def code_version() -> str:
    """The commit the code runs at (pinned into every snapshot), or the package version."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=Path(settings.BASE_DIR),
            capture_output=True, text=True, timeout=5, check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        from importlib.metadata import PackageNotFoundError, version

        try:
            return f"atelier-{version('atelier')}"
        except PackageNotFoundError:
            return "unknown"


# ---------------------------------------------------------------- creating and starting


class RunConfigurationError(ValueError):
    pass


@transaction.atomic
def judge_run_create(
    *,
    task_set,
    judge_name: str,
    dimensions: str = "UEN",
    budget_per_task: int = 50,
    seed: int = 42,
    novelty_anchor: str = "tig",
    config: dict | None = None,
    created_by=None,
    pairs: Sequence[tuple] | None = None,
) -> JudgeRun:
    """Create a run and one chunk per task; nothing is judged until it is started.

    ``pairs`` makes a *fixed-pair run*: instead of spending a budget by active sampling, the run judges
    exactly these (task, response x, response y) pairs on each of its dimensions, once each, shown in
    the given order (x as A), and stores no leaderboard snapshot (see :func:`judge_run_finalise`).
    The checked pairs are kept in ``config["fixed_pairs"]``. Chunks are made for the tasks that have pairs only.
    """
    from leaderboard.judges import judge_is_simulated, judge_model_for

    dims = "".join(d for d in "UEN" if d in dimensions.upper())
    if not dims or len(dims) != len(dimensions):
        raise RunConfigurationError(f"dimensions must be letters of U, E, N; got {dimensions!r}")
    if budget_per_task < 1:
        raise RunConfigurationError("budget_per_task must be at least 1")
    models = subject_models_of(task_set)
    if len(models) < 2:
        raise RunConfigurationError(f"{task_set} has fewer than two subject models with primary responses")
    if config and "fixed_pairs" in config:
        raise RunConfigurationError("give fixed pairs as pairs=..., where they are checked, not in config")
    fixed = None if pairs is None else _fixed_pairs_check(task_set, models, pairs)
    if fixed is not None:
        config = {**FIXED_PAIR_DEFAULTS, **(config or {}), "fixed_pairs": fixed}
        per_task = Counter(task_id for task_id, _, _ in fixed)
        budget_per_task = max(per_task.values())  # informational: the largest number of pairs of one task
    judge_model = judge_model_for(judge_name)
    run = JudgeRun.objects.create(
        task_set=task_set,
        judge_name=judge_name,
        judge_model=judge_model,
        is_simulated=judge_is_simulated(judge_name),
        dimensions=dims,
        budget_per_task=budget_per_task,
        seed=seed,
        novelty_anchor=novelty_anchor,
        config=_run_config(task_set, dims, novelty_anchor, config),
        code_version=code_version(),
        created_by=created_by,
    )
    tasks = list(task_set.tasks.order_by("position", "external_id"))
    if fixed is not None:
        tasks = [t for t in tasks if t.pk in per_task]
    JudgeRunTask.objects.bulk_create([JudgeRunTask(run=run, task=t) for t in tasks])
    run.tasks_total = len(tasks)
    run.calls_planned = len(dims) * (len(fixed) if fixed is not None else len(tasks) * budget_per_task)
    run.save(update_fields=["tasks_total", "calls_planned"])
    return run


def _fixed_pairs_check(task_set, models: list[SubjectModel], pairs: Sequence) -> list[list[int]]:
    """The given pairs as ``[task id, response x id, response y id]`` rows, in the given order.

    Each pair must be two responses of one task of ``task_set`` by two different models of the run's
    pool. An exact repeat of a pair is dropped; two different pairs of responses of the same two
    models on one task are refused, since a comparison is identified by its model pair."""
    rows = [[getattr(part, "pk", part) for part in pair] for pair in pairs]
    if not rows:
        raise RunConfigurationError("a fixed-pair run needs at least one pair")
    if any(len(row) != 3 for row in rows):
        raise RunConfigurationError("each fixed pair is (task, response x, response y)")
    ids = {r for _, x, y in rows for r in (x, y)}
    found = {
        r["pk"]: r for r in Response.objects.filter(pk__in=ids, task__task_set=task_set).values(
            "pk", "task_id", "subject_model_id")
    }
    pool = {m.pk for m in models}
    out, seen = [], {}
    for k, (task_id, x, y) in enumerate(rows, start=1):
        rx, ry = found.get(x), found.get(y)
        if rx is None or ry is None:
            raise RunConfigurationError(f"pair {k}: response {x if rx is None else y} is not in {task_set}")
        if rx["task_id"] != task_id or ry["task_id"] != task_id:
            raise RunConfigurationError(f"pair {k}: responses {x} and {y} are not both of task {task_id}")
        mx, my = rx["subject_model_id"], ry["subject_model_id"]
        if mx == my or mx not in pool or my not in pool:
            raise RunConfigurationError(f"pair {k}: responses {x} and {y} are not by two models of the run's pool")
        key = (task_id, frozenset((mx, my)))
        if key in seen:
            if seen[key] != {x, y}:
                raise RunConfigurationError(f"pair {k}: task {task_id} already has a pair of the same two models")
            continue
        seen[key] = {x, y}
        out.append([int(task_id), int(x), int(y)])
    return out


def _run_config(task_set, dims: str, novelty_anchor: str, config: dict | None) -> dict:
    """The run's configuration with its TIG components resolved once, so that a resumed run (or one
    whose task set gets a new TIG build meanwhile) keeps judging Novelty against the same populations."""
    from leaderboard.services.tig import TIGConfigurationError, tig_components_for_new_run

    merged = {**DEFAULT_CONFIG, **(config or {})}
    if novelty_anchor == "tig" and "N" in dims:
        try:
            merged["tig"] = tig_components_for_new_run(task_set=task_set, requested=merged.get("tig")).as_config()
        except TIGConfigurationError as exc:
            raise RunConfigurationError(str(exc)) from exc
    return merged


def judge_run_start(*, run: JudgeRun, background: bool = False) -> None:
    """Queue the run's chunks once the transaction that created it has committed.

    Without a broker Celery runs tasks eagerly, inside the caller. ``background=True`` (a request that
    must not wait for the whole run, e.g. the page's Start button) then runs the eager dispatch in a
    daemon thread, so the request returns at once and the run page follows the progress live."""
    from leaderboard import tasks

    if background and settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(lambda: threading.Thread(
            target=_dispatch_in_thread, args=(run.pk,), name=f"judge-run-{run.pk}", daemon=True).start())
        return
    transaction.on_commit(lambda: tasks.judge_run_dispatch.delay(run.pk))


def _dispatch_in_thread(run_id: int) -> None:
    from django.db import connection

    from leaderboard import tasks

    try:
        tasks.judge_run_dispatch.delay(run_id)
    except Exception as exc:  # the thread has no caller to raise to: the run page shows the error
        if not JudgeRun.objects.filter(pk=run_id, status=JudgeRun.Status.FAILED).exists():
            judge_run_fail(run_id=run_id, error=f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()  # this thread's own connection (Django connections are per thread)


def judge_run_pending_chunks(*, run_id: int) -> list[int]:
    """Mark the run running and return the task ids of its unfinished chunks."""
    JudgeRun.objects.filter(pk=run_id, status=JudgeRun.Status.PENDING).update(
        status=JudgeRun.Status.RUNNING, started_at=timezone.now()
    )
    return list(JudgeRunTask.objects.filter(run_id=run_id, done=False).order_by("pk").values_list("task_id", flat=True))


# ---------------------------------------------------------------- one chunk


@dataclass
class _Pool:
    models: list[SubjectModel]
    index: dict[int, int]  # subject model pk -> position
    responses: dict[int, Response]  # position -> primary response of this task
    by_pk: dict[int, Response] = field(default_factory=dict)  # every response a comparison showed, by pk

    def shown(self, pks: set[int]) -> dict[int, Response]:
        """Responses by pk with their subject model attached (no query per candidate name); the ones
        not in the pool (a fixed pair's other samples) are loaded once."""
        missing = pks - self.by_pk.keys()
        if missing:
            for response in Response.objects.filter(pk__in=missing).select_related("subject_model"):
                self.by_pk[response.pk] = response
        return self.by_pk


def _pool(run: JudgeRun, task: Task) -> _Pool:
    models = subject_models_of(run.task_set)
    index = {m.pk: i for i, m in enumerate(models)}
    by_model = {m.pk: m for m in models}
    responses = {}
    for r in Response.objects.filter(task=task, is_primary=True, subject_model_id__in=index):
        r.subject_model = by_model[r.subject_model_id]
        responses[index[r.subject_model_id]] = r
    return _Pool(models, index, responses, {r.pk: r for r in responses.values()})


class _Stored(NamedTuple):
    """A stored comparison of one task and dimension, as the planner reads it (one query a round)."""

    pk: int
    model_x_id: int
    model_y_id: int
    kind: str
    repeat: int
    judge_name: str
    sequence: int
    shown_a_id: int
    shown_b_id: int
    status: str
    winner: str
    attempts: int


def _stored(run, task, dimension) -> list[_Stored]:
    """Every comparison of (run, task, dimension): pending calls, failures to retry, the active state and
    the next sequence number all come from this one read."""
    return [
        _Stored(*row) for row in Comparison.objects.filter(run=run, task=task, dimension=dimension).values_list(
            "pk", "model_x_id", "model_y_id", "kind", "repeat", "judge_name", "sequence", "shown_a_id",
            "shown_b_id", "status", "winner", "attempts",
        )
    ]


def judge_run_task_execute(*, run_id: int, task_id: int, progress: Callable[[int], None] | None = None) -> bool:
    """Judge one task of a run to completion (idempotent, resumable).

    Returns True when this call finished the run's last chunk (the caller then finalises).
    """
    from leaderboard.judges import judge_for_run

    run = JudgeRun.objects.select_related("task_set", "judge_model").get(pk=run_id)
    chunk = JudgeRunTask.objects.get(run=run, task_id=task_id)
    if chunk.done:
        return False
    task = Task.objects.get(pk=task_id)
    with _commits_without_flush_wait():
        return _task_execute(run, chunk, task, judge_for_run(run), progress)


@contextmanager
def _commits_without_flush_wait():
    """On PostgreSQL, the chunk's commits do not wait for the WAL flush (``synchronous_commit = off``):
    a chunk writes a few small transactions per round of 10 calls, and on a busy disk waiting for each
    flush cost more wall time than the bookkeeping. Atomicity is unchanged; a crash can lose only the
    last fraction of a second of commits, which the resumable chunk replays exactly (the plan depends
    only on what is stored, and a re-sent provider call is answered from the request cache)."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO OFF")
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET synchronous_commit")
        except DatabaseError:
            pass  # an aborted transaction: its rollback undoes the SET too


def _task_execute(run: JudgeRun, chunk: JudgeRunTask, task: Task, judge, progress) -> bool:
    pool = _pool(run, task)
    # A fixed-pair run plans its given pairs (and their automatic records); any other run samples actively.
    fixed = bool(run.config.get("fixed_pairs"))
    plan_round = _plan_fixed_pairs if fixed else _plan_next_round
    for dimension in run.dimensions:
        if not fixed:
            _automatic_outcomes(run, task, dimension, pool)
        while True:
            stored = _stored(run, task, dimension)
            pending = _pending(run, task, dimension, pool, stored)
            if pending:
                _judge_and_store(run, task, dimension, pending, pool, judge, progress)
                continue
            if _retry_failed(stored):
                continue
            if not plan_round(run, task, dimension, pool, stored):
                break
        if _plan_diagnostics(run, task, dimension, pool, stored):
            _judge_and_store(run, task, dimension, _pending(run, task, dimension, pool), pool, judge, progress)
            while _retry_failed(_stored(run, task, dimension)):
                _judge_and_store(run, task, dimension, _pending(run, task, dimension, pool), pool, judge, progress)
    return _chunk_finish(run, chunk)


def _pending(run, task, dimension, pool: _Pool, stored: list[_Stored] | None = None) -> list[Comparison]:
    """The planned calls in plan order, as comparisons carrying their shown responses (from the pool)."""
    if stored is None:
        stored = _stored(run, task, dimension)
    rows = sorted((r for r in stored if r.status == Comparison.Status.PLANNED), key=lambda r: r.sequence)
    if not rows:
        return []
    responses = pool.shown({pk for r in rows for pk in (r.shown_a_id, r.shown_b_id)})
    out = []
    for r in rows:
        comparison = Comparison(
            pk=r.pk, run=run, task=task, dimension=dimension, model_x_id=r.model_x_id, model_y_id=r.model_y_id,
            kind=r.kind, repeat=r.repeat, judge_name=r.judge_name, sequence=r.sequence, status=r.status,
            winner=r.winner, attempts=r.attempts,
        )
        comparison.shown_a, comparison.shown_b = responses[r.shown_a_id], responses[r.shown_b_id]
        out.append(comparison)
    return out


def _retry_failed(stored: list[_Stored]) -> bool:
    """A failed call goes back to the plan until it has used its attempts (never silently dropped)."""
    ids = [r.pk for r in stored if r.status == Comparison.Status.FAILED and r.attempts < MAX_CALL_ATTEMPTS]
    return bool(ids) and bool(
        Comparison.objects.filter(pk__in=ids, status=Comparison.Status.FAILED).update(status=Comparison.Status.PLANNED)
    )


def _inspected(response: Response, dimension: str) -> str:
    return getattr(response, INSPECTED_FIELD[dimension])


def _automatic_outcomes(run, task, dimension, pool: _Pool) -> None:
    """Empty responses get automatic records without a call (Ekphrasis App. F.2)."""
    from engine.bt import empty_response_outcome

    positions = sorted(pool.responses)
    empties = {p for p in positions if is_empty_response(_inspected(pool.responses[p], dimension))}
    if not empties:
        return
    rows = []
    for a_pos in positions:
        for b_pos in positions:
            if a_pos >= b_pos or (a_pos not in empties and b_pos not in empties):
                continue
            ra, rb = pool.responses[a_pos], pool.responses[b_pos]
            outcome = empty_response_outcome(_inspected(ra, dimension), _inspected(rb, dimension))
            rows.append(_automatic_record(run, task, dimension, ra, rb, outcome))
    Comparison.objects.bulk_create(rows, ignore_conflicts=True)


def _automatic_record(run, task, dimension, shown_a: Response, shown_b: Response, outcome) -> Comparison:
    """The judged-without-a-call record of a pair with an empty response (Ekphrasis App. F.2)."""
    x, y = sorted((shown_a.subject_model_id, shown_b.subject_model_id))
    return Comparison(
        run=run, task=task, dimension=dimension, model_x_id=x, model_y_id=y, kind=Comparison.Kind.AUTOMATIC,
        repeat=0, judge_name="automatic", sequence=0, shown_a=shown_a, shown_b=shown_b,
        status=Comparison.Status.OK, winner=outcome.winner, confidence=outcome.confidence,
        rationale=f"automatic: {outcome.reason}", judged_at=timezone.now(),
    )


def _task_state(pool: _Pool, stored: list[_Stored], dimension: str) -> tuple[ActiveState, Counter]:
    n = len(pool.models)
    wins = np.zeros((n, n))
    counts = np.zeros((n, n))
    repeats: Counter = Counter()
    position_of = {r.pk: p for p, r in pool.responses.items()}
    calls = 0
    for c in stored:
        if c.kind != Comparison.Kind.PRIMARY:
            continue
        i, j = pool.index[c.model_x_id], pool.index[c.model_y_id]
        calls += 1
        repeats[(i, j)] += 1
        if c.status != Comparison.Status.OK:
            continue
        counts[i, j] += 1
        counts[j, i] += 1
        if c.winner in ("A", "B"):
            shown = c.shown_a_id if c.winner == "A" else c.shown_b_id
            winner_pos = position_of[shown]
            loser_pos = j if winner_pos == i else i
            wins[winner_pos, loser_pos] += 1
    eligible = [
        p for p, r in pool.responses.items() if not is_empty_response(_inspected(r, dimension))
    ]
    state = ActiveState(n_models=n, wins=wins, pair_counts=counts, calls_made=calls, models=eligible)
    return state, repeats


def _next_sequence(stored: list[_Stored]) -> int:
    return max((r.sequence for r in stored), default=0) + 1


def _plan_next_round(run, task, dimension, pool: _Pool, stored: list[_Stored]) -> bool:
    """Plan the next round of primary calls; False when the task's budget is spent."""
    state, repeats = _task_state(pool, stored, dimension)
    if len(state.models or []) < 2:
        return False
    round_seed = derived_seed(run.seed, task.external_id, dimension, state.calls_made)
    kwargs = {"rule": run.config["rule"]} if run.config.get("rule") else {}
    pairs = select_pairs(
        state, run.budget_per_task, seed=round_seed, batch_size=run.config.get("active_batch") or None, **kwargs
    )
    if not pairs:
        return False
    sequence = _next_sequence(stored)
    rows = []
    for i, j in pairs:
        repeat = repeats[(i, j)]
        repeats[(i, j)] += 1
        rows.append(_planned(run, task, dimension, pool, i, j, Comparison.Kind.PRIMARY, repeat, run.judge_name, sequence))
        sequence += 1
    _bulk_plan(rows)
    return True


def _planned(run, task, dimension, pool: _Pool, i: int, j: int, kind: str, repeat: int, judge_name: str,
             sequence: int, *, reverse_of: _Stored | None = None) -> Comparison:
    if reverse_of is not None:
        # the reversed presentation of a judged pair (also of a fixed pair that is not the primaries)
        shown_a_id, shown_b_id = reverse_of.shown_b_id, reverse_of.shown_a_id
        x, y = reverse_of.model_x_id, reverse_of.model_y_id
    else:
        ri, rj = pool.responses[i], pool.responses[j]
        # A/B order randomised per call and recorded (Ekphrasis App. E, Algorithm 2 line 6).
        flip = unit_interval(run.seed, "order", task.external_id, dimension, i, j, kind, repeat, judge_name) < 0.5
        shown_a, shown_b = (rj, ri) if flip else (ri, rj)
        shown_a_id, shown_b_id = shown_a.pk, shown_b.pk
        x, y = sorted((ri.subject_model_id, rj.subject_model_id))
    return Comparison(
        run=run, task=task, dimension=dimension, model_x_id=x, model_y_id=y, kind=kind, repeat=repeat,
        judge_name=judge_name, sequence=sequence, shown_a_id=shown_a_id, shown_b_id=shown_b_id,
    )


def _plan_fixed_pairs(run, task, dimension, pool: _Pool, stored: list[_Stored]) -> bool:
    """Plan every given pair of this task once (primary, repeat 0), in the given order and shown as
    given (x as A); False when all are planned. A pair with an empty inspected field gets its
    automatic record instead of a call (Ekphrasis App. F.2)."""
    from engine.bt import empty_response_outcome

    wanted = [(x, y) for task_id, x, y in run.config["fixed_pairs"] if task_id == task.pk]
    planned = set(
        Comparison.objects.filter(
            run=run, task=task, dimension=dimension, kind__in=[Comparison.Kind.PRIMARY, Comparison.Kind.AUTOMATIC]
        ).values_list("model_x_id", "model_y_id")
    )
    responses = Response.objects.in_bulk([r for pair in wanted for r in pair])
    sequence = _next_sequence(stored)
    rows = []
    for x_id, y_id in wanted:
        shown_a, shown_b = responses[x_id], responses[y_id]
        x, y = sorted((shown_a.subject_model_id, shown_b.subject_model_id))
        if (x, y) in planned:
            continue
        outcome = empty_response_outcome(_inspected(shown_a, dimension), _inspected(shown_b, dimension))
        if outcome is not None:
            rows.append(_automatic_record(run, task, dimension, shown_a, shown_b, outcome))
        else:
            rows.append(Comparison(
                run=run, task=task, dimension=dimension, model_x_id=x, model_y_id=y, repeat=0, shown_a=shown_a,
                shown_b=shown_b, kind=Comparison.Kind.PRIMARY, judge_name=run.judge_name, sequence=sequence,
            ))
            sequence += 1
    _bulk_plan(rows)
    return bool(rows)


def _bulk_plan(rows: list[Comparison]) -> None:
    # The identity constraint makes re-planning after a crash a no-op rather than a duplicate.
    with transaction.atomic():
        Comparison.objects.bulk_create(rows, ignore_conflicts=True)


def _plan_diagnostics(run, task, dimension, pool: _Pool, stored: list[_Stored]) -> bool:
    """Swaps, duplicates and auxiliary calls on deterministic samples of the primary pairs (App. D).
    ``stored``: the task and dimension's comparisons as they are now (nothing planned since)."""
    config = run.config
    firsts = sorted((r for r in stored if r.kind == Comparison.Kind.PRIMARY and r.repeat == 0), key=lambda r: r.sequence)
    existing = {
        (r.model_x_id, r.model_y_id, r.kind, r.repeat, r.judge_name) for r in stored
        if r.kind not in (Comparison.Kind.PRIMARY, Comparison.Kind.AUTOMATIC)
    }
    sequence = _next_sequence(stored)
    rows = []
    for first in firsts:
        i, j = pool.index[first.model_x_id], pool.index[first.model_y_id]
        identity = (run.seed, task.external_id, dimension, i, j)
        wanted = []
        if unit_interval(*identity, "swap") < config["swap_share"]:
            wanted.append((Comparison.Kind.SWAP, 0, run.judge_name, first))
        if dimension in config["duplicate_dimensions"] and unit_interval(*identity, "duplicate") < config["duplicate_share"]:
            wanted += [(Comparison.Kind.DUPLICATE, r, run.judge_name, None) for r in (1, 2)]
        for aux in config["auxiliary_judges"]:
            if unit_interval(*identity, "auxiliary") < config["auxiliary_share"]:
                wanted.append((Comparison.Kind.AUXILIARY, 0, aux, None))
        for kind, repeat, judge_name, reverse in wanted:
            if (first.model_x_id, first.model_y_id, kind, repeat, judge_name) in existing:
                continue
            # Duplicates repeat the primary presentation exactly; swaps reverse it.
            rows.append(
                _planned(run, task, dimension, pool, i, j, kind, repeat, judge_name, sequence, reverse_of=reverse)
                if reverse is not None else _same_order(run, task, dimension, first, kind, repeat, judge_name, sequence)
            )
            sequence += 1
    _bulk_plan(rows)
    return bool(rows)


def _same_order(run, task, dimension, first: _Stored, kind: str, repeat: int, judge_name: str, sequence: int) -> Comparison:
    return Comparison(
        run=run, task=task, dimension=dimension, model_x_id=first.model_x_id,
        model_y_id=first.model_y_id, kind=kind, repeat=repeat, judge_name=judge_name, sequence=sequence,
        shown_a_id=first.shown_a_id, shown_b_id=first.shown_b_id,
    )


def _judge_and_store(run, task, dimension, pending: list[Comparison], pool: _Pool, judge, progress) -> None:
    from leaderboard.judges import judge_comparisons

    verdicts = judge_comparisons(judge, run=run, task=task, dimension=dimension, comparisons=pending)
    now = timezone.now()
    for comparison, verdict in zip(pending, verdicts, strict=True):
        comparison.attempts += 1
        comparison.judged_at = now
        if verdict.ok:
            comparison.status = Comparison.Status.OK
            comparison.winner = verdict.winner
            comparison.confidence = verdict.confidence
            comparison.rationale = verdict.rationale
            comparison.per_item_outcomes = verdict.per_item_outcomes
            comparison.repaired = verdict.repaired
            comparison.error = ""
        else:
            comparison.status = Comparison.Status.FAILED
            comparison.error = verdict.error[:2000]
        comparison.checklist = verdict.checklist
    with transaction.atomic():
        _verdicts_write(pending)
        JudgeRun.objects.filter(pk=run.pk).update(calls_done=F("calls_done") + len(pending))
    if progress:
        progress(len(pending))


#: What a verdict writes on its planned comparison.
VERDICT_FIELDS = ("status", "winner", "confidence", "rationale", "per_item_outcomes", "repaired", "error", "attempts",
                  "judged_at", "checklist")


def _verdicts_write(comparisons: list[Comparison]) -> None:
    """One parameterised UPDATE by primary key, sent for all rows at once (``executemany``: one pipeline
    on PostgreSQL). ``bulk_update`` built a CASE expression per field and row, which cost more CPU than
    the simulated judge's verdicts themselves."""
    if not comparisons:
        return
    meta = Comparison._meta
    fields = [meta.get_field(name) for name in VERDICT_FIELDS]
    quote = connection.ops.quote_name
    sql = (f"UPDATE {quote(meta.db_table)} SET " + ", ".join(f"{quote(f.column)} = %s" for f in fields)
           + f" WHERE {quote(meta.pk.column)} = %s")
    params = [[f.get_db_prep_save(getattr(c, f.attname), connection) for f in fields] + [c.pk] for c in comparisons]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _chunk_finish(run: JudgeRun, chunk: JudgeRunTask) -> bool:
    """Mark the chunk done; True for exactly one caller: the one that finished the run's last chunk."""
    with transaction.atomic():
        updated = JudgeRunTask.objects.filter(pk=chunk.pk, done=False).update(
            done=True, calls_done=Comparison.objects.filter(run=run, task_id=chunk.task_id).exclude(
                kind=Comparison.Kind.AUTOMATIC).count()
        )
        if not updated:
            return False
        done = JudgeRunTask.objects.filter(run=run, done=True).count()
        JudgeRun.objects.filter(pk=run.pk).update(tasks_done=done)
        if done < run.tasks_total:
            return False
        # Exactly one worker wins this conditional update, so finalising is enqueued once.
        return bool(
            JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.RUNNING).update(status=JudgeRun.Status.FINALISING)
        )


def judge_run_fail(*, run_id: int, error: str) -> None:
    JudgeRun.objects.filter(pk=run_id).update(status=JudgeRun.Status.FAILED, error=error[:5000])


# ---------------------------------------------------------------- finalising


def _judged_comparisons(run: JudgeRun, pool_index: dict[int, int]):
    """The run's successful comparisons as the engine's records, in (task, dimension, sequence) order.
    Read as plain rows; each shown response's inspected-field word counts are computed once, not once
    per comparison that showed it."""
    from engine.leaderboard import JudgedComparison
    from engine.reliability import ComparisonRecord

    rows = list(
        Comparison.objects.filter(run=run, status=Comparison.Status.OK)
        .order_by("task_id", "dimension", "sequence")
        .values_list("task_id", "dimension", "shown_a_id", "shown_b_id", "winner", "kind", "repaired", "model_x_id",
                     "model_y_id", "repeat", "judge_name", "confidence")
    )
    tasks, families = {}, {}
    for pk, external_id, family in Task.objects.filter(pk__in={r[0] for r in rows}).values_list("pk", "external_id", "family"):
        tasks[pk], families[pk] = external_id, family
    shown = {pk for r in rows for pk in (r[2], r[3])}
    words: dict[tuple[int, str], int] = {}
    model_of: dict[int, int] = {}
    for pk, model_id, core_idea, visual in Response.objects.filter(pk__in=shown).values_list(
        "pk", "subject_model_id", "core_idea", "visual_description"
    ):
        model_of[pk] = model_id
        words[(pk, "core_idea")] = len(core_idea.split())
        words[(pk, "visual_description")] = len(visual.split())
    out = []
    for task_id, dimension, shown_a, shown_b, winner, kind, repaired, x, y, repeat, judge_name, confidence in rows:
        automatic = kind == Comparison.Kind.AUTOMATIC
        inspected = INSPECTED_FIELD[dimension]
        record = ComparisonRecord(
            task=tasks[task_id],
            dimension=dimension,
            model_a=pool_index[model_of[shown_a]],
            model_b=pool_index[model_of[shown_b]],
            winner=winner,
            kind="primary" if automatic else kind,
            repaired=repaired,
            len_a=words[(shown_a, inspected)],
            len_b=words[(shown_b, inspected)],
            pair_key=f"{task_id}:{x}:{y}",
            repeat=repeat,
            judge=judge_name,
        )
        out.append(JudgedComparison(record=record, confidence=confidence or 0.0, family=families[task_id], automatic=automatic))
    return out


def judge_run_finalise(*, run_id: int):
    """Compute and store the run's leaderboard snapshot (idempotent: one snapshot per run).

    A fixed-pair run is only marked done and stores no snapshot (returns None): its pairs were
    chosen, not sampled to rank the models, so a leaderboard of them would mislead."""
    from engine.leaderboard import build_leaderboard
    from leaderboard.models import LeaderboardSnapshot

    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().select_related("task_set").get(pk=run_id)
        existing = run.snapshots.first()
        if existing is not None:
            return existing
        if run.config.get("fixed_pairs"):
            if run.status != JudgeRun.Status.DONE:
                run.status = JudgeRun.Status.DONE
                run.finished_at = timezone.now()
                run.save(update_fields=["status", "finished_at"])
            return None
        models = subject_models_of(run.task_set)
        index = {m.pk: i for i, m in enumerate(models)}
        comparisons = _judged_comparisons(run, index)
        payload = build_leaderboard(
            comparisons, [m.display_name for m in models], dimensions=tuple(run.dimensions),
            n_boot=int(run.config.get("n_boot", 1000)), seed=run.seed,
        )
        payload["model_ids"] = [m.pk for m in models]
        payload["failed_calls"] = Comparison.objects.filter(run=run, status=Comparison.Status.FAILED).count()
        payload["usage"] = run.usage
        snapshot = LeaderboardSnapshot.objects.create(
            run=run,
            task_set_version=run.task_set.version,
            judge_name=run.judge_name,
            budget_per_task=run.budget_per_task,
            seed=run.seed,
            code_version=run.code_version,
            is_simulated=run.is_simulated,
            is_demo=run.task_set.is_demo,
            payload=payload,
        )
        run.status = JudgeRun.Status.DONE
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "finished_at"])
    return snapshot


def judge_run_execute_inline(*, run: JudgeRun, progress: Callable[[int], None] | None = None):
    """Run every chunk in this process, then finalise (the CLI and eager mode)."""
    last = False
    for task_id in judge_run_pending_chunks(run_id=run.pk):
        last = judge_run_task_execute(run_id=run.pk, task_id=task_id, progress=progress) or last
    run.refresh_from_db()
    if last or run.status == JudgeRun.Status.FINALISING:
        return judge_run_finalise(run_id=run.pk)
    return run.snapshots.first()

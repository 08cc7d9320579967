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
still give the same plan. How a chunk runs, and what it keeps in memory
between its writes, is :mod:`leaderboard.ekphrasis.judge_chunk`.
"""

from __future__ import annotations

import logging
import weakref
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import DatabaseError, connection, transaction

from engine.judge.prompt import JUDGE_PROMPT_VERSION
from leaderboard.ekphrasis.judge_chunk import INSPECTED_FIELD, task_execute
from leaderboard.ekphrasis.models import Comparison, JudgeRun, JudgeRunTask
from leaderboard.ekphrasis.selectors import subject_models_of
from leaderboard.ekphrasis.tig import (
    TIG_PROMPT_VERSIONS_BEFORE,
    TIGConfigurationError,
    tig_components_for_new_run,
    tig_components_of_run,
    tig_prompt_versions,
)
from leaderboard.models import Benchmark, Response, SubjectModel, Task
from leaderboard.protocols import task_set_kind_check
from leaderboard.providers import code_version
from leaderboard.runs.errors import RunConfigurationError
from leaderboard.runs.lifecycle import (
    JobKind,
    run_fail,
    run_finish,
    run_pending_units,
    run_refuse_changed_prompts,
)
from leaderboard.runs.run_heap import run_heap_frozen
from leaderboard.runs.starting import run_start

logger = logging.getLogger(__name__)
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


# ---------------------------------------------------------------- creating and starting


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
    from leaderboard.providers import judge_is_simulated, judge_model_for

    task_set_kind_check(task_set, kind=Benchmark.Kind.EKPHRASIS)
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
    """The run's configuration, with the judge prompt's version and its TIG components resolved once, so that
    a resumed run (or one whose task set gets a new TIG build meanwhile) keeps judging Novelty against the
    same populations."""
    # the wording its provider judges are asked in (as a C² run records its rubric's): not a setting
    merged = {**DEFAULT_CONFIG, **(config or {}), "judge_prompt_version": JUDGE_PROMPT_VERSION}
    for name, _before in TIG_PROMPT_VERSIONS_BEFORE:  # nor are the TIG prompts' versions
        merged.pop(name, None)
    if novelty_anchor == "tig" and "N" in dims:
        try:
            components = tig_components_for_new_run(task_set=task_set, requested=merged.get("tig"))
        except TIGConfigurationError as exc:
            raise RunConfigurationError(str(exc)) from exc
        merged["tig"] = components.as_config()
        merged.update(tig_prompt_versions(components))  # its Novelty contexts' extraction and grouping prompts
    else:
        # a run that judges no Novelty against TIG clichés uses no TIG components: the page's form sends its
        # empty TIG fields all the same, which the run's page showed as "TIG extractor , embedder ,"
        merged.pop("tig", None)
    return merged


def judge_run_start(*, run: JudgeRun, background: bool = False) -> None:
    """Queue the run's chunks once the transaction that created it has committed (the lifecycle's one
    start policy: ``background=True`` for a request that must not wait, see :func:`leaderboard.runs.lifecycle.run_start`)."""
    run_start(run, background=background)


def judge_run_pending_chunks(*, run_id: int) -> list[int]:
    """Mark the run running (again, if it had failed or was cancelled: the error is cleared) and return
    the task ids of its unfinished chunks."""
    return run_pending_units(JUDGE_RUN_JOB, run_id)


def judge_run_unfinished_chunks(*, run_id: int) -> list[int]:
    return list(JudgeRunTask.objects.filter(run_id=run_id, done=False).order_by("pk").values_list("task_id", flat=True))


def judge_run_prompt_versions(run: JudgeRun) -> dict[str, str]:
    """The judge prompt's version a judge model is sent (none for the simulated judge, which reads no prompt),
    and the TIG prompts' versions when a provider extractor builds its Novelty contexts: a context built with
    another extraction prompt has another population (engine.tig.population.population_version), so a run
    finished with it would judge its pairs against two populations."""
    versions = {} if run.judge_model_id is None else {"judge_prompt_version": JUDGE_PROMPT_VERSION}
    if (run.config or {}).get("tig"):
        versions.update(tig_prompt_versions(tig_components_of_run(run)))
    return versions


#: A judge run's units are its tasks' chunks (leaderboard.runs.lifecycle). A run made before runs recorded
#: their prompt version was judged with the unframed prompt, ekphrasis-judge-v1, and had its Novelty contexts
#: extracted with the fenced TIG prompts (leaderboard.ekphrasis.tig.TIG_PROMPT_VERSIONS_BEFORE).
JUDGE_RUN_JOB = JobKind(
    name="judge_run", model="leaderboard.JudgeRun", unit_name="task", unit_arg="task_id", display_name="Judge run",
    pending_units=f"{__name__}.judge_run_unfinished_chunks", execute_unit=f"{__name__}.judge_run_task_execute",
    finalise=f"{__name__}.judge_run_finalise", prompt_versions=f"{__name__}.judge_run_prompt_versions",
    prompt_versions_before=(("judge_prompt_version", "ekphrasis-judge-v1"), *TIG_PROMPT_VERSIONS_BEFORE),
)


# ---------------------------------------------------------------- one chunk (leaderboard.ekphrasis.judge_chunk)


@dataclass(frozen=True)
class RunReads:
    """What every chunk of a run reads that the run fixes, read once by a process that runs many of its chunks
    (:func:`judge_run_execute_inline`): the run — its configuration, seed, dimensions, judge and budget are set at
    creation, and a chunk writes its counters and usage by statements, never from this object — its model pool
    (:func:`subject_models_of` its task set, which the finalising step reads again for the snapshot) and its
    unfinished chunks with their tasks. A chunk's comparisons are never among them: each chunk reads its own."""

    run: JudgeRun
    models: list[SubjectModel]
    chunks: dict[int, JudgeRunTask]  # task id -> the chunk, with its task, as it was when read (not done)

    @classmethod
    def read(cls, run_id: int) -> RunReads:
        run = JudgeRun.objects.select_related("task_set", "judge_model").get(pk=run_id)
        run_refuse_changed_prompts(run)  # the run's recorded prompt versions and this code's: fixed in a process
        chunks = JudgeRunTask.objects.select_related("task").filter(run=run, done=False)
        return cls(run, subject_models_of(run.task_set), {chunk.task_id: chunk for chunk in chunks})


def judge_run_task_execute(*, run_id: int, task_id: int, progress: Callable[[int], None] | None = None,
                           reads: RunReads | None = None) -> bool:
    """Judge one task of a run to completion (idempotent, resumable).

    Returns True when this call finished the run's last chunk (the caller then finalises). ``reads``: the run's
    :class:`RunReads` when the caller runs many of its chunks; a worker's chunk reads the run, its chunk and
    task, and its pool itself. A chunk found done when the reads were made is skipped; one finished by another
    worker since is judged again from its stored comparisons, which plans and calls nothing new, and its
    finishing step finds it done (idempotent, as a chunk delivered twice).
    """
    from leaderboard.ekphrasis.judges import judge_for_run

    if reads is not None and reads.run.pk == run_id:
        chunk = reads.chunks.get(task_id)
        if chunk is None:
            return False  # done when read
        run, models = reads.run, reads.models
    else:
        run = JudgeRun.objects.select_related("task_set", "judge_model").get(pk=run_id)
        chunk = JudgeRunTask.objects.select_related("task").get(run=run, task_id=task_id)
        if chunk.done:
            return False
        run_refuse_changed_prompts(run)
        models = None  # the chunk reads the pool
    with _blas_single_threaded(), _commits_without_flush_wait():
        return task_execute(run, chunk, chunk.task, judge_for_run(run), progress, models)


_BLAS: list = []  # the process's BLAS thread-pool controller, found once


@contextmanager
def _blas_single_threaded():
    """The chunk's linear algebra runs on one BLAS thread. Its matrices are small (a TIG context's
    ~200 atoms, a 14-model fit), so OpenBLAS's helper threads gain nothing and spin between calls: with
    the default two threads a chunk burnt about twice the CPU for the same results, and a worker that
    runs beside other workers competes with them for the cores. Results are the same: each matrix
    entry is summed in the same order whatever the number of threads."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    with _BLAS[0].limit(limits=1, user_api="blas"):
        yield


#: The database connections (psycopg's, held weakly) on which the chunks' commits are already set not to
#: wait for the WAL flush (:func:`_commits_without_flush_wait`).
_WITHOUT_FLUSH_WAIT: weakref.WeakSet = weakref.WeakSet()


@contextmanager
def _commits_without_flush_wait():
    """On PostgreSQL, the chunk's commits do not wait for the WAL flush (``synchronous_commit = off``):
    a chunk writes a few small transactions per round of 10 calls, and on a busy disk waiting for each
    flush cost more wall time than the bookkeeping. Atomicity is unchanged; a crash can lose only the
    last fraction of a second of commits, which the resumable chunk replays exactly (the plan depends
    only on what is stored, and a re-sent provider call is answered from the request cache).

    Nested (an inline run sets it once around all its chunks), the inner one sends nothing: its SET and
    RESET were two round trips a chunk. The setting belongs to the connection it was sent on, so a new
    connection is set anew."""
    if connection.vendor != "postgresql":
        yield
        return
    connection.ensure_connection()
    raw = connection.connection
    if raw in _WITHOUT_FLUSH_WAIT:
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO OFF")
    _WITHOUT_FLUSH_WAIT.add(raw)
    try:
        yield
    finally:
        _WITHOUT_FLUSH_WAIT.discard(raw)
        try:
            with connection.cursor() as cursor:
                cursor.execute("RESET synchronous_commit")
        except DatabaseError:
            pass  # an aborted transaction: its rollback undoes the SET too



def judge_run_fail(*, run_id: int, error: str) -> None:
    run_fail(JudgeRun, run_id, error)


# ---------------------------------------------------------------- finalising


def judged_comparisons(run: JudgeRun, pool_index: dict[int, int]):
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
    from engine.leaderboard import board_uncertainty
    from leaderboard.ekphrasis.models import LeaderboardSnapshot
    from leaderboard.ekphrasis.snapshot_records import snapshot_records_hand_over

    with transaction.atomic():
        run = JudgeRun.objects.select_for_update().select_related("task_set").get(pk=run_id)
        existing = run.snapshots.first()
        if existing is not None:
            return existing
        if run.config.get("fixed_pairs"):
            if run.status != JudgeRun.Status.DONE:
                run_finish(run)
            return None
        models = subject_models_of(run.task_set)
        index = {m.pk: i for i, m in enumerate(models)}
        comparisons = judged_comparisons(run, index)
        # the board (build_leaderboard's payload) and its Overall tiers from the same bootstrap: the snapshot's
        # warm-up would otherwise draw that bootstrap again for the tiers (engine.leaderboard.board_uncertainty)
        # on one BLAS thread, as the chunks (_blas_single_threaded): the bootstrap's fits are 14-model systems, and
        # OpenBLAS's second thread only spun — the step took ~1.5x the CPU and the wall for the same board
        with _blas_single_threaded():
            board = board_uncertainty(
                comparisons, [m.display_name for m in models], dimensions=tuple(run.dimensions),
                n_boot=int(run.config.get("n_boot", 1000)), seed=run.seed,
            )
        payload = board["payload"]
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
        run_finish(run)
        # the page's first view needs Overall tiers and family intervals: a new snapshot is warmed once this
        # commits (leaderboard.ekphrasis.tasks.snapshot_written), not by its first reader; when that runs in
        # this process it takes the comparisons just read and the Overall tiers rather than computing them again
        snapshot_records_hand_over(snapshot, comparisons, overall_tiers=board["overall_tiers"])
    return snapshot


def judge_run_execute_inline(*, run: JudgeRun, progress: Callable[[int], None] | None = None):
    """Run every chunk in this process, then finalise (the CLI and eager mode). The objects the process
    held before the run are not walked by the run's garbage collections (:func:`run_heap_frozen`)."""
    with run_heap_frozen():
        last = False
        pending = judge_run_pending_chunks(run_id=run.pk)
        reads = RunReads.read(run.pk) if pending else None  # once for all the chunks, not once each
        with _commits_without_flush_wait():  # once for all the chunks, not once each
            for task_id in pending:
                last = (
                    judge_run_task_execute(run_id=run.pk, task_id=task_id, progress=progress, reads=reads)
                    or last
                )
        run.refresh_from_db()
        if last or run.status == JudgeRun.Status.FINALISING:
            return judge_run_finalise(run_id=run.pk)
        return run.snapshots.first()

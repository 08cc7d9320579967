"""Task-set construction for the site (Ekphrasis Algorithm 1, Table 5): source-pool imports, builds
of a new frozen task-set version with their construction record, and admin overrides of rejected
candidates.

Pools go through the catalogue's import contract: every error names file, line and field, nothing is
written on any error, and importing the same file again changes nothing. A build is planned
(:func:`task_set_build_create`), queued once committed (:func:`task_set_build_start`) and executed by
a worker or the command (:func:`task_set_build_execute`); the engine does the work and the finished
build writes the tasks through :func:`~leaderboard.services.catalogue.tasks_import` in one transaction.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence

from django.db import IntegrityError, transaction
from django.utils import timezone

from engine.task_construction.build import build_task_set
from engine.task_construction.demo_pools import DEMO_POOL_NAME, demo_pool_rows
from engine.task_construction.grid import TABLE5_GRID, GridError, SubtypeGrid
from engine.task_construction.keep import ModelScreen, OfflineScreen
from engine.task_construction.pools import PoolInvalid, PoolRecord, pool_from_rows
from engine.task_construction.pools import SourcePool as EnginePool
from leaderboard.ekphrasis.models import RejectedCandidate, SourcePool, TaskSetBuild
from leaderboard.import_contract import ImportFailed, RecordError
from leaderboard.models import SubjectModel, Task, TaskSet
from leaderboard.records import read_pool_rows
from leaderboard.runs.errors import RunConfigurationError
from leaderboard.runs.lifecycle import JobKind, run_fail, run_finish
from leaderboard.runs.starting import run_start
from leaderboard.services.catalogue import ImportSummary, tasks_import, taskset_freeze

OFFLINE_SCREEN = "offline"
GRIDS = {"table5": TABLE5_GRID}


class BuildConfigurationError(RunConfigurationError):
    """A build the grid, the pools or the screen cannot make."""


# ---------------------------------------------------------------- pools


@transaction.atomic
def source_pool_import(*, name: str, raw: bytes, file_name: str, fmt: str | None = None,
                       is_demo: bool = False) -> tuple[SourcePool, ImportSummary]:
    """Import a pool file under ``name``; the same records again change nothing, other records under an
    existing name are refused (pools are immutable: construction records cite their hash)."""
    rows = read_pool_rows(file_name, raw, fmt=fmt)
    return _pool_store(name=name, rows=rows, file_name=file_name, is_demo=is_demo)


def _pool_store(*, name: str, rows, file_name: str, is_demo: bool) -> tuple[SourcePool, ImportSummary]:
    name = (name or "").strip()
    if not name:
        raise ImportFailed([RecordError(file_name, 0, "name", "a pool needs a name")])
    try:
        pool = pool_from_rows(name, rows, is_demo=is_demo)
    except PoolInvalid as exc:
        raise ImportFailed([RecordError(file_name, e.line, e.field, e.message) for e in exc.errors]) from exc
    existing = SourcePool.objects.select_for_update().filter(name=name).first()
    if existing is not None:
        return _pool_existing(existing, pool, file_name)
    try:
        with transaction.atomic():
            stored = SourcePool.objects.create(name=name, sha256=pool.sha256, records=[r.to_dict() for r in pool.records],
                                               n_records=len(pool.records), is_demo=is_demo)
    except IntegrityError:
        # Race: the same pool imported twice at once (a double-clicked upload). Neither found the name, and
        # the second's insert broke its uniqueness (a 500); it now reads the first's pool (READ COMMITTED).
        return _pool_existing(SourcePool.objects.select_for_update().get(name=name), pool, file_name)
    summary = ImportSummary()
    summary.created = stored.n_records
    return stored, summary


def _pool_existing(existing: SourcePool, pool, file_name: str) -> tuple[SourcePool, ImportSummary]:
    """The stored pool of the same name: unchanged when its records are the file's, else refused."""
    if existing.sha256 != pool.sha256:
        raise ImportFailed([RecordError(file_name, 0, "name", f"a pool named {existing.name!r} exists with other "
                                        "records; pools are immutable: import under a new name")])
    summary = ImportSummary()
    summary.unchanged = existing.n_records
    return existing, summary


@transaction.atomic
def demo_source_pool_ensure() -> SourcePool:
    """The built-in demo pool (labelled demo data), stored once."""
    pool, _ = _pool_store(name=DEMO_POOL_NAME, rows=demo_pool_rows(), file_name="engine/task_construction/demo_pools.py",
                          is_demo=True)
    return pool


def engine_pool(pool: SourcePool) -> EnginePool:
    records = tuple(PoolRecord(**{**r, "norms": r.get("norms", {})}, line=k) for k, r in enumerate(pool.records, start=1))
    return EnginePool(name=pool.name, records=records, is_demo=pool.is_demo)


# ---------------------------------------------------------------- builds


def grid_for(spec) -> SubtypeGrid:
    """``"table5"`` or a grid record ({"name", "cells": [...]})."""
    if isinstance(spec, str):
        if spec not in GRIDS:
            raise BuildConfigurationError(f"unknown grid {spec!r}; known: {', '.join(GRIDS)}")
        return GRIDS[spec]
    try:
        return SubtypeGrid.from_dict(spec)
    except GridError as exc:
        raise BuildConfigurationError(str(exc)) from exc


def screen_choices() -> list[str]:
    """'offline', then the judge-role models with an endpoint (a screen is a judge-role model)."""
    from leaderboard.providers import provider_model_names

    return [OFFLINE_SCREEN, *provider_model_names(SubjectModel.Role.JUDGE)]


def _screen_model(name: str) -> SubjectModel:
    model = SubjectModel.objects.filter(display_name=name, role=SubjectModel.Role.JUDGE).exclude(base_url="").first()
    if model is None:
        raise BuildConfigurationError(f"no judge-role model with an endpoint named {name!r}; choose one of: "
                                      f"{', '.join(screen_choices())}")
    return model


@transaction.atomic
def task_set_build_check(*, name: str, version: str, grid: SubtypeGrid = TABLE5_GRID,
                         screen: str = OFFLINE_SCREEN) -> tuple[str, str, str]:
    """Every check of a build's configuration but its pools (the command checks these before it imports a
    pool file); the cleaned ``(name, version, screen)``, or a BuildConfigurationError."""
    name, version, screen = name.strip(), version.strip(), (screen or OFFLINE_SCREEN).strip()
    if not name or not version:
        raise BuildConfigurationError("a task set needs a name and a version")
    if TaskSet.objects.filter(name=name, version=version).exists():
        raise BuildConfigurationError(f"task set {name} v{version} exists already: choose a new version")
    if grid.total < 1:
        raise BuildConfigurationError("the grid's quotas add up to no task")
    if screen != OFFLINE_SCREEN:
        _screen_model(screen)
    return name, version, screen


def task_set_build_create(*, name: str, version: str, pools: Sequence[SourcePool], grid: SubtypeGrid = TABLE5_GRID,
                          seed: int = 0, screen: str = OFFLINE_SCREEN, created_by=None) -> TaskSetBuild:
    """A planned build; nothing is sampled until it is executed."""
    name, version, screen = task_set_build_check(name=name, version=version, grid=grid, screen=screen)
    if not pools:
        raise BuildConfigurationError("choose at least one source pool")
    build = TaskSetBuild.objects.create(name=name, version=version, grid=grid.to_dict(), seed=seed, screen=screen,
                                        tasks_total=grid.total, created_by=created_by)
    build.pools.set(pools)
    return build


def task_set_build_start(*, build: TaskSetBuild, background: bool = False) -> None:
    """Queue the build once the transaction that created it has committed (the lifecycle's start policy)."""
    run_start(build, background=background)


def task_set_build_units(*, run_id: int) -> list[int]:
    """A build is one unit (itself): Algorithm 1 is deterministic for its seed, so it reruns from the start."""
    return list(TaskSetBuild.objects.filter(pk=run_id).exclude(status=TaskSetBuild.Status.DONE).values_list("pk", flat=True))


def task_set_build_unit_execute(*, run_id: int, unit_id: int) -> bool:
    task_set_build_execute(build_id=unit_id)
    return False  # the build stores its task set and marks itself done in one transaction


def task_set_build_finalise(*, run_id: int) -> None:
    """Nothing to do: a build is done in the transaction that stores its result."""


TASK_SET_BUILD_JOB = JobKind(
    name="task_set_build", model="leaderboard.TaskSetBuild", unit_name="build", display_name="Task-set build",
    pending_units=f"{__name__}.task_set_build_units", execute_unit=f"{__name__}.task_set_build_unit_execute",
    finalise=f"{__name__}.task_set_build_finalise",
)


def _engine_screen(name: str):
    if name == OFFLINE_SCREEN:
        return OfflineScreen()
    from leaderboard.providers import provider_client_for

    model = _screen_model(name)
    return ModelScreen(provider_client_for(model, cache_name="task-screen"), name=model.display_name)


class _Progress:
    """Writes the kept count at most every ``interval`` seconds (the page polls status.json)."""

    def __init__(self, build: TaskSetBuild, outer: Callable[[int, int], None] | None, interval: float = 0.5):
        self.build, self.outer, self.interval, self.last = build, outer, interval, 0.0

    def __call__(self, kept: int, total: int, cell_id: str) -> None:
        now = time.monotonic()
        if now - self.last >= self.interval or kept == total:
            self.last = now
            TaskSetBuild.objects.filter(pk=self.build.pk).update(tasks_kept=min(kept, total), stage=cell_id[:100])
        if self.outer:
            self.outer(kept, total)


def task_set_build_execute(*, build_id: int, progress: Callable[[int, int], None] | None = None,
                           embedder=None) -> TaskSetBuild:
    """Run Algorithm 1 for the build and write the frozen task set, its rejected candidates and its
    construction record in one transaction. Idempotent: a finished build is returned as it is; a failed
    or interrupted one runs again from the start (the engine is deterministic for its seed)."""
    build = TaskSetBuild.objects.get(pk=build_id)
    if build.status == TaskSetBuild.Status.DONE:
        return build
    TaskSetBuild.objects.filter(pk=build.pk).update(status=TaskSetBuild.Status.RUNNING, error="", stage="sampling",
                                                    tasks_kept=0, started_at=build.started_at or timezone.now())
    try:
        pools = [engine_pool(p) for p in build.pools.order_by("name")]
        result = build_task_set(pools, grid=SubtypeGrid.from_dict(build.grid), seed=build.seed,
                                screen=_engine_screen(build.screen), embedder=embedder, progress=_Progress(build, progress))
        _store_result(build, result)
    except Exception as exc:
        run_fail(TaskSetBuild, build.pk, f"{type(exc).__name__}: {exc}", resumable=not isinstance(exc, RunConfigurationError))
        raise
    build.refresh_from_db()
    return build


def _jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


@transaction.atomic
def _store_result(build: TaskSetBuild, result) -> None:
    build = TaskSetBuild.objects.select_for_update().get(pk=build.pk)
    is_demo = bool(result.record.get("is_demo"))
    description = (("DEMO DATA: " if is_demo else "") + f"Built by Algorithm 1 (build {build.pk}): grid "
                   f"{result.record['grid']['name']}, seed {build.seed}, screen {build.screen}.")
    task_set, _ = tasks_import(name=f"build-{build.pk}.jsonl", raw=_jsonl(result.task_records()), task_set_name=build.name,
                               version=build.version, description=description, fmt="jsonl", is_demo=is_demo)
    taskset_freeze(task_set=task_set)
    RejectedCandidate.objects.filter(build=build).delete()
    RejectedCandidate.objects.bulk_create([
        RejectedCandidate(build=build, position=k, external_id=r.candidate.external_id, cell_id=r.candidate.cell_id,
                          family=r.candidate.family, subtype=r.candidate.subtype, brief=r.candidate.brief,
                          constraints=dict(r.candidate.constraints), source=dict(r.candidate.source), rule=r.rule,
                          reason=r.reason)
        for k, r in enumerate(result.rejected)
    ])
    build.task_set, build.record = task_set, result.record
    build.tasks_kept, build.stage = len(result.tasks), ""
    run_finish(build, fields=("task_set", "record", "tasks_kept", "stage"))


@transaction.atomic
def rejected_candidate_override(*, candidate: RejectedCandidate, reason: str, by=None) -> TaskSet:
    """Keep a rejected candidate after all: a new frozen version of the built task set with every task of
    the latest version plus this candidate (frozen sets never change), and the reason recorded."""
    reason = (reason or "").strip()
    if not reason:
        raise BuildConfigurationError("an override needs a reason")
    # the row lock stops two admins overriding the same candidate into two versions; only the candidate's
    # row is locked (PostgreSQL refuses FOR UPDATE on the nullable side of the join to the task set)
    candidate = (RejectedCandidate.objects.select_for_update(of=("self",)).select_related("build__task_set")
                 .get(pk=candidate.pk))
    if candidate.overridden_at is not None:
        raise BuildConfigurationError(f"candidate {candidate.external_id} was already overridden")
    base = candidate.build.task_set
    if base is None:
        raise BuildConfigurationError("the build has no task set yet")
    latest = TaskSet.objects.filter(name=base.name).order_by("-created_at", "-pk").first()
    n = TaskSet.objects.filter(name=base.name, version__startswith=f"{base.version}+override").count() + 1
    version = f"{base.version}+override{n}"
    records = [{"id": t.external_id, "family": t.family, "subtype": t.subtype, "brief": t.brief,
                "constraints": t.constraints, "source": t.source}
               for t in Task.objects.filter(task_set=latest).order_by("position", "external_id")]
    records.append({"id": candidate.external_id, "family": candidate.family, "subtype": candidate.subtype,
                    "brief": candidate.brief, "constraints": candidate.constraints,
                    "source": {**candidate.source, "override": reason}})
    task_set, _ = tasks_import(name=f"override-{candidate.pk}.jsonl", raw=_jsonl(records), task_set_name=base.name,
                               version=version, description=f"{latest.description} Overrides: {candidate.external_id} "
                               f"({reason}).", fmt="jsonl", is_demo=base.is_demo)
    taskset_freeze(task_set=task_set)
    candidate.override_reason, candidate.overridden_by = reason, by
    candidate.overridden_at, candidate.override_task_set = timezone.now(), task_set
    candidate.save(update_fields=["override_reason", "overridden_by", "overridden_at", "override_task_set"])
    return task_set

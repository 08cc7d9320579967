"""The lifecycle of every resumable background job, written once: start, pending units, fail, cancel,
resume, claim the finalising, finish. The rules — what may be cancelled, what may resume — live here,
not in views, so that a page, the API and the command line cannot drift apart.

A kind of job (:class:`JobKind`) names its model and its three units of work:

- ``pending_units(*, run_id) -> list[int]``: the ids of its unfinished units, in plan order;
- ``execute_unit(*, run_id, <unit_arg>) -> bool``: bring one unit to completion (idempotent, resumable; the
  unit's id comes by the keyword ``unit_arg`` names, ``unit_id`` unless the kind says otherwise);
  True when this call finished the job's last unit and won the claim to finalise (:func:`run_claim_finalise`,
  in the transaction :func:`run_counting_finished_units` holds the job's row for);
- ``finalise(*, run_id)``: store the results and mark the job done (idempotent).

A kind whose units send prompts to models also names ``prompt_versions(run) -> dict[str, str]``: the
versions of the texts this code sends for that run (``{}`` when it sends none, as a simulated judge). A run
records them in its config when it is made (:func:`run_prompt_versions`) and resumes only while they are
what this code sends (:func:`run_prompt_change`): finishing it with another text would mix two prompts in
one run's results while its config named only the first.

Each is a dotted path, resolved when first used, so that this module imports no protocol (the protocols
import it). The one Celery task pair that drives every kind is :mod:`leaderboard.runs.tasks`.
Starting and resuming (the one start policy) is :mod:`leaderboard.runs.starting`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

from django.apps import apps
from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone
from django.utils.module_loading import import_string

from leaderboard.runs.errors import RunConfigurationError, RunStateConflict
from leaderboard.runs.models import LIVE_STATUSES, RunJob, RunStatus

logger = logging.getLogger(__name__)

__all__ = [
    "JobKind", "job_kind", "job_kind_of", "job_kinds", "job_kind_register", "run_cancel", "run_claim_finalise",
    "run_counting_finished_units", "run_fail", "run_finish", "run_may_resume", "run_display_name", "run_pending_units", "run_prompt_change",
    "run_prompt_versions", "run_refuse_changed_prompts", "run_resume_refusal",
]

#: Errors stored on a job are cut to this length (a traceback's repr can be long).
ERROR_CHARS = 5000


@dataclass(frozen=True)
class JobKind:
    """One kind of resumable job and where its units live (dotted paths, resolved on first use)."""

    name: str  #: the key the Celery tasks carry ("judge_run", "easel_run", ...)
    model: str  #: ``"app_label.ModelName"`` of its :class:`~leaderboard.runs.models.RunJob`
    pending_units: str
    execute_unit: str
    finalise: str
    unit_name: str = "unit"  #: how an error names a unit ("task", "episode", "prompt")
    unit_arg: str = "unit_id"  #: the keyword ``execute_unit`` takes the unit's id by ("task_id", "episode_id", ...)
    #: how a message names one job, in the researcher's words ("EASEL run", "C² run"): the model's
    #: verbose_name is Django's lower-cased class name, and renaming it would cost every protocol a migration
    display_name: str = ""
    #: ``(run) -> dict[str, str]``: the prompt versions this code sends for ``run`` ("" when the kind sends none)
    prompt_versions: str = ""
    #: the versions a run made before runs recorded them was made with, by name (a name missing here is not
    #: compared on such a run: what it was made with is not known)
    prompt_versions_before: tuple[tuple[str, str], ...] = ()

    @cached_property
    def model_class(self) -> type[RunJob]:
        return apps.get_model(self.model)

    def call(self, step: str, **ids: int):
        if "unit_id" in ids:
            ids[self.unit_arg] = ids.pop("unit_id")
        return import_string(getattr(self, step))(**ids)


_KINDS: dict[str, JobKind] = {}


def job_kind_register(kind: JobKind) -> JobKind:
    existing = _KINDS.get(kind.name)
    if existing is not None and existing != kind:
        raise ValueError(f"job kind {kind.name!r} is registered already")
    _KINDS[kind.name] = kind
    return kind


def job_kinds() -> list[JobKind]:
    """Every registered kind of job, in registration order."""
    return list(_KINDS.values())


def job_kind(name: str) -> JobKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise LookupError(f"no job kind {name!r} is registered") from None


def job_kind_of(run: RunJob) -> JobKind:
    label = run._meta.label
    for kind in _KINDS.values():
        if kind.model == label:
            return kind
    raise LookupError(f"no job kind is registered for {label}")


# ---------------------------------------------------------------- the rules

#: A status as the middle of a refusal reads ("EASEL run 5 is already done").
_STATUS_PHRASES = {
    RunStatus.PENDING: "still pending", RunStatus.RUNNING: "still running",
    RunStatus.FINALISING: "finalising", RunStatus.DONE: "already done", RunStatus.FAILED: "failed",
}


def run_display_name(run: RunJob) -> str:
    """How a message names ``run``: its kind's display name and id ("EASEL run 5")."""
    try:
        name = job_kind_of(run).display_name
    except LookupError:
        name = ""
    name = name or str(run._meta.verbose_name).capitalize()
    return f"{name} {run.pk}"


def _run_state(run: RunJob) -> str:
    return f"{run_display_name(run)} is {_STATUS_PHRASES.get(run.status, run.status)}"



def run_may_resume(run: RunJob) -> bool:
    """Only a failed job resumes, only one whose failure resuming can change, and only while this code
    sends the prompts it was made with."""
    return not run_resume_refusal(run)


def run_resume_refusal(run: RunJob) -> str:
    """Why ``run`` may not resume ("" when it may): the words the API's 409 and the page's message use."""
    if run.status != RunStatus.FAILED:
        return f"{_run_state(run)}: only a failed run resumes"
    if not run.resumable:
        return (f"{run_display_name(run)} failed for a reason resuming cannot change ({run.error}): "
                "start a new run instead")
    return run_prompt_change(run)


# ---------------------------------------------------------------- the prompts a run was made with


def run_prompt_versions(kind: JobKind | str, run: RunJob) -> dict[str, str]:
    """The prompt versions this code sends for ``run`` (``{}`` for a kind or a run that sends no prompt): what
    a run records in its config when it is made."""
    kind = job_kind(kind) if isinstance(kind, str) else kind
    if not kind.prompt_versions:
        return {}
    return dict(import_string(kind.prompt_versions)(run))


def run_prompt_change(run: RunJob) -> str:
    """"" while ``run`` was made with the prompts this code sends; else why it may not go on, naming each
    version it was made with and the one this code sends."""
    try:
        kind = job_kind_of(run)
    except LookupError:
        return ""
    before = dict(kind.prompt_versions_before)
    config = run.config or {}
    changed = []
    for name, now in run_prompt_versions(kind, run).items():
        made_with = config.get(name, before.get(name))
        if made_with is not None and made_with != now:
            changed.append(f"{name} {made_with!r}, this code {now!r}")
    if not changed:
        return ""
    return (f"{run_display_name(run)} was started with other prompts ({'; '.join(changed)}): finishing it would "
            "mix two versions in one run, so start a new run")


def run_refuse_changed_prompts(run: RunJob) -> None:
    """Raise :class:`RunConfigurationError` (the job fails, not resumable) when ``run``'s prompts changed: each
    kind's unit calls it before it sends anything, so a unit a worker still holds after an upgrade refuses too."""
    change = run_prompt_change(run)
    if change:
        raise RunConfigurationError(change)


# ---------------------------------------------------------------- the steps


def run_pending_units(kind: JobKind | str, run_id: int, *, queued: bool = False) -> list[int]:
    """Mark the job running — again, if it had failed or was cancelled: its error is cleared — and return
    the ids of its unfinished units. A non-resumable failed job is left as it is (no units).
    ``queued``: its units go to Celery workers (the dispatch task), not through this process (inline)."""
    kind = job_kind(kind) if isinstance(kind, str) else kind
    model = kind.model_class
    if kind.prompt_versions:
        run = model.objects.filter(pk=run_id).first()
        change = run_prompt_change(run) if run is not None and run.status != RunStatus.DONE else ""
        if change:
            run_fail(model, run_id, change, resumable=False)
            return []
    _run_mark_running(model, run_id, queued=queued)
    if not model.objects.filter(pk=run_id, status__in=[RunStatus.RUNNING, RunStatus.FINALISING]).exists():
        return []
    return list(kind.call("pending_units", run_id=run_id))


def _run_mark_running(model: type[RunJob], run_id: int, *, queued: bool) -> None:
    """In one UPDATE: a pending or resumable failed job becomes running with its error cleared, ``queued`` is
    stored, and a job that is not failed afterwards gets its start time if it had none. They were three
    UPDATEs, three round trips of the dispatch before it sent a job's first unit (the serial start of a run on
    several workers). Every expression reads the row as it was, so the start time's condition is written on
    the old values: the job is failed afterwards only if it was failed and not resumable."""
    field = model._meta.get_field
    revived = Q(status__in=[RunStatus.PENDING, RunStatus.FAILED], resumable=True)
    model.objects.filter(pk=run_id).update(
        status=Case(When(revived, then=Value(RunStatus.RUNNING)), default=F("status"), output_field=field("status")),
        error=Case(When(revived, then=Value("")), default=F("error"), output_field=field("error")),
        queued=queued,
        started_at=Case(
            When(Q(started_at=None) & (~Q(status=RunStatus.FAILED) | Q(resumable=True)), then=Value(timezone.now())),
            default=F("started_at"), output_field=field("started_at"),
        ),
    )


def run_fail(model: type[RunJob], run_id: int, error: str, *, resumable: bool = True) -> None:
    """Mark the job failed with ``error``; ``resumable=False`` when resuming could not change the outcome."""
    model.objects.filter(pk=run_id).exclude(status=RunStatus.DONE).update(
        status=RunStatus.FAILED, error=error[:ERROR_CHARS], resumable=resumable
    )


def run_cancel(run: RunJob, *, by: str = "") -> RunJob:
    """Stop a pending or running job: it becomes failed with 'cancelled' as its error and can be resumed
    like any failed job (its planned and finished units are kept). A unit already inside a worker
    finishes first."""
    if run.status not in LIVE_STATUSES:
        raise RunStateConflict(
            f"{_run_state(run)}: only a pending or running run can be cancelled")
    run_fail(type(run), run.pk, f"cancelled{' by ' + by if by else ''}")
    run.refresh_from_db()
    return run


@contextmanager
def run_counting_finished_units(model: type[RunJob], run_id: int) -> Iterator[None]:
    """The transaction in which a unit is marked finished, the job's finished units are counted and the
    finalising is claimed (:func:`run_claim_finalise`), holding the job's row from its first statement.

    Without the lock two workers finishing the job's last two units at the same moment each marked its
    own unit and counted in a transaction the other could not see yet: both counted one short of the
    total, neither claimed the finalising, and the job stayed running with every unit finished. With it
    the second counts after the first has committed."""
    with transaction.atomic():
        list(model.objects.select_for_update().filter(pk=run_id).values_list("pk", flat=True))
        yield


def run_claim_finalise(model: type[RunJob], run_id: int) -> bool:
    """True for exactly one caller: the conditional update running → finalising is won once, so
    finalising is enqueued once however many workers finish units at the same moment."""
    return bool(model.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(status=RunStatus.FINALISING))


def run_finish(run: RunJob, *, fields: tuple[str, ...] = ()) -> None:
    """Mark ``run`` done (error cleared) and save it with the given result ``fields`` (inside the
    finaliser's transaction, which holds the row lock)."""
    run.status, run.error, run.finished_at = RunStatus.DONE, "", timezone.now()
    run.save(update_fields=["status", "error", "finished_at", *fields])

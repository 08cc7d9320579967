"""Writes to the catalogue: imports, exports, freezing, and the subject models with the catalogue's
revision (every write of a model goes through :func:`subject_model_save`, :func:`subject_model_ensure`,
:func:`subject_models_delete` or :func:`responses_import`, each of which calls
:func:`catalogue_revision_sync`).

Every import is one transaction: either every record of the file is written,
or nothing is, and the caller gets every error with file, line and field.
Imports are idempotent: tasks are identified by their stable external id,
responses by (task, model, sample) and their raw-text SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import logging
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from engine.csv_cells import csv_text
from engine.look_alikes import case_blind_readings, decomposition_safe, drawn
from engine.visual_plan import compose_two_field_text, split_visual_plan
from leaderboard.import_contract import ImportFailed, RecordError, field_rule, value_check
from leaderboard.models import Benchmark, CatalogueRevision, Response, SubjectModel, Task, TaskSet
from leaderboard.protocols import task_set_runs
from leaderboard.records import read_response_records, read_task_records
from leaderboard.selectors import catalogue_identity_strings

logger = logging.getLogger(__name__)

BENCHMARK_NAMES = {
    Benchmark.Kind.EKPHRASIS: "Ekphrasis",
    Benchmark.Kind.EASEL: "EASEL",
    Benchmark.Kind.C2: "C²-Eval",
}


@dataclass
class ImportSummary:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    flagged_for_llm_split: int = 0
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged"
        if self.flagged_for_llm_split:
            text += f", {self.flagged_for_llm_split} kept raw and flagged for the LLM splitter"
        return text


def benchmark_get_or_create(*, kind: str) -> Benchmark:
    benchmark, _ = Benchmark.objects.get_or_create(kind=kind, defaults={"name": BENCHMARK_NAMES[kind]})
    return benchmark


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- tasks


@transaction.atomic
def tasks_import(
    *,
    name: str,
    raw: bytes,
    task_set_name: str,
    version: str,
    benchmark_kind: str = Benchmark.Kind.EKPHRASIS,
    description: str = "",
    fmt: str | None = None,
    is_demo: bool = False,
) -> tuple[TaskSet, ImportSummary]:
    """Import task records into the task set ``task_set_name`` at ``version``.

    Not for EASEL: an EASEL task is a reference image with the engine's record of it, which a JSONL or CSV
    line cannot carry (stored anyway, such tasks made the EASEL run form answer 500); its suites are made
    by ``manage.py easel_suite``, own images included."""
    if benchmark_kind == Benchmark.Kind.EASEL:
        raise ImportFailed([RecordError(name, 0, "", (
            "EASEL tasks are reference images, which a task file cannot carry: make an EASEL suite with "
            "manage.py easel_suite (--images DIR imports your own pictures)"))])
    # The task set's name and version are identifiers as a record's are: a line break or zero-width space
    # in them made a task set whose exports failed and that reads like another on every page.
    naming = [RecordError(name, 0, field_name, message)
              for field_name, value in (("task_set", task_set_name), ("version", version))
              for message in value_check(value, field_rule(TaskSet, "name" if field_name == "task_set" else "version",
                                                           identifier=True))]
    if naming:
        raise ImportFailed(naming)
    records = read_task_records(
        name, raw, fmt=fmt, ekphrasis_families=benchmark_kind == Benchmark.Kind.EKPHRASIS
    )
    benchmark = benchmark_get_or_create(kind=benchmark_kind)
    task_set, created = TaskSet.objects.select_for_update().get_or_create(
        name=task_set_name,
        version=version,
        defaults={"benchmark": benchmark, "description": description, "is_demo": is_demo},
    )
    if not created and task_set.benchmark_id != benchmark.pk:
        raise ImportFailed([RecordError(name, 0, "", f"task set {task_set} belongs to {task_set.benchmark}")])
    existing = {t.external_id: t for t in task_set.tasks.all()}
    # a task that a run judged keeps its content: edited in place, the run's stored results would describe a
    # task that no longer exists (new tasks may still be added; freezing refuses those too)
    used_by = task_set_runs(task_set) if existing and not task_set.frozen else []
    summary = ImportSummary()
    errors: list[RecordError] = []
    to_create, to_update = [], []
    for position, record in enumerate(records):
        values = {
            "family": record.family,
            "subtype": record.subtype,
            "brief": record.brief,
            "constraints": record.constraints,
            "source": record.source,
        }
        task = existing.get(record.external_id)
        if task is None:
            if task_set.frozen:
                errors.append(RecordError(name, record.line, "id", f"task set {task_set} is frozen: import a new version"))
                continue
            to_create.append(Task(task_set=task_set, external_id=record.external_id, position=position, **values))
        elif all(getattr(task, k) == v for k, v in values.items()):
            summary.unchanged += 1
        elif task_set.frozen:
            errors.append(
                RecordError(name, record.line, "id", f"task {record.external_id!r} differs but {task_set} is frozen: import a new version")
            )
        elif used_by:
            errors.append(RecordError(name, record.line, "id", (
                f"task {record.external_id!r} differs, but {task_set} has runs ({', '.join(used_by)}) whose results "
                f"were computed on it as it is: import a new version")))
        else:
            for k, v in values.items():
                setattr(task, k, v)
            to_update.append(task)
    if errors:
        raise ImportFailed(errors)
    Task.objects.bulk_create(to_create)
    if to_update:
        Task.objects.bulk_update(to_update, ["family", "subtype", "brief", "constraints", "source"])
    summary.created, summary.updated = len(to_create), len(to_update)
    return task_set, summary


def taskset_freeze(*, task_set: TaskSet) -> TaskSet:
    task_set.frozen = True
    task_set.save(update_fields=["frozen"])
    return task_set


# ---------------------------------------------------------------- responses


@transaction.atomic
def responses_import(
    *,
    name: str,
    raw: bytes,
    task_set: TaskSet,
    fmt: str | None = None,
    create_models: bool = False,
    demo_models: bool = False,
    create_models_hint: str = "pass --create-models",
) -> ImportSummary:
    """Import response records into ``task_set``; every task and model must exist
    (or ``create_models`` creates unknown subject models). ``create_models_hint`` says how the caller
    asks for that (the CLI's flag, the admin page's checkbox)."""
    records = read_response_records(name, raw, fmt=fmt)
    # Race prevented: the same file imported twice at once (two admins, a re-sent upload) each found no
    # response and no new model, and the second's inserts broke a unique constraint (an IntegrityError,
    # a 500). The task set's row lock orders imports into one task set; the second then reads what the
    # first committed (READ COMMITTED) and finds every record unchanged.
    list(TaskSet.objects.select_for_update().filter(pk=task_set.pk).values_list("pk"))
    tasks = {t.external_id: t for t in task_set.tasks.all()}
    if create_models:
        _model_names_lock()
    models = {m.display_name: m for m in SubjectModel.objects.all()}
    # (a name's readings, the name, the line that introduces it; 0 for a model of the catalogue)
    looks: list[tuple[tuple[Reading, ...], str, int]] = [(model_name_readings(n), n, 0) for n in models]
    errors: list[RecordError] = []
    for record in records:
        if record.task_id not in tasks:
            errors.append(RecordError(name, record.line, "task_id", f"unknown task {record.task_id!r} in {task_set}"))
        if record.model not in models:
            readings = model_name_readings(record.model)
            twin, twin_line = next(((n, line) for read, n, line in looks if model_names_read_alike(read, readings)),
                                   ("", 0))
            if twin:
                where = f"the model {twin!r} named on line {twin_line}" if twin_line else f"the existing model {twin!r}"
                errors.append(RecordError(name, record.line, "model", model_name_twin_message(record.model, where)))
            elif create_models:
                models[record.model] = SubjectModel(display_name=record.model, is_demo=demo_models)
                looks.append((readings, record.model, record.line))
            else:
                errors.append(
                    RecordError(name, record.line, "model", f"unknown model {record.model!r} (create it first, or {create_models_hint})")
                )
    if errors:
        raise ImportFailed(errors)
    new_models = [display_name for display_name, model in models.items() if model.pk is None]
    for model_name in sorted(new_models):  # one order, so that two imports never wait on each other
        # get_or_create: an import into another task set may create the same model at this instant
        models[model_name], _ = SubjectModel.objects.get_or_create(
            display_name=model_name, defaults={"is_demo": demo_models})
    if new_models:
        catalogue_revision_sync()  # new names: what annotators are shown is checked against them

    existing: dict[tuple[int, int, int], Response] = {
        (r.task_id, r.subject_model_id, r.sample): r
        for r in Response.objects.filter(task__task_set=task_set).only(
            "id", "task_id", "subject_model_id", "sample", "raw_sha256", "is_primary"
        )
    }
    summary = ImportSummary()
    now = timezone.now()
    to_create: list[Response] = []
    wanted_primary: dict[tuple[int, int], tuple[int, int]] = {}  # (task, model) -> (sample, line)
    for record in records:
        task, model = tasks[record.task_id], models[record.model]
        if record.text is not None:
            raw_text = record.text
            plan = split_visual_plan(raw_text)
            method = Response.Normalisation.PARSER if plan.ok else Response.Normalisation.PENDING
            core, visual = plan.core_idea, plan.visual_description
        else:
            core, visual = record.core_idea.strip(), record.visual_description.strip()
            raw_text = compose_two_field_text(core, visual)
            method = Response.Normalisation.FIELDS
        digest = sha256_text(raw_text)
        if record.primary:
            wanted_primary[(task.pk, model.pk)] = (record.sample, record.line)
        current = existing.get((task.pk, model.pk, record.sample))
        if current is not None:
            if current.raw_sha256 != digest:
                errors.append(
                    RecordError(
                        name, record.line, "text" if record.text is not None else "core_idea",
                        f"sample {record.sample} of {record.model!r} on {record.task_id!r} already exists with different text; "
                        "responses are immutable (judgments are pinned to them): use a new sample index",
                    )
                )
            else:
                summary.unchanged += 1
            continue
        if method == Response.Normalisation.PENDING:
            summary.flagged_for_llm_split += 1
        to_create.append(
            Response(
                task=task,
                subject_model=model,
                sample=record.sample,
                raw_text=raw_text,
                core_idea=core,
                visual_description=visual,
                raw_sha256=digest,
                normalisation_method=method,
                normalisation_attempts=0 if method == Response.Normalisation.FIELDS else 1,
                normalised_at=None if method == Response.Normalisation.PENDING else now,
                normalisation_model="deterministic-parser" if method == Response.Normalisation.PARSER else "",
            )
        )
    errors.extend(_check_primaries(name, existing, wanted_primary))
    if errors:
        raise ImportFailed(errors)
    Response.objects.bulk_create(to_create)
    summary.created = len(to_create)
    _assign_primaries(task_set, wanted_primary)
    return summary


#: One character of a name as :func:`model_name_readings` gives it: what it may be read as (case folded).
Reading = frozenset[str]
_SPACE: Reading = frozenset({" "})


def model_name_readings(display_name: str) -> tuple[Reading, ...]:
    """A model's name as a reader tells it from another, character by character: compatibility forms folded
    (fullwidth letters, ligatures), characters that draw nothing dropped, look-alike letters of any script
    folded to the ASCII letter they are drawn like (Cyrillic ``а`` and ``Т``, Greek ``Ο``), every dash as
    ``-``, case folded, runs of whitespace as one space. A name in another script that imitates no Latin
    letter (``文心一言``, ``Гигачат``'s ``Г``, ``и``) keeps its letters. Each character comes with everything
    it may be read as (:func:`engine.look_alikes.case_blind_readings`): one reading but for the letters whose
    capital and small forms imitate different letters (Greek ``ν`` is ``v`` as drawn and ``n`` once its capital ``Ν`` is; a name
    compared case-blind may be read either way). Two names look like one model when
    :func:`model_names_read_alike` says so."""
    text = unicodedata.normalize("NFKC", decomposition_safe(display_name))
    out: list[Reading] = []
    for char in text:
        if not (drawn(char) or unicodedata.category(char)[0] == "M"):
            continue
        readings = frozenset({"-"}) if unicodedata.category(char) == "Pd" else case_blind_readings(char)
        if len(readings) > 1:
            out.append(readings)
            continue
        for folded in next(iter(readings)):  # casefold may give more than one character ("ß" is "ss")
            if folded.isspace():
                if out and out[-1] != _SPACE:  # runs of whitespace as one space, none at either end
                    out.append(_SPACE)
            else:
                out.append(frozenset({folded}))
    while out and out[-1] == _SPACE:
        out.pop()
    return tuple(out)


def model_names_read_alike(a: Sequence[Reading], b: Sequence[Reading]) -> bool:
    """Whether two names' :func:`model_name_readings` may be read as one name: as long, and each character of
    one may be read as the other's."""
    return len(a) == len(b) and all(x & y for x, y in zip(a, b))


def model_name_twin_message(display_name: str, where: str) -> str:
    """The refusal of ``display_name`` because it reads as the model ``where`` names."""
    return (f"{display_name!r} differs from {where} only in case, spacing, dashes, character width, invisible "
            "characters or look-alike letters of another script: name one model one way")


class SubjectModelNameRefused(ValueError):
    """A new or changed subject-model name the catalogue refuses: one that is no identifier (surrounding
    whitespace, an invisible character, too long), or one another model has (:class:`SubjectModelNameTaken`)."""


class SubjectModelNameTaken(SubjectModelNameRefused):
    """A new or changed subject-model name that another model already has, or that reads as its name (the
    same :func:`model_name_readings`); ``twin`` is that model's name."""

    def __init__(self, display_name: str, twin: str) -> None:
        self.display_name, self.twin = display_name, twin
        super().__init__(f"a model named {twin!r} exists already" if twin == display_name
                         else model_name_twin_message(display_name, f"the existing model {twin!r}"))


def _model_names_lock() -> None:
    """Race prevented: two writers each finding a name free of look-alikes and then writing two look-alike
    names ("GPT-4o" and "GPТ-4o"; the unique index only tells equal names apart). The catalogue revision's
    row lock orders writers of names; the second then reads the first's name in a new statement (READ
    COMMITTED). Inside the caller's transaction."""
    CatalogueRevision.objects.get_or_create(pk=1)
    list(CatalogueRevision.objects.select_for_update().filter(pk=1).values_list("pk"))


def subject_model_name_check(display_name: str, *, except_pk: int | None = None) -> None:
    """The one gate of a new or changed subject-model name (API, admin, imports, commands): raise
    :class:`SubjectModelNameRefused` when it is no identifier — the rule the API's field and a response
    record's ``model`` apply; a name stored as " alpha" could be named by no run, whose lists of names are
    trimmed — and :class:`SubjectModelNameTaken` naming the model (other than ``except_pk``, the model being
    renamed) whose name it equals or reads as. A model renamed to a look-alike of its own name passes."""
    problems = value_check(display_name, field_rule(SubjectModel, "display_name", identifier=True))
    if problems:
        raise SubjectModelNameRefused(f"display name {display_name!r} {problems[0]}")
    readings = model_name_readings(display_name)
    for name in SubjectModel.objects.exclude(pk=except_pk).values_list("display_name", flat=True):
        if model_names_read_alike(model_name_readings(name), readings):
            raise SubjectModelNameTaken(display_name, name)


def _check_primaries(name, existing, wanted_primary) -> list[RecordError]:
    errors = []
    current_primary = {(t, m): s for (t, m, s), r in existing.items() if r.is_primary}
    for key, (sample, line) in wanted_primary.items():
        if key in current_primary and current_primary[key] != sample:
            errors.append(
                RecordError(name, line, "primary", f"a second primary: sample {current_primary[key]} is already primary for this model and task")
            )
    return errors


def _assign_primaries(task_set: TaskSet, wanted_primary: dict[tuple[int, int], tuple[int, int]]) -> None:
    """Exactly one primary per model–task: the one the file names, else the lowest sample (sample 1)."""
    by_pair: dict[tuple[int, int], list[Response]] = defaultdict(list)
    for response in Response.objects.filter(task__task_set=task_set).only(
        "id", "task_id", "subject_model_id", "sample", "is_primary"
    ):
        by_pair[(response.task_id, response.subject_model_id)].append(response)
    to_mark = []
    for key, responses in by_pair.items():
        if any(r.is_primary for r in responses):
            continue
        sample = wanted_primary.get(key, (min(r.sample for r in responses), 0))[0]
        to_mark.extend(r.pk for r in responses if r.sample == sample)
    Response.objects.filter(pk__in=to_mark).update(is_primary=True)


# ---------------------------------------------------------------- subject models and the catalogue revision

#: Called with the new revision number once a transaction that moved it has committed. Registered from an
#: app's ``ready()`` (:func:`catalogue_revision_listener_register`): annotation re-checks the items it
#: checked against the old names, and the catalogue may not import annotation.
_REVISION_LISTENERS: list[Callable[[int], None]] = []


def catalogue_revision_listener_register(listener: Callable[[int], None]) -> None:
    """Call ``listener(number)`` after every commit that moves the catalogue revision (idempotent)."""
    if listener not in _REVISION_LISTENERS:
        _REVISION_LISTENERS.append(listener)


def _identities_sha256(strings: Iterable[str]) -> str:
    names = sorted({name.strip() for name in strings if name and name.strip()})
    return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()


def _revision_moved(number: int) -> None:
    for listener in list(_REVISION_LISTENERS):
        listener(number)


def catalogue_revision_sync(*, now: datetime | None = None) -> int:
    """Move the catalogue revision if the models' identity strings
    (:func:`leaderboard.selectors.catalogue_identity_strings`) are not those it was taken at; the revision
    number now. Every write of subject models calls it in its own transaction; the periodic blinding sweep
    calls it too, for writes made around the services (a shell, fixtures, raw SQL). Changing a model's
    price or endpoint moves nothing. After the commit, the registered listeners hear the new number."""
    with transaction.atomic():
        current = CatalogueRevision.objects.filter(pk=1).values_list("number", "identities_sha256").first()
        if current is not None and current[1] == _identities_sha256(catalogue_identity_strings()):
            return current[0]  # the usual case, and the sweep's: nothing to lock
        CatalogueRevision.objects.get_or_create(pk=1)  # made by the migration; again after a flush
        # Race prevented: two writers of models each moving the revision from the same old names, the
        # second recording a digest without the first's model. The row lock orders them; the second then
        # reads the names in a new statement, which sees the first's commit (READ COMMITTED).
        row = CatalogueRevision.objects.select_for_update().get(pk=1)
        digest = _identities_sha256(catalogue_identity_strings())
        if digest == row.identities_sha256:
            return row.number
        row.number += 1
        row.identities_sha256, row.changed_at = digest, now or timezone.now()
        row.save(update_fields=["number", "identities_sha256", "changed_at"])
        transaction.on_commit(partial(_revision_moved, row.number), robust=True)
        return row.number


def subject_model_save(*, model: SubjectModel, update_fields: Sequence[str] | None = None) -> SubjectModel:
    """Save a subject model, new or changed (``update_fields`` as ``Model.save`` takes them), and move the
    catalogue revision when its names changed: the one write of a model (API, admin, imports). A new name,
    or a changed one, passes :func:`subject_model_name_check` first (else :class:`SubjectModelNameRefused`)."""
    with transaction.atomic():
        stored = SubjectModel.objects.filter(pk=model.pk).values_list("display_name", flat=True).first()
        if model.pk is None or stored != model.display_name:
            _model_names_lock()
            subject_model_name_check(model.display_name, except_pk=model.pk)
        model.save(update_fields=update_fields)
        catalogue_revision_sync()
    return model


def subject_model_ensure(*, display_name: str, defaults: Mapping[str, Any]) -> SubjectModel:
    """The model named ``display_name``, created with ``defaults`` on first use (simulated subjects)."""
    return subject_models_ensure(defaults_by_name={display_name: defaults})[display_name]


def subject_models_ensure(*, defaults_by_name: Mapping[str, Mapping[str, Any]]) -> dict[str, SubjectModel]:
    """Display name -> the model of that name, each created with its defaults on first use; the catalogue
    revision moves once for all the new ones. A new name that is no identifier or reads as an existing model's
    is refused (:class:`SubjectModelNameRefused`), and nothing is created."""
    with transaction.atomic():
        models, created = {}, False
        existing = set(SubjectModel.objects.filter(display_name__in=list(defaults_by_name))
                       .values_list("display_name", flat=True))
        if set(defaults_by_name) - existing:
            _model_names_lock()
        for name, defaults in defaults_by_name.items():
            if name not in existing:
                subject_model_name_check(name)
            models[name], new = SubjectModel.objects.get_or_create(display_name=name, defaults=dict(defaults))
            created = created or new
        if created:
            catalogue_revision_sync()
    return models


def subject_models_delete(*, models: QuerySet[SubjectModel]) -> None:
    """Delete subject models (the admin's delete); a model with responses or runs is protected."""
    with transaction.atomic():
        models.delete()
        catalogue_revision_sync()


# ---------------------------------------------------------------- exports


def rows_serialise(rows: list[dict], columns: list[str], fmt: str) -> str:
    """Rows as JSONL (raw values) or CSV (objects as JSON text, booleans as true/false, and every cell
    neutralised against spreadsheet formulas by :func:`engine.csv_cells.csv_text`)."""
    if fmt == "csv":
        return csv_text(columns, ([_csv_value(row.get(k)) for k in columns] for row in rows))
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n" for row in rows)


def _csv_value(value):
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


TASK_COLUMNS = ["id", "family", "subtype", "brief", "constraints", "source"]
RESPONSE_COLUMNS = ["task_id", "model", "sample", "text", "core_idea", "visual_description", "primary"]


def tasks_export(*, task_set: TaskSet, fmt: str = "jsonl") -> str:
    rows = [
        {
            "id": t.external_id,
            "family": t.family,
            "subtype": t.subtype,
            "brief": t.brief,
            "constraints": t.constraints,
            "source": t.source,
        }
        for t in task_set.tasks.order_by("position", "external_id")
    ]
    return rows_serialise(rows, TASK_COLUMNS, fmt)


def responses_export(*, task_set: TaskSet, fmt: str = "jsonl") -> str:
    rows = []
    responses = (
        Response.objects.filter(task__task_set=task_set)
        .select_related("task", "subject_model")
        .order_by("task__position", "task__external_id", "subject_model__display_name", "sample")
    )
    for r in responses:
        row = {"task_id": r.task.external_id, "model": r.subject_model.display_name, "sample": r.sample}
        if r.normalisation_method == Response.Normalisation.FIELDS:
            row.update(core_idea=r.core_idea, visual_description=r.visual_description)
        else:
            row["text"] = r.raw_text
        row["primary"] = r.is_primary
        rows.append(row)
    return rows_serialise(rows, RESPONSE_COLUMNS, fmt)


# ---------------------------------------------------------------- roles


def role_groups_ensure() -> None:
    """Create the three role groups with their permissions (idempotent).

    annotator: no model permissions — the annotation views hand out only the
    user's own queue. researcher: view everything. admin: everything in the
    catalogue, the campaigns and the users, the login attempts (django-axes) and
    the API tokens.
    """
    from django.contrib.auth.models import Group, Permission

    from leaderboard.protocols import protocol_app_labels
    from leaderboard.roles import ADMIN, ANNOTATOR, RESEARCHER

    Group.objects.get_or_create(name=ANNOTATOR)
    researcher, _ = Group.objects.get_or_create(name=RESEARCHER)
    admin, _ = Group.objects.get_or_create(name=ADMIN)
    # every registered protocol's app (read from the registry, so none can be left out), the catalogue, the campaigns
    ours = Permission.objects.filter(
        content_type__app_label__in=sorted({"leaderboard", "annotation", *protocol_app_labels()}))
    researcher.permissions.set(ours.filter(codename__startswith="view_"))
    # axes: admins see failed logins and lockouts, and can delete an attempt to lift a lockout.
    # api_tokens: admins create and revoke users' API tokens (researchers do not see others' tokens).
    admin.permissions.set(ours | Permission.objects.filter(content_type__app_label__in=["auth", "axes", "api_tokens"]))

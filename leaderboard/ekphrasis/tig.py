"""Typed Idea Graphs for the site (Ekphrasis §4.2, App. G): per-task populations, leave-two-models-out
Novelty contexts materialised as stored checklist items, build jobs and audit outcomes.

Models enter the engine by primary key, never by name, so that a context key (``"12|15"``) or an item
never carries a model identity. Each response is extracted once (:class:`StoredExtractions`, in the
database) and each distinct atom embedded once (the engine's persistent embedding cache under
``ATELIER_EMBED_CACHE_DIR``); contexts are built lazily for the pairs a run judges on Novelty and stored
as checklist items keyed by (task, pair, population version).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, fields
from datetime import datetime

from django.db import connection, transaction
from django.utils import timezone

from evalsite.precompiled import read_rows
from leaderboard.ekphrasis.checklists import checklist_item_revise, checklist_slot_lock
from leaderboard.ekphrasis.models import AtomExtraction, ChecklistItem, TIGBuild
from leaderboard.json_recordset import recordset_insert_sql, recordset_json
from leaderboard.models import Response, SubjectModel, Task, TaskSet
from leaderboard.providers import OFFLINE_EMBEDDER, provider_client_for, text_embedder_named
from leaderboard.runs.errors import RunConfigurationError
from leaderboard.runs.lifecycle import (
    JobKind,
    run_fail,
    run_finish,
    run_prompt_versions,
    run_refuse_changed_prompts,
)
from leaderboard.runs.starting import run_start

TIG_SLOT = 1  # the cliché-distance slot that a population-cliché item replaces (App. E.3)


_EXTRACTION_COLUMNS = ("key", "response_id", "extractor", "payload")


def _extractions_upsert_sql() -> str:
    """The PostgreSQL upsert of extraction rows sent as one JSON array (created_at, then the rows)."""
    quote = connection.ops.quote_name
    field = AtomExtraction._meta.get_field
    updates = ", ".join(f"{quote(field(name).column)} = EXCLUDED.{quote(field(name).column)}"
                        for name in _EXTRACTION_COLUMNS if name != "key")
    return recordset_insert_sql(AtomExtraction, shared=("created_at",), per_row=_EXTRACTION_COLUMNS,
                                on_conflict=f"ON CONFLICT ({quote(field('key').column)}) DO UPDATE SET {updates}")


class StoredExtractions(MutableMapping):
    """The engine's per-response extraction store, kept in the database.

    Writes are buffered and stored by one bulk upsert (issue 16: one ``update_or_create`` per response
    was 60% of a cold build) the first time anything is read after them — the engine reads every
    extraction back as soon as it has extracted them all, so they are stored before the embedding (or
    anything else) can fail — or on :meth:`flush`."""

    def __init__(self, task: Task):
        from engine.tig.atoms import ResponseAtoms

        self._from_dict = ResponseAtoms.from_dict
        self._memo = {
            e.key: e.payload for e in AtomExtraction.objects.filter(response__task=task).only("key", "payload")
        }
        self._unsaved: dict[str, AtomExtraction] = {}

    def flush(self) -> None:
        """Store the buffered extractions (one upsert on the unique key).

        On PostgreSQL the rows go as one JSON document (``jsonb_to_recordset``): Django's bulk upsert sends
        them as one array per column, which the driver quotes element by element in Python (a third of
        a cold build); JSON is encoded in C and parsed by the server."""
        if not self._unsaved:
            return
        if connection.vendor == "postgresql":
            rows = ((e.key, e.response_id, e.extractor, e.payload) for e in self._unsaved.values())
            with connection.cursor() as cursor:
                cursor.execute(_extractions_upsert_sql(),
                               [timezone.now(), recordset_json(_EXTRACTION_COLUMNS, rows)])
        else:
            AtomExtraction.objects.bulk_create(
                list(self._unsaved.values()), update_conflicts=True, unique_fields=["key"],
                update_fields=["payload", "extractor", "response"], batch_size=1000,
            )
        self._unsaved.clear()

    def __getitem__(self, key: str):
        self.flush()
        return self._from_dict(self._memo[key])

    def get(self, key, default=None):
        return self[key] if key in self._memo else default

    def __setitem__(self, key: str, value) -> None:
        payload = value.to_dict()
        response_id = int(value.response_id) if str(value.response_id).isdigit() else None
        self._unsaved[key] = AtomExtraction(key=key, payload=payload, extractor=value.extractor, response_id=response_id)
        self._memo[key] = payload

    def __delitem__(self, key: str) -> None:
        self._unsaved.pop(key, None)
        AtomExtraction.objects.filter(key=key).delete()
        del self._memo[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._memo)

    def __len__(self) -> int:
        return len(self._memo)


def task_ideas(task: Task) -> list[dict]:
    """Every sample of every subject model on the task (the TIG pool, App. D Table 8)."""
    rows = (
        Response.objects.filter(task=task, subject_model__role=SubjectModel.Role.SUBJECT)
        .exclude(core_idea="")
        .order_by("subject_model_id", "sample")
        .values_list("pk", "subject_model_id", "sample", "core_idea")
    )
    return ideas_of(task, rows)


def ideas_of(task: Task, rows) -> list[dict]:
    """:func:`task_ideas` from the task's responses already read: ``rows`` are (pk, subject model pk, sample,
    Core Idea) of every response of a subject model on ``task`` (any order; those with an empty Core Idea are
    left out here, as the query leaves them out). A judge-run chunk reads them with its pool (one read of the
    task's responses, not two)."""
    return [
        {"model": str(model_id), "sample": sample, "core_idea": core_idea, "response_id": str(pk),
         "task": task.external_id}
        for pk, model_id, sample, core_idea in sorted(rows, key=lambda r: (r[1], r[2]))
        if core_idea != ""
    ]


OFFLINE_EXTRACTOR = "offline"  # the rule-based extractor: the labelled fallback (App. G.2 without a provider)
EMBEDDING_CANONICALISER = "embedding"  # synonyms grouped by embedding similarity (the offline path, App. G.2)
LLM_CANONICALISER = "llm"  # the extractor model groups synonyms, validated and repaired (App. G.2)


class TIGConfigurationError(RunConfigurationError):
    """A TIG component that cannot be used (an unknown model, an LLM canonicaliser without an extractor)."""


@dataclass(frozen=True)
class TIGComponents:
    """Which extractor, embedder and canonicaliser build a task set's TIGs, by name: ``"offline"`` or a
    judge-role model's display name; ``"minilm"`` or an embedder-role model's display name;
    ``"embedding"`` or ``"llm"`` (the extractor model groups synonyms)."""

    extractor: str = OFFLINE_EXTRACTOR
    embedder: str = OFFLINE_EMBEDDER
    canonicaliser: str = EMBEDDING_CANONICALISER

    def as_config(self) -> dict[str, str]:
        return {"extractor": self.extractor, "embedder": self.embedder, "canonicaliser": self.canonicaliser}

    @classmethod
    def of(cls, record) -> TIGComponents:
        """The components of a :class:`TIGBuild` (or of anything with the three fields)."""
        return cls(record.extractor, record.embedder, record.canonicaliser)


def _provider_model(name: str, role: str, what: str) -> SubjectModel:
    model = SubjectModel.objects.filter(display_name=name, role=role).first()
    if model is None:
        from leaderboard.providers import provider_model_names

        known = provider_model_names(role)
        default = OFFLINE_EXTRACTOR if what == "extractor" else OFFLINE_EMBEDDER
        raise TIGConfigurationError(
            f"no {role}-role model named {name!r} for the TIG {what}; choose {default!r} or one of: "
            f"{', '.join(known) or '(none configured)'}"
        )
    if not model.base_url:
        raise TIGConfigurationError(f"{model} has no base URL, so it cannot serve as the TIG {what}")
    return model


def tig_components_check(
    *, extractor: str = OFFLINE_EXTRACTOR, embedder: str = OFFLINE_EMBEDDER, canonicaliser: str = EMBEDDING_CANONICALISER
) -> TIGComponents:
    """Validated component names (raises :class:`TIGConfigurationError` naming the known choices)."""
    extractor = (extractor or OFFLINE_EXTRACTOR).strip()
    embedder = (embedder or OFFLINE_EMBEDDER).strip()
    canonicaliser = (canonicaliser or EMBEDDING_CANONICALISER).strip()
    if extractor != OFFLINE_EXTRACTOR:
        _provider_model(extractor, SubjectModel.Role.JUDGE, "extractor")
    if embedder != OFFLINE_EMBEDDER:
        _provider_model(embedder, SubjectModel.Role.EMBEDDER, "embedder")
    if canonicaliser not in (EMBEDDING_CANONICALISER, LLM_CANONICALISER):
        raise TIGConfigurationError(
            f"unknown canonicaliser {canonicaliser!r}; choose {EMBEDDING_CANONICALISER!r} or {LLM_CANONICALISER!r}"
        )
    if canonicaliser == LLM_CANONICALISER and extractor == OFFLINE_EXTRACTOR:
        raise TIGConfigurationError("the 'llm' canonicaliser is the extractor model: choose a provider extractor")
    return TIGComponents(extractor, embedder, canonicaliser)


def _engine_text_components(components: TIGComponents) -> tuple:
    """The engine's extractor and canonicaliser; None stands for the engine's offline default
    (OfflineExtractor, EmbeddingCanonicaliser). An LLM canonicaliser is the extractor's model."""
    if components.extractor == OFFLINE_EXTRACTOR:
        return None, None
    from engine.tig.llm import LLMCanonicaliser, LLMExtractor

    model = _provider_model(components.extractor, SubjectModel.Role.JUDGE, "extractor")
    name = model.provider_id or model.display_name
    extractor = LLMExtractor(provider_client_for(model, cache_name="tig-extract"), model=name)
    if components.canonicaliser == EMBEDDING_CANONICALISER:
        return extractor, None
    return extractor, LLMCanonicaliser(provider_client_for(model, cache_name="tig-canonical"), model=name)


def task_population_index(
    task: Task, *, components: TIGComponents | None = None, progress: Callable[[str, int, int], None] | None = None,
    ideas: list[dict] | None = None,
):
    """The task's population, extracted and embedded once, with the chosen extractor, embedder and
    canonicaliser (offline rules, MiniLM and embedding grouping by default). The population version hashes
    all three names, so contexts built with different components never mix. ``ideas``: :func:`task_ideas`
    when the caller has them (:func:`ideas_of`), else read here."""
    from engine.tig.population import PopulationIndex

    components = components or TIGComponents()
    extractor, canonicaliser = _engine_text_components(components)
    extractions = StoredExtractions(task)
    index = PopulationIndex(
        task_ideas(task) if ideas is None else ideas, task=task.external_id, brief=task.brief, extractor=extractor,
        embedder=text_embedder_named(components.embedder), canonicaliser=canonicaliser,
        extractions=extractions, progress=progress,
    )
    extractions.flush()
    return index


def tig_components_of_run(run) -> TIGComponents:
    """The components a judge run builds its Novelty contexts with (fixed when the run was created)."""
    config = (run.config or {}).get("tig") or {}
    return TIGComponents(**{k: v for k, v in config.items() if v})


def tig_components_for_new_run(*, task_set: TaskSet, requested: Mapping[str, str] | None = None) -> TIGComponents:
    """What a new run uses: each component asked for, else that of the task set's latest finished build,
    else the offline one. Resolved once, at creation, and stored in the run's config."""
    build = TIGBuild.objects.filter(task_set=task_set, status=TIGBuild.Status.DONE).order_by("-finished_at", "-pk").first()
    base = TIGComponents.of(build) if build else TIGComponents()
    requested = requested or {}
    extractor = requested.get("extractor") or base.extractor
    # a canonicaliser is only inherited together with the extractor it belongs to
    inherited = base.canonicaliser if extractor == base.extractor else EMBEDDING_CANONICALISER
    return tig_components_check(
        extractor=extractor, embedder=requested.get("embedder") or base.embedder,
        canonicaliser=requested.get("canonicaliser") or inherited,
    )


def tig_context_key(model_x_id: int, model_y_id: int, version: str) -> str:
    from engine.tig.population import pair_context_key

    return f"tig:{pair_context_key((str(model_x_id), str(model_y_id)))}@{version}"


@dataclass(frozen=True, slots=True)
class ContextItem:
    """A stored Novelty context item as a judge run reads it: the columns of its :class:`ChecklistItem` row, as
    a plain record. A paper-scale run makes and reads about 19,000 of them; as model instances their
    construction alone cost more than their insert."""

    pk: int
    task_id: int
    dimension: str
    slot: int
    context_key: str
    text: str
    inspects: str
    source: str
    version: int
    active: bool
    provenance: dict
    created_at: datetime


_CONTEXT_ITEM_FIELDS = tuple(f.name for f in fields(ContextItem))
#: The columns of the stored context rows, in ContextItem's order ("pk" read as the column "id").
_CONTEXT_ITEM_COLUMNS = ("id", *_CONTEXT_ITEM_FIELDS[1:])


def stored_novelty_contexts(*, task: Task, version: str) -> dict[str, list[ContextItem]]:
    """Every stored leave-two-models-out context of the task for one population version, by context key:
    its active items in the order :func:`novelty_context_items` returns them (an empty list for a
    context without a population cliché). One query for a task's pairs instead of one per pair."""
    out: dict[str, list[ContextItem]] = {}
    # the statement compiled once a process (a chunk built and compiled the queryset anew for every task); the
    # marks' version holds every LIKE special character, so the check covers the pattern's escapes too
    for row in read_rows(_contexts_queryset, _contexts_params, (-1, "v_%\\x"), (task.pk, version)):
        item = ContextItem(*row)
        out.setdefault(item.context_key, [])
        if item.active:
            out[item.context_key].append(item)
    return out


def _contexts_queryset(task_id, version: str):
    """The rows :func:`stored_novelty_contexts` reads."""
    return ChecklistItem.objects.filter(task=task_id, dimension="N", context_key__startswith="tig:",
                                        context_key__endswith=f"@{version}").order_by(
        "context_key", "slot", "-version").values_list(*_CONTEXT_ITEM_COLUMNS)


def _contexts_params(task_id: int, version: str) -> list:
    """The parameters :func:`_contexts_queryset` binds, in its statement's order (Django sorts a filter's
    keywords): the key's end and start as LIKE patterns (the database's escapes), the dimension, the task."""
    return ["%" + connection.ops.prep_for_like_query(f"@{version}"), "tig:%", "N", task_id]


def _context_values(key: str, index, model_x_id: int, model_y_id: int) -> tuple[str, str, bool, dict]:
    """What the stored item of one pair's context has of its own (:data:`_CONTEXT_PER_ROW`): its population
    cliché, or an inactive marker when none qualified (so that the context is not rebuilt)."""
    # only the slot-1 anchor is stored: items are made best cluster first and read only as far as top_k, so
    # top_k=1 gives the same first item without building the clusters of items 2 and 3
    context = index.context((str(model_x_id), str(model_y_id)), top_k=1)
    anchor = context.anchor
    if anchor is None:
        return key, "(no population cliché)", False, {
            "population_version": index.version, "empty": True, "n_reference_ideas": context.n_reference_ideas}
    return key, anchor.text, True, {**anchor.provenance, "engine_item_id": anchor.item_id,
                                    "n_reference_ideas": context.n_reference_ideas}


#: What every stored context item of one task shares, and what each has of its own (see _context_values)
_CONTEXT_SHARED = ("task_id", "dimension", "slot", "inspects", "source", "version", "created_at")
_CONTEXT_PER_ROW = ("context_key", "text", "active", "provenance")


def _context_shared(task: Task) -> dict:
    return {"task_id": task.pk, "dimension": "N", "slot": TIG_SLOT, "inspects": "core_idea",
            "source": ChecklistItem.Source.TIG.value, "version": 1}


@transaction.atomic
def novelty_context_items(*, task: Task, model_x_id: int, model_y_id: int, index) -> list[ChecklistItem]:
    """The stored TIG item(s) of the pair's leave-two-models-out context, materialised on first use."""
    key = tig_context_key(model_x_id, model_y_id, index.version)
    existing = list(ChecklistItem.objects.filter(task=task, dimension="N", context_key=key).order_by("slot", "-version"))
    if existing:
        return [row for row in existing if row.active]
    values = dict(zip(_CONTEXT_PER_ROW, _context_values(key, index, model_x_id, model_y_id), strict=True))
    row = ChecklistItem.objects.create(**_context_shared(task), **values)
    return [row] if row.active else []


def novelty_contexts_create(*, task: Task, pairs: list[tuple[int, int]], index) -> dict[tuple[int, int], list[ContextItem]]:
    """Materialise the contexts of pairs known to have none stored (see :func:`stored_novelty_contexts`),
    in one insert; pair -> its active items, as :func:`stored_novelty_contexts` reads them back.

    On PostgreSQL the insert is one statement, atomic on its own: no transaction around it (its BEGIN and
    COMMIT were two more round trips, six times a task in a judge run), and the rows go from plain tuples as
    one JSON document. Elsewhere ``bulk_create`` may send several statements, inside one transaction."""
    rows = {pair: _context_values(tig_context_key(*pair, index.version), index, *pair) for pair in dict.fromkeys(pairs)}
    if not rows:
        return {}
    shared = _context_shared(task)
    if connection.vendor == "postgresql":
        stored = _context_rows_insert(shared, list(rows.values()))
    else:
        with transaction.atomic():
            made = ChecklistItem.objects.bulk_create(
                [ChecklistItem(**shared, **dict(zip(_CONTEXT_PER_ROW, values, strict=True))) for values in rows.values()])
        stored = {row.context_key: (row.pk, row.created_at) for row in made}
    out = {}
    for pair, (key, text, active, provenance) in rows.items():
        pk, created_at = stored[key]
        item = ContextItem(pk, shared["task_id"], shared["dimension"], shared["slot"], key, text, shared["inspects"],
                           shared["source"], shared["version"], active, provenance, created_at)
        out[pair] = [item] if active else []
    return out


def _context_rows_insert(shared: dict, rows: list[tuple]) -> dict[str, tuple[int, datetime]]:
    """The context items of one task in one statement (PostgreSQL): thousands of them in a paper-scale
    run, where ``bulk_create`` quoted eleven parameters a row in Python. Returns each row's id and creation
    time by its context key (unique among the rows), as ``bulk_create`` gives them."""
    now = timezone.now()
    sql = recordset_insert_sql(ChecklistItem, shared=_CONTEXT_SHARED, per_row=_CONTEXT_PER_ROW,
                               returning=("id", "context_key"))
    document = recordset_json(_CONTEXT_PER_ROW, rows)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*(shared[name] for name in _CONTEXT_SHARED[:-1]), now, document])
        return {key: (pk, now) for pk, key in cursor.fetchall()}


@transaction.atomic
def tig_build_create(
    *, task_set: TaskSet, extractor: str = OFFLINE_EXTRACTOR, embedder: str = OFFLINE_EMBEDDER,
    canonicaliser: str = EMBEDDING_CANONICALISER, created_by=None,
) -> TIGBuild:
    """A planned build of the task set's TIG populations; nothing is extracted until it is executed."""
    from leaderboard.models import Benchmark
    from leaderboard.protocols import task_set_kind_check

    try:  # TIGs anchor Ekphrasis Novelty judgments: another protocol's task set has no responses to extract
        task_set_kind_check(task_set, kind=Benchmark.Kind.EKPHRASIS)
    except RunConfigurationError as exc:
        raise TIGConfigurationError(str(exc)) from exc
    components = tig_components_check(extractor=extractor, embedder=embedder, canonicaliser=canonicaliser)
    tasks = task_set.tasks.all()
    build = TIGBuild(
        task_set=task_set, extractor=components.extractor, embedder=components.embedder,
        canonicaliser=components.canonicaliser, created_by=created_by,
        tasks_total=tasks.count(),
        responses_total=Response.objects.filter(task__in=tasks, subject_model__role="subject").exclude(core_idea="").count(),
    )
    build.config = {**(build.config or {}), **run_prompt_versions(TIG_BUILD_JOB, build)}  # this code's versions
    build.save()
    return build


def tig_build_start(*, build: TIGBuild, background: bool = False) -> None:
    """Queue the build once the transaction that created it has committed (the lifecycle's start policy)."""
    run_start(build, background=background)


def tig_build_units(*, run_id: int) -> list[int]:
    """A build is one unit (itself): its work is stored per response and per atom, so it resumes inside."""
    return list(TIGBuild.objects.filter(pk=run_id).exclude(status=TIGBuild.Status.DONE).values_list("pk", flat=True))


def tig_build_unit_execute(*, run_id: int, unit_id: int) -> bool:
    tig_build_execute(build_id=unit_id)
    return False  # the build marks itself done: nothing is left to finalise


def tig_build_finalise(*, run_id: int) -> None:
    """A build left running with no unit (its worker died after the last write) is done."""
    build = TIGBuild.objects.get(pk=run_id)
    if build.status != TIGBuild.Status.DONE and build.tasks_done >= build.tasks_total:
        run_finish(build)


def tig_prompt_versions(components: TIGComponents) -> dict[str, str]:
    """The prompt versions TIG components send: the extraction prompt's for a provider extractor, and the
    grouping prompt's when that model groups synonyms too; none for the offline rules and embedding grouping,
    which read no prompt. What a TIG build and a judge run that builds Novelty contexts record and resume with."""
    from engine.tig.llm import CANONICALISATION_PROMPT_VERSION, EXTRACTION_PROMPT_VERSION

    if components.extractor == OFFLINE_EXTRACTOR:
        return {}
    versions = {"tig_extraction_prompt_version": EXTRACTION_PROMPT_VERSION}
    if components.canonicaliser == LLM_CANONICALISER:
        versions["tig_canonicalisation_prompt_version"] = CANONICALISATION_PROMPT_VERSION
    return versions


#: The names of :func:`tig_prompt_versions` and what a job made before jobs recorded them was sent: the fenced
#: prompts, tig-extract-v1 and tig-canonical-v1.
TIG_PROMPT_VERSIONS_BEFORE = (("tig_extraction_prompt_version", "tig-extract-v1"),
                              ("tig_canonicalisation_prompt_version", "tig-canonical-v1"))


def tig_build_prompt_versions(build: TIGBuild) -> dict[str, str]:
    """The prompt versions a build sends (:func:`tig_prompt_versions` of its components)."""
    return tig_prompt_versions(TIGComponents.of(build))


#: A build is its own one unit (leaderboard.runs.lifecycle). Its extractions are stored under
#: its extractor's name, which carries the extraction prompt's version (engine.tig.llm.LLMExtractor.name), so
#: a build never reads another prompt's extractions; the recorded versions keep one build from being finished
#: with another prompt than it was started with.
TIG_BUILD_JOB = JobKind(
    name="tig_build", model="leaderboard.TIGBuild", unit_name="build", display_name="TIG build",
    pending_units=f"{__name__}.tig_build_units", execute_unit=f"{__name__}.tig_build_unit_execute",
    finalise=f"{__name__}.tig_build_finalise", prompt_versions=f"{__name__}.tig_build_prompt_versions",
    prompt_versions_before=TIG_PROMPT_VERSIONS_BEFORE,
)


class _BuildProgress:
    """Writes a build's stage and counts as the engine reports them, at most every ``interval`` seconds
    (the page polls; a row update per atom would cost more than the work it reports)."""

    def __init__(self, build: TIGBuild, extracted_before: int, interval: float = 0.5) -> None:
        self.build = build
        self.extracted_before = extracted_before
        self.interval = interval
        self.last = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage == "extract":
            self.build.responses_extracted = min(self.extracted_before + done, self.build.responses_total)
        self.build.stage = stage
        if now - self.last >= self.interval or (stage == "extract" and done == total):
            self.last = now
            TIGBuild.objects.filter(pk=self.build.pk).update(
                stage=stage, responses_extracted=self.build.responses_extracted
            )


def tig_build_execute(*, build_id: int, progress: Callable[[int, int], None] | None = None) -> TIGBuild:
    """Extract and embed every response of the build's task set once (the expensive, reusable part).

    Idempotent and resumable: a finished build is returned as it is; an interrupted one starts over and
    finds every response already extracted (:class:`AtomExtraction`) and every atom already embedded
    (the embedding cache), so only the missing work is done. A build started with other extraction or
    canonicalisation prompts than this code sends fails for good before anything is sent (its finished
    tasks were extracted with the other prompt). ``progress(tasks_done, tasks_total)``.
    """
    build = TIGBuild.objects.select_related("task_set").get(pk=build_id)
    if build.status == TIGBuild.Status.DONE:
        return build
    try:  # before anything is sent: a build started with other prompts is not finished with these
        run_refuse_changed_prompts(build)
    except RunConfigurationError as exc:
        run_fail(TIGBuild, build.pk, str(exc), resumable=False)
        raise
    components = TIGComponents.of(build)
    tasks = list(build.task_set.tasks.order_by("position", "external_id"))
    build.status, build.error, build.stage = TIGBuild.Status.RUNNING, "", "starting"
    build.tasks_total, build.tasks_done, build.responses_extracted = len(tasks), 0, 0
    build.started_at = build.started_at or timezone.now()
    build.save(update_fields=["status", "error", "stage", "tasks_total", "tasks_done", "responses_extracted", "started_at"])
    try:
        for done, task in enumerate(tasks, start=1):
            report = _BuildProgress(build, build.responses_extracted)
            index = task_population_index(task, components=components, progress=report)
            build.responses_extracted = min(report.extracted_before + len(index.ideas), build.responses_total)
            build.tasks_done = done
            TIGBuild.objects.filter(pk=build.pk).update(
                tasks_done=done, responses_extracted=build.responses_extracted, stage="embed"
            )
            if progress:
                progress(done, len(tasks))
    except Exception as exc:
        run_fail(TIGBuild, build.pk, f"{type(exc).__name__}: {exc}", resumable=not isinstance(exc, RunConfigurationError))
        raise
    build.refresh_from_db()
    build.stage = ""
    run_finish(build, fields=("stage",))
    return build


def tig_items_export(*, task_set) -> str:
    """Materialised TIG items with cluster summaries as JSONL, for the TIG-audit campaign (App. G.7)."""
    import json

    rows = ChecklistItem.objects.filter(
        task__task_set=task_set, dimension="N", source=ChecklistItem.Source.TIG, active=True
    ).select_related("task").order_by("task__position", "context_key", "slot")
    lines = []
    for row in rows:
        p = row.provenance
        lines.append(json.dumps({
            "checklist_item_id": row.pk, "task_id": row.task.external_id, "version": row.version,
            "checklist_text": row.text, "cluster_id": p.get("cluster_id"), "cluster_summary": p.get("cluster_summary"),
            "cluster_type": p.get("cluster_type"), "score": p.get("score"), "n_models": p.get("n_models"),
            "n_samples": p.get("n_samples"), "population_models": p.get("population_models"),
            "population_samples": p.get("population_samples"), "population_version": p.get("population_version"),
        }, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


AUDIT_ACTIONS = ("accept", "revise", "exclude")


@transaction.atomic
def tig_audit_apply(*, item_id: int, action: str, revision: str = "", note: str = "") -> ChecklistItem | None:
    """An audit outcome flows back: exclude → later runs stop using the item; revise → new wording, versioned."""
    if action not in AUDIT_ACTIONS:
        raise ValueError(f"unknown audit action {action!r}; one of {', '.join(AUDIT_ACTIONS)}")
    # The slot first, then the item (checklist_slot_lock): two audits of different versions of one slot
    # each locking its own item first, then the slot's other versions, deadlocked on PostgreSQL.
    checklist_slot_lock(item_id=item_id)
    item = ChecklistItem.objects.select_for_update().get(pk=item_id)
    if action == "accept":
        item.provenance = {**item.provenance, "audit": "accepted"}
        item.save(update_fields=["provenance"])
        return item
    if action == "exclude":
        ChecklistItem.objects.filter(pk=item.pk).update(
            active=False, provenance={**item.provenance, "audit": "excluded", "audit_note": note}
        )
        return None
    if not revision.strip():
        raise ValueError("a 'revise' outcome needs the revised wording")
    return checklist_item_revise(item=item, text=revision, source=ChecklistItem.Source.TIG, note=f"audit: {note}")

"""Typed Idea Graphs for the site (Ekphrasis §4.2, App. G): per-task populations, leave-two-models-out
Novelty contexts materialised as stored checklist items, build jobs and audit outcomes.

Models enter the engine by primary key, never by name, so that a context key (``"12|15"``) or an item
never carries a model identity. Each response is extracted once (:class:`StoredExtractions`, in the
database) and each distinct atom embedded once (the engine's persistent embedding cache under
``ATELIER_EMBED_CACHE_DIR``); contexts are built lazily for the pairs a run judges on Novelty and stored
as checklist items keyed by (task, pair, population version).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping

from django.conf import settings
from django.db import transaction

from leaderboard.models import AtomExtraction, ChecklistItem, Response, Task
from leaderboard.services.checklists import checklist_item_revise

TIG_SLOT = 1  # the cliché-distance slot that a population-cliché item replaces (App. E.3)


class StoredExtractions(MutableMapping):
    """The engine's per-response extraction store, kept in the database."""

    def __init__(self, task: Task):
        from engine.tig.atoms import ResponseAtoms

        self._from_dict = ResponseAtoms.from_dict
        self._memo = {
            e.key: e.payload for e in AtomExtraction.objects.filter(response__task=task).only("key", "payload")
        }

    def __getitem__(self, key: str):
        return self._from_dict(self._memo[key])

    def get(self, key, default=None):
        return self[key] if key in self._memo else default

    def __setitem__(self, key: str, value) -> None:
        payload = value.to_dict()
        response_id = int(value.response_id) if str(value.response_id).isdigit() else None
        AtomExtraction.objects.update_or_create(
            key=key, defaults={"payload": payload, "extractor": value.extractor, "response_id": response_id}
        )
        self._memo[key] = payload

    def __delitem__(self, key: str) -> None:
        AtomExtraction.objects.filter(key=key).delete()
        del self._memo[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._memo)

    def __len__(self) -> int:
        return len(self._memo)


def task_ideas(task: Task) -> list[dict]:
    """Every sample of every subject model on the task (the TIG pool, App. D Table 8)."""
    rows = (
        Response.objects.filter(task=task, subject_model__role="subject")
        .exclude(core_idea="")
        .values("pk", "subject_model_id", "sample", "core_idea")
        .order_by("subject_model_id", "sample")
    )
    return [
        {"model": str(r["subject_model_id"]), "sample": r["sample"], "core_idea": r["core_idea"],
         "response_id": str(r["pk"]), "task": task.external_id}
        for r in rows
    ]


def task_population_index(task: Task, *, progress: Callable[[str, int, int], None] | None = None):
    """The task's population, extracted and embedded once (offline extractor and MiniLM embedder)."""
    from engine.embed import text_embedder
    from engine.tig import PopulationIndex

    embedder = text_embedder("minilm", cache_dir=settings.ATELIER_EMBED_CACHE_DIR)
    return PopulationIndex(
        task_ideas(task), task=task.external_id, brief=task.brief, embedder=embedder,
        extractions=StoredExtractions(task), progress=progress,
    )


def tig_context_key(model_x_id: int, model_y_id: int, version: str) -> str:
    from engine.tig import pair_context_key

    return f"tig:{pair_context_key((str(model_x_id), str(model_y_id)))}@{version}"


@transaction.atomic
def novelty_context_items(*, task: Task, model_x_id: int, model_y_id: int, index) -> list[ChecklistItem]:
    """The stored TIG item(s) of the pair's leave-two-models-out context, materialised on first use."""
    key = tig_context_key(model_x_id, model_y_id, index.version)
    existing = list(ChecklistItem.objects.filter(task=task, dimension="N", context_key=key).order_by("slot", "-version"))
    if existing:
        return [row for row in existing if row.active]
    context = index.context((str(model_x_id), str(model_y_id)))
    anchor = context.anchor
    if anchor is None:
        # No population cliché qualified: remember that, so the context is not rebuilt.
        ChecklistItem.objects.create(
            task=task, dimension="N", slot=TIG_SLOT, context_key=key, text="(no population cliché)",
            inspects="core_idea", source=ChecklistItem.Source.TIG, active=False,
            provenance={"population_version": index.version, "empty": True,
                        "n_reference_ideas": context.n_reference_ideas},
        )
        return []
    row = ChecklistItem.objects.create(
        task=task, dimension="N", slot=TIG_SLOT, context_key=key, text=anchor.text, inspects="core_idea",
        source=ChecklistItem.Source.TIG, provenance={**anchor.provenance, "engine_item_id": anchor.item_id,
                                                     "n_reference_ideas": context.n_reference_ideas},
    )
    return [row]


def tig_build(*, task_set, progress: Callable[[int, int], None] | None = None) -> int:
    """Extract and embed every response of the task set once (the expensive, reusable part)."""
    tasks = list(task_set.tasks.order_by("position", "external_id"))
    for done, task in enumerate(tasks, start=1):
        task_population_index(task)
        if progress:
            progress(done, len(tasks))
    return len(tasks)


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

"""Novelty checklist items from ranked clusters (Ekphrasis App. G.6, App. E.3) and their JSONL export.

App. E.3: the Novelty checklist has three fixed slots -- cliché distance, source-domain shift, perspective or
relation shift -- and "the first checklist item is replaced by a task-specific item materialized from the
Typed Idea Graph profile". :func:`materialise_items` turns the top clusters into items worded as App. G.6:

    Which response avoids relying on common <pattern> imagery unless it transforms that motif into a more
    specific visual mechanism?

Each item keeps its cluster id, cluster summary, score and provenance counts (how many reference models and
ideas share the pattern -- never which) for the TIG-audit campaign (App. G.7). Rank 1 is the slot-1 anchor
for the judge; lower ranks are kept as alternates for the audit. :func:`generic_novelty_items` is the
ablation's generic-anchor mode: the same three slots with generic wording and no TIG.

The JSONL export uses the App. G.7 audit-record field names (``task_id``, ``comparison_key``,
``checklist_item_id``, ``checklist_text``, ``cluster_id``, ``cluster_summary``) plus score and counts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from engine.tig.score import Cluster

__all__ = [
    "GENERIC_NOVELTY_ITEMS",
    "ITEM_TEMPLATE",
    "MATERIALISED_TYPES",
    "MIN_MODELS",
    "ChecklistItem",
    "generic_novelty_items",
    "items_from_jsonl",
    "items_to_jsonl",
    "materialise_items",
]

# App. G.6 wording
ITEM_TEMPLATE = (
    "Which response avoids relying on common {pattern} imagery unless it transforms that motif into a more "
    "specific visual mechanism?"
)
# Visual patterns only: purpose and audience clusters are not imagery (App. G.7 "visual specificity")
MATERIALISED_TYPES: tuple[str, ...] = ("motif", "concept", "mechanism")
# App. G.7 "cluster validity": a pattern that recurs across multiple models, not one model's phrasing
MIN_MODELS = 2
# App. E.3: three fixed Novelty slots; the generic-anchor ablation keeps the same slots
GENERIC_NOVELTY_ITEMS: tuple[str, ...] = (
    (
        "Which response avoids the obvious, stock visual ideas that most people would reach for first on "
        "this brief, or transforms them into something more specific?"
    ),
    (
        "Which response draws its imagery from a less expected source domain instead of the brief's most "
        "familiar associations?"
    ),
    (
        "Which response takes a less expected perspective or relation between its elements instead of the "
        "default framing of the subject?"
    ),
)
_INSPECTS = "core_idea"
# ChecklistItem fields the Django row keeps in columns of its own, not in its provenance JSON
_NOT_PROVENANCE = frozenset({"text", "slot", "source", "inspects", "task", "context_key"})


@dataclass
class ChecklistItem:
    """One Novelty checklist item; ``source`` is ``"tig"`` (materialised) or ``"generic"`` (ablation)."""

    item_id: str
    text: str
    slot: int
    rank: int
    source: str
    task: str
    context_key: str
    population_version: str
    inspects: str = _INSPECTS
    cluster_id: str | None = None
    cluster_type: str | None = None
    cluster_label: str | None = None
    cluster_summary: str | None = None
    score: float | None = None
    n_models: int | None = None
    n_samples: int | None = None
    population_models: int | None = None
    population_samples: int | None = None
    aliases: list[str] = field(default_factory=list)

    @property
    def provenance(self) -> dict[str, Any]:
        """What the Django ``ChecklistItem.provenance`` JSON keeps: cluster and counts, no identities."""
        # what asdict gives less those keys, in field order; built directly (asdict's recursive deep
        # copy cost more than the rest of storing a context's item)
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NOT_PROVENANCE}
        data["aliases"] = list(self.aliases)
        return data

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def audit_record(self) -> dict[str, Any]:
        """The App. G.7 fields an audit campaign imports, plus score and provenance counts."""
        return {
            "task_id": self.task,
            "comparison_key": self.context_key,
            "checklist_item_id": self.item_id,
            "checklist_text": self.text,
            "cluster_id": self.cluster_id,
            "cluster_summary": self.cluster_summary,
            "cluster_type": self.cluster_type,
            "score": self.score,
            "n_models": self.n_models,
            "n_samples": self.n_samples,
            "population_models": self.population_models,
            "population_samples": self.population_samples,
            "population_version": self.population_version,
            "source": self.source,
            "slot": self.slot,
            "rank": self.rank,
        }


def _item_id(*parts: Any) -> str:
    return "ni-" + hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:16]


def materialise_items(
    clusters: Iterable[Cluster],
    *,
    task: str = "",
    context_key: str = "",
    population_version: str = "",
    top_k: int = 3,
    types: Sequence[str] = MATERIALISED_TYPES,
    min_models: int = MIN_MODELS,
    slot: int = 1,
) -> list[ChecklistItem]:
    """Items for the ``top_k`` highest-scoring clusters of the given ``types`` shared by at least
    ``min_models`` reference models (App. G.6 wording; clusters must come sorted by score, and are read
    only as far as needed). A pattern label already used by a higher-ranked item is skipped."""
    items: list[ChecklistItem] = []
    used: set[str] = set()
    for c in clusters if top_k > 0 else ():
        if c.type not in types or c.n_models < min_models or c.label in used:
            continue
        used.add(c.label)
        text = ITEM_TEMPLATE.format(pattern=c.label)
        items.append(
            ChecklistItem(
                item_id=_item_id(task, context_key, population_version, c.id, text),
                text=text,
                slot=slot,
                rank=len(items) + 1,
                source="tig",
                task=task,
                context_key=context_key,
                population_version=population_version,
                cluster_id=c.id,
                cluster_type=c.type,
                cluster_label=c.label,
                cluster_summary=c.summary,
                score=round(c.score, 6),
                n_models=c.n_models,
                n_samples=c.n_samples,
                population_models=c.population_models,
                population_samples=c.population_samples,
                aliases=list(c.aliases),
            )
        )
        if len(items) >= top_k:  # before the next cluster is asked for: iter_ranked builds each on demand
            break
    return items


def generic_novelty_items(
    *, task: str = "", context_key: str = "", population_version: str = "generic"
) -> list[ChecklistItem]:
    """The generic-anchor ablation: App. E.3's three Novelty slots with generic wording and no TIG."""
    return [
        ChecklistItem(
            item_id=_item_id("generic", task, context_key, slot, text),
            text=text,
            slot=slot,
            rank=1,
            source="generic",
            task=task,
            context_key=context_key,
            population_version=population_version,
        )
        for slot, text in enumerate(GENERIC_NOVELTY_ITEMS, start=1)
    ]


def items_to_jsonl(items: Iterable[ChecklistItem]) -> str:
    """One App. G.7 audit record per line (UTF-8 text, trailing newline)."""
    return "".join(json.dumps(i.audit_record(), ensure_ascii=False, sort_keys=True) + "\n" for i in items)


def items_from_jsonl(text: str) -> list[dict[str, Any]]:
    """Parse audit records written by :func:`items_to_jsonl` (blank lines skipped)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]

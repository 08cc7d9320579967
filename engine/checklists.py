"""Dimension checklists for pairwise judging (Ekphrasis App. E, App. C.3, §4.1–4.2).

Each task has, per dimension, three fixed slots:

* Usefulness — brief fit, operation completion, constraint–context fit;
* Expressiveness — visual grounding, spatial organisation, appearance
  specificity, each aimed at the family's focus: the concrete carrier
  (Abstraction), the fused entity (Combination), the transformed object
  (Transformation), the whole deliverable (Adaptation);
* Novelty — cliché distance, source-domain shift, perspective/relation shift;
  the first item is replaced by a population-cliché item materialised from the
  Typed Idea Graph when one exists for the pair (:func:`with_population_cliche`).

Every item records the field it inspects — the normalisation invariant of
App. C.3: Usefulness and Novelty inspect the Core Idea, Expressiveness the
Visual Description.

Two generators:

* :func:`template_checklist` — offline, fixed per-slot templates filled with
  task context, labelled ``source="template"``;
* :func:`generate_checklists` — the judge model writes the items, one prompt per
  dimension (:func:`checklist_messages`), strict JSON, one repair call; an
  answer that still fails comes back as a :class:`ChecklistFailure` (the caller
  may fall back to the template). Items are labelled ``source="judge_model"``.

Checklists are plain data (``to_dict``/``from_dict``) for the site to store,
version and let admins edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from engine.generation import Family, TaskBrief
from engine.providers.client import ChatRequest, OpenAICompatibleClient, ProviderError
from engine.providers.json_reply import MalformedReply, parse_json_object, repair_turn

__all__ = [
    "DIMENSION_FIELD",
    "FAMILY_FOCUS",
    "SLOTS",
    "TEMPLATE_VERSION",
    "Checklist",
    "ChecklistFailure",
    "ChecklistItem",
    "Dimension",
    "InspectedField",
    "checklist_messages",
    "generate_checklists",
    "template_checklist",
    "validate_checklist_reply",
    "with_population_cliche",
]

TEMPLATE_VERSION = "ekphrasis-app-e-v1"
MAX_ITEM_CHARS = 400


class Dimension(StrEnum):
    """The three VCI dimensions of Definition 3; values are the judge schema's."""

    USEFULNESS = "usefulness"
    EXPRESSIVENESS = "expressiveness"
    NOVELTY = "novelty"


class InspectedField(StrEnum):
    """Which half of a normalised response an item looks at (App. C.3)."""

    CORE_IDEA = "core_idea"
    VISUAL_DESCRIPTION = "visual_description"

    @property
    def label(self) -> str:
        return "Core Idea" if self is InspectedField.CORE_IDEA else "Visual Description"


DIMENSION_FIELD = {
    Dimension.USEFULNESS: InspectedField.CORE_IDEA,
    Dimension.EXPRESSIVENESS: InspectedField.VISUAL_DESCRIPTION,
    Dimension.NOVELTY: InspectedField.CORE_IDEA,
}

SLOTS: dict[Dimension, tuple[str, str, str]] = {
    Dimension.USEFULNESS: ("brief_fit", "operation_completion", "constraint_context_fit"),
    Dimension.EXPRESSIVENESS: ("visual_grounding", "spatial_organisation", "appearance_specificity"),
    Dimension.NOVELTY: ("cliche_distance", "source_domain_shift", "perspective_relation_shift"),
}

SLOT_PURPOSE = {
    "brief_fit": "does the idea map specifically to the required brief rather than to a generic visual theme",
    "operation_completion": "does the idea actually perform the family's creative operation",
    "constraint_context_fit": "does the idea respect the stated constraints and the intended context",
    "visual_grounding": "does the description show the actual scene instead of explaining what it means",
    "spatial_organisation": "is the layout of the single frame clear: positions, scale, foreground and background",
    "appearance_specificity": "are colour, material, texture and light bound to named elements",
    "cliche_distance": "does the idea avoid or transform the obvious, stock visual carriers for this brief",
    "source_domain_shift": "does the idea draw its carrier from a less expected source domain while staying meaningful",
    "perspective_relation_shift": "does the idea change viewpoint, scale or relation between elements, not by randomness",
}

# App. E.2: the family context the Expressiveness items point at.
FAMILY_FOCUS = {
    Family.ABSTRACTION: "the concrete carrier of the abstract concept",
    Family.COMBINATION: "the fused entity",
    Family.TRANSFORMATION: "the transformed object",
    Family.ADAPTATION: "the whole intended deliverable",
}

OPERATION_ITEM = {
    Family.ABSTRACTION: (
        "Which Core Idea turns the abstract target into a concrete visible carrier — an object, scene, relation, "
        "or action — that needs no explanatory text in the image?"
    ),
    Family.COMBINATION: (
        "Which Core Idea fuses both source concepts into one integrated entity in which both shape its structure, "
        "function, or form, rather than placing them side by side?"
    ),
    Family.TRANSFORMATION: (
        "Which Core Idea lets the transformation condition reshape the object itself — its form, material "
        "behaviour, or mode of existence — rather than decorating it or supplying a background?"
    ),
    Family.ADAPTATION: (
        "Which Core Idea chooses a viable design strategy for the applied situation, rather than a generic "
        "symbolic image that only names it?"
    ),
}


@dataclass(frozen=True)
class ChecklistItem:
    """One checklist item; ``index`` is 1-based, ``source`` is template / judge_model / tig / admin."""

    index: int
    slot: str
    text: str
    inspects: InspectedField
    source: str

    def prompt_line(self) -> str:
        """The line shown to the judge, e.g. ``1. [Inspects: Core Idea] Which ...?``."""
        return f"{self.index}. [Inspects: {self.inspects.label}] {self.text}"


@dataclass(frozen=True)
class Checklist:
    """The three items of one task and dimension."""

    task_id: str
    dimension: Dimension
    items: tuple[ChecklistItem, ...]
    source: str
    model: str | None = None
    version: str = TEMPLATE_VERSION
    repaired: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "dimension": self.dimension.value,
            "source": self.source,
            "model": self.model,
            "version": self.version,
            "repaired": self.repaired,
            "items": [
                {
                    "index": item.index,
                    "slot": item.slot,
                    "text": item.text,
                    "inspects": item.inspects.value,
                    "source": item.source,
                }
                for item in self.items
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Checklist:
        items = tuple(
            ChecklistItem(
                index=int(item["index"]),
                slot=str(item["slot"]),
                text=str(item["text"]),
                inspects=InspectedField(item["inspects"]),
                source=str(item["source"]),
            )
            for item in data["items"]
        )
        return cls(
            task_id=str(data["task_id"]),
            dimension=Dimension(data["dimension"]),
            items=items,
            source=str(data["source"]),
            model=data.get("model"),
            version=str(data.get("version", TEMPLATE_VERSION)),
            repaired=bool(data.get("repaired", False)),
        )


@dataclass(frozen=True)
class ChecklistFailure:
    """A checklist the judge model could not produce in valid form, even after one repair."""

    task_id: str
    dimension: Dimension
    error: str
    raw_output: str | None = None
    repair_output: str | None = None


def _short_brief(task: TaskBrief, limit: int = 160) -> str:
    brief = " ".join(task.brief.split())
    return brief if len(brief) <= limit else brief[: limit - 1].rstrip() + "…"


def _template_texts(task: TaskBrief, dimension: Dimension) -> tuple[str, str, str]:
    if dimension is Dimension.USEFULNESS:
        constraints = task.constraint_lines()
        named = f" ({'; '.join(constraints)})" if constraints else ""
        return (
            (
                f"Which Core Idea maps more specifically to the required brief — “{_short_brief(task)}” — rather than "
                "offering a generic visual theme?"
            ),
            OPERATION_ITEM[task.family],
            (
                f"Which Core Idea better respects the stated constraints{named} and fits the intended audience, "
                "medium, and context of use?"
            ),
        )
    if dimension is Dimension.EXPRESSIVENESS:
        focus = FAMILY_FOCUS[task.family]
        return (
            (
                f"Which description shows more of the actual scene — {focus} as it would literally appear — instead "
                "of explaining what it means?"
            ),
            (
                f"Which description makes the layout of the single static frame clearer: where {focus} sits, its scale, "
                "and what lies in front of, behind, and around it?"
            ),
            (
                f"Which description binds more specific colour, material, texture, and light to named parts of {focus}, "
                "so that two readers would imagine nearly the same image?"
            ),
        )
    return (
        (
            "Which Core Idea avoids the most obvious, stock visual carriers for this brief, or transforms them into a "
            "more specific visual mechanism instead of merely repeating them?"
        ),
        (
            "Which Core Idea draws its visual carrier from a less expected source domain while still remaining "
            "meaningful for the brief?"
        ),
        (
            "Which Core Idea changes the viewpoint, scale, or relation between elements in a way that makes the idea "
            "less predictable, without relying on randomness, obscurity, or off-brief weirdness?"
        ),
    )


def template_checklist(task: TaskBrief, dimension: Dimension | str) -> Checklist:
    """The offline checklist: the fixed per-slot templates of App. E filled with task context."""
    dimension = Dimension(dimension)
    inspects = DIMENSION_FIELD[dimension]
    items = tuple(
        ChecklistItem(index=i, slot=slot, text=text, inspects=inspects, source="template")
        for i, (slot, text) in enumerate(zip(SLOTS[dimension], _template_texts(task, dimension)), start=1)
    )
    return Checklist(task_id=task.task_id, dimension=dimension, items=items, source="template")


def with_population_cliche(checklist: Checklist, item_text: str) -> Checklist:
    """Replace the first Novelty item (cliché distance) by a TIG population-cliché item (App. E.3, G.6)."""
    if checklist.dimension is not Dimension.NOVELTY:
        raise ValueError("only Novelty checklists carry a population-cliché item")
    if not item_text.strip():
        raise ValueError("the population-cliché item is empty")
    first = replace(checklist.items[0], text=item_text.strip(), source="tig")
    return replace(checklist, items=(first, *checklist.items[1:]))


# -- judge-model generation ------------------------------------------------------

DIMENSION_BRIEFING = {
    Dimension.USEFULNESS: (
        "Usefulness measures whether the Core Idea maps specifically to the task brief: its requested concept, "
        "sources, operation, audience, medium, and constraints. Items must not reward novelty or visual density."
    ),
    Dimension.EXPRESSIVENESS: (
        "Expressiveness measures whether the Visual Description gives enough specific visual information that two "
        "readers would imagine nearly the same image. It is not a task-fit score and does not reward novelty, "
        "length, or atmospheric language by itself."
    ),
    Dimension.NOVELTY: (
        "Novelty measures whether the Core Idea avoids obvious, stock, or population-common visual ideas for this "
        "brief while remaining meaningful for it. Use the brief only as context for what would be obvious. Items "
        "must not reward randomness, obscurity, or off-brief weirdness."
    ),
}


def checklist_messages(task: TaskBrief, dimension: Dimension | str) -> list[dict[str, str]]:
    """The per-dimension checklist-generation prompt of App. E (strict JSON answer)."""
    dimension = Dimension(dimension)
    inspects = DIMENSION_FIELD[dimension]
    slots = SLOTS[dimension]
    lines = [
        f"Write the {dimension.value} checklist for pairwise comparison of two anonymous answers to this task.",
        "",
        DIMENSION_BRIEFING[dimension],
        "",
        f"Task family: {task.family.value}",
        f"Brief: {task.brief.strip()}",
    ]
    constraints = task.constraint_lines()
    if constraints:
        lines.append("Constraints: " + "; ".join(constraints))
    if dimension is Dimension.EXPRESSIVENESS:
        lines.append(f"Focus of the image for this family: {FAMILY_FOCUS[task.family]}.")
    lines += [
        "",
        f"Every item inspects only the {inspects.label} of each answer.",
        "Write exactly three items, one per slot, in this order:",
    ]
    lines += [f"{n}. {slot}: {SLOT_PURPOSE[slot]}" for n, slot in enumerate(slots, start=1)]
    lines += [
        "",
        (
            "Each item is one comparative question beginning with “Which”, specific to this task, answerable from "
            f"the {inspects.label} alone, and under 60 words. Do not mention any particular answer."
        ),
        "Return only this JSON object:",
        '{"dimension": "'
        + dimension.value
        + '", "items": ['
        + ", ".join('{"slot": "' + slot + '", "item": "Which ...?"}' for slot in slots)
        + "]}",
    ]
    return [{"role": "user", "content": "\n".join(lines)}]


def validate_checklist_reply(text: str | None, dimension: Dimension) -> list[str]:
    """The item texts of a valid reply, in slot order; raises MalformedReply listing every problem."""
    payload = parse_json_object(text)
    problems = []
    if str(payload.get("dimension", "")).strip().lower() != dimension.value:
        problems.append(f"dimension must be {dimension.value!r}")
    items = payload.get("items")
    slots = SLOTS[dimension]
    if not isinstance(items, list) or len(items) != len(slots):
        problems.append(f"items must be a list of exactly {len(slots)} objects")
        raise MalformedReply("; ".join(problems))
    texts = []
    for position, (item, slot) in enumerate(zip(items, slots), start=1):
        if not isinstance(item, dict):
            problems.append(f"item {position} is not an object")
            continue
        if item.get("slot") != slot:
            problems.append(f"item {position} must have slot {slot!r}")
        text_value = item.get("item")
        if not isinstance(text_value, str) or not text_value.strip():
            problems.append(f"item {position} needs a non-empty 'item' string")
        elif len(text_value) > MAX_ITEM_CHARS:
            problems.append(f"item {position} is longer than {MAX_ITEM_CHARS} characters")
        else:
            texts.append(" ".join(text_value.split()))
    if problems:
        raise MalformedReply("; ".join(problems))
    return texts


CHECKLIST_REPAIR = "Return only the corrected JSON object, nothing else."


def generate_checklists(
    client: OpenAICompatibleClient,
    wanted: Sequence[tuple[TaskBrief, Dimension | str]],
) -> list[Checklist | ChecklistFailure]:
    """Checklists written by the client's model for each (task, dimension), concurrently, in input order."""
    pairs = [(task, Dimension(dimension)) for task, dimension in wanted]
    prompts = [checklist_messages(task, dimension) for task, dimension in pairs]
    first = client.chat_many([ChatRequest(messages=messages) for messages in prompts])

    outcomes: list[Checklist | ChecklistFailure | None] = [None] * len(pairs)
    to_repair: list[tuple[int, str, str]] = []
    for index, ((task, dimension), answer) in enumerate(zip(pairs, first)):
        if isinstance(answer, ProviderError):
            outcomes[index] = ChecklistFailure(task.task_id, dimension, f"provider: {answer.message}")
            continue
        try:
            texts = validate_checklist_reply(answer.text, dimension)
        except MalformedReply as problem:
            to_repair.append((index, answer.text, str(problem)))
            continue
        outcomes[index] = _model_checklist(task, dimension, texts, client.config.model)

    if to_repair:
        repairs = client.chat_many(
            [
                ChatRequest(messages=repair_turn(prompts[i], raw, problem, CHECKLIST_REPAIR))
                for i, raw, problem in to_repair
            ]
        )
        for (index, raw, problem), answer in zip(to_repair, repairs):
            task, dimension = pairs[index]
            if isinstance(answer, ProviderError):
                outcomes[index] = ChecklistFailure(
                    task.task_id, dimension, f"repair provider: {answer.message}", raw
                )
                continue
            try:
                texts = validate_checklist_reply(answer.text, dimension)
            except MalformedReply as still:
                outcomes[index] = ChecklistFailure(task.task_id, dimension, str(still), raw, answer.text)
                continue
            outcomes[index] = _model_checklist(task, dimension, texts, client.config.model, repaired=True)
    assert all(outcome is not None for outcome in outcomes)
    return outcomes  # type: ignore[return-value]


def _model_checklist(
    task: TaskBrief, dimension: Dimension, texts: list[str], model: str, *, repaired: bool = False
) -> Checklist:
    inspects = DIMENSION_FIELD[dimension]
    items = tuple(
        ChecklistItem(index=i, slot=slot, text=text, inspects=inspects, source="judge_model")
        for i, (slot, text) in enumerate(zip(SLOTS[dimension], texts), start=1)
    )
    return Checklist(
        task_id=task.task_id,
        dimension=dimension,
        items=items,
        source="judge_model",
        model=model,
        repaired=repaired,
    )

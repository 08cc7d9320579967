"""The contract every campaign kind follows (one base, five modules of the same shape).

A kind says, for its items:

* ``check_item`` — what an item must reference (responses, renders, payload) to be valid;
* ``shown_content`` — exactly what the annotator will see, canonical order, with the SHA-256 of
  every image's bytes; its digest is the content hash labels are pinned to;
* ``present`` — the *blinded* JSON the labelling page receives for one assignment (shown order,
  media as opaque per-assignment URLs, no ids, names or scores);
* ``validate`` — turn a submitted answer into label field values, or raise :class:`LabelInvalid`
  with a message per field;
* ``answer_shown`` — the inverse: a stored label as the answer the page sent (shown order), so that
  the page can show an annotator their previous label to change (``validate`` of it gives the
  label's fields back);
* ``category`` / ``parse_answer`` — the nominal outcome used for consensus,
  Fleiss κ (Ekphrasis Table 17), gold accuracy and adjudication.

Two-sided A/B/tie kinds subclass :class:`PairwiseKind`, which holds their shared label model,
keys, answer validation and "same task, different models" check.

To add a kind: copy an existing module, register it in ``annotation.kinds.KINDS``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from annotation.choices import FlagReason, PairChoice
from annotation.errors import LabelInvalid
from annotation.label_models import Label, PairwiseLabel
from annotation.models import Assignment, Item

#: Longest flag note accepted (App. H.3: notes identify the issue concisely).
FLAG_NOTE_MAX = 500
#: Longest time on item accepted, in milliseconds (a day; longer means a clock problem).
TIME_ON_ITEM_MAX_MS = 24 * 3600 * 1000
#: Characters of a refused gold answer or outcome repeated in its error. The value comes from an import
#: file or an API body, unbounded: repeated whole, a 5 MB value filled the message and every page and
#: log that shows it.
REFUSED_SHOWN = 80


def refused_excerpt(value: Any) -> str:
    """``repr(value)``, cut to :data:`REFUSED_SHOWN` characters with its whole length said."""
    text = repr(value)
    return text if len(text) <= REFUSED_SHOWN else f"{text[:REFUSED_SHOWN]}… ({len(text):,} characters)"


@dataclass(frozen=True)
class ShownContent:
    """What an item shows, in canonical order. ``media`` maps the canonical image slot ('a', 'b') to
    the SHA-256 of the image bytes."""

    content: dict[str, Any]
    media: dict[str, str] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        canonical = json.dumps({"content": self.content, "media": self.media}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def file_sha256(render) -> str:
    """SHA-256 of a render's stored image bytes (read now, not trusted from the row)."""
    digest = hashlib.sha256()
    with render.image.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


def shown_pair(assignment: Assignment, a: Any, b: Any) -> tuple[Any, Any]:
    """The (shown A, shown B) of a canonical (a, b) under the assignment's orientation."""
    return (b, a) if assignment.swapped else (a, b)


class Kind:
    """Base of the campaign kinds. Subclasses set the class attributes and implement the
    abstract methods; the shared flag/time validation lives here."""

    code: str = ""
    title: str = ""
    paper_section: str = ""
    label_model: type[Label]
    #: The item's relations its shown content reads (``select_related`` with the item in one query).
    content_relations: tuple[str, ...] = ("task",)
    #: Columns of those relations the kind neither shows nor checks (``defer()`` names), left unread by the
    #: labelling path's item reads (issue 30: each column is carried through every join of the read and sent);
    #: read on first use should other code ask for one.
    content_unread: tuple[str, ...] = ()
    #: Nominal outcome categories for the consensus table (Table 17 "majority outcome" columns).
    categories: tuple[str, ...] = ()
    #: Whether items have two sides shown in a counterbalanced order.
    two_sided: bool = False
    #: Whether items show images.
    uses_images: bool = False
    #: Whether those images are the task set's renders (Ekphrasis, App. I.1), which researchers browse on the
    #: task set's renders page; EASEL canvases and C² task images are not (their kinds override media_source).
    shows_renders: bool = False
    #: Whether a complete item without a majority goes to adjudication. Ratings and free-text readings
    #: have no nominal outcome to adjudicate: their disagreement is the statistic the dashboard shows.
    adjudicated: bool = True
    #: Keys of the labelling page, for the help overlay: (key, what it does).
    keys: tuple[tuple[str, str], ...] = ()

    # -- items --------------------------------------------------------------------------------

    def check_item(self, item: Item) -> list[tuple[str, str]]:
        """Problems with an item about to be created, as (field, message); empty when valid."""
        raise NotImplementedError

    def shown_content(self, item: Item) -> ShownContent:
        raise NotImplementedError

    def present(self, item: Item, assignment: Assignment, *, media_url: Callable[[str], str]) -> dict[str, Any]:
        raise NotImplementedError

    def media_source(self, item: Item, assignment: Assignment, shown_slot: str) -> tuple[bytes, str]:
        """(stored image bytes, SHA-256 pinned when the item was handed out) behind a shown image slot
        ('A'/'B'); KeyError for a slot the item does not show. Kinds whose images are not renders
        (EASEL canvases, C² task images) override this."""
        if shown_slot not in ("A", "B"):
            raise KeyError(shown_slot)
        canonical = dict(zip(("A", "B"), shown_pair(assignment, "a", "b")))[shown_slot]
        render = item.render_a if canonical == "a" else item.render_b
        if render is None or canonical not in assignment.media_sha256:
            raise KeyError(shown_slot)
        with render.image.open("rb") as handle:
            return handle.read(), assignment.media_sha256[canonical]

    # -- labels -------------------------------------------------------------------------------

    def validate_answer(self, data: Mapping[str, Any], *, item: Item, assignment: Assignment) -> tuple[dict[str, Any], dict[str, str]]:
        """Kind-specific fields of the label, and errors (field -> message)."""
        raise NotImplementedError

    def validate(self, data: Any, *, item: Item, assignment: Assignment) -> dict[str, Any]:
        """Label field values for ``data`` (the submitted JSON answer), or :class:`LabelInvalid`."""
        if not isinstance(data, Mapping):
            raise LabelInvalid({"answer": "must be a JSON object"})
        values, errors = self.validate_answer(data, item=item, assignment=assignment)
        flag_values, flag_errors = validate_flag(data.get("flag"))
        errors.update(flag_errors)
        if errors:
            raise LabelInvalid(errors)
        return {**values, **flag_values}

    def answer_shown(self, label: Label) -> dict[str, Any]:
        """The kind-specific part of the answer the page sent for ``label``, in the order the
        annotator saw (the inverse of :meth:`validate_answer`)."""
        raise NotImplementedError

    def answer_for_page(self, label: Label) -> dict[str, Any]:
        """The whole answer of ``label`` as the page sends it, flag included: ``validate`` of it
        returns the label's field values."""
        answer = self.answer_shown(label)
        if label.flag_reason:
            answer["flag"] = {"reason": label.flag_reason, "note": label.flag_note}
        return answer

    def category(self, label: Label) -> str:
        raise NotImplementedError

    def parse_answer(self, answer: Any) -> Any:
        """A gold answer or adjudication outcome in canonical form, or ValueError."""
        if answer not in self.categories:
            raise ValueError(f"expected one of {', '.join(self.categories)}, got {refused_excerpt(answer)}")
        return answer

    def summary(self, label: Label) -> dict[str, Any]:
        """The label's answer as plain data (exports, researcher pages)."""
        raise NotImplementedError


def pair_choice_to_canonical(shown: str, swapped: bool) -> str:
    """Map the key pressed (in shown order) to the item's canonical order."""
    if not swapped or shown == PairChoice.TIE:
        return shown
    return PairChoice.B if shown == PairChoice.A else PairChoice.A


#: ``PairChoice.values``, which the enum builds as a new list at each read (issue 30: once a label); a tuple,
#: so membership is the list's (equality, an unhashable answer simply absent).
PAIR_CHOICE_VALUES = tuple(PairChoice.values)


def validate_pair_choice(data: Mapping[str, Any], assignment: Assignment) -> tuple[dict[str, Any], dict[str, str]]:
    shown = data.get("choice")
    if shown not in PAIR_CHOICE_VALUES:
        return {}, {"choice": "choose A, B or tie"}
    return {
        "shown_choice": shown,
        "choice": pair_choice_to_canonical(shown, assignment.swapped),
        "swapped": assignment.swapped,
    }, {}


class PairwiseKind(Kind):
    """Two sides of one task from two different models, shown in a counterbalanced order; the
    label is A, B or tie (text pairwise, image preference)."""

    label_model = PairwiseLabel
    categories = ("A", "B", "tie")
    two_sided = True
    keys = (("A", "prefer A"), ("B", "prefer B"), ("T", "tie"), ("F", "flag with a note"),
            ("Enter", "submit"), ("S", "skip"), ("I", "instructions"), ("C", "calibration examples"), ("?", "help"))

    @staticmethod
    def pair_problems(
        item: Item, sides: tuple[tuple[str, Any], tuple[str, Any]], *, other_task: str, same_model: tuple[str, str]
    ) -> list[tuple[str, str]]:
        """Same task, different models: ``sides`` are (field, response) for A and B."""
        problems = [(name, other_task) for name, response in sides if response.task_id != item.task_id]
        if sides[0][1].subject_model_id == sides[1][1].subject_model_id:
            problems.append(same_model)
        return problems

    def validate_answer(self, data, *, item, assignment):
        return validate_pair_choice(data, assignment)

    def answer_shown(self, label: PairwiseLabel) -> dict[str, Any]:
        return {"choice": label.shown_choice}  # the key pressed, in the order the annotator saw

    def category(self, label: PairwiseLabel) -> str:
        return label.choice

    def summary(self, label: PairwiseLabel) -> dict[str, Any]:
        return {"choice": label.choice, "shown_choice": label.shown_choice, "swapped": label.swapped}


def validate_flag(flag: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """A flag is optional: ``{"reason": <FlagReason>, "note": "..."}``; a flag needs a note (App. H.3)."""
    if flag in (None, "", {}):
        return {"flag_reason": "", "flag_note": ""}, {}
    if not isinstance(flag, Mapping):
        return {}, {"flag": "must be an object with a reason and a note"}
    reason = flag.get("reason") or ""
    note = (flag.get("note") or "").strip() if isinstance(flag.get("note") or "", str) else None
    errors = {}
    if reason not in FlagReason.values:
        errors["flag.reason"] = f"unknown flag reason {reason!r}; use one of: {', '.join(FlagReason.values)}"
    if note is None:
        errors["flag.note"] = "must be text"
    elif not note:
        errors["flag.note"] = "a flag needs a short note saying what is wrong"
    elif len(note) > FLAG_NOTE_MAX:
        errors["flag.note"] = f"keep the note under {FLAG_NOTE_MAX} characters"
    if errors:
        return {}, errors
    return {"flag_reason": reason, "flag_note": note}, {}


def validate_time_on_item(value: Any) -> int | None:
    """Milliseconds the item was on screen, as measured by the page; None when not sent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= TIME_ON_ITEM_MAX_MS:
        raise LabelInvalid({"time_on_item_ms": f"must be an integer between 0 and {TIME_ON_ITEM_MAX_MS}"})
    return value


def bytes_sha256(data: bytes | memoryview) -> str:
    """SHA-256 of image bytes stored in the database (EASEL canvases, C² task images)."""
    return hashlib.sha256(bytes(data)).hexdigest()


def task_context(item: Item) -> dict[str, Any]:
    """The brief and its written constraints, as shown to annotators."""
    constraints = item.task.constraints or {}
    lines = []
    for key, value in sorted(constraints.items()):
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        lines.append(f"{key.replace('_', ' ')}: {value}")
    return {"brief": item.task.brief, "constraints": lines, "family": item.task.family}

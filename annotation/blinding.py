"""Blinding of shown text: nothing an item shows may name a model.

One check, :func:`item_identity_problems`, looks at everything an item will show — the kind's
shown content (brief, constraints, response texts, checklist cues, TIG checklist text and cluster
summary), the rendered JSON the labelling page receives (:meth:`Kind.present`) and the payload
(except its ``meta``, which is never shown) — against every identity string of every model in
the catalogue (display name, provider id, its last path segment and its maker's "org", family) through the one matcher,
:func:`identity_mentions`, which sees through disguises (look-alike letters, invisible characters,
changed separators: :mod:`annotation.identity_text`) and matches whole words only. Items that
fail are refused at creation with an error naming the response (or the field) that carries the name, and a :class:`~annotation.models.BlindingRefusal` row is kept
for the admin's report (admin → "Items refused for blinding"). Each item records the catalogue revision
it was checked against; after a model is added or renamed, :mod:`annotation.blinding_recheck` checks it
again before it is shown, and withholds it when the new names reach it. The campaign texts annotators read
(name, instructions, calibration examples, a crowd study's consent text and training questions:
:func:`campaign_shown_texts`) are checked by :func:`texts_identity_problems` when written, and again after
the catalogue changes (:func:`annotation.blinding_recheck.campaign_texts_current`, which pauses the campaign).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.utils import timezone

from annotation.identity_text import Skeleton, displayed_variants, skeleton
from annotation.kinds.base import Kind
from annotation.models import Assignment, BlindingRefusal, Campaign, Item
from annotation.panel_models import PanelStudy
from leaderboard.models import Response
from leaderboard.selectors import catalogue_identity_strings, catalogue_revision

#: Campaign texts annotators read (queue card, labelling page, calibration overlay), checked the same way.
CAMPAIGN_SHOWN_FIELDS = ("name", "instructions")
CALIBRATION_SHOWN_FIELDS = ("title", "body", "expected", "explanation")
#: A crowd study's texts its participants read: the consent page, and each training question.
STUDY_SHOWN_FIELDS = ("consent_text",)
TRAINING_SHOWN_FIELDS = ("question", "explanation", "choices")


@dataclass(frozen=True)
class IdentityLeak:
    """One identity string found in what an item shows; ``response`` is the response whose text
    carries it (None when it comes from the task or the payload)."""

    field: str
    identity: str
    response: Response | None
    message: str


def _names_compiled(names: tuple[str, ...]) -> list[tuple[str, Skeleton]]:
    """(name as given, its skeleton) for each distinct non-empty name, the first spelling of each kept."""
    compiled: dict[str, tuple[str, Skeleton]] = {}
    for name in names:
        folded = skeleton(name.strip()) if name else None
        if folded is not None and folded.chars:
            compiled.setdefault(folded.chars + "|" + ",".join(map(str, sorted(folded.breaks))), (name.strip(), folded))
    return list(compiled.values())


_names_cached = lru_cache(maxsize=32)(_names_compiled)


def identity_mentions(text: str, names: Iterable[str]) -> list[str]:
    """The ``names`` (as given) that ``text`` mentions, however disguised: the one identity matcher of
    the site, behind every check of what annotators read.

    Both sides are folded (:func:`annotation.identity_text.skeleton`: NFKD, marks, format and
    zero-width characters dropped, look-alike letters folded by the Unicode confusables table, case
    folded); any run of separators or none counts as equal where the name has a break, and names
    match whole words only, so "o3" is found in "As o3," but not in "co3" or "o30". Short names are
    checked too. Text behind a right-to-left override is read as displayed as well as as stored.
    """
    if not text:
        return []
    compiled = _names_cached(tuple(names))
    variants = [skeleton(variant) for variant in displayed_variants(text)]
    return [name for name, folded in compiled if any(variant.contains(folded) for variant in variants)]


class IdentityMatcher:
    """The catalogue's identity strings, checked with :func:`identity_mentions`; ``revision`` is the
    catalogue revision they are at least as new as (read before them)."""

    def __init__(self, identities: Iterable[str], *, revision: int = 0):
        self.revision = revision
        # One spelling per name, the first given (a display name before the provider id's segment);
        # longest first, so the name reported for a text is the most specific one it contains.
        given = list(dict.fromkeys(n.strip() for n in identities if n and n.strip()))
        names = sorted(given, key=len, reverse=True)
        self.identities = [name for name, _ in _names_compiled(tuple(names))]

    def find(self, text: str) -> str | None:
        """The first identity string ``text`` mentions, as written in the catalogue; None if none."""
        found = identity_mentions(text or "", self.identities)
        return found[0] if found else None


def catalogue_identities() -> IdentityMatcher:
    """The identity strings of every model (any role): display name, provider id, the provider id's
    last path segment ("org/name" → "name"), its maker ("org") and family (:func:`leaderboard.selectors.catalogue_identity_strings`),
    with the catalogue revision. The revision is read first: the names read after it hold at least its
    names, so an item checked with them may be recorded as checked at that revision."""
    revision = catalogue_revision()
    return IdentityMatcher(catalogue_identity_strings(), revision=revision)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _strings(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _strings(inner)


def _shown_responses(item: Item) -> list[tuple[str, Response]]:
    sides = [("response_a", item.response_a), ("response_b", item.response_b)]
    sides += [(name, render.response) for name, render in (("render_a", item.render_a), ("render_b", item.render_b))
              if render is not None]
    return [(name, response) for name, response in sides if response is not None]


def _response_label(response: Response) -> str:
    return (f"response {response.pk} ({response.subject_model.display_name}, sample {response.sample}, "
            f"task {response.task.external_id})")


def item_identity_problems(*, item: Item, kind: Kind, matcher: IdentityMatcher) -> list[IdentityLeak]:
    """Identity strings in anything ``item`` will show, one :class:`IdentityLeak` per source found
    (the response whose text carries it, else the task's brief, else the payload)."""
    shown = kind.shown_content(item).content
    # The rendered page data: what the labelling page receives, in a fixed orientation.
    rendered = kind.present(item, Assignment(swapped=False, token=""), media_url=lambda slot: "")
    payload = {k: v for k, v in (item.payload or {}).items() if k != "meta"}
    texts = set(_strings([shown, rendered, payload]))
    found = {name for text in texts if (name := matcher.find(text))}
    if not found:
        return []
    leaks = []
    for side, response in _shown_responses(item):
        for field in ("core_idea", "visual_description"):
            text = getattr(response, field)
            identity = matcher.find(text) if text in texts else None
            if identity is not None:
                leaks.append(IdentityLeak(side, identity, response,
                                          f"{_response_label(response)} names a model ({identity!r}) in its {field}; "
                                          "shown text must not carry identities"))
    named = {leak.identity for leak in leaks}
    task_texts = list(_strings([item.task.brief, item.task.constraints]))
    for identity in sorted(found - named):
        where = "task" if any(matcher.find(t) == identity for t in task_texts) else "payload"
        source = f"the brief of task {item.task.external_id}" if where == "task" else "the item's payload"
        leaks.append(IdentityLeak(where, identity, None,
                                  f"{source} names a model ({identity!r}); shown text must not carry identities"))
    return leaks


def texts_identity_problems(texts: Mapping[str, str], *, matcher: IdentityMatcher | None = None) -> dict[str, str]:
    """field -> message for each of ``texts`` (campaign name, instructions, calibration examples)
    that names a model; empty when none does."""
    matcher = matcher or catalogue_identities()
    problems = {}
    for field, text in texts.items():
        identity = matcher.find(text or "")
        if identity is not None:
            problems[field] = f"names a model ({identity!r}); annotators read this text"
    return problems


def campaign_shown_texts(*, campaign: Campaign) -> dict[str, str]:
    """Every text of ``campaign`` that its annotators or crowd participants read, by where it is shown: the
    fields checked when each is written (:data:`CAMPAIGN_SHOWN_FIELDS`, its calibration examples'
    :data:`CALIBRATION_SHOWN_FIELDS`, its crowd study's :data:`STUDY_SHOWN_FIELDS` and training questions'
    :data:`TRAINING_SHOWN_FIELDS`)."""
    texts = {field: getattr(campaign, field) or "" for field in CAMPAIGN_SHOWN_FIELDS}
    for n, example in enumerate(campaign.calibration_examples.order_by("position", "pk"), 1):
        texts.update({f"calibration example {n} {field}": getattr(example, field) or ""
                      for field in CALIBRATION_SHOWN_FIELDS})
    study = PanelStudy.objects.filter(campaign_id=campaign.pk).first()
    if study is not None:
        texts.update({f"crowd study {field}": getattr(study, field) or "" for field in STUDY_SHOWN_FIELDS})
        for n, training in enumerate(study.training_items.order_by("position", "pk"), 1):
            for field in TRAINING_SHOWN_FIELDS:
                value = getattr(training, field)
                texts[f"training question {n} {field}"] = " ".join(map(str, value)) if isinstance(value, list) else value or ""
    return texts


def blinding_refusals_record(*, campaign: Campaign, refused: Sequence[tuple[str, int, IdentityLeak]],
                             item: Item | None = None, prefix: str = "") -> None:
    """Keep refused items for the admin's report: (item key, line, leak) each; ``item`` when an existing
    item was withheld (its messages start with ``prefix``)."""
    now = timezone.now()
    BlindingRefusal.objects.bulk_create([
        BlindingRefusal(campaign=campaign, item=item, item_key=key[:200], line=line, field=leak.field[:40],
                        identity=leak.identity[:200], response=leak.response, message=prefix + leak.message,
                        created_at=now)
        for key, line, leak in refused
    ])


__all__ = ["CALIBRATION_SHOWN_FIELDS", "CAMPAIGN_SHOWN_FIELDS", "STUDY_SHOWN_FIELDS", "TRAINING_SHOWN_FIELDS", "IdentityLeak",
           "IdentityMatcher", "blinding_refusals_record", "campaign_shown_texts", "catalogue_identities",
           "identity_mentions", "item_identity_problems", "texts_identity_problems"]

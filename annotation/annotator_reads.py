"""Reads of the annotator side: campaigns open to an annotator with their progress (from the counters of
:mod:`annotation.progress`), the blinded item as presented, its media, calibration examples, and the blind
item view adjudicators and researchers see. Reachable from :mod:`annotation.selectors` under the same names."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Exists, OuterRef, Q, Subquery
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from annotation.blinding_recheck import campaign_texts_current
from annotation.kinds import kind_for
from annotation.kinds.base import shown_pair
from annotation.models import (
    Adjudication,
    AnnotatorProgress,
    Assignment,
    CalibrationExample,
    Campaign,
    CampaignProgress,
    Item,
    ItemSlot,
)
from leaderboard.models import CatalogueRevision


@dataclass(frozen=True)
class Progress:
    """The progress bar: the annotator's own figures only. ``done`` counts every item they submitted,
    gold included, so it grows by one whatever the item was; ``items_total`` moves only when items are
    added, changed or withheld. No campaign-wide label count: the campaign's counter counts regular items
    only (gold has no slots), so any figure drawn from it would stand still after a gold item and move
    after a regular one, telling an annotator which of their items were gold. Researchers read the
    exact counters on their dashboards."""

    done: int
    assigned: int
    items_total: int = 0  # the most items this annotator can be given, gold included (_items_up_to)

    def as_dict(self) -> dict[str, int]:
        return {"done": self.done, "assigned": self.assigned, "items_total": self.items_total}


def campaign_get(*, pk: int) -> Campaign | None:
    return Campaign.objects.select_related("task_set").filter(pk=pk).first()


def campaign_label_count(*, campaign: Campaign) -> int:
    """Current (non-stale) labels of the campaign, gold included: what the live dashboard watches."""
    return kind_for(campaign.kind).label_model.objects.filter(campaign=campaign, is_stale=False).count()


def campaign_item_get(*, campaign: Campaign, pk: int) -> Item:
    from django.http import Http404

    item = Item.objects.select_related("campaign").filter(campaign=campaign, pk=pk).first()
    if item is None:
        raise Http404("No such item in this campaign.")
    return item


def campaign_item_view(*, campaign: Campaign, item: Item) -> dict[str, Any]:
    """One item as its annotators saw it (the kind's shown content, canonical A/B order, no model or
    response identity) with its current labels, flags and notes: the blind adjudication view."""
    kind = kind_for(campaign.kind)
    shown = kind.shown_content(item).content
    context = {k: shown.get(k) for k in ("brief", "constraints") if shown.get(k)}
    fields = []
    for key, value in shown.items():
        if key in ("kind", "brief", "constraints", "family", "dimension") or value in (None, "", [], {}):
            continue
        if isinstance(value, dict):
            value = [f"{k.replace('_', ' ')}: {v}" if not isinstance(v, dict) else f"{v.get('label', k)}" for k, v in value.items()]
        if isinstance(value, list):
            value = [v if not isinstance(v, dict) else " — ".join(str(x) for x in v.values()) for v in value]
        fields.append({"label": {"a": "Response A", "b": "Response B"}.get(key, key.replace("_", " ").capitalize()),
                       "value": value, "is_list": isinstance(value, list)})
    adjudication = Adjudication.objects.filter(item=item).first()
    labels = [
        {"annotator": label.annotator.username, "category": kind.category(label), "answer": kind.summary(label),
         "flag_reason": label.get_flag_reason_display() if label.flag_reason else "", "flag_note": label.flag_note,
         "simulated": label.is_simulated,
         # an annotator may change a label under adjudication (annotation.label_revision: refusing it would tell
         # them the others disagreed), so the researcher is told which answer moved after the review began
         "changed_in_review": bool(adjudication and label.revised_at and label.revised_at > adjudication.requested_at),
         "version": label.version}
        for label in kind.label_model.objects.filter(item=item, is_stale=False).select_related("annotator").order_by("pk")
    ]
    return {"context": context, "fields": fields, "labels": labels, "uses_images": kind.uses_images,
            "adjudication": adjudication}


def adjudication_get(*, campaign: Campaign, item_pk: int) -> Adjudication:
    from django.http import Http404

    adjudication = Adjudication.objects.select_related("item__campaign").filter(item__campaign=campaign, item_id=item_pk).first()
    if adjudication is None:
        raise Http404("This item has not been sent to adjudication.")
    return adjudication


def campaign_progress(*, campaign: Campaign, annotator: AbstractBaseUser) -> Progress:
    """The progress bar from the counters (:mod:`annotation.progress`): one row read, whatever the
    campaign's size; ``assigned`` is the annotator's active assignment (at most one, a unique index)."""
    row = (
        CampaignProgress.objects.filter(pk=campaign.pk)
        .annotate(
            done=Subquery(AnnotatorProgress.objects.filter(campaign_id=OuterRef("pk"), annotator=annotator).values("done")[:1]),
            assigned=Exists(Assignment.objects.filter(campaign_id=OuterRef("pk"), annotator=annotator,
                                                      status=Assignment.Status.ACTIVE)),
        )
        .values_list("done", "assigned", "slots")
    )
    found = next(iter(row), None)
    if found is None:  # a campaign made around the services with nothing counted yet
        return _progress_recounted(campaign, annotator)
    done, assigned, slots = found
    return Progress(done or 0, int(assigned), _items_up_to(slots, campaign))


def _items_up_to(slots: int, campaign: Campaign) -> int:
    """The most items an annotator can be given, gold included: ``done`` counts gold too, so a total of
    regular items alone was passed ("7 of up to 6") on a campaign with gold. The regular items are
    ``R = slots // k`` (each labelled once; slots are items × k, so no count over the campaign). The gold
    schedule keeps an annotator's gold ``g`` after ``n`` items below ``n * rate + 1``
    (:mod:`annotation.gold_schedule`), so ``n - R <= g < n * rate + 1``, i.e. ``n < (R + 1) / (1 - rate)``:
    ``n <= ceil((R + 1) / (1 - rate)) - 1``. It depends on the campaign alone, never on which items were gold."""
    regular = slots // max(campaign.k, 1)
    rate = campaign.gold_rate
    if regular == 0 or not 0 < rate < 1:
        return regular
    return max(regular, math.ceil((regular + 1) / (1 - rate)) - 1)


def _progress_recounted(campaign: Campaign, annotator: AbstractBaseUser) -> Progress:
    counts = Assignment.objects.filter(campaign=campaign).aggregate(
        done=Count("pk", filter=Q(annotator=annotator, status=Assignment.Status.SUBMITTED)),
        assigned=Count("pk", filter=Q(annotator=annotator, status=Assignment.Status.ACTIVE)),
    )
    # regular items x k (gold has no slots; a withheld item is no longer work)
    total = ItemSlot.objects.filter(item__campaign=campaign, item__withheld_at__isnull=True).count()
    return Progress(counts["done"], counts["assigned"], _items_up_to(total, campaign))


@dataclass(frozen=True)
class CampaignCard:
    """A campaign on the annotator's queue with their own progress. No "items left" of the campaign:
    it is the campaign's regular labels against its slots, and it would run out after a regular item,
    never after a gold one (the labelling page says when nothing is left for this annotator)."""

    campaign: Campaign
    progress: Progress
    kind_title: str = ""  # the kind's plain name (no paper reference: annotators read it)


def campaigns_for_annotator(*, annotator: AbstractBaseUser) -> list[CampaignCard]:
    """Open campaigns this annotator may work on, with their progress; a campaign paused for review (its
    texts name a model: :func:`annotation.blinding_recheck.campaign_texts_current`, asked with the
    catalogue's revision read in the same statement) is not listed."""
    campaigns = (
        Campaign.objects.filter(status=Campaign.Status.OPEN, texts_paused_at__isnull=True)
        .filter(Q(open_to_all_annotators=True) | Q(memberships__annotator=annotator))
        .distinct()
        .order_by("name")
        .annotate(catalogue_revision=Subquery(CatalogueRevision.objects.filter(pk=1).values("number")[:1]))
    )
    campaigns = [campaign for campaign in campaigns.select_related("progress")
                 if campaign_texts_current(campaign=campaign, revision=campaign.catalogue_revision or 0)]
    done = dict(AnnotatorProgress.objects.filter(campaign__in=campaigns, annotator=annotator).values_list("campaign_id", "done"))
    active = set(Assignment.objects.filter(campaign__in=campaigns, annotator=annotator, status=Assignment.Status.ACTIVE)
                 .values_list("campaign_id", flat=True))
    cards = []
    for campaign in campaigns:
        counters = getattr(campaign, "progress", None)
        if counters is None:
            progress = _progress_recounted(campaign, annotator)
        else:
            progress = Progress(done.get(campaign.pk, 0), int(campaign.pk in active),
                                _items_up_to(counters.slots, campaign))
        cards.append(CampaignCard(campaign, progress, kind_for(campaign.kind).title))
    return cards


def assignment_present(*, assignment: Assignment, media_url: Callable[[str], str]) -> dict[str, Any]:
    """The blinded JSON of one assignment: the opaque token, the kind's shown content in shown
    order, media as per-assignment URLs. No item, response, render or model id, no score, no other
    annotator's label, and no gold marker of any kind (not even a constant ``is_gold: false``: the
    payload of a gold item is indistinguishable from any other)."""
    kind = kind_for(assignment.campaign.kind)
    return {
        "token": assignment.token,
        "kind": kind.code,
        "expires_at": assignment.expires_at.isoformat(),
        "content": kind.present(assignment.item, assignment, media_url=media_url),
    }


def media_for_assignment(*, assignment: Assignment, shown_slot: str) -> tuple[Any, str]:
    """(render, expected SHA-256) behind a shown image slot ('A'/'B') of an assignment."""
    if shown_slot not in ("A", "B"):
        raise KeyError(shown_slot)
    canonical = dict(zip(("A", "B"), shown_pair(assignment, "a", "b")))[shown_slot]
    render = assignment.item.render_a if canonical == "a" else assignment.item.render_b
    if render is None or canonical not in assignment.media_sha256:
        raise KeyError(shown_slot)
    return render, assignment.media_sha256[canonical]


def media_bytes_for_assignment(*, assignment: Assignment, shown_slot: str) -> tuple[bytes, str]:
    """(stored bytes, SHA-256 pinned at hand-out) behind a shown image slot of an assignment, by its
    kind ('A'/'B' for renders and canvases, 'R' for a canvas item's reference); KeyError otherwise."""
    return kind_for(assignment.campaign.kind).media_source(assignment.item, assignment, shown_slot)


def calibration_examples(*, campaign: Campaign) -> list[CalibrationExample]:
    return list(campaign.calibration_examples.order_by("position", "pk"))


def markup_render(text: str) -> SafeString:
    """A safe Markdown subset for instructions: paragraphs, '- ' lists, '# ' headings, **bold**,
    *italic*. Everything is escaped first, so no HTML from the database reaches the page."""
    import re

    def inline(line: str) -> str:
        line = escape(line)
        line = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", line)
        return re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", line)

    html, paragraph, items = [], [], []

    def flush() -> None:
        if paragraph:
            html.append("<p>" + " ".join(inline(p) for p in paragraph) + "</p>")
            paragraph.clear()
        if items:
            html.append("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            flush()
        elif line.startswith(("- ", "* ")):
            if paragraph:
                flush()
            items.append(line[2:])
        elif line.startswith("#"):
            flush()
            level = min(len(line) - len(line.lstrip("#")) + 2, 4)
            html.append(f"<h{level}>{inline(line.lstrip('#').strip())}</h{level}>")
        else:
            if items:
                flush()
            paragraph.append(line)
    flush()
    return mark_safe("\n".join(html))

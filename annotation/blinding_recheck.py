"""Items checked again after the catalogue changes (issue 23's known gap, closed): a model added to the
catalogue, or renamed, after items were made must not reach an annotator through an item whose text
already shows its name.

Every item records the catalogue revision it was last checked against (``Item.blinding_revision``); the
catalogue's own (:class:`leaderboard.models.CatalogueRevision`) moves whenever the models' names change
(:func:`leaderboard.services.catalogue.catalogue_revision_sync`, called by every write of a model). One
gatekeeper, :func:`item_blinding_current`, stands before everything an annotator is shown of an item:
next-item's held item, gold item and free slot (the page, the API, crowd participants) and the previous
label. When the item's revision is the catalogue's it costs one integer comparison (next-item reads the
catalogue's revision in its facts statement, :mod:`annotation.request_facts`); when it is behind, the item
is checked again with :func:`annotation.blinding.item_identity_problems` and either recorded as checked
or withheld.

Withholding (:func:`item_withhold`), in one transaction:

* ``Item.withheld_at`` is set: the item is never handed out again (a withheld item stays withheld, even if
  the name later leaves the catalogue: its text showed a model's name);
* the admin's report (:class:`~annotation.models.BlindingRefusal`, "Items refused for blinding") gets a
  row per name found, naming the item, the name and the response that carries it;
* its active assignments end as stale, so the gatekeeper refuses their page, media, submission and skip;
  its free slots leave the queue;
* its slots, and the labels they hold, leave the campaign's progress counters (``slots``, ``labels``):
  the item is no longer outstanding work, and items = slots / k stays exact.

Labels already given stay stored as they were (statistics count them as before; the labels export marks
them ``item_withheld``); an annotator's own count of labels done keeps them.

The campaign's own texts (name, instructions, calibration examples, its crowd study's consent text and
training questions: :func:`annotation.blinding.campaign_shown_texts`) are checked when written, and again
the same way after the catalogue changes: the campaign records the revision they were last checked against
(``Campaign.texts_blinding_revision``), and one gatekeeper, :func:`campaign_texts_current`, stands before
everything that shows them or hands out the campaign's items — next-item (the page, the API, crowd
participants: the catalogue's revision is in its facts statement, so it is one integer comparison when
nothing changed), the labelling page, the annotator's queue and the crowd study's pages. When a text now
names a model the campaign is **paused** (:func:`campaign_texts_pause`): ``texts_paused_at`` and the reason
(which text, which name) are set, annotators and participants get no item and see only a neutral "paused
for review" message (:data:`annotation.errors.CAMPAIGN_PAUSED_MESSAGE`; the access gatekeeper refuses a
paused campaign on every annotator request), and the researcher's dashboard and the admin show why. It
stays paused, even if the name leaves the catalogue, until someone with the admin edits the texts and
resumes it (:func:`campaign_texts_resume`, which checks every text again and refuses while one still names
a model).

A text written while a model is being added is checked against the older names. Every write of one
(:func:`campaign_texts_writing`: calibration examples, the crowd study's consent text and training
questions, the admin's forms) therefore records, in its transaction, the revision it was checked against
(read before the check): the campaign's revision goes down to it (:func:`campaign_texts_written`), so a
text checked at an older revision is checked again by the gatekeeper or the sweep, as an item made at an
older revision is. Whoever records the texts as checked (the gatekeeper, the sweep, the resume) locks the
campaign's row before reading them: a write that lowered the revision first is committed (and read) before
they read, and one that lowers it after they recorded their check lowers it again.

The sweep (:func:`items_recheck`; the Celery task ``annotation.recheck_blinding``, sent after every commit
that moves the revision and run by Celery beat) checks the texts and items of campaigns that are not closed
ahead of the next annotator, so that most are settled before anyone asks, and the admin's report fills at
once. The hand-out's check does not depend on it: without a worker, each item and campaign is checked when
it is next shown.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef, Value
from django.db.models.functions import Least
from django.utils import timezone

from annotation.blinding import (
    CAMPAIGN_SHOWN_FIELDS,
    IdentityLeak,
    IdentityMatcher,
    blinding_refusals_record,
    campaign_shown_texts,
    catalogue_identities,
    item_identity_problems,
    texts_identity_problems,
)
from annotation.errors import ItemsInvalid
from annotation.kinds import kind_for
from annotation.kinds.base import Kind
from annotation.locking import row_locks_available
from annotation.models import Assignment, Campaign, Item, ItemSlot
from annotation.progress import campaign_progress_add
from leaderboard.selectors import catalogue_revision

logger = logging.getLogger(__name__)

__all__ = [
    "RECHECK_BATCH",
    "WITHHELD_NOTE",
    "Recheck",
    "campaign_texts_current",
    "campaign_texts_pause",
    "campaign_texts_resume",
    "campaign_texts_writing",
    "campaign_texts_written",
    "item_blinding_current",
    "item_withhold",
    "items_recheck",
]

#: Items the sweep loads and checks at a time.
RECHECK_BATCH = 200
#: How the report's message of a withheld item begins (an item refused at creation has none).
WITHHELD_NOTE = "Withheld from annotators after a catalogue change: "


def item_blinding_current(*, item: Item, kind: Kind, revision: int, now: datetime | None = None) -> bool:
    """Whether ``item`` (its kind's content relations loaded, its campaign attached) may be shown now, the
    catalogue being at ``revision``: not withheld, and checked against the catalogue's current names —
    checked again here when it was checked against an older revision, and withheld when they reach it."""
    if item.withheld_at is not None:
        return False
    if item.blinding_revision >= revision:
        return True
    matcher = catalogue_identities()
    leaks = item_identity_problems(item=item, kind=kind, matcher=matcher)
    if leaks:
        item_withhold(item=item, leaks=leaks, now=now)
        return False
    _items_checked(item_ids=[item.pk], revision=matcher.revision)
    item.blinding_revision = max(item.blinding_revision, matcher.revision)
    return True


def campaign_texts_current(*, campaign: Campaign, revision: int | None = None, now: datetime | None = None) -> bool:
    """Whether ``campaign``'s shown texts may be shown, and its items handed out, now, the catalogue being
    at ``revision`` (read here when not given; next-item reads it in its facts statement): not paused,
    and its texts checked against the catalogue's current names — checked again here when they were
    checked against an older revision, and the campaign paused when the names reach them. The one
    gatekeeper of the campaign's texts (see the module docstring). Callers inside a transaction let it
    commit before refusing, so that the pause is kept."""
    if campaign.texts_paused_at is not None:
        return False
    if revision is None:
        revision = catalogue_revision()
    if campaign.texts_blinding_revision >= revision:
        return True
    with transaction.atomic():
        _campaign_lock(campaign)
        if campaign.texts_paused_at is not None:  # paused meanwhile (the sweep, another request)
            return False
        matcher = catalogue_identities()
        problems = _campaign_texts_problems(campaign, matcher)
        if problems:
            campaign_texts_pause(campaign=campaign, problems=problems, now=now)
            return False
        _campaign_texts_checked(campaign, matcher.revision)
    return True


def _campaign_lock(campaign: Campaign) -> None:
    """Lock the campaign's row before its texts are read and recorded as checked (see the module docstring):
    a write of a text that lowered its revision (:func:`campaign_texts_written`) commits first, and its
    text is then read; SQLite serialises writers. Inside a transaction. The campaign's own texts and pause
    are read again after the lock: the instance was read before it (the sweep's list, next-item's facts),
    so it may hold a name or instructions older than a write that committed meanwhile."""
    if row_locks_available():
        list(Campaign.objects.select_for_update().filter(pk=campaign.pk).values_list("pk"))
    campaign.refresh_from_db(fields=[*CAMPAIGN_SHOWN_FIELDS, "texts_paused_at", "texts_paused_reason",
                                     "texts_blinding_revision"])


@contextmanager
def campaign_texts_writing(*, campaign_id: int) -> Iterator[IdentityMatcher]:
    """Write a shown text of campaign ``campaign_id``: one transaction, in which the catalogue's names to
    check it with come first (their revision read before them, so before the check), and, once the body
    has written the text, the campaign records that revision (:func:`campaign_texts_written`). A refusal
    raised in the body writes nothing."""
    with transaction.atomic():
        matcher = catalogue_identities()
        yield matcher
        campaign_texts_written(campaign_id=campaign_id, revision=matcher.revision)


def campaign_texts_written(*, campaign_id: int, revision: int) -> None:
    """A shown text of campaign ``campaign_id`` was written, checked against the names of ``revision``: the
    campaign's texts are recorded as checked at no later revision, so they are checked again once the
    catalogue is past it. In the write's transaction. Race prevented: a sweep or request that read the
    texts before this one committed recording them as checked at a newer revision; one UPDATE of the row
    in any case (it takes the row's lock, which they take before reading the texts)."""
    Campaign.objects.filter(pk=campaign_id).update(
        texts_blinding_revision=Least(F("texts_blinding_revision"), Value(revision))
    )


def _campaign_texts_problems(campaign: Campaign, matcher: IdentityMatcher) -> dict[str, str]:
    return texts_identity_problems(campaign_shown_texts(campaign=campaign), matcher=matcher)


def _campaign_texts_checked(campaign: Campaign, revision: int) -> None:
    """The campaign's texts were found clean with the names of ``revision`` (never moved back)."""
    Campaign.objects.filter(
        pk=campaign.pk, texts_paused_at__isnull=True, texts_blinding_revision__lt=revision
    ).update(texts_blinding_revision=revision)
    campaign.texts_blinding_revision = max(campaign.texts_blinding_revision, revision)


def campaign_texts_pause(*, campaign: Campaign, problems: dict[str, str], now: datetime | None = None) -> bool:
    """Pause ``campaign``, whose shown texts name a model (``problems``: where -> message, as
    :func:`annotation.blinding.texts_identity_problems` gives them); False when it was paused already
    (by a concurrent request or the sweep), and then nothing is written."""
    now = now or timezone.now()
    reason = "; ".join(f"{where} {message}" for where, message in problems.items())
    # One statement: of two requests (or a request and the sweep) pausing it, the second's UPDATE waits
    # for the first's row lock, then finds it paused (PostgreSQL re-reads the committed row).
    paused = Campaign.objects.filter(pk=campaign.pk, texts_paused_at__isnull=True).update(
        texts_paused_at=now, texts_paused_reason=reason
    )
    if not paused:
        campaign.texts_paused_at = campaign.texts_paused_at or now
        return False
    campaign.texts_paused_at, campaign.texts_paused_reason = now, reason
    logger.warning("campaign %s paused for review: %s", campaign.pk, reason)
    return True


def campaign_texts_resume(*, campaign: Campaign) -> Campaign:
    """Lift ``campaign``'s pause after its texts were reviewed: every shown text is checked again with the
    catalogue's current names; ItemsInvalid (naming each text and the name) while one still names a model,
    and the campaign stays paused."""
    with transaction.atomic():
        _campaign_lock(campaign)
        matcher = catalogue_identities()
        if problems := _campaign_texts_problems(campaign, matcher):
            raise ItemsInvalid([(0, where, message) for where, message in problems.items()])
        Campaign.objects.filter(pk=campaign.pk).update(
            texts_paused_at=None, texts_paused_reason="", texts_blinding_revision=matcher.revision
        )
    campaign.texts_paused_at, campaign.texts_paused_reason = None, ""
    campaign.texts_blinding_revision = matcher.revision
    return campaign


def _items_checked(*, item_ids: Iterable[int], revision: int) -> None:
    """These items were found clean with the names of ``revision`` (never moved back)."""
    Item.objects.filter(
        pk__in=list(item_ids), withheld_at__isnull=True, blinding_revision__lt=revision
    ).update(blinding_revision=revision)


def item_withhold(*, item: Item, leaks: Sequence[IdentityLeak], now: datetime | None = None) -> bool:
    """Withhold ``item``, whose shown text names a model (``leaks``; see the module docstring); False when
    it was withheld already (by a concurrent request or the sweep), and then nothing is written."""
    now = now or timezone.now()
    with transaction.atomic():
        # Race prevented: two takers of the item's slots (or a taker and the sweep) both withholding it and
        # both taking it out of the counters. The second UPDATE waits for the first's row lock, then finds
        # the item withheld (PostgreSQL re-reads the committed row) and changes nothing.
        if not Item.objects.filter(pk=item.pk, withheld_at__isnull=True).update(withheld_at=now):
            item.withheld_at = item.withheld_at or now
            return False
        item.withheld_at = now
        blinding_refusals_record(
            campaign=item.campaign,
            refused=[(item.key, 0, leak) for leak in leaks],
            item=item,
            prefix=WITHHELD_NOTE,
        )
        _active_assignments_end(Assignment.objects.filter(item_id=item.pk), now=now)
        _free_slots_close(item.pk)
        slots = ItemSlot.objects.filter(item_id=item.pk).count()
        labels = Assignment.objects.filter(
            item_id=item.pk, status=Assignment.Status.SUBMITTED, slot__isnull=False
        ).count()
        campaign_progress_add(campaign_id=item.campaign_id, labels=-labels, slots=-slots, items_changed=True)
    logger.warning(
        "item %s (%s) withheld: it shows %s",
        item.pk,
        item.key,
        ", ".join(sorted({repr(leak.identity) for leak in leaks})),
    )
    return True


def _active_assignments_end(assignments, *, now: datetime) -> int:
    """End the active ones of ``assignments`` as stale; their slots stay taken (out of the queue)."""
    ending = assignments.filter(status=Assignment.Status.ACTIVE)
    if row_locks_available():
        # Race prevented: a submission of one of them saving a label as it ends. Either it commits first
        # (the assignment is then submitted, not ended, and its label counted before it is taken out), or
        # it waits for us and finds the assignment stale (the gatekeeper refuses it).
        ending = ending.select_for_update(of=("self",))
    ids = list(ending.values_list("pk", flat=True))
    return Assignment.objects.filter(pk__in=ids, status=Assignment.Status.ACTIVE).update(
        status=Assignment.Status.STALE, finished_at=now
    )


def _free_slots_close(item_id: int) -> None:
    """Take the withheld item's free slots out of the queue."""
    free = ItemSlot.objects.filter(item_id=item_id, is_free=True)
    if connection.features.has_select_for_update_skip_locked:
        # A slot a concurrent next-item is taking now is skipped, not waited for (waiting could deadlock:
        # that request may be waiting for this item's row): it finds the item withheld and keeps the slot.
        free = free.select_for_update(skip_locked=True)
    ItemSlot.objects.filter(pk__in=list(free.values_list("pk", flat=True))).update(is_free=False)


@dataclass(frozen=True)
class Recheck:
    """What one sweep did: items found clean, items withheld, active assignments of withheld items ended,
    campaigns paused for their texts."""

    checked: int
    withheld: int
    ended: int
    paused: int = 0


def items_recheck(*, now: datetime | None = None) -> Recheck:
    """Check again the texts of every campaign that is not closed, and every item of one, whose check is
    older than the catalogue's revision; pause the campaigns and withhold the items the new names reach.
    Idempotent: run again, it finds nothing to do. An item that cannot be read now (an image file missing)
    stays behind, and is checked when it is next shown."""
    now = now or timezone.now()
    matcher = catalogue_identities()
    paused = 0
    for campaign in Campaign.objects.exclude(status=Campaign.Status.CLOSED).filter(
        texts_paused_at__isnull=True, texts_blinding_revision__lt=matcher.revision
    ).order_by("pk"):
        with transaction.atomic():
            _campaign_lock(campaign)
            if campaign.texts_paused_at is not None:  # paused meanwhile by a request
                continue
            if problems := _campaign_texts_problems(campaign, matcher):
                paused += campaign_texts_pause(campaign=campaign, problems=problems, now=now)
            else:
                _campaign_texts_checked(campaign, matcher.revision)
    with transaction.atomic():
        # An item handed out in the instant it was withheld (the taker read the catalogue's revision
        # before the change and the item before the withholding committed) is withdrawn here.
        ended = _active_assignments_end(Assignment.objects.filter(item__withheld_at__isnull=False), now=now)
    checked = withheld = 0
    behind = Item.objects.filter(withheld_at__isnull=True, blinding_revision__lt=matcher.revision)
    campaigns = (
        Campaign.objects.exclude(status=Campaign.Status.CLOSED)
        .filter(Exists(behind.filter(campaign_id=OuterRef("pk"))))
        .order_by("pk")
    )
    for campaign in campaigns:
        kind = kind_for(campaign.kind)
        items = behind.filter(campaign=campaign).select_related(*kind.content_relations).order_by("pk")
        last = 0
        while batch := list(items.filter(pk__gt=last)[:RECHECK_BATCH]):
            last = batch[-1].pk
            clean = []
            for item in batch:
                item.campaign = campaign
                try:
                    leaks = item_identity_problems(item=item, kind=kind, matcher=matcher)
                except (OSError, ValueError) as exc:
                    logger.warning(
                        "item %s not checked again now (%s); it is checked when next shown", item.pk, exc
                    )
                    continue
                if leaks:
                    withheld += item_withhold(item=item, leaks=leaks, now=now)
                else:
                    clean.append(item.pk)
            _items_checked(item_ids=clean, revision=matcher.revision)
            checked += len(clean)
    return Recheck(checked, withheld, ended, paused)

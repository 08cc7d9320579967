"""Writes of the annotation app: campaigns, items, assignment, submission, skip, expiry, content
staleness, gold and adjudication.

Service functions are ``<entity>_<action>``, keyword-only and typed. Concurrency is handled where it
happens, each lock with a comment naming the race it prevents. On PostgreSQL the queue takes slots
with ``SELECT … FOR UPDATE SKIP LOCKED``; SQLite has no row locks, so there a transaction serialises
writers and the unique constraints on :class:`~annotation.models.Assignment` and the label tables are
what make a lost race fail instead of double-assigning (the caller retries).

Ekphrasis App. H (pairwise protocol), G.7 (TIG audit), I.2–I.3 (faithfulness gate, image
preference), J (strategy labels).
"""

from __future__ import annotations

import hashlib
import logging
import random
import secrets
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.access import AccessFacts, annotator_access_check
from annotation.annotator_reads import Progress, _items_up_to, campaign_progress
from annotation.blinding import (
    catalogue_identities,
    texts_identity_problems,
)
from annotation.blinding_recheck import campaign_texts_current, campaign_texts_writing, item_blinding_current
from annotation.choices import CampaignKind
from annotation.errors import (
    CAMPAIGN_PAUSED_MESSAGE,
    AssignmentClosed,
    Busy,
    CampaignNameTaken,
    CampaignNotOpen,
    CampaignPaused,
    ItemsInvalid,
    LabelInvalid,
    LaunchGatesFailed,
    NotAllowed,
    NotFound,
    SubmissionConflict,
)
from annotation.gold_schedule import gold_due
from annotation.item_creation import _item_content_changed
from annotation.kinds import kind_for
from annotation.kinds.base import validate_time_on_item
from annotation.label_models import Label, LabelRevision
from annotation.locking import row_locks_available as _has_row_locks
from annotation.models import (
    Adjudication,
    Assignment,
    CalibrationExample,
    Campaign,
    CampaignAnnotator,
    CampaignProgress,
    Item,
    ItemSlot,
)
from annotation.participant_release import participant_complete_by_user
from annotation.progress import campaign_version_bump, submission_counted
from annotation.request_facts import (
    NextItemFacts,
    assignment_facts,
    assignment_submit_if_active,
    item_with_content,
    next_item_facts,
)
from annotation.slot_queue import (
    active_or_free_slot_take,
    free_slot_take,
    slot_flag_repair,
    slots_freed,
)
from evalsite.precompiled import row_create, row_insert
from leaderboard.models import Render, Response, TaskSet
from leaderboard.roles import is_researcher

logger = logging.getLogger(__name__)

#: Retries of a transaction that lost a race to a unique constraint (another request took the slot).
RACE_RETRIES = 5
#: Overdue assignments expired per transaction by :func:`assignments_expire`.
EXPIRE_BATCH = 1000
#: Longest a skip reason may be.
SKIP_REASON_MAX = 200


def _one(queryset):
    """The first row of an unordered queryset, without the ORDER BY pk that ``.first()`` adds (on a
    lookup by a unique key that ordering can make the planner walk the primary key instead)."""
    return next(iter(queryset[:1]), None)


def _now(now: datetime | None) -> datetime:
    return now or timezone.now()




# ---------------------------------------------------------------------------------------------------
# Campaigns
# ---------------------------------------------------------------------------------------------------


def campaign_create(
    *,
    name: str,
    kind: str,
    task_set: TaskSet,
    instructions: str = "",
    k: int = 3,
    annotators: Iterable[AbstractBaseUser] = (),
    open_to_all_annotators: bool = False,
    gold_rate: float = 0.1,
    show_brief: bool = False,
    assignment_ttl_seconds: int | None = None,
    is_demo: bool = False,
    created_by: AbstractBaseUser | None = None,
    status: str = Campaign.Status.DRAFT,
) -> Campaign:
    """Create a campaign (admins do this). ``k`` annotators per item, default 3 (App. H). A name another
    campaign has is :class:`CampaignNameTaken`, also when that campaign was created meanwhile by a request
    running at the same time (the unique index decides)."""
    if kind not in CampaignKind.values:
        raise ItemsInvalid([(0, "kind", f"unknown campaign kind {kind!r}")])
    if Campaign.objects.filter(name=name).exists():
        raise CampaignNameTaken(name)
    matcher = catalogue_identities()
    if leaks := texts_identity_problems({"name": name, "instructions": instructions}, matcher=matcher):
        raise ItemsInvalid([(0, field, message) for field, message in leaks.items()])
    if status == Campaign.Status.OPEN:
        campaign_launch_gates_check(task_set=task_set)
    try:
        with transaction.atomic():
            campaign = Campaign.objects.create(
                name=name, kind=kind, task_set=task_set, instructions=instructions, k=k,
                open_to_all_annotators=open_to_all_annotators, gold_rate=gold_rate, show_brief=show_brief,
                assignment_ttl_seconds=assignment_ttl_seconds, is_demo=is_demo, created_by=created_by, status=status,
                texts_blinding_revision=matcher.revision,  # its only texts yet, checked against these names
            )
            CampaignProgress.objects.create(campaign=campaign)
            campaign_annotators_add(campaign=campaign, annotators=annotators)
    except IntegrityError:
        if Campaign.objects.filter(name=name).exists():
            raise CampaignNameTaken(name) from None
        raise
    return campaign


def campaign_annotators_add(*, campaign: Campaign, annotators: Iterable[AbstractBaseUser]) -> None:
    existing = set(campaign.memberships.values_list("annotator_id", flat=True))
    CampaignAnnotator.objects.bulk_create(
        [CampaignAnnotator(campaign=campaign, annotator=a) for a in annotators if a.pk not in existing]
    )


def campaign_launch_gates_check(*, task_set: TaskSet) -> None:
    """Human validation starts only after the pilot gates pass (Ekphrasis App. D.3): the task set's
    latest finished judge run must pass its seven launch gates, or carry an admin's recorded override."""
    from leaderboard.ekphrasis.launch_gates import LaunchGatesNotPassed, launch_gates_require

    try:
        launch_gates_require(task_set=task_set)
    except LaunchGatesNotPassed as exc:
        raise LaunchGatesFailed(str(exc)) from exc


def campaign_status_set(*, campaign: Campaign, status: str) -> Campaign:
    """Open, close or return a campaign to draft. Opening needs items, and the launch gates of the run
    it validates (:func:`campaign_launch_gates_check`)."""
    if status not in Campaign.Status.values:
        raise ItemsInvalid([(0, "status", f"unknown status {status!r}")])
    if status == Campaign.Status.OPEN and not campaign.items.exists():
        raise CampaignNotOpen("a campaign needs items before it can open")
    if status == Campaign.Status.OPEN and campaign.status != Campaign.Status.OPEN:
        campaign_launch_gates_check(task_set=campaign.task_set)
    campaign.status = status
    campaign.save(update_fields=["status"])
    return campaign


def calibration_example_add(
    *, campaign: Campaign, title: str, body: str, expected: str, explanation: str = "", position: int | None = None
) -> CalibrationExample:
    """A borderline case shown one key away from the labelling page (App. H.4)."""
    texts = {"title": title, "body": body, "expected": expected, "explanation": explanation}
    with campaign_texts_writing(campaign_id=campaign.pk) as matcher:  # records the revision it is checked at
        if leaks := texts_identity_problems(texts, matcher=matcher):
            raise ItemsInvalid([(0, field, message) for field, message in leaks.items()])
        if position is None:
            position = campaign.calibration_examples.count()
        return CalibrationExample.objects.create(
            campaign=campaign, title=title, body=body, expected=expected, explanation=explanation, position=position
        )


def campaign_assignment_ttl(campaign: Campaign) -> timedelta:
    """How long an assignment stays reserved (campaign override, else ATELIER_ASSIGNMENT_TTL_SECONDS)."""
    return timedelta(seconds=campaign.assignment_ttl_seconds or settings.ATELIER_ASSIGNMENT_TTL_SECONDS)


# ---------------------------------------------------------------------------------------------------
# Assignment: next item, expiry
# ---------------------------------------------------------------------------------------------------


def assignments_expire(*, campaign: Campaign | None = None, now: datetime | None = None) -> int:
    """Return overdue active assignments to the pool; the number returned.

    Each becomes *expired* with ``finished_at`` set to ``now`` (the record of the expiry), which frees
    its slot for the next taker; its labels, if any, are untouched (a submitted assignment is not
    active), and a late submission to it is refused from then on (:func:`_late_submission_check`).
    ``campaign=None`` sweeps every campaign (the periodic task); :func:`assignment_next` also calls it for one campaign
    when no free slot is left, so the pool never depends on the sweep running. Idempotent: a second
    call finds nothing to expire. Rows a submission is holding are skipped (SKIP LOCKED), so the
    sweep never waits for, or races, a late submission; the next sweep sees them again.
    """
    now = _now(now)
    overdue = Assignment.objects.filter(status=Assignment.Status.ACTIVE, expires_at__lte=now)
    if campaign is not None:
        overdue = overdue.filter(campaign=campaign)
    if _has_row_locks():
        overdue = overdue.select_for_update(skip_locked=True)
    expired = 0
    while True:
        # One transaction per batch: a long backlog never holds thousands of row locks at once.
        with transaction.atomic():
            rows = list(overdue.values_list("pk", "slot_id")[:EXPIRE_BATCH])
            ids = [pk for pk, _ in rows]
            if ids:
                # The rows are locked by this transaction (SQLite: the transaction serialises writers),
                # so every one is still active and its slot is freed with it.
                expired += Assignment.objects.filter(pk__in=ids, status=Assignment.Status.ACTIVE).update(
                    status=Assignment.Status.EXPIRED, finished_at=now
                )
                slots_freed(slot_ids=[slot for _, slot in rows])
        if len(ids) < EXPIRE_BATCH:
            break
    if expired:
        logger.info("returned %d overdue assignment(s) to the pool%s", expired,
                    f" in campaign {campaign.pk}" if campaign is not None else "")
    return expired


def _membership_missing(campaign_id: int, annotator: AbstractBaseUser) -> None:
    """The annotator is not listed on the campaign: refused (the gatekeeper says why) unless the campaign
    is open to all annotators, when they are added (the caller then looks again)."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        raise NotFound("No such campaign.")
    annotator_access_check(user=annotator, campaign=campaign)
    CampaignAnnotator.objects.get_or_create(campaign=campaign, annotator=annotator)


def _gold_due(campaign: Campaign, annotator: AbstractBaseUser, counts: tuple[int, int] | None = None) -> bool:
    """Gold makes up ``gold_rate`` of the items an annotator has been given, at positions drawn for each
    annotator (:mod:`annotation.gold_schedule`). ``counts``: (shown, shown gold) as the caller read them;
    else counted here."""
    if campaign.gold_rate <= 0:
        return False
    if counts is None:
        found = Assignment.objects.filter(
            campaign=campaign, annotator=annotator,
            status__in=Assignment.SEEN,
        ).aggregate(total=Count("pk"), gold=Count("pk", filter=Q(slot__isnull=True)))
        counts = (found["total"], found["gold"])
    total, gold = counts
    return gold_due(campaign_id=campaign.pk, annotator_id=annotator.pk, rate=campaign.gold_rate, shown=total,
                    shown_gold=gold)


def _seen_items(campaign: Campaign, annotator: AbstractBaseUser):
    return Assignment.objects.filter(
        campaign=campaign, annotator=annotator,
        status__in=Assignment.SEEN,
    ).values("item_id")


def _item_load(campaign: Campaign, item_id: int) -> Item:
    """The item with exactly the relations its kind shows (two small queries plan much faster than
    one join over every relation any kind might need), its campaign attached."""
    kind = kind_for(campaign.kind)
    item = item_with_content(item_id=item_id, relations=kind.content_relations, unread=kind.content_unread)
    item.campaign = campaign
    return item


def _attach_item(assignment: Assignment) -> None:
    """Load the assignment's item with exactly the relations its kind shows."""
    assignment.item = _item_load(assignment.campaign, assignment.item_id)


def _assignment_open(
    *, campaign: Campaign, item: Item, slot: ItemSlot | None, annotator: AbstractBaseUser, swapped: bool, now: datetime
) -> Assignment:
    kind = kind_for(campaign.kind)
    shown = kind.shown_content(item)
    if shown.digest != item.content_hash:
        _item_content_changed(item=item, new_hash=shown.digest, now=now)
    return row_create(
        Assignment, campaign=campaign, item=item, slot=slot, annotator=annotator, token=secrets.token_urlsafe(24),
        swapped=swapped if kind.two_sided else False, status=Assignment.Status.ACTIVE,
        content_hash=item.content_hash, task_set_version=item.task_set_version,
        media_sha256=shown.media, created_at=now, expires_at=now + campaign_assignment_ttl(campaign),
    )


class _ItemWithheld(Exception):
    """The item next-item was about to show is withheld (found now to show a model's name, or before):
    :func:`item_next` commits what was written (the withholding, the slot taken out of the queue) and
    looks again."""


def _shown_item_check(item: Item, revision: int, now: datetime) -> None:
    """The one blinding gatekeeper before an item is handed out (:func:`item_blinding_current`): one
    integer comparison when the catalogue has not changed since the item was checked."""
    if not item_blinding_current(item=item, kind=kind_for(item.campaign.kind), revision=revision, now=now):
        raise _ItemWithheld


def _take_gold(campaign: Campaign, annotator: AbstractBaseUser, now: datetime, rng: random.Random,
               revision: int) -> Assignment | None:
    item_id = _one(
        Item.objects.filter(campaign=campaign, is_gold=True, withheld_at__isnull=True)
        .exclude(pk__in=_seen_items(campaign, annotator))
        .order_by("position", "pk")
        .values_list("pk", flat=True)
    )
    if item_id is None:
        return None
    item = _item_load(campaign, item_id)
    _shown_item_check(item, revision, now)
    # Gold items have no slots (everyone sees them once); orientation is randomised.
    return _assignment_open(campaign=campaign, item=item, slot=None, annotator=annotator, swapped=rng.random() < 0.5, now=now)


def _assignment_on_slot(campaign: Campaign, annotator: AbstractBaseUser, slot: ItemSlot, now: datetime,
                        attempt: dict, revision: int) -> Assignment:
    """Open an assignment on a slot this transaction has just taken (its row locked, its flag cleared).
    A withheld item's slot stays taken: out of the queue."""
    # Should the flag be wrong, the one-live-assignment-per-slot unique index refuses our INSERT;
    # assignment_next repairs the flag and retries with a new transaction.
    attempt["slot_id"] = slot.pk
    if ItemSlot.item.is_cached(slot):  # read by the statement that took the slot
        item = slot.item
        item.campaign = campaign
    else:
        item = _item_load(campaign, slot.item_id)
    _shown_item_check(item, revision, now)
    # Counterbalancing: slot parity fixes the shown order, so an item's k annotators see it in
    # both orders (k = 3: two one way, one the other); the item's random bit decides which.
    swapped = item.orientation != (slot.index % 2 == 1)
    return _assignment_open(campaign=campaign, item=item, slot=slot, annotator=annotator, swapped=swapped, now=now)


def _hand_out(facts: NextItemFacts, annotator: AbstractBaseUser, now: datetime, rng: random.Random,
              attempt: dict) -> Assignment | None:
    """Next-item under the membership lock: the held assignment, else gold when due, else a free slot."""
    campaign = facts.campaign
    # The counts were read with the facts unless the campaign had no gold then (request_facts._CAMPAIGN_HAD_GOLD).
    gold_due = _gold_due(campaign, annotator, None if facts.seen is None else (facts.seen, facts.seen_gold))
    if gold_due:
        held, slot = next(iter(Assignment.objects.filter(campaign=campaign, annotator=annotator,
                                                         status=Assignment.Status.ACTIVE)
                               .values_list("pk", "expires_at", "slot_id")[:1]), None), None
    else:
        # Usually there is no held item (the page asks right after a submission): then the same
        # statement takes a free slot.
        kind = kind_for(campaign.kind)
        held, slot = active_or_free_slot_take(campaign_id=campaign.pk, annotator_id=annotator.pk,
                                              item_relations=kind.content_relations, item_unread=kind.content_unread)
    looked = held is None and not gold_due  # a free slot was looked for (and taken, if there was one)
    if held is not None:
        pk, expires_at, slot_id = held
        if expires_at > now:
            current = Assignment.objects.get(pk=pk)
            current.campaign = campaign
            _attach_item(current)
            try:
                _shown_item_check(current.item, facts.catalogue_revision, now)
            except _ItemWithheld:
                # Withholding ended the item's active assignments; this one too, should it have been
                # handed out in the instant the item was withheld. Its slot stays out of the queue.
                Assignment.objects.filter(pk=pk, status=Assignment.Status.ACTIVE).update(
                    status=Assignment.Status.STALE, finished_at=now)
                raise
            return current
        if Assignment.objects.filter(pk=pk, status=Assignment.Status.ACTIVE).update(
            status=Assignment.Status.EXPIRED, finished_at=now
        ):
            slots_freed(slot_ids=[slot_id])  # only if it was still ours to end (not swept)
        gold_due = _gold_due(campaign, annotator)  # the expired one no longer counts as shown
    if gold_due:
        assignment = _take_gold(campaign, annotator, now, rng, facts.catalogue_revision)
        if assignment is not None:
            return assignment
    if slot is None and not looked:
        # A taker that committed between our statement's snapshot and our lock is no race here: it
        # cleared the slot's is_free flag, and PostgreSQL re-checks the condition on the committed row
        # before locking it (READ COMMITTED), so the slot is skipped.
        slot = free_slot_take(campaign_id=campaign.pk, annotator_id=annotator.pk)
    if slot is None and assignments_expire(campaign=campaign, now=now):
        # Overdue assignments go back to the pool when they are needed: when no free slot is left
        # for this annotator (the owner's own overdue one is handled above).
        slot = free_slot_take(campaign_id=campaign.pk, annotator_id=annotator.pk)
    return None if slot is None else _assignment_on_slot(campaign, annotator, slot, now, attempt,
                                                         facts.catalogue_revision)


@dataclass(frozen=True)
class NextItem:
    """What next-item hands back: the assignment (None when nothing is left) and the progress bar."""

    assignment: Assignment | None
    progress: Progress


def assignment_next(
    *, campaign: Campaign, annotator: AbstractBaseUser, now: datetime | None = None, rng: random.Random | None = None
) -> Assignment | None:
    """The annotator's current item, or a new one they have not seen; None when nothing is left.

    Never hands out an item that already has ``k`` labels or ``k`` active assignments (one live
    assignment per slot, ``k`` slots per item — a database invariant), nor one whose shown text names a
    model of the catalogue as it is now (:mod:`annotation.blinding_recheck`), and asking twice returns
    the same open assignment (double clicks, retried requests).
    """
    return item_next(campaign_id=campaign.pk, annotator=annotator, now=now, rng=rng).assignment


def item_next(
    *, campaign_id: int, annotator: AbstractBaseUser, now: datetime | None = None, rng: random.Random | None = None
) -> NextItem:
    """:func:`assignment_next` by campaign id, with the progress bar after it: the request's facts (the
    campaign, the locked membership, the gatekeeper's, the counters) are one statement
    (:func:`annotation.request_facts.next_item_facts`). NotFound when there is no such campaign."""
    now = _now(now)
    rng = rng or random.SystemRandom()
    races = 0
    while races < RACE_RETRIES:
        attempt: dict = {}
        try:
            with transaction.atomic():
                facts = next_item_facts(campaign_id=campaign_id, annotator_id=annotator.pk)
                if facts is None or facts.membership_id is None:
                    _membership_missing(campaign_id, annotator)  # refused, or added: look again
                    races += 1
                    continue
                annotator_access_check(user=annotator, campaign=facts.campaign, membership_checked=True,
                                       facts=facts.access)
                if not campaign_texts_current(campaign=facts.campaign, revision=facts.catalogue_revision, now=now):
                    break  # its texts name a model now: the pause commits with this block, then refused below
                if facts.access.participant_at_quota:  # issue 25: no item past the quota, on any path
                    participant_complete_by_user(campaign_id=campaign_id, user_id=annotator.pk, now=now)
                    return NextItem(None, _progress_of(facts, annotator, None))
                try:
                    assignment = _hand_out(facts, annotator, now, rng, attempt)
                except _ItemWithheld:
                    # Committed here, one withheld item per transaction (its lock, the counters' row and
                    # the next item's locks are never held together); then look again. Each pass takes
                    # an item or a slot out of the queue for good, so the passes end.
                    continue
                return NextItem(assignment, _progress_of(facts, annotator, assignment))
        except IntegrityError:
            # Lost a race to a unique constraint (SQLite, or a slot whose free flag was wrong):
            # nothing was written; set the flag from the assignments and look again.
            if attempt.get("slot_id") is not None:
                slot_flag_repair(slot_id=attempt["slot_id"])
            races += 1
    else:  # the retries ran out (the loop ends by `break` only when the campaign was paused)
        raise Busy("Too many people are asking for items at this instant; try again.")
    raise CampaignPaused(CAMPAIGN_PAUSED_MESSAGE)


def _progress_of(facts: NextItemFacts, annotator: AbstractBaseUser, assignment: Assignment | None) -> Progress:
    """The progress bar after next-item, from the counters its facts read (the annotator holds an item
    now exactly when one was handed back: at most one active assignment each)."""
    if facts.labels is None:  # a campaign made around the services, nothing counted yet
        return campaign_progress(campaign=facts.campaign, annotator=annotator)
    return Progress(facts.done or 0, int(assignment is not None), _items_up_to(facts.slots, facts.campaign))


def assignment_for_token(*, token: str, annotator: AbstractBaseUser) -> Assignment:
    """The annotator's own assignment with this token (404 for anyone else's)."""
    assignment = _one(Assignment.objects.select_related("campaign").filter(token=token, annotator=annotator))
    if assignment is None:
        raise NotFound("No such assignment.")
    annotator_access_check(user=annotator, assignment=assignment)
    _attach_item(assignment)
    return assignment


def assignment_skip(*, token: str, annotator: AbstractBaseUser, reason: str = "", now: datetime | None = None) -> Assignment:
    """Skip an item: recorded, the slot returns to the pool, the annotator does not get it again."""
    now = _now(now)
    if not isinstance(reason, str) or len(reason) > SKIP_REASON_MAX:
        raise ItemsInvalid([(0, "reason", f"keep the skip reason under {SKIP_REASON_MAX} characters")])
    with transaction.atomic():
        # Race prevented: a skip and a submission of the same assignment both succeeding.
        assignment, access = _assignment_locked(token, annotator)
        annotator_access_check(user=annotator, assignment=assignment, facts=access)
        if assignment.status == Assignment.Status.SKIPPED:
            return assignment
        if assignment.status == Assignment.Status.SUBMITTED:
            raise AssignmentClosed("This item is already saved; it cannot be skipped.")
        if assignment.status == Assignment.Status.STALE:
            raise AssignmentClosed("This item changed; it was withdrawn.")
        was_active = assignment.status == Assignment.Status.ACTIVE
        assignment.status, assignment.finished_at, assignment.skip_reason = Assignment.Status.SKIPPED, now, reason.strip()
        try:
            with transaction.atomic():
                assignment.save(update_fields=["status", "finished_at", "skip_reason"])
        except IntegrityError as exc:  # the annotator holds this item again under a newer assignment
            raise AssignmentClosed("This item was handed to you again; skip it there.") from exc
        if was_active:  # an expired one's slot was freed when it expired (and may be someone else's now)
            slots_freed(slot_ids=[assignment.slot_id])
        campaign_version_bump(campaign_id=assignment.campaign_id)
    return assignment


# ---------------------------------------------------------------------------------------------------
# Submission
# ---------------------------------------------------------------------------------------------------


def _assignment_locked(token: str, annotator: AbstractBaseUser) -> tuple[Assignment, AccessFacts]:
    """The annotator's assignment with this token, its row locked, with the gatekeeper's facts."""
    found = assignment_facts(token=token, annotator_id=annotator.pk)
    if found is None:
        raise NotFound("No such assignment.")
    return found


@dataclass(frozen=True)
class Submission:
    label: Label
    replayed: bool
    #: The progress bar right after the submission, when the submission moved the counters.
    progress: Progress | None = None


def _same_answer(label: Label, values: Mapping[str, Any]) -> bool:
    """The label holds ``values`` now, or held them as first given (it has been changed since by its
    annotator, :mod:`annotation.label_revision`: a re-sent submission is still a re-send)."""
    if all(getattr(label, name) == value for name, value in values.items()):
        return True
    if label.version == 1:
        return False
    first = _one(LabelRevision.objects.filter(assignment_id=label.assignment_id, version=1).values_list("values", flat=True))
    return first is not None and all(first.get(name) == value for name, value in values.items())


def _parse_key(idempotency_key: Any) -> uuid.UUID:
    try:
        return uuid.UUID(str(idempotency_key))
    except (TypeError, ValueError) as exc:
        raise LabelInvalid({"idempotency_key": "must be a UUID generated by the page"}) from exc


def label_submit(
    *,
    token: str,
    annotator: AbstractBaseUser,
    idempotency_key: Any,
    answer: Any,
    time_on_item_ms: Any = None,
    now: datetime | None = None,
    is_simulated: bool = False,
) -> Submission:
    """Store the label of an assignment, exactly once.

    Re-sending the same submission (same idempotency key and answer) returns the stored label with
    ``replayed=True`` and writes nothing. A different answer for an assignment that already has a
    label is a :class:`SubmissionConflict`. A late submission (after the assignment time) is accepted
    while the assignment has not gone back to the queue, gold or not (:func:`_late_submission_check`).
    The label is pinned to the content hash and task-set version of what was shown; if the item changed in the meantime the submission is refused, never mixed.
    """
    key = _parse_key(idempotency_key)
    time_ms = validate_time_on_item(time_on_item_ms)
    now = _now(now)
    for attempt in range(RACE_RETRIES):
        try:
            with transaction.atomic():
                return _label_submit(token, annotator, key, answer, time_ms, now, is_simulated, first=attempt == 0)
        except IntegrityError:
            # A concurrent copy of this submission inserted first (SQLite has no row lock to wait
            # on), or the key was used before: the next pass looks for the stored label first.
            continue
    raise Busy("The server is busy saving this item; try again.")


def _label_submit(token, annotator, key, answer, time_ms, now, is_simulated, *, first: bool) -> Submission:
    # Race prevented (the row lock): two copies of one submission (double Enter, a retry after a lost
    # response) both inserting — the second waits for the first to commit, then replays its label.
    # The usual case, an active assignment in time, is marked submitted by the statement that locks
    # it (PostgreSQL); any refusal below rolls that back with the transaction.
    submitted = assignment_submit_if_active(token=token, annotator_id=annotator.pk, now=now) if first else None
    assignment, access = submitted or _assignment_locked(token, annotator)
    annotator_access_check(user=annotator, assignment=assignment, facts=access)
    _attach_item(assignment)
    kind = kind_for(assignment.campaign.kind)
    values = kind.validate(answer, item=assignment.item, assignment=assignment)
    if submitted is None:
        replayed = _submission_replayed(assignment, kind.label_model, key, values, looked_up=not first)
        if replayed is not None:
            return replayed
        _submission_open_check(assignment, now)
    if assignment.item.withheld_at is not None:
        # Handed out in the instant its item was withheld (withholding ends the others' assignments):
        # a new label is not taken; a re-sent one was replayed above.
        raise AssignmentClosed("This item was withdrawn; your answer was not saved.")
    _content_unchanged_check(assignment, kind, now)
    was_active = submitted is not None or assignment.status == Assignment.Status.ACTIVE
    if submitted is None:
        assignment.status, assignment.finished_at = Assignment.Status.SUBMITTED, now
        assignment.save(update_fields=["status", "finished_at"])
    # Progress counters move in the submission's own transaction (no aggregate on read); the label is
    # written by the same statement (PostgreSQL).
    insert = row_insert(
        kind.label_model, assignment=assignment, campaign=assignment.campaign, item=assignment.item, annotator=annotator,
        idempotency_key=key, content_hash=assignment.content_hash, task_set_version=assignment.task_set_version,
        time_on_item_ms=time_ms, created_at=now, is_simulated=is_simulated, **values,
    )
    counts = submission_counted(campaign_id=assignment.campaign_id, annotator_id=assignment.annotator_id,
                                labels=int(assignment.slot_id is not None), label=insert)
    label = insert[0]
    # Submitting their one active assignment leaves the annotator none; a late one may be saved while
    # they hold another (then the selector says).
    progress = Progress(counts.done, 0, _items_up_to(counts.slots, assignment.campaign)) if was_active else None
    return Submission(label, replayed=False, progress=progress)


def _submission_replayed(assignment: Assignment, label_model, key: uuid.UUID, values: Mapping[str, Any], *,
                         looked_up: bool) -> Submission | None:
    """The stored label when this submission was saved before (a re-sent one); SubmissionConflict when
    the assignment or the key already has another. An active assignment has no label yet (a label is
    written with its assignment's move to submitted), so on a first pass nothing is looked up for it: a
    key used before then fails the label's unique index, and the retry (``looked_up``) looks."""
    if assignment.status == Assignment.Status.ACTIVE and not looked_up:
        return None
    existing = list(label_model.objects.filter(Q(assignment=assignment) | Q(idempotency_key=key))[:2])
    mine = next((label for label in existing if label.assignment_id == assignment.pk), None)
    if mine is not None:
        if mine.idempotency_key == key and _same_answer(mine, values):
            return Submission(mine, replayed=True)
        raise SubmissionConflict("This item was already saved with a different answer; the change was not saved.")
    if existing:
        raise SubmissionConflict("This submission key was already used for another item.")
    return None


def _submission_open_check(assignment: Assignment, now: datetime) -> None:
    """The assignment can still take its label (not skipped or withdrawn; late only while still held)."""
    if assignment.status == Assignment.Status.SKIPPED:
        raise AssignmentClosed("You skipped this item.")
    if assignment.status == Assignment.Status.STALE:
        raise AssignmentClosed("This item changed while you were working; your answer was not saved.")
    if assignment.status == Assignment.Status.EXPIRED or assignment.expires_at <= now:
        _late_submission_check(assignment)


def _content_unchanged_check(assignment: Assignment, kind, now: datetime) -> None:
    """What the item shows now is what was handed out (the label is pinned to its content hash)."""
    current = kind.shown_content(assignment.item).digest
    if current != assignment.content_hash:
        _item_content_changed(item=assignment.item, new_hash=current, now=now)
        raise AssignmentClosed("This item changed while you were working; your answer was not saved.")


#: The one answer to a late label whose assignment went back to the queue, gold or regular alike.
LATE_REFUSED = "Your time on this item ran out and it went back to the queue; your answer was not saved."


def _late_submission_check(assignment: Assignment) -> None:
    """A label after the assignment time: saved while the assignment is still the annotator's (overdue but
    not yet returned to the queue: its slot, if any, is still theirs, so nobody else can have taken it);
    refused, with nothing written, once it went back to the queue (expired by the sweep, by the
    annotator's own next item, or by a crowd participant's leaving or a verdict).

    The rule reads the assignment alone, never its item, so a late answer to a gold item (which has no
    slot) is refused or saved exactly as one to a regular item: a rule that asked whether the slot went
    to someone else refused only regular items, so a refusal told the annotator which items were not
    gold, and a gold answer given any time later (after comparing notes) still counted in their gold score."""
    if Assignment.objects.filter(
        item_id=assignment.item_id, annotator_id=assignment.annotator_id,
        status__in=Assignment.SEEN,
    ).exclude(pk=assignment.pk).exists():
        raise AssignmentClosed("This item was handed to you again; answer it there.")
    if assignment.status == Assignment.Status.EXPIRED:
        raise AssignmentClosed(LATE_REFUSED)


# ---------------------------------------------------------------------------------------------------
# Adjudication
# ---------------------------------------------------------------------------------------------------


def adjudication_request(*, item: Item, researcher: AbstractBaseUser, note: str = "", now: datetime | None = None) -> Adjudication:
    """Send an item without a majority to adjudication by a researcher."""
    from annotation.selectors import item_consensus

    if not is_researcher(researcher):
        raise NotAllowed("Researchers only.")
    consensus = item_consensus(item=item)
    if not consensus.complete:
        raise ItemsInvalid([(0, "item", f"the item has {consensus.n_labels} of {item.campaign.k} labels; wait until it is complete")])
    if consensus.majority is not None:
        raise ItemsInvalid([(0, "item", f"the annotators reached a majority ({consensus.majority}); nothing to adjudicate")])
    adjudication, created = Adjudication.objects.get_or_create(
        item=item, defaults={"requested_by": researcher, "requested_at": _now(now), "request_note": note[:500]}
    )
    if created:
        campaign_version_bump(campaign_id=item.campaign_id)
    return adjudication


def adjudication_resolve(
    *, adjudication: Adjudication, researcher: AbstractBaseUser, outcome: Any, note: str = "", now: datetime | None = None
) -> Adjudication:
    if not is_researcher(researcher):
        raise NotAllowed("Researchers only.")
    kind = kind_for(adjudication.item.campaign.kind)
    try:
        parsed = kind.parse_answer(outcome)
    except ValueError as exc:
        raise ItemsInvalid([(0, "outcome", str(exc))]) from exc
    adjudication.outcome, adjudication.resolved_by, adjudication.resolved_at = parsed, researcher, _now(now)
    adjudication.resolution_note = note
    adjudication.save(update_fields=["outcome", "resolved_by", "resolved_at", "resolution_note"])
    campaign_version_bump(campaign_id=adjudication.item.campaign_id)
    return adjudication


# ---------------------------------------------------------------------------------------------------
# Renders for the demo (placeholders; real renders come from leaderboard imports)
# ---------------------------------------------------------------------------------------------------

PLACEHOLDER_RENDERER = "schematic-demo"


def render_placeholder_create(*, response: Response, seed: int = 0) -> Render:
    """A clearly labelled placeholder render of a response's plan, drawn offline by
    :func:`engine.schematic_render.schematic_png` (no text-to-image model). Idempotent."""
    from engine.schematic_render import schematic_png, schematic_prompt

    existing = Render.objects.filter(response=response, renderer=PLACEHOLDER_RENDERER, seed=seed).first()
    if existing is not None:
        return existing
    png = schematic_png(core_idea=response.core_idea, visual_description=response.visual_description, seed=seed)
    render = Render(
        response=response, renderer=PLACEHOLDER_RENDERER, seed=seed, is_placeholder=True,
        prompt=schematic_prompt(core_idea=response.core_idea, visual_description=response.visual_description),
        image_sha256=hashlib.sha256(png).hexdigest(),
    )
    # An opaque file name: never the model, task or response (blinding covers file names too).
    render.image.save(f"{secrets.token_hex(12)}.png", ContentFile(png), save=False)
    render.save()
    return render



__all__ = [
    "Submission",
    "adjudication_request",
    "adjudication_resolve",
    "assignment_for_token",
    "assignment_next",
    "assignment_skip",
    "assignments_expire",
    "calibration_example_add",
    "campaign_annotators_add",
    "campaign_assignment_ttl",
    "campaign_create",
    "campaign_launch_gates_check",
    "campaign_status_set",
    "label_submit",
    "render_placeholder_create",
]

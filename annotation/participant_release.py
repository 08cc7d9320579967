"""What ends a panel participant's work on every path (issue 25): their held items released, completion
at their quota, and the end of their path when the study ends under them (closed, or full). Below
:mod:`annotation.services` (which completes a participant at their quota on the general annotator API) and
:mod:`annotation.participants` (the study's own pages, returns, verdicts).
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from annotation.kinds import kind_for
from annotation.models import Assignment, Campaign, CampaignAnnotator
from annotation.panel_models import Participant
from annotation.progress import campaign_version_bump
from annotation.slot_queue import slots_freed


def participant_locked(participant_id: int) -> Participant:
    # Race prevented: two requests of one participant (or a researcher's action) moving their state at
    # once; and (PostgreSQL) a next-item in flight handing out an item after a return or verdict: next-item
    # locks this row in its facts statement (annotation.request_facts), so it waits for this transaction
    # and then reads the row as committed.
    return Participant.objects.select_for_update().select_related("study").get(pk=participant_id)


def participant_held_release(participant: Participant, now: datetime) -> int:
    """End the participant's active assignments and free their slots (inside the caller's transaction,
    which holds the participant's row lock: :func:`participant_locked`)."""
    # The membership row too: on SQLite (no row locks) the writes serialise anyway; on PostgreSQL the
    # participant row lock already orders a next-item after this transaction, and a next-item that
    # came first has committed its item before we get here, so the item is found below and released.
    CampaignAnnotator.objects.select_for_update().filter(campaign_id=participant.campaign_id,
                                                         annotator_id=participant.user_id).first()
    held = list(Assignment.objects.select_for_update().filter(
        campaign_id=participant.campaign_id, annotator_id=participant.user_id, status=Assignment.Status.ACTIVE,
    ).values_list("pk", "slot_id"))
    if not held:
        return 0
    ended = Assignment.objects.filter(pk__in=[pk for pk, _ in held], status=Assignment.Status.ACTIVE).update(
        status=Assignment.Status.EXPIRED, finished_at=now)
    slots_freed(slot_ids=[slot for _, slot in held])
    campaign_version_bump(campaign_id=participant.campaign_id)
    return ended


def participant_complete_by_user(*, campaign_id: int, user_id: int, now: datetime) -> Participant | None:
    """Complete the user's participant of the campaign if they are working (idempotent); None if the user
    is no participant there."""
    pk = Participant.objects.filter(campaign_id=campaign_id, user_id=user_id).values_list("pk", flat=True).first()
    return None if pk is None else participant_complete_locked(participant_id=pk, now=now)


def participant_complete_locked(*, participant_id: int, now: datetime) -> Participant:
    """Done: the completion code is theirs; anything they hold is released. Idempotent."""
    with transaction.atomic():
        participant = participant_locked(participant_id)
        if participant.state == Participant.State.WORKING:
            participant_held_release(participant, now)
            participant.state, participant.finished_at = Participant.State.COMPLETED, now
            participant.save(update_fields=["state", "finished_at"])
    return participant


def participant_work_began(participant: Participant) -> bool:
    """They labelled an item (a label an edit of its item made stale included) or skipped one."""
    label_model = kind_for(Campaign.objects.values_list("kind", flat=True).get(pk=participant.campaign_id)).label_model
    return (label_model.objects.filter(campaign_id=participant.campaign_id, annotator_id=participant.user_id).exists()
            or Assignment.objects.filter(campaign_id=participant.campaign_id, annotator_id=participant.user_id,
                                         status=Assignment.Status.SKIPPED).exists())


def participant_study_ended(*, participant_id: int, now: datetime) -> Participant:
    """The study ended under a participant on their path: the campaign closed (or went back to draft), or
    nothing is left to hand them. Someone who did some work is completed (their code, as when the items
    run out). Someone still in consent, instructions or training, or at work with nothing done, is
    *closed before work*, with no code: on Prolific and MTurk a code is full pay, so they are told to
    return the submission / HIT, and the pay report shows their time for the researcher to pay as a
    bonus. Idempotent; a verdict or an ending already reached is kept."""
    with transaction.atomic():
        participant = participant_locked(participant_id)
        if participant.verdict or participant.state not in (Participant.State.TRAINING, Participant.State.WORKING):
            return participant
        participant_held_release(participant, now)
        if participant.state == Participant.State.WORKING and participant_work_began(participant):
            participant.state = Participant.State.COMPLETED
        else:
            participant.state_before, participant.state = participant.state, Participant.State.CLOSED_BEFORE_WORK
        participant.finished_at = now
        participant.save(update_fields=["state_before", "state", "finished_at"])
    return participant


__all__ = ["participant_complete_by_user", "participant_complete_locked", "participant_held_release",
           "participant_locked", "participant_study_ended", "participant_work_began"]

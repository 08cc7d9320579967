"""The one gatekeeper of every annotator endpoint (queue, labelling page, media, next, progress,
submit, skip).

Every request re-checks everything, one condition per line, so that a token handed out earlier
carries no access of its own: closing a campaign, removing a membership or taking a user out of
the annotator group takes effect on the very next request (zulip's ``access_*`` habit; the tests
cover each line). Services that write call it inside their transaction, after locking the
assignment row, so the check and the write see the same state.

The busiest requests (next item, submit, skip) read what the checks ask the database — the
annotator role and the membership — in the same statement that locks their row
(:mod:`annotation.request_facts`) and hand them in as :class:`AccessFacts`; the checks themselves are
the same lines either way.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils import timezone

from annotation.errors import (
    CAMPAIGN_PAUSED_MESSAGE,
    AssignmentClosed,
    CampaignNotOpen,
    CampaignPaused,
    NotAllowed,
    NotFound,
)
from annotation.models import Assignment, Campaign, CampaignAnnotator
from annotation.panel_models import Participant
from annotation.participant_state import participant_at_work_filter
from leaderboard.roles import is_annotator


@dataclass(frozen=True)
class AccessFacts:
    """The facts the gatekeeper would otherwise query, read by the caller in this request: whether the
    user is in the annotator group, whether they are listed on the campaign, and whether they are its
    panel participant at work."""

    is_annotator: bool
    is_member: bool
    #: The user is this campaign's panel participant, at work on it (issue 25: past the training, not
    #: finished, left or refused, within their time limit). False for every other campaign.
    is_participant: bool = False
    #: That participant's submitted items reached their study's quota: they get no further item
    #: (:func:`annotation.services.item_next` completes them), on every path. Read only by next-item.
    participant_at_quota: bool = False


def annotator_access_check(
    *,
    user: AbstractBaseUser | AnonymousUser,
    campaign: Campaign | None = None,
    assignment: Assignment | None = None,
    membership_checked: bool = False,
    facts: AccessFacts | None = None,
) -> None:
    """Raise unless ``user`` may act as an annotator here: on the queue (neither given), on a
    campaign, or on an assignment (its campaign is checked too). ``membership_checked``: the caller
    checks membership itself, under its lock (:func:`annotation.services.assignment_next`).
    ``facts``: the role and membership as this request read them (else they are queried here)."""
    if assignment is not None:
        campaign = assignment.campaign
    if not user.is_authenticated:
        raise NotAllowed("Log in first.")
    if not (facts.is_annotator if facts is not None else is_annotator(user)) and not _participant_at_work(
        user, campaign, facts
    ):
        raise NotAllowed("Annotators only.")
    if assignment is not None and assignment.annotator_id != user.pk:
        raise NotFound("No such assignment.")
    if assignment is not None and assignment.status == Assignment.Status.STALE:
        raise AssignmentClosed("This item changed and was withdrawn; nothing was saved.")
    if campaign is None:
        return
    if campaign.status != Campaign.Status.OPEN:
        raise CampaignNotOpen("This campaign is not open.")
    if campaign.texts_paused_at is not None:  # its texts name a model (annotation.blinding_recheck)
        raise CampaignPaused(CAMPAIGN_PAUSED_MESSAGE)
    if campaign.open_to_all_annotators or membership_checked:
        return
    if not (facts.is_member if facts is not None
            else CampaignAnnotator.objects.filter(campaign=campaign, annotator=user).exists()):
        raise NotAllowed("This campaign is not open to you.")


def _participant_at_work(user, campaign: Campaign | None, facts: AccessFacts | None) -> bool:
    """A panel participant acts as an annotator on their own campaign only, and only while at work
    (:func:`annotation.participants.participant_at_work_filter`); never on the queue or elsewhere."""
    if campaign is None:
        return False
    if facts is not None:
        return facts.is_participant
    return Participant.objects.filter(participant_at_work_filter(now=timezone.now()), user=user, campaign=campaign).exists()


__all__ = ["AccessFacts", "annotator_access_check"]

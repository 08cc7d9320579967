"""The one gatekeeper of every annotator endpoint (queue, labelling page, media, next, progress,
submit, skip).

Every request re-checks everything, one condition per line, so that a token handed out earlier
carries no access of its own: closing a campaign, removing a membership or taking a user out of
the annotator group takes effect on the very next request (zulip's ``access_*`` habit; the tests
cover each line). Services that write call it inside their transaction, after locking the
assignment row, so the check and the write see the same state.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from annotation.errors import AssignmentClosed, CampaignNotOpen, NotAllowed, NotFound
from annotation.models import Assignment, Campaign, CampaignAnnotator
from leaderboard.roles import is_annotator


def annotator_access_check(
    *,
    user: AbstractBaseUser | AnonymousUser,
    campaign: Campaign | None = None,
    assignment: Assignment | None = None,
    membership_checked: bool = False,
) -> None:
    """Raise unless ``user`` may act as an annotator here: on the queue (neither given), on a
    campaign, or on an assignment (its campaign is checked too). ``membership_checked``: the caller
    checks membership itself, under its lock (:func:`annotation.services.assignment_next`)."""
    if assignment is not None:
        campaign = assignment.campaign
    if not user.is_authenticated:
        raise NotAllowed("Log in first.")
    if not is_annotator(user):
        raise NotAllowed("Annotators only.")
    if assignment is not None and assignment.annotator_id != user.pk:
        raise NotFound("No such assignment.")
    if assignment is not None and assignment.status == Assignment.Status.STALE:
        raise AssignmentClosed("This item changed and was withdrawn; nothing was saved.")
    if campaign is None:
        return
    if campaign.status != Campaign.Status.OPEN:
        raise CampaignNotOpen("This campaign is not open.")
    if campaign.open_to_all_annotators or membership_checked:
        return
    if not CampaignAnnotator.objects.filter(campaign=campaign, annotator=user).exists():
        raise NotAllowed("This campaign is not open to you.")


__all__ = ["annotator_access_check"]

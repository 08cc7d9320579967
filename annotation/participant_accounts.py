"""Which accounts are crowd participants' (issue 25): the one gatekeeper of that question, and its twin
as a filter of accounts. Asked by the login middleware (:class:`evalsite.middleware.LoginRequiredEverywhere`:
a participant opens their study's pages only), the page header (:mod:`annotation.viewer`: "Participant",
never the internal ``panel-<campaign>-<random>`` name), the study's entry (a site account's session is not
replaced: :mod:`annotation.panel_views`), the admin's choice of a campaign's annotators
(:mod:`annotation.admin`: never another study's participant), and who may hold an API token
(:func:`leaderboard.roles.token_holder_accounts`, which may not import this app: the filter is registered
with it from :meth:`annotation.apps.AnnotationConfig.ready`).

A participant's account is made at their first entry with an unusable password
(:func:`annotation.participants.participant_enter`): the study's entry link is its only way in, and the
Participant row says whose it is. An account with a usable password is therefore no participant's, and
is answered without a query: every researcher's and annotator's request asks the database nothing here.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from annotation.models import Campaign, CampaignAnnotator
from annotation.panel_models import Participant


def account_participant(user: AbstractBaseUser | AnonymousUser) -> Participant | None:
    """The crowd participant whose account ``user`` is; None for anyone else (nobody signed in, an
    account with a usable password, an account without a Participant row)."""
    if not user.is_authenticated:
        return None
    if user.has_usable_password():
        return None
    try:
        # The reverse one-to-one caches its answer, the row or its absence, on the user: the middleware
        # and the header of one request ask the database once between them.
        return user.panel_participant
    except Participant.DoesNotExist:
        return None


def is_participant_account(user: AbstractBaseUser | AnonymousUser) -> bool:
    return account_participant(user) is not None


def participant_accounts_filter() -> Q:
    """:func:`account_participant`'s rule as a filter of accounts (users), for choices over many."""
    return Q(password__startswith=UNUSABLE_PASSWORD_PREFIX) & Q(panel_participant__isnull=False)


def annotator_choices(*, campaign: Campaign | None) -> QuerySet:
    """The accounts a campaign's annotators are chosen from (the admin's annotator box): every account but
    a crowd participant's, whose study alone it may enter; and ``campaign``'s own participants, whom their
    entry listed there, so saving the campaign keeps them."""
    own = Q(panel_participant__campaign_id=campaign.pk) if campaign is not None and campaign.pk else Q(pk__in=[])
    return get_user_model().objects.filter(~participant_accounts_filter() | own)


def foreign_participant_memberships(*, campaign: Campaign) -> QuerySet[CampaignAnnotator]:
    """``campaign``'s annotator rows that list another study's participant, their account's participant and
    its campaign attached: rows an earlier admin listed before :func:`annotator_choices` left such accounts
    out. They give that participant nothing here (:func:`annotation.access.annotator_access_check` admits a
    participant on their own campaign only, and the login middleware keeps their account to their study's
    pages), but the annotator box cannot take them back: the admin shows them read-only, for removal."""
    accounts = participant_accounts_filter()
    return (CampaignAnnotator.objects.filter(campaign_id=campaign.pk)
            .filter(annotator__in=get_user_model().objects.filter(accounts))
            .exclude(annotator__panel_participant__campaign_id=campaign.pk)
            .select_related("annotator__panel_participant__campaign").order_by("pk"))


__all__ = ["account_participant", "annotator_choices", "foreign_participant_memberships", "is_participant_account",
           "participant_accounts_filter"]

"""Whose account is a crowd participant's (annotation/participant_accounts.py): the gatekeeper's cases, its
filter twin, and its callers (the login middleware, the page header) answering each account alike."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, Group
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotation import participants
from annotation.models import Campaign
from annotation.panels import PanelEntry
from annotation.participant_accounts import (
    account_participant,
    annotator_choices,
    is_participant_account,
    participant_accounts_filter,
)
from leaderboard.roles import ROLE_NAMES, token_holder_accounts
from leaderboard.services.catalogue import role_groups_ensure
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limit():
    cache.clear()


def _crowd_campaign(catalogue):
    campaign = pairwise_campaign(catalogue, k=2, n_items=2)
    participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="You agree.")
    return campaign


def _participant(campaign, panel_id="P1"):
    return participants.participant_enter(study=campaign.panel_study, entry=PanelEntry(panel_id, "S", "X")).participant


def _without_password(username):
    user = UserFactory(username=username)
    user.set_unusable_password()
    user.save(update_fields=["password"])
    return user


@pytest.fixture
def accounts():
    """alice signs in with a password; a crowd participant's account; sso has no usable password and no
    Participant row; the participant whose account an admin gave a password (no longer the entry's alone)."""
    catalogue = Catalogue(n_tasks=1)
    participant = _participant(_crowd_campaign(catalogue))
    with_password = _participant(_crowd_campaign(catalogue), "P2")
    with_password.user.set_password("a password")
    with_password.user.save(update_fields=["password"])
    _crowd_campaign(catalogue)  # a third study, whose link each account opens
    return {"password": UserFactory(username="alice", role="annotator"), "participant": participant.user,
            "no password, no participant": _without_password("sso"), "participant given a password": with_password.user}


def test_a_password_account_is_no_participants_and_costs_no_query(accounts, django_assert_num_queries):
    user = get_user_model().objects.get(pk=accounts["password"].pk)
    with django_assert_num_queries(0):
        assert account_participant(user) is None


def test_a_participants_account_answers_their_participant(accounts):
    participant = account_participant(get_user_model().objects.get(pk=accounts["participant"].pk))
    assert participant is not None and participant.user_id == accounts["participant"].pk


def test_an_account_without_a_usable_password_or_participant_row_is_no_participants(accounts):
    assert account_participant(accounts["no password, no participant"]) is None


def test_an_account_with_a_password_is_no_participants_even_with_a_row(accounts):
    assert account_participant(accounts["participant given a password"]) is None


def test_nobody_signed_in_is_no_participant():
    assert account_participant(AnonymousUser()) is None


def test_the_filter_names_the_accounts_the_gatekeeper_names(accounts):
    named = set(get_user_model().objects.filter(participant_accounts_filter()).values_list("pk", flat=True))
    assert named == {user.pk for user in accounts.values() if is_participant_account(user)}
    assert named == {accounts["participant"].pk}


def test_the_accounts_that_may_hold_an_api_token_are_every_account_the_gatekeeper_names_no_participants(accounts):
    """leaderboard.roles.token_holder_accounts (the API-token admin's choices and the token service) follows
    the same rule, though leaderboard may not import this app: an account without a usable password that
    is no participant's may hold a token, and a participant's account may not even with a role and staff."""
    given_a_role = accounts["participant"]
    role_groups_ensure()
    given_a_role.groups.add(*Group.objects.filter(name__in=ROLE_NAMES))
    given_a_role.is_staff = True
    given_a_role.save(update_fields=["is_staff"])
    users = [get_user_model().objects.get(pk=user.pk) for user in accounts.values()]
    holders = set(token_holder_accounts().filter(pk__in=[u.pk for u in users]).values_list("pk", flat=True))
    assert holders == {user.pk for user in users if not is_participant_account(user)}
    assert given_a_role.pk not in holders and accounts["no password, no participant"].pk in holders


def test_annotator_choices_leave_out_other_studies_participants_and_keep_the_campaigns_own():
    catalogue = Catalogue(n_tasks=1)
    campaign, other = _crowd_campaign(catalogue), _crowd_campaign(catalogue)
    own, foreign = _participant(campaign), _participant(other)
    alice, sso = UserFactory(username="alice", role="annotator"), _without_password("sso")
    chosen = set(annotator_choices(campaign=campaign))
    assert {alice, sso, own.user} <= chosen and foreign.user not in chosen
    assert not {own.user, foreign.user} & set(annotator_choices(campaign=None))


def _header_name(response) -> str:
    return re.search(r'<span class="who">([^<]*)</span>', response.content.decode())[1]


@pytest.mark.parametrize("account", ["password", "participant", "no password, no participant",
                                     "participant given a password"])
def test_the_middleware_the_header_and_the_entry_answer_each_account_as_the_gatekeeper_does(accounts, account):
    """The login middleware (a participant opens their study's pages only), the page header ("Participant")
    and a study's entry link (a site account's session is not replaced) ask the same question: an account
    one treats as a participant's, the others do too."""
    user = accounts[account]
    client = Client()
    client.force_login(user)
    response = client.get("/account/api-tokens/")
    refused = response.status_code == 403 and b"belongs to a study" in response.content
    named_participant = _header_name(response) == "Participant"
    link = Campaign.objects.order_by("pk").last().panel_study.entry_token
    entry = client.get(reverse("annotation:panel_entry", args=[link]),
                       {"PROLIFIC_PID": "P3", "STUDY_ID": "S", "SESSION_ID": "X"})
    session_replaced = entry.status_code != 409
    assert refused == named_participant == session_replaced == is_participant_account(user)
    assert named_participant == (account == "participant")

"""Signing in with a token: only while its account may hold one (leaderboard.roles.token_holder_accounts),
whatever it was when the token was made, and never with a token made for a crowd participant's account."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import Group
from django.test import RequestFactory
from rest_framework.exceptions import AuthenticationFailed

from annotation import participants
from annotation.panels import PanelEntry
from leaderboard.api_tokens.authentication import ApiTokenAuthentication
from leaderboard.api_tokens.models import ApiToken
from leaderboard.api_tokens.services import TOKEN_PREFIX, api_token_create, token_digest
from leaderboard.roles import ROLE_NAMES
from leaderboard.services.catalogue import role_groups_ensure
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

revoke_migration = importlib.import_module("annotation.migrations.0019_revoke_participants_api_tokens")


@pytest.fixture
def participant_account():
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=2)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="You agree.")
    return participants.participant_enter(study=study, entry=PanelEntry("5f" + "0" * 22, "S", "X")).participant.user


def _sign_in(secret: str):
    request = RequestFactory().get("/api/v1/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    return ApiTokenAuthentication().authenticate(request)


def _legacy_token(user) -> str:
    """A token stored as the service stored one before it refused participants' accounts."""
    secret = f"{TOKEN_PREFIX}legacy-{user.pk}"
    ApiToken.objects.create(user=user, name="old", prefix=secret[:12], key_sha256=token_digest(secret))
    return secret


def _give_every_role_and_staff(user) -> None:
    role_groups_ensure()
    user.groups.add(*Group.objects.filter(name__in=ROLE_NAMES))
    user.is_staff = True
    user.save(update_fields=["is_staff"])


def test_a_token_holder_signs_in():
    user = UserFactory(username="ann", role="annotator")
    _, secret = api_token_create(user=user, name="script")
    assert _sign_in(secret)[0] == user


def test_a_participants_old_token_signs_in_as_nobody_even_once_the_account_has_every_role(participant_account):
    secret = _legacy_token(participant_account)
    _give_every_role_and_staff(participant_account)
    with pytest.raises(AuthenticationFailed):
        _sign_in(secret)


def test_a_holders_token_stops_once_the_account_is_a_participants(participant_account):
    """The reverse: a token made while the account could hold one grants nothing once it is a participant's."""
    participant_account.set_password("a password")
    participant_account.save(update_fields=["password"])
    _, secret = api_token_create(user=participant_account, name="script")
    assert _sign_in(secret)[0] == participant_account
    participant_account.set_unusable_password()
    participant_account.save(update_fields=["password"])
    with pytest.raises(AuthenticationFailed):
        _sign_in(secret)


def test_an_inactive_accounts_token_signs_in_as_nobody():
    user = UserFactory(username="ann", role="annotator")
    _, secret = api_token_create(user=user, name="script")
    user.is_active = False
    user.save(update_fields=["is_active"])
    with pytest.raises(AuthenticationFailed):
        _sign_in(secret)


def test_the_migration_revokes_participants_old_tokens_so_a_password_given_later_wakes_none(participant_account):
    """A participant's account given a password (and a role) counts as no participant's: its old token, made for
    the participant, must not act for it. The migration revokes every token of an account with a Participant
    row; other accounts' tokens are left alone."""
    old = _legacy_token(participant_account)
    _, kept = api_token_create(user=UserFactory(username="ann", role="annotator"), name="script")
    revoke_migration.participants_tokens_revoke(apps, None)
    participant_account.set_password("a password")
    participant_account.save(update_fields=["password"])
    _give_every_role_and_staff(participant_account)
    with pytest.raises(AuthenticationFailed):
        _sign_in(old)
    assert _sign_in(kept)[0].username == "ann"

"""Making a token: never for a crowd participant's internal account, by any way in (the service, so the
page, the admin and ``manage.py api_token_create`` alike)."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation import participants
from annotation.panels import PanelEntry
from leaderboard.api_tokens.models import ApiToken
from leaderboard.api_tokens.services import api_token_create
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def participant_account():
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=2)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="You agree.")
    return participants.participant_enter(study=study, entry=PanelEntry("5f" + "0" * 22, "S", "X")).participant.user


def test_a_participants_account_gets_no_token_and_nothing_is_stored(participant_account):
    with pytest.raises(PermissionDenied, match="may not hold an API token"):
        api_token_create(user=participant_account, name="script")
    assert not ApiToken.objects.exists()


def test_the_command_refuses_a_participants_account_naming_it(participant_account):
    with pytest.raises(CommandError, match=participant_account.username):
        call_command("api_token_create", participant_account.username)
    assert not ApiToken.objects.exists()


def test_an_annotator_with_a_password_gets_a_token():
    token, secret = api_token_create(user=UserFactory(username="ann", role="annotator"), name="script")
    assert secret.startswith("atl_") and token.user.username == "ann"

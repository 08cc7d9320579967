"""The API-token admin: an admin makes a token for an account that may hold one, never for a crowd
participant's internal account, and a token never moves to another user."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied

from annotation import participants
from annotation.panels import PanelEntry
from leaderboard.api_tokens.services import api_token_create
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _user_choices(body: str) -> set[str] | None:
    select = re.search(r'<select name="user"[^>]*>(.*?)</select>', body, re.S)
    return None if select is None else set(re.findall(r'<option value="\d+"[^>]*>([^<]+)</option>', select[1]))


def test_the_user_choices_are_the_accounts_that_may_hold_a_token_not_participants(client, adam, rita, alice):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=2)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="You agree.")
    participant = participants.participant_enter(study=study, entry=PanelEntry("5f" + "0" * 22, "S", "X")).participant
    scripts = UserFactory(username="scripts", role="researcher")  # a role, no password: a token is its way in
    scripts.set_unusable_password()
    scripts.save(update_fields=["password"])
    UserFactory(username="newcomer")  # no role yet: signs in with a password, so the token page is theirs
    client.force_login(adam)
    shown = _user_choices(client.get("/admin/api_tokens/apitoken/add/").content.decode())
    assert shown == {"adam", "rita", "alice", "scripts", "newcomer"}
    assert participant.user.username not in shown


def test_a_participants_account_is_refused_as_a_tokens_user(client, adam):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=2)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="You agree.")
    participant = participants.participant_enter(study=study, entry=PanelEntry("5f" + "0" * 22, "S", "X")).participant
    client.force_login(adam)
    response = client.post("/admin/api_tokens/apitoken/add/", {"user": participant.user.pk, "name": "x"})
    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not participant.user.api_tokens.exists()


def test_a_participants_account_given_a_role_and_staff_is_still_not_offered_and_gets_no_token(client, adam):
    """Whose account is a participant's is the annotation app's gatekeeper's to say (a role given later does not
    open the site to it, so it does not open the API either)."""
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=2)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="You agree.")
    user = participants.participant_enter(study=study, entry=PanelEntry("5f" + "0" * 22, "S", "X")).participant.user
    user.groups.add(Group.objects.get(name="researcher"))
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    client.force_login(adam)
    assert user.username not in _user_choices(client.get("/admin/api_tokens/apitoken/add/").content.decode())
    with pytest.raises(PermissionDenied, match="crowd participant"):
        api_token_create(user=user, name="script")


def test_a_staff_account_with_a_password_and_an_account_without_one_that_is_no_participants_are_offered(
        client, adam):
    UserFactory(username="sam", is_staff=True)  # staff, no role, signs in with a password
    sso = UserFactory(username="sso")  # no usable password (signs in elsewhere), no role, no participant
    sso.set_unusable_password()
    sso.save(update_fields=["password"])
    client.force_login(adam)
    assert {"sam", "sso"} <= _user_choices(client.get("/admin/api_tokens/apitoken/add/").content.decode())
    token, _ = api_token_create(user=sso, name="script")
    assert token.user == sso


def test_a_tokens_user_is_shown_on_its_change_form_and_cannot_be_changed(client, adam, rita, alice):
    token, _ = api_token_create(user=rita, name="notebook")
    client.force_login(adam)
    url = f"/admin/api_tokens/apitoken/{token.pk}/change/"
    body = client.get(url).content.decode()
    assert _user_choices(body) is None and "rita" in body
    client.post(url, {"user": alice.pk, "name": "notebook"})
    token.refresh_from_db()
    assert token.user == rita

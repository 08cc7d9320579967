"""The researchers' crowd-study API (``annotation/panel_api.py``): a generic study's entry signing."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from annotation import participants
from annotation.panel_models import Participant
from annotation.panels import entry_signing_fingerprint
from tests.annotation.test_participants import _entry_url, _signed, _study
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limit():
    cache.clear()


def _researcher() -> Client:
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    return client


def _signing_post(client, campaign, body):
    return client.post(f"/api/v1/campaigns/{campaign.pk}/panel/entry-signing", body, content_type="application/json")


def test_rotate_returns_a_secret_once_that_signs_entries_and_get_says_so_without_it():
    campaign, study = _study(panel="generic")
    client = _researcher()
    made = _signing_post(client, campaign, {"action": "rotate", "replacing": ""})
    assert made.status_code == 200 and "no-store" in made["Cache-Control"]
    secret = made.json()["secret"]
    assert made.json() == {"entry_signing": "required", "secret": secret,
                           "fingerprint": entry_signing_fingerprint(secret)}
    study.refresh_from_db()
    assert study.entry_signing_secret == secret
    entered = Client().get(_entry_url(study), _signed(study, secret))
    assert entered.status_code == 302 and Participant.objects.get().panel_id == "P1"
    shown = client.get(f"/api/v1/campaigns/{campaign.pk}/panel")
    assert secret not in shown.content.decode()
    assert shown.json()["entry_signing"] == "required"
    assert shown.json()["entry_signing_fingerprint"] == entry_signing_fingerprint(secret)
    assert "&sig={{SIGNATURE}}" in shown.json()["entry_link"]


def test_off_drops_the_secret_and_get_says_signing_is_off():
    campaign, study = _study(panel="generic")
    participants.panel_study_signing_set(study=study, required=True)
    client = _researcher()
    off = _signing_post(client, campaign, {"action": "off"})
    assert off.status_code == 200 and off.json() == {"entry_signing": "off"}
    study.refresh_from_db()
    assert study.entry_signing_secret == ""
    shown = client.get(f"/api/v1/campaigns/{campaign.pk}/panel").json()
    assert shown["entry_signing"] == "off" and shown["entry_signing_fingerprint"] == ""


def test_a_replaced_fingerprint_is_a_conflict_and_keeps_the_secret():
    # a script sending its rotate twice must not replace the secret its first answer gave
    campaign, study = _study(panel="generic")
    secret = participants.panel_study_signing_set(study=study, required=True)
    refused = _signing_post(_researcher(), campaign, {"action": "rotate", "replacing": ""})
    assert refused.status_code == 409 and refused.json()["error"] == "signing_secret_replaced"
    assert set(refused.json()) == {"error", "message", "details"} and secret not in refused.content.decode()
    study.refresh_from_db()
    assert study.entry_signing_secret == secret


def test_a_prolific_study_takes_no_secret():
    campaign, study = _study(panel="prolific")
    refused = _signing_post(_researcher(), campaign, {"action": "rotate"})
    assert refused.status_code == 403 and refused.json()["error"] == "not_allowed"
    assert "does not sign its links" in refused.json()["message"]
    study.refresh_from_db()
    assert study.entry_signing_secret == ""


@pytest.mark.parametrize("body", [{"action": "turn"}, {}, "{not json"])
def test_an_unknown_action_or_a_body_that_is_not_json_is_refused(body):
    campaign, study = _study(panel="generic")
    client = _researcher()
    if isinstance(body, str):
        refused = client.post(f"/api/v1/campaigns/{campaign.pk}/panel/entry-signing", body,
                              content_type="application/json")
    else:
        refused = _signing_post(client, campaign, body)
    assert refused.status_code == 400 and set(refused.json()) == {"error", "message", "details"}
    study.refresh_from_db()
    assert study.entry_signing_secret == ""


def test_no_campaign_or_a_campaign_not_open_to_a_panel_is_not_found():
    from tests.annotation.factories import Catalogue, pairwise_campaign

    closed = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=3)
    client = _researcher()
    assert _signing_post(client, closed, {"action": "rotate"}).status_code == 404
    closed.pk = 10**9
    assert _signing_post(client, closed, {"action": "rotate"}).status_code == 404


def test_an_annotator_or_a_participant_cannot_turn_signing_on():
    campaign, study = _study(panel="generic")
    annotator = Client()
    annotator.force_login(UserFactory(username="ann", role="annotator"))
    participant = participants.participant_enter(study=study, entry=participants.PanelEntry("P9", "", "")).participant
    own = Client()
    own.force_login(participant.user)
    for client in (annotator, own, Client()):
        refused = _signing_post(client, campaign, {"action": "rotate"})
        assert refused.status_code in (401, 403) and set(refused.json()) == {"error", "message", "details"}
    study.refresh_from_db()
    assert study.entry_signing_secret == ""

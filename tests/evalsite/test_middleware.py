"""The login middleware: a crowd study's participant reaches their study's pages and nothing else."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotation import participants
from annotation.panel_models import Participant
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def participant_client():
    cache.clear()  # the entry rate limit
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=2)
    study = participants.panel_study_open(campaign=campaign, panel="prolific")
    client = Client()
    client.get(reverse("annotation:panel_entry", args=[study.entry_token]),
               {"PROLIFIC_PID": "P1", "STUDY_ID": "S", "SESSION_ID": "X"})
    assert Participant.objects.filter(study=study).exists()
    return client, study


@pytest.mark.parametrize("path", ["/", "/account/api-tokens/", "/annotate/", "/leaderboard/", "/admin/",
                                  "/account/api-tokens/new"])
def test_a_participant_is_refused_every_page_outside_their_study_with_a_clear_page(participant_client, path):
    client, study = participant_client
    response = client.get(path)
    assert response.status_code == 403
    assert b"study&#x27;s participant" in response.content or b"study's participant" in response.content
    assert reverse("annotation:panel_consent", args=[study.entry_token]).encode() in response.content


@pytest.mark.parametrize("path", ["/api/v1/campaigns/", "/api/v1/annotate/campaigns/1/next", "/api/v1/tokens/"])
def test_a_participant_is_refused_the_api_outside_their_study(participant_client, path):
    client, _ = participant_client
    response = client.post(path, content_type="application/json")
    assert response.status_code == 403
    assert response.json()["error"] == "participant_only"


def test_a_participant_still_reaches_their_own_study_pages(participant_client):
    client, study = participant_client
    assert client.get(reverse("annotation:panel_consent", args=[study.entry_token])).status_code == 200


def test_an_annotator_with_a_password_is_not_refused():
    client = Client()
    client.force_login(UserFactory(username="alice", role="annotator"))
    assert client.get(reverse("annotation:queue")).status_code == 200


def _entered(panel: str, params: dict):
    cache.clear()
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=2)
    study = participants.panel_study_open(campaign=campaign, panel=panel)
    return study, Client().get(reverse("annotation:panel_entry", args=[study.entry_token]), params)


def test_an_mturk_participants_cookies_reach_mturks_frame():
    _, response = _entered("mturk", {"workerId": "W1", "assignmentId": "A1", "hitId": "H1",
                                     "turkSubmitTo": "https://www.mturk.com"})
    for name in ("sessionid", "csrftoken"):
        cookie = response.cookies[name].output()
        assert "SameSite=None" in cookie and "Secure" in cookie and "Partitioned" in cookie


def test_a_prolific_participants_cookies_stay_same_site():
    _, response = _entered("prolific", {"PROLIFIC_PID": "P1", "STUDY_ID": "S", "SESSION_ID": "X"})
    cookie = response.cookies["sessionid"].output()
    assert "SameSite=Lax" in cookie and "Partitioned" not in cookie

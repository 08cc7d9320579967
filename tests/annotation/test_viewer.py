"""The page header's name for who is signed in (annotation/viewer.py): a crowd participant's internal
account name (``panel-<campaign>-<random>``) is on no page they can load, error pages included."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotation import participants
from annotation.panel_models import Participant
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limit():
    cache.clear()


def _header_name(response) -> str:
    match = re.search(r'<span class="who">([^<]*)</span>', response.content.decode())
    assert match, "the page has the signed-in header"
    return match.group(1)


def test_every_page_a_participant_loads_names_them_participant_and_never_their_account():
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=3)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="You agree.")
    client = Client()
    client.get(reverse("annotation:panel_entry", args=[study.entry_token]),
               {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S1", "SESSION_ID": "X1"})
    account = Participant.objects.get().user.username
    entry = study.entry_token
    pages = {
        "consent": client.get(reverse("annotation:panel_consent", args=[entry])),
        "outside the study": client.get(reverse("annotation:queue")),  # the middleware's 403 page
        "not found": client.get(f"/annotate/p/{entry}/no-such-page/"),
    }
    client.post(reverse("annotation:panel_consent", args=[entry]), {"consent": "yes"})
    client.post(reverse("annotation:panel_instructions", args=[entry]))
    pages["work"] = client.get(reverse("annotation:panel_work", args=[entry]))
    participants.participant_leave(participant=Participant.objects.get())
    pages["done"] = client.get(reverse("annotation:panel_done", args=[entry]))
    for name, response in pages.items():
        assert response.status_code in (200, 403, 404), name
        assert _header_name(response) == "Participant", name
        assert account not in response.content.decode(), name


def test_a_site_account_reads_its_own_name():
    UserFactory(username="rita", role="researcher")
    client = Client()
    client.force_login(UserFactory._meta.model.objects.get(username="rita"))
    assert _header_name(client.get(reverse("annotation:campaign_list"))) == "rita"

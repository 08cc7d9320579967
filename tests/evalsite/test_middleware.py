"""The login middleware: an anonymous visitor is sent to the login and back to the address they asked for; a
crowd study's participant reaches their study's pages and nothing else."""

from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotation import participants
from annotation.panel_models import Participant
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.factories import PASSWORD, UserFactory

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


#: An address asked for anonymously, and the login's ``next`` for it: that address percent-encoded once. The
#: server hands the path over decoded (``%2F`` too, as every WSGI server does), so the next has the slash.
#: Not UTF-8: ``/%ff%fe`` was ``next=/%25FF%25FE``, its ``%`` encoded again, whose 404 was another address's.
ADDRESSES = [
    ("/%ff%fe", "/%FF%FE"),
    ("/a%20b", "/a%20b"),
    ("/campaigns/%2F..", "/campaigns//.."),
    ("/caf%C3%A9", "/caf%C3%A9"),
    ("/100%25", "/100%25"),
    ("/%ff/leaderboards/?page=%ff&q=a%20b", "/%FF/leaderboards/?page=%ff&q=a%20b"),
    ("/%2F%2Fevil.example/", "/%2F/evil.example/"),
    ("/%5Cevil.example/", "/%5Cevil.example/"),
]


def _next(response) -> str:
    assert response.status_code == 302
    location = urlsplit(response["Location"])
    assert location.path == "/accounts/login/"
    [address] = parse_qs(location.query)["next"]
    return address


@pytest.mark.parametrize("address, sent_back_to", ADDRESSES)
def test_the_login_sends_an_anonymous_visitor_back_to_the_address_encoded_once(client, address, sent_back_to):
    assert _next(client.get(address)) == sent_back_to


@pytest.mark.parametrize("address, sent_back_to", ADDRESSES)
def test_after_logging_in_the_visitor_opens_the_address_they_asked_for_on_this_site(client, rita, address,
                                                                                     sent_back_to):
    asked = client.get(address)
    login_page = client.get(asked["Location"])
    next_field = unescape(re.search(r'name="next" value="([^"]*)"', login_page.content.decode())[1])
    assert next_field == sent_back_to
    logged_in = client.post("/accounts/login/", {"username": rita.username, "password": PASSWORD,
                                                 "next": next_field})
    back_to = logged_in["Location"]
    assert back_to == sent_back_to and back_to.startswith("/") and not back_to.startswith(("//", "/\\"))
    landed = client.get(back_to)
    assert landed.wsgi_request.path == asked.wsgi_request.path
    assert landed.wsgi_request.META["QUERY_STRING"] == asked.wsgi_request.META["QUERY_STRING"]
    assert landed.status_code == 404  # the site's page for an address it does not have


def test_the_login_sends_a_query_back_with_the_bytes_it_came_with(client):
    # A byte past ASCII sent unencoded (RFC 3986 has none, a client may): get_full_path() read it as latin-1
    # text and sent back that text's UTF-8 (``q=%C3%BF``), another query.
    assert _next(client.get("/leaderboards/", QUERY_STRING="q=\xff&r=%ff")) == "/leaderboards/?q=%FF&r=%ff"


def test_the_login_sends_a_visitor_back_under_the_script_name_the_site_is_mounted_at(client):
    from django.urls import clear_script_prefix

    try:
        response = client.get("/%ff/leaderboards/", SCRIPT_NAME="/atelier-\xc3\xa9")
        assert _next(response) == "/atelier-%C3%A9/%FF/leaderboards/"
    finally:
        clear_script_prefix()  # Django keeps the request's prefix in its thread: later tests would build links with it

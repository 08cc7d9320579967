"""evalsite/error_pages.py: styled 403/404/500 pages with navigation, JSON on API paths; the favicon."""

from __future__ import annotations

import json

import pytest
from django.test import RequestFactory

from evalsite import error_pages
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def test_a_missing_page_is_the_styled_404_with_a_way_back(client):
    user = UserFactory(username="rita", role="researcher")
    client.login(username=user.username, password=PASSWORD)
    response = client.get("/no-such-page/")
    body = response.content.decode()
    assert response.status_code == 404
    assert "404 · Not found" in body and 'href="/"' in body and "css/atelier.css" in body
    assert 'href="/leaderboards/"' in body  # the researcher's way back


@pytest.mark.parametrize(("url", "says"), [("/leaderboards/999/", "No leaderboard snapshot has that id."),
                                           ("/task-sets/999/", "No task set has that id."),
                                           ("/easel/episodes/999/", "No easel episode has that id.")])
def test_a_missing_object_is_named_in_words_not_by_its_class(client, url, says):
    # get_object_or_404's message named the class: "No LeaderboardSnapshot matches the given query."
    user = UserFactory(username="rita", role="researcher")
    client.login(username=user.username, password=PASSWORD)
    body = client.get(url).content.decode()
    assert says in body and "matches the given query" not in body


@pytest.mark.parametrize("url", ["/runs/new/", "/c2/runs/new/", "/easel/runs/new/", "/annotate/campaigns/1/novelty-ablation"])
def test_a_visit_to_a_form_only_address_is_the_styled_405_saying_what_to_do(client, url):
    # Django's 405 has no body: the browser showed its own blank "HTTP ERROR 405". A researcher lands there by
    # logging in again after the session ran out mid-form (login's next= is the form's address).
    user = UserFactory(username="rita", role="researcher")
    client.login(username=user.username, password=PASSWORD)
    response = client.get(url)
    body = response.content.decode()
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert "405 · Not a page to visit" in body and "submit it again" in body and 'href="/leaderboards/"' in body


@pytest.mark.parametrize(("url", "form"), [
    ("/runs/new/", "/leaderboards/"), ("/c2/runs/new/", "/c2/"), ("/easel/runs/new/", "/easel/"),
    ("/c2/runs/4/resume", "/c2/runs/4/"), ("/task-sets/3/tig-builds/new/", "/task-sets/3/"),
    ("/annotate/campaigns/1/novelty-ablation", "/annotate/campaigns/1/"),
])
def test_the_405_page_links_to_the_page_whose_form_posts_there(client, url, form):
    user = UserFactory(username="rita", role="researcher")
    client.login(username=user.username, password=PASSWORD)
    body = client.get(url).content.decode()
    assert f'<a class="button" href="{form}">Go to the form</a>' in body


def test_the_405_page_links_back_to_the_page_the_visitor_came_from_on_this_site_only(client):
    user = UserFactory(username="rita", role="researcher")
    client.login(username=user.username, password=PASSWORD)
    came = client.get("/runs/new/", HTTP_REFERER="http://testserver/task-sets/?q=x").content.decode()
    assert 'href="/task-sets/?q=x">Back to the page you came from' in came
    elsewhere = client.get("/runs/new/", HTTP_REFERER="http://evil.example/task-sets/").content.decode()
    assert "Back to the page you came from" not in elsewhere


@pytest.mark.parametrize("path", ["//evil.example/x", "/\\evil.example/x", "///evil.example"])
def test_the_back_link_never_leads_off_the_site_through_a_path_a_browser_reads_as_another_host(client, path):
    # a path of this host's Referer that begins "//" (or "/\\") is, as an href, another site's address
    user = UserFactory(username="rita", role="researcher")
    client.login(username=user.username, password=PASSWORD)
    body = client.get("/runs/new/", HTTP_REFERER=f"http://testserver{path}").content.decode()
    assert "Back to the page you came from" not in body and "evil.example" not in body


def test_a_405_on_an_api_path_is_json():
    from django.http import HttpResponseNotAllowed

    from evalsite.middleware import MethodNotAllowedPage

    request = RequestFactory().get("/annotate/api/assignments/x/submit")
    response = MethodNotAllowedPage(lambda r: HttpResponseNotAllowed(["POST"]))(request)
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert json.loads(response.content)["error"] == "method_not_allowed"


def test_a_refused_page_is_the_styled_403_naming_the_account(client):
    user = UserFactory(username="ann", role="annotator")
    client.login(username=user.username, password=PASSWORD)
    response = client.get("/leaderboards/")
    body = response.content.decode()
    assert response.status_code == 403
    assert "403 · Not allowed" in body and "logged in as ann" in body
    assert "My work" in body  # the annotator's own way back


def test_the_500_page_renders_without_a_request_context():
    request = RequestFactory().get("/somewhere/")
    response = error_pages.server_error(request)
    assert response.status_code == 500 and "500 · Server error" in response.content.decode()
    api = error_pages.server_error(RequestFactory().get("/annotate/api/campaigns/1/next"))
    assert api.status_code == 500 and api["Content-Type"] == "application/json"


def test_the_favicon_is_linked_and_served(client):
    assert 'rel="icon"' in client.get("/accounts/login/").content.decode()
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith("favicon.ico")


def test_a_server_error_under_the_public_api_has_the_api_error_shape():
    response = error_pages.server_error(RequestFactory().get("/api/v1/snapshots/"))
    assert response.status_code == 500 and response["Content-Type"] == "application/json"
    assert json.loads(response.content) == {"error": "server_error", "message": "Something went wrong on our side.", "details": {}}


@pytest.mark.parametrize(("path", "shape"), [
    ("/leaderboards/", "html"),
    ("/annotate/api/campaigns/1/next", "page-api"),
    ("/api/v1/snapshots/", "api-v1"),
])
def test_a_database_that_cannot_be_reached_is_a_503_with_retry_after_never_a_500(path, shape, client, monkeypatch):
    from django.db import OperationalError

    from evalsite.sessions import SessionStore

    def database_away(self, *args, **kwargs):
        raise OperationalError("connection to server at 127.0.0.1 failed: Connection refused")

    user = UserFactory(username="rita", role="researcher")
    client.login(username=user.username, password=PASSWORD)
    client.raise_request_exception = False  # as a real server: the exception goes to the site's handler
    # The session is the first thing a request reads from the database (before any view).
    monkeypatch.setattr(SessionStore, "load", database_away)
    response = client.get(path)
    assert response.status_code == 503 and response["Retry-After"] == "5"
    if shape == "html":
        assert "503 · Temporarily unavailable" in response.content.decode()
    elif shape == "page-api":
        assert json.loads(response.content)["error"] == "unavailable"
    else:
        body = json.loads(response.content)
        assert body["error"] == "unavailable" and body["details"] == {} and "database" in body["message"]

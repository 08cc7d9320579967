"""End to end in Chromium (issue 25): an MTurk worker sees the study inside MTurk's frame (an
ExternalQuestion), as MTurk shows it — the HIT's page on an MTurk address with our entry link in an
iframe, cross-site. Previewing records nothing; the accepted HIT goes through consent, instructions and
the labelling inside the frame, and the end page's form posts the assignment id and the completion
code to ``<turkSubmitTo>/mturk/externalSubmit``. MTurk's addresses are Playwright routes."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode

import pytest
from django.core.cache import cache

from annotation import participants
from annotation.panel_models import Participant
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS
from tests.conftest import require_service

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SANDBOX = "https://workersandbox.mturk.com"


@pytest.fixture
def mturk_browser():
    """Chromium that lets a public site frame the test's server on localhost: Chromium's Local Network
    Access check refuses that (in production MTurk frames the site at its public address)."""
    require_service("chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=[*CHROMIUM_ARGS, "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests"])
        try:
            yield chromium
        finally:
            chromium.close()
            from django.db import connections

            connections.close_all()


def _hit_page(entry_url: str) -> str:
    return (f'<!DOCTYPE html><html><body><h1>MTurk HIT</h1>'
            f'<iframe id="hit" src="{entry_url}" width="1300" height="720"></iframe></body></html>')


def test_an_mturk_worker_previews_works_in_mturks_frame_and_submits_the_assignment(live_server, mturk_browser):
    cache.clear()
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=1, n_items=2, instructions="Judge **Novelty** only.")
    study = participants.panel_study_open(campaign=campaign, panel="mturk", consent_text="I agree to **take part**.",
                                          completion_code="TURK1234", screen_out_code="TURKOUT9")
    entry = f"{live_server.url}/annotate/p/{study.entry_token}/?"
    preview = entry + urlencode({"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "HIT1"})
    accepted = entry + urlencode({"workerId": "A1WORKER", "assignmentId": "ASG1", "hitId": "HIT1",
                                  "turkSubmitTo": SANDBOX})
    submitted = []

    def mturk(route):
        request = route.request
        if request.url.startswith(f"{SANDBOX}/mturk/externalSubmit"):
            submitted.append(parse_qs(request.post_data or ""))
            route.fulfill(status=200, body="<p id='mturk-thanks'>HIT submitted</p>", content_type="text/html")
        elif request.url.endswith("/preview"):
            route.fulfill(status=200, body=_hit_page(preview), content_type="text/html")
        else:
            route.fulfill(status=200, body=_hit_page(accepted), content_type="text/html")

    context = mturk_browser.new_context(viewport={"width": 1366, "height": 800})
    context.route(f"{SANDBOX}/**", mturk)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)

    page.goto(f"{SANDBOX}/projects/1/preview")
    frame = page.frame_locator("#hit")
    frame.locator("#panel-preview").wait_for()  # the site lets MTurk frame it
    assert "take part" in frame.locator(".prose").inner_text()
    assert not Participant.objects.exists()

    page.goto(f"{SANDBOX}/projects/1/tasks/1")
    frame = page.frame_locator("#hit")
    frame.locator("#consent-box").check()  # the session cookie came back from inside the frame
    frame.locator("#consent-submit").click()  # and so did the CSRF cookie
    assert "Novelty" in frame.locator("#instructions-text").inner_text()
    frame.locator("#instructions-done").click()
    for _ in range(2):
        token = frame.locator("#item[data-token]:not([data-token=''])")
        token.wait_for()
        shown = token.get_attribute("data-token")
        frame.locator("#item").click()
        page.keyboard.press("a")
        page.keyboard.press("Enter")
        frame.locator(f"#item:not([data-token='{shown}']), #panel-done").first.wait_for()
    frame.locator("#panel-done[data-state=completed]").wait_for()
    assert frame.locator("#panel-code").inner_text() == "TURK1234"
    frame.locator("#mturk-submit button").click()
    page.frame_locator("#hit").locator("#mturk-thanks").wait_for()
    context.close()

    assert submitted == [{"assignmentId": ["ASG1"], "completion_code": ["TURK1234"]}]
    person = Participant.objects.get()
    assert (person.panel_id, person.panel_session_id, person.state) == ("A1WORKER", "ASG1", "completed")

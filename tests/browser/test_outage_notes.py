"""What the pages say during an outage (issue 28), in Chromium: a run of each protocol started while the
task queue was away shows the "Queued… starts by itself when workers can be reached" notice, live, and
drops it once a worker takes the run; the annotation page answered 503 (the database away) says it is
retrying, re-sends the same answer with the same idempotency key, and the label is stored once."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotation.label_models import PairwiseLabel
from leaderboard.runs.models import RunStatus
from leaderboard.runs.queue import WAITING_FOR_QUEUE
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.browser.conftest import TIMEOUT_MS, log_in, wait_for_item, wait_for_save_status, wait_until
from tests.factories import UserFactory
from tests.leaderboard.runs.conftest import CASES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = {"judge": "judge_run_detail", "easel": "easel:run_detail", "c2": "c2:run_detail"}


@pytest.mark.parametrize("protocol", sorted(CASES))
def test_a_run_waiting_for_the_queue_says_so_on_its_page_until_a_worker_takes_it(protocol, live_server, browser,
                                                                                   settings, tmp_path):
    settings.ATELIER_EMBED_CACHE_DIR = tmp_path / "embed-cache"
    UserFactory(username="rita", role="researcher")
    run = CASES[protocol].make_run()
    type(run).objects.filter(pk=run.pk).update(status=RunStatus.PENDING, error=WAITING_FOR_QUEUE)
    page = browser.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, live_server.url, "rita")
    page.goto(live_server.url + reverse(PAGES[protocol], args=[run.pk]))
    note = page.locator("[data-run-error]")
    assert note.is_visible()
    assert "starts by itself when workers can be reached" in note.inner_text()
    assert "waiting" in note.get_attribute("class")  # shown as a notice, not as an error
    # a worker takes the run (the queue answered again): the live status drops the note
    type(run).objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, error="")
    wait_until(page, "() => document.querySelector('[data-run-error]').hidden")


def test_the_annotation_page_retries_a_503_with_the_same_key_and_the_label_is_stored_once(live_server, browser):
    users = annotators(1, prefix="db")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, n_items=2)
    sent: list[dict] = []
    refused = {"n": 0}

    def database_away(route):
        request = route.request
        body = json.loads(request.post_data)
        sent.append({"key": body["idempotency_key"], "answer": json.dumps(body["answer"], sort_keys=True)})
        if refused["n"] < 2:  # the database is away for two attempts: the site's 503 with Retry-After
            refused["n"] += 1
            route.fulfill(status=503, headers={"Retry-After": "1", "Content-Type": "application/json"},
                          body=json.dumps({"error": "The database is unavailable; try again shortly.",
                                           "code": "unavailable"}))
        else:
            route.continue_()

    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, live_server.url, users[0].username)
    page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
    wait_for_item(page)
    page.route("**/submit*", database_away)  # the page submits to …/submit?next=1
    page.keyboard.press("a")
    page.keyboard.press("Enter")
    wait_for_save_status(page, contains="retrying")
    status = page.inner_text("#save-status")
    assert "temporarily unavailable" in status
    wait_for_save_status(page, starts="Saved")
    page.unroute("**/submit*")
    context.close()
    assert refused["n"] == 2 and len(sent) == 3
    assert len({(s["key"], s["answer"]) for s in sent}) == 1  # the same answer with the same key each time
    assert PairwiseLabel.objects.filter(item__campaign=campaign, annotator=users[0]).count() == 1

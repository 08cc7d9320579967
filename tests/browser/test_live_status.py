"""Live status in Chromium: a TIG build page opened before the build runs follows it to the end
through static/js/run_status.js (on live_status.js's poller), without a reload."""

from __future__ import annotations

import pytest

from leaderboard.ekphrasis.tig import tig_build_create, tig_build_execute
from tests.browser.conftest import log_in, wait_until
from tests.factories import ResponseFactory, SubjectModelFactory, TaskFactory, TaskSetFactory, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_build_page_follows_a_running_build_to_done_without_a_reload(live_server, browser):
    UserFactory(username="rita", role="researcher")
    task_set = TaskSetFactory()
    task = TaskFactory(task_set=task_set)
    for name in "ab":
        ResponseFactory(task=task, subject_model=SubjectModelFactory(display_name=f"live-{name}"), sample=1,
                        is_primary=True, core_idea=f"A paper lantern drifting over the {name} river at dusk.")
    build = tig_build_create(task_set=task_set)
    page = browser.new_page()
    refused = []  # what the Content-Security-Policy blocked on the page, as Chromium reports it
    page.on("console", lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None)
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/task-sets/{task_set.pk}/tig-builds/{build.pk}/")
    assert page.text_content("#st") == "pending"
    assert page.is_hidden("#viewer-link")
    tig_build_execute(build_id=build.pk)
    # A function, not an expression: Playwright evaluates a bare expression with eval(), which the
    # page's Content-Security-Policy (no 'unsafe-eval') refuses.
    wait_until(page, "() => document.getElementById('st').textContent === 'done'")
    assert page.text_content("#responses") == "2/2"
    assert page.is_visible("#viewer-link")
    assert page.evaluate("document.getElementById('bar').style.width") == "100%"
    assert refused == []

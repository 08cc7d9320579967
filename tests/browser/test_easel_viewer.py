"""The EASEL episode viewer in Chromium: ←/→ step the scrubber through the stored canvases."""

from __future__ import annotations

import pytest

from leaderboard.easel import services
from tests.browser.conftest import TIMEOUT_MS, log_in, wait_until
from tests.factories import UserFactory
from tests.leaderboard.easel.conftest import SMALL
from tests.leaderboard.easel.test_views import stored_episode

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_arrow_keys_step_the_viewer_through_stored_canvases(live_server, browser):
    UserFactory(username="rita", role="researcher")
    suite, _ = services.easel_suite_create(seed=0, per_category=SMALL, name="easel-browser")
    episode = stored_episode(suite, steps=4)
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/easel/episodes/{episode.pk}/")
    page.wait_for_selector("#easel-step-detail p", timeout=TIMEOUT_MS)
    assert page.get_attribute("#easel-step-detail", "data-index") == "0"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#easel-step-detail", "data-index") == "2"
    assert "invalid" in page.text_content("#easel-step-detail")  # step 2 is the invalid one
    assert page.get_attribute("#easel-canvas", "src").endswith("/canvas/2.png")
    assert page.get_attribute('#easel-steps tr[data-index="2"]', "class").split().count("current") == 1
    page.keyboard.press("ArrowLeft")
    assert page.get_attribute("#easel-step-detail", "data-index") == "1"
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    assert page.get_attribute("#easel-step-detail", "data-index") == "4"  # stops at the last stored canvas
    # the stored canvas of step 4 is a real image (the page loads it after the key press)
    # a function, not a string: the page's CSP forbids evaluating strings
    wait_until(page, "() => { const i = document.getElementById('easel-canvas'); return i.complete && i.naturalWidth > 0; }")
    assert errors == []

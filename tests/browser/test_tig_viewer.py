"""The TIG viewer in Chromium: each cluster says why its aliases were grouped (cosine to the label against
the threshold) and lists its related atoms apart, readable at 1400 px and at 390 px (issue 15)."""

from __future__ import annotations

import os

import pytest

from leaderboard.demo import demo_catalogue_load
from leaderboard.models import Task
from tests.browser.conftest import log_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo_task():
    demo = demo_catalogue_load()
    return Task.objects.get(task_set=demo.task_set, external_id="demo-abs-01")


@pytest.mark.parametrize("width", [1400, 390])
def test_the_viewer_shows_why_atoms_were_grouped_at_desktop_and_phone_width(
    live_server, browser, demo_task, width
):
    UserFactory(username="rita", role="researcher")
    page = browser.new_page(viewport={"width": width, "height": 900})
    refused = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/task-sets/{demo_task.task_set_id}/tig/{demo_task.pk}/")
    why = page.locator(".tig-aliases").filter(has_text="front of meditation cushion").first
    why.scroll_into_view_if_needed()
    assert why.is_visible() and "grouped because cosine ≥ 0.85 with" in why.inner_text()
    box = why.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width  # wraps inside the screen
    row = page.locator("tr", has=page.locator("strong", has_text="meditation cushion")).first
    row.locator("details.tig-members summary").click()
    related = row.locator("details.tig-members li", has_text="knees").first
    assert related.is_visible() and "with “" in related.inner_text()
    if os.environ.get("ATELIER_SCREENSHOT_DIR"):
        page.screenshot(
            path=os.path.join(os.environ["ATELIER_SCREENSHOT_DIR"], f"tig-viewer-{width}.png"), full_page=True
        )
    assert refused == []

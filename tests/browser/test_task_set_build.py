"""Live progress in Chromium: a task-set build page opened before the build runs follows it through
static/js/run_status.js and shows the diagnostics once it is done."""

from __future__ import annotations

import pytest

from engine.task_construction.grid import TABLE5_GRID, grid_with_quotas
from leaderboard.ekphrasis import task_construction as construction
from tests.browser.conftest import TIMEOUT_MS, log_in
from tests.engine.task_construction.conftest import HashEmbedder
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_build_page_follows_a_build_to_its_diagnostics(live_server, browser):
    UserFactory(username="adam", role="admin")
    grid = grid_with_quotas({c.cell_id: 1 for c in TABLE5_GRID.cells}, name="small")
    build = construction.task_set_build_create(name="live", version="1", pools=[construction.demo_source_pool_ensure()],
                                               grid=grid)
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))  # an uncaught exception in the page's scripts
    log_in(page, live_server.url, "adam")
    page.goto(f"{live_server.url}/task-sets/builds/{build.pk}/")
    assert page.text_content("#build-st") == "pending"
    construction.task_set_build_execute(build_id=build.pk, embedder=HashEmbedder())
    page.wait_for_selector("text=Achieved counts against quotas", timeout=TIMEOUT_MS)
    assert page.text_content("#build-st") == "done"
    assert page.text_content("#build-kept") == f"{grid.total}/{grid.total}"
    assert not errors

"""The researcher's view in Chromium at 1400 and 390 px: the overview home (best model, margin and interval of
every protocol on the first screen), a model profile, and the EASEL and C² compare pages — no page-wide
horizontal scrolling, no CSP refusal. Screenshots go to ``ATELIER_SCREENSHOT_DIR`` when it is set."""

from __future__ import annotations

import os

import pytest

from leaderboard.protocols import protocols
from tests.browser.conftest import log_in
from tests.factories import UserFactory
from tests.leaderboard.researcher_world import three_protocol_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = {1400: 900, 390: 844}  # viewport width → height


def _shot(page, name: str) -> None:
    if os.environ.get("ATELIER_SCREENSHOT_DIR"):
        page.screenshot(path=os.path.join(os.environ["ATELIER_SCREENSHOT_DIR"], f"{name}.png"), full_page=True)


def _fits(page, width: int) -> None:
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_the_overview_a_profile_and_the_easel_and_c2_compare_pages_fit_the_screen(live_server, browser, width):
    world = three_protocol_world()
    UserFactory(username="rita", role="researcher")
    page = browser.new_page(viewport={"width": width, "height": WIDTHS[width]})
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    log_in(page, live_server.url, "rita")

    page.goto(f"{live_server.url}/")
    for protocol in protocols():
        headline = page.locator(f"#board-{protocol.kind} .headline")
        assert "Best:" in headline.inner_text() and "margin" in headline.inner_text() and "[" in headline.inner_text()
        if width == 1400:  # all three blocks' best model, margin and interval on the first screen
            box = headline.bounding_box()
            assert box["y"] + box["height"] <= WIDTHS[width] and box["x"] + box["width"] <= width
    _fits(page, width)
    _shot(page, f"overview-{width}")

    page.click(f"#board-easel a[href='/models/{world.models[0].pk}/']")
    page.wait_for_selector("#model-results")
    assert page.locator(".model-result").count() >= 3
    _fits(page, width)
    _shot(page, f"model-profile-{width}")

    first, second = world.easel_runs[0].pk, world.easel_runs[1].pk
    page.goto(f"{live_server.url}/easel/compare/?a={first}&b={second}")
    assert page.locator("#compare-ranks tr[data-name='Final S']").is_visible()
    assert page.locator("#compare-paired table").is_visible()
    _fits(page, width)
    _shot(page, f"easel-compare-{width}")

    page.goto(f"{live_server.url}/c2/compare/?a={world.c2_standard.pk}&b={world.c2_creative.pk}")
    assert page.locator("#compare-differences tr.differs").count() >= 1
    assert page.locator("#compare-ranks tbody tr").count() == 3
    _fits(page, width)
    _shot(page, f"c2-compare-{width}")

    # the EASEL and C² boards answer who is best, by how much and how sure on their first screen
    for name, url in (("easel", f"/easel/?task_set={world.easel_suite.pk}"), ("c2", f"/c2/?run={world.c2_standard.pk}")):
        page.goto(f"{live_server.url}{url}")
        headline = page.locator("#board-headline")
        text = headline.inner_text()
        assert "Best:" in text and "margin over" in text and "P(best > runner-up)" in text
        if width == 1400:
            box = headline.bounding_box()
            assert box["y"] + box["height"] <= WIDTHS[width] and box["x"] + box["width"] <= width
        _shot(page, f"{name}-board-{width}")
    assert refused == []

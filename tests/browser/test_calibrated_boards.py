"""The demo's calibrated boards in Chromium (issue 24): the Ekphrasis snapshot's judge-only, people-only
and calibrated views side by side with rank-sets, the style-controlled toggle (a click shows the
coefficients) and the judge card; the C² divergent table's and the EASEL human-preference table's
calibrated columns, reached from the C² leaderboard and the canvas-similarity campaign dashboard."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from tests.browser.conftest import TIMEOUT_MS, log_in, wait_until
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FIRST_COMPUTATION_MS = 180_000


def _researcher_page(browser, base: str):
    """A logged-in researcher's wide page, and the list the CSP refusals it meets are collected in."""
    UserFactory(username="rita", role="researcher")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    log_in(page, base, "rita")
    return page, refused


def test_the_demo_ekphrasis_board_shows_three_views_the_style_toggle_and_the_judge_card(live_server, browser):
    from tests.annotation.demo_support import demo_loaded

    with demo_loaded(judge_run=True) as demo:
        snapshot = demo["snapshot"]
        page, refused = _researcher_page(browser, live_server.url)
        page.goto(f"{live_server.url}/leaderboards/{snapshot.pk}/")
        # the board's first view computes and records it (fits, style bootstraps): seconds on a loaded machine
        page.click("#calibrated-link a", no_wait_after=True)
        page.wait_for_selector("table.three-views", timeout=FIRST_COMPUTATION_MS)
        assert f"/annotate/calibration/snapshots/{snapshot.pk}/" in page.url
        # the three views side by side, per dimension, each row with a rank and rank-set per view
        for dimension in ("usefulness", "expressiveness", "novelty"):
            table = page.locator(f"#views-{dimension}")
            heads = table.locator("th.view-head").all_inner_texts()
            assert heads == ["Judge only", "People only", "Calibrated by people"]
            ranked = table.locator("td.rank-set").all_inner_texts()
            assert ranked and all(re.fullmatch(r"\d+ \[\d+–\d+\]", r.strip()) for r in ranked)
        assert page.locator(".calibrated-dimension .lam").count() >= 1
        assert page.locator(".calibrated-dimension .eff-n").count() >= 1
        # the judge card of this snapshot's judge, with every column
        card = page.locator("#judge-card-table")
        assert card.locator(f"tr[data-judge='{snapshot.judge_name}']").count() == 1
        for column in ("Agreement with people", "Position-flip rate", "Duplicate consistency", "P(prefers longer)",
                       "Tie rate", "USD / 1,000", "Seconds / 1,000", "λ when calibrated"):
            assert card.locator(f"th:has-text('{column}')").count() == 1
        # style control: no coefficients until the toggle is clicked; then they show, per feature
        assert page.locator("table.style-coefficients").count() == 0
        page.click("#style-toggle")
        page.wait_for_selector("table.style-coefficients", timeout=FIRST_COMPUTATION_MS)
        assert "style=1" in page.url and page.is_checked("#style-toggle")
        for feature in ("length", "list_items", "adjectives"):
            assert page.locator(f"table.style-coefficients [data-feature='{feature}']").count() >= 1
        page.click("#style-toggle")  # and off again
        wait_until(page, "() => !document.querySelector('table.style-coefficients')", timeout=FIRST_COMPUTATION_MS)
        assert refused == []


def test_the_demo_c2_and_easel_tables_show_their_calibrated_columns(live_server, browser, tmp_path):
    from annotation.demo_validation import CANVAS_NAME, validation_demo_load
    from annotation.models import Campaign

    with override_settings(MEDIA_ROOT=str(tmp_path)):
        validation_demo_load(seed=0)
        page, refused = _researcher_page(browser, live_server.url)
        # C²: from the leaderboard to the run's calibrated divergent U/O/S
        page.goto(f"{live_server.url}/c2/")
        page.click("#calibrated-link a")
        page.wait_for_selector("#c2-calibrated", timeout=TIMEOUT_MS)
        rows = page.locator("#c2-calibrated tbody tr[data-model]")
        assert rows.count() >= 2
        assert page.locator("#c2-calibrated td[data-calibrated]").count() >= 2
        assert page.locator("#c2-calibrated th:has-text('calibrated [90 %]')").count() == 3
        # EASEL: the canvas-similarity dashboard's human-preference table, calibrated by S's sign
        canvas = Campaign.objects.get(name=CANVAS_NAME)
        page.goto(f"{live_server.url}/annotate/campaigns/{canvas.pk}/")
        page.wait_for_selector("#similarity-calibrated", timeout=TIMEOUT_MS)
        agents = page.locator("#similarity-calibrated tbody tr[data-agent]")
        assert agents.count() >= 2
        assert page.locator("#similarity-calibrated td[data-calibrated]").count() >= 2
        heads = page.locator("#similarity-calibrated th").all_inner_texts()
        assert heads == ["Agent", "People [90 %]", "S's sign alone", "Calibrated [90 %]", "λ", "eff. n"]
        assert refused == []

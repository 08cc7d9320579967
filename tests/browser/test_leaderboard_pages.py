"""Leaderboard pages in Chromium: the first-screen table sorts by a clicked column, and the snapshot
page fits a 390 px screen (wide tables scroll inside their card, not the page)."""

from __future__ import annotations

import pytest

from leaderboard.ekphrasis import judge_runs
from tests.browser.conftest import log_in
from tests.factories import UserFactory
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def snapshot():
    task_set, models = population(n_models=4, n_tasks=4, name="sortable")
    return judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=12, dimensions="UEN"))


def _column(page, index: int) -> list[str]:
    return page.eval_on_selector_all(
        "table.sortable tbody tr", f"(rows) => rows.map((r) => r.children[{index}].textContent.trim())")


def test_clicking_a_column_heading_sorts_the_leaderboard_table(live_server, browser, snapshot):
    UserFactory(username="rita", role="researcher")
    page = browser.new_page()
    refused = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/leaderboards/")
    assert [int(v) for v in _column(page, 1)] == [1, 2, 3, 4]
    page.click("table.sortable th:has-text('Rank')")  # ascending (already), then descending
    page.click("table.sortable th:has-text('Rank')")
    assert [int(v) for v in _column(page, 1)] == [4, 3, 2, 1]
    page.click("table.sortable th:has-text('Comparisons')")
    counts = [int(v) for v in _column(page, 7)]
    assert counts == sorted(counts)
    assert page.get_attribute("table.sortable th:has-text('Comparisons')", "aria-sort") == "ascending"
    assert refused == []


def test_the_snapshot_page_fits_a_phone_screen(live_server, browser, snapshot):
    UserFactory(username="rita", role="researcher")
    page = browser.new_page(viewport={"width": 390, "height": 800})
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/leaderboards/{snapshot.pk}/")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


def test_every_chart_downloads_as_svg_and_png_with_its_caption_and_as_the_data_it_was_drawn_from(
        live_server, browser, snapshot):
    import csv
    import io
    from pathlib import Path

    UserFactory(username="rita", role="researcher")
    page = browser.new_page(accept_downloads=True)
    refused = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/leaderboards/{snapshot.pk}/")
    charts = page.locator("svg.chart").count()
    assert charts >= 2 and page.locator(".chart-downloads").count() == charts
    figure = page.locator("figure:has(svg.chart)").first
    caption = " ".join(figure.locator("figcaption").inner_text().split())
    downloads = page.locator(".chart-downloads").first
    with page.expect_download() as svg_file:
        downloads.locator("button", has_text="SVG").click()
    svg = Path(svg_file.value.path()).read_text()
    assert svg.startswith("<svg") and caption in " ".join(svg.split()) and svg_file.value.suggested_filename.endswith(".svg")
    with page.expect_download() as png_file:
        downloads.locator("button", has_text="PNG").click()
    assert Path(png_file.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with page.expect_download() as data_file:
        downloads.locator("button", has_text="data (CSV)").click()
    rows = list(csv.reader(io.StringIO(Path(data_file.value.path()).read_text())))
    assert rows[0] == ["label", "estimate", "low", "high", "tier"] and len(rows) == 1 + 4  # one row per model
    assert refused == []


def test_at_desktop_width_no_table_of_the_snapshot_page_is_cut(live_server, browser, snapshot):
    UserFactory(username="rita", role="researcher")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/leaderboards/{snapshot.pk}/")
    cut = page.evaluate("""() => [...document.querySelectorAll('main .table-scroll')]
        .filter((box) => box.scrollWidth > box.clientWidth + 1).map((box) => box.closest('div, section').innerText.slice(0, 60))""")
    assert cut == []

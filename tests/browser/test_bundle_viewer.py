"""A bundle's static viewer opened from disk (file://, no server): the board and an instance's
drill-down are drawn from data.js, and the simulated/demo labels are shown."""

from __future__ import annotations

import json

import pytest

from tests.leaderboard.bundles.demo_bundles import demo_bundles_once


@pytest.fixture(scope="module")
def ekphrasis_bundle():
    return demo_bundles_once()["ekphrasis"]


def test_the_viewer_opened_from_disk_shows_the_board_and_a_task_drilldown(browser, ekphrasis_bundle):
    board = json.loads((ekphrasis_bundle / "board/board.json").read_text())
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto((ekphrasis_bundle / "index.html").as_uri())
    rows = page.locator("#board table tr")
    assert rows.count() == len(board["models"]) + 1  # a header and one row per model
    top = board["models"][board["order"][0]]
    assert rows.nth(1).locator("td").nth(1).inner_text() == top
    assert "SIMULATED components" in page.locator("#labels").inner_text()
    assert "DEMO data" in page.locator("#labels").inner_text()
    first = page.locator("#instances li").first
    task = first.get_attribute("data-instance")
    first.click()
    drill = page.locator("#drilldown")
    assert f"task {task}" in drill.locator("h3").inner_text()
    comparisons = [json.loads(line) for line in (ekphrasis_bundle / "records/comparisons.jsonl").read_text().splitlines()]
    assert drill.locator("tr").count() == 1 + sum(1 for c in comparisons if c["task"] == task)
    assert errors == []


def test_an_episode_drilldown_shows_its_final_canvas_and_task_image_from_the_bundle(browser, tmp_path):
    import tarfile

    with tarfile.open(demo_bundles_once()["easel"]) as archive:
        archive.extractall(tmp_path, filter="data")
    (root,) = tmp_path.iterdir()
    page = browser.new_page()
    page.goto((root / "index.html").as_uri())
    page.locator("#instances li").first.click()
    images = page.locator("#drilldown img")
    assert images.count() == 2
    for k in range(2):
        images.nth(k).evaluate("img => img.decode()")  # rejects when the file did not load
        assert images.nth(k).evaluate("img => img.naturalWidth") > 0

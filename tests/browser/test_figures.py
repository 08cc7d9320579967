"""The demo's figures as Chromium draws them (issue 26): at 1400 and 390 px no chart's text is drawn under
9 px (the Bland–Altman plots, three in a row, were drawn at 5.8 px), and the TIG graph's labels, measured
with getBBox, cover neither each other nor the radar's ring labels their axis labels.

The demo is the one the accessibility crawl serves (``tests.browser.test_accessibility.demo_site``)."""

from __future__ import annotations

import pytest

from tests.browser.test_accessibility import chromium, demo_site  # noqa: F401 — module fixtures reused
from tests.browser.test_wide_tables import _log_in

pytestmark = pytest.mark.browser

#: The smallest text a chart may be drawn with, in CSS px (its font size times the drawn/viewBox width ratio).
MIN_TEXT_PX = 9.0

#: Per chart: its aria-label and the smallest drawn font size of its text.
SMALLEST_TEXT = """() => [...document.querySelectorAll('svg.chart')].map((svg) => {
  const scale = svg.getBoundingClientRect().width / (svg.viewBox.baseVal.width || svg.getBoundingClientRect().width);
  const sizes = [...svg.querySelectorAll('text')].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
  return [svg.getAttribute('aria-label'), Math.min(...sizes)];
})"""

#: Pairs of texts of the first svg.chart matching ``selector`` whose drawn boxes intersect.
OVERLAPPING = """(selector) => {
  const texts = [...document.querySelector(selector).querySelectorAll('text')].slice(1);  // after the header line
  const boxes = texts.map((t) => [t.textContent, t.getBBox()]);
  const out = [];
  boxes.forEach(([a, p], i) => boxes.slice(i + 1).forEach(([b, q]) => {
    if (p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height) out.push(`${a} / ${b}`);
  }));
  return out;
}"""


def _chart_pages(page, base: str) -> list[str]:
    """The demo's pages with figures: the three boards, a snapshot, a TIG graph, an EASEL episode with its
    S_t curve and the U-O-S campaign's Bland–Altman plots."""
    def first(path: str, selector: str) -> str:
        page.goto(f"{base}{path}")
        return page.eval_on_selector(selector, "(a) => a.getAttribute('href')")

    snapshot = first("/leaderboards/", "a[href^='/leaderboards/'][href$='/']:not([href='/leaderboards/'])")
    page.goto(f"{base}/task-sets/")
    tig = None
    for task_set in page.eval_on_selector_all("a[href^='/task-sets/']", "(as) => as.map((a) => a.getAttribute('href'))"):
        if tig is None and task_set.rstrip("/").split("/")[-1].isdigit():
            page.goto(f"{base}{task_set}")
            links = page.eval_on_selector_all("a[href*='/tig/']", "(as) => as.map((a) => a.getAttribute('href'))")
            if links:  # every task set links its TIG viewer; the Ekphrasis one draws a graph
                page.goto(f"{base}{links[0]}")
                tig = links[0] if page.locator("svg.chart").count() else None
    assert tig is not None, "no demo task set draws a TIG graph"
    uos = first("/annotate/campaigns/", "a:has-text('U-O-S rating')")
    page.goto(f"{base}/easel/")
    episodes = []
    for run in sorted(set(page.eval_on_selector_all("a[href^='/easel/runs/']", "(as) => as.map((a) => a.getAttribute('href'))"))):
        page.goto(f"{base}{run}")
        episodes += page.eval_on_selector_all("a[href^='/easel/episodes/']", "(as) => as.map((a) => a.getAttribute('href'))")
    stepped = None
    for episode in episodes:
        page.goto(f"{base}{episode}")
        if page.locator("svg.chart").count():
            stepped = episode
            break
    assert stepped is not None, "no demo episode draws its S_t curve"
    return ["/", snapshot, "/c2/", "/easel/", tig, stepped, uos]


@pytest.mark.parametrize("width", [1400, 390])
def test_no_chart_of_the_demo_draws_text_under_nine_pixels(demo_site, chromium, width):  # noqa: F811
    context = chromium.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    _log_in(page, demo_site)
    small = {}
    charts = 0
    for url in _chart_pages(page, demo_site):
        page.goto(f"{demo_site}{url}")
        for label, size in page.evaluate(SMALLEST_TEXT):
            charts += 1
            if size < MIN_TEXT_PX:
                small[f"{url}: {label}"] = round(size, 1)
    context.close()
    assert charts >= 10 and small == {}


def test_the_tig_graph_and_radar_labels_cover_no_other_label(demo_site, chromium):  # noqa: F811
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    _log_in(page, demo_site)
    tig = _chart_pages(page, demo_site)[4]
    page.goto(f"{demo_site}{tig}")
    graph = page.evaluate(OVERLAPPING, "svg.chart")
    page.goto(f"{demo_site}/c2/")
    radar = page.evaluate(OVERLAPPING, "#radar svg.chart")
    context.close()
    assert graph == [] and radar == []

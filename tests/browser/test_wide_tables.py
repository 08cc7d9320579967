"""At 1400 px no table of the demo's boards is cut inside its card (issue 26: "every leaderboard's first screen
at 1400 px shows best model, margin and uncertainty without horizontal scrolling"): the C² Tables 1 and 2 of
both demo runs (16 metric columns with intervals), the Ekphrasis snapshot page with its family table and a
family slice, and the overview home. At 390 px these tables may scroll inside their card.

The demo is the one the accessibility crawl serves (``tests.browser.test_accessibility.demo_site``)."""

from __future__ import annotations

import re

import pytest

from tests.browser.test_accessibility import chromium, demo_site  # noqa: F401 — module fixtures reused
from tests.factories import PASSWORD

pytestmark = pytest.mark.browser

#: Every scrolling box in the page that is wider than its own box (a table cut inside its card), and every
#: table not in a scrolling box whose right edge passes its card's: (section id or first words, widths).
CUT = """() => {
  const where = (el) => { const s = el.closest('section'); return (s && s.id) || el.innerText.slice(0, 40); };
  const scrolled = [...document.querySelectorAll('main .table-scroll')]
    .filter((box) => box.scrollWidth > box.clientWidth)
    .map((box) => `${where(box)}: ${box.scrollWidth} > ${box.clientWidth}`);
  const overflowing = [...document.querySelectorAll('main .card table')]
    .filter((t) => !t.closest('.table-scroll'))
    .filter((t) => t.getBoundingClientRect().right > t.closest('.card').getBoundingClientRect().right + 1)
    .map((t) => `${where(t)}: table passes its card`);
  return scrolled.concat(overflowing);
}"""


def _log_in(page, base: str) -> None:
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def test_at_1400_px_no_table_of_the_c2_ekphrasis_or_overview_pages_scrolls_inside_its_card(
        demo_site, chromium):  # noqa: F811
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    _log_in(page, demo_site)
    page.goto(f"{demo_site}/c2/")
    c2_runs = sorted(set(re.findall(r'href="\?run=(\d+)"', page.content())))
    page.goto(f"{demo_site}/leaderboards/")
    snapshot = page.eval_on_selector("a[href^='/leaderboards/'][href$='/']:not([href='/leaderboards/'])",
                                     "(a) => a.getAttribute('href')")
    page.goto(f"{demo_site}{snapshot}")
    family = page.eval_on_selector("#slices option[value^='family:']", "(o) => o.value")
    urls = ["/", *(f"/c2/?run={pk}" for pk in c2_runs), snapshot, f"{snapshot}?slice={family}"]
    assert len(c2_runs) == 2  # the demo's standard and creative runs

    cut = {}
    for url in urls:
        page.goto(f"{demo_site}{url}")
        page.wait_for_load_state("networkidle")
        cut[url] = page.evaluate(CUT)
    page.goto(f"{demo_site}/c2/?run={c2_runs[0]}")
    # Table 1 carries the divergent task types the cut used to hide, each column still in the table
    table_1 = page.locator("section[id^='table-'] table.c2-table").first
    assert table_1.locator("th.group", has_text="Story Telling").is_visible()
    assert table_1.locator("th.group", has_text="Idea Generation").is_visible()
    assert table_1.locator("thead tr:nth-child(2) th").count() == 16
    # the compact headers spell themselves out (abbr title) and in the note under the table
    titles = page.eval_on_selector_all("table.c2-table thead abbr", "(as) => [...new Set(as.map((a) => a.title))]")
    context.close()
    assert sorted(titles) == ["creativity", "originality", "surprise", "usefulness"]
    assert cut == {url: [] for url in urls}

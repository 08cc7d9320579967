"""Every page of the demo passes axe-core's WCAG 2 A/AA rules, at 1400 px and at 390 px (issue 26), and
prints no doubled full stop (a note's own "." before the template's: "finite..") and gives no id to two
elements.

axe-core runs inside Chromium through ``axe-playwright-python`` (the test extra; it ships axe-core's
own script). The site is the whole demo (the three protocols' boards, runs, campaigns and their
annotation pages), served by a child ``runserver`` on a copy of the demo database that the bundle tests
build once per test process. Pages are found by following links from each role's start page, one page
per URL shape (``/leaderboards/<n>/`` once, whatever ``n``; every campaign's annotation page and dashboard), so a new page is checked without a list to
keep up to date.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from urllib.parse import urljoin, urlparse

import pytest

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.conftest import require_service
from tests.factories import PASSWORD
from tests.leaderboard.bundles.demo_bundles import ROOT, child_env, demo_site_database_once

pytestmark = pytest.mark.browser

#: The rule sets of WCAG 2.0 and 2.1, levels A and AA (axe-core's tags).
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
WIDTHS = (1400, 390)
#: Links not followed: files, JSON, actions and other sites' pages (the admin is its own design).
SKIPPED = re.compile(r"(\.(csv|json|jsonl|tex|tar\.gz|png|svg|jpg|webp)$)|/export|/status\.json|/admin/|/accounts/|"
                     r"/api/|/media/|/image$|/static/|logout|/download|/pay\.")
#: A path segment that is an id (not the 2 of /c2/).
ID_SEGMENT = re.compile(r"(?<=/)\d+(?=/|$)")
DOUBLED_STOP = re.compile(r"\w{3,}\.\.(?!\.)")
#: The ids that more than one element of the page carries.
DUPLICATE_IDS = """() => { const seen = new Set(), twice = new Set();
  for (const el of document.querySelectorAll('[id]')) { (seen.has(el.id) ? twice : seen).add(el.id); }
  return [...twice]; }"""
#: Pages followed from each start page, at most (one per URL shape).
MAX_PAGES = 80


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def demo_site():
    """The whole demo served by a child runserver (tests.leaderboard.bundles.demo_bundles); its base URL."""
    require_service("chromium")
    url = demo_site_database_once()
    port = _free_port()
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"], cwd=ROOT,
                              env=child_env(url), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(360):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def _shape(path: str) -> str:
    """Ids replaced by N, except a campaign's annotation page and dashboard: each campaign kind has its own."""
    if re.fullmatch(r"/annotate/(c|campaigns)/\d+/", path):
        return path
    return ID_SEGMENT.sub("N", path)


def _links(page, base: str) -> list[str]:
    hrefs = page.eval_on_selector_all("a[href]", "(as) => as.map((a) => a.href)")
    out = []
    for href in hrefs:
        href = urljoin(base, href).split("#")[0]
        parsed = urlparse(href)
        if f"{parsed.scheme}://{parsed.netloc}" == base and not SKIPPED.search(parsed.path):
            out.append(href)
    return out


def _violations(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": WCAG_TAGS}})
    return [f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:4]}"
            for v in results.response["violations"]]


def _crawl(browser, base: str, username: str, start: str) -> tuple[list[str], dict[str, list[str]]]:
    """The pages reached from ``start`` as ``username`` (paths), and {page at width: its violations}."""
    found: dict[str, list[str]] = {}
    seen: list[str] = []
    context = browser.new_context(viewport={"width": WIDTHS[0], "height": 900})
    page = context.new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
    queue, shapes = [urljoin(base, start)], {_shape(urlparse(start).path)}
    visited = 0
    while queue and visited < MAX_PAGES:
        url = queue.pop(0)
        visited += 1
        seen.append(urlparse(url).path)
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            response = page.goto(url)
            assert response is not None and response.status < 500, f"{url}: {response and response.status}"
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(300)  # scroll_regions.js marks the boxes that scroll a moment after a change
            problems = _violations(page)
            # a sentence ending in "." printed before the template's own full stop ("finite..")
            problems += [f"doubled full stop: …{m.group(0)}" for m in DOUBLED_STOP.finditer(page.inner_text("main"))]
            # an id given twice: a label, a live-status field or a script then finds the wrong element
            problems += [f"duplicate id: {name}" for name in page.evaluate(DUPLICATE_IDS)]
            if problems:
                found[f"{url} at {width} px"] = problems
        for link in _links(page, base):
            shape = _shape(urlparse(link).path)
            if shape not in shapes:
                shapes.add(shape)
                queue.append(link)
    context.close()
    return seen, found


@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


#: Pages each crawl must reach (URL shapes), so that a broken link cannot shrink the check unseen: the three
#: protocols' boards and runs and the calibrated views; every demo campaign's dashboard and annotation page.
MUST_REACH = {
    "researcher": {"/", "/leaderboards/", "/leaderboards/N/", "/runs/N/", "/easel/", "/easel/runs/N/", "/c2/",
                   "/c2/runs/N/", "/annotate/campaigns/", "/task-sets/N/", "/annotate/calibration/snapshots/N/"},
    "annotator1": {"/annotate/"},
}
#: Demo campaigns an annotator has open (annotation.demo and annotation.demo_validation): one page each.
DEMO_CAMPAIGNS = 8


@pytest.mark.parametrize(("username", "start"), [("researcher", "/"), ("annotator1", "/annotate/")])
def test_every_page_a_role_reaches_has_no_wcag_a_or_aa_violation_at_desktop_and_phone_width(
        demo_site, chromium, username, start):
    seen, violations = _crawl(chromium, demo_site, username, start)
    assert MUST_REACH[username] <= {ID_SEGMENT.sub("N", path) for path in seen}
    per_campaign = "/annotate/c/" if username == "annotator1" else "/annotate/campaigns/"
    assert len({path for path in seen if re.fullmatch(re.escape(per_campaign) + r"\d+/", path)}) == DEMO_CAMPAIGNS
    assert violations == {}

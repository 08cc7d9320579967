"""Browser tests: Playwright (sync API) drives Debian's Chromium against pytest-django's live server.

The sync API runs an event loop in the test's thread, which Django's async-safety check would take
for async code calling the ORM; the tests only call the ORM between browser steps.
"""

from __future__ import annotations

import os

import pytest

from tests.conftest import require_service

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 15_000
POLL_MS = 100


def wait_until(page, expression: str, arg=None) -> None:
    """Until ``expression`` (a JavaScript function of ``arg``) is truthy: polled on a timer, not on animation
    frames (Playwright's default), which a loaded machine's headless page may not run (CI timed out at 15 s
    on them more than once), and given twice the page timeout."""
    page.wait_for_function(expression, arg=arg, polling=POLL_MS, timeout=2 * TIMEOUT_MS)


def wait_for_save_status(page, *, starts: str = "", contains: str = "") -> None:
    """Until the annotation page's save status (#save-status) starts with ``starts`` or holds ``contains``."""
    wait_until(page, "([s, c]) => { const t = document.querySelector('#save-status').textContent;"
                     " return s ? t.startsWith(s) : t.includes(c); }", [starts, contains])


@pytest.fixture
def browser():
    require_service("chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()
            # ORM calls made while Playwright's loop is running get their own connection (Django's
            # connections are context-local); close it so the test database can be dropped.
            from django.db import connections

            connections.close_all()

"""Browser tests: Playwright (sync API) drives Debian's Chromium against pytest-django's live server.

The sync API runs an event loop in the test's thread, which Django's async-safety check would take
for async code calling the ORM; the tests only call the ORM between browser steps.
"""

from __future__ import annotations

import os

import pytest

from tests.conftest import require_service
from tests.factories import PASSWORD

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 15_000
POLL_MS = 100


def wait_until(page, expression: str, arg=None, *, timeout: int = 2 * TIMEOUT_MS) -> None:
    """Until ``expression`` (a JavaScript function of ``arg``) is truthy: polled on a timer, not on animation
    frames (Playwright's default), which a loaded machine's headless page may not run (CI timed out at 15 s
    on them more than once), and given twice the page timeout unless ``timeout`` says otherwise. Every
    ``wait_for_function`` of the browser tests goes through here."""
    page.wait_for_function(expression, arg=arg, polling=POLL_MS, timeout=timeout)


def wait_for_save_status(page, *, starts: str = "", contains: str = "") -> None:
    """Until the annotation page's save status (#save-status) starts with ``starts`` or holds ``contains``."""
    wait_until(page, "([s, c]) => { const t = document.querySelector('#save-status').textContent;"
                     " return s ? t.startsWith(s) : t.includes(c); }", [starts, contains])


def log_in(page, base: str, username: str) -> None:
    """Sign ``username`` (a factory account, whose password is ``tests.factories.PASSWORD``) in on the login page."""
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.press("input[name=password]", "Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url, timeout=TIMEOUT_MS)


def wait_for_item(page, previous_token: str = "") -> str:
    """Until the annotation page shows an item other than ``previous_token``'s; the new item's token."""
    wait_until(page, "prev => { const t = document.querySelector('#item').dataset.token;"
                     " return t !== undefined && t !== prev; }", previous_token)
    return page.eval_on_selector("#item", "e => e.dataset.token")


def label_by_keyboard(page, key: str, *, flag_note: str | None = None) -> str:
    """Answer the shown item with ``key`` and Enter (flagged first with ``flag_note`` when given), wait for
    "Saved" and the next item; the next item's token."""
    token = page.eval_on_selector("#item", "e => e.dataset.token")
    if flag_note:
        page.keyboard.press("f")
        page.wait_for_selector("#overlay-flag:not([hidden])", timeout=TIMEOUT_MS)
        page.keyboard.press("2")  # field–dimension mismatch
        page.keyboard.type(flag_note)
        page.keyboard.press("Enter")
        page.wait_for_selector("#overlay-flag", state="hidden", timeout=TIMEOUT_MS)
        assert flag_note in page.inner_text("#flag-indicator")
    page.keyboard.press(key)
    page.keyboard.press("Enter")
    wait_for_save_status(page, starts="Saved")
    return wait_for_item(page, token)


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

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

"""Project-wide test setup: standing users (alice the annotator, rita the
researcher, adam the admin) and a gate for the real services.

A test that needs Redis, PostgreSQL or Chromium asks for it with
``require_service``; locally a missing service skips with the reason, in CI
(``ATELIER_REQUIRE_SERVICES=1``) it fails.
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest

from tests.factories import UserFactory

T = TypeVar("T")


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def require_service(name: str) -> None:
    available = {
        "redis": lambda: _port_open("127.0.0.1", 6379),
        "chromium": lambda: shutil.which("chromium") is not None or os.path.exists("/usr/bin/chromium"),
        "postgres": lambda: os.environ.get("DATABASE_URL", "").startswith("postgres"),
        "pdflatex": lambda: shutil.which("pdflatex") is not None,
    }[name]()
    if available:
        return
    message = f"{name} is not available on this machine"
    if os.environ.get("ATELIER_REQUIRE_SERVICES") == "1":
        pytest.fail(message + " (ATELIER_REQUIRE_SERVICES=1)")
    pytest.skip(message)


@pytest.fixture
def alice(db):
    return UserFactory(username="alice", role="annotator")


@pytest.fixture
def rita(db):
    return UserFactory(username="rita", role="researcher")


@pytest.fixture
def adam(db):
    return UserFactory(username="adam", role="admin")


@pytest.fixture
def token_client(db):
    """``token_client(user)``: a DRF client carrying a new API token of ``user``."""
    from rest_framework.test import APIClient

    from leaderboard.api_tokens.services import api_token_create

    def make(user) -> APIClient:
        _, secret = api_token_create(user=user, name="test")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        return client

    return make


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2's deliberate slowness buys nothing in tests.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _eager_jobs_inside_the_request(settings):
    # A test's database is one transaction that a background thread cannot see: a page's Start runs
    # its job inside the request (tests/leaderboard/runs/test_lifecycle.py checks the thread path).
    settings.ATELIER_EAGER_JOBS_IN_BACKGROUND = False


@pytest.fixture(autouse=True)
def _login_throttling_off(settings):
    # django-axes refuses an authenticate() without a request, which the test client's login()
    # makes; tests/evalsite/test_login_throttling.py switches it back on.
    settings.AXES_ENABLED = False


@pytest.fixture(autouse=True)
def _in_memory_caches_of_its_own():
    # DRF's write-throttle history, the study entry counters and the dashboards live in the cache, keyed
    # by user or campaign id; SQLite reuses the ids a rolled-back test took, so in one long process a
    # test could inherit an earlier test's throttle history (a 429 it never earned). A shared Redis
    # cache (ATELIER_CACHE_URL) is left alone: other test processes may be using it.
    yield
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    for cache in caches.all(initialized_only=True):
        if isinstance(cache, LocMemCache):
            cache.clear()


@pytest.fixture(autouse=True)
def _provider_cache_of_its_own(settings, tmp_path, monkeypatch):
    # A provider reply cache warm from an earlier run would answer without reaching the fake
    # server; each test (and any worker it starts) gets an empty one.
    cache_dir = tmp_path / "provider-cache"
    settings.ATELIER_PROVIDER_CACHE_DIR = cache_dir
    monkeypatch.setenv("ATELIER_PROVIDER_CACHE_DIR", str(cache_dir))


@pytest.fixture(autouse=True)
def _media_cache_of_its_own(settings, tmp_path):
    # Served images are cached by content hash; a test must see its own encodings, not an earlier run's.
    settings.ATELIER_MEDIA_CACHE_DIR = tmp_path / "media-cache"


@pytest.fixture(autouse=True)
def _provider_retries_without_waiting(settings, monkeypatch):
    # Failed provider calls are still retried (the retry paths stay under test), 10 ms apart instead
    # of seconds; tests of the backoff itself build their ProviderConfig directly.
    settings.ATELIER_PROVIDER_BACKOFF_BASE_MS = 10
    monkeypatch.setenv("ATELIER_PROVIDER_BACKOFF_BASE_MS", "10")


@contextmanager
def kept_for_the_module(django_db_blocker, folder: Path, build: Callable[[], T]) -> Iterator[T]:
    """``build()``'s world for a module's tests (a module-scoped fixture), in a transaction rolled back once they
    are done: each test runs in a savepoint of it, so what a test writes is still rolled back after it. Built with
    what the autouse fixtures above give each test (fast hashing, caches and media of its own under ``folder``)."""
    from django.db import transaction
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
                           ATELIER_EAGER_JOBS_IN_BACKGROUND=False, ATELIER_PROVIDER_BACKOFF_BASE_MS=10,
                           ATELIER_PROVIDER_CACHE_DIR=folder / "provider-cache",
                           ATELIER_MEDIA_CACHE_DIR=folder / "media-cache", MEDIA_ROOT=folder / "media"), \
            django_db_blocker.unblock(), transaction.atomic():
        yield build()
        transaction.set_rollback(True)


def current_database_url() -> str:
    """A DATABASE_URL for the database the current test uses, so that a subprocess
    (a Celery worker, a management command) works on the same data."""
    from django.db import connection

    settings_dict = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings_dict['NAME']}"
    user = settings_dict.get("USER") or "postgres"
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{settings_dict['NAME']}"


def subprocess_environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}}
    env.update(DATABASE_URL=current_database_url(), DJANGO_SETTINGS_MODULE="evalsite.settings", **extra)
    return env


#: The names a test module or test uses to reach the built demo (tests.leaderboard.bundles.demo_bundles).
DEMO_BUILDERS = {"demo_bundles_once", "demo_site_database_once", "demo_bundles"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    # tryfirst: xdist reads the groups in its own hook of this name (it suffixes each grouped test's node
    # id with "@group"), and a plugin registered after this conftest is called before it; without
    # tryfirst these groups were never seen and the broker tests ran in two processes at once.
    # Every broker test shares one Redis database (CELERY_TEST_BROKER_URL), and kombu keeps one hash of
    # unacknowledged messages per database, for every queue: a worker restores any entry past *its*
    # visibility timeout to its queue. The killed-worker test's workers use 3 s, so beside another
    # process's worker they would redeliver that worker's units. Under `--dist loadgroup` (make test) the
    # broker tests therefore run in one pytest process, one after another.
    # The demo that the bundle, LaTeX and accessibility tests read is built once per pytest process
    # (tests.leaderboard.bundles.demo_bundles, minutes on 2 cores): those tests run in one process.
    for item in items:
        if item.get_closest_marker("broker"):
            item.add_marker(pytest.mark.xdist_group("celery-broker"))
        elif DEMO_BUILDERS & (set(vars(item.module)) | set(getattr(item, "fixturenames", ()))):
            item.add_marker(pytest.mark.xdist_group("demo-bundles"))

"""The shared cache (``ATELIER_CACHE_URL``) on a real Redis: the backend the settings name loads, keeps
what is set, and counts its hits for /metrics — in a fresh process, as a gunicorn worker starts."""

import secrets

import pytest

from tests.conftest import require_service
from tests.manage_command import run_manage

ROUND_TRIP = """
from django.core.cache import cache
from prometheus_client import REGISTRY
cache.set("atelier-shared-cache-test", {"labels": 3}, timeout=30)
print("read back", cache.get("atelier-shared-cache-test"))
print("hits", REGISTRY.get_sample_value("django_cache_get_hits_total", {"backend": "redis"}))
cache.delete("atelier-shared-cache-test")
"""


@pytest.fixture
def redis_cache_url():
    require_service("redis")
    return "redis://127.0.0.1:6379/14"


def test_the_shared_cache_on_redis_keeps_what_is_set_and_counts_the_hit(redis_cache_url):
    done = run_manage("shell", "-c", ROUND_TRIP, ATELIER_DEV="true", ATELIER_CACHE_URL=redis_cache_url,
                      ATELIER_CACHE_PREFIX=f"atelier-test-{secrets.token_hex(4)}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "read back {'labels': 3}" in done.stdout
    assert "hits 1.0" in done.stdout


AWAY = """
import time
from django.core.cache import cache
started = time.monotonic()
cache.set("atelier-shared-cache-test", {"labels": 3}, timeout=30)
print("read back", cache.get("atelier-shared-cache-test", "a miss"))
print("seconds", round(time.monotonic() - started, 1))
"""


def _answers_as_a_miss_within_seconds(cache_url: str) -> None:
    done = run_manage("shell", "-c", AWAY, ATELIER_DEV="true", ATELIER_CACHE_URL=cache_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "read back a miss" in done.stdout
    assert float(done.stdout.split("seconds")[1]) < 5


def test_a_shared_cache_that_is_away_is_a_miss_not_an_error():
    # before: ConnectionInterrupted out of every page that reads the cache (a 500)
    _answers_as_a_miss_within_seconds("redis://127.0.0.1:1/0")  # nothing listens there


def test_a_shared_cache_that_accepts_and_never_answers_is_a_miss_within_seconds():
    # before: the request waited for as long as Redis stayed silent
    import socket

    with socket.create_server(("127.0.0.1", 0), backlog=64) as silent:  # the kernel accepts; nobody answers
        _answers_as_a_miss_within_seconds(f"redis://127.0.0.1:{silent.getsockname()[1]}/0")

"""C² reads: the Combined-uncertainty cache follows the engine's method version."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from engine.c2 import uncertainty
from leaderboard.c2.selectors import combined_uncertainty
from tests.leaderboard.c2.test_views import finished_run, task_set  # noqa: F401 (task_set is a fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _isolated_caches(settings, tmp_path):
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "provider-cache"
    cache.clear()
    yield
    cache.clear()


def test_a_bumped_uncertainty_method_version_is_computed_afresh_not_read_from_the_cache(task_set, monkeypatch):  # noqa: F811
    run = finished_run(task_set, "standard")
    first = combined_uncertainty(run, "text")
    assert first is not None and combined_uncertainty(run, "text") == first  # cached under the current version

    # a changed formula, with the version bumped as the constant's comment asks
    monkeypatch.setattr(uncertainty, "combined_comparison", lambda *args, **kwargs: {"formula": "changed"})
    monkeypatch.setattr(uncertainty, "UNCERTAINTY_METHOD_VERSION", uncertainty.UNCERTAINTY_METHOD_VERSION + 1, raising=False)
    assert combined_uncertainty(run, "text") == {"formula": "changed"}

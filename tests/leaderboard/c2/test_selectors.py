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


def test_results_edited_by_hand_are_computed_afresh_not_read_from_the_cache(task_set, monkeypatch):  # noqa: F811
    """A finished run's results change only by a hand edit (the shell, a data fix): its last save is in the key."""
    from leaderboard.c2.models import C2Run

    run = finished_run(task_set, "standard")
    assert combined_uncertainty(run, "text") is not None
    monkeypatch.setattr(uncertainty, "combined_comparison", lambda *args, **kwargs: {"results": "edited"})
    run.results = {**run.results, "edited": True}
    run.save(update_fields=["results"])
    assert combined_uncertainty(C2Run.objects.get(pk=run.pk), "text") == {"results": "edited"}

"""Bundle imports under hostile conditions: the same bundle imported twice at the same instant (on
PostgreSQL)."""

from __future__ import annotations

import pytest

from leaderboard.bundles.export import bundle_export
from leaderboard.bundles.imports import bundle_import
from leaderboard.bundles.models import ImportedBoard
from tests.concurrency import run_at_once
from tests.conftest import require_service
from tests.leaderboard.bundles.test_export import _isolated_caches, c2_run  # noqa: F401 — fixtures


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_same_bundle_imported_twice_at_once_is_stored_once(c2_run, tmp_path):  # noqa: F811
    require_service("postgres")
    root = bundle_export("c2", c2_run.pk, tmp_path / "b").path
    outcomes = run_at_once([lambda: bundle_import(root)] * 2)
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
    assert sorted(created for _, created in outcomes) == [False, True]
    assert len({board.pk for board, _ in outcomes}) == 1
    assert ImportedBoard.objects.count() == 1

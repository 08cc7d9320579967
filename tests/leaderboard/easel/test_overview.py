"""EASEL on the home page (leaderboard.easel.overview): the newest suite's board, cached while what it
was computed from is unchanged."""

from __future__ import annotations

import pytest

from leaderboard.easel import overview, services
from leaderboard.easel.models import EaselEpisode

pytestmark = pytest.mark.django_db


def test_the_home_pages_board_shows_a_final_s_changed_in_place(suite):
    run = services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent="simulated", skill=0.7))
    (row,) = overview.latest_board().rows  # computed and cached
    assert row.value != pytest.approx(0.123)
    # a hand edit (the admin, a rescoring): the same run, no new finish
    EaselEpisode.objects.filter(run=run, kind="reconstruction").update(final_s=0.123)
    (row,) = overview.latest_board().rows
    assert row.value == pytest.approx(0.123)


def test_the_home_pages_board_is_read_from_the_cache_while_nothing_changed(suite, django_assert_num_queries):
    services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent="simulated", skill=0.7))
    first = overview.latest_board()
    with django_assert_num_queries(2):  # the suite, the board's fingerprint
        assert overview.latest_board() == first

"""The EASEL run page in Chromium: opened before the run works, its episode table follows the run (each
row's status and steps live, the scores once the run is done), so the table never says "planned" under a
status line that says "done"."""

from __future__ import annotations

import pytest

from leaderboard.easel import services
from tests.browser.conftest import log_in, wait_until
from tests.factories import UserFactory
from tests.leaderboard.easel.conftest import SMALL

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_episode_table_follows_a_running_run_to_done(live_server, browser):
    UserFactory(username="rita", role="researcher")
    suite, _ = services.easel_suite_create(seed=0, per_category=SMALL, name="easel-run-page")
    run = services.easel_run_create(task_set=suite, agent="simulated")
    first, *rest = services.easel_run_pending_episodes(run_id=run.pk)
    page = browser.new_page()
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/easel/runs/{run.pk}/")
    row = f'#easel-episode-table tr[data-run-row="{first}"]'
    assert page.text_content(f"{row} [data-run-cell=status]") == "planned"

    services.easel_episode_execute(run_id=run.pk, episode_id=first)
    # while the run still works, the finished episode's row says so, without a reload
    wait_until(page, "sel => document.querySelector(sel + ' [data-run-cell=status]').textContent === 'done'", row)
    budget = run.episodes.get(pk=first).budget
    steps = run.episodes.get(pk=first).steps_done
    assert page.text_content(f"{row} [data-run-cell=steps]") == f"{steps}/{budget}"
    assert page.text_content("#easel-st") != "done"

    for episode_id in rest:
        services.easel_episode_execute(run_id=run.pk, episode_id=episode_id)
    services.easel_run_execute_inline(run=run)
    wait_until(page, "() => document.getElementById('easel-st').textContent === 'done'")
    # once done the page shows the finished table (it reloads): the scores of every episode, none "planned"
    wait_until(page, "sel => { const cell = document.querySelector(sel + ' td.final-s'); return cell && cell.textContent !== '–'; }",
               row)
    statuses = page.eval_on_selector_all("#easel-episode-table [data-run-cell=status]", "cells => cells.map(c => c.textContent)")
    assert statuses == ["done"] * (1 + len(rest))

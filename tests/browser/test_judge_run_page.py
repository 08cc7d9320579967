"""The judge-run page in Chromium: Start returns at once in the embedded (eager) default, and the page
follows the run's progress live until its leaderboard link appears."""

from __future__ import annotations

import threading

import pytest

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import JudgeRun
from tests.browser.conftest import TIMEOUT_MS, log_in, wait_until
from tests.factories import UserFactory
from tests.leaderboard.judging_factories import population

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_starting_a_run_from_the_page_does_not_wait_for_the_run(live_server, browser, monkeypatch, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.ATELIER_EAGER_JOBS_IN_BACKGROUND = True  # the embedded default: the page's Start runs in a thread
    UserFactory(username="rita", role="researcher")
    task_set, _ = population(n_models=3, n_tasks=2, name="bg")
    release = threading.Event()
    execute = judge_runs.judge_run_task_execute

    def held(**kwargs):
        # The run's first chunk waits for the test: were the request to run it, the page would never load.
        release.wait(TIMEOUT_MS / 1000)
        return execute(**kwargs)

    monkeypatch.setattr(judge_runs, "judge_run_task_execute", held)
    page = browser.new_page()
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/leaderboards/")
    page.select_option("select[name=task_set]", str(task_set.pk))
    page.fill("input[name=dimensions]", "U")
    page.fill("input[name=budget_per_task]", "4")
    page.click("form[action='/runs/new/'] button[type=submit]")
    page.wait_for_url("**/runs/*/", timeout=TIMEOUT_MS)
    run = JudgeRun.objects.get(task_set=task_set)
    assert run.status != JudgeRun.Status.DONE and not release.is_set()
    assert page.text_content("#st") in ("pending", "running")
    assert "The run has not finished" in page.text_content("#launch-gates")
    release.set()
    wait_until(page, "() => document.getElementById('st').textContent === 'done'")
    # the launch gates were read while the run worked: once it is done the page reloads to show them final,
    # not "provisional" with "no primary calls (n = 0)" under a status line that says done
    wait_until(page, "() => !document.getElementById('launch-gates').textContent.includes('The run has not finished')")
    page.wait_for_load_state()
    page.wait_for_selector("#snapshot-link a", timeout=TIMEOUT_MS)
    assert page.text_content("#chunks tr[data-task] .chunk-state") == "done"
    assert page.evaluate("() => document.getElementById('bar').style.width") == "100%"
    snapshot = JudgeRun.objects.get(pk=run.pk).snapshots.get()
    task_id = page.get_attribute("#chunks tr[data-task]", "data-task")
    assert page.get_attribute("#chunks tr[data-task] td:last-child a", "href") == f"/leaderboards/{snapshot.pk}/tasks/{task_id}/"

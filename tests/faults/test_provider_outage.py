"""A provider outage mid-run (the fake OpenAI server answering 503 past the client's retries): the judge
run stops resumable, saying how many calls it still needs; resumed after the provider returns, it
finishes with the comparisons and leaderboard of an uninterrupted run, answered calls reused from the cache."""

from __future__ import annotations

import os
import threading
import time

import pytest

from leaderboard.ekphrasis import judge_runs
from leaderboard.models import Comparison, JudgeRun, SubjectModel
from tests.benchmarks.bench_judge_throughput import judge_reply
from tests.fakes.openai_server import FakeOpenAIServer, Fault
from tests.leaderboard.ekphrasis.test_judge_runs import comparison_fingerprint
from tests.leaderboard.judging_factories import population

pytestmark = pytest.mark.django_db(transaction=True)

CONFIG = {"n_boot": 50, "swap_rate": 0, "duplicate_rate": 0}
#: tests/benchmarks/bench_faults.py sets a real outage length (a minute) and real backoff; the suite's
#: outage lasts until the run has given up (the retries 10 ms apart, tests/conftest.py).
OUTAGE_S = float(os.environ.get("FAULT_PROVIDER_OUTAGE_S", "0"))


class Outage:
    """Answers like a judge, except between the ``after``-th call and ``resolve()``: HTTP 503."""

    def __init__(self, after: int) -> None:
        self.after, self.calls, self.down, self.refused = after, 0, False, 0
        self.lock = threading.Lock()
        self.resolved = False
        self.down_since: float | None = None

    def __call__(self, request):
        with self.lock:
            self.calls += 1
            if self.calls > self.after and not self.resolved and not self.down:
                self.down, self.down_since = True, time.monotonic()
            if self.down and OUTAGE_S and time.monotonic() - self.down_since > OUTAGE_S:
                self.down, self.resolved = False, True
            if self.down:
                self.refused += 1
                return Fault.http(503)
        return judge_reply(request)

    def resolve(self) -> None:
        with self.lock:
            self.down, self.resolved = False, True


def resume(run: JudgeRun) -> None:
    """Resume a failed run: failed -> running, error cleared, dispatched again (issue 22's resume service
    does exactly this; on this branch's base the API's resume left the status failed, so it never finalised)."""
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.FAILED).update(status=JudgeRun.Status.RUNNING, error="")
    judge_runs.judge_run_start(run=run)


def a_run(task_set, server, name: str) -> JudgeRun:
    SubjectModel.objects.get_or_create(display_name=name, defaults={
        "role": SubjectModel.Role.JUDGE, "base_url": server.base_url, "provider_id": "fake-model"})
    return judge_runs.judge_run_create(task_set=task_set, judge_name=name, dimensions="E", budget_per_task=6, seed=3,
                                       config=CONFIG)


def test_a_run_stopped_by_a_provider_outage_resumes_to_the_uninterrupted_result(settings, tmp_path):
    task_set, _ = population(n_models=4, n_tasks=3, name="outage")
    with FakeOpenAIServer(handler=judge_reply) as server:
        reference = a_run(task_set, server, "judge-reference")
        judge_runs.judge_run_execute_inline(run=reference)
    reference.refresh_from_db()
    assert reference.status == JudgeRun.Status.DONE

    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "outage-cache"  # nothing answered from the first run
    if OUTAGE_S:
        settings.ATELIER_PROVIDER_BACKOFF_BASE_MS = 1000  # the site's default backoff
    outage = Outage(after=7)
    with FakeOpenAIServer(handler=outage) as server:
        # the same judge, now behind the failing server: the same requests, so the same replies
        SubjectModel.objects.filter(display_name="judge-reference").update(base_url=server.base_url)
        interrupted = judge_runs.judge_run_create(task_set=task_set, judge_name="judge-reference", dimensions="E",
                                                  budget_per_task=6, seed=3, config=CONFIG)
        judge_runs.judge_run_start(run=interrupted)  # eager: runs here, outside a transaction
        interrupted.refresh_from_db()
        assert interrupted.status == JudgeRun.Status.FAILED
        assert "did not answer after its retries" in interrupted.error and "still needed" in interrupted.error
        assert outage.refused > settings.ATELIER_PROVIDER_MAX_RETRIES  # retried within the bound first
        assert not Comparison.objects.filter(run=interrupted, status=Comparison.Status.FAILED).exists()
        answered_before = Comparison.objects.filter(run=interrupted, status=Comparison.Status.OK).count()
        assert 0 < answered_before

        stopped_after = time.monotonic() - outage.down_since
        print(f"provider outage: the run stopped {stopped_after:.1f} s into the outage after {outage.refused} "
              f"refused requests: {interrupted.error}")
        if OUTAGE_S:
            time.sleep(max(0.0, OUTAGE_S - stopped_after))
        outage.resolve()
        sent_before = len(server.chat_requests)
        resume(interrupted)
        interrupted.refresh_from_db()
        sent_after_resume = len(server.chat_requests) - sent_before
    assert interrupted.status == JudgeRun.Status.DONE, interrupted.error
    # resumed calls only: nothing answered before the outage was asked again
    total_ok = Comparison.objects.filter(run=interrupted, status=Comparison.Status.OK).count()
    assert sent_after_resume == total_ok - answered_before
    strip = lambda rows: [row[:6] + row[7:] for row in rows]  # noqa: E731 — judge_name aside, the same comparisons
    assert strip(comparison_fingerprint(interrupted)) == strip(comparison_fingerprint(reference))
    assert interrupted.snapshots.get().payload["per_dimension"] == reference.snapshots.get().payload["per_dimension"]

"""A provider outage mid-run (the fake OpenAI server answering 503 past the client's retries): a run of
each protocol — judge, EASEL (the MLLM agent's steps), C² (generation, confidence, rater) — stops
resumable, saying how many calls it still needs; resumed after the provider returns, it finishes with the
results of an uninterrupted run, answered calls reused (stored or cached), none asked twice."""

from __future__ import annotations

import os
import threading
import time

import pytest

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import Comparison, JudgeRun
from leaderboard.models import SubjectModel
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
    """Answers like ``answer`` (a judge by default), except between the ``after``-th call and ``resolve()``:
    HTTP 503."""

    def __init__(self, after: int, answer=judge_reply) -> None:
        self.after, self.calls, self.down, self.refused = after, 0, False, 0
        self.answer = answer
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
        return self.answer(request)

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


def test_an_easel_model_run_stopped_by_a_provider_outage_resumes_to_the_uninterrupted_episodes(settings, tmp_path,
                                                                                                 monkeypatch):
    from leaderboard.easel import services
    from leaderboard.easel.models import EaselRun
    from leaderboard.runs.starting import run_resume
    from tests.fakes.easel_agent import EaselAgentHandler
    from tests.leaderboard.easel.test_agents import KEY_ENV, fingerprint, vision_model

    monkeypatch.setenv(KEY_ENV, "sk-easel-test")
    suite, _ = services.easel_suite_create(seed=0, per_category={"programmatic": 2, "spatial_geometry": 0,
                                                                 "abstract_cartoon": 0, "natural": 0}, name="easel-outage")
    suite.tasks.filter(subtype="semantic").delete()
    with FakeOpenAIServer(handler=EaselAgentHandler(invalid_every=5)) as server:
        model = vision_model(server)
        reference = services.easel_run_execute_inline(run=services.easel_run_create(task_set=suite, agent=model.display_name))
    assert reference.status == EaselRun.Status.DONE

    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "outage-cache"  # the second run really asks again
    outage = Outage(after=30, answer=EaselAgentHandler(invalid_every=5))
    with FakeOpenAIServer(handler=outage) as server:
        SubjectModel.objects.filter(pk=model.pk).update(base_url=server.base_url)
        interrupted = services.easel_run_create(task_set=suite, agent=model.display_name)
        services.easel_run_start(run=interrupted)  # eager: every episode runs here and meets the outage
        interrupted.refresh_from_db()
        assert (interrupted.status, interrupted.resumable) == (EaselRun.Status.FAILED, True)
        assert "did not answer after its retries" in interrupted.error
        still_needed = services.easel_run_calls_still_needed(run_id=interrupted.pk)
        assert f"{still_needed} call(s) still needed" in interrupted.error
        steps_before = interrupted.steps_done
        assert steps_before == 30 and still_needed == interrupted.steps_planned - 30
        assert outage.refused > settings.ATELIER_PROVIDER_MAX_RETRIES  # retried within the bound first
        print(f"EASEL provider outage: stopped after {outage.refused} refused requests: {interrupted.error}")
        outage.resolve()
        sent_before = len(server.chat_requests)
        run_resume(interrupted)
        interrupted.refresh_from_db()
        sent_after_resume = len(server.chat_requests) - sent_before
    assert interrupted.status == EaselRun.Status.DONE, interrupted.error
    assert sent_after_resume == interrupted.steps_done - steps_before  # resumed at the next step, nothing re-asked
    assert fingerprint(interrupted) == fingerprint(reference)
    strip = lambda run: list(run.episodes.order_by("position").values_list(  # noqa: E731
        "final_s", "final_ssim", "final_l1", "final_edge_iou", "best", "auc"))
    assert strip(interrupted) == strip(reference)


class OneFakePerModel:
    """A C² fake model of its own for each model name a request carries: the fake varies its answer with the
    count of identical requests, and two models' sending threads interleave in no fixed order."""

    def __init__(self) -> None:
        from tests.leaderboard.c2.test_runs import fake_model

        self.fakes: dict[str, object] = {}
        self.make = fake_model
        self.lock = threading.Lock()

    def __call__(self, request):
        with self.lock:
            fake = self.fakes.setdefault(request.get("model", ""), self.make())
        return fake(request)


#: The outage begins after this many calls (negative: this many before the run's end, among the rater's calls,
#: which come last).
@pytest.mark.parametrize("after", [8, -2], ids=["during-generation", "during-rating"])
def test_a_c2_run_stopped_by_a_provider_outage_resumes_to_the_uninterrupted_result(after, settings, tmp_path,
                                                                                   monkeypatch):
    from leaderboard.c2.models import C2Rating, C2Run, C2Sample
    from leaderboard.c2.services import runs
    from leaderboard.runs.starting import run_resume
    from tests.leaderboard.c2.test_runs import KEY_ENV, c2_task_set, create_run

    monkeypatch.setenv(KEY_ENV, "sk-test")
    settings.ATELIER_EMBED_CACHE_DIR = tmp_path / "embed-cache"
    settings.ATELIER_PROVIDER_CONCURRENCY = 1  # the fake model cycles answers to repeated requests: keep one order
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "reference-cache"
    task_set = c2_task_set(tmp_path, visual=False)
    with FakeOpenAIServer(handler=OneFakePerModel()) as server:
        reference = runs.c2_run_execute_inline(run=create_run(server, task_set))
        reference_calls = len(server.chat_requests)
    assert reference.status == C2Run.Status.DONE, reference.error

    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "outage-cache"
    outage = Outage(after=after if after > 0 else reference_calls + after, answer=OneFakePerModel())
    with FakeOpenAIServer(handler=outage) as server:
        SubjectModel.objects.update(base_url=server.base_url)
        interrupted = runs.c2_run_create(task_set=task_set, model_names=["vision-alpha", "vision-beta"], n_samples=3,
                                         rater_name="rater-model", embedder="fake-embedder")
        runs.c2_run_start(run=interrupted)
        interrupted.refresh_from_db()
        assert (interrupted.status, interrupted.resumable) == (C2Run.Status.FAILED, True)
        assert "did not answer after its retries" in interrupted.error
        assert f"{interrupted.calls_planned - interrupted.calls_done} call(s) still needed" in interrupted.error
        assert outage.refused > settings.ATELIER_PROVIDER_MAX_RETRIES
        # an outage is not an answer: nothing was recorded as failed
        assert not C2Sample.objects.filter(run=interrupted, status=C2Sample.Status.FAILED).exists()
        assert not C2Rating.objects.filter(sample__run=interrupted, status=C2Rating.Status.FAILED).exists()
        print(f"C² provider outage after {outage.after} calls: {interrupted.error}")
        outage.resolve()
        answered_before = outage.calls - outage.refused
        run_resume(interrupted)
        interrupted.refresh_from_db()
    assert interrupted.status == C2Run.Status.DONE, interrupted.error
    # every call answered before the outage came back from the cache: the server answered each call once
    assert outage.calls - outage.refused == reference_calls
    assert 0 < answered_before < reference_calls

    def samples(run):
        return list(C2Sample.objects.filter(run=run).order_by("task__external_id", "subject_model__display_name",
                                                              "sample_index").values_list(
            "task__external_id", "subject_model__display_name", "sample_index", "status", "text", "confidence",
            "verdict", "usefulness"))

    def ratings(run):
        return list(C2Rating.objects.filter(sample__run=run).order_by(
            "sample__task__external_id", "sample__subject_model__display_name", "sample__sample_index", "rater_name",
            "repeat").values_list("status", "u", "o", "s"))

    assert samples(interrupted) == samples(reference)
    assert ratings(interrupted) == ratings(reference)
    assert interrupted.results["scores"] == reference.results["scores"]

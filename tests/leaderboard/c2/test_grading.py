"""The C² service path grades hostile code as failed: a run whose model answers every hostile program
of ``tests/engine/c2/test_hostile_programs.py`` (one LiveCodeBench problem each, against the fake
OpenAI-compatible server) stores no ``passed`` verdict and no Usefulness for any of them, while the
honest programs beside them are stored passed with Usefulness 1.0."""

from __future__ import annotations

import json

import pytest

from leaderboard.c2.models import C2Sample
from leaderboard.c2.services import grading as grading_service
from leaderboard.c2.services import runs
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.models import SubjectModel
from tests.engine.c2.test_grading import needs_sandbox
from tests.engine.c2.test_hostile_programs import HONEST, HOSTILE, PROBLEMS, TIMEOUT_S
from tests.fakes.c2_model import C2FakeModel
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = [pytest.mark.django_db, needs_sandbox]

KEY_ENV = "FAKE_C2_API_KEY"


def marker(name: str) -> str:
    return f"[[{name}]]"  # bracketed, so no name's marker is found inside another's


def livecodebench_record(name: str, problem: str) -> dict:
    tests = PROBLEMS[problem]
    testtype = "functional" if tests.call_based else "stdin"
    cases = [{"input": given, "output": expected, "testtype": testtype}
             for given, expected in zip(tests.inputs, tests.outputs)]
    return {
        "question_id": name, "question_content": f"Solve problem {marker(name)}.", "starter_code": "",
        "public_test_cases": json.dumps(cases[:1]), "private_test_cases": json.dumps(cases[1:]),
        "metadata": json.dumps({"func_name": tests.func_name} if tests.call_based else {}),
    }


@pytest.fixture
def graded_run(settings, tmp_path, monkeypatch):
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "provider-cache"
    settings.ATELIER_EMBED_CACHE_DIR = tmp_path / "embed-cache"
    monkeypatch.setenv(KEY_ENV, "sk-test")
    monkeypatch.setattr(grading_service, "CODE_TIMEOUT_S", float(TIMEOUT_S))  # the late answers come after it
    programs = {**HOSTILE, **HONEST}
    records = [livecodebench_record(name, problem) for name, (problem, _) in programs.items()]
    task_set, _ = c2_tasks_import(fmt="livecodebench", name="hostile.jsonl",
                                  raw="".join(json.dumps(r) + "\n" for r in records).encode(),
                                  task_set_name="c2-hostile", version="1")
    model = C2FakeModel(code={marker(name): program for name, (_, program) in programs.items()})
    with FakeOpenAIServer(handler=model) as server:
        for name, role in (("subject-alpha", "subject"), ("rater-model", "judge"), ("fake-embedder", "embedder")):
            SubjectModel.objects.create(display_name=name, provider_id=f"provider/{name}", role=role,
                                        base_url=server.base_url, api_key_env=KEY_ENV)
        run = runs.c2_run_create(task_set=task_set, model_names=["subject-alpha"], n_samples=1,
                                 rater_name="rater-model", embedder="fake-embedder")
        yield runs.c2_run_execute_inline(run=run)


def stored(run) -> dict[str, C2Sample]:
    return {sample.task.external_id: sample for sample in C2Sample.objects.filter(run=run).select_related("task")}


def test_every_hostile_program_is_stored_failed_and_every_honest_one_passed(graded_run):
    # one run for all programs (a run per program would cost a minute each): three checks of one outcome
    samples = stored(graded_run)
    assert set(HOSTILE) | set(HONEST) <= set(samples)
    wrongly_passed = {name: (samples[name].verdict, samples[name].usefulness) for name in HOSTILE
                      if samples[name].verdict == "passed" or samples[name].usefulness or samples[name].correct}
    assert wrongly_passed == {}
    assert {samples[name].verdict for name in HOSTILE} <= {"wrong_answer", "time_limit", "runtime_error"}
    assert samples["ignores_alarm_answers_late_stdio"].verdict == "time_limit"
    assert {(samples[name].verdict, samples[name].usefulness) for name in HONEST} == {("passed", 1.0)}

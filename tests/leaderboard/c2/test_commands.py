"""C² commands and Celery jobs: run_c2 with its progress bar, --resume, the queued path through Celery
(eager in tests) enqueued on commit, and the demo's idempotent import."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from leaderboard.c2.demo import DEMO_TASK_SET, _import_all
from leaderboard.c2.models import C2Run, C2Sample, C2TaskImage
from leaderboard.c2.services import runs
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.models import Task

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _isolated_caches(settings, tmp_path):
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "provider-cache"


@pytest.fixture
def task_set():
    trivia = {"Data": [{"Question": "Red planet?", "QuestionId": "q1", "Answer": {"Value": "Mars", "NormalizedAliases": ["mars"]}}]}
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                  task_set_name="cmd", version="1")
    c2_tasks_import(fmt="macgyver", name="m.jsonl", raw=b'{"id": "m1", "Problem": "Open a jar with a belt."}\n',
                    task_set_name="cmd", version="1")
    return task_set


def test_run_c2_runs_to_the_end_with_a_progress_bar_and_labels_simulation(task_set, capsys):
    out = io.StringIO()
    call_command("run_c2", "--task-set", "cmd", "--models", "simulated-a,simulated-b", "--samples", "2", stdout=out)
    text = out.getvalue()
    run = C2Run.objects.get()
    assert "SIMULATED" in text and f"C² run {run.pk} done" in text and "Combined creativity" in text
    assert run.status == "done" and run.calls_done == run.calls_planned
    assert "call" in capsys.readouterr().err  # tqdm writes its bar to stderr


def test_run_c2_refuses_an_unknown_model_with_a_clear_error(task_set):
    with pytest.raises(CommandError, match="no subject model named 'nobody'"):
        call_command("run_c2", "--task-set", "cmd", "--models", "nobody")
    assert not C2Run.objects.exists()


def test_run_c2_resume_finishes_an_interrupted_run_without_new_rows(task_set):
    run = runs.c2_run_create(task_set=task_set, model_names=["simulated-a"], n_samples=3)
    runs.c2_run_pending_prompts(run_id=run.pk)
    qa = task_set.tasks.get(family="qa")
    runs.c2_prompts_execute(run_id=run.pk, task_ids=[qa.pk])  # one prompt done, then the worker "dies"
    before = C2Sample.objects.filter(run=run).count()
    call_command("run_c2", "--resume", str(run.pk), stdout=io.StringIO())
    run.refresh_from_db()
    assert run.status == "done" and C2Sample.objects.filter(run=run).count() == before == 6


def test_a_queued_run_is_dispatched_on_commit_and_finishes_through_celery(task_set, django_capture_on_commit_callbacks):
    run = runs.c2_run_create(task_set=task_set, model_names=["simulated-a"], n_samples=2)
    with django_capture_on_commit_callbacks(execute=True):
        runs.c2_run_start(run=run)
        assert C2Run.objects.get(pk=run.pk).status == "pending"  # nothing runs before the commit
    run.refresh_from_db()
    assert run.status == "done" and run.prompts_done == run.prompts_total == 2


def test_demo_import_is_idempotent(tmp_path):
    task_set = _import_all(tmp_path)
    counts = (Task.objects.filter(task_set=task_set).count(), C2TaskImage.objects.count())
    _import_all(tmp_path)
    assert (Task.objects.filter(task_set__name=DEMO_TASK_SET).count(), C2TaskImage.objects.count()) == counts
    assert task_set.is_demo and set(task_set.tasks.values_list("family", flat=True)) == {
        "qa", "code", "vqa", "story", "idea", "visual_story"}
    assert all(len(t.constraints["answers"]) == 10 for t in task_set.tasks.filter(family="vqa"))


def test_the_run_summary_gives_each_task_types_creativity_with_its_interval(task_set, capsys):
    out = io.StringIO()
    call_command("run_c2", "--task-set", "cmd", "--models", "simulated-a", "--samples", "2", stdout=out)
    text = out.getvalue()
    assert "95% bootstrap interval over prompts" in text
    rows = [line.split() for line in text.splitlines() if line.strip().startswith(("qa ", "idea "))]
    assert len(rows) == 2 and all(row[2].startswith("[") and row[3].endswith("]") for row in rows)
    assert "\r" not in capsys.readouterr().err  # piped: plain lines


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--temperature", "3", r"temperature must lie in \[0, 2\]; got 3"),
    ("--samples", "0", "samples must lie in 1..50"),
    ("--tau", "0", r"tau must lie in \(0, 1\]"),
])
def test_a_refused_value_leaves_no_run_and_names_the_allowed_range(task_set, option, value, message):
    with pytest.raises(CommandError, match=message):
        call_command("run_c2", "--task-set", "cmd", "--models", "simulated-a", option, value, stdout=io.StringIO())
    assert not C2Run.objects.exists()


def test_run_c2_refuses_a_task_set_of_another_protocol(task_set):
    from leaderboard.models import Benchmark, TaskSet
    from leaderboard.services.catalogue import benchmark_get_or_create

    TaskSet.objects.create(benchmark=benchmark_get_or_create(kind=Benchmark.Kind.EASEL), name="paint", version="1")
    with pytest.raises(CommandError, match="paint v1 is a task set of EASEL; the C² run needs one of C²-Eval"):
        call_command("run_c2", "--task-set", "paint", "--models", "simulated-a", stdout=io.StringIO())
    assert not C2Run.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("which", ["file", "annotations"])
def test_import_c2_of_a_folder_says_it_is_not_a_readable_file(tmp_path, which):
    data = tmp_path / "data.jsonl"
    data.write_text("{}\n")
    args = {"file": [str(tmp_path), "--format", "triviaqa"],
            "annotations": [str(data), "--format", "okvqa", "--annotations", str(tmp_path)]}[which]
    with pytest.raises(CommandError, match=rf"{tmp_path}: not a readable file \(Is a directory\)"):
        call_command("import_c2", *args, "--task-set", "t", "--version", "1")
    assert not Task.objects.exists()

"""Fixed-pair judge runs: exactly the given pairs, in the given order, resumable, no leaderboard
snapshot; and the condition-labelled verdicts the Novelty ablation reads (Ekphrasis §5.4, App. D.1)."""

from __future__ import annotations

import pytest

from leaderboard.ekphrasis import judge_runs, judges, selectors
from leaderboard.ekphrasis.models import Comparison, JudgeRun, LeaderboardSnapshot
from leaderboard.runs.errors import RunConfigurationError
from leaderboard.runs.tasks import run_finalise
from tests.factories import PASSWORD
from tests.leaderboard.judging_factories import planted_skills, population, simulated_run

pytestmark = pytest.mark.django_db


def primary(task_set, task_index: int, model):
    return model.responses.get(task=task_set.tasks.order_by("position", "external_id")[task_index], is_primary=True)


def some_pairs(task_set, models):
    """Three pairs on two of the three tasks; the first is given with the higher model id first."""
    t = list(task_set.tasks.order_by("position", "external_id"))
    return [
        (t[0], primary(task_set, 0, models[3]), primary(task_set, 0, models[0])),
        (t[0], primary(task_set, 0, models[1]), primary(task_set, 0, models[2])),
        (t[2], primary(task_set, 2, models[-1]), primary(task_set, 2, models[1])),
    ]


def fixed_run(task_set, models, pairs, *, dimensions="U", anchor="tig", seed=7):
    return judge_runs.judge_run_create(
        task_set=task_set, judge_name="simulated", dimensions=dimensions, seed=seed, novelty_anchor=anchor,
        pairs=pairs, config={"simulated": {"skills": planted_skills(models), "malformed_rate": 0.0}},
    )


def judged(run) -> list[tuple]:
    return sorted(
        Comparison.objects.filter(run=run).values_list(
            "task_id", "dimension", "kind", "repeat", "shown_a_id", "shown_b_id", "status", "winner", "confidence")
    )


def test_a_fixed_pair_run_judges_exactly_the_given_pairs_in_the_given_order():
    task_set, models = population(n_models=5, n_tasks=3, name="fixed")
    pairs = some_pairs(task_set, models)
    run = fixed_run(task_set, models, pairs, dimensions="UE")
    assert run.tasks_total == 2 and run.calls_planned == 6  # two tasks have pairs; 3 pairs × 2 dimensions
    assert judge_runs.judge_run_execute_inline(run=run) is None
    rows = Comparison.objects.filter(run=run)
    expected = {(task.pk, d, x.pk, y.pk) for task, x, y in pairs for d in "UE"}
    assert {(c.task_id, c.dimension, c.shown_a_id, c.shown_b_id) for c in rows} == expected
    assert set(rows.values_list("kind", flat=True)) == {"primary"} and rows.count() == 6
    assert not rows.exclude(status="ok").exists()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE and run.finished_at is not None and run.calls_done == 6


def test_a_fixed_pair_run_stores_no_snapshot_and_leaves_the_leaderboard_to_the_sampled_run():
    task_set, models = population(n_models=4, n_tasks=3, name="snap")
    sampled = simulated_run(task_set, models, budget=6)
    snapshot = judge_runs.judge_run_execute_inline(run=sampled)
    before = selectors.judge_pair_outcomes(task_set=task_set, dimension="U")
    run = fixed_run(task_set, models, some_pairs(task_set, models)[:2])
    judge_runs.judge_run_execute_inline(run=run)
    assert LeaderboardSnapshot.objects.filter(run=run).count() == 0
    run_finalise("judge_run", run.pk)  # the Celery task, finalising again: still none
    assert LeaderboardSnapshot.objects.filter(run=run).count() == 0
    assert selectors.latest_snapshot(task_set=task_set, dimension="U") == snapshot
    assert selectors.judge_pair_outcomes(task_set=task_set, dimension="U") == before


def test_a_crashed_fixed_pair_run_resumes_without_duplicating_comparisons(monkeypatch):
    task_set, models = population(n_models=5, n_tasks=3, name="crash")
    pairs = some_pairs(task_set, models)
    reference = fixed_run(task_set, models, pairs)
    judge_runs.judge_run_execute_inline(run=reference)

    run = fixed_run(task_set, models, pairs)
    real = judges.judge_comparisons
    calls = []

    def dies_on_the_second_batch(*args, **kwargs):
        calls.append(kwargs["task"].pk)
        if len(calls) == 2:
            raise RuntimeError("worker killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(judges, "judge_comparisons", dies_on_the_second_batch)
    with pytest.raises(RuntimeError):
        judge_runs.judge_run_execute_inline(run=run)
    # the second task's pair was planned before the call and is still waiting
    assert Comparison.objects.filter(run=run, status="planned").count() == 1
    monkeypatch.setattr(judges, "judge_comparisons", real)

    judge_runs.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE and run.snapshots.count() == 0
    assert Comparison.objects.filter(run=run).count() == len(pairs)
    assert judged(run) == judged(reference)


def test_a_pair_with_an_empty_response_gets_its_automatic_record_without_a_call():
    task_set, models = population(n_models=4, n_tasks=1, name="empty")
    task = task_set.tasks.get()
    empty = primary(task_set, 0, models[2])
    empty.core_idea = ""
    empty.save()
    run = fixed_run(task_set, models, [(task, primary(task_set, 0, models[0]), empty),
                                       (task, primary(task_set, 0, models[1]), primary(task_set, 0, models[3]))])
    judge_runs.judge_run_execute_inline(run=run)
    automatic = Comparison.objects.get(run=run, kind="automatic")
    assert automatic.shown_b_id == empty.pk and automatic.winner == "A" and automatic.confidence == 1.0
    # the other empty-response pairs of the task are not this run's business
    assert Comparison.objects.filter(run=run).count() == 2


@pytest.mark.parametrize("case", ["other task", "same model", "same models twice", "no pairs"])
def test_pairs_a_run_cannot_judge_are_refused_and_nothing_is_created(case):
    task_set, models = population(n_models=4, n_tasks=2, name="bad")
    t0, t1 = task_set.tasks.order_by("position", "external_id")
    r = {(k, m): primary(task_set, k, models[m]) for k in (0, 1) for m in range(4)}
    pairs = {
        "other task": [(t0, r[0, 0], r[1, 1])],
        "same model": [(t0, r[0, 0], r[0, 0])],
        "same models twice": [(t0, r[0, 0], r[0, 1]), (t0, r[0, 1], r[0, 0]), (t1, r[1, 0], r[1, 1])],
        "no pairs": [],
    }[case]
    if case == "same models twice":
        # an exact repeat (either order) is one pair, not an error
        run = fixed_run(task_set, models, pairs)
        assert run.config["fixed_pairs"] == [[t0.pk, r[0, 0].pk, r[0, 1].pk], [t1.pk, r[1, 0].pk, r[1, 1].pk]]
        return
    with pytest.raises(RunConfigurationError):
        fixed_run(task_set, models, pairs)
    assert not JudgeRun.objects.exists()


def test_another_sample_of_the_same_two_models_on_a_task_is_refused():
    from tests.factories import ResponseFactory

    task_set, models = population(n_models=3, n_tasks=1, name="samples")
    task = task_set.tasks.get()
    second = ResponseFactory(task=task, subject_model=models[0], sample=2, is_primary=False)
    with pytest.raises(RunConfigurationError, match="same two models"):
        fixed_run(task_set, models, [(task, primary(task_set, 0, models[0]), primary(task_set, 0, models[1])),
                                     (task, second, primary(task_set, 0, models[1]))])


def test_condition_outcomes_are_the_latest_finished_fixed_pair_runs_labelled_by_anchor():
    task_set, models = population(n_models=4, n_tasks=2, name="cond")
    t = list(task_set.tasks.order_by("position", "external_id"))
    pairs = [(t[0], primary(task_set, 0, models[0]), primary(task_set, 0, models[1])),
             (t[1], primary(task_set, 1, models[2]), primary(task_set, 1, models[3]))]
    old_generic = fixed_run(task_set, models, pairs, dimensions="N", anchor="generic")
    judge_runs.judge_run_execute_inline(run=old_generic)
    tig = fixed_run(task_set, models, pairs, dimensions="N", anchor="tig")
    generic = fixed_run(task_set, models, pairs, dimensions="N", anchor="generic")
    for run in (tig, generic):
        judge_runs.judge_run_execute_inline(run=run)
    unfinished = fixed_run(task_set, models, pairs, dimensions="N", anchor="tig")  # never executed: not read
    simulated_run(task_set, models, budget=4, dimensions="N", seed=3)  # an active run: not a condition

    runs = selectors.judge_condition_runs(task_set=task_set, dimension="N")
    assert [(r.condition, r.run_id, r.n_pairs, r.is_simulated) for r in runs] == [
        ("tig", tig.pk, 2, True), ("generic", generic.pk, 2, True)]
    assert unfinished.pk not in {r.run_id for r in runs}
    outcomes = selectors.judge_condition_outcomes(task_set=task_set, dimension="N")
    expected = set()
    for run in (tig, generic):
        for c in Comparison.objects.filter(run=run, kind="primary"):
            x, y = sorted((c.shown_a_id, c.shown_b_id))
            expected.add((run.novelty_anchor, run.pk, c.task.external_id, x, y, c.winner_response_id))
    assert {(o.condition, o.run_id, o.task_external_id, o.response_x_id, o.response_y_id, o.winner_response_id)
            for o in outcomes} == expected
    assert len(outcomes) == 4
    assert selectors.judge_condition_runs(task_set=task_set, dimension="U") == []


def test_the_run_pages_mark_a_fixed_pair_run(client, rita):
    task_set, models = population(n_models=4, n_tasks=3, name="page")
    run = fixed_run(task_set, models, some_pairs(task_set, models)[:2])
    judge_runs.judge_run_execute_inline(run=run)
    assert client.login(username=rita.username, password=PASSWORD)
    detail = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="fixed-pairs"' in detail and "no leaderboard snapshot" in detail
    assert 'data-run-link-text="Open the leaderboard"></p>' in detail  # nothing to open
    assert client.get(f"/runs/{run.pk}/status.json").json()["fixed_pairs"] == 2
    assert "fixed pairs · TIG population clichés" in client.get("/leaderboards/").content.decode()

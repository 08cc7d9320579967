"""EASEL services: suites stored exactly, runs planned per task."""

from __future__ import annotations

import pytest

from leaderboard.easel import services
from leaderboard.easel.models import NATIVE_BUDGET, EaselImage, EaselRun
from tests.leaderboard.easel.conftest import SMALL

pytestmark = pytest.mark.django_db


def test_a_suite_is_a_frozen_easel_task_set_with_one_image_per_task(suite):
    assert suite.frozen and suite.benchmark.kind == "easel"
    assert suite.tasks.count() == 2 + 5
    assert EaselImage.objects.filter(task__task_set=suite).count() == 7


def test_a_stored_task_rebuilds_the_engine_task_exactly(suite):
    from engine.easel.references import generate_suite

    original = generate_suite(0, per_category=SMALL)[0]
    rebuilt = services.engine_task_of(suite.tasks.get(external_id=original.id))
    assert rebuilt.budget == original.budget and rebuilt.size == original.size
    assert (rebuilt.reference == original.reference).all()


def test_creating_the_same_suite_again_writes_nothing_and_returns_it(suite):
    again, created = services.easel_suite_create(seed=0, per_category=SMALL, name="easel-test")
    assert not created and again.pk == suite.pk


def test_a_suite_name_taken_by_other_references_is_refused(suite):
    with pytest.raises(services.SuiteConflict):
        services.easel_suite_create(seed=1, per_category=SMALL, name="easel-test", version=suite.version)


def test_a_simulated_run_plans_one_episode_per_task_and_is_labelled(suite):
    run = services.easel_run_create(task_set=suite, agent="simulated", skill=0.7)
    assert run.is_simulated and run.agent_kind == EaselRun.AgentKind.SIMULATED
    assert run.episodes.count() == suite.tasks.count() == run.episodes_total
    assert run.steps_planned == sum(t.constraints["budget"] for t in suite.tasks.all())


def test_painter_and_anchor_runs_plan_reconstruction_episodes_only(suite):
    for agent in ("painter", "mean_colour_fill"):
        run = services.easel_run_create(task_set=suite, agent=agent)
        assert set(run.episodes.values_list("kind", flat=True)) == {"reconstruction"}


def test_a_native_run_gives_reconstruction_episodes_the_long_budget(suite):
    run = services.easel_run_create(task_set=suite, agent="painter", budget_setting="native")
    assert set(run.episodes.values_list("budget", flat=True)) == {NATIVE_BUDGET}


def test_an_unknown_agent_is_a_configuration_error_naming_it(suite):
    with pytest.raises(services.RunConfigurationError, match="no agent 'gpt-imaginary'"):
        services.easel_run_create(task_set=suite, agent="gpt-imaginary")
    assert not EaselRun.objects.exists()


def test_skill_is_refused_for_an_agent_that_is_not_simulated(suite):
    with pytest.raises(services.RunConfigurationError, match="simulated agent only"):
        services.easel_run_create(task_set=suite, agent="painter", skill=0.5)


def test_a_progress_curve_starts_at_s0_and_ends_at_the_final_s():
    curve = services.progress_curve([0.5, 0.6, 0.7, 0.65], 0.4, points=5)
    assert curve[0] == 0.4 and curve[-1] == 0.65 and len(curve) == 5
    assert curve[2] == pytest.approx(0.6)  # fraction 0.5 = step 2 of 4

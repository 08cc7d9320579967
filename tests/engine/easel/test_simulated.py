"""The labelled simulated agent (engine/easel/simulated.py)."""

import numpy as np
import pytest

from engine.easel.episode import Environment
from engine.easel.references import generate_suite
from engine.easel.semantic import semantic_tasks
from engine.easel.simulated import SIMULATED_PROFILES, SimulatedAgent, simulated_agent
from engine.easel.trajectory import trajectory_diagnostics


@pytest.fixture(scope="module")
def task():
    return generate_suite(0, per_category={"spatial_geometry": 1})[0]


def test_simulated_agents_are_labelled_simulated():
    for profile in SIMULATED_PROFILES:
        agent = simulated_agent(profile)
        assert agent.is_simulated and agent.name.startswith("simulated")
    assert SimulatedAgent(0.5, name="demo").name == "simulated-demo"


def test_simulated_agent_is_deterministic(task):
    runs = []
    for _ in range(2):
        env = Environment(task, budget=20)
        env.run(simulated_agent("simulated-degrading", seed=3))
        runs.append(env)
    assert [o.raw for o in runs[0].outcomes] == [o.raw for o in runs[1].outcomes]
    np.testing.assert_array_equal(runs[0].canvas, runs[1].canvas)


def test_a_plateau_profile_repeats_itself(task):
    env = Environment(task)
    env.run(simulated_agent("simulated-near-inaction"))
    o = env.outcomes
    assert trajectory_diagnostics(env.s_values(), [x.action for x in o], [x.valid for x in o]).repeat_rate > 0.5


def test_simulated_agent_finishes_every_semantic_task():
    agent = simulated_agent("simulated-plateau")
    for semantic in semantic_tasks(0):
        env = Environment(semantic)
        env.run(agent)
        assert env.done


def test_skill_outside_the_unit_interval_is_rejected():
    with pytest.raises(ValueError):
        SimulatedAgent(1.5)


@pytest.mark.parametrize("skill", [-0.01, 1.01, 3])
def test_skill_check_names_the_allowed_range(skill):
    from engine.easel.simulated import skill_check

    with pytest.raises(ValueError, match=r"skill must lie in \[0, 1\]"):
        skill_check(skill)

"""The EASEL paired bootstrap over references (engine.easel.uncertainty): the point difference is the
difference of Table 3's Final S, the pairing cancels what every agent shares, slices and semantic means."""

from __future__ import annotations

import numpy as np
import pytest

from engine.easel.leaderboard import BoardRun, easel_board
from engine.easel.uncertainty import agent_comparison, semantic_means
from engine.paired_bootstrap import stratified_paired_bootstrap


def _run(pk: int, name: str, kind: str = "simulated") -> BoardRun:
    return BoardRun(id=pk, agent_kind=kind, agent_name=name, budget_setting="aligned", seed=0, is_simulated=True)


def _episode(task: str, category: str, final_s: float) -> dict:
    return {"task_id": task, "kind": "reconstruction", "category": category, "budget": 10, "steps_done": 10,
            "final_s": final_s, "final_edge_iou": 0.1, "at_50": final_s, "auc": final_s, "best": final_s,
            "fb_gap": 0.0, "repeat_rate": 0.0, "invalid_rate": 0.0, "undo_count": 0, "submit_step": None,
            "semantic_score": None, "semantic_summary": {}, "recogniser": "", "progress_curve": []}


REFERENCES = [("p1", "programmatic"), ("p2", "programmatic"), ("n1", "natural"), ("n2", "natural")]
DIFFICULTY = [0.9, 0.3, 0.6, 0.1]  # shared by every agent: the pairing cancels it


def _suite(offsets: dict[int, float]) -> tuple[list[BoardRun], dict[int, list[dict]]]:
    runs = [_run(pk, f"agent-{pk}") for pk in offsets]
    episodes = {pk: [_episode(t, c, d + off) for (t, c), d in zip(REFERENCES, DIFFICULTY)] for pk, off in offsets.items()}
    return runs, episodes


def _intervals(runs, episodes, category=None) -> dict[int, tuple[float, float, float]]:
    """The board's Final S with its interval per run (what the site passes: selectors.final_s_intervals)."""
    board = easel_board(task_set={"id": 1}, demo=False, runs=runs, episodes=episodes)
    return {r["run"]: tuple(r["final_s"] if category is None else r["categories"][category]) for r in board["agents"]}


def _compare(runs, episodes, category=None):
    return agent_comparison(runs, episodes, intervals=_intervals(runs, episodes, category), category=category)


def test_the_difference_is_the_difference_of_table_3s_final_s():
    runs, episodes = _suite({1: 0.05, 2: 0.0})
    board = easel_board(task_set={"id": 1}, demo=False, runs=runs, episodes=episodes)
    final = {r["agent"]: r["final_s"][0] for r in board["agents"]}
    comparison = _compare(runs, episodes)
    pair = comparison["pairs"][0]
    assert (pair["a"], pair["b"]) == ("agent-1", "agent-2")
    assert pair["difference"] == pytest.approx(final["agent-1"] - final["agent-2"])


def test_a_constant_advantage_on_every_reference_is_certain_despite_spread_references():
    # the references' own spread is large (0.1 … 0.9); an unpaired interval of each mean would overlap
    runs, episodes = _suite({1: 0.02, 2: 0.0})
    pair = _compare(runs, episodes)["pairs"][0]
    assert pair["low"] == pytest.approx(0.02) and pair["high"] == pytest.approx(0.02)
    assert pair["p_a_better"] == 1.0


def test_rank_probabilities_and_rank_sets_are_given_per_agent():
    runs, episodes = _suite({1: 0.3, 2: 0.0, 3: 0.01})
    comparison = _compare(runs, episodes)
    best = comparison["agents"][0]
    assert best["name"] == "agent-1" and best["rank_set"] == [1, 1] and best["rank_probabilities"][0] == 1.0
    assert len(comparison["pairs"]) == 3
    for agent in comparison["agents"]:
        assert sum(agent["rank_probabilities"]) == pytest.approx(1.0)


def test_a_category_slice_uses_only_that_categorys_references():
    runs, episodes = _suite({1: 0.0, 2: 0.0})
    episodes[1] = [dict(e, final_s=e["final_s"] + (0.2 if e["category"] == "natural" else 0.0)) for e in episodes[1]]
    natural = _compare(runs, episodes, "natural")
    programmatic = _compare(runs, episodes, "programmatic")
    assert natural["pairs"][0]["difference"] == pytest.approx(0.2)
    assert programmatic["pairs"][0]["difference"] == pytest.approx(0.0)
    assert natural["n_items"] == 2 and natural["category"] == "natural"


def test_anchors_and_the_painter_are_not_compared_as_agents():
    runs, episodes = _suite({1: 0.0, 2: 0.1})
    runs[1] = _run(2, "blank", kind="anchor")
    assert agent_comparison(runs, episodes, intervals={}) is None


def test_each_agent_prints_the_interval_it_is_given_not_a_draw_of_its_own():
    runs, episodes = _suite({1: 0.05, 2: 0.0, 3: 0.02})
    given = {1: (0.55, 0.41, 0.69), 2: (0.5, 0.36, 0.64), 3: (0.52, 0.38, 0.66)}
    comparison = agent_comparison(runs, episodes, intervals=given)
    assert [a["run"] for a in comparison["agents"]] == [1, 3, 2]  # ordered by the mean over the paired references
    assert {a["run"]: (a["value"], a["low"], a["high"]) for a in comparison["agents"]} == given


def test_the_differences_p_and_ranks_are_those_of_the_bootstrap_that_also_drew_agent_intervals():
    """Skipping the per-agent percentiles leaves the replicates alone: same pairs, P(A > B), rank sets."""
    rng = np.random.default_rng(5)
    values = rng.uniform(0.2, 0.8, size=(4, 12))
    values[2, 3] = np.nan
    strata = ["a"] * 5 + ["b"] * 7
    full = stratified_paired_bootstrap(values, strata, n_boot=300, seed=11)
    lean = stratified_paired_bootstrap(values, strata, n_boot=300, seed=11, agent_intervals=False)
    assert np.isnan(lean.low).all() and np.isnan(lean.high).all()
    for field in ("point", "diff_low", "diff_high", "p_greater", "rank_probabilities", "rank_low", "rank_high"):
        np.testing.assert_array_equal(getattr(lean, field), getattr(full, field), err_msg=field)


def test_a_compared_agent_without_an_interval_is_refused():
    runs, episodes = _suite({1: 0.05, 2: 0.0})
    with pytest.raises(ValueError, match="no Final S interval"):
        agent_comparison(runs, episodes, intervals={1: (0.5, 0.4, 0.6)})


def test_the_semantic_mean_has_n_and_a_bootstrap_interval_from_two_tasks_up():
    run = _run(1, "a")
    scores = [0.2, 0.8, 0.5]
    episodes = {1: [{"task_id": t, "kind": "semantic", "semantic_score": s}
                    for t, s in zip(("circle_outline", "maze", "simple_maze"), scores)]}
    row = semantic_means([run], episodes)[1]
    assert row["n"] == 3 and row["mean"] == pytest.approx(np.mean(scores))
    assert min(scores) <= row["low"] <= row["mean"] <= row["high"] <= max(scores)
    single = semantic_means([run], {1: episodes[1][:1]})[1]
    assert single["n"] == 1 and single["low"] is None

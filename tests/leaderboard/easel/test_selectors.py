"""The EASEL leaderboard computed from stored episodes (Tables 2–4, Figure 4)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.easel import leaderboard as easel_leaderboard
from leaderboard.easel import selectors, services
from leaderboard.easel.models import EaselEpisode, EaselRun

pytestmark = pytest.mark.django_db


def finished(run: EaselRun, finals: dict[str, float], *, curve_end: float | None = None) -> EaselRun:
    """Mark a run's reconstruction episodes done with the given Final S (other diagnostics derived)."""
    for episode in run.episodes.filter(kind="reconstruction").select_related("task"):
        s = finals[episode.task.external_id]
        EaselEpisode.objects.filter(pk=episode.pk).update(
            status="done", final_s=s, final_edge_iou=s / 4, at_50=s, auc=s - 0.01, best=s + 0.02, fb_gap=0.02,
            repeat_rate=0.0, invalid_rate=0.0, steps_done=episode.budget,
            progress_curve=list(np.linspace(0.4, curve_end if curve_end is not None else s, 5)),
        )
    run.episodes.filter(kind="semantic").delete()
    EaselRun.objects.filter(pk=run.pk).update(status="done", episodes_total=run.episodes.count(),
                                              episodes_done=run.episodes.count())
    run.refresh_from_db()
    return run


def reference_ids(suite) -> list[str]:
    return list(suite.tasks.filter(subtype="reconstruction").values_list("external_id", flat=True))


def finished_agent(suite, label: str, first: float, step: float) -> EaselRun:
    """A simulated agent's run, finished, whose Final S on the k-th reference is ``first + step * k``."""
    finals = {t: first + step * k for k, t in enumerate(reference_ids(suite))}
    return finished(services.easel_run_create(task_set=suite, agent="simulated", label=label), finals)


def test_agents_are_ranked_by_final_s_with_an_interval_around_the_mean(suite):
    ids = reference_ids(suite)
    strong = finished(services.easel_run_create(task_set=suite, agent="simulated", skill=0.9, label="strong"),
                      dict(zip(ids, [0.60, 0.70], strict=True)))
    finished(services.easel_run_create(task_set=suite, agent="simulated", skill=0.1, label="weak"),
             dict(zip(ids, [0.40, 0.44], strict=True)))
    payload = selectors.easel_leaderboard(task_set=suite)
    assert [r["agent"] for r in payload["agents"]] == ["strong", "weak"]
    mean, low, high = payload["agents"][0]["final_s"]
    assert mean == pytest.approx(0.65) and low <= mean <= high and high - low > 0
    assert payload["agents"][0]["run"] == strong.pk and payload["simulated"]


def test_anchors_and_the_painter_are_reference_rows_not_agents(suite):
    ids = reference_ids(suite)
    finished(services.easel_run_create(task_set=suite, agent="mean_colour_fill"), dict.fromkeys(ids, 0.53))
    finished(services.easel_run_create(task_set=suite, agent="painter"), dict.fromkeys(ids, 0.66))
    finished(services.easel_run_create(task_set=suite, agent="simulated"), dict.fromkeys(ids, 0.45))
    payload = selectors.easel_leaderboard(task_set=suite)
    assert [r["kind"] for r in payload["agents"]] == ["simulated"]
    assert {r["kind"] for r in payload["references"]} == {"anchor", "painter"}
    assert all(c["kind"] != "anchor" for c in payload["curves"])


def test_an_unfinished_run_is_not_on_the_leaderboard(suite):
    services.easel_run_create(task_set=suite, agent="simulated")
    payload = selectors.easel_leaderboard(task_set=suite)
    assert payload["agents"] == [] and payload["references"] == []


def test_the_newest_finished_run_of_an_agent_is_the_one_shown(suite):
    ids = reference_ids(suite)
    finished(services.easel_run_create(task_set=suite, agent="painter"), dict.fromkeys(ids, 0.5))
    newer = finished(services.easel_run_create(task_set=suite, agent="painter"), dict.fromkeys(ids, 0.6))
    (row,) = selectors.easel_leaderboard(task_set=suite)["references"]
    assert row["run"] == newer.pk


def test_the_bootstrap_interval_of_equal_values_is_that_value():
    assert easel_leaderboard._bootstrap({"a": [0.5, 0.5, 0.5]}, seed=1) == (0.5, 0.5, 0.5)


def test_the_progress_curves_average_episodes_point_by_point(suite):
    ids = reference_ids(suite)
    finished(services.easel_run_create(task_set=suite, agent="simulated"), dict(zip(ids, [0.5, 0.7], strict=True)))
    (curve,) = selectors.easel_leaderboard(task_set=suite)["curves"]
    assert curve["fractions"][0] == 0.0 and curve["fractions"][-1] == 1.0
    assert curve["s"][0] == pytest.approx(0.4) and curve["s"][-1] == pytest.approx(0.6)


def test_a_semantic_row_carries_the_engine_diagnostics(suite):
    run = services.easel_run_create(task_set=suite, agent="simulated")
    for episode in run.episodes.filter(kind="semantic").select_related("task"):
        maze = episode.task.external_id in ("simple_maze", "maze")
        EaselEpisode.objects.filter(pk=episode.pk).update(
            status="done", semantic_score=0.5, recogniser="tesseract" if episode.task.external_id == "handwriting_hello" else "",
            undo_count=2 if maze else 1, steps_done=4, semantic_summary={"invalid_rate": 0.25 if maze else 0.0, "undo_count": 2.0 if maze else 1.0,
                                                           "submit_percentile": 50.0, "is_maze": float(maze)})
    EaselRun.objects.filter(pk=run.pk).update(status="done")
    (row,) = selectors.easel_leaderboard(task_set=suite)["semantic"]
    assert row["maze_undo"] == 4 and row["non_maze_undo"] == 3
    assert row["maze_invalid_rate"] == pytest.approx(0.25) and row["avg_submit_pct"] == pytest.approx(50.0)
    assert row["recognisers"] == ["tesseract"] and set(row["scores"]) == {n for n, _ in easel_leaderboard.SEMANTIC_TASKS}


def test_a_finished_run_that_submitted_early_reads_done_not_a_share_of_its_budget():
    run = EaselRun(status=EaselRun.Status.DONE, steps_done=797, steps_planned=1120)
    assert selectors.run_steps_text(run) == "797 (done; budget 1120, agents may submit early)"
    run.status = EaselRun.Status.RUNNING
    assert selectors.run_steps_text(run) == "797/1120"


def test_a_score_anchor_run_reads_as_taking_no_steps_not_as_an_agent_under_a_zero_budget():
    """An anchor fills the canvas at once (its steps_planned is 0): its run page said "steps 0 (done;
    budget 0, agents may submit early)" above episodes whose rows read 0/32."""
    run = EaselRun(status=EaselRun.Status.DONE, agent_kind=EaselRun.AgentKind.ANCHOR, steps_done=0, steps_planned=0)
    assert selectors.run_steps_text(run) == "none (a score anchor fills the canvas at once, without strokes)"
    run.status = EaselRun.Status.RUNNING
    assert selectors.run_steps_text(run) == "none (a score anchor fills the canvas at once, without strokes)"


def test_the_commands_closing_intervals_are_the_boards_for_the_same_run_and_category():
    """run_summary_intervals drew its own bootstrap (seeded from the run's seed): the command printed another
    interval for the category Final S the board shows."""
    wide, _ = services.easel_suite_create(seed=0, per_category={"programmatic": 8, "spatial_geometry": 6,
                                                                "abstract_cartoon": 0, "natural": 0}, name="easel-wide")
    ids = reference_ids(wide)
    spread = np.random.default_rng(5).uniform(0.3, 0.7, size=len(ids))
    run = finished(services.easel_run_create(task_set=wide, agent="simulated", label="keen"),
                   dict(zip(ids, spread, strict=True)))
    row = selectors.easel_leaderboard(task_set=wide)["agents"][0]
    summary = selectors.run_summary_intervals(run=run)
    for name in ("programmatic", "spatial_geometry"):
        assert summary[f"{name} Final S"] == tuple(row["categories"][name]), name


def test_the_compared_runs_paired_agents_carry_the_boards_final_s_also_for_a_run_a_newer_one_replaced(suite):
    """agent_comparison takes each agent's interval: the suite board's, or the replaced run's own board's."""
    old = finished_agent(suite, "keen", 0.6, 0.01)
    newer = finished_agent(suite, "keen", 0.5, 0.02)
    paired = selectors.run_comparison(old, newer)["paired"]
    board = selectors.easel_leaderboard(task_set=suite)
    expected = {**selectors.final_s_intervals(board), **selectors.final_s_intervals(selectors._single_board(old))}
    assert {a["run"]: (a["value"], a["low"], a["high"]) for a in paired["agents"]} == {
        old.pk: expected[old.pk], newer.pk: expected[newer.pk]}
    assert old.pk not in selectors.final_s_intervals(board)  # the older run is not on the suite's board

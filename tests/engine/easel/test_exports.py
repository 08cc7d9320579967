"""engine/easel/exports.py: an EASEL board's CSV and LaTeX from its payload alone (the markers included).
The site's pages and their payload are tested in tests/leaderboard/easel/test_results.py."""

from __future__ import annotations

import csv
import io
import json

from engine.easel.exports import export_csv, export_latex
from engine.easel.leaderboard import EPISODE_FIELDS, BoardRun, easel_board


def _episode(task: str, category: str, final_s: float) -> dict:
    episode = dict.fromkeys(EPISODE_FIELDS)
    episode.update(task_id=task, kind="reconstruction", category=category, budget=10, steps_done=10, final_s=final_s,
                   final_edge_iou=0.3, at_50=final_s / 2, auc=final_s / 2, best=final_s, fb_gap=0.0, repeat_rate=0.1,
                   invalid_rate=0.0, undo_count=0, progress_curve=[0.1, final_s])
    return episode


def _payload() -> dict:
    runs = [BoardRun(1, "simulated", "simulated · keen", "native", 0, True),
            BoardRun(2, "anchor", "blank_fill", "native", 0, False)]
    episodes = {run.id: [_episode(f"t{k}", "programmatic", s + 0.01 * k) for k in range(3)]
                for run, s in zip(runs, (0.6, 0.4), strict=True)}
    return easel_board(task_set={"name": "suite_x", "version": "3"}, demo=True, runs=runs, episodes=episodes)


def test_the_csv_has_the_agent_then_the_reference_row_with_their_markers():
    rows = list(csv.DictReader(io.StringIO(export_csv(_payload()))))
    assert [(r["group"], r["agent"], r["simulated"], r["demo"]) for r in rows] == [
        ("agent", "simulated · keen", "true", "true"), ("reference", "blank_fill", "false", "true")]


def test_the_latex_caption_names_the_suite_escaped_and_the_flags():
    tex = export_latex(_payload())
    assert r"Suite suite\_x v3. Simulated agents are not models. Demo data." in tex and r"\midrule" in tex


def test_csv_and_latex_are_the_same_after_a_json_round_trip():
    # a bundle's verifier rebuilds them from board/board.json: the payload as JSON gives the same bytes
    payload = _payload()
    again = json.loads(json.dumps(payload, sort_keys=True))
    assert export_csv(again) == export_csv(payload) and export_latex(again) == export_latex(payload)

"""engine/leaderboard_exports.py: an Ekphrasis payload's rows, CSV and LaTeX from the payload and the
snapshot's facts alone."""

from __future__ import annotations

import csv
import io
import json

from engine.leaderboard import JudgedComparison, build_leaderboard
from engine.leaderboard_exports import SNAPSHOT_FACTS, export_csv, export_latex, model_rows
from engine.reliability import ComparisonRecord

FACTS = {"judge": "simulated", "simulated": True, "demo": False, "budget_per_task": 8, "seed": 7,
         "task_set_version": "2", "code_version": "abc123"}


def _payload(names: list[str]) -> dict:
    """Every model beats every later one on every task and dimension."""
    comparisons = [
        JudgedComparison(record=ComparisonRecord(task=f"t{t}", dimension=d, model_a=a, model_b=b, winner="A"),
                         confidence=0.8, family="f")
        for t in range(4) for d in "UE" for a in range(len(names)) for b in range(a + 1, len(names))
    ]
    return build_leaderboard(comparisons, names, dimensions=("U", "E"), n_boot=50, seed=3)


def test_the_facts_named_are_the_facts_read():
    assert set(FACTS) == set(SNAPSHOT_FACTS)


def test_the_csv_has_one_row_per_model_best_first_with_the_judge_and_flags_on_every_row():
    payload = _payload(["a", "b", "c"])
    rows = list(csv.DictReader(io.StringIO(export_csv(payload, FACTS))))
    assert [r["model"] for r in rows] == ["a", "b", "c"]
    assert {(r["judge"], r["simulated_judge"], r["demo_data"]) for r in rows} == {("simulated", "true", "false")}
    assert float(rows[0]["overall_vci"]) == payload["overall"][0]


def test_a_pool_without_z_names_its_overall_the_mean_win_rate():
    header = export_csv(_payload(["a", "b"]), FACTS).splitlines()[0]
    assert header.startswith("rank,model,overall_mean_winrate,")


def test_the_latex_caption_carries_every_fact_escaped():
    tex = export_latex(_payload(["a_1", "b", "c"]), {**FACTS, "code_version": "v_2"})
    assert r"a\_1 &" in tex
    assert r"Judge simulated, budget 8/task, seed 7, task set v2, code v\_2. Simulated judge" in tex


def test_rows_csv_and_latex_are_the_same_after_a_json_round_trip():
    # a bundle's verifier rebuilds them from board/board.json: the payload as JSON gives the same bytes
    payload = _payload(["a", "b", "c"])
    again = json.loads(json.dumps(payload, sort_keys=True))
    assert model_rows(again) == model_rows(payload)
    assert export_csv(again, FACTS) == export_csv(payload, FACTS)
    assert export_latex(again, FACTS) == export_latex(payload, FACTS)

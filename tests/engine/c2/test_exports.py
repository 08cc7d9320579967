"""engine/c2/exports.py: a C² run's Tables 1–2, CSV and LaTeX from its results and the run's facts alone."""

from __future__ import annotations

import csv
import io
import json

from engine.c2.exports import RUN_FACTS, export_csv, export_latex, leaderboard_tables

FACTS = {"run": 4, "template": "standard", "n_samples": 3, "rater": "simulated", "seed": 11,
         "surprise_policy": "zero", "tau": 0.8, "code_version": "abc_1"}


def _score(value: float) -> dict:
    return {"value": value, "low": value - 5, "high": value + 5}


def _results() -> dict:
    def scores(base: float) -> dict:
        return {"n_prompts": 2, **{m: _score(base) for m in ("usefulness", "originality", "surprise", "creativity")}}

    # "story" written before "qa": the CSV follows task_types, not the mapping's key order
    return {"models": ["m1", "m2"], "task_types": ["qa", "story"], "tables": {"text": ["qa", "story"], "vision": []},
            "scores": {"m1": {"story": scores(60.0), "qa": scores(40.0)}, "m2": {"story": scores(30.0), "qa": scores(70.0)}},
            "combined": {"m1": {"text": 50.0, "vision": None}, "m2": {"text": 50.5, "vision": None}},
            "is_simulated": True, "is_demo": False}


def test_the_facts_named_are_the_facts_read():
    assert set(FACTS) == set(RUN_FACTS)


def test_the_csv_has_a_row_per_model_and_task_type_in_the_results_order_with_the_markers():
    rows = list(csv.DictReader(io.StringIO(export_csv(_results(), FACTS))))
    assert [(r["model"], r["task_type"]) for r in rows] == [("m1", "qa"), ("m1", "story"), ("m2", "qa"), ("m2", "story")]
    assert {(r["run"], r["template"], r["simulated"], r["demo"]) for r in rows} == {("4", "standard", "true", "false")}


def test_the_tables_rank_by_combined_and_mark_the_best_of_each_column():
    (table,) = leaderboard_tables(_results())
    assert [row.model for row in table.rows] == ["m2", "m1"]
    assert [c.mark for c in table.rows[0].cells[:4]] == ["best"] * 4  # m2 leads on qa
    assert table.rows[0].combined.mark == "best" and table.rows[1].combined.mark == "second"


def test_the_latex_caption_carries_every_fact_and_the_simulated_marker():
    tex = export_latex(_results(), FACTS)
    assert r"Run 4, standard template, n = 3, rater simulated, seed 11, Surprise policy zero, tau 0.8, code abc\_1." in tex
    assert "SIMULATED components." in tex and r"\textbf{50.5}" in tex


def test_csv_and_latex_are_the_same_after_a_json_round_trip():
    # a bundle's verifier rebuilds them from board/board.json, which is written with sorted keys
    results = _results()
    again = json.loads(json.dumps(results, sort_keys=True))
    assert export_csv(again, FACTS) == export_csv(results, FACTS)
    assert export_latex(again, FACTS) == export_latex(results, FACTS)

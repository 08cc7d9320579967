"""EASEL exports carry the simulated and demo markers, and the Figure 4 chart is labelled."""

from __future__ import annotations

import csv
import io
import json

import pytest

from engine.easel import exports
from leaderboard.easel import results, selectors, services
from tests.leaderboard.easel.test_selectors import finished, reference_ids

pytestmark = pytest.mark.django_db


@pytest.fixture
def payload(suite):
    ids = reference_ids(suite)
    suite.is_demo = True
    suite.save(update_fields=["is_demo"])
    finished(services.easel_run_create(task_set=suite, agent="simulated", label="simulated · keen"), dict.fromkeys(ids, 0.5))
    finished(services.easel_run_create(task_set=suite, agent="blank_fill"), dict.fromkeys(ids, 0.44))
    return selectors.easel_leaderboard(task_set=suite)


def test_the_csv_marks_simulated_and_demo_rows_and_separates_reference_rows(payload):
    rows = list(csv.DictReader(io.StringIO(exports.export_csv(payload))))
    assert [(r["group"], r["simulated"], r["demo"]) for r in rows] == [("agent", "true", "true"), ("reference", "false", "true")]
    assert float(rows[0]["final_s"]) == pytest.approx(0.5)


def test_the_json_export_carries_the_markers(payload):
    data = json.loads(results.export_json(payload, code_version="abc"))
    assert data["simulated"] and data["demo"] and data["benchmark"] == "easel"


def test_the_latex_caption_says_simulated_and_demo(payload):
    tex = exports.export_latex(payload)
    assert "simulated" in tex and "Demo data." in tex and r"\midrule" in tex


def test_the_progress_chart_labels_its_axes_and_legend(payload):
    svg = results.progress_chart(payload)
    assert "Painting progress (step ÷ budget)" in svg and "Similarity S" in svg and "simulated · keen [simulated]" in svg

"""The radar chart of leaderboard/charts.py (C² Figure 4): every axis and every series labelled."""

from leaderboard.charts import radar_chart

AXES = ["Use. (Conv.)", "Orig. (Conv.)", "Surp. (Conv.)", "Crea. (Conv.)"]


def test_radar_chart_labels_every_axis_and_names_every_series_in_the_legend():
    svg = radar_chart(AXES, [("model-a", [0.9, 0.2, 0.1, 0.4]), ("model-b", [0.5, 0.5, 0.5, 0.5])],
                      title="Figure 4 shape", axis_note="scores / 100")
    assert "<title>Figure 4 shape</title>" in svg and "scores / 100" in svg
    for label in AXES + ["model-a", "model-b"]:
        assert f">{label}" in svg
    assert svg.count("<polygon") == 4 + 2  # four rings, one polygon per series


def test_radar_chart_marks_a_series_with_missing_axes():
    svg = radar_chart(AXES, [("partial", [0.9, None, 0.1, None])], title="t")
    assert "partial (n/a axes at 0)" in svg


def test_radar_chart_of_nothing_is_empty():
    assert radar_chart(AXES, [], title="t") == "" and radar_chart([], [("a", [])], title="t") == ""

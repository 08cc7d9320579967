"""leaderboard/charts.py: the radar chart (C² Figure 4) and the Bland–Altman plot are labelled (title,
axes, legend)."""

from leaderboard.charts import bland_altman_plot, radar_chart

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


def test_the_bland_altman_plot_names_its_axes_lines_and_points():
    svg = bland_altman_plot([1.0, 2.5, 4.0], [0.5, -1.0, 0.0], bias=-0.17, lower=-1.64, upper=1.31,
                            title="Bland–Altman: U", x_label="mean of the two", y_label="human − rater")
    assert "<title>Bland–Altman: U</title>" in svg
    assert "mean of the two" in svg and "human − rater" in svg
    assert "bias -0.17" in svg and "−1.96 SD -1.64" in svg and "+1.96 SD +1.31" in svg
    assert svg.count("<circle") == 3 + 1  # three samples and the legend's point


def test_no_points_draw_no_chart():
    assert bland_altman_plot([], [], bias=0.0, lower=0.0, upper=0.0, title="t", x_label="x", y_label="y") == ""

"""leaderboard.charts: the Bland–Altman plot is labelled (title, axes, legend) and draws its lines."""

from __future__ import annotations

from leaderboard.charts import bland_altman_plot


def test_the_bland_altman_plot_names_its_axes_lines_and_points():
    svg = bland_altman_plot([1.0, 2.5, 4.0], [0.5, -1.0, 0.0], bias=-0.17, lower=-1.64, upper=1.31,
                            title="Bland–Altman: U", x_label="mean of the two", y_label="human − rater")
    assert "<title>Bland–Altman: U</title>" in svg
    assert "mean of the two" in svg and "human − rater" in svg
    assert "bias -0.17" in svg and "−1.96 SD -1.64" in svg and "+1.96 SD +1.31" in svg
    assert svg.count("<circle") == 3 + 1  # three samples and the legend's point


def test_no_points_draw_no_chart():
    assert bland_altman_plot([], [], bias=0.0, lower=0.0, upper=0.0, title="t", x_label="x", y_label="y") == ""

"""leaderboard/charts.py: round ticks, win-rate axes inside [0, 1], legends and captions; the radar chart
(C² Figure 4) and the Bland–Altman plot are labelled (title, axes, legend)."""

import re

import pytest

from leaderboard import charts
from leaderboard.charts import bland_altman_plot, radar_chart


@pytest.mark.parametrize("lo, hi", [(-1.51, 0.81), (0.31, 0.72), (0.0, 1.0), (3.0, 1700.0), (0.4, 0.4), (-0.003, 0.002)])
def test_nice_ticks_are_round_steps_covering_the_range(lo, hi):
    ticks = charts.nice_ticks(lo, hi)
    step = ticks[1] - ticks[0]
    mantissa = step / 10 ** __import__("math").floor(__import__("math").log10(step))
    assert round(mantissa, 6) in (1.0, 2.0, 5.0)
    assert ticks[0] <= lo and ticks[-1] >= hi
    assert 3 <= len(ticks) <= 12


def _tick_labels(svg: str) -> list[float]:
    return [float(v) for v in re.findall(r'text-anchor="middle" fill="#5f6670">(-?[0-9.]+)</text>', svg)]


def test_win_rate_interval_plot_axis_stays_within_zero_and_one():
    rows = [charts.Interval("a", 0.9, 0.8, 0.99, tier=0), charts.Interval("b", 0.1, 0.01, 0.2, tier=1)]
    svg = charts.interval_plot(rows, title="t", reference=0.5, domain=(0.0, 1.0), tier_legend=True)
    ticks = _tick_labels(svg)
    assert ticks and min(ticks) >= 0.0 and max(ticks) <= 1.0
    assert ">Tier:</text>" in svg


def test_interval_plot_ticks_are_round_values():
    rows = [charts.Interval("a", 0.4, -1.51, 0.81)]
    ticks = _tick_labels(charts.interval_plot(rows, title="t", reference=0.0))
    assert ticks == charts.nice_ticks(-1.51, 0.81)


def test_heat_map_has_axis_labels_and_a_colour_key():
    svg = charts.heat_map([[None, 0.7], [0.3, None]], ["a", "b"], ["#1", "#2"], title="t",
                          x_label="Rank", y_label="Model", value_label="win rate")
    assert ">Rank</text>" in svg and ">Model</text>" in svg and ">win rate</text>" in svg
    assert svg.count('fill="#f1f2f4"') == 2  # the diagonal is blank


def _graph(n_nodes: int = 30):
    nodes = [{"id": k, "x": (k % 6) / 5 - 0.5, "y": (k // 6) / 5 - 0.5, "cluster_id": f"c{k % 3}", "label": f"atom number {k}",
              "type": "motif", "n_models": 2, "weighted_degree": 1.0 + k} for k in range(n_nodes)]
    edges = [{"source": k, "target": k + 1, "weight": 1.0 + k % 4} for k in range(n_nodes - 1)]
    return nodes, edges


def _text_boxes(svg: str) -> list[tuple[float, float, float, float]]:
    boxes = []
    for x, y, anchor, text in re.findall(r'<text x="([-0-9.]+)" y="([-0-9.]+)" font-size="10" text-anchor="(\w+)"[^>]*>([^<]+)</text>', svg):
        boxes.append(charts._label_box(float(x), float(y), text, anchor))
    return boxes


def test_graph_labels_never_overlap_and_stay_inside_the_frame():
    nodes, edges = _graph()
    svg = charts.graph_plot(nodes, edges, title="g", size=400, max_labels=10)
    boxes = _text_boxes(svg)
    assert 0 < len(boxes) <= 10
    for k, a in enumerate(boxes):
        assert a[0] >= 0 and a[2] <= 400 and a[1] >= 0 and a[3] <= 400
        for b in boxes[k + 1:]:
            assert not charts._overlaps(a, b)


def test_graph_draws_every_edge_visibly_and_names_every_node_on_hover():
    nodes, edges = _graph()
    svg = charts.graph_plot(nodes, edges, title="g")
    opacities = [float(v) for v in re.findall(r'stroke="#4b5563" stroke-opacity="([0-9.]+)"', svg)]
    assert len(opacities) == len(edges) and min(opacities) >= 0.45
    assert svg.count("<title>atom number") == len(nodes)


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


def test_interval_plots_given_one_span_share_one_x_range():
    wide = [charts.Interval("a", 0.5, 0.1, 0.9)]
    narrow = [charts.Interval("b", 0.6, 0.5, 0.7)]
    ticks = [re.findall(r'text-anchor="middle" fill="#5f6670">([0-9.]+)</text>', charts.interval_plot(
        rows, title="t", reference=0.5, domain=(0.0, 1.0), span=(0.1, 0.9))) for rows in (wide, narrow)]
    assert ticks[0] == ticks[1] and ticks[0][0] == "0.0" and ticks[0][-1] == "1.0"


def test_line_plot_ticks_are_round():
    svg = charts.line_plot([charts.Series("s", list(range(20)), [0.33 + 0.01 * k for k in range(20)])],
                           title="t", x_label="Step t", y_label="S")
    labels = re.findall(r'fill="#5f6670">([0-9.]+)</text>', svg)
    assert labels and all(abs(float(v) * 20 - round(float(v) * 20)) < 1e-9 for v in labels)  # steps of 0.05 or more
    assert "6" not in labels and "13" not in labels and "0.43" not in labels  # the old linspace ticks


def test_a_long_axis_label_wraps_inside_the_frame_instead_of_being_cut():
    label = "divergent creativity, creative − standard (95% paired bootstrap over prompts) " * 2
    svg = charts.interval_plot([charts.Interval("m", 1.0, 0.0, 2.0)], title="t", axis_label=label)
    width = int(re.search(r'viewBox="0 0 (\d+)', svg).group(1))
    lines = re.findall(r'<text x="4" y="\d+" font-size="12" fill="#5f6670">([^<]+)</text>', svg)
    assert " ".join(lines) == " ".join(label.split()) and all(4 + 0.55 * 12 * len(line) <= width for line in lines)


def test_radar_ring_labels_are_drawn_above_the_series_polygons():
    svg = radar_chart(AXES, [("model-a", [0.9, 0.9, 0.9, 0.9])], title="t")
    assert svg.rindex('fill-opacity=".12"') < svg.index(">0.25</text>")


def test_a_heat_map_with_model_names_as_columns_slants_them():
    svg = charts.heat_map([[None, 0.4], [0.6, None]], ["model-alpha", "model-beta"], ["model-alpha", "model-beta"],
                          title="t")
    assert svg.count('transform="rotate(-45') == 2 and ">#1<" not in svg


def _circles(svg: str) -> dict[tuple[str, str], float]:
    return {(cx, cy): float(r) for cx, cy, r in re.findall(r'<circle cx="([-0-9.]+)" cy="([-0-9.]+)" r="([0-9.]+)"', svg)}


def test_graph_parts_a_component_the_layout_packed_into_one_spot_so_its_edges_show():
    # a spring layout of several components packs each one into a spot: here 12 nodes within 0.01 of each other
    nodes = [{"id": k, "x": 0.001 * k, "y": -0.001 * k, "cluster_id": "c", "label": f"atom {k}", "type": "motif",
              "n_models": 2, "weighted_degree": 5.0} for k in range(12)]
    nodes += [{"id": 100, "x": 1.0, "y": 1.0, "cluster_id": "d", "label": "far", "type": "motif", "n_models": 1,
               "weighted_degree": 1.0}, {"id": 101, "x": -1.0, "y": 1.0, "cluster_id": "d", "label": "away",
                                         "type": "motif", "n_models": 1, "weighted_degree": 1.0}]
    edges = [{"source": a, "target": b, "weight": 1.0} for a in range(12) for b in range(a + 1, 12)]
    svg = charts.graph_plot(nodes, edges, title="g")
    circles = _circles(svg)
    assert len(circles) == len(nodes)
    lines = re.findall(r'<line x1="([-0-9.]+)" y1="([-0-9.]+)" x2="([-0-9.]+)" y2="([-0-9.]+)" stroke="#4b5563"', svg)
    assert len(lines) == len(edges)
    for x1, y1, x2, y2 in lines:  # the visible stretch of each edge, between its two circles
        length = ((float(x1) - float(x2)) ** 2 + (float(y1) - float(y2)) ** 2) ** 0.5
        assert length - circles[(x1, y1)] - circles[(x2, y2)] >= charts.EDGE_GAP - 1
    for (a, ra), (b, rb) in __import__("itertools").combinations(
            [((float(cx), float(cy)), r) for (cx, cy), r in circles.items()], 2):
        assert ((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5 >= ra + rb
        assert 0 <= a[0] - ra and a[0] + ra <= 620 and 0 <= a[1] - ra and a[1] + ra <= 620


def test_radar_axis_labels_stand_outside_the_rim_and_inside_the_frame():
    axes = [f"{m} ({r})" for r in ("Conv.", "Div.") for m in ("Use.", "Orig.", "Surp.", "Crea.")]
    svg = radar_chart(axes, [("model-a", [1.0] * 8)], title="t")
    width = float(re.search(r'viewBox="0 0 ([0-9.]+)', svg).group(1))
    rim = [tuple(map(float, p.split(","))) for p in re.search(r'<polygon points="([^"]+)" fill="none"', re.sub(
        r'<polygon points="[^"]+" fill="none" stroke="#dde1e6"/>', "", svg, count=3)).group(1).split()]
    cx, cy = sum(p[0] for p in rim) / len(rim), sum(p[1] for p in rim) / len(rim)
    radius = ((rim[0][0] - cx) ** 2 + (rim[0][1] - cy) ** 2) ** 0.5
    labels = re.findall(r'<text x="([-0-9.]+)" y="([-0-9.]+)" font-size="11" text-anchor="(\w+)">([^<]+)</text>', svg)
    assert [text for *_, text in labels] == axes
    for x, y, anchor, text in labels:
        x, y = float(x), float(y) - 4  # the label's baseline sits 4 px under its point
        assert ((x - cx) ** 2 + (y - cy) ** 2) ** 0.5 > radius + 10  # beyond the rim and the ring-1 label
        box = charts._label_box(x, y, text, anchor, size=11)
        assert box[0] >= 0 and box[2] <= width


def test_marks_on_one_point_of_a_line_share_one_label():
    series = charts.Series("S_t", [0, 1, 2], [0.1, 0.2, 0.3], marks=[("Best", 2, 0.3), ("Final", 2, 0.3)])
    svg = charts.line_plot([series], title="t", x_label="Step t", y_label="S")
    assert ">Best = Final</text>" in svg and ">Best</text>" not in svg and ">Final</text>" not in svg


def test_labels_of_marks_close_on_a_line_do_not_cover_each_other():
    series = charts.Series("S_t", list(range(40)), [0.5] * 40, marks=[("Best", 20, 0.5), ("Final", 21, 0.5)])
    svg = charts.line_plot([series], title="t", x_label="Step t", y_label="S")
    found = re.findall(r'<text x="([-0-9.]+)" y="([-0-9.]+)" font-size="10" fill="#3451b2" text-anchor="(\w+)">(Best|Final)</text>', svg)
    boxes = [charts._label_box(float(x), float(y), text, anchor) for x, y, anchor, text in found]
    assert len(boxes) == 2 and not charts._overlaps(*boxes)

"""The construction diagnostics as labelled SVG (Ekphrasis App. B, Figures 6–8) and the charts they use."""

from leaderboard import charts
from leaderboard.ekphrasis import construction_diagnostics as diagnostics

RECORD = {
    "achieved": {"combination/AA-near/near": 8, "combination/AC-far/far": 5, "transformation/material/near": 10,
                 "abstraction/metaphysical": 20},
    "quotas": {"combination/AA-near/near": 8, "combination/AC-far/far": 7, "transformation/material/near": 10,
               "abstraction/metaphysical": 20},
    "diagnostics": {
        "abstraction": {"metaphysical": {"low": 3.0, "high": 4.5, "selected": ["fate"],
                                         "frequencies": {"fate": 4.0, "void": 3.6, "karma": 2.1}}},
        "combination": {"AA": {"band_edges": [0.4, 0.7], "candidates": {"near": 3, "medium": 5, "far": 2}}},
        "transformation": {},
    },
}


def test_the_histogram_labels_both_axes_and_its_legend_names_the_belt():
    svg = charts.histogram([1, 2, 2, 3], title="t", x_label="Zipf frequency", y_label="pool nouns", band=(1.5, 2.5),
                           band_label="frequency belt", marks=[2])
    assert "Zipf frequency" in svg and "pool nouns" in svg and "frequency belt" in svg and "selected (ticks)" in svg


def test_charts_of_nothing_are_empty():
    assert charts.histogram([], title="t", x_label="x") == ""
    assert charts.grouped_bars([], [], [], title="t", x_label="x", y_label="y") == ""
    assert charts.quota_bars([], title="t", axis_label="x") == ""


def test_figure_7_counts_the_selected_tasks_per_pair_type_and_band():
    svg = diagnostics.combination_chart(RECORD)
    assert ">8</text>" in svg and ">5</text>" in svg
    assert "pair type (A abstract, C concrete)" in svg and "selected tasks" in svg and "medium" in svg


def test_the_quota_chart_marks_a_cell_short_of_its_quota():
    svg = diagnostics.quota_chart(RECORD)
    assert "5/7" in svg and "8/8" in svg and "quota" in svg and "achieved" in svg


def test_figure_6_has_one_panel_per_subtype_with_its_belt():
    panels = diagnostics.abstraction_charts(RECORD)
    assert [name for name, _ in panels] == ["metaphysical"]
    assert "Abstraction · metaphysical" in panels[0][1]


def test_band_edges_list_each_stratum_set():
    assert diagnostics.band_edges(RECORD) == [
        {"family": "combination", "name": "AA", "edges": [0.4, 0.7], "candidates": {"near": 3, "medium": 5, "far": 2}}]


def test_the_cells_short_of_their_quota_are_named_with_their_counts():
    """Algorithm 1 (App. A) adds validated instances until each quota is met; a pool too small to fill Table 5's
    cells leaves those cells short, and the build page names each one rather than only saying "done"."""
    assert diagnostics.short_cells(RECORD) == [{"cell": "combination/AC-far/far", "achieved": 5, "quota": 7}]
    assert diagnostics.short_cells({**RECORD, "achieved": {}}) == [
        {"cell": cell, "achieved": 0, "quota": quota} for cell, quota in RECORD["quotas"].items()]

"""The construction diagnostics of a task-set build as labelled SVG charts (Ekphrasis App. B,
Figures 6–8) and the achieved counts against the grid's quotas, read from its construction record."""

from __future__ import annotations

from leaderboard import charts

BANDS = ("near", "medium", "far")


def abstraction_charts(record: dict) -> list[tuple[str, str]]:
    """Figure 6: per Abstraction subtype, the Zipf frequencies of its pool nouns with the belt shaded."""
    out = []
    for subtype, data in (record.get("diagnostics", {}).get("abstraction") or {}).items():
        freqs = data.get("frequencies") or {}
        if not freqs:
            continue
        marks = [freqs[c] for c in data.get("selected", []) if c in freqs]
        out.append((subtype, charts.histogram(
            list(freqs.values()), title=f"Abstraction · {subtype}", x_label="Zipf frequency (wordfreq, log10 per 10^9 words)",
            y_label="pool nouns", band=(data["low"], data["high"]), band_label="frequency belt", marks=marks)))
    return out


def _selected_counts(record: dict, family: str, groups: list[str], key) -> list[list[int]]:
    achieved = record.get("achieved", {})
    return [[sum(n for cell, n in achieved.items() if cell.startswith(f"{family}/") and key(cell, g, b))
             for b in BANDS] for g in groups]


def combination_chart(record: dict) -> str:
    """Figure 7: selected Combination tasks per pair type × embedding-distance band."""
    groups = ["AA", "AC", "CC"]
    values = _selected_counts(record, "combination", groups, lambda cell, g, b: cell == f"combination/{g}-{b}/{b}")
    return charts.grouped_bars(groups, BANDS, values, title="Combination: selected pairs by type and distance band",
                               x_label="pair type (A abstract, C concrete)", y_label="selected tasks")


def transformation_chart(record: dict) -> str:
    """Figure 8: selected Transformation tasks per subtype × percentile bucket."""
    groups = ["material", "temporal", "contextual"]
    values = _selected_counts(record, "transformation", groups, lambda cell, g, b: cell == f"transformation/{g}/{b}")
    return charts.grouped_bars(groups, BANDS, values, title="Transformation: selected tasks by subtype and bucket",
                               x_label="transformation subtype", y_label="selected tasks")


def quota_chart(record: dict) -> str:
    achieved, quotas = record.get("achieved", {}), record.get("quotas", {})
    rows = [(cell, achieved.get(cell, 0), quota) for cell, quota in quotas.items() if quota]
    return charts.quota_bars(rows, title="Achieved counts against the grid's quotas", axis_label="tasks per grid cell")


def short_cells(record: dict) -> list[dict]:
    """The grid cells whose kept tasks fell short of their quota (the pool or the screen ran out before Algorithm 1's
    "until the quota is met"), in grid order: what makes the set unbalanced, named on the build page."""
    achieved, quotas = record.get("achieved", {}), record.get("quotas", {})
    return [{"cell": cell, "achieved": achieved.get(cell, 0), "quota": quota}
            for cell, quota in quotas.items() if achieved.get(cell, 0) < quota]


def band_edges(record: dict) -> list[dict]:
    """The distance values at the band / bucket percentiles, per pair type and Transformation subtype."""
    diagnostics = record.get("diagnostics", {})
    rows = []
    for family, key in (("combination", "band_edges"), ("transformation", "bucket_edges")):
        for name, data in (diagnostics.get(family) or {}).items():
            rows.append({"family": family, "name": name, "edges": data.get(key, []), "candidates": data.get("candidates", {})})
    return rows

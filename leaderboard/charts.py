"""Inline SVG charts for the results pages: interval plots, heat maps, scatter
plots and box plots. Server-side SVG needs no JavaScript library, prints, and
shows the same numbers the tables do.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

PALETTE = ["#3451b2", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490", "#a16207", "#be185d",
           "#4d7c0f", "#1d4ed8", "#9a3412", "#047857", "#6d28d9", "#0f766e"]


@dataclass(frozen=True)
class Interval:
    label: str
    estimate: float
    low: float
    high: float
    tier: int | None = None


#: Columns and rows of the numbers a chart was drawn from (a figure's data download).
ChartData = tuple[Sequence[str], Sequence[Sequence[object]]]


def _plain(value: object) -> object:
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _svg(width: int, height: int, body: list[str], title: str, data: ChartData | None = None) -> str:
    """The chart's SVG; ``data`` rides along in a ``<metadata class="chart-data">`` element as JSON
    (``{"columns": [...], "rows": [[...], ...]}``), which figure_downloads.js offers as the figure's CSV."""
    block = ""
    if data is not None:
        columns, rows = data
        payload = {"columns": list(columns), "rows": [[_plain(v) for v in row] for row in rows]}
        block = f'<metadata class="chart-data">{escape(json.dumps(payload), quote=False)}</metadata>'
    return (
        # Natural width, scaled down by the .chart rule in atelier.css (no style attribute: CSP).
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" class="chart" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>{block}'
        + "".join(body) + "</svg>"
    )


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]: steps of 1, 2 or 5 × 10^k (Heckbert, "Nice numbers for
    graph labels", Graphics Gems 1990), about ``target`` of them, first ≤ lo and last ≥ hi."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"ticks need finite bounds, got [{lo}, {hi}]")
    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    raw = (hi - lo) / max(target - 1, 1)
    magnitude = 10.0 ** np.floor(np.log10(raw))
    # the raw step rounded to 1, 2, 5 or 10 × 10^k (Heckbert 1990: thresholds 1.5, 3, 7)
    fraction = raw / magnitude
    step = magnitude * (1.0 if fraction < 1.5 else 2.0 if fraction < 3.0 else 5.0 if fraction < 7.0 else 10.0)
    first = np.floor(lo / step + 1e-9) * step
    last = np.ceil(hi / step - 1e-9) * step
    count = int(round((last - first) / step)) + 1
    # round to the step's decimals so 0.30000000000000004 prints and compares as 0.3
    decimals = max(0, -int(np.floor(np.log10(step))))
    return [float(round(first + k * step, decimals)) + 0.0 for k in range(count)]


def tick_format(ticks: Sequence[float]) -> str:
    """A format string with just enough decimals to tell the ticks apart (0.25 → 2, 0.5 → 1, 5 → 0)."""
    if len(ticks) < 2:
        return "{:g}"
    step = abs(ticks[1] - ticks[0])
    decimals = max(0, -int(np.floor(np.log10(step) + 1e-9)))
    return f"{{:.{decimals}f}}"


def _scale(lo: float, hi: float, a: float, b: float):
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def _tier_colour(tier: int | None) -> str:
    return PALETTE[tier % len(PALETTE)] if tier is not None else PALETTE[0]


def _label_lines(text: str, width: float, size: int = 12) -> list[str]:
    """``text`` in lines that fit ``width`` px (0.55 em per character, a sans-serif average): a long axis
    label or title wraps instead of running off the frame."""
    chars = max(int(width / (0.55 * size)), 10)
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= chars:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def interval_plot(rows: Sequence[Interval], *, title: str, reference: float | None = None,
                  axis_label: str = "", fmt: str = "{:.2f}", domain: tuple[float, float] | None = None,
                  tier_legend: bool = False, span: tuple[float, float] | None = None) -> str:
    """Point estimates with horizontal interval bars, one row per model (best first).

    The axis runs over round ticks (:func:`nice_ticks`) clipped to ``domain`` (e.g. (0, 1) for win
    rates) and covering ``span`` — one span for a group of plots gives them one x range, so a reference
    line stays in place from plot to plot; with ``tier_legend`` the colours are tiers and a legend names them.
    """
    if not rows:
        return ""
    # 556 px wide: two plots side by side in a 1400 px card (558 px each) keep their text at its drawn size
    left, right, row_h = 170, 496, 24
    tiers = sorted({r.tier for r in rows if r.tier is not None})
    legend_h = 18 if tier_legend and tiers else 0
    label_lines = _label_lines(axis_label, right + 56)
    top = 24 + legend_h + 15 * (len(label_lines) - 1)
    height = top + row_h * len(rows) + 34
    lo = min(r.low for r in rows)
    hi = max(r.high for r in rows)
    if span is not None:
        lo, hi = min(lo, span[0]), max(hi, span[1])
    if reference is not None:
        lo, hi = min(lo, reference), max(hi, reference)
    ticks = nice_ticks(lo, hi)
    if domain is not None:
        ticks = [t for t in ticks if domain[0] - 1e-9 <= t <= domain[1] + 1e-9]
        if len(ticks) < 2 or ticks[0] > lo or ticks[-1] < hi:
            ticks = nice_ticks(max(lo, domain[0]), min(hi, domain[1]))
            ticks = [min(max(t, domain[0]), domain[1]) for t in ticks]
            ticks = sorted(set(ticks))
    x = _scale(ticks[0], ticks[-1], left, right)
    body = [f'<text x="4" y="{14 + 15 * k}" font-size="12" fill="#5f6670">{escape(line)}</text>'
            for k, line in enumerate(label_lines)]
    if legend_h:
        lx, ly = left, top - 10
        body.append(f'<text x="{lx}" y="{ly}" font-size="11" fill="#5f6670">Tier:</text>')
        lx += 32
        for t in tiers:
            body.append(f'<circle cx="{lx + 5}" cy="{ly - 4}" r="4.5" fill="{_tier_colour(t)}"/>')
            body.append(f'<text x="{lx + 13}" y="{ly}" font-size="11">{t + 1}</text>')
            lx += 34
    for tick in ticks:
        body.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top - 4}" y2="{height - 24}" stroke="#eceef2"/>')
    if reference is not None:
        body.append(f'<line x1="{x(reference):.1f}" x2="{x(reference):.1f}" y1="{top - 6}" y2="{height - 28}" '
                    'stroke="#aab" stroke-dasharray="4 3"/>')
    for k, r in enumerate(rows):
        y = top + row_h * k + row_h / 2
        colour = _tier_colour(r.tier)
        if k % 2 == 0:
            body.append(f'<rect x="0" y="{y - row_h / 2:.1f}" width="{right + 60}" height="{row_h}" fill="#f6f7f9" fill-opacity=".7"/>')
        body.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end">{escape(r.label)}</text>')
        body.append(f'<line x1="{x(r.low):.1f}" x2="{x(r.high):.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="2.5"/>')
        body.append(f'<circle cx="{x(r.estimate):.1f}" cy="{y:.1f}" r="4.5" fill="{colour}"/>')
        body.append(f'<text x="{right + 8}" y="{y + 4:.1f}" font-size="11" fill="#5f6670">{fmt.format(r.estimate)}</text>')
    base = height - 24
    body.append(f'<line x1="{left}" x2="{right}" y1="{base}" y2="{base}" stroke="#99a"/>')
    tick_fmt = tick_format(ticks)
    for tick in ticks:
        body.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{base}" y2="{base + 4}" stroke="#99a"/>')
        body.append(f'<text x="{x(tick):.1f}" y="{base + 15}" font-size="10" text-anchor="middle" fill="#5f6670">{tick_fmt.format(tick)}</text>')
    return _svg(right + 60, height, body, title, data=(
        ["label", "estimate", "low", "high", "tier"], [[r.label, r.estimate, r.low, r.high, r.tier] for r in rows]))


def _heat_fill(v: float) -> str:
    shade = int(255 - 200 * min(max(v, 0.0), 1.0))
    return f"rgb({shade},{shade + (255 - shade) // 4},255)"


def heat_map(matrix: Sequence[Sequence[float | None]], rows: Sequence[str], columns: Sequence[str], *, title: str,
             x_label: str = "", y_label: str = "", value_label: str = "probability") -> str:
    """A matrix of values in [0, 1] (e.g. P[model, rank] or pairwise win rates) as shaded cells with the
    value printed, axis labels, and a colour key from 0 to 1. ``None`` cells (a model against itself)
    are left blank."""
    if not rows:
        return ""
    left, cell = 170, 38
    # column names longer than a cell (model names) stand at 45°, so they never run into each other
    slanted = max((len(name) for name in columns), default=0) > 5
    top = 48 + (int(0.45 * 11 * max(len(name) for name in columns)) if slanted else 0)
    width = max(left + cell * len(columns) + (90 if slanted else 10), left + 230, 7 * len(x_label) + 10)
    height = top + cell * len(rows) + 56
    body = []
    if x_label:
        body.append(f'<text x="4" y="14" font-size="12" fill="#5f6670">{escape(x_label)}</text>')
    for c, name in enumerate(columns):
        cx = left + cell * c + cell / 2
        if slanted:
            body.append(f'<text x="{cx}" y="{top - 8}" font-size="11" transform="rotate(-45 {cx} {top - 8})">'
                        f'{escape(name)}</text>')
        else:
            body.append(f'<text x="{cx}" y="{top - 8}" font-size="11" text-anchor="middle">{escape(name)}</text>')
    for r, name in enumerate(rows):
        y = top + cell * r
        body.append(f'<text x="{left - 8}" y="{y + cell / 2 + 4}" font-size="12" text-anchor="end">{escape(name)}</text>')
        for c in range(len(columns)):
            raw = matrix[r][c]
            if raw is None:
                body.append(f'<rect x="{left + cell * c}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="#f1f2f4"/>')
                continue
            v = float(raw)
            text_colour = "#fff" if v > 0.55 else "#1d1f24"
            body.append(f'<rect x="{left + cell * c}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="{_heat_fill(v)}"/>')
            if v >= 0.005:
                body.append(f'<text x="{left + cell * c + cell / 2 - 1}" y="{y + cell / 2 + 3}" font-size="10" text-anchor="middle" fill="{text_colour}">{v:.2f}</text>')
    if y_label:
        body.append(f'<text x="{left - 8}" y="{top - 8}" font-size="11" text-anchor="end" fill="#5f6670">{escape(y_label)}</text>')
    # colour key: five swatches 0, .25, .5, .75, 1
    key_y = top + cell * len(rows) + 14
    body.append(f'<text x="{left - 8}" y="{key_y + 11}" font-size="11" text-anchor="end" fill="#5f6670">{escape(value_label)}</text>')
    for k, v in enumerate((0.0, 0.25, 0.5, 0.75, 1.0)):
        body.append(f'<rect x="{left + 42 * k}" y="{key_y}" width="40" height="14" fill="{_heat_fill(v)}" stroke="#dde1e6"/>')
        body.append(f'<text x="{left + 42 * k + 20}" y="{key_y + 28}" font-size="10" text-anchor="middle" fill="#5f6670">{v:g}</text>')
    return _svg(width, height, body, title, data=(
        ["row", *columns], [[name, *(None if v is None else float(v) for v in matrix[r])] for r, name in enumerate(rows)]))


def scatter_plot(points: Sequence[tuple[str, float, float, float]], *, title: str, x_label: str, y_label: str) -> str:
    """Labelled points (label, x, y, size) on centred axes, e.g. the Usefulness–Novelty trade-off."""
    if not points:
        return ""
    size_px, pad = 420, 50
    xs = [p[1] for p in points]
    ys = [p[2] for p in points]
    ticks = nice_ticks(-max(max(map(abs, xs)), max(map(abs, ys)), 1.0) * 1.1,
                       max(max(map(abs, xs)), max(map(abs, ys)), 1.0) * 1.1)
    x = _scale(ticks[0], ticks[-1], pad, size_px - 10)
    y = _scale(ticks[0], ticks[-1], size_px - pad, 10)
    tick_fmt = tick_format(ticks)
    body = []
    for t in ticks:
        body.append(f'<text x="{x(t):.1f}" y="{size_px - pad + 13}" font-size="10" text-anchor="middle" fill="#5f6670">{tick_fmt.format(t)}</text>')
        body.append(f'<text x="{pad - 4}" y="{y(t) + 3:.1f}" font-size="10" text-anchor="end" fill="#5f6670">{tick_fmt.format(t)}</text>')
    body += [
        f'<line x1="{x(0)}" x2="{x(0)}" y1="10" y2="{size_px - pad}" stroke="#ccd"/>',
        f'<line x1="{pad}" x2="{size_px - 10}" y1="{y(0)}" y2="{y(0)}" stroke="#ccd"/>',
        f'<text x="{(pad + size_px) / 2}" y="{size_px - 14}" font-size="12" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="12" y="{(size_px - pad) / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 12 {(size_px - pad) / 2})">{escape(y_label)}</text>',
    ]
    sizes = [p[3] for p in points]
    s_lo, s_hi = min(sizes), max(sizes)
    radius = _scale(s_lo, s_hi if s_hi > s_lo else s_lo + 1, 4, 12)
    for k, (label, px, py, ps) in enumerate(points):
        colour = PALETTE[k % len(PALETTE)]
        body.append(f'<circle cx="{x(px):.1f}" cy="{y(py):.1f}" r="{radius(ps):.1f}" fill="{colour}" fill-opacity=".75"/>')
        # Labels right of centre are drawn to the left of their point so they stay inside the frame.
        anchor, dx = ("end", -9) if px > 0 else ("start", 9)
        body.append(f'<text x="{x(px) + dx:.1f}" y="{y(py) - 7:.1f}" font-size="11" text-anchor="{anchor}">{escape(label)}</text>')
    return _svg(size_px, size_px, body, title, data=(["label", x_label, y_label, "size"], [list(p) for p in points]))


def box_plot(groups: Sequence[tuple[str, Sequence[float]]], *, title: str, axis_label: str) -> str:
    """Horizontal box plots (quartiles, whiskers at 1.5 IQR, outliers as dots)."""
    groups = [(label, np.asarray(values, float)) for label, values in groups if len(values)]
    if not groups:
        return ""
    left, right, row_h, top = 230, 560, 20, 22
    height = top + row_h * len(groups) + 30
    ticks = nice_ticks(min(v.min() for _, v in groups), max(v.max() for _, v in groups))
    x = _scale(ticks[0], ticks[-1], left, right)
    body = [f'<text x="{left}" y="14" font-size="12" fill="#5f6670">{escape(axis_label)}</text>']
    for k, (label, v) in enumerate(groups):
        yc = top + row_h * k + row_h / 2
        q1, med, q3 = np.percentile(v, [25, 50, 75])
        iqr = q3 - q1
        inside = v[(v >= q1 - 1.5 * iqr) & (v <= q3 + 1.5 * iqr)]
        body.append(f'<text x="{left - 8}" y="{yc + 4}" font-size="11" text-anchor="end">{escape(label)}</text>')
        body.append(f'<line x1="{x(inside.min()):.1f}" x2="{x(inside.max()):.1f}" y1="{yc}" y2="{yc}" stroke="#667"/>')
        body.append(f'<rect x="{x(q1):.1f}" y="{yc - 6}" width="{max(x(q3) - x(q1), 1):.1f}" height="12" fill="#dbe4ff" stroke="#3451b2"/>')
        body.append(f'<line x1="{x(med):.1f}" x2="{x(med):.1f}" y1="{yc - 6}" y2="{yc + 6}" stroke="#3451b2" stroke-width="2"/>')
        for out in v[(v < q1 - 1.5 * iqr) | (v > q3 + 1.5 * iqr)]:
            body.append(f'<circle cx="{x(out):.1f}" cy="{yc}" r="2" fill="#c2410c"/>')
    base = height - 22
    body.append(f'<line x1="{left}" x2="{right}" y1="{base}" y2="{base}" stroke="#99a"/>')
    tick_fmt = tick_format(ticks)
    for tick in ticks:
        body.append(f'<text x="{x(tick):.1f}" y="{base + 13}" font-size="10" text-anchor="middle" fill="#5f6670">{tick_fmt.format(tick)}</text>')
    return _svg(right + 20, height, body, title,
                data=(["group", "value"], [[label, float(value)] for label, v in groups for value in v]))


def _label_box(x: float, y: float, text: str, anchor: str, size: int = 10) -> tuple[float, float, float, float]:
    """Approximate box of an SVG text (0.6 em per character, the usual sans-serif average)."""
    width = 0.6 * size * len(text)
    x0 = x - width if anchor == "end" else (x - width / 2 if anchor == "middle" else x)
    return x0, y - size, x0 + width, y + 2


def _overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


#: Least visible length of an edge between two drawn nodes (px): the gap kept between their circles.
EDGE_GAP = 14


def _spread(centres: np.ndarray, radii: np.ndarray, *, lo: float, hi_x: float, lo_y: float, hi: float,
            gap: float = EDGE_GAP, rounds: int = 200) -> np.ndarray:
    """Centres moved apart until no two circles come closer than ``gap`` (kept inside the frame).

    A spring layout of a graph with several components pushes the components apart and packs each into
    one spot, so its nodes cover each other and the edges between them. Each round moves every pair that is
    too close apart along the line joining them, half the shortfall each (summed over its pairs); coincident centres part along
    a fixed angle per node, so the drawing is the same on every load."""
    pts = centres.astype(float).copy()
    n = len(pts)
    if n < 2:
        return pts
    need = radii[:, None] + radii[None, :] + gap
    np.fill_diagonal(need, 0.0)
    fallback = np.stack([np.cos(2.399963 * np.arange(n)), np.sin(2.399963 * np.arange(n))], axis=1)  # golden angle
    for _ in range(rounds):
        delta = pts[:, None, :] - pts[None, :, :]
        dist = np.hypot(delta[..., 0], delta[..., 1])
        short = np.clip(need - dist, 0.0, None)
        np.fill_diagonal(short, 0.0)
        if short.max() < 0.5:
            break
        unit = np.where(dist[..., None] > 1e-6, delta / np.maximum(dist, 1e-6)[..., None],
                        fallback[:, None, :] - fallback[None, :, :])
        pts += 0.5 * (short[..., None] * unit).sum(axis=1)
        pts[:, 0] = np.clip(pts[:, 0], lo + radii, hi_x - radii)
        pts[:, 1] = np.clip(pts[:, 1], lo_y + radii, hi - radii)
    return pts


def graph_plot(nodes: Sequence[dict], edges: Sequence[dict], *, title: str, size: int = 620,
               max_labels: int = 14) -> str:
    """A node-link drawing from laid-out nodes (x, y in [-1, 1]): colour = cluster, size = weighted degree.

    The layout is fitted to the frame; edges are drawn with width and opacity by weight; only the
    heaviest nodes are labelled (at most ``max_labels``, the heaviest of each cluster first), each label
    placed where it collides with no other and kept inside the frame — every node names itself on hover.
    """
    if not nodes:
        return ""
    xs = [n["x"] for n in nodes]
    ys = [n["y"] for n in nodes]
    pad = 26
    x = _scale(min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1, pad, size - pad)
    y = _scale(min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1, size - pad, pad + 14)
    top = max((n["weighted_degree"] for n in nodes), default=1.0) or 1.0
    radius = {n["id"]: 3 + 9 * (n["weighted_degree"] / top) ** 0.5 for n in nodes}
    # nodes parted so that every edge shows at least EDGE_GAP px between its two circles
    spread = _spread(np.array([(x(n["x"]), y(n["y"])) for n in nodes]), np.array([radius[n["id"]] for n in nodes]),
                     lo=4, hi_x=size - 4, lo_y=22, hi=size - 4)
    where = {n["id"]: (float(px), float(py)) for n, (px, py) in zip(nodes, spread, strict=True)}
    clusters = sorted({n["cluster_id"] for n in nodes if n.get("cluster_id")})
    colour = {c: PALETTE[k % len(PALETTE)] for k, c in enumerate(clusters)}
    heaviest = max((e["weight"] for e in edges), default=1.0) or 1.0
    body = [f'<text x="4" y="14" font-size="11" fill="#5f6670">{len(nodes)} atoms, {len(edges)} co-occurrence edges; '
            'colour = cluster, size = weighted degree; hover a node for its name</text>']
    for e in edges:
        (x1, y1), (x2, y2) = where[e["source"]], where[e["target"]]
        share = e["weight"] / heaviest
        body.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#4b5563" '
                    f'stroke-opacity="{0.45 + 0.45 * share:.2f}" stroke-width="{1.2 + 2.3 * share:.1f}"/>')
    for n in sorted(nodes, key=lambda n: n["weighted_degree"]):
        cx, cy = where[n["id"]]
        fill = colour.get(n.get("cluster_id"), "#c8ced6")
        body.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius[n["id"]]:.1f}" fill="{fill}" fill-opacity=".85" '
                    f'stroke="#fff" stroke-width="1"><title>{escape(n["label"])} ({escape(n["type"])}; '
                    f'{n["n_models"]} models)</title></circle>')
    # Labels: the heaviest node of each cluster first, then the rest by weight; skip any that would collide.
    by_weight = sorted(nodes, key=lambda n: -n["weighted_degree"])
    firsts, seen = [], set()
    for n in by_weight:
        if n.get("cluster_id") not in seen:
            seen.add(n.get("cluster_id"))
            firsts.append(n)
    order = firsts + [n for n in by_weight if n not in firsts]
    placed: list[tuple[float, float, float, float]] = [
        (where[n["id"]][0] - radius[n["id"]], where[n["id"]][1] - radius[n["id"]],
         where[n["id"]][0] + radius[n["id"]], where[n["id"]][1] + radius[n["id"]]) for n in by_weight
    ]
    labelled = 0
    for n in order:
        if labelled >= max_labels:
            break
        cx, cy = where[n["id"]]
        r = radius[n["id"]]
        text = n["label"] if len(n["label"]) <= 24 else n["label"][:23] + "…"
        # right, left, the four corners, then centred above and below the node
        for anchor, dx, dy in (("start", r + 3, 4), ("end", -r - 3, 4), ("start", r + 3, -r - 2), ("end", -r - 3, r + 10),
                               ("end", -r - 3, -r - 2), ("start", r + 3, r + 10), ("middle", 0, -r - 4), ("middle", 0, r + 12)):
            box = _label_box(cx + dx, cy + dy, text, anchor)
            inside = box[0] >= 2 and box[2] <= size - 2 and box[1] >= 18 and box[3] <= size - 2
            own = (cx - r, cy - r, cx + r, cy + r)
            if inside and not any(_overlaps(box, other) for other in placed if other != own):
                placed.append(box)
                body.append(f'<text x="{cx + dx:.1f}" y="{cy + dy:.1f}" font-size="10" text-anchor="{anchor}" '
                            f'paint-order="stroke" stroke="#fff" stroke-width="3">{escape(text)}</text>')
                labelled += 1
                break
    return _svg(size, size, body, title, data=(
        ["kind", "id", "label", "cluster", "weighted_degree", "source", "target", "weight"],
        [["node", n["id"], n["label"], n.get("cluster_id"), n["weighted_degree"], None, None, None] for n in nodes]
        + [["edge", None, None, None, None, e["source"], e["target"], e["weight"]] for e in edges]))


@dataclass(frozen=True)
class Series:
    label: str
    xs: Sequence[float]
    ys: Sequence[float]
    # points drawn as labelled markers on the line, e.g. ("Best", x, y)
    marks: Sequence[tuple[str, float, float]] = ()


def line_plot(series: Sequence[Series], *, title: str, x_label: str, y_label: str,
              x_range: tuple[float, float] | None = None, fmt: str = "{:.2f}") -> str:
    """Lines on labelled axes with a legend (one colour per series), e.g. similarity over painting progress;
    both axes run over round ticks (:func:`nice_ticks`); ``fmt`` formats the marks' values."""
    series = [s for s in series if len(s.xs)]
    if not series:
        return ""
    left, right, top, bottom = 58, 470, 16, 232
    legend_h = 16 * len(series) + 8
    height = bottom + 44 + legend_h
    all_x = [float(v) for s in series for v in s.xs]
    all_y = [float(v) for s in series for v in s.ys]
    x_ticks = nice_ticks(*(x_range or (min(all_x), max(all_x))), target=6)
    y_ticks = nice_ticks(min(all_y), max(all_y))
    x_lo, x_hi = x_ticks[0], x_ticks[-1]
    y_lo, y_hi = y_ticks[0], y_ticks[-1]
    x = _scale(x_lo, x_hi, left, right)
    y = _scale(y_lo, y_hi, bottom, top)
    body = [
        f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#99a"/>',
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{bottom}" stroke="#99a"/>',
        f'<text x="{(left + right) / 2}" y="{bottom + 32}" font-size="12" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="14" y="{(top + bottom) / 2}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {(top + bottom) / 2})">{escape(y_label)}</text>',
    ]
    x_fmt, y_fmt = tick_format(x_ticks), tick_format(y_ticks)
    mark_boxes: list[tuple[float, float, float, float]] = []
    for tick in x_ticks:
        body.append(f'<text x="{x(tick):.1f}" y="{bottom + 14}" font-size="10" text-anchor="middle" fill="#5f6670">{x_fmt.format(tick)}</text>')
    for tick in y_ticks:
        body.append(f'<line x1="{left}" x2="{right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#eef0f3"/>')
        body.append(f'<text x="{left - 6}" y="{y(tick) + 3:.1f}" font-size="10" text-anchor="end" fill="#5f6670">{y_fmt.format(tick)}</text>')
    for k, s in enumerate(series):
        colour = PALETTE[k % len(PALETTE)]
        points = " ".join(f"{x(float(a)):.1f},{y(float(b)):.1f}" for a, b in zip(s.xs, s.ys, strict=True))
        body.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.8"/>')
        # marks on one point share one label ("Best = Final": drawn apart, the two words overprinted each other)
        merged: dict[tuple[float, float], list[str]] = {}
        for name, mx, my in s.marks:
            merged.setdefault((float(mx), float(my)), []).append(name)
        for (mx, my), names in merged.items():
            name = " = ".join(names)
            body.append(f'<circle cx="{x(mx):.1f}" cy="{y(my):.1f}" r="4" fill="#fff" stroke="{colour}" stroke-width="2">'
                        f'<title>{escape(name)}: {fmt.format(my)}</title></circle>')
            # a mark near the right edge is labelled to its left, so the label stays inside the frame; a label
            # that would cover one already placed goes under its point instead
            anchor, dx = ("end", -6) if x(mx) > right - 40 else ("start", 6)
            ty = y(my) - 6
            if any(_overlaps(_label_box(x(mx) + dx, ty, name, anchor), box) for box in mark_boxes):
                ty = y(my) + 16
            mark_boxes.append(_label_box(x(mx) + dx, ty, name, anchor))
            body.append(f'<text x="{x(mx) + dx:.1f}" y="{ty:.1f}" font-size="10" fill="{colour}" '
                        f'text-anchor="{anchor}">{escape(name)}</text>')
        ly = bottom + 50 + 16 * k
        body.append(f'<line x1="{left}" x2="{left + 18}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" stroke-width="2.5"/>')
        body.append(f'<text x="{left + 24}" y="{ly}" font-size="11">{escape(s.label)}</text>')
    return _svg(right + 20, height, body, title, data=(
        ["series", x_label, y_label], [[s.label, float(a), float(b)] for s in series for a, b in zip(s.xs, s.ys, strict=True)]))


def histogram(values: Sequence[float], *, title: str, x_label: str, y_label: str = "count", bins: int = 12,
              band: tuple[float, float] | None = None, band_label: str = "", marks: Sequence[float] = ()) -> str:
    """A histogram with an optional shaded interval (e.g. a frequency belt) and marked values (e.g. the
    selected items), labelled axes and a legend."""
    values = np.asarray(list(values), float)
    if not len(values):
        return ""
    lo, hi = float(values.min()), float(values.max())
    if band is not None:
        lo, hi = min(lo, band[0]), max(hi, band[1])
    if hi <= lo:
        hi = lo + 1.0
    counts, edges = np.histogram(values, bins=bins, range=(lo, hi))
    left, right, top, bottom = 50, 330, 30, 170
    x = _scale(lo, hi, left, right)
    y = _scale(0, max(int(counts.max()), 1), bottom, top)
    body = []
    if band is not None:
        body.append(f'<rect x="{x(band[0]):.1f}" y="{top}" width="{max(x(band[1]) - x(band[0]), 1):.1f}" '
                    f'height="{bottom - top}" fill="#dbe4ff" fill-opacity=".7"/>')
    for k, n in enumerate(counts):
        if n:
            body.append(f'<rect x="{x(edges[k]) + 1:.1f}" y="{y(n):.1f}" width="{max(x(edges[k + 1]) - x(edges[k]) - 2, 1):.1f}" '
                        f'height="{bottom - y(n):.1f}" fill="{PALETTE[0]}"/>')
    for m in marks:
        body.append(f'<line x1="{x(m):.1f}" x2="{x(m):.1f}" y1="{bottom}" y2="{bottom + 6}" stroke="{PALETTE[1]}" stroke-width="1.5"/>')
    body.append(f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#99a"/>')
    body.append(f'<line x1="{left}" x2="{left}" y1="{top}" y2="{bottom}" stroke="#99a"/>')
    ticks = [t for t in nice_ticks(lo, hi) if lo - 1e-9 <= t <= hi + 1e-9]
    for tick in ticks:
        body.append(f'<text x="{x(tick):.1f}" y="{bottom + 18}" font-size="10" text-anchor="middle" fill="#5f6670">{tick_format(ticks).format(tick)}</text>')
    body.append(f'<text x="{left - 6}" y="{top + 4}" font-size="10" text-anchor="end" fill="#5f6670">{int(counts.max())}</text>')
    body.append(f'<text x="{(left + right) / 2}" y="{bottom + 32}" font-size="11" text-anchor="middle">{escape(x_label)}</text>')
    body.append(f'<text x="14" y="{(top + bottom) / 2}" font-size="11" text-anchor="middle" '
                f'transform="rotate(-90 14 {(top + bottom) / 2})">{escape(y_label)}</text>')
    body.append(f'<text x="{left}" y="16" font-size="12" font-weight="600">{escape(title)}</text>')
    legend = [(PALETTE[0], "pool items")]
    if band is not None:
        legend.append(("#dbe4ff", band_label or "shaded interval"))
    if len(marks):
        legend.append((PALETTE[1], "selected (ticks)"))
    for k, (colour, label) in enumerate(legend):
        ly = top + 4 + 14 * k
        body.append(f'<rect x="{right + 10}" y="{ly - 8}" width="10" height="10" fill="{colour}"/>'
                    f'<text x="{right + 24}" y="{ly + 1}" font-size="10">{escape(label)}</text>')
    return _svg(right + 130, bottom + 40, body, title,
                data=([x_label, "selected"], [[float(v), bool(np.any(np.isclose(v, list(marks))))] for v in values]))


def grouped_bars(groups: Sequence[str], series: Sequence[str], values: Sequence[Sequence[float]], *, title: str,
                 x_label: str, y_label: str) -> str:
    """Vertical bars, one group per ``groups`` entry with one bar per ``series`` (``values[g][s]``), the
    value printed on each bar, labelled axes and a legend."""
    if not groups or not series:
        return ""
    top_value = max((max(row) for row in values if len(row)), default=0) or 1
    left, top, bottom, bar = 50, 30, 190, 22
    group_w = bar * len(series) + 24
    right = left + group_w * len(groups)
    y = _scale(0, top_value, bottom, top)
    body = [f'<text x="{left}" y="16" font-size="12" font-weight="600">{escape(title)}</text>',
            f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#99a"/>',
            f'<line x1="{left}" x2="{left}" y1="{top}" y2="{bottom}" stroke="#99a"/>']
    for g, name in enumerate(groups):
        gx = left + group_w * g + 12
        for s in range(len(series)):
            v = float(values[g][s])
            bx = gx + bar * s
            body.append(f'<rect x="{bx}" y="{y(v):.1f}" width="{bar - 3}" height="{bottom - y(v):.1f}" fill="{PALETTE[s % len(PALETTE)]}"/>')
            body.append(f'<text x="{bx + (bar - 3) / 2:.1f}" y="{y(v) - 3:.1f}" font-size="10" text-anchor="middle">{v:g}</text>')
        body.append(f'<text x="{gx + bar * len(series) / 2:.1f}" y="{bottom + 14}" font-size="11" text-anchor="middle">{escape(name)}</text>')
    body.append(f'<text x="{(left + right) / 2}" y="{bottom + 30}" font-size="11" text-anchor="middle">{escape(x_label)}</text>')
    body.append(f'<text x="14" y="{(top + bottom) / 2}" font-size="11" text-anchor="middle" '
                f'transform="rotate(-90 14 {(top + bottom) / 2})">{escape(y_label)}</text>')
    for s, name in enumerate(series):
        ly = top + 14 * s
        body.append(f'<rect x="{right + 10}" y="{ly - 8}" width="10" height="10" fill="{PALETTE[s % len(PALETTE)]}"/>'
                    f'<text x="{right + 24}" y="{ly + 1}" font-size="10">{escape(name)}</text>')
    return _svg(right + 110, bottom + 40, body, title,
                data=([x_label, *series], [[name, *(float(v) for v in values[g])] for g, name in enumerate(groups)]))


def quota_bars(rows: Sequence[tuple[str, float, float]], *, title: str, axis_label: str) -> str:
    """Horizontal bars of achieved counts with each row's target marked (label, achieved, target)."""
    if not rows:
        return ""
    left, right, row_h, top = 260, 560, 16, 34
    height = top + row_h * len(rows) + 34
    hi = max(max(a, t) for _, a, t in rows) or 1
    x = _scale(0, hi, left, right)
    body = [f'<text x="{left}" y="14" font-size="12" font-weight="600">{escape(title)}</text>',
            f'<rect x="{right - 150}" y="18" width="10" height="10" fill="{PALETTE[2]}"/>'
            f'<text x="{right - 136}" y="27" font-size="10">achieved</text>'
            f'<line x1="{right - 70}" x2="{right - 70}" y1="17" y2="29" stroke="{PALETTE[4]}" stroke-width="2"/>'
            f'<text x="{right - 64}" y="27" font-size="10">quota</text>']
    for k, (label, achieved, target) in enumerate(rows):
        yc = top + row_h * k + row_h / 2
        colour = PALETTE[2] if achieved >= target else PALETTE[1]
        body.append(f'<text x="{left - 6}" y="{yc + 4:.1f}" font-size="10" text-anchor="end">{escape(label)}</text>')
        body.append(f'<rect x="{left}" y="{yc - 5:.1f}" width="{max(x(achieved) - left, 0):.1f}" height="10" fill="{colour}"/>')
        body.append(f'<line x1="{x(target):.1f}" x2="{x(target):.1f}" y1="{yc - 7:.1f}" y2="{yc + 7:.1f}" stroke="{PALETTE[4]}" stroke-width="2"/>')
        body.append(f'<text x="{right + 6}" y="{yc + 4:.1f}" font-size="10" fill="#5f6670">{achieved:g}/{target:g}</text>')
    base = height - 24
    body.append(f'<line x1="{left}" x2="{right}" y1="{base}" y2="{base}" stroke="#99a"/>')
    for tick in (t for t in nice_ticks(0, hi) if t <= hi + 1e-9):
        body.append(f'<text x="{x(tick):.1f}" y="{base + 13}" font-size="10" text-anchor="middle" fill="#5f6670">{tick:g}</text>')
    body.append(f'<text x="{(left + right) / 2}" y="{base + 26}" font-size="11" text-anchor="middle">{escape(axis_label)}</text>')
    return _svg(right + 50, height + 6, body, title,
                data=(["label", "achieved", "target"], [[label, a, t] for label, a, t in rows]))


def radar_chart(axes: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], *, title: str,
                max_value: float = 1.0, axis_note: str = "") -> str:
    """A radar (spider) chart: one labelled spoke per axis, one closed polygon per series (with a legend),
    values from 0 at the centre to ``max_value`` at the rim; a missing value is drawn at the centre and
    listed in the legend as n/a."""
    if not axes or not series:
        return ""
    # side margins wide enough for an axis label beside the rim ("Surp. (Conv.)", ~80 px at 11 px); the legend
    # goes under the chart, so the figure stays under 500 px wide and its text is not scaled down in a grid cell
    size, side = 420, 36
    cx, cy, radius = size / 2 + side, size / 2 + 10, size / 2 - 70
    legend_x = side
    n = len(axes)
    angle = [-np.pi / 2 + 2 * np.pi * k / n for k in range(n)]

    def point(k: int, value: float) -> tuple[float, float]:
        r = radius * max(0.0, min(value / max_value, 1.0))
        return cx + r * np.cos(angle[k]), cy + r * np.sin(angle[k])

    def outside(k: int, share: float) -> tuple[float, float]:
        """A point on spoke k at ``share`` of the rim's radius, not clamped to the rim (the axis labels)."""
        return cx + radius * share * np.cos(angle[k]), cy + radius * share * np.sin(angle[k])

    body = [f'<text x="{cx}" y="16" font-size="12" text-anchor="middle" fill="#5f6670">{escape(axis_note)}</text>']
    ring_labels = []
    for ring in (0.25, 0.5, 0.75, 1.0):
        ring_points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(k, ring * max_value) for k in range(n)))
        body.append(f'<polygon points="{ring_points}" fill="none" stroke="#dde1e6"/>')
        x, y = point(0, ring * max_value)
        # drawn after the polygons (below), on a white halo, so no series hides them
        ring_labels.append(f'<text x="{x + 4:.1f}" y="{y + 3:.1f}" font-size="10" fill="#5f6670" paint-order="stroke" '
                           f'stroke="#fff" stroke-width="3">{ring * max_value:g}</text>')
    for k, label in enumerate(axes):
        x, y = point(k, max_value)
        body.append(f'<line x1="{cx}" y1="{cy}" x2="{x:.1f}" y2="{y:.1f}" stroke="#c8ced6"/>')
        # outside the rim: clamped to it (as point() clamps values) the labels sat on the ring-1 label and the polygons
        lx, ly = outside(k, 1.14)
        anchor = "middle" if abs(lx - cx) < 8 else ("start" if lx > cx else "end")
        body.append(f'<text x="{lx:.1f}" y="{ly + 4:.1f}" font-size="11" text-anchor="{anchor}">{escape(label)}</text>')
    for s, (name, values) in enumerate(series):
        colour = PALETTE[s % len(PALETTE)]
        shape = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(k, v or 0.0) for k, v in enumerate(values)))
        body.append(f'<polygon points="{shape}" fill="{colour}" fill-opacity=".12" stroke="{colour}" stroke-width="2"/>')
        missing = any(v is None for v in values)
        ly = size + 16 + 18 * s
        body.append(f'<rect x="{legend_x}" y="{ly - 9}" width="12" height="12" fill="{colour}"/>')
        body.append(f'<text x="{legend_x + 18}" y="{ly + 1}" font-size="11">{escape(name)}{" (n/a axes at 0)" if missing else ""}</text>')
    body += ring_labels
    return _svg(size + 2 * side, size + 16 + 18 * len(series), body, title,
                data=(["series", *axes], [[name, *values] for name, values in series]))


def bland_altman_plot(means: Sequence[float], differences: Sequence[float], *, bias: float, lower: float, upper: float,
                      title: str, x_label: str, y_label: str) -> str:
    """Differences against means with the bias and the 95% limits of agreement as labelled lines
    (Bland & Altman 1986); a legend names the three lines and the points."""
    if not len(means):
        return ""
    left, right, top, bottom = 58, 470, 16, 232
    height = bottom + 44 + 16 * 3 + 8
    x_ticks = nice_ticks(min(means), max(means), target=6)
    y_ticks = nice_ticks(min(min(differences), lower), max(max(differences), upper))
    x_lo, x_hi, y_lo, y_hi = x_ticks[0], x_ticks[-1], y_ticks[0], y_ticks[-1]
    x = _scale(x_lo, x_hi, left, right)
    y = _scale(y_lo, y_hi, bottom, top)
    body = [
        f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#99a"/>',
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{bottom}" stroke="#99a"/>',
        f'<text x="{(left + right) / 2}" y="{bottom + 32}" font-size="12" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="14" y="{(top + bottom) / 2}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {(top + bottom) / 2})">{escape(y_label)}</text>',
    ]
    x_fmt, y_fmt = tick_format(x_ticks), tick_format(y_ticks)
    for tick in x_ticks:
        body.append(f'<text x="{x(tick):.1f}" y="{bottom + 14}" font-size="10" text-anchor="middle" fill="#5f6670">{x_fmt.format(tick)}</text>')
    for tick in y_ticks:
        body.append(f'<text x="{left - 6}" y="{y(tick) + 3:.1f}" font-size="10" text-anchor="end" fill="#5f6670">{y_fmt.format(tick)}</text>')
    lines = ((f"bias {bias:+.2f}", bias, PALETTE[1], ""), (f"−1.96 SD {lower:+.2f}", lower, PALETTE[4], ' stroke-dasharray="5 3"'),
             (f"+1.96 SD {upper:+.2f}", upper, PALETTE[4], ' stroke-dasharray="5 3"'))
    for _, value, colour, dash in lines:
        body.append(f'<line x1="{left}" x2="{right}" y1="{y(value):.1f}" y2="{y(value):.1f}" stroke="{colour}"{dash}/>')
    for mx, dy in zip(means, differences, strict=True):
        body.append(f'<circle cx="{x(mx):.1f}" cy="{y(dy):.1f}" r="3.5" fill="{PALETTE[0]}" fill-opacity=".6"/>')
    legend = [("one sample (human mean − rater)", PALETTE[0], "")] + [(name, colour, dash) for name, _, colour, dash in lines]
    for k, (name, colour, dash) in enumerate(legend):
        ly = bottom + 50 + 16 * k
        if k == 0:
            body.append(f'<circle cx="{left + 9}" cy="{ly - 4}" r="3.5" fill="{colour}"/>')
        else:
            body.append(f'<line x1="{left}" x2="{left + 18}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" stroke-width="2"{dash}/>')
        body.append(f'<text x="{left + 24}" y="{ly}" font-size="11">{escape(name)}</text>')
    return _svg(right + 20, height + 16, body, title, data=(
        [x_label, y_label, "bias", "lower_limit", "upper_limit"],
        [[float(m), float(d), bias, lower, upper] for m, d in zip(means, differences, strict=True)]))

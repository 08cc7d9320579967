"""Inline SVG charts for the results pages: interval plots, heat maps, scatter
plots and box plots. Server-side SVG needs no JavaScript library, prints, and
shows the same numbers the tables do.
"""

from __future__ import annotations

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


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        # Natural width, scaled down by the .chart rule in atelier.css (no style attribute: CSP).
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" class="chart" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
        + "".join(body) + "</svg>"
    )


def _scale(lo: float, hi: float, a: float, b: float):
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def interval_plot(rows: Sequence[Interval], *, title: str, reference: float | None = None,
                  axis_label: str = "", fmt: str = "{:.2f}") -> str:
    """Point estimates with horizontal interval bars, one row per model (best first)."""
    if not rows:
        return ""
    left, right, row_h, top = 170, 560, 24, 24
    height = top + row_h * len(rows) + 34
    lo = min(r.low for r in rows)
    hi = max(r.high for r in rows)
    if reference is not None:
        lo, hi = min(lo, reference), max(hi, reference)
    pad = (hi - lo) * 0.05 or 0.05
    x = _scale(lo - pad, hi + pad, left, right)
    body = [f'<text x="{left}" y="14" font-size="12" fill="#5f6670">{escape(axis_label)}</text>']
    if reference is not None:
        body.append(f'<line x1="{x(reference):.1f}" x2="{x(reference):.1f}" y1="{top - 6}" y2="{height - 28}" '
                    'stroke="#aab" stroke-dasharray="4 3"/>')
    for k, r in enumerate(rows):
        y = top + row_h * k + row_h / 2
        colour = PALETTE[(r.tier or 0) % len(PALETTE)] if r.tier is not None else PALETTE[0]
        if k % 2 == 0:
            body.append(f'<rect x="0" y="{y - row_h / 2:.1f}" width="{right + 60}" height="{row_h}" fill="#f6f7f9"/>')
        body.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end">{escape(r.label)}</text>')
        body.append(f'<line x1="{x(r.low):.1f}" x2="{x(r.high):.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="2.5"/>')
        body.append(f'<circle cx="{x(r.estimate):.1f}" cy="{y:.1f}" r="4.5" fill="{colour}"/>')
        body.append(f'<text x="{right + 8}" y="{y + 4:.1f}" font-size="11" fill="#5f6670">{fmt.format(r.estimate)}</text>')
    base = height - 24
    body.append(f'<line x1="{left}" x2="{right}" y1="{base}" y2="{base}" stroke="#99a"/>')
    for tick in np.linspace(lo - pad, hi + pad, 5):
        body.append(f'<text x="{x(tick):.1f}" y="{base + 14}" font-size="10" text-anchor="middle" fill="#5f6670">{fmt.format(tick)}</text>')
    return _svg(right + 60, height, body, title)


def heat_map(matrix: Sequence[Sequence[float]], rows: Sequence[str], columns: Sequence[str], *, title: str) -> str:
    """A probability matrix (e.g. P[model, rank]) as shaded cells with the value printed."""
    if not rows:
        return ""
    left, cell, top = 170, 34, 30
    width = left + cell * len(columns) + 10
    height = top + cell * len(rows) + 10
    body = []
    for c, name in enumerate(columns):
        body.append(f'<text x="{left + cell * c + cell / 2}" y="{top - 10}" font-size="11" text-anchor="middle">{escape(name)}</text>')
    for r, name in enumerate(rows):
        y = top + cell * r
        body.append(f'<text x="{left - 8}" y="{y + cell / 2 + 4}" font-size="12" text-anchor="end">{escape(name)}</text>')
        for c in range(len(columns)):
            v = float(matrix[r][c] or 0.0)
            shade = int(255 - 200 * min(max(v, 0.0), 1.0))
            text_colour = "#fff" if v > 0.55 else "#1d1f24"
            body.append(f'<rect x="{left + cell * c}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="rgb({shade},{shade + (255 - shade) // 4},255)"/>')
            if v >= 0.005:
                body.append(f'<text x="{left + cell * c + cell / 2 - 1}" y="{y + cell / 2 + 3}" font-size="10" text-anchor="middle" fill="{text_colour}">{v:.2f}</text>')
    return _svg(width, height, body, title)


def scatter_plot(points: Sequence[tuple[str, float, float, float]], *, title: str, x_label: str, y_label: str) -> str:
    """Labelled points (label, x, y, size) on centred axes, e.g. the Usefulness–Novelty trade-off."""
    if not points:
        return ""
    size_px, pad = 420, 50
    xs = [p[1] for p in points]
    ys = [p[2] for p in points]
    span = max(max(map(abs, xs)), max(map(abs, ys)), 1.0) * 1.15
    x = _scale(-span, span, pad, size_px - 10)
    y = _scale(-span, span, size_px - pad, 10)
    body = [
        f'<line x1="{x(0)}" x2="{x(0)}" y1="10" y2="{size_px - pad}" stroke="#ccd"/>',
        f'<line x1="{pad}" x2="{size_px - 10}" y1="{y(0)}" y2="{y(0)}" stroke="#ccd"/>',
        f'<text x="{(pad + size_px) / 2}" y="{size_px - 14}" font-size="12" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="14" y="{(size_px - pad) / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {(size_px - pad) / 2})">{escape(y_label)}</text>',
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
    return _svg(size_px, size_px, body, title)


def box_plot(groups: Sequence[tuple[str, Sequence[float]]], *, title: str, axis_label: str) -> str:
    """Horizontal box plots (quartiles, whiskers at 1.5 IQR, outliers as dots)."""
    groups = [(label, np.asarray(values, float)) for label, values in groups if len(values)]
    if not groups:
        return ""
    left, right, row_h, top = 230, 560, 20, 22
    height = top + row_h * len(groups) + 30
    lo = min(v.min() for _, v in groups)
    hi = max(v.max() for _, v in groups)
    x = _scale(lo, hi if hi > lo else lo + 1, left, right)
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
    for tick in np.linspace(lo, hi, 5):
        body.append(f'<text x="{x(tick):.1f}" y="{base + 13}" font-size="10" text-anchor="middle" fill="#5f6670">{tick:.0f}</text>')
    return _svg(right + 20, height, body, title)


def graph_plot(nodes: Sequence[dict], edges: Sequence[dict], *, title: str, size: int = 620) -> str:
    """A node-link drawing from laid-out nodes (x, y in [-1, 1]): colour = cluster, size = weighted degree."""
    if not nodes:
        return ""
    xs = [n["x"] for n in nodes]
    ys = [n["y"] for n in nodes]
    pad = 40
    x = _scale(min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1, pad, size - pad)
    y = _scale(min(ys), max(ys) if max(ys) > min(ys) else min(ys) + 1, size - pad, pad)
    where = {n["id"]: (x(n["x"]), y(n["y"])) for n in nodes}
    clusters = sorted({n["cluster_id"] for n in nodes if n.get("cluster_id")})
    colour = {c: PALETTE[k % len(PALETTE)] for k, c in enumerate(clusters)}
    top = max((n["weighted_degree"] for n in nodes), default=1.0) or 1.0
    heaviest = max((e["weight"] for e in edges), default=1.0) or 1.0
    body = []
    for e in edges:
        (x1, y1), (x2, y2) = where[e["source"]], where[e["target"]]
        body.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#9aa3ad" '
                    f'stroke-opacity="{0.15 + 0.6 * e["weight"] / heaviest:.2f}" stroke-width="1"/>')
    for n in sorted(nodes, key=lambda n: n["weighted_degree"]):
        cx, cy = where[n["id"]]
        r = 3 + 9 * (n["weighted_degree"] / top) ** 0.5
        fill = colour.get(n.get("cluster_id"), "#c8ced6")
        body.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r:.1f}" fill="{fill}" fill-opacity=".85">'
                    f'<title>{escape(n["label"])} ({escape(n["type"])}; {n["n_models"]} models)</title></circle>')
        if r > 7:
            body.append(f'<text x="{cx + r + 2:.1f}" y="{cy + 4:.1f}" font-size="10">{escape(n["label"][:28])}</text>')
    return _svg(size, size, body, title)


@dataclass(frozen=True)
class Series:
    label: str
    xs: Sequence[float]
    ys: Sequence[float]
    # points drawn as labelled markers on the line, e.g. ("Best", x, y)
    marks: Sequence[tuple[str, float, float]] = ()


def line_plot(series: Sequence[Series], *, title: str, x_label: str, y_label: str,
              x_range: tuple[float, float] | None = None, fmt: str = "{:.2f}", x_fmt: str = "{:.1f}") -> str:
    """Lines on labelled axes with a legend (one colour per series), e.g. similarity over painting progress."""
    series = [s for s in series if len(s.xs)]
    if not series:
        return ""
    left, right, top, bottom = 58, 470, 16, 232
    legend_h = 16 * len(series) + 8
    height = bottom + 44 + legend_h
    all_x = [float(v) for s in series for v in s.xs]
    all_y = [float(v) for s in series for v in s.ys]
    x_lo, x_hi = x_range or (min(all_x), max(all_x))
    y_lo, y_hi = min(all_y), max(all_y)
    pad = (y_hi - y_lo) * 0.08 or 0.05
    y_lo, y_hi = y_lo - pad, y_hi + pad
    x = _scale(x_lo, x_hi if x_hi > x_lo else x_lo + 1, left, right)
    y = _scale(y_lo, y_hi, bottom, top)
    body = [
        f'<line x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}" stroke="#99a"/>',
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{bottom}" stroke="#99a"/>',
        f'<text x="{(left + right) / 2}" y="{bottom + 32}" font-size="12" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="14" y="{(top + bottom) / 2}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {(top + bottom) / 2})">{escape(y_label)}</text>',
    ]
    for tick in np.linspace(x_lo, x_hi, 6):
        body.append(f'<text x="{x(tick):.1f}" y="{bottom + 14}" font-size="10" text-anchor="middle" fill="#5f6670">{x_fmt.format(tick)}</text>')
    for tick in np.linspace(y_lo, y_hi, 5):
        body.append(f'<line x1="{left}" x2="{right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#eef0f3"/>')
        body.append(f'<text x="{left - 6}" y="{y(tick) + 3:.1f}" font-size="10" text-anchor="end" fill="#5f6670">{fmt.format(tick)}</text>')
    for k, s in enumerate(series):
        colour = PALETTE[k % len(PALETTE)]
        points = " ".join(f"{x(float(a)):.1f},{y(float(b)):.1f}" for a, b in zip(s.xs, s.ys, strict=True))
        body.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.8"/>')
        for name, mx, my in s.marks:
            body.append(f'<circle cx="{x(mx):.1f}" cy="{y(my):.1f}" r="4" fill="#fff" stroke="{colour}" stroke-width="2">'
                        f'<title>{escape(name)}: {fmt.format(my)}</title></circle>')
            # a mark near the right edge is labelled to its left, so the label stays inside the frame
            anchor, dx = ("end", -6) if x(mx) > right - 40 else ("start", 6)
            body.append(f'<text x="{x(mx) + dx:.1f}" y="{y(my) - 6:.1f}" font-size="10" fill="{colour}" '
                        f'text-anchor="{anchor}">{escape(name)}</text>')
        ly = bottom + 50 + 16 * k
        body.append(f'<line x1="{left}" x2="{left + 18}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" stroke-width="2.5"/>')
        body.append(f'<text x="{left + 24}" y="{ly}" font-size="11">{escape(s.label)}</text>')
    return _svg(right + 20, height, body, title)
def radar_chart(axes: Sequence[str], series: Sequence[tuple[str, Sequence[float | None]]], *, title: str,
                max_value: float = 1.0, axis_note: str = "") -> str:
    """A radar (spider) chart: one labelled spoke per axis, one closed polygon per series (with a legend),
    values from 0 at the centre to ``max_value`` at the rim; a missing value is drawn at the centre and
    listed in the legend as n/a."""
    if not axes or not series:
        return ""
    size, legend_w = 420, 190
    cx, cy, radius = size / 2, size / 2 + 10, size / 2 - 70
    n = len(axes)
    angle = [-np.pi / 2 + 2 * np.pi * k / n for k in range(n)]

    def point(k: int, value: float) -> tuple[float, float]:
        r = radius * max(0.0, min(value / max_value, 1.0))
        return cx + r * np.cos(angle[k]), cy + r * np.sin(angle[k])

    body = [f'<text x="{cx}" y="16" font-size="12" text-anchor="middle" fill="#5f6670">{escape(axis_note)}</text>']
    for ring in (0.25, 0.5, 0.75, 1.0):
        ring_points = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(k, ring * max_value) for k in range(n)))
        body.append(f'<polygon points="{ring_points}" fill="none" stroke="#dde1e6"/>')
        x, y = point(0, ring * max_value)
        body.append(f'<text x="{x + 4:.1f}" y="{y + 3:.1f}" font-size="9" fill="#8a919a">{ring * max_value:g}</text>')
    for k, label in enumerate(axes):
        x, y = point(k, max_value)
        body.append(f'<line x1="{cx}" y1="{cy}" x2="{x:.1f}" y2="{y:.1f}" stroke="#c8ced6"/>')
        lx, ly = point(k, max_value * 1.16)
        anchor = "middle" if abs(lx - cx) < 8 else ("start" if lx > cx else "end")
        body.append(f'<text x="{lx:.1f}" y="{ly + 4:.1f}" font-size="11" text-anchor="{anchor}">{escape(label)}</text>')
    for s, (name, values) in enumerate(series):
        colour = PALETTE[s % len(PALETTE)]
        shape = " ".join(f"{x:.1f},{y:.1f}" for x, y in (point(k, v or 0.0) for k, v in enumerate(values)))
        body.append(f'<polygon points="{shape}" fill="{colour}" fill-opacity=".12" stroke="{colour}" stroke-width="2"/>')
        missing = any(v is None for v in values)
        ly = 40 + 18 * s
        body.append(f'<rect x="{size + 10}" y="{ly - 9}" width="12" height="12" fill="{colour}"/>')
        body.append(f'<text x="{size + 28}" y="{ly + 1}" font-size="11">{escape(name)}{" (n/a axes at 0)" if missing else ""}</text>')
    return _svg(size + legend_w, size + 20, body, title)

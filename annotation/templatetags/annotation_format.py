"""Number formatting for the dashboards: a missing value shows as an em dash, never as 0."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def pct(value, digits: int = 1) -> str:
    if value is None:
        return "—"
    return f"{100.0 * float(value):.{int(digits)}f}%"


@register.filter
def num(value, digits: int = 3) -> str:
    if value is None:
        return "—"
    return f"{float(value):.{int(digits)}f}"


@register.filter
def pval(value) -> str:
    if value is None:
        return "—"
    value = float(value)
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


@register.filter
def signed_pp(value) -> str:
    if value is None:
        return "—"
    return f"{float(value):+.1f} pp"


@register.filter
def outcome_label(value) -> str:
    """A label outcome as people read it: strategy codes joined by "+" become their names joined by
    " + " ("none" for the empty set), other codes lose their underscores."""
    from annotation.kinds.strategy import STRATEGY_DEFINITIONS

    text = str(value)
    if text in ("", "none"):
        return "no strategy"
    parts = text.split("+")
    if all(p in STRATEGY_DEFINITIONS for p in parts):
        return " + ".join(STRATEGY_DEFINITIONS[p][0] for p in parts)
    return text.replace("_", " ")


@register.filter
def spaced(value) -> str:
    """A stored code as words: its underscores as spaces ("screened_out" → "screened out")."""
    return str(value).replace("_", " ")

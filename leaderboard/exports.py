"""The one LaTeX writer of every protocol's leaderboard export (Ekphrasis snapshots, EASEL boards, C² runs):
escaping and the booktabs table shape, so that the three exporters differ only in their columns and rows.
CSV cells are :mod:`leaderboard.csv_cells`."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["latex_row", "latex_table", "tex_escape"]

#: LaTeX's special characters in running text (backslash first, so later escapes are not doubled).
_TEX_ESCAPES = (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"))


def tex_escape(text: str) -> str:
    for a, b in _TEX_ESCAPES:
        text = text.replace(a, b)
    return text


def latex_row(cells: Sequence[str]) -> str:
    return " & ".join(cells) + r" \\"


def latex_table(*, columns: str, head: Sequence[str], body: Sequence[str], caption: str) -> list[str]:
    """A floated booktabs table: ``columns`` is the tabular spec (``lcc``), ``head`` and ``body`` are finished
    lines (rows from :func:`latex_row`, or ``\\midrule``), ``caption`` is LaTeX (escape its text first)."""
    return [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{" + columns + "}", r"\toprule", *head,
            r"\midrule", *body, r"\bottomrule", r"\end{tabular}", r"\caption{" + caption + "}", r"\end{table}"]

"""The one LaTeX writer of every protocol's leaderboard export (Ekphrasis snapshots, EASEL boards, C² runs):
escaping and the booktabs table shape, so that the three exporters differ only in their columns and rows.
CSV cells are :mod:`engine.csv_cells`."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["latex_row", "latex_table", "tex_escape"]

#: LaTeX's ten special characters in running text and what prints each (LaTeX manual, "Reserved
#: characters"); replaced in one pass, so the braces of ``\textbackslash{}`` are not escaped again.
_TEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_TEX_SPECIAL = re.compile("|".join(re.escape(c) for c in _TEX_ESCAPES))


def tex_escape(text: str) -> str:
    """``text`` as LaTeX that prints it: every reserved character escaped (a ``%`` would comment out the
    rest of its line, an ``&`` would start a new table cell)."""
    return _TEX_SPECIAL.sub(lambda m: _TEX_ESCAPES[m.group(0)], text)


def latex_row(cells: Sequence[str]) -> str:
    return " & ".join(cells) + r" \\"


def latex_table(*, columns: str, head: Sequence[str], body: Sequence[str], caption: str) -> list[str]:
    """A floated booktabs table: ``columns`` is the tabular spec (``lcc``), ``head`` and ``body`` are finished
    lines (rows from :func:`latex_row`, or ``\\midrule``), ``caption`` is LaTeX (escape its text first)."""
    return [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{" + columns + "}", r"\toprule", *head,
            r"\midrule", *body, r"\bottomrule", r"\end{tabular}", r"\caption{" + caption + "}", r"\end{table}"]

"""The one LaTeX writer of every protocol's leaderboard export (Ekphrasis snapshots, EASEL boards, C² runs):
escaping and the booktabs table shape, so that the three exporters differ only in their columns and rows.
CSV cells are :mod:`engine.csv_cells`."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["TYPESET_NON_ASCII", "latex_row", "latex_table", "tex_escape"]

#: LaTeX's ten special characters in running text and what prints each (LaTeX manual, "Reserved
#: characters"), and the three that the default OT1 encoding prints as other glyphs (``<`` as ¡, ``>`` as
#: ¿, ``|`` as an em dash; LaTeX Companion, "Font encodings"); replaced in one pass, so the braces of
#: ``\textbackslash{}`` are not escaped again.
_TEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}

#: The characters beyond ASCII that pdflatex typesets in the exports' documents (article class, LaTeX's
#: default utf8 input and OT1/TS1 fonts): each compiled alone by pdflatex (TeX Live 2022) on 2026-12-05,
#: U+00A0–U+017F and U+2010–U+2044 tried. Any other character stops the compile ("Unicode character … not
#: set up for use with LaTeX", "invalid character"), so :func:`tex_escape` prints its code point instead.
TYPESET_NON_ASCII = frozenset(
    "\u00a0¡¢£¤¥¦§¨©ª¬\u00ad®¯°±²³´µ¶·¸¹º¼½¾¿ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖ×ØÙÚÛÜÝßàáâãäåæçèéêëìíîïñòóôõö÷øùúûüýÿ"
    "ĀāĂăĆćĈĉĊċČčĎďĒēĔĕĖėĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭİıĲĳĴĵĶķĹĺĻļĽľŁłŃńŅņŇňŌōŎŏŐőŒœŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŴŵŶŷŸŹźŻżŽž"
    "‐‑‒–—―‖‘’“”†‡•…‰‱※‽⁄€™←→↑↓"
)
_LEADING_BRACKET = re.compile(r"^( *)\[")
_TEX_SPECIAL = re.compile("|".join(re.escape(c) for c in _TEX_ESCAPES) + r"|[^\x20-\x7e]")


def _tex_char(char: str) -> str:
    if char in _TEX_ESCAPES:
        return _TEX_ESCAPES[char]
    if char in TYPESET_NON_ASCII:
        return char
    if char.isspace():
        return " "  # a line break, tab or form feed: a blank line would end the paragraph (\par) in a cell
    # an emoji, CJK, a control or an invisible character (U+200B, U+202E): its code point, visibly
    return r"\texttt{U+" + f"{ord(char):04X}" + "}"


def tex_escape(text: str) -> str:
    """``text`` as LaTeX that prints it and always compiles: every reserved character escaped (a ``%``
    would comment out the rest of its line, an ``&`` would start a new table cell), a character pdflatex
    cannot typeset shown as its code point, and a leading ``[`` (after spaces too) braced (after ``\\\\``, ``\\toprule`` or
    ``\\midrule`` it would be read as their optional argument: "Illegal unit of measure")."""
    escaped = _TEX_SPECIAL.sub(lambda m: _tex_char(m.group(0)), text)
    return _LEADING_BRACKET.sub(r"\1{[}", escaped, count=1)


def latex_row(cells: Sequence[str]) -> str:
    return " & ".join(cells) + r" \\"


def latex_table(*, columns: str, head: Sequence[str], body: Sequence[str], caption: str) -> list[str]:
    """A floated booktabs table: ``columns`` is the tabular spec (``lcc``), ``head`` and ``body`` are finished
    lines (rows from :func:`latex_row`, or ``\\midrule``), ``caption`` is LaTeX (escape its text first)."""
    return [r"\begin{table}[t]", r"\centering", r"\small", r"\begin{tabular}{" + columns + "}", r"\toprule", *head,
            r"\midrule", *body, r"\bottomrule", r"\end{tabular}", r"\caption{" + caption + "}", r"\end{table}"]

"""Physical lines of a file read from outside: one rule for every reader that names a line (the catalogue's
import contract, the strict JSON reader's positions, the C² dataset parsers).

A line ends in LF or CRLF (the CR is left to the reader, which strips it as whitespace), or, in a file
without a single LF, in CR alone: what a classic Mac editor or spreadsheet saves ("CSV (Macintosh)"). Read
by LF, such a file was one line: a JSONL file was refused as "Extra data" at line 1, and every error of a
one-document JSON file was named at line 1. Nothing else ends a line: ``str.splitlines`` also splits at
U+2028, U+0085 and the like, which JSON allows raw inside a string.

Each function takes text or bytes alike.
"""

from __future__ import annotations

from typing import AnyStr

__all__ = ["line_and_column", "line_at", "line_break", "physical_lines"]


def line_break(data: AnyStr) -> AnyStr:
    """What ends a line of ``data``: LF (also in CRLF) if it holds one, else CR."""
    if isinstance(data, bytes):
        return b"\n" if b"\n" in data or b"\r" not in data else b"\r"
    return "\n" if "\n" in data or "\r" not in data else "\r"


def physical_lines(data: AnyStr) -> list[AnyStr]:
    """``data`` cut at its line breaks (line ``n`` is item ``n − 1``; a CRLF line keeps its CR)."""
    return data.split(line_break(data))


def line_at(data: AnyStr, offset: int) -> int:
    """The 1-based line of ``data`` holding the character (or byte) at ``offset``."""
    return data.count(line_break(data), 0, offset) + 1


def line_and_column(data: AnyStr, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in ``data``."""
    brk = line_break(data)
    return data.count(brk, 0, offset) + 1, offset - data.rfind(brk, 0, offset)

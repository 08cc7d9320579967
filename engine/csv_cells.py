"""CSV cells that a spreadsheet cannot run: the one CSV writer of the site, and its inverse for the importers.

A spreadsheet treats a cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return as
a formula (CSV injection): an annotator's flag note ``=HYPERLINK(...)`` would run in the researcher's
spreadsheet. OWASP's rule (CSV Injection cheat sheet) is to prefix such a cell with a single quote; ASVS 5.0
(1.2.10) adds the NUL character. The same trigger after leading blanks is quoted too (`` =1+1``,
``\u00a0@SUM(…)``, ``\ufeff-2+3``): LibreOffice's "Trim spaces" CSV import option drops them and runs
the rest, and so may any importer that strips a cell. *Blanks* are the whitespace of :data:`LEADING_BLANKS` (spaces, line breaks, no-break and
ideographic spaces, a zero-width space, a BOM).

So that export → import → export stays identical, the mapping is made a bijection on strings:

* written: a string cell of any number of quotes, then any blanks, then a trigger gets one more leading
  quote; every other string is written as it is;
* read: a cell of one or more quotes, then any blanks, then a trigger loses exactly one leading quote;
  every other cell is read as it is.

A value that really begins with quotes and a trigger (``'=x``) is therefore written ``''=x`` and read back
as ``'=x``. Numbers (Python ``int``/``float``, never strings) are written unquoted: a number such as
``-0.42`` is not a formula, and quoting it would make every negative z-score text in a spreadsheet.
JSONL exports keep the raw text (they are not opened by spreadsheets).

Booleans have one spelling in every CSV of the site, JSON's ``true``/``false`` (Python's ``True`` would
otherwise leak from one exporter and not another).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["FORMULA_TRIGGERS", "LEADING_BLANKS", "cell_neutralised", "cell_restored", "csv_text"]

#: The first characters a spreadsheet reads as the start of a formula (OWASP CSV Injection).
FORMULA_TRIGGERS = "=+-@\t\r\x00"
#: What a spreadsheet may drop before a trigger (Unicode's White_Space, the zero-width space and the BOM).
LEADING_BLANKS = r" \t\n\r\f\v\u0085\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff"
# static/js/figure_downloads.js uses the same pattern (tests/engine/test_csv_cells.py compares them)
_NEEDS_QUOTE = re.compile(rf"'*[{LEADING_BLANKS}]*[=+\-@\t\r\x00]")
_QUOTED = re.compile(rf"'+[{LEADING_BLANKS}]*[=+\-@\t\r\x00]")


def cell_neutralised(value: Any) -> Any:
    """The value as it is written to a CSV cell: strings that a spreadsheet would run get a leading quote;
    a boolean is ``true`` or ``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and _NEEDS_QUOTE.match(value):
        return "'" + value
    return value


def cell_restored(cell: str) -> str:
    """The inverse of :func:`cell_neutralised` for a cell read from a CSV file."""
    if _QUOTED.match(cell):
        return cell[1:]
    return cell


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A whole CSV document with every cell neutralised; ``None`` is an empty cell.

    Records end in CRLF (RFC 4180): the csv module quotes a cell holding any character of the line
    terminator, so a carriage return inside a cell is quoted and reads back intact.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([cell_neutralised(name) for name in header])
    for row in rows:
        writer.writerow([cell_neutralised(value) for value in row])
    return buffer.getvalue()

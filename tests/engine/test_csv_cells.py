"""CSV cells a spreadsheet cannot run (OWASP CSV injection), and their exact inverse on import."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from engine.csv_cells import FORMULA_TRIGGERS, cell_neutralised, cell_restored, csv_text


@pytest.mark.parametrize("trigger", list(FORMULA_TRIGGERS))
def test_a_cell_beginning_with_a_formula_trigger_gets_one_leading_quote(trigger):
    assert cell_neutralised(f"{trigger}HYPERLINK(\"http://x\")") == f"'{trigger}HYPERLINK(\"http://x\")"


@pytest.mark.parametrize("text", ["plain", "'quoted but harmless", "", "a=b", "  leading spaces, no trigger", "x =1"])
def test_a_cell_without_a_leading_trigger_is_written_as_it_is(text):
    assert cell_neutralised(text) == text


@pytest.mark.parametrize(
    "text", ["=1+1", "+1", "-x", "@SUM(A1)", "\tx", "\rx", "'=already quoted", "''-two quotes", "'plain", "plain", ""]
)
def test_restoring_a_neutralised_cell_gives_back_the_original(text):
    assert cell_restored(cell_neutralised(text)) == text


#: A trigger after blanks: LibreOffice's "Trim spaces" import option and Google Sheets drop the blanks (a
#: no-break space, a BOM or a zero-width space from a copied name included) and then run the formula.
BLANK_THEN_TRIGGER = [" =HYPERLINK(\"http://x\")", "   @SUM(1+1)", "\n=1+1", "\u00a0+1", "\ufeff-2+3", "\u200b=1", "\u3000=1",
                      "\x00=1+1"]


@pytest.mark.parametrize("text", BLANK_THEN_TRIGGER)
def test_a_trigger_after_leading_blanks_or_a_nul_gets_one_leading_quote(text):
    assert cell_neutralised(text) == "'" + text


@pytest.mark.parametrize("text", BLANK_THEN_TRIGGER + ["' =x", "'' @x", " '=x"])
def test_restoring_a_cell_with_blanks_before_its_trigger_gives_back_the_original(text):
    assert cell_restored(cell_neutralised(text)) == text


def test_the_chart_downloads_script_quotes_the_same_cells_as_the_writer():
    # static/js/figure_downloads.js writes each chart's data CSV in the browser: its pattern is this one's
    script = (Path(__file__).resolve().parents[2] / "static/js/figure_downloads.js").read_text(encoding="utf-8")
    from engine.csv_cells import _NEEDS_QUOTE
    assert f"/^{_NEEDS_QUOTE.pattern}/.test(s)" in script


def test_numbers_are_written_unquoted():
    assert cell_neutralised(-0.42) == -0.42 and cell_neutralised(-3) == -3


def test_the_writer_neutralises_every_cell_and_the_csv_module_reads_them_back():
    text = csv_text(["name", "note"], [["=cmd|' /C calc'!A0", "\r\n=SUM(1)"], [None, -1.5]])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1] == ["'=cmd|' /C calc'!A0", "'\r\n=SUM(1)"]
    assert rows[2] == ["", "-1.5"]


def test_no_module_of_the_site_writes_csv_but_the_one_writer():
    root = Path(__file__).resolve().parents[2]
    writers = re.compile(r"csv\.(writer|DictWriter)\(")
    found = [
        str(path.relative_to(root))
        for package in ("annotation", "engine", "evalsite", "leaderboard")
        for path in (root / package).rglob("*.py")
        if writers.search(path.read_text(encoding="utf-8"))
    ]
    assert found == ["engine/csv_cells.py"]


def test_a_boolean_is_written_true_or_false_in_every_csv():
    rows = list(csv.reader(io.StringIO(csv_text(["simulated", "demo"], [[True, False]]))))
    assert rows[1] == ["true", "false"]

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


@pytest.mark.parametrize("text", ["plain", "'quoted but harmless", "", "a=b", " =leading space"])
def test_a_cell_without_a_leading_trigger_is_written_as_it_is(text):
    assert cell_neutralised(text) == text


@pytest.mark.parametrize(
    "text", ["=1+1", "+1", "-x", "@SUM(A1)", "\tx", "\rx", "'=already quoted", "''-two quotes", "'plain", "plain", ""]
)
def test_restoring_a_neutralised_cell_gives_back_the_original(text):
    assert cell_restored(cell_neutralised(text)) == text


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

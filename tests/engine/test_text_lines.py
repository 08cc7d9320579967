"""One rule for where a line of an imported file ends (engine/text_lines.py)."""

from __future__ import annotations

import pytest

from engine.text_lines import line_and_column, line_at, physical_lines


@pytest.mark.parametrize("data", ["a\nb\nc", "a\r\nb\r\nc", "a\rb\rc", b"a\rb\rc", b"a\r\nb\nc"])
def test_lf_crlf_and_cr_only_files_have_the_same_lines(data):
    lines = [line.rstrip("\r" if isinstance(line, str) else b"\r") for line in physical_lines(data)]
    assert lines == (["a", "b", "c"] if isinstance(data, str) else [b"a", b"b", b"c"])
    assert line_at(data, len(data) - 1) == 3


def test_a_lone_cr_in_a_file_with_lf_is_not_a_line_break_nor_is_a_unicode_separator():
    assert physical_lines("a\rb\nc\u2028d") == ["a\rb", "c\u2028d"]


def test_line_and_column_count_from_the_files_own_line_breaks():
    assert line_and_column("ab\rcd\ref", 7) == (3, 2)
    assert line_and_column("ab\ncd", 1) == (1, 2)

"""leaderboard/management/progress_bar.py: a line per few percent off a terminal, tqdm on one."""

from __future__ import annotations

import io

from tqdm import tqdm

from leaderboard.management.progress_bar import LOG_STEP_PERCENT, LOG_STEP_UNITS, LogLineBar, progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_off_a_terminal_the_bar_writes_a_line_per_few_percent_and_no_carriage_return():
    out = io.StringIO()
    with progress_bar(total=1000, unit="call", desc="run 1", file=out) as bar:
        for _ in range(1000):
            bar.update(1)
    text = out.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) == 100 // LOG_STEP_PERCENT + 1  # 0 %, every step up to 100 %
    assert "1000/1000" in lines[-1] and "run 1" in lines[-1]


def test_without_a_total_the_bar_writes_a_line_per_hundred_units():
    out = io.StringIO()
    bar = progress_bar(unit="call", desc="demo", file=out)
    bar.update(3 * LOG_STEP_UNITS + 7)
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and lines[-1].startswith("demo: ") and str(3 * LOG_STEP_UNITS + 7) in lines[-1]


def test_on_a_terminal_it_is_the_ordinary_tqdm_bar():
    bar = progress_bar(total=10, file=Terminal())
    assert type(bar) is tqdm and not isinstance(bar, LogLineBar)
    bar.close()

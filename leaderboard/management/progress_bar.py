"""The one progress bar of every management command: tqdm on a terminal; on anything else (a log
file, CI, ``make demo > log``) a plain line each few percent instead of a carriage-return flood."""

from __future__ import annotations

import sys
from typing import IO, Any

from tqdm import tqdm

__all__ = ["LOG_STEP_PERCENT", "LOG_STEP_UNITS", "LogLineBar", "progress_bar"]

#: Off a terminal, a line each time the bar passes another 5 % of its total ...
LOG_STEP_PERCENT = 5
#: ... or, with no known total, another 100 units.
LOG_STEP_UNITS = 100


class LogLineBar(tqdm):
    """A tqdm bar that writes whole lines: one per ``LOG_STEP_PERCENT`` of the total (one per
    ``LOG_STEP_UNITS`` when the total is unknown), and a last line when it closes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._last_step: int | None = None
        kwargs.setdefault("ascii", True)
        kwargs.setdefault("dynamic_ncols", False)
        kwargs.setdefault("ncols", 100)
        kwargs.setdefault("mininterval", 0)
        kwargs.setdefault("miniters", 1)
        super().__init__(*args, **kwargs)

    def _step(self) -> int:
        if self.total:
            return int(100 * self.n / self.total) // LOG_STEP_PERCENT
        return int(self.n) // LOG_STEP_UNITS

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        if self.disable or not hasattr(self, "_last_step"):
            return True
        step = self._step()
        if step == self._last_step:
            return True
        self._last_step = step
        self.fp.write((msg if msg is not None else self.__str__()) + "\n")
        self.fp.flush()
        return True

    def close(self) -> None:
        if self.disable:
            return
        if self._last_step != self._step() or not self.total:
            self._last_step = None  # the closing line is always written
        # tqdm's own close would clear or redraw the line with a carriage return: write the last line only.
        self.display()
        self.disable = True
        with self._lock:
            try:
                self._instances.remove(self)
            except KeyError:
                pass


def progress_bar(*, file: IO[str] | None = None, **kwargs: Any) -> tqdm:
    """A tqdm bar for a command (same arguments as tqdm): interactive on a terminal, a line each
    few percent elsewhere."""
    stream = file if file is not None else sys.stderr
    is_terminal = bool(getattr(stream, "isatty", lambda: False)())
    if is_terminal:
        return tqdm(file=stream, **kwargs)
    kwargs.pop("dynamic_ncols", None)
    return LogLineBar(file=stream, **kwargs)

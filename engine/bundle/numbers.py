"""Number by number: a stored board against the board recomputed from a bundle's records.

Both are JSON values. Every leaf (number, string, boolean, null) is compared at its path, e.g.
``per_dimension.U.winrate[gpt-x]``; a list indexed by model is labelled by the model's name when the
caller says which keys are indexed so. Numbers compare exactly (the recomputation runs the same code
on the same inputs, so the same floats come out); a reviewer on another machine whose BLAS sums in
another order sees last-digit differences named as such (``relative`` in each check).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["NumberCheck", "compare", "compare_rows", "leaves"]


@dataclass(frozen=True)
class NumberCheck:
    """One compared value: where it is, what the bundle stored, what the recomputation gave."""

    path: str
    stored: Any
    recomputed: Any

    @property
    def identical(self) -> bool:
        return _same(self.stored, self.recomputed)

    @property
    def relative(self) -> float | None:
        """|stored − recomputed| / max(|stored|, |recomputed|) for two numbers, else None."""
        a, b = self.stored, self.recomputed
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
            scale = max(abs(a), abs(b))
            return 0.0 if scale == 0 else abs(a - b) / scale
        return None

    def describe(self, *, recomputed_as: str = "recomputed", max_chars: int | None = None) -> str:
        """``path: stored X, recomputed Y``; ``recomputed_as`` names the other side (the viewer's check says
        "rebuilt"), and ``max_chars`` cuts each value's JSON, so that a long text cannot fill a report."""
        return (f"{self.path}: stored {_show(self.stored, max_chars)}, "
                f"{recomputed_as} {_show(self.recomputed, max_chars)}")


def _show(value: Any, max_chars: int | None = None) -> str:
    text = "(absent)" if value is _ABSENT else json.dumps(value)
    return text if max_chars is None or len(text) <= max_chars else text[:max_chars] + "…"


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _same(a: Any, b: Any) -> bool:
    if a is _ABSENT or b is _ABSENT or isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


Labeller = Callable[[tuple[str, ...], int], str]


def leaves(value: Any, label: Labeller | None = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, leaf) pairs of a JSON value; list items are named ``[i]`` or ``[label(path, i)]``."""
    if isinstance(value, dict):
        if not value:
            yield path, {}
        for key in sorted(value, key=str):
            yield from leaves(value[key], label, (*path, str(key)))
    elif isinstance(value, (list, tuple)):
        if not value:
            yield path, []
        for i, item in enumerate(value):
            name = label(path, i) if label is not None else str(i)
            yield from leaves(item, label, (*path, f"[{name}]"))
    else:
        yield path, value


def _path_text(path: Sequence[str]) -> str:
    text = ""
    for part in path:
        text += part if part.startswith("[") else (("." if text else "") + part)
    return text or "(board)"


def compare(stored: Any, recomputed: Any, *, label: Labeller | None = None, prefix: str = "") -> list[NumberCheck]:
    """Every leaf of either value, stored beside recomputed (a leaf present on one side only is a difference).
    Both sides are normalised through JSON first (tuples become lists, numpy scalars plain numbers)."""
    stored = json.loads(json.dumps(stored, default=float))
    recomputed = json.loads(json.dumps(recomputed, default=float))
    left = dict(leaves(stored, label))
    right = dict(leaves(recomputed, label))
    out = []
    for path in sorted(set(left) | set(right), key=lambda p: _path_text(p)):
        name = _path_text(path)
        out.append(NumberCheck(f"{prefix}{name}" if prefix else name, left.get(path, _ABSENT), right.get(path, _ABSENT)))
    return out


def compare_rows(stored: Sequence[dict], recomputed: Sequence[dict], key: Sequence[str], *, prefix: str) -> list[NumberCheck]:
    """Two lists of records compared record by record, each named by its ``key`` fields
    (``records.per_instance[t3 U gpt-x].wins``): a record on one side only is a difference."""
    def keyed(rows: Sequence[dict]) -> tuple[dict[str, dict], dict[str, int]]:
        out: dict[str, dict] = {}
        copies: dict[str, int] = {}
        for row in rows:
            name = "[" + " ".join(str(row.get(k)) for k in key) + "]"
            copies[name] = copies.get(name, 0) + 1
            out.setdefault(name, {f: v for f, v in row.items() if f not in key})
        return out, copies

    left, left_copies = keyed(stored)
    right, right_copies = keyed(recomputed)
    # a key held twice would otherwise collapse to one record (the first kept), so a forged copy beside
    # the true one passed: where either side holds a key more than once, the count is compared too
    for name in {n for n, c in (*left_copies.items(), *right_copies.items()) if c > 1}:
        for side, copies in ((left, left_copies), (right, right_copies)):
            if name in side:
                side[name] = {**side[name], "copies": copies[name]}
    return compare(left, right, label=None, prefix=prefix)

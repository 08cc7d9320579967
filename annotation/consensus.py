"""Consensus primitives shared by the annotation reads: the memoised strict majority and a number that
knows why it is missing (used by the dashboards and the human–judge join)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine import agreement

__all__ = ["Stat", "majority"]


@lru_cache(maxsize=4096)
def _majority_of(sorted_labels: tuple[str, ...]) -> str | None:
    return agreement.majority_label(list(sorted_labels))


def majority(labels: Iterable[str]) -> str | None:
    """engine.agreement.majority_label, memoised on the multiset of labels (the dashboards ask the
    same few questions thousands of times: three labels out of three or four categories)."""
    return _majority_of(tuple(sorted(labels)))


@dataclass
class Stat:
    """A number, or why there is none."""

    value: float | None
    note: str = ""

    @classmethod
    def of(cls, compute: Callable[[], float]) -> Stat:
        try:
            value = float(compute())
        except (ValueError, ZeroDivisionError, np.linalg.LinAlgError) as exc:
            return cls(None, str(exc))
        if not np.isfinite(value):
            return cls(None, "undefined for these labels")
        return cls(value)

"""Sorted distinct values of small integer arrays, with an inverse or counts: what ``np.unique`` returns for a
1-D array, without its general machinery.

A Typed Idea Graph context calls ``np.unique`` a handful of times on arrays of a few hundred codes, where
numpy's wrapper (argument checks, masked-array and hash-table paths) costs more than the sort itself. These
helpers do the sort ``np.unique`` does (an argsort when an inverse is asked for) and return the same values,
dtypes and indices; ``tests/engine/tig/test_distinct.py`` compares them with ``np.unique``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["distinct", "distinct_counts", "distinct_inverse", "run_lengths", "run_starts"]


def run_starts(ordered: np.ndarray) -> np.ndarray:
    """True where a sorted array's run of equal values begins."""
    first = np.empty(len(ordered), dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return first


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-D array (``np.unique(values)``)."""
    ordered = np.sort(values)
    return ordered[run_starts(ordered)]


def distinct_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of a 1-D array and the index of every element's value among them
    (``np.unique(values, return_inverse=True)``)."""
    order = values.argsort()
    ordered = values[order]
    first = run_starts(ordered)
    inverse = np.empty(len(values), dtype=np.intp)
    inverse[order] = first.astype(np.intp).cumsum() - 1
    return ordered[first], inverse


def distinct_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of a 1-D array and how often each occurs
    (``np.unique(values, return_counts=True)``)."""
    ordered = np.sort(values)
    first = run_starts(ordered)
    return ordered[first], run_lengths(first)


def run_lengths(first: np.ndarray) -> np.ndarray:
    """The length of every run of a sorted array, from :func:`run_starts`' mask of where runs begin:
    ``np.diff(np.append(first.nonzero()[0], len(first)))``, with two subtractions of whole numbers instead
    of numpy's Python-level ``append`` and ``diff``."""
    starts = first.nonzero()[0]
    lengths = np.empty(len(starts), dtype=starts.dtype)
    if len(starts):
        np.subtract(starts[1:], starts[:-1], out=lengths[:-1])
        lengths[-1] = len(first) - starts[-1]
    return lengths

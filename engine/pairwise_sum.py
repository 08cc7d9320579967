"""numpy's pairwise summation of float64 runs, compiled, to the bit (``pairwise_sum`` in
``numpy/_core/src/umath/loops_utils.h.src``): what a kernel adds where the numpy form it replaces called
``.sum()``, so that its results keep their bits. numpy's add reduction of a contiguous run starts from 0.0
(add's identity) and adds the run's pairwise sum to it: up to 8 terms one by one, up to 128 in eight running
sums, above that the two halves (the first a multiple of 8) apart. Used by the Bradley–Terry fit's kernels
(:mod:`engine.bt_kernel`), the active planner's and the Novelty graph's weighted degrees.
"""

from __future__ import annotations

import numpy as np

from engine.compiled import compiled_kernel

__all__ = ["pairwise_sum", "pairwise_run", "row_sums"]

#: numpy's pairwise summation: unrolled by 8 up to this many terms, halved above (PW_BLOCKSIZE)
_PAIRWISE_BLOCK = 128


@compiled_kernel()
def _block_sum(a, lo, n):
    """``a[lo:lo + n]``, ``n <= 128``, summed as numpy's ``pairwise_sum`` adds a contiguous float64 run of
    that length: below 8 terms one by one from 0.0; else in eight running sums (term i into sum i mod 8),
    joined as ``((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))``, then the remainder one by one."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = lo + 8
    end = lo + n - n % 8
    while i < end:
        r0 += a[i]
        r1 += a[i + 1]
        r2 += a[i + 2]
        r3 += a[i + 3]
        r4 += a[i + 4]
        r5 += a[i + 5]
        r6 += a[i + 6]
        r7 += a[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < lo + n:
        res += a[i]
        i += 1
    return res


@compiled_kernel()
def pairwise_run(a, lo, n):
    """``a[lo:lo + n]`` summed as numpy's ``pairwise_sum`` (``numpy/_core/src/umath/loops_utils.h.src``):
    up to 128 terms :func:`_block_sum`; above, the two halves (the first a multiple of 8) summed apart and
    added, first + second. numpy recurses; here the same tree is walked with a stack (a recursive kernel
    read back from numba's disk cache crashes), left half first, each half's sum added to its sibling's as
    the recursion returns them."""
    if n <= _PAIRWISE_BLOCK:
        return _block_sum(a, lo, n)
    seg_lo = np.empty(64, dtype=np.int64)
    seg_n = np.empty(64, dtype=np.int64)
    left_done = np.zeros(64, dtype=np.bool_)
    left = np.empty(64)
    depth = 0
    seg_lo[0] = lo
    seg_n[0] = n
    while True:
        m = seg_n[depth]
        if m > _PAIRWISE_BLOCK:  # descend into the first half
            half = m // 2
            half -= half % 8
            left_done[depth] = False
            depth += 1
            seg_lo[depth] = seg_lo[depth - 1]
            seg_n[depth] = half
            continue
        value = _block_sum(a, seg_lo[depth], m)
        while True:  # return the value up: a first half waits for its sibling, a second half completes its parent
            depth -= 1
            if depth < 0:
                return value
            if not left_done[depth]:
                left[depth] = value
                left_done[depth] = True
                half = seg_n[depth] // 2
                half -= half % 8
                seg_lo[depth + 1] = seg_lo[depth] + half
                seg_n[depth + 1] = seg_n[depth] - half
                depth += 1
                break
            value = left[depth] + value


@compiled_kernel()
def row_sums(matrix):
    """``matrix.sum(axis=1)`` of a row-major float64 matrix, bit for bit: numpy's add reduction starts each
    row from 0.0 (add's identity) and adds the row's pairwise sum to it (:func:`pairwise_run`)."""
    out = np.empty(matrix.shape[0])
    for r in range(matrix.shape[0]):
        out[r] = 0.0 + pairwise_run(matrix[r], 0, matrix.shape[1])
    return out


@compiled_kernel()
def pairwise_sum(row):
    """``row.sum()`` of a contiguous float64 array, bit for bit: 0.0 + its pairwise sum (:func:`pairwise_run`)."""
    return 0.0 + pairwise_run(row, 0, row.size)

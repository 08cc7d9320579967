"""engine.pairwise_sum against numpy's own sums, bit for bit: the kernels of the Bradley–Terry fit, the active
planner and the Novelty graph add with it where the numpy forms they replaced called ``.sum()``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from engine.pairwise_sum import pairwise_sum, row_sums


def bits(array) -> tuple:
    array = np.asarray(array)
    return array.dtype.str, array.shape, array.tobytes()


def test_pairwise_sum_adds_as_numpy_does():
    rng = np.random.default_rng(11)
    for length in [*range(0, 40), 127, 128, 129, 196, 200, 300, 1000]:
        for _ in range(5):
            row = rng.random(length) * 10.0 ** rng.uniform(-6, 6, length)
            assert bits(pairwise_sum(row)) == bits(row.sum())


def test_pairwise_sum_of_negative_zeros_is_numpys_positive_zero():
    assert bits(pairwise_sum(np.full(5, -0.0))) == bits(np.full(5, -0.0).sum())
    assert bits(pairwise_sum(np.full(300, -0.0))) == bits(np.full(300, -0.0).sum())


def test_row_sums_are_numpys_pairwise_row_sums_bit_for_bit():
    """row_sums (the Novelty graph's weighted degrees) is matrix.sum(axis=1) to the bit, on rows of every length
    through the unrolled block (8..128) and the halving above it, with terms of many magnitudes and signs --
    where another order of additions (from the row's first term, say) gives other bits."""
    rng = np.random.default_rng(5)
    for n in [*range(0, 40), 100, 122, 127, 128, 129, 200, 255, 256, 257, 300, 1000]:
        matrix = rng.standard_normal((6, n)) * 10.0 ** rng.integers(-8, 8, (6, n))
        assert bits(row_sums(matrix)) == bits(matrix.sum(axis=1))


def test_sums_read_back_from_numbas_disk_cache_in_a_new_process():
    """Runs above 128 terms (the halving) in two fresh processes, the second loading the kernels from numba's
    disk cache: a recursive kernel read back from the cache crashed the process."""
    code = ("import numpy as np; from engine.pairwise_sum import pairwise_sum, row_sums; "
            "m = np.arange(3 * 1000, dtype=float).reshape(3, 1000) / 7; "
            "assert row_sums(m).tobytes() == m.sum(axis=1).tobytes(); "
            "assert pairwise_sum(m[1]) == m[1].sum(); print('ok')")
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]

"""engine/compiled.py: kernels compile with numba's disk cache where there is one, and without it where
numba finds no writable cache folder (a read-only deployment still imports and runs the engine)."""

import numba.core.caching
import numpy as np

from engine.compiled import compiled_kernel


def _sum_of_squares(values):
    total = 0.0
    for v in values:
        total += v * v
    return total


def test_a_kernel_compiles_with_the_disk_cache_where_numba_has_one():
    kernel = compiled_kernel()(_sum_of_squares)
    assert kernel(np.arange(4.0)) == 14.0
    assert kernel._cache.__class__.__name__ == "FunctionCache"


def test_a_kernel_compiles_without_the_disk_cache_where_numba_has_no_writable_folder(monkeypatch):
    monkeypatch.setattr(numba.core.caching.CacheImpl, "_locator_classes", [])  # numba: "no locator available"
    kernel = compiled_kernel()(_sum_of_squares)
    assert kernel(np.arange(4.0)) == 14.0
    assert kernel._cache.__class__.__name__ == "NullCache"

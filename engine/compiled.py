"""The decorator of the engine's compiled (numba) kernels: compiled once and cached on disk where numba
finds a writable cache, else compiled in each process.

numba's ``cache=True`` raises at import when neither the module's ``__pycache__`` nor the user's cache
folder (``NUMBA_CACHE_DIR``) is writable — a read-only deployment would then fail to import the engine.
Here such a kernel is compiled without the disk cache instead (the same machine code, paid once per
process: a few seconds on the first stroke)."""

from __future__ import annotations

from collections.abc import Callable

import numba

__all__ = ["compiled_kernel"]


def compiled_kernel(**options) -> Callable[[Callable], Callable]:
    """``numba.njit(cache=True, **options)``, or without the disk cache where numba has none to write."""
    def decorate(function: Callable) -> Callable:
        try:
            return numba.njit(cache=True, **options)(function)
        except RuntimeError:  # "cannot cache function …: no locator available"
            return numba.njit(**options)(function)
    return decorate

"""Reproducible seeds derived from identities, not from call order.

A resumed or parallel run must make the same random choices as an
uninterrupted serial one, so every random draw is seeded from a hash of what
it is about (run seed, task, dimension, pair, …) rather than from a shared
generator whose state depends on what ran before.
"""

from __future__ import annotations

import hashlib

__all__ = ["derived_seed", "unit_interval"]


def derived_seed(*parts: object) -> int:
    """A 63-bit seed from the SHA-256 of the parts' reprs (stable across processes, unlike hash())."""
    digest = hashlib.sha256("\x1f".join(map(repr, parts)).encode("utf-8")).digest()  # map: no generator frame
    return int.from_bytes(digest[:8], "big") >> 1


def unit_interval(*parts: object) -> float:
    """A uniform number in [0, 1) determined by the parts (for sampled shares such as order swaps)."""
    return derived_seed(*parts) / float(1 << 63)

"""Compiled (numba) edge lists of a graph's same-type subgraphs, Leiden's input (Ekphrasis App. G.4).

:func:`engine.tig.clusters.same_type_labels` clusters each type's subgraph on its own: the type's edge list
is the upper triangle of its block of the weight matrix, read row-major, its non-zero entries kept -- in
numpy, the block, its triangle's slot pairs, a gather, ``nonzero`` and three more gathers, for each type of
each context. Here every type's list comes out of one loop: the same node pairs in the same order with the
same weights (copies of the float values; ``x != 0`` is numpy's ``nonzero`` test, NaN included), so Leiden,
its memo and everything after it see the same input (``tests/engine/tig/test_subgraph_kernel.py`` compares both
forms on every leave-two-out graph of several tasks).
"""

from __future__ import annotations

import numpy as np

from engine.compiled import compiled_kernel

__all__ = ["type_edge_lists"]


@compiled_kernel()
def type_edge_lists(weights, starts, stops):
    """The edge lists of the subgraphs of nodes ``starts[t]..stops[t]-1`` of a dense weight matrix:
    ``(u, v, w, bounds)`` -- type t's edges are ``bounds[t]:bounds[t + 1]``, as node pairs ``u < v``
    numbered from the type's first node, row-major, with their weights (the non-zero entries of the block's
    upper triangle: ``upper_pairs`` of the block)."""
    n_types = starts.shape[0]
    bounds = np.zeros(n_types + 1, dtype=np.int64)
    for t in range(n_types):
        count = 0
        for a in range(starts[t], stops[t]):
            for b in range(a + 1, stops[t]):
                if weights[a, b] != 0.0:
                    count += 1
        bounds[t + 1] = bounds[t] + count
    u = np.empty(bounds[n_types], dtype=np.int64)
    v = np.empty(bounds[n_types], dtype=np.int64)
    w = np.empty(bounds[n_types])
    e = 0
    for t in range(n_types):
        s = starts[t]
        for a in range(s, stops[t]):
            for b in range(a + 1, stops[t]):
                x = weights[a, b]
                if x != 0.0:
                    u[e] = a - s
                    v[e] = b - s
                    w[e] = x
                    e += 1
    return u, v, w, bounds

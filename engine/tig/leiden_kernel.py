"""Compiled (numba) bookkeeping of a hierarchical Leiden level (Ekphrasis App. G.4), around igraph's call.

:func:`engine.tig.clusters._leiden_level` settles a same-type subgraph's connected components apart: an
isolated node is a singleton, a two-node component is one community exactly when merging gains
(``2 m > gamma w``), and Leiden runs once on the rest (the components of three nodes or more), on their
induced subgraph in igraph's ``induced_subgraph`` edge order, with resolution ``gamma m' / m``. On Python
lists that bookkeeping -- union-find, component sizes, the merges, the rest and its renumbered, sorted edge
list, then the level's labels numbered densely -- cost more instructions than igraph's Leiden itself on
these graphs (tens of nodes). Here it is two passes of compiled code, one before igraph's call
(:func:`level_input`) and one after (:func:`level_labels`), with the same results bit for bit:

- the weight sums are numpy's pairwise summation (:func:`engine.pairwise_sum.pairwise_run`, ``0.0 +`` the
  run's pairwise sum, as ``w.sum()`` and ``w[mask].sum()`` add a contiguous float64 run), so igraph gets the
  same resolution to the bit;
- the merge test is the same IEEE comparison, ``2.0 * m > gamma * w`` (numba does not contract without
  fastmath);
- the components are the same node sets (any union-find finds the same components; each is named by its
  smallest node); the rest and its edges keep the node and edge order of the Python form; the sort by
  (larger end, smaller end) below half the nodes is a stable merge sort, as Python's ``list.sort`` is;
- the labels are numbered in order of each group's smallest node, as ``_dense`` numbers them.

``tests/engine/tig/test_leiden_kernel.py`` compares both forms on random graphs and on every same-type
subgraph of several tasks' leave-two-out populations, igraph's arguments included.
"""

from __future__ import annotations

import numpy as np

from engine.compiled import compiled_kernel
from engine.pairwise_sum import pairwise_run

__all__ = ["level_input", "level_labels"]


@compiled_kernel()
def level_input(n, us, vs, w, resolution):
    """A Leiden level's settled part and the rest's graph, for the edge list ``us < vs`` over ``0..n-1``
    with weights ``w`` (at least one edge).

    Returns ``(ints, floats)``: ``ints`` is ``[r, e, labels (n), rest (r), edges (2 e)]`` -- the labels with
    the two-node merges made (a node's own index otherwise), the rest's nodes ascending, and the rest's
    induced edge list renumbered ``0..r-1``, as (smaller, larger) pairs in igraph's ``induced_subgraph``
    order; ``floats`` is ``[m, m', weights (e)]`` -- the total weight, the rest's, and the rest's edge
    weights in that order."""
    n_edges = us.shape[0]
    total = 0.0 + pairwise_run(w, 0, n_edges)
    # connected components by union-find; each named by its smallest node (a root adopts the larger root)
    parent = np.arange(n)
    for e in range(n_edges):
        a = us[e]
        while parent[a] != a:
            a = parent[a]
        b = vs[e]
        while parent[b] != b:
            b = parent[b]
        if a < b:
            parent[b] = a
        elif b < a:
            parent[a] = b
    for x in range(n):  # in node order: a node's parent, smaller, already points at its root
        parent[x] = parent[parent[x]]
    sizes = np.zeros(n, dtype=np.int64)
    for x in range(n):
        sizes[parent[x]] += 1
    labels = np.arange(n)
    n_rest_edges = 0
    for e in range(n_edges):
        size = sizes[parent[us[e]]]
        if size == 2:  # a two-node component has exactly one edge; merging gains 2 (w - gamma w^2 / 2m)
            if 2.0 * total > resolution * w[e]:
                labels[vs[e]] = labels[us[e]]
        elif size >= 3:
            n_rest_edges += 1
    r = 0
    position = np.full(n, -1)
    for x in range(n):
        if sizes[parent[x]] >= 3:
            position[x] = r
            r += 1
    ints = np.empty(2 + n + r + 2 * n_rest_edges, dtype=np.int64)
    floats = np.empty(2 + n_rest_edges)
    ints[0] = r
    ints[1] = n_rest_edges
    ints[2:2 + n] = labels
    for x in range(n):
        if position[x] >= 0:
            ints[2 + n + position[x]] = x
    floats[0] = total
    if n_rest_edges == 0:
        floats[1] = 0.0
        return ints, floats
    # the rest's edges, renumbered, in edge order; weights summed as numpy sums w[in_rest] (all of it: w)
    su = np.empty(n_rest_edges, dtype=np.int64)
    sv = np.empty(n_rest_edges, dtype=np.int64)
    sw = np.empty(n_rest_edges)
    i = 0
    for e in range(n_edges):
        if sizes[parent[us[e]]] >= 3:
            su[i] = position[us[e]]
            sv[i] = position[vs[e]]
            sw[i] = w[e]
            i += 1
    floats[1] = total if n_rest_edges == n_edges else 0.0 + pairwise_run(sw, 0, n_rest_edges)
    base = 2 + n + r
    if r == n or r / n > 0.5:  # igraph copies the graph and deletes the others: the edges keep their order
        for i in range(n_rest_edges):
            ints[base + 2 * i] = su[i]
            ints[base + 2 * i + 1] = sv[i]
            floats[2 + i] = sw[i]
    else:  # igraph builds the subgraph from scratch: edges by (larger end, smaller end), stably
        order = np.argsort(sv * r + su, kind="mergesort")
        for i in range(n_rest_edges):
            j = order[i]
            ints[base + 2 * i] = su[j]
            ints[base + 2 * i + 1] = sv[j]
            floats[2 + i] = sw[j]
    return ints, floats


@compiled_kernel()
def level_labels(ints, membership):
    """The level's labels numbered ``0..k-1`` in order of each group's smallest node, from
    :func:`level_input`'s ``ints`` and Leiden's ``membership`` of the rest (rest node ``i`` labelled
    ``n + membership[i]``, after the settled labels ``0..n-1``). Returns ``[k, largest group's size,
    labels (n)]``."""
    r = ints[0]
    n = ints.shape[0] - 2 - r - 2 * ints[1]
    raw = ints[2:2 + n].copy()
    for i in range(r):
        raw[ints[2 + n + i]] = n + membership[i]
    number = np.full(2 * n, -1)
    out = np.empty(2 + n, dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    k = 0
    for x in range(n):
        label = raw[x]
        if number[label] < 0:
            number[label] = k
            k += 1
        out[2 + x] = number[label]
        counts[number[label]] += 1
    largest = 0
    for c in range(k):
        if counts[c] > largest:
            largest = counts[c]
    out[0] = k
    out[1] = largest
    return out

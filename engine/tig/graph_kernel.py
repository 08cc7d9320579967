"""Compiled (numba) kernels of :func:`engine.tig.graph.build_graph`'s bookkeeping (App. G.3).

A context's graph has ~100-200 nodes, ~36 responses and a few hundred mentions and relations; the numpy
form of its incidence, co-occurring pairs, similarity entries, typed-relation counts and weight assembly is
some sixty array calls on arrays of that size, each costing more in call overhead than in work. Here they
are a few loops.

Everything here is whole-number counting, index bookkeeping and copies of float values, except the weight
assembly, which adds the same three parts entry by entry in the same order as the numpy form
(``(w_cooc + w_sim) + w_typed``, each part where it has an entry), and the weighted degrees, which are
numpy's pairwise row sums step for step (:func:`engine.pairwise_sum.row_sums`); the NPMI itself (``np.log``) stays numpy's. ``tests/engine/tig/test_graph_kernel.py`` compares
every array with the numpy form's on every leave-two-out graph of several tasks.
"""

from __future__ import annotations

import numpy as np

from engine.compiled import compiled_kernel

__all__ = ["assemble_weight", "graph_counts", "sorted_codes"]


#: bits of a code sorted in one pass of :func:`sorted_codes` (256 buckets)
_RADIX_BITS = 8


@compiled_kernel()
def sorted_codes(values):
    """``np.sort`` of a 1-D int64 array of codes (the same array: whole numbers have one sorted order).

    Non-negative codes are sorted by a least-significant-digit radix sort, 8 bits a pass, as many passes as
    the largest code has bytes (a context's codes need two or three): a few thousand steps where numba's
    quicksort took tens of thousands on the same few hundred codes. Codes already in order are returned
    after one look; a negative code sends the array to ``np.sort``."""
    n = values.shape[0]
    out = values.copy()
    if n < 2:
        return out
    ordered = True
    top = out[0]
    low = out[0]
    for i in range(1, n):
        if out[i] < out[i - 1]:
            ordered = False
        if out[i] > top:
            top = out[i]
        if out[i] < low:
            low = out[i]
    if ordered:
        return out
    if low < 0:
        return np.sort(values)
    scratch = np.empty(n, dtype=np.int64)
    start = np.empty(257, dtype=np.int64)
    mask = (1 << _RADIX_BITS) - 1
    shift = 0
    while shift < 63 and (top >> shift) > 0:
        start[:] = 0
        for i in range(n):
            start[((out[i] >> shift) & mask) + 1] += 1
        for d in range(256):
            start[d + 1] += start[d]
        for i in range(n):  # stable: equal digits keep the previous passes' order
            d = (out[i] >> shift) & mask
            scratch[start[d]] = out[i]
            start[d] += 1
        out, scratch = scratch, out
        shift += _RADIX_BITS
    return out


@compiled_kernel()
def _distinct_runs(values):
    """The sorted distinct values of a 1-D int64 array and how often each occurs (``np.unique``'s
    ``return_counts``; the order of equal whole numbers cannot matter)."""
    ordered = sorted_codes(values)
    n = ordered.shape[0]
    codes = np.empty(n, dtype=np.int64)
    counts = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        if i == 0 or ordered[i] != ordered[i - 1]:
            codes[k] = ordered[i]
            counts[k] = 1
            k += 1
        else:
            counts[k - 1] += 1
    return codes[:k], counts[:k]


@compiled_kernel()
def graph_counts(response, mention_node, n_units, n_nodes, response_model, n_models, node_similarity, node_type,
                 threshold, rel_response, rel_source, rel_target, rel_code):
    """The graph's whole-number parts and entries, as :func:`engine.tig.graph.build_graph`'s numpy form makes
    them: ``(incidence, node_models, cooc_u, cooc_v, joint, unit_count, sim_at, sim, typed_edges, typed_at,
    typed)`` -- incidence (units x nodes), node models (nodes x models), the co-occurring node pairs ``u < v``
    row-major with their shared-unit counts and every node's unit count, the same-type cosines at or above
    ``threshold`` off the diagonal (flat row-major positions, increasing; nodes of a type are one run and
    cosines across types are zero), the typed-relation rows ``(u, v, r, count)`` and the collapsed undirected
    typed counts (flat positions, increasing)."""
    incidence = np.zeros((n_units, n_nodes), dtype=np.bool_)
    node_models = np.zeros((n_nodes, n_models), dtype=np.bool_)
    for m in range(mention_node.shape[0]):
        incidence[response[m], mention_node[m]] = True
        node_models[mention_node[m], response_model[response[m]]] = True
    # co-occurrence: every unit's nodes (increasing), their pairs' codes u * n + v, counted
    unit_count = np.zeros(n_nodes, dtype=np.int64)
    per_unit = np.zeros(n_units, dtype=np.int64)
    for r in range(n_units):
        for v in range(n_nodes):
            if incidence[r, v]:
                per_unit[r] += 1
                unit_count[v] += 1
    n_pairs = 0
    for r in range(n_units):
        n_pairs += per_unit[r] * (per_unit[r] - 1) // 2
    pair_codes = np.empty(n_pairs, dtype=np.int64)
    nodes = np.empty(n_nodes, dtype=np.int64)
    p = 0
    for r in range(n_units):
        k = 0
        for v in range(n_nodes):
            if incidence[r, v]:
                nodes[k] = v
                k += 1
        for a in range(k):
            for b in range(a + 1, k):
                pair_codes[p] = nodes[a] * n_nodes + nodes[b]
                p += 1
    codes, joint = _distinct_runs(pair_codes)
    cooc_u = codes // n_nodes
    cooc_v = codes - cooc_u * n_nodes
    # similarity entries: each type's block of the cosine matrix, row-major, off the diagonal -- when every
    # type's nodes are one run (as canonicalisation numbers them); else every row whole
    block_start = np.zeros(n_nodes, dtype=np.int64)
    block_end = np.full(n_nodes, n_nodes, dtype=np.int64)
    runs = 0
    for u in range(n_nodes):
        if u == 0 or node_type[u] != node_type[u - 1]:
            runs += 1
    n_types = 0
    if n_nodes:
        seen = np.zeros(node_type.max() + 1, dtype=np.bool_)
        for u in range(n_nodes):
            if not seen[node_type[u]]:
                seen[node_type[u]] = True
                n_types += 1
    if runs == n_types:
        start = 0
        for u in range(n_nodes):
            if u == 0 or node_type[u] != node_type[u - 1]:
                start = u
            block_start[u] = start
        end = n_nodes
        for u in range(n_nodes - 1, -1, -1):
            if u == n_nodes - 1 or node_type[u] != node_type[u + 1]:
                end = u + 1
            block_end[u] = end
    n_sim = 0
    for u in range(n_nodes):
        for v in range(block_start[u], block_end[u]):
            if v != u and node_similarity[u, v] >= threshold:
                n_sim += 1
    sim_at = np.empty(n_sim, dtype=np.int64)
    sim = np.empty(n_sim)
    i = 0
    for u in range(n_nodes):
        for v in range(block_start[u], block_end[u]):
            if v != u and node_similarity[u, v] >= threshold:
                sim_at[i] = u * n_nodes + v
                sim[i] = node_similarity[u, v]
                i += 1
    # typed relations: distinct (edge (r * n + u) * n + v, response) pairs, self-loops dropped
    n_rel = 0
    for e in range(rel_source.shape[0]):
        if rel_source[e] != rel_target[e]:
            n_rel += 1
    keyed = np.empty(n_rel, dtype=np.int64)
    i = 0
    for e in range(rel_source.shape[0]):
        if rel_source[e] != rel_target[e]:
            edge = (rel_code[e] * n_nodes + rel_source[e]) * n_nodes + rel_target[e]
            keyed[i] = edge * n_units + rel_response[e]
            i += 1
    per_response, _ = _distinct_runs(keyed)
    edge_codes, edge_counts = _distinct_runs(per_response // n_units)
    square = n_nodes * n_nodes
    typed_edges = np.empty((edge_codes.shape[0], 4), dtype=np.int64)
    for e in range(edge_codes.shape[0]):
        rest = edge_codes[e] % square
        typed_edges[e, 0] = rest // n_nodes
        typed_edges[e, 1] = rest % n_nodes
        typed_edges[e, 2] = edge_codes[e] // square
        typed_edges[e, 3] = edge_counts[e]
    # collapsed undirected typed counts: each (relation, response) pair adds one at (u, v) and one at (v, u)
    both = np.empty(2 * per_response.shape[0], dtype=np.int64)
    for e in range(per_response.shape[0]):
        forward = (per_response[e] // n_units) % square
        u = forward // n_nodes
        both[e] = forward
        both[per_response.shape[0] + e] = (forward - u * n_nodes) * n_nodes + u
    typed_at, typed = _distinct_runs(both)
    return (incidence, node_models, cooc_u, cooc_v, joint, unit_count, sim_at, sim, typed_edges, typed_at,
            typed)


@compiled_kernel()
def assemble_weight(n_nodes, cooc_u, cooc_v, cooc, sim_at, sim, typed_at, typed):
    """``w = (w_cooc + w_sim) + w_typed`` (App. G.3) as a dense node x node matrix, each part added where it
    has an entry, in that order (as the numpy form adds them)."""
    weight = np.zeros((n_nodes, n_nodes))
    flat = weight.reshape(-1)
    for e in range(cooc_u.shape[0]):
        flat[cooc_u[e] * n_nodes + cooc_v[e]] = cooc[e]
        flat[cooc_v[e] * n_nodes + cooc_u[e]] = cooc[e]
    for e in range(sim_at.shape[0]):
        flat[sim_at[e]] += sim[e]
    for e in range(typed_at.shape[0]):
        flat[typed_at[e]] += typed[e]
    return weight



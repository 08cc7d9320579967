"""Compiled (numba) node tables of a canonicalisation (Ekphrasis App. G.2): what
:func:`engine.tig.canonical.canonicalise` reads off its pairs once every pair has its node.

Given the node of every distinct ``(key, surface form)`` pair: the node of every mention, every node's type,
and every node's label and key -- the pair's own where a node has one pair (most nodes of a leave-out
population), else the choice among the node's pairs: the surface form (the key) with the most mentions,
summed over the node's pairs, ties to the smaller id. In numpy that is a dozen array calls, and some thirty
more when some node has several pairs (a sort per choice); here it is one pass over the pairs and, for the
few pairs of shared nodes, a comparison of each with the others. Only whole numbers are added and compared
(mention counts), so the choices are the numpy form's (``tests/engine/tig/test_canonical_kernel.py``
compares both on every leave-two-out population of several tasks).
"""

from __future__ import annotations

import numpy as np

from engine.compiled import compiled_kernel

__all__ = ["node_tables"]


@compiled_kernel()
def _choose(shared, node_of_pair, value, pair_count, out):
    """For every node of the pairs ``shared``: ``out[node]`` = the value with the largest count summed over
    the node's pairs of that value, ties to the smaller value."""
    n = shared.shape[0]
    best_total = np.zeros(n, dtype=np.int64)  # per shared pair: its node's best total so far, by first pair
    for i in range(n):
        p = shared[i]
        total = 0
        for j in range(n):
            q = shared[j]
            if node_of_pair[q] == node_of_pair[p] and value[q] == value[p]:
                total += pair_count[q]
        best_total[i] = total
    for i in range(n):
        p = shared[i]
        v = node_of_pair[p]
        winner = -1
        for j in range(n):
            q = shared[j]
            if node_of_pair[q] != v:
                continue
            if winner < 0 or best_total[j] > best_total[winner] or (
                    best_total[j] == best_total[winner] and value[q] < value[shared[winner]]):
                winner = j
        out[v] = value[shared[winner]]


@compiled_kernel()
def node_tables(node_of_pair, pair_of_mention, pair_key, pair_label, pair_count, key_type, keys, n_nodes):
    """``(mention_node, node_type, node_label_id, node_key)``: every mention's node; every node's type code,
    label id and key id (``keys[k]`` of its chosen dense key k) -- a node's label the surface form with the
    most mentions over its pairs, its key the key with the most (ties: smaller id)."""
    n_pairs = node_of_pair.shape[0]
    mention_node = np.empty(pair_of_mention.shape[0], dtype=np.int64)
    for m in range(pair_of_mention.shape[0]):
        mention_node[m] = node_of_pair[pair_of_mention[m]]
    node_type = np.zeros(n_nodes, dtype=np.int64)
    node_label_id = np.empty(n_nodes, dtype=np.int64)
    node_key_id = np.empty(n_nodes, dtype=np.int64)
    pairs_of_node = np.zeros(n_nodes, dtype=np.int64)
    for p in range(n_pairs):
        v = node_of_pair[p]
        node_type[v] = key_type[pair_key[p]]
        node_label_id[v] = pair_label[p]
        node_key_id[v] = pair_key[p]
        pairs_of_node[v] += 1
    n_shared = 0
    for p in range(n_pairs):
        if pairs_of_node[node_of_pair[p]] > 1:
            n_shared += 1
    if n_shared:
        shared = np.empty(n_shared, dtype=np.int64)
        i = 0
        for p in range(n_pairs):
            if pairs_of_node[node_of_pair[p]] > 1:
                shared[i] = p
                i += 1
        _choose(shared, node_of_pair, pair_label, pair_count, node_label_id)
        _choose(shared, node_of_pair, pair_key, pair_count, node_key_id)
    node_key = np.empty(n_nodes, dtype=np.int64)
    for v in range(n_nodes):
        node_key[v] = keys[node_key_id[v]]
    return mention_node, node_type, node_label_id, node_key

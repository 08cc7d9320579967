"""Compiled (numba) kernel of :func:`engine.tig.score.score_partition`'s per-cluster sums (App. G.3).

A context's partition has ~100 nodes and ~90 clusters; the numpy form of ModelCov, Cent, Conv and the
sample counts is some forty array calls on arrays of that size, each costing more in call overhead than in
arithmetic. Here they are one pass each over the nodes, the same-cluster node pairs and the mentions.

Bit for bit the numpy form's values: every float is the same IEEE operation in the same order --
``np.bincount(..., weights=...)`` adds its weights to a zero in array order, as the loops below do; the
same-cluster pairs are visited row-major (``upper_pairs``' order); ``np.maximum(0.0, x)`` is
``0.0 if 0.0 >= x else x``; the score is ``(0.45 a + 0.35 b) + 0.20 c``, left to right -- and numba does not
contract a multiply and an add into one fused operation without fastmath
(``tests/engine/tig/test_score_kernel.py`` compares both on every context of several tasks).
"""

from __future__ import annotations

import numpy as np

from engine.compiled import compiled_kernel

__all__ = ["cluster_sums"]


@compiled_kernel()
def cluster_sums(cluster_of_node, k, node_models, degree, node_similarity, mention_node, mention_label,
                 label_similarity, response, n_responses, coverage_weight, centrality_weight, convergence_weight):
    """Per cluster (labels ``0..k-1``): ``(score, coverage, centrality, convergence, n_models, n_samples,
    covered, mention_cluster)`` as :func:`engine.tig.score.score_partition` computes them."""
    n_nodes = cluster_of_node.shape[0]
    n_models_total = node_models.shape[1]
    size = np.zeros(k)
    for v in range(n_nodes):
        size[cluster_of_node[v]] += 1.0
    # ModelCov(C) = |{m : exists u in C, m in prov(u)}| / |M| (App. G.3)
    covered = np.zeros((k, n_models_total), dtype=np.bool_)
    for v in range(n_nodes):
        c = cluster_of_node[v]
        for m in range(n_models_total):
            if node_models[v, m]:
                covered[c, m] = True
    n_models = np.zeros(k, dtype=np.int64)
    for c in range(k):
        for m in range(n_models_total):
            if covered[c, m]:
                n_models[c] += 1
    coverage = np.zeros(k)
    if n_models_total:
        for c in range(k):
            coverage[c] = n_models[c] / n_models_total
    # Cent(C) = sum_{u in C} deg_w(u) / (|C| max_u' deg_w(u')) (App. G.3)
    top = 0.0
    if n_nodes:
        top = degree[0]
        for v in range(1, n_nodes):
            if degree[v] > top:
                top = degree[v]
    centrality = np.zeros(k)
    if top > 0:
        for v in range(n_nodes):
            centrality[cluster_of_node[v]] += degree[v]
        for c in range(k):
            centrality[c] = centrality[c] / size[c] / top
    # Conv(C) = 2/(|C|(|C|-1)) sum_{u<v in C} max(0, cos(e_u, e_v)) over C's canonical atoms (App. G.3)
    pair_sum = np.zeros(k)
    for u in range(n_nodes):
        c = cluster_of_node[u]
        if size[c] < 2:
            continue
        for v in range(u + 1, n_nodes):
            if cluster_of_node[v] == c:
                x = node_similarity[u, v]
                pair_sum[c] += 0.0 if 0.0 >= x else x  # np.maximum(0.0, x)
    convergence = np.zeros(k)
    for c in range(k):
        node_pairs = size[c] * (size[c] - 1) / 2.0
        if node_pairs > 0:
            convergence[c] = pair_sum[c] / node_pairs
    # |C| = 1: the same mean over the canonical atom's input atoms (engine.tig.score's docstring)
    n_mentions = mention_node.shape[0]
    mention_cluster = np.empty(n_mentions, dtype=np.int64)
    m_count = np.zeros(k)
    for i in range(n_mentions):
        mention_cluster[i] = cluster_of_node[mention_node[i]]
        m_count[mention_cluster[i]] += 1.0
    single_sum = np.zeros(k)
    any_multi = False
    for i in range(n_mentions):
        c = mention_cluster[i]
        if size[c] != 1 or m_count[c] < 2:
            continue
        any_multi = True
        for j in range(i + 1, n_mentions):
            if mention_cluster[j] == c:
                x = label_similarity[mention_label[i], mention_label[j]]
                single_sum[c] += 0.0 if 0.0 >= x else x  # np.maximum(0.0, x)
    if any_multi:
        for c in range(k):
            if size[c] == 1:
                pairs = m_count[c] * (m_count[c] - 1) / 2.0
                convergence[c] = single_sum[c] / pairs if pairs > 0 else 0.0
    # ClicheScore = 0.45 ModelCov + 0.35 Cent + 0.20 Conv (App. G.3)
    score = np.empty(k)
    for c in range(k):
        score[c] = coverage_weight * coverage[c] + centrality_weight * centrality[c] + convergence_weight * convergence[c]
    # n_samples(C): the responses with an atom in C
    in_cluster = np.zeros((k, n_responses), dtype=np.bool_)
    for i in range(n_mentions):
        in_cluster[mention_cluster[i], response[i]] = True
    n_samples = np.zeros(k, dtype=np.int64)
    for c in range(k):
        for r in range(n_responses):
            if in_cluster[c, r]:
                n_samples[c] += 1
    return score, coverage, centrality, convergence, n_models, n_samples, covered, mention_cluster

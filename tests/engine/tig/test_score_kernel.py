"""The compiled per-cluster sums of score_partition (engine.tig.score_kernel.cluster_sums) are the numpy form
they replaced, bit for bit: ModelCov, Cent, Conv (node pairs and a single atom's input atoms), ClicheScore,
model and sample counts, on every leave-two-out graph of several tasks, with their Leiden partitions (the
items' types only, and every type) and with random partitions (clusters of many sizes)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from engine.tig.checklist import MATERIALISED_TYPES
from engine.tig.graph import nonzero_entries, upper_pairs
from engine.tig.population import PopulationIndex
from engine.tig.score import (
    CENTRALITY_WEIGHT,
    CONVERGENCE_WEIGHT,
    MODEL_COVERAGE_WEIGHT,
    cliche_score,
    score_partition,
)
from engine.tig.score_kernel import cluster_sums
from tests.benchmarks.bench_tig import synthetic_task
from tests.engine.tig.planted import planted_population


def numpy_cluster_sums(graph, cluster_of_node):
    """score_partition's per-cluster values as its numpy form computed them (before the compiled kernel)."""
    canon = graph.canon
    table = canon.table
    n_nodes = canon.n_nodes
    k = int(cluster_of_node.max()) + 1 if n_nodes else 0
    size = np.bincount(cluster_of_node, minlength=k).astype(np.float64)
    n_models_total = graph.node_models.shape[1]
    node_idx, model_idx = nonzero_entries(graph.node_models)
    covered = np.zeros((k, n_models_total), dtype=bool)
    covered[cluster_of_node[node_idx], model_idx] = True
    n_models = covered.sum(axis=1)
    coverage = n_models / n_models_total if n_models_total else np.zeros(k)
    top = float(graph.degree.max()) if n_nodes else 0.0
    cent = (
        np.bincount(cluster_of_node, weights=graph.degree, minlength=k) / size / top
        if top > 0
        else np.zeros(k)
    )
    node_pairs = size * (size - 1) / 2.0
    conv = np.zeros(k)
    if (node_pairs > 0).any():
        grouped = (size[cluster_of_node] >= 2).nonzero()[0]
        in_grouped = cluster_of_node[grouped]
        i, j = upper_pairs(in_grouped[:, None] == in_grouped[None, :])
        u, v = grouped[i], grouped[j]
        pos = np.maximum(0.0, canon.node_similarity[u, v])
        conv = np.divide(np.bincount(cluster_of_node[u], weights=pos, minlength=k), node_pairs,
                         out=np.zeros(k), where=node_pairs > 0)
    mention_cluster = cluster_of_node[canon.mention_node]
    m_count = np.bincount(mention_cluster, minlength=k).astype(np.float64)
    pairs = m_count * (m_count - 1) / 2.0
    single = size == 1
    multi = (single[mention_cluster] & (m_count[mention_cluster] >= 2)).nonzero()[0]
    if len(multi):
        labels = table.label_ids[multi]
        mc = mention_cluster[multi]
        i, j = upper_pairs(mc[:, None] == mc[None, :])
        pos = np.maximum(0.0, table.label_similarity[labels[i], labels[j]])
        pair_sum = np.bincount(mc[i], weights=pos, minlength=k)
        conv = np.where(single, np.divide(pair_sum, pairs, out=np.zeros(k), where=pairs > 0), conv)
    score = cliche_score(coverage, cent, conv)
    in_cluster = np.zeros((k, graph.n_responses), dtype=bool)
    in_cluster[mention_cluster, table.response] = True
    n_samples = in_cluster.sum(axis=1)
    return score, coverage, cent, conv, n_models, n_samples, covered, mention_cluster


def compiled_sums(graph, cluster_of_node):
    canon, table = graph.canon, graph.canon.table
    k = int(cluster_of_node.max()) + 1 if canon.n_nodes else 0
    return cluster_sums(cluster_of_node, k, graph.node_models, graph.degree, canon.node_similarity,
                        canon.mention_node, table.label_ids, table.label_similarity, table.response,
                        graph.n_responses, MODEL_COVERAGE_WEIGHT, CENTRALITY_WEIGHT, CONVERGENCE_WEIGHT)


def bits(array) -> tuple:
    array = np.asarray(array)
    return array.dtype.str, array.shape, array.tobytes()


def random_labels(rng, n: int) -> np.ndarray:
    """Dense labels 0..k-1 numbered by smallest node, over clusters of many sizes (singletons included)."""
    raw = rng.integers(0, max(1, n // rng.integers(1, 6)), size=n)
    seen: dict[int, int] = {}
    return np.asarray([seen.setdefault(x, len(seen)) for x in raw.tolist()], dtype=np.int64)


@pytest.mark.parametrize("make", [planted_population, lambda: synthetic_task(0), lambda: synthetic_task(7)])
def test_compiled_cluster_sums_are_the_numpy_form_bit_for_bit(make, embedder):
    index = PopulationIndex(make(), embedder=embedder, max_contexts=0)
    rng = np.random.default_rng(5)
    compared = 0
    for a, b in list(combinations(index.models, 2))[::3]:
        graph = index.graph((a, b))
        partitions = [index.scored_clusters((a, b), graph=graph, only_types=types)[0].cluster_of_node
                      for types in (MATERIALISED_TYPES, None)]
        partitions += [random_labels(rng, graph.n_nodes) for _ in range(3)]
        for labels in partitions:
            expected, got = numpy_cluster_sums(graph, labels), compiled_sums(graph, labels)
            assert [bits(x) for x in got] == [bits(x) for x in expected]
            compared += 1
    assert compared >= 20


def test_score_partition_reads_the_compiled_sums(embedder):
    index = PopulationIndex(synthetic_task(3), embedder=embedder, max_contexts=0)
    pair = index.models[:2]
    graph = index.graph(pair)
    labels = index.scored_clusters(pair, graph=graph)[0].cluster_of_node
    scored = score_partition(graph, labels)
    expected = numpy_cluster_sums(graph, labels)
    names = ("score", "coverage", "centrality", "convergence", "n_models", "n_samples", "covered", "mention_cluster")
    assert [bits(getattr(scored, name)) for name in names] == [bits(x) for x in expected]

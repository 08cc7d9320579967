"""build_graph's compiled bookkeeping (engine.tig.graph_kernel) gives the numpy form's graph
(graph.build_graph_numpy), bit for bit: incidence, node models, the three weight parts' entries and dense
matrices, typed edges, combined weights and degrees, on every leave-two-out graph of several tasks (planted
paraphrases, bench_tig's synthetic tasks), and on a canonicalisation whose types' nodes are not one run."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from engine.tig.canonical import Canonicalisation
from engine.tig.graph import build_graph, build_graph_numpy
from engine.tig.graph_kernel import sorted_codes
from engine.tig.population import PopulationIndex
from tests.benchmarks.bench_tig import synthetic_task
from tests.engine.tig.planted import planted_population

_ARRAYS = ("incidence", "node_models", "typed_edges", "weight", "degree", "cooccurrence", "similarity", "typed")


def bits(array) -> tuple:
    array = np.asarray(array)
    return array.dtype.str, array.shape, array.tobytes()


def facts(graph) -> dict:
    out = {name: bits(getattr(graph, name)) for name in _ARRAYS}
    out["cooccurrence_entries"] = [bits(a) for a in graph.cooccurrence_entries]
    out["similarity_entries"] = [bits(a) for a in graph.similarity_entries]
    out["models"] = graph.models
    return out


@pytest.mark.parametrize("make", [planted_population, lambda: synthetic_task(0), lambda: synthetic_task(7)])
def test_compiled_graph_is_the_numpy_form_bit_for_bit(make, embedder):
    index = PopulationIndex(make(), embedder=embedder, max_contexts=0)
    pairs = list(combinations(index.models, 2))[::3]
    for pair in pairs:
        canon = index.graph(pair).canon
        assert facts(build_graph(canon)) == facts(build_graph_numpy(canon))
    whole = index.graph(()).canon
    for threshold in (0.5, 0.78, 0.9):
        assert facts(build_graph(whole, similarity_threshold=threshold)) == facts(
            build_graph_numpy(whole, similarity_threshold=threshold))
    assert len(pairs) >= 5


def test_types_in_several_runs_are_compared_whole(embedder):
    """Nodes numbered with a type's nodes apart (not as canonicalisation numbers them): every same-type
    cosine is still found."""
    index = PopulationIndex(synthetic_task(2), embedder=embedder, max_contexts=0)
    canon = index.graph(()).canon
    n = canon.n_nodes
    perm = np.random.default_rng(3).permutation(n)  # new node i is old node perm[i]
    new_of_old = np.empty(n, dtype=np.int64)
    new_of_old[perm] = np.arange(n)
    shuffled = Canonicalisation(
        table=canon.table,
        mention_node=new_of_old[canon.mention_node],
        node_type=canon.node_type[perm],
        node_label=[canon.node_label[i] for i in perm.tolist()],
        node_key=[canon.node_key[i] for i in perm.tolist()],
        node_similarity=np.ascontiguousarray(canon.node_similarity[np.ix_(perm, perm)]),
    )
    graph = build_graph(shuffled)
    assert len(graph.similarity_entries[0]) > 0
    assert facts(graph) == facts(build_graph_numpy(shuffled))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 255, 256, 257, 1500])
def test_the_radix_sort_of_codes_is_np_sort(n):
    """sorted_codes (the kernels' sort of their codes) is np.sort on codes of one to eight bytes, on codes
    already in order, and on negative codes (np.sort's path)."""
    rng = np.random.default_rng(n)
    for top in (1, 2, 255, 256, 70_000, 1 << 40, (1 << 63) - 1):
        codes = rng.integers(0, top, n, dtype=np.int64, endpoint=True)
        assert np.array_equal(sorted_codes(codes), np.sort(codes))
        assert np.array_equal(sorted_codes(np.sort(codes)), np.sort(codes))
    signed = rng.integers(-1000, 1000, n, dtype=np.int64)
    assert np.array_equal(sorted_codes(signed), np.sort(signed))

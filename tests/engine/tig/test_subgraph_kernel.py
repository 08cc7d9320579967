"""The compiled same-type edge lists (engine.tig.subgraph_kernel.type_edge_lists) are the numpy form's --
each type block's upper triangle read row-major, its non-zero entries kept -- pair for pair and bit for bit,
and same_type_labels gives the same labels and the same memo entries through either form, on every
leave-two-out graph of several tasks and on random matrices with zeros, negative zeros and NaNs."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from engine.tig.atoms import ATOM_TYPES
from engine.tig.checklist import MATERIALISED_TYPES
from engine.tig.clusters import same_type_labels
from engine.tig.graph import upper_slot_pairs
from engine.tig.population import PopulationIndex
from engine.tig.subgraph_kernel import type_edge_lists
from tests.benchmarks.bench_tig import synthetic_task
from tests.engine.tig.planted import planted_population


def bits(array) -> tuple:
    array = np.asarray(array)
    return array.dtype.str, array.shape, array.tobytes()


def numpy_edge_list(weights, start, stop):
    """same_type_labels' numpy form of one type's edge list."""
    block = weights[start:stop, start:stop]
    slot_u, slot_v = upper_slot_pairs(stop - start)
    upper = block[slot_u, slot_v]
    nonzero = upper.nonzero()[0]
    return slot_u[nonzero], slot_v[nonzero], upper[nonzero]


def assert_lists_match(weights, starts, stops):
    u, v, w, bounds = type_edge_lists(weights, np.asarray(starts, dtype=np.int64), np.asarray(stops, dtype=np.int64))
    assert bounds[0] == 0 and bounds[-1] == len(u) == len(v) == len(w)
    for t, (start, stop) in enumerate(zip(starts, stops)):
        a, b = bounds[t], bounds[t + 1]
        expected = numpy_edge_list(weights, start, stop)
        assert [bits(x) for x in (u[a:b], v[a:b], w[a:b])] == [bits(x) for x in expected]


@pytest.mark.parametrize("make", [planted_population, lambda: synthetic_task(0), lambda: synthetic_task(7)])
def test_compiled_edge_lists_and_labels_are_the_numpy_forms(make, embedder):
    index = PopulationIndex(make(), embedder=embedder, max_contexts=0)
    pairs = list(combinations(index.models, 2))[::2]
    materialised = {ATOM_TYPES.index(t) for t in MATERIALISED_TYPES}
    for pair in pairs:
        graph = index.graph(pair)
        types = graph.canon.node_type
        starts = [0, *((types[1:] != types[:-1]).nonzero()[0] + 1).tolist()]
        assert_lists_match(graph.weight, starts, [*starts[1:], len(types)])
        for only in (None, materialised):
            compiled, numpy_form = {}, {}
            labels = same_type_labels(graph.weight, types, only_types=only, memo=compiled)
            # a matrix in column-major memory takes the numpy form
            other = same_type_labels(np.asfortranarray(graph.weight), types, only_types=only, memo=numpy_form)
            assert bits(labels) == bits(other)
            assert list(compiled) == list(numpy_form)
            assert [bits(x) for x in compiled.values()] == [bits(x) for x in numpy_form.values()]
    assert len(pairs) >= 5


def test_compiled_edge_lists_on_random_blocks_with_zeros_negative_zeros_and_nans():
    rng = np.random.default_rng(11)
    for n in (0, 1, 2, 9, 40):
        w = rng.standard_normal((n, n)) * (rng.random((n, n)) < 0.4)
        w[rng.random((n, n)) < 0.05] = -0.0
        w[rng.random((n, n)) < 0.05] = np.nan
        cuts = sorted({0, n, *rng.integers(0, n + 1, 3).tolist()})
        assert_lists_match(w, cuts[:-1], cuts[1:])

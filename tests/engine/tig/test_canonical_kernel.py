"""canonicalise's node tables from the compiled pass (engine.tig.canonical_kernel.node_tables) are the numpy
form's, array for array: every mention's node, every node's type, label id and key -- the choice among a
node's pairs (most mentions summed over the node's pairs, ties to the smaller id) included -- on every
leave-two-out population of several tasks, on the whole task, and on random pair tables where many nodes
have several pairs, with counts summed over pairs and ties."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from engine.tig.canonical import _first_per_group, _most_per_node, canonicalise, pair_table
from engine.tig.canonical_kernel import node_tables
from engine.tig.distinct import distinct
from engine.tig.population import PopulationIndex
from tests.benchmarks.bench_tig import synthetic_task
from tests.engine.tig.planted import planted_population


def node_tables_numpy(node_of_pair, pair_of_mention, pair_key, pair_label, pair_count, key_type, keys, n_nodes):
    """The numpy form canonicalise had before node_tables (its width: any number above every label id)."""
    width = int(pair_label.max()) + 1 if len(pair_label) else 1
    n_k = len(keys)
    mention_node = node_of_pair[pair_of_mention]
    node_type = np.zeros(n_nodes, dtype=np.int64)
    node_type[node_of_pair] = key_type[pair_key]
    node_label_id = np.empty(n_nodes, dtype=np.int64)
    node_label_id[node_of_pair] = pair_label
    node_key_id = np.empty(n_nodes, dtype=np.int64)
    node_key_id[node_of_pair] = pair_key
    shared = (np.bincount(node_of_pair, minlength=n_nodes)[node_of_pair] > 1).nonzero()[0]
    if len(shared):
        shared_node, shared_count = node_of_pair[shared], pair_count[shared]
        nodes = distinct(shared_node)
        node_label_id[nodes] = _most_per_node(shared_node, pair_label[shared], shared_count, width, n_nodes)[nodes]
        node_key_id[nodes] = (
            _first_per_group(shared_node, pair_key[shared], shared_count, n_nodes)
            if len(pair_key) == n_k
            else _most_per_node(shared_node, pair_key[shared], shared_count, n_k, n_nodes)
        )[nodes]
    return mention_node, node_type, node_label_id, keys[node_key_id]


def bits(array) -> tuple:
    array = np.asarray(array)
    return array.dtype.str, array.shape, array.tobytes()


def assert_same(*args):
    assert [bits(a) for a in node_tables(*args)] == [bits(a) for a in node_tables_numpy(*args)]


def canonical_arguments(table):
    """node_tables' arguments for a table's canonicalisation: its pairs and the node of each pair."""
    pairs = pair_table(table)
    canon = canonicalise(table)
    node_of_pair = np.empty(len(pairs.pair_key), dtype=np.int64)
    node_of_pair[pairs.pair_of_mention] = canon.mention_node
    return (node_of_pair, pairs.pair_of_mention, pairs.pair_key, pairs.pair_label, pairs.pair_count,
            pairs.key_type, pairs.keys, canon.n_nodes)


@pytest.mark.parametrize("make", [planted_population, lambda: synthetic_task(0), lambda: synthetic_task(7)])
def test_compiled_node_tables_are_the_numpy_forms_on_every_population(make, embedder):
    index = PopulationIndex(make(), embedder=embedder, max_contexts=0)
    pairs = list(combinations(index.models, 2))[::2]
    shared = 0
    for pair in [(), *pairs]:
        args = canonical_arguments(index.reference_table(pair))
        assert_same(*args)
        shared += int((np.bincount(args[0]) > 1).sum())
    assert shared > 0  # some nodes chose among several pairs


@pytest.mark.parametrize("one_pair_per_key", [True, False])
def test_compiled_node_tables_on_random_pair_tables_with_ties(one_pair_per_key):
    rng = np.random.default_rng(int(one_pair_per_key))
    for _ in range(200):
        n_keys = int(rng.integers(1, 30))
        per_key = np.ones(n_keys, dtype=np.int64) if one_pair_per_key else rng.integers(1, 4, n_keys)
        pair_key = np.repeat(np.arange(n_keys), per_key)
        pair_label = np.concatenate([np.sort(rng.choice(40, k, replace=False)) for k in per_key.tolist()])
        pair_count = rng.integers(1, 4, len(pair_key))  # small counts: many ties
        n_nodes = int(rng.integers(1, len(pair_key) + 1))
        node_of_pair = np.concatenate([np.arange(n_nodes), rng.integers(0, n_nodes, len(pair_key) - n_nodes)])
        rng.shuffle(node_of_pair)
        pair_of_mention = np.repeat(np.arange(len(pair_key)), pair_count)
        key_type = rng.integers(0, 5, n_keys)
        keys = np.sort(rng.choice(100, n_keys, replace=False))
        assert_same(node_of_pair, pair_of_mention, pair_key, pair_label, pair_count, key_type, keys, n_nodes)

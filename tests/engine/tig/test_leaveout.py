"""A leave-out population built with what its task shares (the task's LeaveOutBasis, Leiden results read
back from the task's memo) is the population built from its own table with nothing shared, bit for bit:
canonical atoms, graph weights, clusters, scores, items and their ids, for every pair of several tasks
(planted paraphrases, so keys with several surface forms; bench_tig's synthetic tasks, whose mechanisms
merge in most populations; a looser threshold; a canonicaliser other than the offline one)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from engine.tig.canonical import EmbeddingCanonicaliser, canonicalise, pair_table
from engine.tig.population import PopulationIndex
from tests.benchmarks.bench_tig import synthetic_task
from tests.engine.tig.planted import planted_population

WHALE = ("an origami whale", "origami whales", "a folded paper whale")


class ListedCanonicaliser(EmbeddingCanonicaliser):
    """The offline grouping, called as any other canonicaliser is (its own group, so not 'offline')."""

    name = "listed"

    def group(self, atom_type, texts, counts, similarity):
        return list(super().group(atom_type, texts, counts, similarity))


TASKS = {
    "planted": (planted_population, None),
    "planted-whale": (lambda: planted_population(motif=WHALE, carriers=tuple(f"model-{i:02d}" for i in range(3, 12))),
                      None),
    "synthetic-0": (lambda: synthetic_task(0), None),
    "synthetic-7": (lambda: synthetic_task(7), None),
    "synthetic-3-loose": (lambda: synthetic_task(3), EmbeddingCanonicaliser(threshold=0.7)),
    "synthetic-5-listed": (lambda: synthetic_task(5), ListedCanonicaliser()),
}


def bits(array: np.ndarray) -> tuple:
    array = np.asarray(array)
    return array.dtype.str, array.shape, array.tobytes()


def canon_facts(canon) -> dict:
    return {
        "mention_node": bits(canon.mention_node),
        "node_type": bits(canon.node_type),
        "node_label": canon.node_label,
        "node_key": canon.node_key,
        "node_similarity": bits(canon.node_similarity),
        "node_label_id": None if canon.node_label_id is None else bits(canon.node_label_id),
        "aliases": canon.node_alias_cosines,
    }


def graph_facts(graph) -> dict:
    return {
        "canon": canon_facts(graph.canon),
        **{name: bits(getattr(graph, name)) for name in (
            "incidence", "cooccurrence", "similarity", "typed", "typed_edges", "weight", "degree", "node_models")},
        "models": graph.models,
    }


def context_facts(index: PopulationIndex, pair) -> dict:
    context = index.context(pair)
    scored = context.scored
    return {
        "items": [i.to_dict() for i in context.items],
        "clusters": [c.to_dict() for c in context.clusters],
        "scores": [bits(getattr(scored, name)) for name in ("score", "coverage", "centrality", "convergence")],
        "labels": bits(scored.cluster_of_node),
        "reference": (context.reference_models, context.n_reference_ideas),
    }


@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_pairs_population_is_the_same_with_and_without_the_task_basis(task, embedder):
    ideas, canonicaliser = TASKS[task]
    index = PopulationIndex(ideas(), task=task, embedder=embedder, canonicaliser=canonicaliser, max_contexts=0)
    models = index.models
    assert len(models) == 14
    for pair in combinations(models, 2):
        index.reuse = True
        fast_graph, fast = graph_facts(index.graph(pair)), context_facts(index, pair)
        index.reuse = False
        slow_graph, slow = graph_facts(index.graph(pair)), context_facts(index, pair)
        assert fast_graph == slow_graph, pair
        assert fast == slow, pair


def test_the_basis_knows_types_apart_and_types_with_close_keys():
    # both branches of the offline canonicaliser's test are taken through the basis on bench_tig's tasks
    index = PopulationIndex(synthetic_task(0), embedder=None, max_contexts=0)
    seen_apart, seen_close = set(), set()
    for pair in combinations(index.models, 2):
        keep = index._keep(pair)[index.table.response]
        pairs = index.basis.pair_table(keep)
        seen_apart |= pairs.apart_types
        seen_close |= set(range(5)) - pairs.apart_types
        own = pair_table(index.table.subset(index._keep(pair)))
        for name in ("keys", "key_count", "key_type", "pair_key", "pair_label", "pair_count", "pair_of_mention"):
            assert bits(getattr(pairs, name)) == bits(getattr(own, name)), (pair, name)
    assert {0, 1} <= seen_apart  # concepts and motifs of these tasks never merge
    assert 2 in seen_close  # mechanisms do, in most populations


def test_an_empty_population_has_no_pair_table():
    index = PopulationIndex(planted_population()[:3], embedder=None, max_contexts=0)
    assert index.basis.pair_table(np.zeros(index.table.n_mentions, dtype=bool)) is None
    assert canonicalise(index.table.subset(np.zeros(index.table.n_responses, dtype=bool))).n_nodes == 0

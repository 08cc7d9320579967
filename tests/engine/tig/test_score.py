from itertools import pairwise

import numpy as np
import pytest

from engine.tig.score import Cluster, cliche_score, score_clusters
from tests.engine.tig.planted import hand_graph


def test_cliche_score_weights_are_045_035_020():
    assert cliche_score(1, 0, 0) == pytest.approx(0.45)
    assert cliche_score(0, 1, 0) == pytest.approx(0.35)
    assert cliche_score(0, 0, 1) == pytest.approx(0.20)


def _scored():
    g = hand_graph()
    idx = {label: v for v, label in enumerate(g.canon.node_label)}
    parts = [np.array([idx["aa"], idx["bb"]]), np.array([idx["cc"]]), np.array([idx["pp"]])]
    return {c.label: c for c in score_clusters(g, parts)}, score_clusters(g, parts)


def test_scores_on_the_hand_graph_match_hand_values():
    """App. G.3 by hand. Conv(C) = 2/(|C|(|C|-1)) Σ_{u<v∈C} max(0, cos(e_u, e_v)) runs over C's canonical atoms:
    C = {aa, bb} is one pair at cos 0.9, so Conv = 0.9 however many responses used each atom (counting the
    input atoms aa, bb, aa, bb instead gave (2·1 + 4·0.9)/6 ≈ 0.933)."""
    by_label, _ = _scored()
    ab = by_label["aa"]
    assert ab.model_coverage == pytest.approx(2 / 3)
    assert ab.centrality == pytest.approx(1.0)
    assert ab.convergence == pytest.approx(0.9, abs=1e-6)
    assert ab.score == pytest.approx(0.45 * 2 / 3 + 0.35 * 1.0 + 0.20 * 0.9, abs=1e-6)
    cc = by_label["cc"]
    assert (cc.model_coverage, cc.convergence) == (pytest.approx(1 / 3), pytest.approx(1.0))
    assert cc.centrality == pytest.approx(1.5 / 1.9)
    # |C| = 1 is 0/0 in the paper: cc's two identical input atoms converge (1.0), pp's single one does not (0.0)
    assert by_label["pp"].convergence == 0.0


def test_clusters_come_sorted_by_score_highest_first():
    _, ranked = _scored()
    assert [c.label for c in ranked] == ["aa", "cc", "pp"]
    assert all(a.score >= b.score for a, b in pairwise(ranked))


def test_cluster_counts_models_and_samples_out_of_the_population():
    by_label, _ = _scored()
    ab = by_label["aa"]
    assert (ab.n_models, ab.population_models, ab.n_samples, ab.population_samples) == (2, 3, 2, 4)
    assert ab.models == ["m0", "m1"]
    # "bb" is a member atom of its own, not an alias of "aa"
    assert ab.aliases == ["aa"] and ab.members == ["aa", "bb"]


def test_cluster_summary_gives_counts_without_model_names():
    by_label, _ = _scored()
    summary = by_label["aa"].summary
    assert "2 of 3 reference models" in summary and "2 of 4 ideas" in summary
    assert "m0" not in summary and "m1" not in summary


def test_cluster_round_trips_through_a_dict():
    by_label, _ = _scored()
    c = by_label["aa"]
    data = c.to_dict()
    assert data["summary"] == c.summary
    again = Cluster.from_dict(data)
    assert (again.id, again.score, again.aliases) == (c.id, c.score, c.aliases)


def test_ranked_iteration_filters_on_arrays_and_builds_only_what_it_yields():
    from engine.tig.score import partition_labels, score_partition

    g = hand_graph()
    idx = {label: v for v, label in enumerate(g.canon.node_label)}
    parts = [np.array([idx["aa"], idx["bb"]]), np.array([idx["cc"]]), np.array([idx["pp"]])]
    scored = score_partition(g, partition_labels(parts, g.canon.n_nodes))
    motifs_of_two_models = list(scored.iter_ranked(types=("motif",), min_models=2))
    assert [c.label for c in motifs_of_two_models] == ["aa"]
    assert len(scored._built) == 1
    assert [c.label for c in scored.iter_ranked(types=("purpose",))] == ["pp"]


def test_ranking_by_the_tables_label_text_order_equals_sorting_the_label_strings():
    """score_partition ranks nodes by label through the table's label ids (ranked once per task); a
    canonicalisation without ids takes the string sort. Both rank every leave-out population alike."""
    from dataclasses import replace
    from itertools import combinations

    from engine.tig.population import PopulationIndex
    from engine.tig.score import score_partition
    from tests.engine.tig.planted import MODELS, planted_population

    index = PopulationIndex(planted_population())
    for pair in list(combinations(MODELS, 2))[::11]:
        graph = index.graph(pair)
        assert graph.canon.node_label_id is not None
        labels = np.arange(graph.n_nodes)  # every node its own cluster: the ranking is all node order
        by_ids = score_partition(graph, labels)
        by_text = score_partition(replace(graph, canon=replace(graph.canon, node_label_id=None)), labels)
        assert np.array_equal(by_ids.node_rank, by_text.node_rank)
        assert np.array_equal(by_ids.order, by_text.order)


def test_ranked_iteration_with_distinct_labels_builds_only_the_first_cluster_of_each_label():
    """Items never repeat a pattern label, so the lower-ranked clusters of a label already yielded are
    neither yielded nor built; the yielded ones are those the plain iteration yields, in its order."""
    from itertools import combinations

    from engine.tig.population import PopulationIndex
    from tests.benchmarks.bench_tig import synthetic_task  # its vocabulary repeats words across types
    from tests.engine.tig.planted import MODELS

    index = PopulationIndex(synthetic_task(0))
    repeated = 0
    for pair in list(combinations(MODELS, 2))[::11]:
        every = [c.label for c in index.scored_clusters(pair)[0].iter_ranked()]
        first_of_each = list(dict.fromkeys(every))
        scored = index.scored_clusters(pair)[0]
        assert [c.label for c in scored.iter_ranked(distinct_labels=True)] == first_of_each
        assert len(scored._built) == len(first_of_each)
        repeated += len(every) - len(first_of_each)
    assert repeated  # a label of two types was met


def test_iter_ranked_filters_as_the_array_masks_did():
    # the clusters, in order, that the former numpy filter (n_models and head type masks over the ranking) let
    # through, for every filter a context or a caller asks for
    from engine.tig.atoms import ATOM_TYPES
    from engine.tig.population import PopulationIndex
    from tests.benchmarks.bench_tig import synthetic_task

    def as_before(scored, types, min_models):
        keep = scored.n_models[scored.order] >= min_models
        if types is not None:
            wanted = np.zeros(len(ATOM_TYPES), dtype=bool)
            wanted[[ATOM_TYPES.index(t) for t in types]] = True
            keep &= wanted[scored.node_type[scored.head[scored.order]]]
        return scored.order[keep].tolist()

    index = PopulationIndex(synthetic_task(2), embedder=None, max_contexts=0)
    checked = 0
    for pair in [index.models[:2], index.models[4:6], index.models[-2:]]:
        scored = index.scored_clusters(pair)[0]
        for types in (None, ("motif",), ("motif", "concept", "mechanism"), ("purpose", "audience")):
            for min_models in (0, 2, 5, 99):
                ours = [c.nodes for c in scored.iter_ranked(types=types, min_models=min_models)]
                theirs = [scored.cluster(c).nodes for c in as_before(scored, types, min_models)]
                assert ours == theirs
                checked += len(ours)
    assert checked

import math

import numpy as np
import pytest

from engine.tig.atoms import AtomTable, idea_record
from engine.tig.canonical import canonicalise
from engine.tig.graph import (
    SIMILARITY_THRESHOLD,
    build_graph,
    build_graph_networkx,
    cooccurrence_weights,
    graph_export,
    npmi,
    similarity_weights,
    typed_relation_counts,
)
from engine.tig.offline import OfflineExtractor
from tests.engine.tig.planted import TableEmbedder, hand_graph, planted_population


def test_npmi_is_plus_one_when_a_pair_is_in_every_response():
    # p(u,v) = 1: the population-cliché case, where the epsilon-smoothed formula would say -1
    assert npmi(np.array(4), np.array(4), np.array(4), 4) == 1.0


def test_npmi_is_minus_one_when_a_pair_never_co_occurs():
    assert npmi(np.array(0), np.array(2), np.array(2), 4) == -1.0


def test_npmi_matches_hand_values():
    # always together when present: p(u,v) = p(u) = p(v) = 1/2 -> log 2 / log 2 = 1
    assert npmi(np.array(2), np.array(2), np.array(2), 4) == pytest.approx(1.0)
    # independent: p(u,v) = 1/4 = p(u) p(v) -> 0
    assert npmi(np.array(1), np.array(2), np.array(2), 4) == pytest.approx(0.0)
    # p(u,v) = 1/4, p(u) = 3/4, p(v) = 1/4 -> log(4/3) / log 4
    assert npmi(np.array(1), np.array(3), np.array(1), 4) == pytest.approx(math.log(4 / 3) / math.log(4))


def test_cooccurrence_weights_clip_negative_npmi_to_zero():
    # responses x nodes: u and v never together, u and w always together
    inc = np.array([[1, 0, 1], [1, 0, 1], [0, 1, 0], [0, 1, 0]], dtype=bool)
    w = cooccurrence_weights(inc)
    assert w[0, 1] == 0.0 and w[0, 2] == pytest.approx(1.0)
    assert np.all(np.diag(w) == 0)


def test_similarity_edge_starts_exactly_at_the_threshold():
    s = SIMILARITY_THRESHOLD
    e = np.array([[1.0, 0.0], [s, math.sqrt(1 - s * s)], [s - 1e-4, math.sqrt(1 - (s - 1e-4) ** 2)]])
    w = similarity_weights(e @ e.T, np.array([0, 0, 0]))
    assert w[0, 1] == pytest.approx(s)
    assert w[0, 2] == 0.0


def test_similarity_edges_join_only_atoms_of_one_type():
    cos = np.ones((2, 2))
    assert similarity_weights(cos, np.array([0, 1]))[0, 1] == 0.0
    assert similarity_weights(cos, np.array([1, 1]))[0, 1] == pytest.approx(1.0)


def test_typed_relations_count_each_response_once():
    # response 0 states u->v twice (two atoms merged into u); response 1 once; v->u in response 2
    rows = typed_relation_counts(
        np.array([0, 0, 1, 2]), np.array([0, 0, 0, 1]), np.array([1, 1, 1, 0]), np.array([0, 0, 0, 0]), 2
    )
    assert sorted(rows.tolist()) == [[0, 1, 0, 2], [1, 0, 0, 1]]


def _typed_relation_counts_as_before(response, source, target, relation, n_nodes):
    # the rows as typed_relation_counts built them before its run lengths were read from run_starts
    ok = source != target
    response, source, target, relation = response[ok], source[ok], target[ok], relation[ok]
    if not len(source):
        return np.zeros((0, 4), dtype=np.int64)
    edge = (relation * n_nodes + source) * n_nodes + target
    n_units = int(response.max()) + 1
    per_response = np.unique(edge * n_units + response) // n_units
    starts = np.concatenate(([True], per_response[1:] != per_response[:-1])).nonzero()[0]
    codes = per_response[starts]
    counts = np.diff(np.concatenate((starts, [len(per_response)])))
    r, rest = np.divmod(codes, n_nodes * n_nodes)
    u, v = np.divmod(rest, n_nodes)
    return np.column_stack([u, v, r, counts])


def test_typed_relation_counts_are_the_former_rows_with_any_unit_bound():
    rng = np.random.default_rng(5)
    for rows, nodes, units in ((0, 3, 2), (1, 2, 1), (5, 2, 3), (40, 6, 4), (300, 120, 36)):
        response = rng.integers(0, units, rows)
        source, target = rng.integers(0, nodes, rows), rng.integers(0, nodes, rows)
        relation = rng.integers(0, 5, rows)
        before = _typed_relation_counts_as_before(response, source, target, relation, nodes)
        for bound in (None, units, units + 7):
            after = typed_relation_counts(response, source, target, relation, nodes, bound)
            assert after.dtype == before.dtype and after.shape == before.shape
            assert after.tolist() == before.tolist()


def test_hand_graph_weights_sum_cooccurrence_similarity_and_typed_counts():
    g = hand_graph()
    idx = {label: v for v, label in enumerate(g.canon.node_label)}
    a, b, c, p = idx["aa"], idx["bb"], idx["cc"], idx["pp"]
    assert g.cooccurrence[a, b] == pytest.approx(1.0)  # NPMI 1
    assert g.similarity[a, b] == pytest.approx(0.9, abs=1e-6)  # same type, cos 0.9
    assert g.cooccurrence[c, p] == pytest.approx(0.5)  # log 2 / log 4
    assert g.similarity[c, p] == 0.0  # different types
    assert g.typed[c, p] == g.typed[p, c] == 1.0  # one "supports", collapsed
    assert g.weight[a, c] == 0.0
    np.testing.assert_allclose(g.degree[[a, b, c, p]], [1.9, 1.9, 1.5, 1.5], atol=1e-6)


def test_graph_records_which_models_used_each_node():
    g = hand_graph()
    idx = {label: v for v, label in enumerate(g.canon.node_label)}
    assert g.models == ["m0", "m1", "m2"]
    assert g.node_models[idx["aa"]].tolist() == [True, True, False]
    assert g.node_models[idx["cc"]].tolist() == [False, False, True]


def test_networkx_construction_gives_the_same_weights():
    ideas = [idea_record(i) for i in planted_population()]
    exts = [OfflineExtractor().extract(i) for i in ideas]
    table = AtomTable.build(exts, TableEmbedder(dim=16).embed)
    canon = canonicalise(table)
    dense = build_graph(canon).weight
    g = build_graph_networkx(canon)
    from_nx = np.zeros_like(dense)
    for u, v, data in g.edges(data=True):
        from_nx[u, v] = from_nx[v, u] = data["weight"]
    np.testing.assert_allclose(dense, from_nx, atol=1e-9)
    assert g.number_of_edges() > 100


def test_viewer_export_has_positions_degrees_and_cluster_ids():
    from engine.tig.clusters import same_type_clusters
    from engine.tig.score import score_clusters

    g = hand_graph()
    clusters = score_clusters(g, same_type_clusters(g.weight, g.canon.node_type))
    data = graph_export(g, clusters)
    assert len(data["nodes"]) == 4
    assert all({"x", "y", "weighted_degree", "cluster_id", "type"} <= set(n) for n in data["nodes"])
    assert {n["cluster_id"] for n in data["nodes"]} == {c.id for c in clusters}
    ids = {n["label"]: n["id"] for n in data["nodes"]}
    edge = next(e for e in data["edges"] if {e["source"], e["target"]} == {ids["aa"], ids["bb"]})
    assert edge["weight"] == pytest.approx(edge["cooccurrence"] + edge["similarity"] + edge["typed"])
    assert data["typed_relations"][0]["relation"] == "supports"


def test_upper_pairs_lists_a_matrix_s_upper_entries_in_row_major_order_at_every_size():
    # small matrices go through np.nonzero, larger ones through the flattened mask: the same answer
    from engine.tig.graph import upper_pairs

    rng = np.random.default_rng(7)
    for n in (0, 1, 3, 15, 16, 17, 40, 150):
        for shape in ((n, n), (n, n + 3)):
            matrix = np.where(rng.random(shape) < 0.2, rng.random(shape), 0.0)
            for m in (matrix, matrix != 0):
                i, j = upper_pairs(m)
                ri, rj = np.nonzero(m)
                keep = ri < rj
                assert i.dtype == ri.dtype and j.dtype == rj.dtype
                assert i.tolist() == ri[keep].tolist() and j.tolist() == rj[keep].tolist()


def test_cooccurrence_counted_per_response_is_the_matrix_product_bit_for_bit():
    # a boolean incidence is counted unit by unit; the same 0/1 matrix as floats goes through X^T X
    rng = np.random.default_rng(3)
    for units, nodes in ((1, 1), (1, 5), (4, 1), (6, 9), (36, 122), (40, 30)):
        for share in (0.0, 0.05, 0.3, 1.0):
            inc = rng.random((units, nodes)) < share
            counted = cooccurrence_weights(inc)
            multiplied = cooccurrence_weights(inc.astype(np.float64))
            assert counted.tobytes() == multiplied.tobytes()


def test_similarity_weights_are_np_where_of_the_kept_cosines_bit_for_bit():
    rng = np.random.default_rng(4)
    for n in (1, 5, 60):
        cos = rng.uniform(-1, 1, (n, n))
        cos = (cos + cos.T) / 2
        cos[rng.random((n, n)) < 0.1] = -0.0
        types = rng.integers(0, 3, n)
        for threshold in (SIMILARITY_THRESHOLD, 0.0, -0.5):
            for t in (None, types):
                keep = cos >= threshold
                if t is not None:
                    keep &= t[:, None] == t[None, :]
                expected = np.where(keep, cos, 0.0)
                np.fill_diagonal(expected, 0.0)
                assert similarity_weights(cos, t, threshold).tobytes() == expected.tobytes()


def test_the_combined_weights_are_the_sum_of_the_three_dense_parts_bit_for_bit():
    # build_graph adds each part where it has entries; the dense parts, made on demand, summed as before
    from engine.tig.population import PopulationIndex
    from tests.benchmarks.bench_tig import synthetic_task

    index = PopulationIndex(synthetic_task(2), embedder=None, max_contexts=0)  # MiniLM: similarity edges too
    graphs = [index.graph(pair) for pair in ([], index.models[:2], index.models[3:5], index.models[-2:])]
    graphs.append(hand_graph())
    for g in graphs:
        summed = g.cooccurrence + g.similarity + g.typed
        assert g.weight.tobytes() == summed.tobytes()
        assert g.degree.tobytes() == summed.sum(axis=1).tobytes()
        assert g.cooccurrence.tobytes() == cooccurrence_weights(g.incidence).tobytes()
        assert g.similarity.tobytes() == similarity_weights(g.canon.node_similarity, None).tobytes()
    assert graphs[0].typed.any() and graphs[0].similarity.any()


def test_collapsed_typed_entries_counted_from_the_pairs_are_those_of_the_rows():
    # the positions and counts build_graph adds to the weights, against _typed_entries of the rows; added to
    # the same float weights, the same bits
    from engine.tig.graph import _collapsed_typed_entries, _relation_mentions, _typed_entries, _typed_rows

    rng = np.random.default_rng(17)
    for rows, nodes, units in ((0, 3, 2), (1, 2, 1), (3, 1, 2), (5, 2, 3), (40, 6, 4), (300, 120, 36), (900, 40, 36)):
        response = rng.integers(0, units, rows)
        source, target = rng.integers(0, nodes, rows), rng.integers(0, nodes, rows)
        relation = rng.integers(0, 5, rows)
        per_response = _relation_mentions(response, source, target, relation, nodes, units)
        before_at, before = _typed_entries(_typed_rows(per_response, nodes), nodes)
        after_at, after = _collapsed_typed_entries(per_response, nodes)
        assert after_at.tolist() == before_at.tolist()
        assert after.tolist() == before.tolist()
        base = rng.random(nodes * nodes) * (rng.random(nodes * nodes) < 0.3)
        one, other = base.copy(), base.copy()
        one[before_at] += before
        other[after_at] += after
        assert one.tobytes() == other.tobytes()


def test_upper_slot_pairs_are_triu_indices_and_only_small_widths_are_kept():
    """Every width's pairs are np.triu_indices(width, 1), read-only; a width past the kept ones is made anew
    at each call, so a worker that meets large same-type subgraphs keeps no memory for them."""
    from engine.tig.graph import _CACHED_SLOT_WIDTH, _cached_triu, upper_slot_pairs

    for width in (1, 2, 7, _CACHED_SLOT_WIDTH, _CACHED_SLOT_WIDTH + 1, 300):
        a, b = upper_slot_pairs(width)
        expected = np.triu_indices(width, 1)
        np.testing.assert_array_equal(a, expected[0])
        np.testing.assert_array_equal(b, expected[1])
        assert not a.flags.writeable and not b.flags.writeable
    assert upper_slot_pairs(7)[0] is upper_slot_pairs(7)[0]
    before = _cached_triu.cache_info().currsize
    assert upper_slot_pairs(300)[0] is not upper_slot_pairs(300)[0]
    assert _cached_triu.cache_info().currsize == before

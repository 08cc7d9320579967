import random
import subprocess
import sys
from itertools import pairwise

import numpy as np
import pytest

from engine.tig.clusters import (
    LEIDEN_IMPLEMENTATIONS,
    component_clusters,
    leiden_available,
    leiden_clusters,
    same_type_clusters,
    same_type_labels,
)

implementations = pytest.mark.parametrize(
    "implementation",
    [
        pytest.param(i, marks=pytest.mark.skipif(not leiden_available(i), reason=f"{i} not installed"))
        for i in LEIDEN_IMPLEMENTATIONS
    ],
)


def cliques(sizes, bridge=0.05):
    """Disjoint unit-weight cliques; consecutive cliques joined by one edge of weight ``bridge``."""
    n = sum(sizes)
    w = np.zeros((n, n))
    start = 0
    firsts = []
    for s in sizes:
        w[start : start + s, start : start + s] = 1.0
        firsts.append(start)
        start += s
    np.fill_diagonal(w, 0.0)
    for a, b in pairwise(firsts):
        w[a, b] = w[b, a] = bridge
    return w


def as_sets(clusters):
    return sorted(sorted(c.tolist()) for c in clusters)


@implementations
def test_leiden_finds_two_obvious_communities(implementation):
    found = leiden_clusters(cliques([5, 5]), implementation=implementation)
    assert as_sets(found) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]


def test_components_merge_communities_joined_by_any_edge():
    assert as_sets(component_clusters(cliques([5, 5]))) == [list(range(10))]


def test_components_above_the_bridge_weight_agree_with_leiden():
    w = cliques([5, 5], bridge=0.05)
    assert as_sets(component_clusters(w, min_weight=0.1)) == as_sets(leiden_clusters(w))


@implementations
def test_leiden_is_reproducible_with_its_fixed_seed(implementation):
    rng = np.random.default_rng(3)
    w = rng.random((60, 60)) * (rng.random((60, 60)) < 0.1)
    w = np.triu(w, 1) + np.triu(w, 1).T
    runs = [as_sets(leiden_clusters(w, implementation=implementation, size_cap=100)) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_seeded_leiden_leaves_the_global_random_state_alone():
    random.seed(11)
    expected = random.random()
    random.seed(11)
    leiden_clusters(cliques([4, 4, 4]))
    assert random.random() == expected


@implementations
def test_isolated_nodes_are_singletons_and_a_lone_pair_stays_together(implementation):
    w = np.pad(cliques([3]), (0, 4))
    w[5, 6] = w[6, 5] = 0.5
    assert as_sets(leiden_clusters(w, implementation=implementation)) == [[0, 1, 2], [3], [4], [5, 6]]


def ring_of_triangles(k):
    """k triangles in a ring, one edge between neighbours: modularity merges neighbouring triangles
    (its resolution limit), which is what re-partitioning under a size cap undoes."""
    w = cliques([3] * k, bridge=1.0)
    w[0, 3 * (k - 1)] = w[3 * (k - 1), 0] = 1.0
    return w


@implementations
def test_communities_above_the_size_cap_are_partitioned_again(implementation):
    w = ring_of_triangles(30)
    assert max(len(c) for c in leiden_clusters(w, size_cap=100, implementation=implementation)) > 3
    capped = leiden_clusters(w, size_cap=3, implementation=implementation)
    assert sorted(len(c) for c in capped) == [3] * 30
    assert as_sets(capped) == [[3 * i, 3 * i + 1, 3 * i + 2] for i in range(30)]


def test_component_fallback_splits_an_oversized_component_by_dropping_its_lightest_edges():
    w = cliques([4, 4], bridge=0.5)
    assert as_sets(component_clusters(w, size_cap=5)) == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_clusters_never_mix_atom_types():
    w = np.ones((6, 6)) - np.eye(6)
    types = np.array([0, 1, 0, 1, 0, 1])
    for method in ("leiden", "components"):
        clusters = same_type_clusters(w, types, method=method)
        assert as_sets(clusters) == [[0, 2, 4], [1, 3, 5]]


def test_unknown_clustering_method_or_implementation_is_refused():
    with pytest.raises(ValueError):
        same_type_clusters(np.zeros((1, 1)), np.array([0]), method="louvain")
    with pytest.raises(ValueError):
        leiden_clusters(np.zeros((2, 2)), implementation="networkit")


def test_clustering_only_some_types_keeps_their_labels_and_makes_the_others_singletons():
    rng = np.random.default_rng(4)
    w = rng.random((30, 30)) * (rng.random((30, 30)) < 0.3)
    w = np.triu(w, 1) + np.triu(w, 1).T
    types = rng.integers(0, 4, 30)
    full = same_type_labels(w, types)
    partial = same_type_labels(w, types, only_types={0, 2})
    chosen = np.isin(types, [0, 2])
    # the chosen types' partition and relative cluster order are unchanged
    first = {}
    for node in np.flatnonzero(chosen):
        first.setdefault(int(full[node]), int(partial[node]))
    assert all(first[int(full[v])] == partial[v] for v in np.flatnonzero(chosen))
    assert sorted(first) == sorted(first, key=first.__getitem__)
    assert len(set(partial[~chosen].tolist())) == int((~chosen).sum())


def test_a_memo_gives_the_labels_of_a_fresh_run_and_reads_a_repeated_subgraph_back():
    rng = np.random.default_rng(7)
    w = rng.random((30, 30)) * (rng.random((30, 30)) < 0.3)
    w = np.triu(w, 1) + np.triu(w, 1).T
    types = rng.integers(0, 3, 30)
    memo = {}
    first = same_type_labels(w, types, memo=memo)
    assert np.array_equal(first, same_type_labels(w, types))
    assert len(memo) == 3  # one entry per type subgraph
    # the same subgraphs again: every type is read back, none is recomputed
    for key in memo:
        memo[key] = np.zeros_like(memo[key])
    assert same_type_labels(w, types, memo=memo).tolist() == types.tolist()  # one cluster per type


def test_a_type_whose_nodes_are_not_contiguous_is_clustered_as_if_they_were():
    w = cliques([3, 3])
    types = np.array([0, 0, 0, 1, 1, 1])
    shuffle = np.array([0, 3, 1, 4, 2, 5])  # the two types interleaved
    contiguous = same_type_labels(w, types)
    interleaved = same_type_labels(w[np.ix_(shuffle, shuffle)], types[shuffle])
    assert interleaved.tolist() == contiguous[shuffle].tolist()


def test_clustering_loads_igraph_without_loading_matplotlib():
    code = (
        "import sys, numpy as np\n"
        "from engine.tig.clusters import same_type_labels\n"
        "same_type_labels(np.ones((3, 3)) - np.eye(3), np.zeros(3, dtype=int))\n"
        "assert 'igraph' in sys.modules and 'matplotlib' not in sys.modules\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def _random_edge_lists(count, seed=1):
    """Random sparse undirected graphs as row-major ``iu < iv`` edge lists with weights (as upper_pairs gives)."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(2, 40))
        iu, iv = np.nonzero(np.triu(rng.random((n, n)) < rng.random() * 0.3, 1))
        yield n, iu, iv, rng.random(len(iu)), rng


def _leiden_once_through_igraphs_subgraph(n, iu, iv, w, resolution, seed, implementation):
    """The level as it was before its graph was built for the rest alone: igraph's components of the whole
    graph, and the rest's graph taken by ``induced_subgraph``."""
    from engine.tig.clusters import _import_igraph, _leiden_membership

    labels = np.arange(n, dtype=np.int64)
    if not len(iu):
        return labels
    total = float(w.sum())
    g = _import_igraph().Graph(
        n=n, edges=list(zip(iu.tolist(), iv.tolist())), edge_attrs={"weight": w.tolist()}
    )
    comp = np.asarray(g.connected_components().membership, dtype=np.int64)
    sizes = np.bincount(comp)
    edge_size = sizes[comp[iu]]
    for e in np.flatnonzero(edge_size == 2).tolist():
        if 2.0 * total > resolution * w[e]:
            labels[iv[e]] = labels[iu[e]]
    rest = np.flatnonzero(sizes[comp] >= 3)
    if len(rest):
        m_rest = float(w[edge_size >= 3].sum())
        sub = g if len(rest) == n else g.induced_subgraph(rest.tolist())
        labels[rest] = n + _leiden_membership(sub, resolution * m_rest / total, seed, implementation)
    return labels


def test_the_induced_edge_list_is_igraphs_induced_subgraph_edge_for_edge():
    # both of igraph's ways (copy and delete above half the nodes, from scratch otherwise), weights included
    from engine.tig.clusters import _import_igraph, _induced_edges

    ig = _import_igraph()
    ways = set()
    for n, iu, iv, w, rng in _random_edge_lists(600):
        if not len(iu):
            continue
        g = ig.Graph(n=n, edges=list(zip(iu.tolist(), iv.tolist())), edge_attrs={"weight": w.tolist()})
        nodes = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False))
        sub = g.induced_subgraph(nodes.tolist())
        su, sv, sw = _induced_edges(n, iu, iv, w, nodes)
        ours = ig.Graph(n=len(nodes), edges=list(zip(su, sv)), edge_attrs={"weight": sw})
        assert ours.get_edgelist() == sub.get_edgelist()
        assert ours.es["weight"] == sub.es["weight"]
        ways.add(len(nodes) / n > 0.5)
    assert ways == {True, False}


@implementations
def test_a_leiden_level_is_the_level_built_through_igraphs_subgraph(implementation):
    # bit for bit on small edge cases, random graphs and every same-type subgraph of a bench_tig task's populations
    from engine.tig.clusters import LEIDEN_SEED, _dense, _leiden_level
    from engine.tig.graph import upper_pairs
    from engine.tig.population import PopulationIndex
    from tests.benchmarks.bench_tig import synthetic_task

    cases = [(n, iu, iv, w) for n, iu, iv, w, _ in _random_edge_lists(200, seed=3)]

    def edge(*pairs):
        return (
            np.array([p[0] for p in pairs], dtype=np.int64),
            np.array([p[1] for p in pairs], dtype=np.int64),
        )

    for n, (iu, iv) in [
        (1, edge()),  # a lone node
        (2, edge((0, 1))),  # one pair: no Leiden call
        (4, edge((0, 1), (2, 3))),  # two pairs: no Leiden call
        (3, edge((0, 1), (1, 2))),  # every node in the rest
        (7, edge((0, 3), (3, 6), (1, 2))),  # a pair beside a path: the rest is under half the nodes
        (5, edge((0, 1), (1, 2), (2, 0))),  # a triangle and two isolated nodes: the rest is over half
    ]:
        cases.append((n, iu, iv, np.linspace(0.3, 1.7, len(iu))))
    index = PopulationIndex(synthetic_task(4), embedder=None, max_contexts=0)
    for pair in [index.models[:2], index.models[5:7], index.models[-2:]]:
        graph = index.graph(pair)
        for t in np.unique(graph.canon.node_type).tolist():
            nodes = np.flatnonzero(graph.canon.node_type == t)
            block = graph.weight[np.ix_(nodes, nodes)]
            iu, iv = upper_pairs(block)
            cases.append((len(nodes), iu, iv, block[iu, iv]))
    for n, iu, iv, w in cases:
        for resolution in (1.0, 0.5):
            ours, k, largest = _leiden_level(n, iu, iv, w, resolution, LEIDEN_SEED, implementation)
            theirs = _dense(_leiden_once_through_igraphs_subgraph(
                n, iu, iv, w, resolution, LEIDEN_SEED, implementation
            ))
            assert ours.tobytes() == theirs.tobytes()
            assert (k, largest) == (len(np.unique(theirs)), int(np.bincount(theirs).max()))


def test_leiden_on_a_bare_graphbase_is_graph_community_leiden_membership_for_membership():
    # the C routine called directly, weights as a list, against the Graph + edge attribute + wrapper path
    from engine.tig.clusters import LEIDEN_SEED, _igraph_leiden_membership, _import_igraph, _leiden_membership

    ig = _import_igraph()
    for n, iu, iv, w, _ in _random_edge_lists(300, seed=5):
        edges = list(zip(iu.tolist(), iv.tolist()))
        g = ig.Graph(n=n, edges=edges, edge_attrs={"weight": w.tolist()})
        for resolution in (1.0, 0.37):
            theirs = _leiden_membership(g, resolution, LEIDEN_SEED, "igraph")
            ours = _igraph_leiden_membership(n, edges, w.tolist(), resolution, LEIDEN_SEED)
            assert ours == theirs.tolist()


def test_leiden_with_the_shared_generator_is_leiden_with_a_fresh_random_of_the_seed():
    # the generator is reset to Random(seed)'s state before every call, not seeded anew: the same draws
    from engine.tig.clusters import (
        LEIDEN_ITERATIONS,
        _igraph_leiden_membership,
        _import_igraph,
        _seeded_generator,
    )

    ig = _import_igraph()
    for seed in (20240817, 3):
        generator = _seeded_generator(seed)
        fresh = random.Random(seed)
        assert [generator.random() for _ in range(5)] + [generator.getrandbits(32), generator.gauss(0, 1)] == [
            fresh.random() for _ in range(5)
        ] + [fresh.getrandbits(32), fresh.gauss(0, 1)]
        for n, iu, iv, w, _ in _random_edge_lists(60, seed=9):
            edges = list(zip(iu.tolist(), iv.tolist()))
            g = ig.Graph(n=n, edges=edges, edge_attrs={"weight": w.tolist()})
            ig.set_random_number_generator(random.Random(seed))
            try:
                theirs = g.community_leiden(objective_function="modularity", weights="weight", resolution=1.0,
                                            n_iterations=LEIDEN_ITERATIONS).membership
            finally:
                ig.set_random_number_generator(random)
            assert _igraph_leiden_membership(n, edges, w.tolist(), 1.0, seed) == theirs


def _leiden_hierarchy_as_before(n, iu, iv, w, *, resolution, seed, size_cap, implementation, depth=0):
    """The hierarchy as it was before its first level ran on lists: each level from numpy arrays (through
    igraph's own subgraph), relabelled by the array-based _dense."""
    from engine.tig.clusters import _MAX_DEPTH, _dense

    if n == 0:
        return np.zeros(0, dtype=np.int64)
    labels = _dense(_leiden_once_through_igraphs_subgraph(n, iu, iv, w, resolution, seed, implementation))
    sizes = np.bincount(labels)
    if len(sizes) == 1 or depth + 1 >= _MAX_DEPTH:
        return labels
    next_label = len(sizes)
    split = False
    for c in (sizes > size_cap).nonzero()[0].tolist():
        members = (labels == c).nonzero()[0]
        position = np.full(n, -1, dtype=np.int64)
        position[members] = np.arange(len(members))
        keep = (position[iu] >= 0) & (position[iv] >= 0)
        inner = _leiden_hierarchy_as_before(
            len(members), position[iu[keep]], position[iv[keep]], w[keep], resolution=resolution, seed=seed,
            size_cap=size_cap, implementation=implementation, depth=depth + 1)
        if inner.max() > 0:
            labels[members] = np.where(inner == 0, c, next_label + inner - 1)
            next_label += int(inner.max())
            split = True
    return _dense(labels) if split else labels


def _same_type_labels_as_before(weights, types, *, size_cap, implementation, only_types=None):
    """same_type_labels as it was before the type's edges were read from its upper triangle's slots."""
    from engine.tig.clusters import LEIDEN_RESOLUTION, LEIDEN_SEED
    from engine.tig.graph import upper_pairs

    labels = np.zeros(len(types), dtype=np.int64)
    offset = 0
    for t in np.unique(types).tolist():
        nodes = np.flatnonzero(types == t)
        if only_types is not None and t not in only_types:
            labels[nodes] = np.arange(offset, offset + len(nodes))
            offset += len(nodes)
            continue
        block = weights[np.ix_(nodes, nodes)]
        iu, iv = upper_pairs(block)
        local = _leiden_hierarchy_as_before(len(nodes), iu, iv, block[iu, iv], resolution=LEIDEN_RESOLUTION,
                                            seed=LEIDEN_SEED, size_cap=size_cap, implementation=implementation)
        labels[nodes] = offset + local
        offset += int(local.max()) + 1
    return labels


@implementations
def test_same_type_labels_are_the_labels_of_the_array_based_hierarchy(implementation):
    # bit for bit: random weight matrices of several types (contiguous or not, with size caps that make the
    # hierarchy split again or not) and every population graph of a bench_tig task's first pairs
    from engine.tig.clusters import _leiden_hierarchy
    from engine.tig.population import PopulationIndex
    from tests.benchmarks.bench_tig import synthetic_task

    rng = np.random.default_rng(11)
    cases = []
    for _ in range(60):
        n = int(rng.integers(1, 45))
        upper = np.triu(rng.random((n, n)) * (rng.random((n, n)) < rng.random() * 0.4), 1)
        types = rng.integers(0, int(rng.integers(1, 4)), n)
        cases.append((upper + upper.T, np.sort(types) if rng.random() < 0.5 else types))
    index = PopulationIndex(synthetic_task(4), embedder=None, max_contexts=0)
    for pair in [index.models[:2], index.models[3:5], index.models[-2:]]:
        graph = index.graph(pair)
        cases.append((graph.weight, graph.canon.node_type))
    splits = 0
    for weights, types in cases:
        for size_cap in (12, 3):
            for only_types in (None, {1}):
                ours = same_type_labels(weights, types, size_cap=size_cap, implementation=implementation,
                                        only_types=only_types)
                theirs = _same_type_labels_as_before(weights, types, size_cap=size_cap,
                                                     implementation=implementation, only_types=only_types)
                assert ours.tobytes() == theirs.tobytes()
        iu, iv = np.nonzero(np.triu(weights, 1))
        for size_cap in (12, 4, 2):
            kwargs = dict(resolution=1.0, seed=20240817, size_cap=size_cap, implementation=implementation)
            ours = _leiden_hierarchy(len(weights), iu, iv, weights[iu, iv], **kwargs)
            theirs = _leiden_hierarchy_as_before(len(weights), iu, iv, weights[iu, iv], **kwargs)
            assert ours.tobytes() == theirs.tobytes()
            splits += int(ours.max(initial=0)) > int(_leiden_hierarchy_as_before(
                len(weights), iu, iv, weights[iu, iv], **{**kwargs, "size_cap": 10**6}).max(initial=0))
    assert splits  # some hierarchies partitioned a community again


def test_a_leiden_level_hands_igraph_the_rests_induced_edge_list_and_resolution(monkeypatch):
    # the graph Leiden reads, edge for edge in igraph's induced_subgraph order, and its resolution to the bit
    from engine.tig import clusters
    from engine.tig.clusters import LEIDEN_SEED, _import_igraph, _induced_edges, _leiden_level

    seen = []
    monkeypatch.setattr(clusters, "_igraph_leiden_membership",
                        lambda n, edges, weights, resolution, seed: seen.append(
                            (n, [tuple(e) for e in edges], weights, resolution)) or list(range(n)))
    ways = set()
    ig = _import_igraph()
    for n, iu, iv, w, _ in _random_edge_lists(400, seed=13):
        seen.clear()
        _leiden_level(n, iu, iv, w, 0.7, LEIDEN_SEED, "igraph")
        graph = ig.Graph(n=n, edges=list(zip(iu.tolist(), iv.tolist())))
        comp = np.asarray(graph.connected_components().membership)
        sizes = np.bincount(comp, minlength=n)
        rest = np.flatnonzero(sizes[comp] >= 3)
        if not len(rest):
            assert seen == []
            continue
        su, sv, sw = (iu.tolist(), iv.tolist(), w.tolist()) if len(rest) == n else _induced_edges(n, iu, iv, w, rest)
        m_rest = float(w[sizes[comp[iu]] >= 3].sum())
        assert seen == [(len(rest), list(zip(su, sv)), sw, 0.7 * m_rest / float(w.sum()))]
        ways.add(len(rest) / n > 0.5)
    assert ways == {True, False}

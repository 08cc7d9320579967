"""A Leiden level's compiled bookkeeping (engine.tig.leiden_kernel, through engine.tig.clusters._leiden_level)
is the list-based form it replaced, kept here verbatim as the oracle: the same labels, and igraph handed the
same graph -- node count, edge list in the same order, weights and resolution to the bit -- on small edge
cases, random graphs (with zero, negative-zero and NaN weights) and every same-type subgraph of several
tasks' leave-two-out populations; the hierarchy on top of it gives the same labels at several size caps."""

from __future__ import annotations

import numpy as np
import pytest

from engine.tig import clusters
from engine.tig.clusters import (
    _MAX_DEPTH,
    LEIDEN_IMPLEMENTATIONS,
    LEIDEN_SEED,
    _dense,
    _leiden_hierarchy,
    _leiden_level,
    leiden_available,
)
from engine.tig.graph import upper_pairs
from engine.tig.population import PopulationIndex
from tests.benchmarks.bench_tig import synthetic_task

implementations = pytest.mark.parametrize(
    "implementation",
    [
        pytest.param(i, marks=pytest.mark.skipif(not leiden_available(i), reason=f"{i} not installed"))
        for i in LEIDEN_IMPLEMENTATIONS
    ],
)


def _component_roots_as_before(n, us, vs):
    """The connected component of every node, named by its smallest node (the list form's union-find)."""
    parent = list(range(n))
    for a, b in zip(us, vs):
        while parent[a] != a:
            a = parent[a]
        while parent[b] != b:
            b = parent[b]
        if a < b:
            parent[b] = a
        elif b < a:
            parent[a] = b
    for v in range(n):
        parent[v] = parent[parent[v]]
    return parent


def _leiden_level_as_before(n, us, vs, w, resolution, seed, implementation):
    """The level as it was on Python lists (engine/tig/clusters.py before the kernel), verbatim."""
    labels = list(range(n))
    if not us:
        return labels
    total = float(w.sum())  # m
    ws = w.tolist()
    comp = _component_roots_as_before(n, us, vs)
    sizes = [0] * n
    for root in comp:
        sizes[root] += 1
    edge_size = [sizes[comp[a]] for a in us]
    for e, size in enumerate(edge_size):  # a two-node component has exactly one edge
        if size == 2 and 2.0 * total > resolution * ws[e]:
            labels[vs[e]] = labels[us[e]]
    rest = [v for v in range(n) if sizes[comp[v]] >= 3]
    if rest:
        in_rest = [size >= 3 for size in edge_size]
        m_rest = total if all(in_rest) else float(w[np.array(in_rest, dtype=bool)].sum())
        if len(rest) == n:
            edges, sw = list(zip(us, vs)), ws
        else:
            position = [-1] * n
            for i, v in enumerate(rest):
                position[v] = i
            kept = [(position[a], position[b], x) for a, b, x, inside in zip(us, vs, ws, in_rest) if inside]
            if not len(rest) / n > 0.5:
                kept.sort(key=lambda edge: (edge[1], edge[0]))
            edges = [(a, b) for a, b, _ in kept]
            sw = [x for _, _, x in kept]
        if implementation == "igraph":
            membership = clusters._igraph_leiden_membership(
                len(rest), edges, sw, resolution * m_rest / total, seed)
        else:
            sub = clusters._import_igraph().Graph(n=len(rest), edges=edges, edge_attrs={"weight": sw})
            membership = clusters._leiden_membership(
                sub, resolution * m_rest / total, seed, implementation).tolist()
        for v, m in zip(rest, membership):
            labels[v] = n + m
    return labels


def _leiden_hierarchy_as_before(n, iu, iv, w, *, resolution, seed, size_cap, implementation, depth=0):
    """The hierarchy as it was on the list-based level, verbatim."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    seen = {}
    dense = [seen.setdefault(label, len(seen)) for label in
             _leiden_level_as_before(n, iu.tolist(), iv.tolist(), w, resolution, seed, implementation)]
    k = len(seen)
    if k == 1 or depth + 1 >= _MAX_DEPTH:
        return np.asarray(dense, dtype=np.int64)
    counts = [0] * k
    for label in dense:
        counts[label] += 1
    if max(counts) <= size_cap:
        return np.asarray(dense, dtype=np.int64)
    labels = np.asarray(dense, dtype=np.int64)
    sizes = np.asarray(counts, dtype=np.int64)
    next_label = k
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


def _edge(*pairs):
    return (np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[1] for p in pairs], dtype=np.int64))


def _cases():
    """(n, iu, iv, w): small edge cases, random sparse graphs, and every same-type subgraph of three
    leave-two-out populations of two bench_tig tasks."""
    cases = []
    for n, (iu, iv) in [
        (1, _edge()),  # a lone node
        (2, _edge((0, 1))),  # one pair: no Leiden call
        (4, _edge((0, 1), (2, 3))),  # two pairs: no Leiden call
        (3, _edge((0, 1), (1, 2))),  # every node in the rest
        (7, _edge((0, 3), (3, 6), (1, 2))),  # a pair beside a path: the rest is under half the nodes
        (5, _edge((0, 1), (1, 2), (2, 0))),  # a triangle and two isolated nodes: the rest is over half
        (6, _edge((0, 1), (1, 2), (3, 4), (4, 5))),  # two paths: the rest is exactly half (sorted)
    ]:
        cases.append((n, iu, iv, np.linspace(0.3, 1.7, len(iu))))
    rng = np.random.default_rng(17)
    for _ in range(300):
        n = int(rng.integers(2, 45))
        iu, iv = np.nonzero(np.triu(rng.random((n, n)) < rng.random() * 0.3, 1))
        w = rng.random(len(iu))
        if len(w) and rng.random() < 0.1:  # signed zeros: the sums and the merge test as before
            w[rng.integers(0, len(w), 3)] = rng.choice([0.0, -0.0], 3)
        cases.append((n, iu, iv, w))
    for task in (4, 9):
        index = PopulationIndex(synthetic_task(task), embedder=None, max_contexts=0)
        for pair in [index.models[:2], index.models[5:7], index.models[-2:]]:
            graph = index.graph(pair)
            for t in np.unique(graph.canon.node_type).tolist():
                nodes = np.flatnonzero(graph.canon.node_type == t)
                block = graph.weight[np.ix_(nodes, nodes)]
                iu, iv = upper_pairs(block)
                cases.append((len(nodes), iu, iv, block[iu, iv]))
    return cases


CASES = _cases()
# NaN weights (leidenalg refuses them; igraph's graph is only recorded here): the same sums and merge tests
NAN_CASES = [(n, iu, iv, np.where(np.arange(len(w)) % 4 == 1, np.nan, w)) for n, iu, iv, w in CASES[7:100]]


def _bits(x):
    return np.float64(x).tobytes()


@implementations
def test_a_compiled_level_gives_the_list_forms_labels_numbered_in_order(implementation):
    for n, iu, iv, w in CASES:
        for resolution in (1.0, 0.5):
            labels, k, largest = _leiden_level(n, iu, iv, w, resolution, LEIDEN_SEED, implementation)
            before = _dense(np.asarray(_leiden_level_as_before(
                n, iu.tolist(), iv.tolist(), w, resolution, LEIDEN_SEED, implementation), dtype=np.int64))
            assert labels.dtype == np.int64 and labels.tobytes() == before.tobytes()
            assert (k, largest) == (len(np.unique(before)), int(np.bincount(before).max(initial=0)))


def test_a_compiled_level_hands_igraph_the_list_forms_graph_and_resolution(monkeypatch):
    # node count, edges in order, weights and resolution to the bit: Leiden reads its graph in edge order
    seen = []

    def record(n, edges, weights, resolution, seed):
        seen.append((n, [tuple(e) for e in edges], [_bits(x) for x in weights], _bits(resolution), seed))
        return list(range(n))

    monkeypatch.setattr(clusters, "_igraph_leiden_membership", record)
    calls = 0
    for n, iu, iv, w in CASES + NAN_CASES:
        seen.clear()
        _leiden_level_as_before(n, iu.tolist(), iv.tolist(), w, 0.7, LEIDEN_SEED, "igraph")
        before = list(seen)
        seen.clear()
        _leiden_level(n, iu, iv, w, 0.7, LEIDEN_SEED, "igraph")
        assert seen == before
        calls += len(before)
    assert calls > 200


@implementations
def test_the_hierarchy_on_compiled_levels_is_the_list_forms(implementation):
    splits = 0
    for n, iu, iv, w in CASES[::3]:
        for size_cap in (12, 4, 2):
            kwargs = dict(resolution=1.0, seed=LEIDEN_SEED, size_cap=size_cap, implementation=implementation)
            ours = _leiden_hierarchy(n, iu, iv, w, **kwargs)
            theirs = _leiden_hierarchy_as_before(n, iu, iv, w, **kwargs)
            assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes()
            splits += int(ours.max(initial=0)) > int(_leiden_level(n, iu, iv, w, 1.0, LEIDEN_SEED,
                                                                   implementation)[0].max(initial=0))
    assert splits  # some hierarchies partitioned a community again


def test_the_list_forms_components_are_igraphs():
    # the oracle's union-find splits nodes as igraph's connected components do
    ig = clusters._import_igraph()
    for n, iu, iv, _ in CASES[:120]:
        roots = _component_roots_as_before(n, iu.tolist(), iv.tolist())
        graph = ig.Graph(n=n, edges=list(zip(iu.tolist(), iv.tolist())))
        membership = graph.connected_components().membership
        assert len(set(zip(roots, membership))) == len(set(roots)) == len(set(membership))

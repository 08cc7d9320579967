"""Clusters of same-type atoms (Ekphrasis App. G.4).

"Clusters are formed within same-type subgraphs using hierarchical Leiden when available and weighted
connected components otherwise." Leiden (Traag, Waltman & van Eck 2019) runs on an igraph graph, optimising
the weighted modularity-type quality ``Q = sum_ij (w_ij - gamma k_i k_j / 2m) delta(c_i, c_j)`` (leidenalg's
``RBConfigurationVertexPartition``; igraph's ``objective_function="modularity"``) with resolution
``gamma = 1`` and a fixed seed, so the partition is reproducible -- by igraph's C implementation by default,
or by leidenalg (:data:`LEIDEN_IMPLEMENTATION`). "Hierarchical": a community larger than ``size_cap`` is
partitioned again on its own induced subgraph, recursively, until it fits or Leiden no longer splits it.

The fallback, :func:`component_clusters`, takes connected components over edges of weight > ``min_weight``;
a component above the size cap is split again by dropping its lightest edges until it fits.
"""

from __future__ import annotations

import functools
import random
import sys
import threading
from collections.abc import Collection, Iterator, MutableMapping
from itertools import pairwise

import numpy as np

from engine.tig.distinct import distinct
from engine.tig.graph import upper_pairs, upper_slot_pairs
from engine.tig.leiden_kernel import level_input, level_labels
from engine.tig.subgraph_kernel import type_edge_lists

__all__ = [
    "LEIDEN_IMPLEMENTATION",
    "LEIDEN_IMPLEMENTATIONS",
    "LEIDEN_ITERATIONS",
    "LEIDEN_RESOLUTION",
    "LEIDEN_SEED",
    "LEIDEN_SIZE_CAP",
    "component_clusters",
    "leiden_available",
    "leiden_clusters",
    "same_type_clusters",
    "same_type_labels",
]

# App. G.4 / issue: resolution gamma = 1, fixed seed for reproducible partitions
LEIDEN_RESOLUTION = 1.0
LEIDEN_SEED = 20240817
# largest cluster kept whole before it is re-partitioned (hierarchical Leiden); a checklist anchor should
# name one pattern, and 12 canonical atoms is already a broad one
LEIDEN_SIZE_CAP = 12
_MAX_DEPTH = 4
# Which Leiden code optimises the partition. Both run Traag et al.'s algorithm on the same igraph graph with the
# same objective (modularity, i.e. RB configuration at gamma = 1) and a fixed seed. igraph's C implementation
# is the default because it is ~10x faster on these small graphs (80 same-type subgraphs of bench_tig's
# synthetic tasks: 0.19 ms against leidenalg's 2.05 ms per subgraph, mean modularity 0.5660 against 0.5655);
# "leidenalg" runs leidenalg.find_partition(RBConfigurationVertexPartition) instead.
LEIDEN_IMPLEMENTATIONS = ("igraph", "leidenalg")
# Leiden iterations per run: leidenalg's default, used for both. Not "until stable" (-1): on bench_tig's
# synthetic tasks igraph's Leiden oscillated forever on a graph whose weights differed from a converging one
# only by float noise.
LEIDEN_ITERATIONS = 2
LEIDEN_IMPLEMENTATION = "igraph"
_RNG_LOCK = threading.Lock()
# the generator igraph's Leiden draws from, reset (under _RNG_LOCK) to a fresh random.Random(seed)'s state
_LEIDEN_RNG = random.Random()
# Graph.community_leiden's default beta (randomness of the refinement step), passed as it passes it
_IGRAPH_LEIDEN_BETA = 0.01
# the membership of a level that calls no Leiden (no component of three nodes or more)
_NO_MEMBERSHIP = np.zeros(0, dtype=np.int64)


_IMPORT_LOCK = threading.Lock()


def _import_igraph():
    """igraph, imported without its matplotlib drawing backend when matplotlib is not loaded yet.

    igraph's package import pulls in ``matplotlib.pyplot`` whenever matplotlib is installed (its drawing
    modules probe for it), which costs ~0.5 s of CPU in every process that clusters -- each Celery worker
    process pays it on its first Novelty context -- while only igraph's graphs and Leiden are used here.
    Hiding matplotlib for the duration of that one import leaves igraph's matplotlib plotting unavailable
    in this process (it is never used); matplotlib itself stays importable afterwards."""
    if "igraph" in sys.modules:
        return sys.modules["igraph"]
    with _IMPORT_LOCK:
        hide = "matplotlib" not in sys.modules
        if hide:
            sys.modules["matplotlib"] = None  # type: ignore[assignment]  # import fails: igraph uses stubs
        try:
            import igraph
        finally:
            if hide and sys.modules.get("matplotlib", 0) is None:
                del sys.modules["matplotlib"]
    return igraph


@functools.cache
def leiden_available(implementation: str = LEIDEN_IMPLEMENTATION) -> bool:
    """Whether the packages ``implementation`` needs are importable (igraph; plus leidenalg for it)."""
    try:
        _import_igraph()

        if implementation == "leidenalg":
            import leidenalg  # noqa: F401
    except ImportError:
        return False
    return True


@functools.lru_cache(maxsize=16)
def _seeded_state(seed: int) -> tuple:
    """``random.Random(seed).getstate()``: restoring it gives the generator a fresh ``Random(seed)`` has
    (Mersenne Twister state and no pending Gaussian), for a third of the cost of seeding one."""
    return random.Random(seed).getstate()


def _seeded_generator(seed: int) -> random.Random:
    """The shared Leiden generator in the state of a fresh ``random.Random(seed)``; hold ``_RNG_LOCK``."""
    _LEIDEN_RNG.setstate(_seeded_state(seed))
    return _LEIDEN_RNG


def _leiden_membership(g, resolution: float, seed: int, implementation: str) -> np.ndarray:
    """One Leiden run on a weighted igraph graph (edge attribute ``weight``)."""
    ig = _import_igraph()

    if implementation == "leidenalg":
        import leidenalg as la

        part = la.find_partition(
            g,
            la.RBConfigurationVertexPartition,
            weights="weight",
            resolution_parameter=resolution,
            seed=seed,
            n_iterations=LEIDEN_ITERATIONS,
        )
        return np.asarray(part.membership, dtype=np.int64)
    # igraph's own Leiden draws from igraph's process-wide generator: seed a private one for this call
    with _RNG_LOCK:
        ig.set_random_number_generator(_seeded_generator(seed))
        try:
            part = g.community_leiden(
                objective_function="modularity",
                weights="weight",
                resolution=resolution,
                n_iterations=LEIDEN_ITERATIONS,
            )
        finally:
            ig.set_random_number_generator(random)
    return np.asarray(part.membership, dtype=np.int64)


def _igraph_leiden_membership(
    n: int, edges: list[tuple[int, int]], weights: list[float], resolution: float, seed: int
) -> list[int]:
    """igraph's Leiden on the graph of ``edges`` over ``0..n-1`` with ``weights``: the C routine that
    ``Graph.community_leiden(objective_function="modularity", weights="weight", ...)`` calls, with the same
    arguments and the same seeded generator, on a bare ``GraphBase`` with the weights passed as a list --
    the same membership without building a ``Graph``, its edge attribute and a ``VertexClustering``
    (``tests/engine/tig/test_clusters.py`` compares both)."""
    ig = _import_igraph()
    g = ig.GraphBase(n, edges)
    with _RNG_LOCK:
        ig.set_random_number_generator(_seeded_generator(seed))
        try:
            membership, _ = ig.GraphBase.community_leiden(
                g,
                edge_weights=weights,
                node_weights=None,
                node_in_weights=None,
                resolution=resolution,
                normalize_resolution=True,  # objective_function="modularity"
                beta=_IGRAPH_LEIDEN_BETA,
                initial_membership=None,
                n_iterations=LEIDEN_ITERATIONS,
            )
        finally:
            ig.set_random_number_generator(random)
    return membership


def _induced_edges(
    n: int, iu: np.ndarray, iv: np.ndarray, w: np.ndarray, nodes: np.ndarray
) -> tuple[list[int], list[int], list[float]]:
    """The edge list (``iu < iv``) and weights of the subgraph induced by ``nodes`` (increasing), renumbered
    0..len(nodes)-1 and in the edge order of igraph's ``Graph.induced_subgraph(nodes)`` on the graph made of
    the whole list -- so Leiden, which reads its graph in edge order, sees the same graph without the whole
    one being built. igraph chooses by the share of nodes kept (``igraph_induced_subgraph``, "auto"): above
    one half it copies the graph and deletes the others (the edges keep their order); otherwise it creates
    the subgraph from scratch, visiting each node's edges to smaller neighbours, nodes and neighbours in
    increasing order (edges sorted by larger then smaller end). ``tests/engine/tig/test_clusters.py``
    compares both with igraph's on random graphs."""
    position = np.full(n, -1, dtype=np.int64)
    position[nodes] = np.arange(len(nodes))
    keep = (position[iu] >= 0) & (position[iv] >= 0)
    su, sv, sw = position[iu[keep]], position[iv[keep]], w[keep]
    if not len(nodes) / n > 0.5:
        order = np.lexsort((su, sv))
        su, sv, sw = su[order], sv[order], sw[order]
    return su.tolist(), sv.tolist(), sw.tolist()


def _leiden_level(
    n: int, us: np.ndarray, vs: np.ndarray, w: np.ndarray, resolution: float, seed: int, implementation: str
) -> tuple[np.ndarray, int, int]:
    """One level of Leiden on an undirected weighted edge list ``us < vs`` over nodes ``0..n-1`` (arrays):
    the labels numbered 0..k-1 in order of each group's smallest node, k, and the largest group's size.

    The RB-configuration quality ``sum_ij (w_ij - gamma k_i k_j / 2m) delta(c_i, c_j)`` never gains from a
    community spanning two connected components, so it is a sum of one term per component, and the
    components can be settled apart: an isolated node is a singleton; a two-node component is one
    community exactly when merging gains, ``2 (w - gamma w^2 / 2m) > 0``; Leiden gets the rest in one
    call, on their subgraph of total weight m' with resolution ``gamma m' / m`` -- which reproduces the
    whole graph's terms, so the objective is unchanged while Leiden runs on fewer nodes. The components,
    the merges and the rest's edge list in igraph's ``induced_subgraph`` order (:func:`_induced_edges`) are
    found by compiled code (:mod:`engine.tig.leiden_kernel`), and only the rest's graph is built (when no
    component has three nodes, none).
    """
    if not len(us):
        return np.arange(n, dtype=np.int64), n, min(n, 1)
    if w.dtype != np.float64:  # a graph's weights are float64; the kernel sums float64 as numpy does
        w = w.astype(np.float64)
    ints, floats = level_input(n, us, vs, w, float(resolution))
    r = int(ints[0])
    membership = _NO_MEMBERSHIP
    if r:
        edges = ints[2 + n + r:].reshape(-1, 2).tolist()
        sums = floats.tolist()  # [m, m', the rest's weights]
        total, m_rest = sums[0], sums[1]
        sw = sums[2:]
        if implementation == "igraph":
            membership = _igraph_leiden_membership(r, edges, sw, resolution * m_rest / total, seed)
        else:
            sub = _import_igraph().Graph(n=r, edges=edges, edge_attrs={"weight": sw})
            membership = _leiden_membership(sub, resolution * m_rest / total, seed, implementation)
    out = level_labels(ints, np.asarray(membership, dtype=np.int64))
    return out[2:], int(out[0]), int(out[1])


def _groups(labels: np.ndarray) -> list[np.ndarray]:
    """Node indices per distinct label, in order of each group's smallest node."""
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    parts = np.split(order, (sorted_labels[1:] != sorted_labels[:-1]).nonzero()[0] + 1)
    return sorted(parts, key=lambda p: int(p[0]))


def _dense(labels: np.ndarray) -> np.ndarray:
    """Relabel to 0..k-1 in order of each group's smallest node."""
    # one pass in node order: a label's new number is the count of labels seen before its first node
    # (a same-type subgraph has tens of nodes, where this beats a sort)
    seen: dict[int, int] = {}
    return np.asarray([seen.setdefault(label, len(seen)) for label in labels.tolist()], dtype=np.int64)


def _leiden_hierarchy(
    n: int,
    iu: np.ndarray,
    iv: np.ndarray,
    w: np.ndarray,
    *,
    resolution: float,
    seed: int,
    size_cap: int,
    implementation: str,
    depth: int = 0,
) -> np.ndarray:
    """Hierarchical Leiden labels (0..k-1, in order of smallest node) for an edge list over ``0..n-1``."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    labels, k, largest = _leiden_level(n, iu, iv, w, resolution, seed, implementation)
    if k == 1 or depth + 1 >= _MAX_DEPTH or largest <= size_cap:
        # Leiden keeps it whole, the depth limit is reached, or no community to partition again
        return labels
    sizes = np.bincount(labels, minlength=k)
    next_label = k
    split = False
    for c in (sizes > size_cap).nonzero()[0].tolist():
        # the community's own subgraph, renumbered 0..size-1, partitioned again
        members = (labels == c).nonzero()[0]
        position = np.full(n, -1, dtype=np.int64)
        position[members] = np.arange(len(members))
        keep = (position[iu] >= 0) & (position[iv] >= 0)
        inner = _leiden_hierarchy(
            len(members),
            position[iu[keep]],
            position[iv[keep]],
            w[keep],
            resolution=resolution,
            seed=seed,
            size_cap=size_cap,
            implementation=implementation,
            depth=depth + 1,
        )
        if inner.max() > 0:
            labels[members] = np.where(inner == 0, c, next_label + inner - 1)
            next_label += int(inner.max())
            split = True
    return _dense(labels) if split else labels  # unsplit labels are dense already


def leiden_clusters(
    weights: np.ndarray,
    *,
    resolution: float = LEIDEN_RESOLUTION,
    seed: int = LEIDEN_SEED,
    size_cap: int = LEIDEN_SIZE_CAP,
    implementation: str = LEIDEN_IMPLEMENTATION,
) -> list[np.ndarray]:
    """Hierarchical Leiden communities of a symmetric weight matrix; node index arrays, sorted by their
    smallest node. Isolated nodes are singletons. ``implementation``: ``"igraph"`` or ``"leidenalg"``."""
    if implementation not in LEIDEN_IMPLEMENTATIONS:
        raise ValueError(
            f"unknown Leiden implementation {implementation!r}; expected one of {LEIDEN_IMPLEMENTATIONS}"
        )
    iu, iv = upper_pairs(weights)
    labels = _leiden_hierarchy(
        weights.shape[0],
        iu,
        iv,
        weights[iu, iv],
        resolution=resolution,
        seed=seed,
        size_cap=size_cap,
        implementation=implementation,
    )
    return _groups(labels)


def _components(weights: np.ndarray, min_weight: float) -> np.ndarray:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(csr_matrix(weights > min_weight), directed=False)
    return labels


def component_clusters(
    weights: np.ndarray, *, min_weight: float = 0.0, size_cap: int = LEIDEN_SIZE_CAP
) -> list[np.ndarray]:
    """Weighted connected components (App. G.4 fallback): components over edges heavier than
    ``min_weight``; a component above ``size_cap`` is split again by dropping its lightest edges (a cut of
    the single-linkage hierarchy), repeatedly, until its parts fit or it has no edges left."""
    n = weights.shape[0]
    if n == 0:
        return []
    pending = [(np.arange(n), float(min_weight))]
    done: list[np.ndarray] = []
    while pending:
        members, floor = pending.pop()
        sub = weights[np.ix_(members, members)]
        for p in (members[g] for g in _groups(_components(sub, floor))):
            if len(p) > size_cap:
                inner = weights[np.ix_(p, p)]
                heavier = inner[inner > floor]
                if len(heavier):
                    pending.append((p, float(heavier.min())))
                    continue
            done.append(p)
    return sorted(done, key=lambda c: int(c.min()))


def _nodes_by_type(types: np.ndarray) -> list[tuple[int, slice | np.ndarray, int]]:
    """Each type code present, ascending, with its nodes and their number: the nodes as a slice when every
    type's nodes are one run (as canonicalisation numbers them, type by type in the types' name order),
    else as an index array."""
    if not len(types):
        return []
    starts = [0, *((types[1:] != types[:-1]).nonzero()[0] + 1).tolist()]
    codes = types[starts].tolist()
    if len(set(codes)) == len(codes):
        return sorted((t, slice(a, b), b - a) for t, a, b in zip(codes, starts, [*starts[1:], len(types)]))
    return [(t, nodes, len(nodes)) for t in distinct(types).tolist() for nodes in [(types == t).nonzero()[0]]]


def _compiled_edge_lists(
    weights: np.ndarray, groups: list[tuple[int, slice | np.ndarray, int]], only_types: Collection[int] | None
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]] | None:
    """The edge lists ``(u, v, w)`` of the types :func:`same_type_labels` clusters, in its order, from one
    compiled pass (:func:`engine.tig.subgraph_kernel.type_edge_lists`), when every type's nodes are one run
    of a float64 matrix in row-major memory (as a context's graph has them); else None (the numpy form)."""
    runs = [nodes for t, nodes, _ in groups if only_types is None or t in only_types]
    if (not runs or not all(isinstance(nodes, slice) for nodes in runs) or weights.dtype != np.float64
            or weights.ndim != 2 or not weights.flags.c_contiguous):
        return None
    u, v, w, bounds = type_edge_lists(weights, np.array([r.start for r in runs], dtype=np.int64),
                                      np.array([r.stop for r in runs], dtype=np.int64))
    return ((u[a:b], v[a:b], w[a:b]) for a, b in pairwise(bounds.tolist()))


def same_type_labels(
    weights: np.ndarray,
    types: np.ndarray,
    *,
    method: str = "leiden",
    seed: int = LEIDEN_SEED,
    resolution: float = LEIDEN_RESOLUTION,
    size_cap: int = LEIDEN_SIZE_CAP,
    implementation: str = LEIDEN_IMPLEMENTATION,
    only_types: Collection[int] | None = None,
    memo: MutableMapping[tuple, np.ndarray] | None = None,
) -> np.ndarray:
    """Cluster label per node (0..k-1) from clustering each same-type subgraph (App. G.4).

    ``method`` is ``"leiden"`` (falls back to components when the Leiden packages are not importable) or
    ``"components"``. Clusters never mix types; types come in ascending order, and within a type clusters
    are numbered by their smallest node. ``only_types``: cluster just these type codes and leave every
    node of another type a singleton -- each type is clustered on its own subgraph and numbered after
    the types before it, so the clusters of these types are the same and in the same order.

    ``memo``: a mapping (kept by the caller, e.g. one per task) from a type subgraph's exact Leiden input
    -- node count, edge list, weights and parameters -- to its labels. Every Leiden call reseeds its own
    generator, so the labels are a function of that input alone, and a subgraph met again (a third of a
    task's leave-two-models-out populations share some type's subgraph bit for bit) is read back.
    """
    if method not in ("leiden", "components"):
        raise ValueError(f"unknown clustering method {method!r}")
    if implementation not in LEIDEN_IMPLEMENTATIONS:
        raise ValueError(f"unknown Leiden implementation {implementation!r}")
    use_leiden = method == "leiden" and leiden_available(implementation)
    types = np.asarray(types)
    labels = np.zeros(len(types), dtype=np.int64)
    offset = 0
    groups = _nodes_by_type(types)
    lists = _compiled_edge_lists(weights, groups, only_types) if use_leiden else None
    for t, nodes, size in groups:
        if only_types is not None and t not in only_types:
            labels[nodes] = np.arange(offset, offset + size)
            offset += size
            continue
        # the type's sub-matrix (a slice when the type's nodes are contiguous)
        block = None if lists is not None else (
            weights[nodes, nodes] if isinstance(nodes, slice) else weights[np.ix_(nodes, nodes)])
        if lists is not None:
            # the type's edge list from the compiled pass (the same pairs and weights as below)
            sub_u, sub_v, sub_w = next(lists)
        elif use_leiden:
            # the type's edge list in row-major order of its own sub-matrix (upper_pairs(block) and the
            # weights there): its upper triangle read in row-major order, the non-zero entries kept
            slot_u, slot_v = upper_slot_pairs(size)
            upper = block[slot_u, slot_v]
            nonzero = upper.nonzero()[0]
            sub_u, sub_v, sub_w = slot_u[nonzero], slot_v[nonzero], upper[nonzero]
        if use_leiden:
            key = None
            if memo is not None:
                key = (size, sub_u.tobytes(), sub_v.tobytes(), sub_w.tobytes(), float(resolution), int(seed),
                       int(size_cap), implementation)
                local = memo.get(key)
            if key is None or local is None:
                local = _leiden_hierarchy(
                    size,
                    sub_u,
                    sub_v,
                    sub_w,
                    resolution=resolution,
                    seed=seed,
                    size_cap=size_cap,
                    implementation=implementation,
                )
                if key is not None:
                    local.setflags(write=False)
                    memo[key] = local
        else:
            local = np.empty(size, dtype=np.int64)
            for c, part in enumerate(component_clusters(block, size_cap=size_cap)):
                local[part] = c
        labels[nodes] = offset + local
        offset += int(local.max()) + 1
    return labels


def same_type_clusters(
    weights: np.ndarray,
    types: np.ndarray,
    *,
    method: str = "leiden",
    seed: int = LEIDEN_SEED,
    resolution: float = LEIDEN_RESOLUTION,
    size_cap: int = LEIDEN_SIZE_CAP,
    implementation: str = LEIDEN_IMPLEMENTATION,
) -> list[np.ndarray]:
    """Clusters of each same-type subgraph (App. G.4), as arrays of node indices of the full graph, in the
    order of :func:`same_type_labels`."""
    labels = same_type_labels(
        weights,
        types,
        method=method,
        seed=seed,
        resolution=resolution,
        size_cap=size_cap,
        implementation=implementation,
    )
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.r_[True, labels[order][1:] != labels[order][:-1], True])
    return [order[a:b] for a, b in pairwise(bounds)]

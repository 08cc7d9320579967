"""The Typed Idea Graph of one reference population (Ekphrasis App. G.3).

Nodes are canonical atoms. Three kinds of undirected edge weight are summed into one weight matrix:

* co-occurrence ``w_cooc(u, v) = max(0, NPMI(u, v))`` where the unit of co-occurrence is **one response**:
  ``p(u)`` is the share of reference responses with an atom in u, ``p(u, v)`` the share with atoms in both;
* same-type similarity ``w_sim(u, v) = cos(e_u, e_v) * 1[cos(e_u, e_v) >= 0.78]`` on node embeddings
  (normalised mean of the node's input-atom embeddings; the cosines come from canonicalisation);
* typed relations ``w_typed(u, v, r) = sum_l 1[(u, v, r) in E_l]``, the number of responses whose
  extraction has that relation; Leiden needs an undirected graph, so the directed typed relations are
  collapsed: ``sum_r (w_typed(u, v, r) + w_typed(v, u, r))``.

The weighted degree ``deg_w(u) = sum_v w(u, v)`` over the combined weights is what ClicheScore's
centrality uses. :func:`build_graph` does all of it with dense matrices (a context has ~200 nodes), its
counting in compiled loops (:mod:`engine.tig.graph_kernel`; :func:`build_graph_numpy` is the same in numpy calls);
:func:`build_graph_networkx` is the straightforward edge-by-edge construction kept as the benchmark baseline
and as an independent check in the tests.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.pairwise_sum import row_sums
from engine.tig.atoms import ATOM_TYPES, RELATION_TYPES
from engine.tig.canonical import Canonicalisation
from engine.tig.distinct import distinct, distinct_counts, distinct_inverse, run_lengths, run_starts
from engine.tig.graph_kernel import assemble_weight, graph_counts

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

    from engine.tig.score import Cluster

__all__ = [
    "SIMILARITY_THRESHOLD",
    "IdeaGraph",
    "build_graph",
    "build_graph_networkx",
    "build_graph_numpy",
    "cluster_members_explained",
    "cooccurrence_entries",
    "cooccurrence_weights",
    "graph_export",
    "nonzero_entries",
    "npmi",
    "similarity_entries",
    "similarity_weights",
    "typed_relation_counts",
    "upper_pairs",
]

# App. G.3: w_sim = cos * 1[cos >= 0.78]
SIMILARITY_THRESHOLD = 0.78


# from this many entries on, upper_pairs finds them in the flattened mask (cheaper than np.nonzero's 2-D walk)
_FLAT_NONZERO_MIN = 256


def upper_pairs(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices ``(i, j)``, ``i < j``, of the non-zero entries of a square matrix (row-major)."""
    # a boolean mask first: np.nonzero on a float matrix takes ~1.5x as long as on its mask
    matrix = np.asarray(matrix)
    i, j = nonzero_entries(matrix if matrix.dtype == bool else matrix != 0)
    keep = i < j
    return i[keep], j[keep]


def nonzero_entries(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of a 2-D boolean mask's true entries, row-major: ``np.nonzero(mask)``."""
    if mask.size < _FLAT_NONZERO_MIN:
        return np.nonzero(mask)
    # the flat positions, split into row and column: the same indices in the same row-major order,
    # without the 2-D iterator np.nonzero walks (a third of its time on a graph-sized matrix)
    flat = mask.ravel().nonzero()[0]
    i = flat // mask.shape[1]
    return i, flat - i * mask.shape[1]


def npmi(joint: np.ndarray, count_u: np.ndarray, count_v: np.ndarray, n: int) -> np.ndarray:
    """Normalised PMI from counts over ``n`` units (Bouma 2009):
    ``log(p(u,v) / (p(u) p(v))) / -log p(u,v)``, with its limits made explicit:
    ``+1`` when ``p(u,v) = 1`` (the pair is in every unit -- the population-cliché case, where the
    formula is 0/0) and ``-1`` when ``p(u,v) = 0`` (never together)."""
    joint, count_u, count_v = np.broadcast_arrays(
        np.asarray(joint, dtype=np.float64),
        np.asarray(count_u, dtype=np.float64),
        np.asarray(count_v, dtype=np.float64),
    )
    out = np.full(joint.shape, -1.0)
    out[joint >= n] = 1.0
    mid = (joint > 0) & (joint < n)
    j, cu, cv = joint[mid], count_u[mid], count_v[mid]
    # NPMI (Bouma 2009, eq. 8) with p = count / n: log(p_uv / (p_u p_v)) / -log p_uv
    out[mid] = np.log(j * n / (cu * cv)) / -np.log(j / n)
    return out


#: widths up to this one keep their pairs (all of them together ~5.6 MB); a wider row's are made at each call
_CACHED_SLOT_WIDTH = 128


def _read_only_triu(width: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.triu_indices(width, 1)
    a.setflags(write=False)
    b.setflags(write=False)
    return a, b


_cached_triu = functools.cache(_read_only_triu)


def upper_slot_pairs(width: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.triu_indices(width, 1)``, read-only: every pair of slots of a row of ``width`` (a unit's nodes), or
    of a square matrix's upper triangle, row-major. Kept for the small widths that recur (a unit's handful of
    nodes, a same-type subgraph's tens), so the memory a long-lived worker keeps stays bounded."""
    return _cached_triu(width) if width <= _CACHED_SLOT_WIDTH else _read_only_triu(width)


def _cooccurring_pairs(incidence: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """From a (units x nodes) boolean incidence matrix: the node pairs ``(iu, iv)``, ``iu < iv``, that share a
    unit, row-major (as :func:`upper_pairs` lists the co-occurrence count matrix's entries), with their
    shared-unit counts, and every node's unit count -- whole numbers, the values of ``X^T X`` for the 0/1
    matrix X, counted from each unit's few nodes instead of multiplying the matrices."""
    n_units, n_nodes = incidence.shape
    flat = incidence.ravel().nonzero()[0]  # unit by unit, nodes increasing
    unit = flat // n_nodes
    node = flat - unit * n_nodes
    per_unit = np.bincount(unit, minlength=n_units)
    width = int(per_unit.max()) if len(flat) else 0
    # each unit's nodes as one row of a grid, left-aligned, -1 after them
    grid = np.full((n_units, max(width, 1)), -1, dtype=np.int64)
    grid[unit, np.arange(len(flat)) - np.repeat(per_unit.cumsum() - per_unit, per_unit)] = node
    a, b = upper_slot_pairs(max(width, 1))
    first, second = grid[:, a], grid[:, b]
    present = second >= 0  # then first is a node too, smaller
    codes, joint = distinct_counts(first[present] * n_nodes + second[present])
    iu = codes // n_nodes
    return iu, codes - iu * n_nodes, joint, np.bincount(node, minlength=n_nodes)


def cooccurrence_entries(incidence: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pairs ``(iu, iv)``, ``iu < iv``, of nodes that share a unit of a (responses x nodes) incidence
    matrix, row-major, with ``max(0, NPMI)`` of each -- :func:`cooccurrence_weights`' entries (every other
    pair has NPMI -1, weight 0)."""
    incidence = np.asarray(incidence)
    n, n_nodes = incidence.shape
    if n == 0 or n_nodes == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    if incidence.dtype == bool:
        iu, iv, joint, counts = _cooccurring_pairs(incidence)
    else:
        x = incidence.astype(np.float64)
        joint_matrix = x.T @ x
        counts = np.diag(joint_matrix).copy()
        iu, iv = upper_pairs(joint_matrix)
        joint = joint_matrix[iu, iv]
    if incidence.dtype == bool:
        return iu, iv, _cooccurrence_values(iu, iv, joint, counts, n)
    return iu, iv, np.maximum(0.0, npmi(joint, counts[iu], counts[iv], n))  # App. G.3 w_cooc


def _cooccurrence_values(iu: np.ndarray, iv: np.ndarray, joint: np.ndarray, counts: np.ndarray, n: int) -> np.ndarray:
    """``max(0, NPMI)`` of the co-occurring pairs ``(iu, iv)`` from their whole-number shared-unit counts
    ``joint`` and every node's unit count ``counts``, over ``n`` units."""
    if len(joint) and joint.max() < n:
        # every pair is in some units (a shared unit: joint >= 1) but not in all, where npmi evaluates its
        # formula on every entry: the same operations on the same float64 values, without its masks and copies
        j = joint.astype(np.float64)
        c = counts.astype(np.float64)
        # NPMI (Bouma 2009, eq. 8) with p = count / n: log(p_uv / (p_u p_v)) / -log p_uv
        return np.maximum(0.0, np.log(j * n / (c[iu] * c[iv])) / -np.log(j / n))  # App. G.3 w_cooc
    return np.maximum(0.0, npmi(joint, counts[iu], counts[iv], n))  # App. G.3 w_cooc


def cooccurrence_weights(incidence: np.ndarray) -> np.ndarray:
    """``max(0, NPMI)`` between nodes from a (responses x nodes) boolean incidence matrix; zero diagonal.
    Only pairs that co-occur at least once are evaluated (the others have NPMI -1, weight 0)."""
    n_nodes = np.shape(incidence)[1]
    return _symmetric(n_nodes, *cooccurrence_entries(incidence))


def _symmetric(n: int, iu: np.ndarray, iv: np.ndarray, value: np.ndarray) -> np.ndarray:
    w = np.zeros((n, n))
    w[iu, iv] = value
    w[iv, iu] = value
    return w


def similarity_entries(
    cosine: np.ndarray, types: np.ndarray | None, threshold: float = SIMILARITY_THRESHOLD
) -> tuple[np.ndarray, np.ndarray]:
    """The off-diagonal entries of :func:`similarity_weights` that may be non-zero: their flat (row-major)
    positions in the node x node matrix, increasing, and their values ``cos(e_u, e_v)``."""
    cosine = np.asarray(cosine, dtype=np.float64)
    keep = cosine >= threshold
    if types is not None:
        types = np.asarray(types)
        keep &= types[:, None] == types[None, :]
    kept = keep.ravel().nonzero()[0]
    kept = kept[kept % (len(cosine) + 1) != 0]  # the diagonal: w_sim(u, u) = 0
    return kept, cosine.ravel()[kept]


def similarity_weights(
    cosine: np.ndarray, types: np.ndarray | None, threshold: float = SIMILARITY_THRESHOLD
) -> np.ndarray:
    """``cos(e_u, e_v) * 1[cos >= threshold]`` between nodes of the same type, from their cosine matrix;
    zero diagonal. ``types=None``: ``cosine`` is already zero between nodes of different types (as
    canonicalisation's node similarity is), so a zero stays zero whatever the threshold."""
    # App. G.3 w_sim: np.where(keep, cosine, 0.0), written as a copy of the few kept entries into zeros
    # (np.where's broadcast of the scalar walks every entry at several times the cost)
    positions, values = similarity_entries(cosine, types, threshold)
    w = np.zeros(np.shape(cosine))
    w.ravel()[positions] = values
    return w


def typed_relation_counts(
    response: np.ndarray, source: np.ndarray, target: np.ndarray, relation: np.ndarray, n_nodes: int,
    n_units: int | None = None,
) -> np.ndarray:
    """Rows ``(u, v, r, count)``: the number of responses with relation ``u -r-> v`` (App. G.3 w_typed).
    A response counts once per (u, v, r) even if canonicalisation merged two of its atoms; self-loops are
    dropped. ``n_units``: any number above every response index (the largest plus one if not given)."""
    return _typed_rows(_relation_mentions(response, source, target, relation, n_nodes, n_units), n_nodes)


def _relation_mentions(
    response: np.ndarray, source: np.ndarray, target: np.ndarray, relation: np.ndarray, n_nodes: int,
    n_units: int | None = None,
) -> np.ndarray:
    """The code ``(r * n_nodes + u) * n_nodes + v`` of every distinct (relation ``u -r-> v``, response)
    pair, sorted (an edge's run is its number of responses); self-loops dropped."""
    response, source, target, relation = (
        np.asarray(a, dtype=np.int64) for a in (response, source, target, relation)
    )
    ok = source != target
    response, source, target, relation = response[ok], source[ok], target[ok], relation[ok]
    if not len(source):
        return np.zeros(0, dtype=np.int64)
    edge = (relation * n_nodes + source) * n_nodes + target
    if n_units is None:
        n_units = int(response.max()) + 1
    # distinct (edge, response) pairs sorted by edge: each edge's run is its number of responses
    return distinct(edge * n_units + response) // n_units


def _typed_rows(per_response: np.ndarray, n_nodes: int) -> np.ndarray:
    """:func:`typed_relation_counts`' rows from :func:`_relation_mentions`' codes."""
    if not len(per_response):
        return np.zeros((0, 4), dtype=np.int64)
    first = run_starts(per_response)
    codes = per_response[first]
    out = np.empty((len(codes), 4), dtype=np.int64)
    out[:, 3] = run_lengths(first)
    rest = np.divmod(codes, n_nodes * n_nodes, out=(out[:, 2], codes))[1]
    np.divmod(rest, n_nodes, out=(out[:, 0], out[:, 1]))
    return out


@dataclass
class IdeaGraph:
    """Weights and bookkeeping of one population's graph (dense, node order of ``canon``).

    ``weight`` is the combined matrix clustering and scoring read; its three parts are kept as their
    entries (``cooccurrence_entries``: node pairs ``u < v`` and ``max(0, NPMI)``; ``similarity_entries``:
    flat positions and cosines; ``typed_edges``) and made dense only when asked for (the viewer, the
    tests): a context never reads them, and four node x node matrices cost more than one."""

    canon: Canonicalisation
    incidence: np.ndarray  # (responses, nodes) bool: response has an atom in node
    typed_edges: np.ndarray  # (u, v, r, count) directed
    weight: np.ndarray
    degree: np.ndarray
    node_models: np.ndarray  # (nodes, models) bool: model has an atom in node
    models: list[str]
    cooccurrence_entries: tuple[np.ndarray, np.ndarray, np.ndarray]
    similarity_entries: tuple[np.ndarray, np.ndarray]

    @property
    def n_nodes(self) -> int:
        return self.canon.n_nodes

    @property
    def n_responses(self) -> int:
        return self.incidence.shape[0]

    @functools.cached_property
    def cooccurrence(self) -> np.ndarray:
        """``w_cooc`` as a dense node x node matrix."""
        return _symmetric(self.n_nodes, *self.cooccurrence_entries)

    @functools.cached_property
    def similarity(self) -> np.ndarray:
        """``w_sim`` as a dense node x node matrix."""
        w = np.zeros((self.n_nodes, self.n_nodes))
        positions, values = self.similarity_entries
        w.ravel()[positions] = values
        return w

    @functools.cached_property
    def typed(self) -> np.ndarray:
        """The collapsed undirected typed-relation counts as a dense node x node matrix."""
        n = self.n_nodes
        typed = np.zeros(n * n)
        codes, counts = _typed_entries(self.typed_edges, n)
        typed[codes] = counts
        return typed.reshape(n, n)


def _typed_entries(typed_edges: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The flat positions (increasing) and values of the collapsed undirected typed-relation counts: each
    directed count of ``typed_edges`` added at (u, v) and at (v, u) -- whole numbers, so the order of the
    additions cannot matter."""
    if not len(typed_edges):
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    u, v, count = typed_edges[:, 0], typed_edges[:, 1], typed_edges[:, 3]
    codes, inverse = distinct_inverse(np.concatenate((u * n + v, v * n + u)))
    return codes, np.bincount(inverse, weights=np.concatenate((count, count)), minlength=len(codes))


def _collapsed_typed_entries(per_response: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_typed_entries` of :func:`_typed_rows` (``per_response``), counted from the (relation,
    response) pairs themselves: every pair adds one at (u, v) and one at (v, u), so a position's count is the
    sum of its directed edges' counts -- the same whole numbers, as integers (added to float weights, the
    same values)."""
    if not len(per_response):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    forward = per_response % (n * n)  # u * n + v
    u = forward // n
    return distinct_counts(np.concatenate((forward, (forward - u * n) * n + u)))


def _response_models(canon: Canonicalisation) -> tuple[list[str], np.ndarray]:
    """The population's models in name order, and each response's model as a position in that list."""
    table = canon.table
    models = sorted(set(table.models))
    model_index = {m: i for i, m in enumerate(models)}
    return models, np.asarray([model_index[m] for m in table.models], dtype=np.int64)


def _idea_graph(canon: Canonicalisation, inc: np.ndarray, typed_edges: np.ndarray, weight: np.ndarray,
                node_models: np.ndarray, models: list[str], cooccurrence: tuple, similarity: tuple,
                degree: np.ndarray | None = None) -> IdeaGraph:
    """The graph of ``canon`` from its parts, with the weighted degrees of ``weight`` (``degree`` if given)."""
    return IdeaGraph(
        canon=canon,
        incidence=inc,
        typed_edges=typed_edges,
        weight=weight,
        degree=weight.sum(axis=1) if degree is None else degree,  # deg_w(u) = sum_v w(u, v)
        node_models=node_models,
        models=models,
        cooccurrence_entries=cooccurrence,
        similarity_entries=similarity,
    )


def _incidence(canon: Canonicalisation) -> tuple[np.ndarray, np.ndarray, list[str]]:
    table = canon.table
    inc = np.zeros((table.n_responses, canon.n_nodes), dtype=bool)
    inc[table.response, canon.mention_node] = True
    models, response_model = _response_models(canon)
    node_models = np.zeros((canon.n_nodes, len(models)), dtype=bool)
    node_models[canon.mention_node, response_model[table.response]] = True
    return inc, node_models, models


def build_graph(canon: Canonicalisation, *, similarity_threshold: float = SIMILARITY_THRESHOLD) -> IdeaGraph:
    """The combined weight matrix ``w = w_cooc + w_sim + sum_r w_typed`` and weighted degrees (App. G.3)."""
    if not similarity_threshold > 0:
        # a zero cosine across types would pass: the numpy form, which compares every entry
        return build_graph_numpy(canon, similarity_threshold=similarity_threshold)
    table = canon.table
    n = canon.n_nodes
    models, response_model = _response_models(canon)
    rel = table.relations
    mention_node = canon.mention_node
    # the whole-number parts and the entries in compiled loops (graph_kernel: the numpy form's arrays)
    inc, node_models, cooc_u, cooc_v, joint, unit_count, sim_at, sim, typed_edges, typed_at, typed = graph_counts(
        table.response, mention_node, table.n_responses, n, response_model, len(models), canon.node_similarity,
        canon.node_type, float(similarity_threshold), table.response[rel[:, 0]], mention_node[rel[:, 0]],
        mention_node[rel[:, 1]], rel[:, 2],
    )
    cooc = _cooccurrence_values(cooc_u, cooc_v, joint, unit_count, table.n_responses)  # App. G.3 w_cooc
    # w = (w_cooc + w_sim) + w_typed, entry by entry as the sum of the three dense matrices adds them
    weight = assemble_weight(n, cooc_u, cooc_v, cooc, sim_at, sim, typed_at, typed)
    # deg_w(u) = sum_v w(u, v), summed as numpy's weight.sum(axis=1) sums it (engine.pairwise_sum.row_sums)
    return _idea_graph(canon, inc, typed_edges, weight, node_models, models, (cooc_u, cooc_v, cooc), (sim_at, sim),
                       row_sums(weight))


def build_graph_numpy(canon: Canonicalisation, *, similarity_threshold: float = SIMILARITY_THRESHOLD) -> IdeaGraph:
    """:func:`build_graph` in numpy array calls (the form its compiled kernels reproduce; any threshold)."""
    table = canon.table
    inc, node_models, models = _incidence(canon)
    n = canon.n_nodes
    cooc_u, cooc_v, cooc = cooccurrence_entries(inc)
    sim_at, sim = similarity_entries(canon.node_similarity, None, similarity_threshold)  # zero across types
    rel = table.relations
    per_response = (
        _relation_mentions(
            table.response[rel[:, 0]],
            canon.mention_node[rel[:, 0]],
            canon.mention_node[rel[:, 1]],
            rel[:, 2],
            n,
            table.n_responses,
        )
        if len(rel)
        else np.zeros(0, dtype=np.int64)
    )
    typed_edges = _typed_rows(per_response, n)
    # w = (w_cooc + w_sim) + w_typed, entry by entry as the sum of the three dense matrices adds them: each
    # part added where it has entries (every position appears once per part; adding a part's zero changes
    # no entry, as no entry is -0: max(0, NPMI) is +0 where NPMI <= 0)
    weight = np.zeros((n, n))
    flat = weight.ravel()
    flat[cooc_u * n + cooc_v] = cooc
    flat[cooc_v * n + cooc_u] = cooc
    flat[sim_at] += sim
    typed_at, typed = _collapsed_typed_entries(per_response, n)  # whole numbers
    flat[typed_at] += typed
    return _idea_graph(canon, inc, typed_edges, weight, node_models, models, (cooc_u, cooc_v, cooc), (sim_at, sim))


def build_graph_networkx(
    canon: Canonicalisation, *, similarity_threshold: float = SIMILARITY_THRESHOLD
) -> nx.Graph:
    """The same graph built edge by edge in networkx (benchmark baseline, cross-check in tests).

    Edge attributes ``cooccurrence``, ``similarity``, ``typed`` and their sum ``weight``; node attributes
    ``type`` and ``label``.
    """
    import networkx as nx

    table = canon.table
    g = nx.Graph()
    for v in range(canon.n_nodes):
        g.add_node(v, type=ATOM_TYPES[int(canon.node_type[v])], label=canon.node_label[v])
    responses_of: list[set[int]] = [set() for _ in range(canon.n_nodes)]
    for m in range(table.n_mentions):
        responses_of[int(canon.mention_node[m])].add(int(table.response[m]))
    n_resp = table.n_responses
    emb = canon.node_embedding

    def bump(u: int, v: int, kind: str, value: float) -> None:
        if not g.has_edge(u, v):
            g.add_edge(u, v, cooccurrence=0.0, similarity=0.0, typed=0.0, weight=0.0)
        data = g[u][v]
        data[kind] += value
        data["weight"] += value

    for u in range(canon.n_nodes):
        for v in range(u + 1, canon.n_nodes):
            joint = len(responses_of[u] & responses_of[v])
            if joint:
                if joint == n_resp:
                    value = 1.0
                else:
                    p_uv = joint / n_resp
                    p_u, p_v = len(responses_of[u]) / n_resp, len(responses_of[v]) / n_resp
                    value = math.log(p_uv / (p_u * p_v)) / -math.log(p_uv)  # NPMI (Bouma 2009)
                if value > 0:
                    bump(u, v, "cooccurrence", value)
            if canon.node_type[u] == canon.node_type[v]:
                cos = float(np.dot(emb[u], emb[v]))
                if cos >= similarity_threshold:
                    bump(u, v, "similarity", cos)
    seen: set[tuple[int, int, int, int]] = set()
    for s, t, r in table.relations.tolist():
        u, v = int(canon.mention_node[s]), int(canon.mention_node[t])
        key = (int(table.response[s]), u, v, r)
        if u != v and key not in seen:
            seen.add(key)
            bump(u, v, "typed", 1.0)
    return g


def graph_export(
    graph: IdeaGraph, clusters: list[Cluster] | None = None, *, layout_seed: int = 0, min_weight: float = 0.0
) -> dict[str, Any]:
    """JSON-ready nodes and edges for the TIG viewer, with a spring layout (networkx, fixed seed).

    Nodes carry id, label, type, aliases, weighted degree, models count and cluster id; edges carry the three
    weight components and their sum. ``min_weight`` drops light edges from the export (not the layout).
    """
    import networkx as nx

    canon = graph.canon
    cluster_of: dict[int, str] = {}
    for c in clusters or []:
        for v in c.nodes:
            cluster_of[v] = c.id
    n = graph.n_nodes
    g = nx.Graph()
    g.add_nodes_from(range(n))
    iu, iv = upper_pairs(graph.weight)
    g.add_weighted_edges_from(zip(iu.tolist(), iv.tolist(), graph.weight[iu, iv].tolist()))
    pos = nx.spring_layout(g, weight="weight", seed=layout_seed) if n else {}
    nodes = [
        {
            "id": canon.node_id(v),
            "label": canon.node_label[v],
            "type": ATOM_TYPES[int(canon.node_type[v])],
            "aliases": canon.node_aliases[v],
            "weighted_degree": round(float(graph.degree[v]), 6),
            "n_models": int(graph.node_models[v].sum()),
            "cluster_id": cluster_of.get(v),
            "x": round(float(pos[v][0]), 6),
            "y": round(float(pos[v][1]), 6),
        }
        for v in range(n)
    ]
    edges = []
    for u, v in zip(iu.tolist(), iv.tolist()):
        w = float(graph.weight[u, v])
        if w > min_weight:
            edges.append(
                {
                    "source": canon.node_id(u),
                    "target": canon.node_id(v),
                    "weight": round(w, 6),
                    "cooccurrence": round(float(graph.cooccurrence[u, v]), 6),
                    "similarity": round(float(graph.similarity[u, v]), 6),
                    "typed": round(float(graph.typed[u, v]), 6),
                }
            )
    typed = [
        {
            "source": canon.node_id(int(u)),
            "relation": RELATION_TYPES[int(r)],
            "target": canon.node_id(int(v)),
            "count": int(c),
        }
        for u, v, r, c in graph.typed_edges.tolist()
    ]
    return {
        "nodes": nodes,
        "edges": edges,
        "typed_relations": typed,
        "models": len(graph.models),
        "responses": graph.n_responses,
    }


def cluster_members_explained(graph: IdeaGraph, cluster: Cluster) -> list[dict[str, Any]]:
    """Why each canonical atom is in ``cluster``, for the TIG viewer: per member (head first) its label,
    its aliases as ``(alias, cosine to the label)`` pairs (the similarity that admitted each alias) and, for
    every member but the head, its strongest edge to another member -- the neighbour's label and that
    edge's three components (NPMI co-occurrence, similarity, typed-relation count). Members are related
    through the graph, not synonyms; ``link`` is None for a member with no positive edge inside the
    cluster."""
    canon = graph.canon
    cosines = canon.node_alias_cosines
    nodes = list(cluster.nodes)
    out = []
    for rank, v in enumerate(nodes):
        link = None
        others = [u for u in nodes if u != v]
        if rank and others:
            weights = graph.weight[v, others]
            best = int(np.argmax(weights))
            if weights[best] > 0:
                u = others[best]
                link = {
                    "with": canon.node_label[u],
                    "weight": round(float(weights[best]), 4),
                    "cooccurrence": round(float(graph.cooccurrence[v, u]), 4),
                    "similarity": round(float(graph.similarity[v, u]), 4),
                    "typed": round(float(graph.typed[v, u]), 4),
                }
        out.append({"label": canon.node_label[v], "aliases": [list(p) for p in cosines[v]], "link": link})
    return out

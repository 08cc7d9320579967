"""ClicheScore of a cluster of canonical atoms (Ekphrasis §4.2 and App. G.3).

    ClicheScore(C) = 0.45 ModelCov(C) + 0.35 Cent(C) + 0.20 Conv(C)

* ``ModelCov(C) = |{m : exists u in C, m in prov(u)}| / |M|`` -- share of the reference population's models
  with an atom in C;
* ``Cent(C) = sum_{u in C} deg_w(u) / (|C| max_u' deg_w(u'))`` -- mean weighted degree of C's atoms over the
  largest weighted degree in the graph;
* ``Conv(C) = 2 / (|C|(|C|-1)) sum_{u<v in C} max(0, cos(e_u, e_v))`` -- mean positive pairwise cosine of
  C's canonical atoms, ``e_u`` being the canonical atom's embedding (App. G.2: the normalised mean of its input
  atoms' embeddings, ``Canonicalisation.node_similarity``). For a single canonical atom (|C| = 1) the paper's
  formula is 0/0; there the pairs run over the atom's *input atoms* (every extracted atom canonicalised into
  it, with its own embedding), so a cliché that many responses phrased alike still counts as convergent, and
  fewer than two input atoms give ``Conv = 0`` (no convergence observed). This convention is ours, not the
  paper's.

High-scoring clusters are common across models, central in the task's graph and internally convergent
(App. G.4). :func:`score_partition` scores every cluster of a graph at once (the per-cluster sums in one compiled
pass, :mod:`engine.tig.score_kernel`) and
keeps them compact (:class:`ScoredClusters`); :class:`Cluster` records are built on demand.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from engine.tig.atoms import ATOM_TYPES
from engine.tig.graph import IdeaGraph
from engine.tig.score_kernel import cluster_sums

__all__ = [
    "CENTRALITY_WEIGHT",
    "CONVERGENCE_WEIGHT",
    "MODEL_COVERAGE_WEIGHT",
    "Cluster",
    "ScoredClusters",
    "cliche_score",
    "partition_labels",
    "score_clusters",
    "score_partition",
]

# App. G.3: ClicheScore = 0.45 ModelCov + 0.35 Cent + 0.20 Conv
MODEL_COVERAGE_WEIGHT = 0.45
CENTRALITY_WEIGHT = 0.35
CONVERGENCE_WEIGHT = 0.20
_ALIASES_IN_SUMMARY = 4


def cliche_score(coverage, central, converge):
    """``0.45 ModelCov + 0.35 Cent + 0.20 Conv`` (App. G.3), for numbers or element-wise for arrays."""
    return MODEL_COVERAGE_WEIGHT * coverage + CENTRALITY_WEIGHT * central + CONVERGENCE_WEIGHT * converge


@dataclass
class Cluster:
    """A scored cluster of same-type canonical atoms.

    ``label`` is the label of the member atom with the most input atoms (the head); ``aliases`` the head's
    surface forms, most frequent first -- paraphrases of the label only, each within the canonicalisation
    threshold, with the cosine that admitted it in ``alias_cosines`` as ``(alias, cosine)`` pairs. The other
    members are distinct canonical atoms that Leiden put beside the head through the graph's co-occurrence,
    similarity and typed-relation edges (``members``, labels, head first): related, not synonyms, so never
    listed as aliases. ``n_models``/``n_samples`` count the reference models and responses with an atom in
    the cluster, out of ``population_models``/``population_samples``. ``models`` names them for the TIG
    viewer; checklist item text never does. ``nodes`` are graph node indices (meaningful only with the
    graph they came from).
    """

    id: str
    type: str
    label: str
    aliases: list[str]
    score: float
    model_coverage: float
    centrality: float
    convergence: float
    n_models: int
    n_samples: int
    population_models: int
    population_samples: int
    members: list[str]
    models: list[str] = field(default_factory=list)
    nodes: list[int] = field(default_factory=list, repr=False)
    alias_cosines: list[tuple[str, float]] = field(default_factory=list)

    @property
    def summary(self) -> str:
        """One-line description for checklist provenance and the audit (counts only, no identities)."""
        others = [a for a in self.aliases if a != self.label][:_ALIASES_IN_SUMMARY]
        also = f" (also: {', '.join(others)})" if others else ""
        return (
            f"{self.type} cluster '{self.label}'{also}; used by {self.n_models} of {self.population_models} "
            f"reference models in {self.n_samples} of {self.population_samples} ideas"
        )

    def to_dict(self, *, with_models: bool = True) -> dict[str, Any]:
        data = asdict(self)
        data.pop("nodes")
        if not with_models:
            data.pop("models")
        data["summary"] = self.summary
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Cluster:
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        if "alias_cosines" in fields:
            fields["alias_cosines"] = [(str(a), float(c)) for a, c in fields["alias_cosines"]]
        return cls(**fields)


@lru_cache(maxsize=1 << 16)
def _cluster_id(type_name: str, member_keys: tuple[str, ...]) -> str:
    """Stable id from the type and the sorted canonical keys of the members (memoised: clusters recur
    across the contexts of a task)."""
    digest = hashlib.sha1("\x1f".join(sorted(member_keys)).encode()).hexdigest()[:12]
    return f"{type_name}-{digest}"


@dataclass
class ScoredClusters:
    """Every cluster of one graph, scored, in compact array form; :class:`Cluster` records are built only
    when asked for (a context usually needs the few best, the viewer all of them).

    Holds arrays and references to the population's shared label lists, not the graph, so a cache of
    contexts stays small. ``order`` ranks clusters by ClicheScore, highest first (ties: wider model
    coverage, then the label of the cluster's first member, then type and node order); ``head`` is each
    cluster's first member.
    """

    cluster_of_node: np.ndarray
    score: np.ndarray
    coverage: np.ndarray
    centrality: np.ndarray
    convergence: np.ndarray
    n_models: np.ndarray
    n_samples: np.ndarray
    covered: np.ndarray  # (clusters, models) bool
    models: list[str]
    population_samples: int
    node_type: np.ndarray
    node_label: list[str]
    node_key: list[str]
    node_rank: np.ndarray  # position of each node inside its cluster's member list
    mention_cluster: np.ndarray
    mention_node: np.ndarray
    mention_label: np.ndarray
    label_names: list[str]
    label_similarity: np.ndarray  # the population's shared label cosine matrix (not a copy)
    order: np.ndarray
    head: np.ndarray
    _built: dict[int, Cluster] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.score)

    def members(self, c: int) -> list[int]:
        """Node indices of cluster ``c``, most input atoms first (then weighted degree, then label)."""
        nodes = (self.cluster_of_node == c).nonzero()[0]
        return nodes[self.node_rank[nodes].argsort(kind="stable")].tolist()

    def cluster(self, c: int) -> Cluster:
        hit = self._built.get(c)
        if hit is not None:
            return hit
        nodes = self.members(c)
        type_name = ATOM_TYPES[int(self.node_type[nodes[0]])]
        # the head's surface forms: most frequent first (the first is its label); ties shorter, alphabetical
        counts: dict[int, int] = {}  # a plain dict: Counter's constructor costs more than the counting here
        for label in self.mention_label[self.mention_node == nodes[0]].tolist():
            counts[label] = counts.get(label, 0) + 1
        aliases = sorted(counts, key=lambda label: (-counts[label], label))
        cosines = self.label_similarity[aliases[0], aliases]
        built = Cluster(
            id=_cluster_id(type_name, tuple([self.node_key[v] for v in nodes])),
            type=type_name,
            label=self.node_label[nodes[0]],
            aliases=[self.label_names[i] for i in aliases],
            alias_cosines=[
                (self.label_names[i], round(float(x), 4)) for i, x in zip(aliases, cosines.tolist())
            ],
            score=float(self.score[c]),
            model_coverage=float(self.coverage[c]),
            centrality=float(self.centrality[c]),
            convergence=float(self.convergence[c]),
            n_models=int(self.n_models[c]),
            n_samples=int(self.n_samples[c]),
            population_models=len(self.models),
            population_samples=self.population_samples,
            members=[self.node_label[v] for v in nodes],
            models=[self.models[i] for i in self.covered[c].nonzero()[0].tolist()],
            nodes=nodes,
        )
        self._built[c] = built
        return built

    def ranked(self, limit: int | None = None) -> list[Cluster]:
        """Clusters in ClicheScore order (all, or the first ``limit``)."""
        return [self.cluster(c) for c in self.order[:limit].tolist()]

    def iter_ranked(
        self, *, types: Sequence[str] | None = None, min_models: int = 0, distinct_labels: bool = False
    ) -> Iterator[Cluster]:
        """Clusters in ClicheScore order, built one at a time; optionally only those of ``types`` shared by
        at least ``min_models`` models (filtered on the arrays, before anything is built), and with
        ``distinct_labels`` only the first of each label (as checklist items take them), the others not
        built."""
        # the filters read from lists in ranked order (a context reads one or three clusters of ~90: a few
        # list reads cost less than the numpy calls that would filter every cluster first)
        n_models = self.n_models.tolist()
        wanted = None if types is None else {ATOM_TYPES.index(t) for t in types}
        head_type = None if types is None else self.node_type[self.head].tolist()
        seen: set[str] = set()
        for c in self.order.tolist():
            if n_models[c] < min_models or (wanted is not None and head_type[c] not in wanted):
                continue
            if distinct_labels:
                label = self.node_label[self.head[c]]
                if label in seen:
                    continue
                seen.add(label)
            yield self.cluster(c)


def score_partition(graph: IdeaGraph, cluster_of_node: np.ndarray) -> ScoredClusters:
    """Score every cluster of a partition given as a cluster label per node (labels ``0..k-1``)."""
    canon = graph.canon
    table = canon.table
    n_nodes = canon.n_nodes
    cluster_of_node = np.asarray(cluster_of_node, dtype=np.int64)
    k = int(cluster_of_node.max()) + 1 if n_nodes else 0
    # ModelCov, Cent, Conv, ClicheScore (App. G.3) and the sample counts in one compiled pass (score_kernel:
    # the same float operations in the same order as the numpy form it replaced, tests/engine/tig/test_score_kernel.py)
    score, coverage, cent, conv, n_models, n_samples, covered, mention_cluster = cluster_sums(
        cluster_of_node, k, graph.node_models, graph.degree, canon.node_similarity, canon.mention_node,
        table.label_ids, table.label_similarity, table.response, graph.n_responses,
        MODEL_COVERAGE_WEIGHT, CENTRALITY_WEIGHT, CONVERGENCE_WEIGHT,
    )
    # members: most input atoms first, then weighted degree, then label
    mentions_per_node = np.bincount(canon.mention_node, minlength=n_nodes)
    # each node's position when nodes are sorted by label (stable: equal labels keep node order)
    label_rank = np.empty(n_nodes, dtype=np.int64)
    if canon.node_label_id is not None:  # the labels' text order, ranked once per task
        label_rank[table.label_text_rank[canon.node_label_id].argsort(kind="stable")] = np.arange(n_nodes)
    else:
        label_rank[sorted(range(n_nodes), key=canon.node_label.__getitem__)] = np.arange(n_nodes)
    node_order = np.lexsort((label_rank, -graph.degree, -mentions_per_node))
    node_rank = np.empty(n_nodes, dtype=np.int64)
    node_rank[node_order] = np.arange(n_nodes)
    head = np.full(k, -1, dtype=np.int64)  # each cluster's first member
    head[cluster_of_node[node_order[::-1]]] = node_order[::-1]
    # ranking: score, then coverage, then the head label; remaining ties keep cluster order
    order = np.lexsort((label_rank[head], -coverage, -score)) if k else np.zeros(0, dtype=np.int64)
    return ScoredClusters(
        cluster_of_node=cluster_of_node,
        score=score,
        coverage=coverage,
        centrality=cent,
        convergence=conv,
        n_models=n_models,
        n_samples=n_samples,
        covered=covered,
        models=graph.models,
        population_samples=graph.n_responses,
        node_type=canon.node_type,
        node_label=canon.node_label,
        node_key=canon.node_key,
        node_rank=node_rank,
        mention_cluster=mention_cluster,
        mention_node=canon.mention_node,
        mention_label=table.label_ids,
        label_names=table.label_names,
        label_similarity=table.label_similarity,
        order=order,
        head=head,
    )


def partition_labels(partition: list[np.ndarray], n_nodes: int) -> np.ndarray:
    """Cluster label per node from a list of node-index arrays."""
    labels = np.full(n_nodes, -1, dtype=np.int64)
    for c, nodes in enumerate(partition):
        labels[nodes] = c
    if (labels < 0).any():
        raise ValueError("the partition does not cover every node")
    return labels


def score_clusters(graph: IdeaGraph, partition: list[np.ndarray]) -> list[Cluster]:
    """Score every cluster of ``partition`` (node index arrays) on ``graph``; sorted by ClicheScore, highest
    first (ties: wider model coverage, then label)."""
    if not partition:
        return []
    return score_partition(graph, partition_labels(partition, graph.canon.n_nodes)).ranked()

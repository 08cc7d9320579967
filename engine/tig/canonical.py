"""Canonicalisation: group synonymous atoms within each type (Ekphrasis App. G.2, the "C" of EDC).

The rule is the paper's: *every input atom appears in exactly one alias list and no atom is invented*.
:func:`repair_alias_groups` enforces it on any proposed grouping (an LLM's, say) and reports what it fixed;
:class:`EmbeddingCanonicaliser` is the offline path -- atoms with the same normalised key are one group, and
groups whose key centroids have cosine >= ``threshold`` are merged greedily (most frequent first, each group
joining the most similar existing leader), so one very common phrasing absorbs its paraphrases.

The result for a population is a :class:`Canonicalisation` -- the node of every mention plus, per node, its
type, label (the most frequent surface form), aliases (every distinct surface form, most frequent first)
and mention list -- from which :meth:`Canonicalisation.records` builds the App. G.1 canonical records
(id, type, label, aliases, provenance, embedding).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Protocol

import numpy as np

from engine.tig.atoms import ATOM_TYPES, AtomTable

__all__ = [
    "CANONICAL_MERGE_THRESHOLD",
    "AliasGrouping",
    "CanonicalAtom",
    "Canonicalisation",
    "Canonicaliser",
    "EmbeddingCanonicaliser",
    "Provenance",
    "canonicalise",
    "group_sums",
    "leader_groups",
    "ranked_labels",
    "repair_alias_groups",
]

# Offline synonym merge: cosine between key centroids (all-MiniLM-L6-v2). Stricter than the 0.78 similarity
# edge of App. G.3 on purpose: near-paraphrases become one atom, looser relatives stay separate atoms that a
# similarity edge and Leiden can still put into one cluster.
CANONICAL_MERGE_THRESHOLD = 0.85


@dataclass(frozen=True)
class Provenance:
    """Where a canonical atom was seen (App. G.1: response id, model id, task id, sample index)."""

    response_id: str
    model: str
    task: str
    sample: Any


@dataclass
class CanonicalAtom:
    """App. G.1 canonical record."""

    id: str
    type: str
    label: str
    aliases: list[str]
    provenance: list[Provenance]
    embedding: list[float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "label": self.label,
            "aliases": list(self.aliases),
            "provenance": [p.__dict__ for p in self.provenance],
            "embedding": self.embedding,
        }


@dataclass
class AliasGrouping:
    """A validated grouping of ``n`` input atoms: ``groups[g]`` lists input indices, ``labels[g]`` is one of
    them; ``issues`` says what the repair changed (empty when the proposal was already valid)."""

    groups: list[list[int]]
    labels: list[int]
    issues: list[str] = field(default_factory=list)


def repair_alias_groups(proposed: Sequence[dict[str, Any]], inputs: Sequence[str]) -> AliasGrouping:
    """Make a proposed grouping obey "each input atom in exactly one alias list, none invented".

    ``proposed`` items are ``{"label": str, "aliases": [str, ...]}``; matching is exact after
    whitespace/case folding. Repairs: an alias that is not an input is dropped (invented); an input listed
    twice stays in its first group only (duplicate); an input listed nowhere becomes its own group
    (missing); a group left empty disappears; a label that is not one of its group's aliases is replaced by
    the group's first alias (invented label).
    """
    fold = {}
    for i, text in enumerate(inputs):
        fold.setdefault(" ".join(str(text).lower().split()), i)
    issues: list[str] = []
    placed: set[int] = set()
    groups: list[list[int]] = []
    labels: list[int] = []
    for item in proposed:
        aliases = item.get("aliases") if isinstance(item, dict) else None
        if not isinstance(aliases, list):
            issues.append(f"group without an alias list dropped: {item!r}"[:200])
            continue
        members: list[int] = []
        for alias in aliases:
            i = fold.get(" ".join(str(alias).lower().split()))
            if i is None:
                issues.append(f"invented atom dropped: {alias!r}")
            elif i in placed:
                issues.append(f"atom listed twice, kept in its first group: {inputs[i]!r}")
            else:
                placed.add(i)
                members.append(i)
        if not members:
            continue
        label = fold.get(" ".join(str(item.get("label", "")).lower().split()))
        if label not in members:
            issues.append(
                f"label {item.get('label')!r} is not one of its aliases; using {inputs[members[0]]!r}"
            )
            label = members[0]
        groups.append(members)
        labels.append(label)
    for i in range(len(inputs)):
        if i not in placed and fold.get(" ".join(str(inputs[i]).lower().split())) == i:
            issues.append(f"missing atom added as its own group: {inputs[i]!r}")
            groups.append([i])
            labels.append(i)
            placed.add(i)
    # inputs that fold to the same text as an earlier input follow it
    for i in range(len(inputs)):
        if i not in placed:
            j = fold[" ".join(str(inputs[i]).lower().split())]
            for g in groups:
                if j in g:
                    g.append(i)
                    break
    return AliasGrouping(groups, labels, issues)


def leader_groups(similarity: np.ndarray, order: Sequence[int], threshold: float) -> np.ndarray:
    """Greedy leader grouping: visit items in ``order``; each joins the most similar existing leader if
    that cosine is >= ``threshold``, else becomes a leader. Returns the leader index of every item.

    Items with no neighbour at or above the threshold can neither join nor be joined, so only the others
    enter the sequential loop.
    """
    n = similarity.shape[0]
    leader = np.arange(n)
    if n < 2:
        return leader
    close = (similarity >= threshold).sum(axis=1) > 1  # itself plus at least one other
    if not close.any():
        return leader
    close_idx = np.flatnonzero(close)
    position = np.full(n, -1, dtype=np.int64)
    position[close_idx] = np.arange(len(close_idx))
    sub = similarity[np.ix_(close_idx, close_idx)]
    is_leader = np.zeros(len(close_idx), dtype=bool)
    for i in order:
        p = position[i]
        if p < 0:
            continue
        row = np.where(is_leader, sub[p], -np.inf)
        j = int(np.argmax(row))
        if row[j] >= threshold:
            leader[i] = close_idx[j]
        else:
            is_leader[p] = True
    return leader


class Canonicaliser(Protocol):
    """Groups the distinct atoms of one type: ``texts`` (one per normalised key), how many input atoms
    each stands for, and their cosine ``similarity`` matrix; returns the group index of every text."""

    name: str

    def group(
        self, atom_type: str, texts: Sequence[str], counts: Sequence[int], similarity: np.ndarray
    ) -> Sequence[int]: ...


class EmbeddingCanonicaliser:
    """Offline canonicaliser: greedy leader grouping at cosine >= ``threshold``, most frequent first."""

    name = "embedding"

    def __init__(self, threshold: float = CANONICAL_MERGE_THRESHOLD) -> None:
        self.threshold = float(threshold)
        self.name = f"embedding@{self.threshold:g}"

    def group(
        self, atom_type: str, texts: Sequence[str], counts: Sequence[int], similarity: np.ndarray
    ) -> np.ndarray:
        n = len(texts)
        if n < 2 or not (similarity >= self.threshold).sum() > n:  # nothing but the diagonal is close
            return np.arange(n)
        order = sorted(range(n), key=lambda i: (-counts[i], texts[i]))
        return leader_groups(similarity, order, self.threshold)


def ranked_labels(group: np.ndarray, label_ids: np.ndarray, n_groups: int) -> list[list[int]]:
    """Per group, its distinct label ids ordered by frequency (most first), ties by smaller id (shorter,
    then alphabetical: :class:`AtomTable` sorts its label names so)."""
    out: list[list[int]] = [[] for _ in range(n_groups)]
    if not len(group):
        return out
    width = int(label_ids.max()) + 1
    codes, counts = np.unique(np.asarray(group, dtype=np.int64) * width + label_ids, return_counts=True)
    g, lab = np.divmod(codes, width)
    order = np.lexsort((lab, -counts, g))
    for gi, li in zip(g[order].tolist(), lab[order].tolist()):
        out[gi].append(li)
    return out


def group_sums(group: np.ndarray, rows: np.ndarray, n_groups: int) -> np.ndarray:
    """``rows`` summed per group id; a group of one row is copied, only the others are added up
    (empty groups are zero rows)."""
    group = np.asarray(group, dtype=np.int64)
    out = np.zeros((n_groups, rows.shape[1]), dtype=rows.dtype)
    if not len(group):
        return out
    single = np.bincount(group, minlength=n_groups)[group] == 1
    out[group[single]] = rows[single]
    multi = np.flatnonzero(~single)
    if len(multi):
        order = multi[np.argsort(group[multi], kind="stable")]
        sorted_group = group[order]
        starts = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
        out[sorted_group[starts]] = np.add.reduceat(rows[order], starts, axis=0)
    return out


def _unit_rows(x: np.ndarray) -> np.ndarray:
    # x / ||x||_2 per row
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _cosine(gram: np.ndarray) -> np.ndarray:
    # cos(a, b) = <a, b> / (|a| |b|) from a Gram matrix of unnormalised sums
    norm = np.sqrt(np.maximum(np.diag(gram), 1e-24))
    return gram / norm[:, None] / norm[None, :]


@dataclass
class Canonicalisation:
    """Canonical atoms of one population: ``mention_node[i]`` is the node of mention i; ``node_label[v]`` the
    node's most frequent surface form; ``node_similarity[u, v]`` the cosine between the nodes' embeddings
    (normalised mean of their input atoms' embeddings) for nodes of one type, 0 across types."""

    table: AtomTable
    mention_node: np.ndarray
    node_type: np.ndarray
    node_label: list[str]
    node_key: list[str]
    node_similarity: np.ndarray
    _aliases: list[list[str]] | None = field(default=None, repr=False)

    @property
    def n_nodes(self) -> int:
        return len(self.node_label)

    @property
    def node_embedding(self) -> np.ndarray:
        """Normalised mean of each node's input-atom embeddings (computed on demand)."""
        return _unit_rows(group_sums(self.mention_node, self.table.embeddings, self.n_nodes))

    @property
    def node_aliases(self) -> list[list[str]]:
        """Every distinct surface form of each node, most frequent first."""
        if self._aliases is None:
            names = self.table.label_names
            ranked = ranked_labels(self.mention_node, self.table.label_ids, self.n_nodes)
            self._aliases = [[names[i] for i in ids] for ids in ranked]
        return self._aliases

    def node_id(self, node: int) -> str:
        """Stable id: type plus a hash of the canonical key (equal across contexts for equal atoms)."""
        t = ATOM_TYPES[int(self.node_type[node])]
        return f"{t}-{hashlib.sha1(self.node_key[node].encode()).hexdigest()[:10]}"

    def records(self, *, with_embeddings: bool = False) -> list[CanonicalAtom]:
        """App. G.1 canonical records, one per node, provenance in mention order."""
        t = self.table
        out = []
        aliases = self.node_aliases
        embeddings = self.node_embedding if with_embeddings else None
        for node in range(self.n_nodes):
            mentions = np.flatnonzero(self.mention_node == node)
            seen: dict[int, Provenance] = {}
            for m in mentions:
                r = int(t.response[m])
                seen.setdefault(r, Provenance(t.response_ids[r], t.models[r], t.task, t.samples[r]))
            out.append(
                CanonicalAtom(
                    id=self.node_id(node),
                    type=ATOM_TYPES[int(self.node_type[node])],
                    label=self.node_label[node],
                    aliases=list(aliases[node]),
                    provenance=list(seen.values()),
                    embedding=[round(float(x), 6) for x in embeddings[node]]
                    if embeddings is not None
                    else None,
                )
            )
        return out


def _first_per_group(group: np.ndarray, label: np.ndarray, count: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the label with the largest count (ties: smaller label id)."""
    order = np.lexsort((label, -count, group))
    g = group[order]
    firsts = order[np.r_[True, g[1:] != g[:-1]]]
    out = np.zeros(n_groups, dtype=np.int64)
    out[group[firsts]] = label[firsts]
    return out


def canonicalise(table: AtomTable, canonicaliser: Canonicaliser | None = None) -> Canonicalisation:
    """Canonical atoms of ``table``: mentions sharing a (type, key) start as one group, then
    ``canonicaliser`` (default :class:`EmbeddingCanonicaliser`) merges groups within each type.

    All similarities come from the table's label cosine matrix: the Gram matrix of unnormalised sums is
    ``P S P^T`` for a count matrix P (groups x labels), so key centroids and node embeddings are never formed.
    """
    canonicaliser = canonicaliser or _DEFAULT
    if table.n_mentions == 0:
        return Canonicalisation(table, np.zeros(0, np.int64), np.zeros(0, np.int64), [], [], np.zeros((0, 0)))
    names = table.label_names
    width = len(names)
    keys, key_of_mention = np.unique(table.key_ids, return_inverse=True)
    # order keys by (type, key text) so node order -- and with it Leiden's input -- depends only on the
    # population's content, never on where else (e.g. in a candidate's response) a key was first seen;
    # it also makes each type's keys one contiguous run
    key_names = [table.key_names[k] for k in keys.tolist()]
    by_content = sorted(range(len(keys)), key=key_names.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[by_content] = np.arange(len(keys))
    keys = keys[by_content]
    key_names = [key_names[k] for k in by_content]
    key_of_mention = rank[key_of_mention]
    n_k = len(keys)
    key_count = np.bincount(key_of_mention, minlength=n_k)
    key_type = np.zeros(n_k, dtype=np.int64)
    key_type[key_of_mention] = table.types
    # distinct (key, label) pairs with their mention counts, sorted by key
    codes, pair_count = np.unique(key_of_mention * width + table.label_ids, return_counts=True)
    pair_key, pair_label = np.divmod(codes, width)
    key_label = _first_per_group(pair_key, pair_label, pair_count, n_k)
    sim = table.label_similarity

    node_of_key = np.empty(n_k, dtype=np.int64)
    blocks: list[tuple[int, np.ndarray]] = []
    n_nodes = 0
    type_starts = np.flatnonzero(np.r_[True, key_type[1:] != key_type[:-1], True])
    pair_starts = np.searchsorted(pair_key, type_starts)
    for (k0, k1), (p0, p1) in zip(pairwise(type_starts), pairwise(pair_starts)):
        n_keys = k1 - k0
        counts_t = None
        if p1 - p0 == n_keys:
            # every key has one surface form: its centroid is that label's embedding
            labels_t = pair_label[p0:p1]
            sim_t = sim[np.ix_(labels_t, labels_t)]
            key_cos = sim_t
        else:
            labels_t, local = np.unique(pair_label[p0:p1], return_inverse=True)
            counts_t = np.zeros((n_keys, len(labels_t)))
            counts_t[pair_key[p0:p1] - k0, local] = pair_count[p0:p1]
            sim_t = sim[np.ix_(labels_t, labels_t)]
            # key centroid cosines: Gram of per-key embedding sums, P S P^T
            key_cos = _cosine(counts_t @ sim_t @ counts_t.T)
        groups = canonicaliser.group(
            ATOM_TYPES[int(key_type[k0])],
            [names[i] for i in key_label[k0:k1].tolist()],
            key_count[k0:k1].tolist(),
            key_cos,
        )
        groups = np.asarray(groups, dtype=np.int64)
        identity = np.arange(n_keys)
        dense = identity if np.array_equal(groups, identity) else np.unique(groups, return_inverse=True)[1]
        n_t = int(dense.max()) + 1
        node_of_key[k0:k1] = n_nodes + dense
        if dense is identity and counts_t is None:
            node_cos = key_cos  # no merges: each node is one key with one surface form
        else:
            if counts_t is None:
                counts_t = np.eye(n_keys)
            node_counts = np.zeros((n_t, n_keys))
            node_counts[dense, np.arange(n_keys)] = 1.0
            node_counts = node_counts @ counts_t
            node_cos = _cosine(node_counts @ sim_t @ node_counts.T)
        blocks.append((n_nodes, node_cos))
        n_nodes += n_t
    node_similarity = np.zeros((n_nodes, n_nodes))
    for start, block in blocks:
        node_similarity[start : start + len(block), start : start + len(block)] = block
    mention_node = node_of_key[key_of_mention]
    node_type = np.zeros(n_nodes, dtype=np.int64)
    node_type[node_of_key] = key_type
    # node label: most frequent surface form over the node's mentions (ties: shorter, then alphabetical)
    node_codes, inverse = np.unique(node_of_key[pair_key] * width + pair_label, return_inverse=True)
    node_pair_count = np.bincount(inverse, weights=pair_count)
    node_pair_node, node_pair_label = np.divmod(node_codes, width)
    node_label_id = _first_per_group(node_pair_node, node_pair_label, node_pair_count, n_nodes)
    # node key: the type-qualified key of the node's most frequent key (first in content order on ties)
    by_node = np.lexsort((np.arange(n_k), -key_count, node_of_key))
    first = by_node[np.r_[True, node_of_key[by_node][1:] != node_of_key[by_node][:-1]]]
    node_key = [""] * n_nodes
    for k in first.tolist():
        t_name, key = key_names[k]
        node_key[int(node_of_key[k])] = f"{t_name}:{key}"
    return Canonicalisation(
        table=table,
        mention_node=mention_node,
        node_type=node_type,
        node_label=[names[i] for i in node_label_id.tolist()],
        node_key=node_key,
        node_similarity=node_similarity,
    )


_DEFAULT = EmbeddingCanonicaliser()

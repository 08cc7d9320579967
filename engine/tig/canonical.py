"""Canonicalisation: group synonymous atoms within each type (Ekphrasis App. G.2, the "C" of EDC).

The rule is the paper's: *every input atom appears in exactly one alias list and no atom is invented*.
:func:`repair_alias_groups` enforces it on any proposed grouping (an LLM's, say) and reports what it fixed;
:class:`EmbeddingCanonicaliser` is the offline path -- atoms with the same normalised key are one group, and
groups whose key centroids have cosine >= ``threshold`` are merged greedily (most frequent first, each group
joining the most similar existing leader), so one very common phrasing absorbs its paraphrases.

Whatever proposed a group -- the offline extractor's normalised keys ("melted" and "melting" share the key
"melt"), the key-centroid merge or an LLM -- an alias must be a paraphrase of its canonical atom:
:func:`alias_split` keeps in a canonical atom only the surface forms whose cosine to its label (the most
frequent form) is >= :data:`CANONICAL_MERGE_THRESHOLD`; the others leave it and are grouped the same way
among themselves (each becomes its own atom unless it is a paraphrase of another one that left).
:func:`canonicalise` applies it to every canonicaliser's grouping, and the LLM canonicaliser's proposals
are repaired the same way (:func:`repair_alias_groups` with ``similarity``), so the rule holds on every path.

The result for a population is a :class:`Canonicalisation` -- the node of every mention plus, per node, its
type, label (the most frequent surface form), aliases (every distinct surface form, most frequent first,
each with the cosine to the label that admitted it) and mention list -- from which
:meth:`Canonicalisation.records` builds the App. G.1 canonical records (id, type, label, aliases,
provenance, embedding).
"""

from __future__ import annotations

import bisect
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Protocol

import numpy as np

from engine.tig.atoms import ATOM_TYPES, AtomTable
from engine.tig.canonical_kernel import node_tables
from engine.tig.distinct import distinct, distinct_inverse, run_starts

__all__ = [
    "CANONICAL_MERGE_THRESHOLD",
    "AliasGrouping",
    "CanonicalAtom",
    "Canonicalisation",
    "Canonicaliser",
    "EmbeddingCanonicaliser",
    "Provenance",
    "alias_split",
    "canonicalise",
    "group_sums",
    "leader_groups",
    "ranked_labels",
    "repair_alias_groups",
]

# Synonym grouping threshold (the paper states none for App. G.2's canonicalisation; this project's choice,
# with the embedder the build uses -- all-MiniLM-L6-v2 offline): the minimum cosine between key centroids for
# the offline merge, and between every alias and its canonical label on every path (offline keys, merge,
# LLM). Stricter than the 0.78 similarity edge of App. G.3 on purpose: near-paraphrases become one atom,
# looser relatives stay separate atoms that a similarity edge and Leiden can still put into one cluster.
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
    """App. G.1 canonical record; ``alias_cosines`` pairs each alias with its cosine to ``label`` (the
    similarity that admitted it: >= the threshold, 1.0 for the label itself)."""

    id: str
    type: str
    label: str
    aliases: list[str]
    provenance: list[Provenance]
    embedding: list[float] | None = None
    alias_cosines: list[tuple[str, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "label": self.label,
            "aliases": list(self.aliases),
            "alias_cosines": [[a, c] for a, c in self.alias_cosines],
            "provenance": [p.__dict__ for p in self.provenance],
            "embedding": self.embedding,
        }


@dataclass
class AliasGrouping:
    """A validated grouping of ``n`` input atoms: ``groups[g]`` lists input indices, ``labels[g]`` is one of
    them; ``issues`` says what the repair changed to obey the prompt's rules (empty when the proposal
    already did), ``splits`` which unrelated aliases it split off (the paraphrase rule)."""

    groups: list[list[int]]
    labels: list[int]
    issues: list[str] = field(default_factory=list)
    splits: list[str] = field(default_factory=list)


def repair_alias_groups(
    proposed: Sequence[dict[str, Any]],
    inputs: Sequence[str],
    *,
    similarity: np.ndarray | None = None,
    threshold: float = CANONICAL_MERGE_THRESHOLD,
) -> AliasGrouping:
    """Make a proposed grouping obey "each input atom in exactly one alias list, none invented" and, given
    the inputs' cosine ``similarity`` matrix, "every alias a paraphrase of its label".

    ``proposed`` items are ``{"label": str, "aliases": [str, ...]}``; matching is exact after
    whitespace/case folding. Repairs: an alias that is not an input is dropped (invented); an input listed
    twice stays in its first group only (duplicate); an input listed nowhere becomes its own group
    (missing); a group left empty disappears; a label that is not one of its group's aliases is replaced by
    the group's first alias (invented label); with ``similarity``, an alias whose cosine to its group's
    label is below ``threshold`` leaves the group (unrelated alias, reported in ``splits``) -- the aliases
    that left one group are regrouped in their listed order, each joining the first of them it is within
    ``threshold`` of, else becoming its own atom.
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
    splits: list[str] = []
    if similarity is not None:
        groups, labels = _split_unrelated(groups, labels, inputs, np.asarray(similarity), threshold, splits)
    # inputs that fold to the same text as an earlier input follow it
    for i in range(len(inputs)):
        if i not in placed:
            j = fold[" ".join(str(inputs[i]).lower().split())]
            for g in groups:
                if j in g:
                    g.append(i)
                    break
    return AliasGrouping(groups, labels, issues, splits)


def _split_unrelated(
    groups: list[list[int]],
    labels: list[int],
    inputs: Sequence[str],
    similarity: np.ndarray,
    threshold: float,
    issues: list[str],
) -> tuple[list[list[int]], list[int]]:
    """Each group keeps the members with ``cos(member, label) >= threshold``; the others are regrouped by
    leader (listed order) and appended as groups of their own, each split reported in ``issues``."""
    out_groups: list[list[int]] = []
    out_labels: list[int] = []
    extra: list[tuple[list[int], int]] = []
    for members, label in zip(groups, labels):
        row = similarity[label]
        kept = [i for i in members if i == label or row[i] >= threshold]
        left = [i for i in members if i not in kept]
        for i in left:
            issues.append(
                f"unrelated alias split off: {inputs[i]!r} has cosine {row[i]:.2f} < {threshold:g} "
                f"to its label {inputs[label]!r}"
            )
        out_groups.append(kept)
        out_labels.append(label)
        while left:
            lead = left[0]
            joined = [i for i in left if i == lead or similarity[lead, i] >= threshold]
            extra.append((joined, lead))
            left = [i for i in left if i not in joined]
    for members, label in extra:
        out_groups.append(members)
        out_labels.append(label)
    return out_groups, out_labels


def alias_split(
    node_of_pair: np.ndarray,
    pair_label: np.ndarray,
    pair_count: np.ndarray,
    similarity: np.ndarray,
    threshold: float = CANONICAL_MERGE_THRESHOLD,
) -> np.ndarray:
    """Split every canonical atom so that each alias is a paraphrase of its label.

    Input: one row per distinct (key, surface form) pair -- its node, its label id (a row of the label
    cosine matrix ``similarity``) and its mention count. A node's label is its most frequent surface form
    (ties: smaller label id, as :func:`canonicalise` chooses it). A node keeps the forms with
    ``cos(form, label) >= threshold``; the forms that fail are visited most frequent first, each joining the
    first of them (its leader) it is within ``threshold`` of, else leading a new node -- so the rule holds
    for every node made. Nodes left whole keep their index; new nodes are numbered after the existing ones
    in (node, leader) order. Returns the node of every pair.
    """
    node_of_pair = np.asarray(node_of_pair, dtype=np.int64)
    if len(node_of_pair) < 2:
        return node_of_pair
    pair_label = np.asarray(pair_label, dtype=np.int64)
    n = int(node_of_pair.max()) + 1
    width = int(pair_label.max()) + 1
    codes, pair_form = distinct_inverse(node_of_pair * width + pair_label)
    form_count = np.bincount(pair_form, weights=np.asarray(pair_count, dtype=np.float64))
    form_node, form_label = np.divmod(codes, width)
    leader = _first_per_group(form_node, form_label, form_count, n)[form_node]
    unrelated = (similarity[form_label, leader] < threshold) & (form_label != leader)
    if not unrelated.any():
        return node_of_pair
    out = form_node.copy()
    next_node = n
    for v in distinct(form_node[unrelated]).tolist():
        forms = np.flatnonzero((form_node == v) & unrelated)
        left = forms[np.lexsort((form_label[forms], -form_count[forms]))].tolist()
        while left:
            row = similarity[form_label[left[0]]]
            joined = [f for f in left if f == left[0] or row[form_label[f]] >= threshold]
            out[joined] = next_node
            next_node += 1
            left = [f for f in left if f not in joined]
    return out[pair_form]


def _forms_close_all_round(node_of_form: np.ndarray, similarity: np.ndarray, threshold: float) -> bool:
    """Whether every surface form is within ``threshold`` of every other form of its node, given the forms'
    cosine matrix (one row per form, as ``node_of_form``): then :func:`alias_split` splits nothing, whichever
    form is a node's label -- it compares each form with its label by the same cosines (a copy of the same
    entries), and a form that is its node's label is never split off. False when in doubt (NaN): the caller
    then runs :func:`alias_split` itself."""
    within = (similarity >= threshold) | (node_of_form[:, None] != node_of_form[None, :])
    within.ravel()[:: len(within) + 1] = True  # the diagonal (np.fill_diagonal's wrapper costs more)
    return bool(within.all())


def leader_groups(similarity: np.ndarray, order: Sequence[int], threshold: float) -> np.ndarray:
    """Greedy leader grouping: visit items in ``order``; each joins the most similar existing leader if
    that cosine is >= ``threshold``, else becomes a leader. Returns the leader index of every item.

    Items with no neighbour at or above the threshold can neither join nor be joined, so only the others
    enter the sequential loop.
    """
    if similarity.shape[0] < 2:
        return np.arange(similarity.shape[0])
    close = (similarity >= threshold).sum(axis=1) > 1  # itself plus at least one other
    return _leader_groups(similarity, order, threshold, close.nonzero()[0])


def _leader_groups(
    similarity: np.ndarray, order: Sequence[int], threshold: float, close_idx: np.ndarray
) -> np.ndarray:
    """:func:`leader_groups` given ``close_idx``, the items (increasing) with a neighbour other than
    themselves at or above ``threshold``."""
    leader = np.arange(similarity.shape[0])
    if not len(close_idx):
        return leader
    position = dict(zip(close_idx.tolist(), range(len(close_idx))))
    # the few items' cosines as Python floats (the same values): a loop over a handful of items costs less
    # in plain Python than one numpy call per visit
    rows = similarity[close_idx[:, None], close_idx].tolist()
    leaders: list[int] = []  # positions of the leaders so far, increasing
    for i in order:
        p = position.get(i)
        if p is None:
            continue
        # the most similar leader, the first of equals (np.argmax over the leaders' cosines in position order)
        row, best, j = rows[p], -math.inf, -1
        for q in leaders:
            if row[q] > best:
                best, j = row[q], q
        if best >= threshold:
            leader[i] = close_idx[j]
        else:
            bisect.insort(leaders, p)
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

    def merges_nothing(self, similarity: np.ndarray) -> bool:
        """Whether no two distinct texts are within the threshold (nothing but the diagonal is close):
        :meth:`group` then returns the identity."""
        return not np.count_nonzero(similarity >= self.threshold) > len(similarity)

    def group(
        self, atom_type: str, texts: Sequence[str], counts: Sequence[int], similarity: np.ndarray
    ) -> np.ndarray:
        n = len(texts)
        if n < 2:
            return np.arange(n)
        close_per_row = (similarity >= self.threshold).sum(axis=1)
        # merges_nothing's test, count_nonzero(similarity >= threshold) <= n, on the same comparisons
        own_test = type(self).merges_nothing is EmbeddingCanonicaliser.merges_nothing
        nothing = (not close_per_row.sum() > n) if own_test else self.merges_nothing(similarity)
        if nothing:
            return np.arange(n)
        # leader_groups visits only items with a close neighbour (the others stay alone), so only those
        # need the most-frequent-first order
        candidates = (close_per_row > 1).nonzero()[0]
        order = sorted(candidates.tolist(), key=lambda i: (-counts[i], texts[i]))
        return _leader_groups(similarity, order, self.threshold, candidates)


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
    multi = (~single).nonzero()[0]
    if len(multi):
        order = multi[np.argsort(group[multi], kind="stable")]
        sorted_group = group[order]
        starts = np.r_[True, sorted_group[1:] != sorted_group[:-1]].nonzero()[0]
        out[sorted_group[starts]] = np.add.reduceat(rows[order], starts, axis=0)
    return out


def _unit_rows(x: np.ndarray) -> np.ndarray:
    # x / ||x||_2 per row
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _cosine(gram: np.ndarray) -> np.ndarray:
    # cos(a, b) = <a, b> / (|a| |b|) from a Gram matrix of unnormalised sums
    norm = np.sqrt(np.maximum(gram.diagonal(), 1e-24))
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
    _ranked: list[list[int]] | None = field(default=None, repr=False)
    node_label_id: np.ndarray | None = field(default=None, repr=False)  # node_label as the table's label ids

    @property
    def n_nodes(self) -> int:
        return len(self.node_label)

    @property
    def node_embedding(self) -> np.ndarray:
        """Normalised mean of each node's input-atom embeddings (computed on demand)."""
        return _unit_rows(group_sums(self.mention_node, self.table.embeddings, self.n_nodes))

    def _ranked_label_ids(self) -> list[list[int]]:
        if self._ranked is None:
            self._ranked = ranked_labels(self.mention_node, self.table.label_ids, self.n_nodes)
        return self._ranked

    @property
    def node_aliases(self) -> list[list[str]]:
        """Every distinct surface form of each node, most frequent first (the first is the label)."""
        names = self.table.label_names
        return [[names[i] for i in ids] for ids in self._ranked_label_ids()]

    @property
    def node_alias_cosines(self) -> list[list[tuple[str, float]]]:
        """Per node, ``(alias, cos(alias, label))`` for every surface form, most frequent first: the
        similarity that admitted each alias (>= the canonicalisation threshold; 1.0 for the label)."""
        names = self.table.label_names
        sim = self.table.label_similarity
        return [
            [(names[i], round(float(sim[ids[0], i]), 4)) for i in ids] for ids in self._ranked_label_ids()
        ]

    def node_id(self, node: int) -> str:
        """Stable id: type plus a hash of the canonical key (equal across contexts for equal atoms)."""
        t = ATOM_TYPES[int(self.node_type[node])]
        return f"{t}-{hashlib.sha1(self.node_key[node].encode()).hexdigest()[:10]}"

    def records(self, *, with_embeddings: bool = False) -> list[CanonicalAtom]:
        """App. G.1 canonical records, one per node, provenance in mention order."""
        t = self.table
        out = []
        aliases = self.node_alias_cosines
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
                    aliases=[a for a, _ in aliases[node]],
                    provenance=list(seen.values()),
                    embedding=[round(float(x), 6) for x in embeddings[node]]
                    if embeddings is not None
                    else None,
                    alias_cosines=list(aliases[node]),
                )
            )
        return out


def _first_per_group(group: np.ndarray, label: np.ndarray, count: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the label with the largest count (ties: smaller label id)."""
    order = np.lexsort((label, -count, group))
    g = group[order]
    firsts = order[run_starts(g)]
    out = np.zeros(n_groups, dtype=np.int64)
    out[group[firsts]] = label[firsts]
    return out


@dataclass(frozen=True)
class PairTable:
    """The distinct ``(key, surface form)`` pairs of a population's mentions -- :func:`canonicalise`'s input.

    ``keys`` are the key ids present, in content order (:attr:`AtomTable.key_order`), with their mention
    counts ``key_count`` and type codes ``key_type``; pair i is ``(pair_key[i], pair_label[i])`` (a dense index
    into ``keys`` and a label id), sorted by key then label, with its mention count ``pair_count[i]``;
    ``pair_of_mention`` is every mention's pair. ``apart_types`` (leave-out reuse,
    :class:`engine.tig.leaveout.LeaveOutBasis`): type codes in which no two of the population's pairs have
    label cosine >= ``apart_threshold`` and every label's self-cosine is at or above it -- where every key
    has one form, the offline canonicaliser's :meth:`~EmbeddingCanonicaliser.merges_nothing` is then known
    to be true without comparing the type's cosine matrix."""

    keys: np.ndarray
    key_count: np.ndarray
    key_type: np.ndarray
    pair_key: np.ndarray
    pair_label: np.ndarray
    pair_count: np.ndarray
    pair_of_mention: np.ndarray
    apart_types: frozenset[int] = frozenset()
    apart_threshold: float | None = None


def pair_table(table: AtomTable) -> PairTable:
    """The distinct (key, surface form) pairs of ``table``'s mentions, keys in content order.

    Keys are ordered by (type, key text) so node order -- and with it Leiden's input -- depends only on the
    population's content, never on where else (e.g. in a candidate's response) a key was first seen; it also
    makes each type's keys one contiguous run. The order of all the task's keys is sorted once (shared by
    every leave-out subset); a population keeps the keys its mentions use."""
    width = len(table.label_names)
    order = table.key_order
    mention_rank = order.rank[table.key_ids]
    rank_count = np.bincount(mention_rank, minlength=len(order.by_rank))
    present = rank_count > 0
    key_of_mention = (np.cumsum(present) - 1)[mention_rank]
    keys = order.by_rank[present]
    # distinct (key, label) pairs with their mention counts, sorted by key
    codes, pair_of_mention, pair_count = np.unique(
        key_of_mention * width + table.label_ids, return_inverse=True, return_counts=True
    )
    pair_key, pair_label = np.divmod(codes, width)
    return PairTable(
        keys=keys,
        key_count=rank_count[present],
        key_type=order.type_code[keys],
        pair_key=pair_key,
        pair_label=pair_label,
        pair_count=pair_count,
        pair_of_mention=pair_of_mention,
    )


def _most_per_node(node: np.ndarray, value: np.ndarray, count: np.ndarray, width: int, n_nodes: int) -> np.ndarray:
    """Per node, the value with the largest count summed over the node's rows (ties: smaller value)."""
    codes, inverse = distinct_inverse(node * width + value)
    summed = np.bincount(inverse, weights=count)  # whole numbers: exact in any order
    code_node, code_value = np.divmod(codes, width)
    return _first_per_group(code_node, code_value, summed, n_nodes)


def canonicalise(
    table: AtomTable, canonicaliser: Canonicaliser | None = None, *, pairs: PairTable | None = None
) -> Canonicalisation:
    """Canonical atoms of ``table``: mentions sharing a (type, key) start as one group, then
    ``canonicaliser`` (default :class:`EmbeddingCanonicaliser`) merges groups within each type, then
    :func:`alias_split` takes out of every group the surface forms whose cosine to its label is below the
    canonicaliser's ``threshold`` (:data:`CANONICAL_MERGE_THRESHOLD` if it states none) -- whether the key
    rules, the merge or the canonicaliser put them there.

    All similarities come from the table's label cosine matrix: the Gram matrix of unnormalised sums is
    ``P S P^T`` for a count matrix P (groups x labels), so key centroids and node embeddings are never formed.

    ``pairs``: ``table``'s :class:`PairTable` when the caller has it already (a leave-out population's,
    sliced from its task's, :class:`engine.tig.leaveout.LeaveOutBasis`); :func:`pair_table` otherwise.
    """
    canonicaliser = canonicaliser or _DEFAULT
    if table.n_mentions == 0:
        return Canonicalisation(table, np.zeros(0, np.int64), np.zeros(0, np.int64), [], [], np.zeros((0, 0)))
    names = table.label_names
    order = table.key_order
    pairs = pairs if pairs is not None else pair_table(table)
    keys, key_count, key_type = pairs.keys, pairs.key_count, pairs.key_type
    pair_key, pair_label, pair_count = pairs.pair_key, pairs.pair_label, pairs.pair_count
    pair_of_mention = pairs.pair_of_mention
    n_k = len(keys)
    # each key's most frequent surface form; when every key has one (pairs sorted by key: pair i is key i's
    # only pair), that form
    key_label = pair_label if len(pair_key) == n_k else _first_per_group(pair_key, pair_label, pair_count, n_k)
    sim = table.label_similarity
    threshold = float(getattr(canonicaliser, "threshold", CANONICAL_MERGE_THRESHOLD))
    # The offline canonicaliser merges nothing in most types of a leave-out population (no two keys within
    # its threshold): its own test is asked first, and the call, its inputs and the comparison of its answer
    # with the identity are skipped.
    offline = type(canonicaliser).group is EmbeddingCanonicaliser.group
    # A leave-out population's basis may know already that a type's keys are pairwise apart (PairTable):
    # only for the offline canonicaliser's own test at the same threshold.
    apart = (
        pairs.apart_types
        if offline
        and type(canonicaliser).merges_nothing is EmbeddingCanonicaliser.merges_nothing
        and pairs.apart_threshold == threshold
        else frozenset()
    )

    node_of_pair = np.empty(len(pair_key), dtype=np.int64)
    blocks: list[tuple[int, np.ndarray]] = []
    n_nodes = 0
    # each type's run of keys and of pairs, as Python ints (the loop's arithmetic and slices on them)
    type_starts = [*run_starts(key_type).nonzero()[0].tolist(), n_k]
    pair_starts = pair_key.searchsorted(type_starts).tolist()
    for (k0, k1), (p0, p1) in zip(pairwise(type_starts), pairwise(pair_starts)):
        n_keys = k1 - k0
        counts_t = None
        if p1 - p0 == n_keys:
            # every key has one surface form: its centroid is that label's embedding
            labels_t = pair_label[p0:p1]
            sim_t = sim.take(labels_t, axis=0).take(labels_t, axis=1)  # sim[labels_t][:, labels_t], copied
            key_cos = sim_t
        else:
            labels_t, local = distinct_inverse(pair_label[p0:p1])
            counts_t = np.zeros((n_keys, len(labels_t)))
            counts_t[pair_key[p0:p1] - k0, local] = pair_count[p0:p1]
            sim_t = sim[labels_t[:, None], labels_t]
            # key centroid cosines: Gram of per-key embedding sums, P S P^T
            key_cos = _cosine(counts_t @ sim_t @ counts_t.T)
        identity = np.arange(n_keys)
        known_apart = counts_t is None and int(key_type[k0]) in apart
        if offline and (known_apart or canonicaliser.merges_nothing(key_cos)):
            dense = identity
        else:
            groups = canonicaliser.group(
                ATOM_TYPES[int(key_type[k0])],
                [names[i] for i in key_label[k0:k1].tolist()],
                key_count[k0:k1].tolist(),
                key_cos,
            )
            groups = np.asarray(groups, dtype=np.int64)
            if offline:
                # the offline grouping's groups are leader indices, every leader its own: the distinct groups
                # are the fixed points, and a group's rank among them counts the fixed points up to it
                # (distinct_inverse(groups)[1] without its sort)
                fixed = groups == identity
                dense = identity if fixed.all() else (fixed.cumsum() - 1)[groups]
            else:
                unchanged = groups.shape == identity.shape and bool((groups == identity).all())  # np.array_equal
                dense = identity if unchanged else distinct_inverse(groups)[1]
        if dense is identity and counts_t is None:
            # no merges: each node is one key with one surface form (nothing to split)
            node_of_pair[p0:p1] = n_nodes + dense
            n_t = n_keys
            node_cos = key_cos
        else:
            node_t = dense[pair_key[p0:p1] - k0]
            # where each key has one form, whether alias_split can split anything is asked first, on the
            # type's own cosines (most merged groups are close all round)
            if counts_t is not None or not _forms_close_all_round(node_t, sim_t, threshold):
                node_t = alias_split(node_t, pair_label[p0:p1], pair_count[p0:p1], sim, threshold)
            node_of_pair[p0:p1] = n_nodes + node_t
            n_t = int(node_t.max()) + 1
            # node embedding sums: mention counts per surface form (one per key when keys have one form)
            node_counts = np.zeros((n_t, len(labels_t)))
            if counts_t is None:  # one form per key: each column (key) gets a 1 in its node's row, once
                node_counts[node_t, identity] = 1.0
            else:
                local = labels_t.searchsorted(pair_label[p0:p1])
                np.add.at(node_counts, (node_t, local), pair_count[p0:p1].astype(np.float64))
            node_cos = _cosine(node_counts @ sim_t @ node_counts.T)
        blocks.append((n_nodes, node_cos))
        n_nodes += n_t
    node_similarity = np.zeros((n_nodes, n_nodes))
    for start, block in blocks:
        node_similarity[start : start + len(block), start : start + len(block)] = block
    # node label: most frequent surface form over the node's mentions (ties: shorter, then alphabetical);
    # node key: the type-qualified key of the node's most frequent key (first in content order on ties).
    # Both are chosen per node, over its pairs: a node of one pair (most nodes of a leave-out population)
    # has that pair's label and key, so the choice is made only among the pairs of nodes with several
    # (canonical_kernel.node_tables; tests/engine/tig/test_canonical_kernel.py keeps the numpy form).
    mention_node, node_type, node_label_id, node_key_ids = node_tables(
        node_of_pair, pair_of_mention, pair_key, pair_label, pair_count, key_type, keys, n_nodes)
    node_labels = [names[i] for i in node_label_id.tolist()]
    node_key = [order.qualified[k] for k in node_key_ids.tolist()]
    if len(set(node_key)) < n_nodes:
        taken: set[str] = set()
        for v, qualified in enumerate(node_key):
            if qualified in taken:
                qualified = f"{qualified}|{node_labels[v]}"
            taken.add(qualified)
            node_key[v] = qualified
    return Canonicalisation(
        table=table,
        mention_node=mention_node,
        node_type=node_type,
        node_label=node_labels,
        node_key=node_key,
        node_similarity=node_similarity,
        node_label_id=node_label_id,
    )


_DEFAULT = EmbeddingCanonicaliser()

import numpy as np
import pytest

from engine.tig.atoms import Atom, AtomTable, ResponseAtoms
from engine.tig.canonical import (
    CANONICAL_MERGE_THRESHOLD,
    EmbeddingCanonicaliser,
    alias_split,
    canonicalise,
    leader_groups,
    repair_alias_groups,
)
from tests.engine.tig.planted import TableEmbedder

INPUTS = ["lighthouse", "old lighthouse", "beacon", "fog"]


def test_a_valid_grouping_passes_unchanged():
    proposed = [
        {"label": "lighthouse", "aliases": ["lighthouse", "old lighthouse", "beacon"]},
        {"label": "fog", "aliases": ["fog"]},
    ]
    fixed = repair_alias_groups(proposed, INPUTS)
    assert fixed.groups == [[0, 1, 2], [3]] and fixed.labels == [0, 3] and fixed.issues == []


def test_invented_atoms_are_dropped():
    proposed = [
        {"label": "lighthouse", "aliases": ["lighthouse", "old lighthouse", "beacon", "sea mist"]},
        {"label": "fog", "aliases": ["fog"]},
    ]
    fixed = repair_alias_groups(proposed, INPUTS)
    assert fixed.groups == [[0, 1, 2], [3]]
    assert any("invented" in i and "sea mist" in i for i in fixed.issues)


def test_missing_atoms_become_their_own_group():
    fixed = repair_alias_groups(
        [{"label": "lighthouse", "aliases": ["lighthouse", "old lighthouse"]}], INPUTS
    )
    assert fixed.groups == [[0, 1], [2], [3]]
    assert sum("missing" in i for i in fixed.issues) == 2


def test_an_atom_listed_twice_stays_in_its_first_group():
    proposed = [
        {"label": "lighthouse", "aliases": ["lighthouse", "beacon"]},
        {"label": "beacon", "aliases": ["beacon", "old lighthouse", "fog"]},
    ]
    fixed = repair_alias_groups(proposed, INPUTS)
    assert fixed.groups == [[0, 2], [1, 3]]
    assert fixed.labels == [0, 1]  # "beacon" is no longer in the second group, so its label is replaced


def test_every_input_lands_in_exactly_one_group_whatever_the_proposal():
    proposals = [[], [{"aliases": "not a list"}], [{"label": "x", "aliases": ["FOG", "fog", "Fog  "]}]]
    for proposed in proposals:
        fixed = repair_alias_groups(proposed, INPUTS)
        assert sorted(i for g in fixed.groups for i in g) == [0, 1, 2, 3]
        assert all(label in group for label, group in zip(fixed.labels, fixed.groups))


def test_leader_grouping_merges_only_at_or_above_the_threshold():
    sim = np.array([[1.0, 0.9, 0.5], [0.9, 1.0, 0.84], [0.5, 0.84, 1.0]])
    assert leader_groups(sim, [0, 1, 2], 0.85).tolist() == [0, 0, 2]
    assert leader_groups(sim, [0, 1, 2], 0.84).tolist() == [
        0,
        0,
        2,
    ]  # 2 joins leaders only, and 0 is the leader
    assert leader_groups(sim, [1, 0, 2], 0.84).tolist() == [1, 1, 1]


def _leader_groups_by_argmax(similarity, order, threshold):
    """leader_groups as it was written with numpy: the leaders' row masked to -inf elsewhere, np.argmax."""
    n = similarity.shape[0]
    leader = np.arange(n)
    close_idx = ((similarity >= threshold).sum(axis=1) > 1).nonzero()[0]
    position = np.full(n, -1, dtype=np.int64)
    position[close_idx] = np.arange(len(close_idx))
    sub = similarity[close_idx[:, None], close_idx]
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


def test_leader_grouping_is_the_argmax_loop_on_random_cosines_with_ties():
    rng = np.random.default_rng(11)
    for n in (2, 3, 8, 30):
        for _ in range(40):
            sim = np.round(rng.uniform(0.6, 1.0, (n, n)), 2)  # rounded: equal cosines to two leaders occur
            sim = np.triu(sim, 1) + np.triu(sim, 1).T + np.eye(n)
            order = rng.permutation(n).tolist()
            for threshold in (0.85, 0.95):
                assert leader_groups(sim, order, threshold).tolist() == _leader_groups_by_argmax(
                    sim, order, threshold).tolist()


def _group_as_before(canonicaliser, texts, counts, sim):
    # EmbeddingCanonicaliser.group as written before it counted each row's close entries once
    n = len(texts)
    if n < 2 or canonicaliser.merges_nothing(sim):
        return np.arange(n)
    candidates = ((sim >= canonicaliser.threshold).sum(axis=1) > 1).nonzero()[0].tolist()
    order = sorted(candidates, key=lambda i: (-counts[i], texts[i]))
    return leader_groups(sim, order, canonicaliser.threshold)


class _NeverMerges(EmbeddingCanonicaliser):
    def merges_nothing(self, similarity):
        return True


def test_embedding_grouping_is_its_former_merges_nothing_and_leader_loop_on_random_cosines():
    rng = np.random.default_rng(12)
    for n in (0, 1, 2, 3, 8, 30):
        for _ in range(30):
            sim = np.round(rng.uniform(0.5, 1.0, (n, n)), 2)
            sim = np.triu(sim, 1) + np.triu(sim, 1).T + np.diag(rng.choice([0.8, 1.0], n))  # some diagonals low
            texts = [f"t{i % 5}{i}" for i in range(n)]
            counts = rng.integers(1, 4, n).tolist()
            for canonicaliser in (EmbeddingCanonicaliser(0.85), EmbeddingCanonicaliser(0.95), _NeverMerges()):
                ours = canonicaliser.group("motif", texts, counts, sim)
                theirs = _group_as_before(canonicaliser, texts, counts, sim)
                assert ours.dtype == theirs.dtype and ours.tolist() == theirs.tolist()


def _table(atoms_per_response, vectors):
    exts = [
        ResponseAtoms(f"r{i}", f"m{i}", "t", 1, "x", [Atom(t, label) for t, label in atoms])
        for i, atoms in enumerate(atoms_per_response)
    ]
    return AtomTable.build(exts, TableEmbedder(vectors).embed, task="t")


def test_same_key_mentions_share_a_node_and_the_commonest_form_is_the_label():
    table = _table(
        [
            [("motif", "lighthouses")],
            [("motif", "a lighthouse")],
            [("motif", "lighthouse")],
            [("motif", "lighthouse")],
        ],
        {"lighthouse": [1, 0], "lighthouses": [1, 0.1]},
    )
    canon = canonicalise(table)
    assert canon.n_nodes == 1
    assert canon.node_label == ["lighthouse"]
    assert canon.node_aliases == [["lighthouse", "lighthouses"]]


def test_paraphrases_merge_by_embedding_within_a_type_only():
    vectors = {"beacon": [1, 0.1], "lighthouse": [1, 0], "fog": [0, 1]}
    table = _table(
        [
            [("motif", "lighthouse")],
            [("motif", "lighthouse")],
            [("motif", "beacon")],
            [("concept", "lighthouse"), ("motif", "fog")],
        ],
        vectors,
    )
    canon = canonicalise(table, EmbeddingCanonicaliser(0.85))
    nodes = {(canon.node_label[v], int(canon.node_type[v])) for v in range(canon.n_nodes)}
    assert nodes == {("lighthouse", 1), ("lighthouse", 0), ("fog", 1)}
    motif_node = canon.mention_node[0]
    assert canon.mention_node[2] == motif_node  # beacon joined the motif lighthouse
    assert canon.node_aliases[motif_node] == ["lighthouse", "beacon"]


def test_every_mention_has_exactly_one_node_and_no_node_is_empty():
    table = _table([[("motif", "a"), ("purpose", "b")], [("motif", "c")], []], {})
    canon = canonicalise(table)
    assert canon.mention_node.shape == (table.n_mentions,)
    assert set(canon.mention_node.tolist()) == set(range(canon.n_nodes))


def test_canonical_records_carry_provenance_and_stable_ids():
    table = _table([[("motif", "kite")], [("motif", "kites")]], {"kite": [1, 0], "kites": [1, 0.1]})
    records = canonicalise(table).records(with_embeddings=True)
    assert len(records) == 1
    rec = records[0]
    assert [p.response_id for p in rec.provenance] == ["r0", "r1"]
    assert [p.model for p in rec.provenance] == ["m0", "m1"]
    assert rec.id == canonicalise(table.subset(np.array([True, False]))).node_id(0)
    assert len(rec.to_dict()["embedding"]) == 8


def test_an_empty_population_has_no_nodes():
    assert canonicalise(_table([[], []], {})).n_nodes == 0


# -- every alias a paraphrase of its canonical atom (issue 15) ---------------------------------------------


def test_an_unrelated_alias_in_a_proposed_group_is_split_off_and_reported():
    proposed = [
        {"label": "lighthouse", "aliases": ["lighthouse", "old lighthouse", "fog"]},
        {"label": "beacon", "aliases": ["beacon"]},
        {"label": "sea mist", "aliases": ["sea mist"]},
    ]
    inputs = [*INPUTS, "sea mist"]
    sim = np.eye(5)
    sim[0, 1] = sim[1, 0] = 0.9  # lighthouse ~ old lighthouse; fog unrelated to lighthouse
    fixed = repair_alias_groups(proposed, inputs, similarity=sim)
    assert fixed.groups == [[0, 1], [2], [4], [3]] and fixed.labels == [0, 2, 4, 3]
    assert fixed.issues == [] and len(fixed.splits) == 1
    assert "'fog'" in fixed.splits[0] and "0.00 < 0.85" in fixed.splits[0]


def test_forms_that_leave_a_node_are_grouped_among_themselves_by_the_same_rule():
    # node 0 holds x (label: most mentions), y and z; y and z are paraphrases of each other, not of x
    sim = np.array([[1.0, 0.2, 0.3], [0.2, 1.0, 0.9], [0.3, 0.9, 1.0]])
    nodes = alias_split(np.array([0, 0, 0]), np.array([0, 1, 2]), np.array([5, 2, 1]), sim, 0.85)
    assert nodes.tolist() == [0, 1, 1]


def test_a_same_key_form_below_the_threshold_is_split_off_as_its_own_atom():
    # "lighthouses" shares the key "lighthouse" but, under this embedder, is no paraphrase of it
    table = _table(
        [[("motif", "lighthouse")], [("motif", "lighthouse")], [("motif", "lighthouses")]],
        {"lighthouse": [1, 0], "lighthouses": [0, 1]},
    )
    canon = canonicalise(table)
    assert sorted(canon.node_aliases) == [["lighthouse"], ["lighthouses"]]
    assert canon.node_id(0) != canon.node_id(1)


def _merged_key_table():
    # key "coin" (forms "coin" x3 and "coins" x1) merges into "disc" x5 on its centroid (cosine 0.97), but
    # "coins" alone has cosine 0.6 to the label "disc"
    atoms = [[("motif", "disc")]] * 5 + [[("motif", "coin")]] * 3 + [[("motif", "coins")]]
    return _table(atoms, {"disc": [1, 0], "coin": [1, 0.05], "coins": [0.6, 0.8]})


def test_a_merged_form_below_the_threshold_of_the_label_is_split_off():
    canon = canonicalise(_merged_key_table())
    assert sorted(canon.node_aliases) == [["coins"], ["disc", "coin"]]


def test_every_alias_carries_the_cosine_that_admitted_it():
    canon = canonicalise(_merged_key_table())
    by_label = {r.label: r for r in canon.records()}
    (disc, one), (coin, cos) = by_label["disc"].alias_cosines
    assert (disc, one, coin) == ("disc", 1.0, "coin") and CANONICAL_MERGE_THRESHOLD <= cos == pytest.approx(
        0.9988, abs=1e-3
    )
    assert by_label["disc"].to_dict()["alias_cosines"][1][0] == "coin"
    assert by_label["coins"].alias_cosines == [("coins", 1.0)]


class _AlwaysAsked(EmbeddingCanonicaliser):
    """The offline grouping, with ``group`` overridden so that canonicalise asks it for every type; counts
    the types where it merged nothing and where it merged."""

    def __init__(self):
        super().__init__()
        self.answers = {"nothing": 0, "merged": 0}

    def group(self, atom_type, texts, counts, similarity):
        # the grouping as written before the skip (an oracle independent of merges_nothing)
        n = len(texts)
        close = similarity >= self.threshold
        if n < 2 or not close.sum() > n:
            self.answers["nothing"] += 1
            return np.arange(n)
        self.answers["merged"] += 1
        candidates = np.flatnonzero(close.sum(axis=1) > 1).tolist()
        return leader_groups(similarity, sorted(candidates, key=lambda i: (-counts[i], texts[i])), self.threshold)


def test_skipping_the_offline_canonicaliser_where_it_merges_nothing_changes_no_leave_out_population():
    from itertools import combinations

    from engine.tig.population import PopulationIndex
    from tests.engine.tig.planted import MODELS, planted_population

    index = PopulationIndex(planted_population())  # offline MiniLM: real paraphrases, some merged, most not
    asked = _AlwaysAsked()
    for pair in list(combinations(MODELS, 2))[::7]:
        table = index.reference_table(pair)
        fast, slow = canonicalise(table, EmbeddingCanonicaliser()), canonicalise(table, asked)
        assert fast.node_label == slow.node_label and fast.node_key == slow.node_key
        assert np.array_equal(fast.mention_node, slow.mention_node)
        assert np.array_equal(fast.node_type, slow.node_type)
        assert np.array_equal(fast.node_similarity, slow.node_similarity)
    assert asked.answers["nothing"] and asked.answers["merged"]  # both paths were taken


def _counted_label_and_key(canon):
    """Each node's label and key by plain counting over its mentions (the definitions canonicalise states):
    the most frequent surface form, ties by smaller label id; the most frequent key, ties first in content
    order, a key already taken by an earlier node followed by ``|label``."""
    from collections import Counter

    table = canon.table
    order = table.key_order
    labels, keys, taken = [], [], set()
    for v in range(canon.n_nodes):
        mentions = np.flatnonzero(canon.mention_node == v)
        forms = Counter(table.label_ids[mentions].tolist())
        label = min(forms, key=lambda i: (-forms[i], i))
        ranks = Counter(order.rank[table.key_ids[mentions]].tolist())
        key = order.qualified[int(order.by_rank[min(ranks, key=lambda r: (-ranks[r], r))])]
        if key in taken:
            key = f"{key}|{table.label_names[label]}"
        taken.add(key)
        labels.append(label)
        keys.append(key)
    return labels, keys


@pytest.mark.parametrize("threshold", [CANONICAL_MERGE_THRESHOLD, 0.6])
def test_every_node_has_its_most_frequent_form_as_label_and_its_most_frequent_key(threshold):
    # canonicalise chooses among the pairs of nodes with several only; a node of one pair takes that pair's
    from itertools import combinations

    from engine.tig.population import PopulationIndex
    from tests.engine.tig.planted import MODELS, planted_population

    index = PopulationIndex(planted_population(), canonicaliser=EmbeddingCanonicaliser(threshold))
    shared = 0
    for pair in list(combinations(MODELS, 2))[::5]:
        canon = index.graph(pair).canon
        labels, keys = _counted_label_and_key(canon)
        assert canon.node_label_id.tolist() == labels
        assert canon.node_label == [canon.table.label_names[i] for i in labels]
        assert canon.node_key == keys
        table = canon.table
        pairs = np.unique(np.column_stack([canon.mention_node, table.key_ids, table.label_ids]), axis=0)
        shared += int((np.bincount(pairs[:, 0]) > 1).sum())
    assert shared  # nodes of several (key, surface form) pairs were met


def test_when_every_key_has_one_form_its_most_frequent_form_is_that_form():
    # canonicalise reads the keys' labels straight from the pairs then, instead of asking _first_per_group
    from engine.tig.canonical import _first_per_group

    rng = np.random.default_rng(13)
    for n in (1, 2, 9, 120):
        labels = rng.permutation(4 * n)[:n].astype(np.int64)
        counts = rng.integers(1, 5, n)
        assert _first_per_group(np.arange(n), labels, counts, n).tolist() == labels.tolist()



def test_most_per_node_over_distinct_pairs_is_first_per_group_of_the_pairs_in_any_order():
    # with one pair per key, each (node, key) occurs once: canonicalise chooses a node's key without summing
    from engine.tig.canonical import _first_per_group, _most_per_node

    rng = np.random.default_rng(14)
    for n_nodes, width in ((1, 3), (4, 10), (30, 120)):
        codes = rng.permutation(n_nodes * width)[: 2 * n_nodes]
        node, value = np.divmod(codes, width)
        counts = rng.integers(1, 4, len(codes))  # ties occur
        theirs = _most_per_node(node, value, counts, width, n_nodes)
        assert _first_per_group(node, value, counts, n_nodes).tolist() == theirs.tolist()


def test_one_count_per_key_set_into_node_rows_is_add_at_of_ones_and_the_cosines_are_bit_for_bit():
    # canonicalise's node counts when every key has one form, and _cosine reading the Gram's diagonal view
    from engine.tig.canonical import _cosine

    rng = np.random.default_rng(15)
    for n_keys in (1, 5, 33):
        node = rng.integers(0, max(n_keys // 2, 1), n_keys)
        node = np.unique(node, return_inverse=True)[1]
        added = np.zeros((node.max() + 1, n_keys))
        np.add.at(added, (node, np.arange(n_keys)), np.ones(n_keys))
        set_ = np.zeros((node.max() + 1, n_keys))
        set_[node, np.arange(n_keys)] = 1.0
        assert added.tobytes() == set_.tobytes()
        e = rng.normal(size=(n_keys, 8))
        sim = e @ e.T
        gram = set_ @ sim @ set_.T
        norm = np.sqrt(np.maximum(np.diag(gram), 1e-24))
        assert _cosine(gram).tobytes() == (gram / norm[:, None] / norm[None, :]).tobytes()


def test_forms_close_all_round_only_where_alias_split_splits_nothing_on_random_cosines():
    from engine.tig.canonical import _forms_close_all_round

    rng = np.random.default_rng(7)
    said = {True: 0, False: 0}
    for _ in range(400):
        n = int(rng.integers(2, 9))
        x = rng.normal(size=(n, 3)) + rng.normal(size=3) * rng.uniform(0, 6)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        sim = x @ x.T
        node = rng.integers(0, max(1, n // 2), size=n)
        count = rng.integers(1, 4, size=n)
        close = _forms_close_all_round(node, sim, CANONICAL_MERGE_THRESHOLD)
        said[close] += 1
        if close:  # one form per label here: the pair's label id is its row
            split = alias_split(node, np.arange(n), count, sim, CANONICAL_MERGE_THRESHOLD)
            assert np.array_equal(split, node)
    assert said[True] and said[False]


def test_asking_whether_forms_are_close_all_round_first_changes_no_leave_out_population(monkeypatch):
    from itertools import combinations

    import engine.tig.canonical as canonical
    from engine.tig.population import PopulationIndex
    from tests.engine.tig.planted import MODELS, planted_population

    index = PopulationIndex(planted_population())
    answers = []

    def counted(*args):
        answers.append(canonical_close(*args))
        return answers[-1]

    canonical_close = canonical._forms_close_all_round
    for pair in list(combinations(MODELS, 2))[::5]:
        table = index.reference_table(pair)
        monkeypatch.setattr(canonical, "_forms_close_all_round", counted)
        fast = canonicalise(table)
        # alias_split every time
        monkeypatch.setattr(canonical, "_forms_close_all_round", lambda *args: False)
        slow = canonicalise(table)
        assert fast.node_label == slow.node_label and fast.node_key == slow.node_key
        assert np.array_equal(fast.mention_node, slow.mention_node)
        assert np.array_equal(fast.node_type, slow.node_type)
        assert np.array_equal(fast.node_similarity, slow.node_similarity)
        assert fast.node_alias_cosines == slow.node_alias_cosines
    assert True in answers  # the shortcut was taken


def test_the_offline_groups_ranked_by_their_fixed_points_are_their_distinct_inverse_on_random_cosines():
    # canonicalise numbers the offline grouping's groups by counting leaders (fixed points) instead of sorting
    from engine.tig.distinct import distinct_inverse

    rng = np.random.default_rng(11)
    grouping, merged = EmbeddingCanonicaliser(), 0
    for _ in range(300):
        n = int(rng.integers(2, 12))
        x = rng.normal(size=(n, 3)) + rng.normal(size=3) * rng.uniform(0, 6)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        groups = np.asarray(grouping.group("motif", [f"t{i}" for i in range(n)], rng.integers(1, 5, n).tolist(),
                                           x @ x.T), dtype=np.int64)
        fixed = groups == np.arange(n)
        assert ((fixed.cumsum() - 1)[groups]).tolist() == distinct_inverse(groups)[1].tolist()
        merged += not fixed.all()
    assert merged

import numpy as np

from engine.tig.atoms import Atom, AtomTable, ResponseAtoms
from engine.tig.canonical import EmbeddingCanonicaliser, canonicalise, leader_groups, repair_alias_groups
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
        {},
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
    table = _table([[("motif", "kite")], [("motif", "kites")]], {})
    records = canonicalise(table).records(with_embeddings=True)
    assert len(records) == 1
    rec = records[0]
    assert [p.response_id for p in rec.provenance] == ["r0", "r1"]
    assert [p.model for p in rec.provenance] == ["m0", "m1"]
    assert rec.id == canonicalise(table.subset(np.array([True, False]))).node_id(0)
    assert len(rec.to_dict()["embedding"]) == 8


def test_an_empty_population_has_no_nodes():
    assert canonicalise(_table([[], []], {})).n_nodes == 0

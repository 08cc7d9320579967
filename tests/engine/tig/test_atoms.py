import numpy as np
import pytest

from engine.tig.atoms import (
    Atom,
    AtomTable,
    IdeaRecord,
    Relation,
    ResponseAtoms,
    atom_key,
    atom_label,
    idea_record,
)
from tests.engine.tig.planted import TableEmbedder


def test_atom_key_drops_determiners_and_plurals():
    assert atom_key("The Lighthouses") == atom_key("a lighthouse") == "lighthouse"


def test_atom_key_reduces_lexicon_verb_forms_to_their_lemma():
    assert atom_key("melting into rivers") == atom_key("melts into a river") == "melt into river"


def test_atom_label_keeps_non_ascii_words():
    assert atom_label("  Le Café  Crème ") == "le café crème"


def test_atom_rejects_an_unknown_type():
    with pytest.raises(ValueError, match="unknown atom type"):
        Atom("colour", "blue")


def test_idea_record_reads_dicts_and_objects_alike():
    class Row:
        model, sample, core_idea, task = "m1", 2, "A kite.", "t1"

    from_dict = idea_record({"model": "m1", "sample": 2, "core_idea": "A kite.", "task": "t1"})
    assert from_dict == idea_record(Row())
    assert from_dict.response_id == "t1:m1:2"


def test_idea_record_names_the_missing_field():
    with pytest.raises(ValueError, match="core_idea"):
        idea_record({"model": "m1", "sample": 1})


def test_response_atoms_round_trip_through_a_dict():
    ext = ResponseAtoms(
        "r1",
        "m1",
        "t1",
        1,
        "offline-rules",
        [Atom("motif", "kite"), Atom("purpose", "joy")],
        [Relation(0, "supports", 1)],
        note="n",
    )
    assert ResponseAtoms.from_dict(ext.to_dict()) == ext


def _table():
    exts = [
        ResponseAtoms(
            "r0",
            "a",
            "t",
            1,
            "x",
            [Atom("motif", "kite"), Atom("purpose", "joy")],
            [Relation(0, "supports", 1)],
        ),
        ResponseAtoms(
            "r1",
            "b",
            "t",
            1,
            "x",
            [Atom("motif", "kites"), Atom("purpose", "fear")],
            [Relation(0, "supports", 1)],
        ),
        ResponseAtoms("r2", "c", "t", 1, "x", [Atom("motif", "owl")], []),
    ]
    return AtomTable.build(exts, TableEmbedder().embed, task="t")


def test_atom_table_embeds_each_distinct_label_once():
    calls = []
    embedder = TableEmbedder()

    def embed(texts):
        calls.append(list(texts))
        return embedder.embed(texts)

    exts = [ResponseAtoms(f"r{i}", "a", "t", i, "x", [Atom("motif", "kite")]) for i in range(3)]
    AtomTable.build(exts, embed)
    assert calls == [["kite"]]


def test_atom_table_gives_same_keys_of_one_type_one_key_id():
    table = _table()
    assert table.key_ids[0] == table.key_ids[2]  # "kite" and "kites"
    assert table.key_ids[0] != table.key_ids[4]


def test_subset_drops_excluded_responses_and_remaps_relations():
    table = _table()
    sub = table.subset(np.array([False, True, True]))
    assert sub.response_ids == ["r1", "r2"]
    assert sub.labels == ["kites", "fear", "owl"]
    assert sub.relations.tolist() == [[0, 1, 0]]  # "supports" (code 0) from mention 0 to mention 1
    assert sub.response.tolist() == [0, 0, 1]


def test_idea_record_defaults_response_id_from_task_model_sample():
    assert IdeaRecord("m", 3, "x", task="t").response_id == "t:m:3"


def test_key_order_sorts_every_key_by_content_and_is_shared_with_subsets():
    table = _table()
    order = table.key_order
    assert [table.key_names[k] for k in order.by_rank.tolist()] == sorted(table.key_names)
    assert order.rank[order.by_rank].tolist() == list(range(len(table.key_names)))
    assert order.qualified == [f"{t}:{key}" for t, key in table.key_names]
    assert table.subset(np.array([False, True, True])).key_order is order

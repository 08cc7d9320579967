import pytest

from engine.task_construction.demo_pools import demo_pool
from engine.task_construction.pools import PoolInvalid, merge_pools, pool_from_rows


def _errors(rows):
    with pytest.raises(PoolInvalid) as caught:
        pool_from_rows("p", list(enumerate(rows, start=1)))
    return {(e.line, e.field) for e in caught.value.errors}


def test_valid_rows_become_records_with_their_norms():
    pool = pool_from_rows("p", [(1, {"concept": "grief", "type": "abstract", "subtype": "emotional/psychological",
                                     "concreteness": "1.6"}), (2, {"concept": "owl", "type": "concrete"})])
    assert [r.concept for r in pool.records] == ["grief", "owl"]
    assert pool.records[0].concreteness == 1.6


def test_every_bad_field_is_reported_with_its_line():
    errors = _errors([
        {"concept": "grief", "type": "feeling"},
        {"type": "concrete"},
        {"concept": "made of ice", "type": "condition"},
        {"concept": "owl", "type": "concrete", "concreteness": 9},
        {"concept": "owl", "type": "concrete", "colour": "brown"},
    ])
    assert errors == {(1, "type"), (2, "concept"), (3, "subtype"), (4, "concreteness"), (5, "colour")}


def test_a_repeated_concept_names_the_earlier_line():
    with pytest.raises(PoolInvalid, match="repeats line 1"):
        pool_from_rows("p", [(1, {"concept": "Owl", "type": "concrete"}), (2, {"concept": "owl", "type": "concrete"})])


def test_an_empty_pool_is_an_error():
    with pytest.raises(PoolInvalid, match="no records"):
        pool_from_rows("p", [])


def test_the_hash_changes_with_the_records_and_not_with_line_numbers():
    a = pool_from_rows("p", [(1, {"concept": "owl", "type": "concrete"})])
    b = pool_from_rows("p", [(7, {"concept": "owl", "type": "concrete"})])
    c = pool_from_rows("p", [(1, {"concept": "crow", "type": "concrete"})])
    assert a.sha256 == b.sha256 != c.sha256


def test_merged_pools_keep_a_shared_record_once():
    a = pool_from_rows("a", [(1, {"concept": "owl", "type": "concrete"})])
    b = pool_from_rows("b", [(1, {"concept": "owl", "type": "concrete"}), (2, {"concept": "crow", "type": "concrete"})])
    assert [r.concept for r in merge_pools([a, b]).records] == ["owl", "crow"]


def test_the_demo_pool_is_valid_and_labelled_demo():
    pool = demo_pool()
    assert pool.is_demo
    assert len(pool.of_type("situation", "digital product")) >= 20

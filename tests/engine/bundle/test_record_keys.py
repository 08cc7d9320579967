from engine.bundle.manifest import BundleWriter
from engine.bundle.record_keys import duplicate_record_problems
from engine.bundle.verify import verify_bundle


def _bundle(tmp_path, ratings):
    writer = BundleWriter(tmp_path / "b")
    writer.jsonl("records/ratings.jsonl", ratings)
    writer.manifest({"kind": "c2"})
    return writer.root


def _rating(sample, repeat=0):
    return {"sample": sample, "rater": "r", "repeat": repeat, "status": "ok", "u": 3}


def test_distinct_identities_are_not_duplicates(tmp_path):
    root = _bundle(tmp_path, [_rating(1), _rating(1, repeat=1), _rating(2)])
    assert duplicate_record_problems(root, {"kind": "c2"}) == []


def test_a_record_held_twice_is_named_by_file_line_and_identity(tmp_path):
    root = _bundle(tmp_path, [_rating(1), _rating(2), _rating(1)])
    assert duplicate_record_problems(root, {"kind": "c2"}) == [
        "records/ratings.jsonl, line 3, field sample+rater+repeat: sample=1 rater='r' repeat=0 is already the "
        "identity of line 1 (each record is written once)"]


def test_verify_refuses_a_bundle_holding_a_record_twice_before_recomputing(tmp_path):
    # the recomputation indexes records by identity: the last copy is read, the first is what a reader sees
    report = verify_bundle(_bundle(tmp_path, [_rating(1), _rating(1)]))
    assert not report.ok and not report.checks
    assert report.error.startswith("1 record(s) held twice, so nothing was rebuilt or recomputed: records/ratings.jsonl, line 2")

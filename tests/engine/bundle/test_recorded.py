from engine.bundle.recorded import not_recomputed


def test_c2_originality_clusters_are_listed_as_taken_as_recorded():
    listed = not_recomputed({"kind": "c2"})
    assert any(line.startswith("records/samples.jsonl cluster (Originality clusters)") for line in listed)


def test_ekphrasis_model_ids_and_usage_copied_from_the_snapshot_are_listed():
    listed = " | ".join(not_recomputed({"kind": "ekphrasis"}))
    assert "board/board.json model_ids" in listed and "board/board.json usage" in listed

import numpy as np

from engine.bundle.easel import _canvas_check, anchor_name_checks


def test_a_canvas_cited_by_a_name_that_is_not_a_hash_is_not_read_from_outside_the_bundle(tmp_path):
    # media/../../x.png would be read from beside the bundle, where a forger can put the replay's canvas
    (tmp_path / "bundle" / "media").mkdir(parents=True)
    (tmp_path / "x.png").write_bytes(b"not read")
    check = _canvas_check(tmp_path / "bundle", "episode e.step 1", "../../x", np.zeros((4, 4, 3)))
    assert not check.identical
    assert check.stored == "media '../../x', which is not a SHA-256 in hex"


def test_two_anchors_names_swapped_are_named_at_their_runs():
    runs = [{"id": 1, "agent_kind": "anchor", "agent_name": "Reference mean-colour fill", "config": {"anchor": "blank_fill"}},
            {"id": 2, "agent_kind": "anchor", "agent_name": "Blank-white canvas", "config": {"anchor": "mean_colour_fill"}},
            {"id": 3, "agent_kind": "simulated", "agent_name": "simulated · keen", "config": {}}]
    assert [c.describe() for c in anchor_name_checks(runs) if not c.identical] == [
        'records/runs.jsonl run 1.agent_name (the anchor blank_fill paints): stored "Reference mean-colour fill", '
        'recomputed "Blank-white canvas"',
        'records/runs.jsonl run 2.agent_name (the anchor mean_colour_fill paints): stored "Blank-white canvas", '
        'recomputed "Reference mean-colour fill"']

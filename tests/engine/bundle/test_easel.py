import json
from pathlib import Path

import numpy as np
import pytest

from engine.bundle.easel import _canvas_check, _episode, anchor_name_checks


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


def _replayed_repeat_rate(config: dict, raws: list[dict]) -> tuple[float, list]:
    from engine.easel.references import generate_suite

    task = generate_suite(2, per_category={"programmatic": 1})[0]
    episode = {"run": 1, "task": task.id, "budget": len(raws)}
    steps = [{"index": k, "raw": json.dumps(raw)} for k, raw in enumerate(raws, start=1)]
    run = {"agent_kind": "model", "agent_name": "m", "config": config}
    checks: list = []
    out = _episode(Path("/nonexistent"), episode, steps, task, run, checks, [])
    return out["repeat_rate"], checks


ONE_STROKE_TWO_SPELLINGS = [
    {"action": "brush_stroke", "xs": 0.25, "ys": 0.5, "xc": 0.5, "yc": 0.5, "xe": 0.75, "ye": 0.5, "rs": 0.5,
     "alpha_s": 1, "re": 0.5, "alpha_e": 1, "cr": 0, "cg": 0, "cb": 0},
    {"action": "brush_stroke", "xs": 0.25, "ys": 0.5, "xc": 0.5, "yc": 0.5, "xe": 0.75, "ye": 0.5, "rs": 0.5,
     "alpha_s": 1.0, "re": 0.5, "alpha_e": 1.0, "cr": 0.0, "cg": 0.0, "cb": 0.0},
]


def test_the_repeat_rate_is_recomputed_with_the_method_its_run_recorded():
    # a run made before runs recorded the method (and its bundle) told repeats by their JSON text: the
    # verifier recomputes its stored 0.0 so, and a run of this code's method its 1.0
    assert _replayed_repeat_rate({}, ONE_STROKE_TWO_SPELLINGS)[0] == 0.0
    assert _replayed_repeat_rate({"repeat_rate_method_version": 2}, ONE_STROKE_TWO_SPELLINGS)[0] == 1.0
    rate, checks = _replayed_repeat_rate({"repeat_rate_method_version": 99}, ONE_STROKE_TWO_SPELLINGS)
    assert [c.path for c in checks if "repeat_rate_method_version" in c.path and not c.identical] == [
        "run 1.config.repeat_rate_method_version (not one this verifier knows: 1, 2)"]


@pytest.mark.parametrize("recorded", [[2], True, "2"])
def test_a_recorded_repeat_method_that_is_no_version_is_reported_not_a_crash_nor_read_as_one(recorded):
    # a JSON list is unhashable (it raised in the table's membership test); true is no method 1, "2" no method 2
    _, checks = _replayed_repeat_rate({"repeat_rate_method_version": recorded}, ONE_STROKE_TWO_SPELLINGS)
    assert [(c.path, c.stored) for c in checks if "repeat_rate_method_version" in c.path and not c.identical] == [
        ("run 1.config.repeat_rate_method_version (not one this verifier knows: 1, 2)", recorded)]

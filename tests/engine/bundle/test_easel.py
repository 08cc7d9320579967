import numpy as np

from engine.bundle.easel import _canvas_check


def test_a_canvas_cited_by_a_name_that_is_not_a_hash_is_not_read_from_outside_the_bundle(tmp_path):
    # media/../../x.png would be read from beside the bundle, where a forger can put the replay's canvas
    (tmp_path / "bundle" / "media").mkdir(parents=True)
    (tmp_path / "x.png").write_bytes(b"not read")
    check = _canvas_check(tmp_path / "bundle", "episode e.step 1", "../../x", np.zeros((4, 4, 3)))
    assert not check.identical
    assert check.stored == "media '../../x', which is not a SHA-256 in hex"

"""The compiled kernel of one stroke's change to S (engine/easel/score_kernels.py) against scikit-image."""

import numpy as np
import pytest
from skimage.metrics import structural_similarity

from engine.easel import metrics
from engine.easel.metrics import IncrementalSimilarity, edge_map, grey
from engine.easel.references import ReconstructionCategory, generate_reference
from engine.easel.render import Box, blank_canvas, composite, stroke_coverage
from engine.easel.score_kernels import CANNY_LOW_THRESHOLD_F32, box_change, box_gain

SSIM_TOL = 1e-12  # direct window sums vs scipy's running sums: last-bit differences only

# Boxes inside, at the edges and in the corners of a 128×128 canvas (the reflect and constant modes).
BOXES = [Box(40, 70, 50, 90), Box(0, 20, 0, 25), Box(100, 128, 110, 128), Box(0, 128, 60, 64), Box(3, 9, 120, 128)]


def natural_pair(index=0):
    """A natural reference and a canvas painted on it: long edge chains on both."""
    ref = generate_reference(ReconstructionCategory.NATURAL, seed=0, index=index)[0]
    rng = np.random.default_rng(index)
    canvas = np.clip(ref + rng.normal(0.0, 0.08, ref.shape), 0.0, 1.0).astype(np.float32)
    return ref, canvas


def run_kernel(scorer, box, patch, commit=False):
    st = scorer._state
    scorer._generation += 1
    inner = scorer._interior
    return box_change(st.canvas, st.grey, scorer.reference, np.ascontiguousarray(patch, np.float64), box.r0, box.r1,
                      box.c0, box.c1, scorer._uy, scorer._uy2_c1, scorer._vy_c2, st.ssim_map, inner.r0, inner.r1,
                      inner.c0, inner.c1, metrics._SSIM_COV_NORM, metrics._SSIM_C1, metrics._SSIM_C2,
                      metrics._GAUSS_WEIGHTS, scorer._bleed, st.low_masked, st.edges, scorer.reference_edges,
                      scorer._stamp, scorer._queue, scorer._generation, metrics.CANNY_HIGH_THRESHOLD,
                      CANNY_LOW_THRESHOLD_F32, commit)


def new_canvas(canvas, box, patch):
    out = canvas.astype(np.float64)
    out[box.slices] = patch
    return out


@pytest.mark.parametrize("box", BOXES)
def test_pre_hysteresis_map_is_bit_identical_to_scikit_images_steps(box):
    ref, canvas = natural_pair()
    scorer = IncrementalSimilarity(ref, canvas)
    patch = np.random.default_rng(box.r0).random((box.r1 - box.r0, box.c1 - box.c0, 3))
    _, _, _, grey_patch, low, _, _ = run_kernel(scorer, box, patch)
    after = new_canvas(canvas, box, patch)
    full = Box(0, 128, 0, 128)
    # The scorer's full-canvas route: scipy's gaussian and sobel passes and scikit-image's Cython suppression.
    expected = scorer._low_masked(grey(after), full, full)
    np.testing.assert_array_equal(low, expected[box.grow(6, 128, 128).slices])
    np.testing.assert_array_equal(grey_patch, grey(patch))


@pytest.mark.parametrize("box", BOXES)
def test_ssim_patch_and_l1_change_equal_the_full_recompute(box):
    ref, canvas = natural_pair(1)
    scorer = IncrementalSimilarity(ref, canvas)
    patch = np.random.default_rng(box.c0).random((box.r1 - box.r0, box.c1 - box.c0, 3))
    ssim_patch, ssim_delta, abs_delta, *_ = run_kernel(scorer, box, patch)
    after = new_canvas(canvas, box, patch)
    _, ssim_map = structural_similarity(after, ref.astype(np.float64), channel_axis=2, data_range=1.0, full=True)
    np.testing.assert_allclose(ssim_patch, ssim_map[box.grow(3, 128, 128).slices], rtol=0, atol=SSIM_TOL)
    before = canvas.astype(np.float64)
    assert abs_delta == pytest.approx(np.abs(after - ref).sum() - np.abs(before - ref).sum(), abs=1e-9)
    assert ssim_delta == pytest.approx(ssim_map[3:-3, 3:-3].sum() - scorer._state.ssim_map[3:-3, 3:-3].sum(),
                                       abs=1e-9)


@pytest.mark.parametrize("index", [0, 1])
def test_committed_edges_equal_cannys_edge_map_after_every_stroke(index):
    ref, canvas = natural_pair(index)
    scorer = IncrementalSimilarity(ref, canvas)
    current = canvas.copy()
    rng = np.random.default_rng(10 + index)
    for _ in range(30):
        params = rng.random(13)
        params[[6, 8]] *= 0.3
        covered = stroke_coverage(params, 128, 128)
        if covered is None:
            continue
        mask, box = covered
        patch = composite(current[box.slices], mask, params[10:13])
        current[box.slices] = patch
        scorer.apply(box, patch)
        expected = edge_map(current)
        np.testing.assert_array_equal(scorer._state.edges, expected)
        assert scorer._state.edge_count == np.count_nonzero(expected)
        assert scorer._state.edge_overlap == np.count_nonzero(expected & scorer.reference_edges)


def test_a_scored_change_leaves_the_edge_map_untouched():
    ref, canvas = natural_pair()
    scorer = IncrementalSimilarity(ref, canvas)
    edges = scorer._state.edges.copy()
    low = scorer._state.low_masked.copy()
    run_kernel(scorer, Box(30, 90, 30, 90), np.zeros((60, 60, 3)))
    np.testing.assert_array_equal(scorer._state.edges, edges)
    np.testing.assert_array_equal(scorer._state.low_masked, low)


def test_an_unchanged_patch_changes_nothing():
    ref, canvas = natural_pair()
    scorer = IncrementalSimilarity(ref, canvas)
    box = Box(20, 60, 30, 80)
    _, _, abs_delta, _, _, d_count, d_overlap = run_kernel(scorer, box, canvas[box.slices])
    assert (d_count, d_overlap) == (0, 0) and abs_delta == 0.0
    # The window sums differ from scipy's in the last bits, so the SSIM map does too, not S beyond 1e-12.
    assert abs(scorer.gain(box, canvas[box.slices]).s - scorer.score.s) < 1e-12


def test_blank_canvas_has_no_edges_to_change():
    ref, _ = natural_pair()
    scorer = IncrementalSimilarity(ref, blank_canvas(128))
    box = Box(50, 52, 50, 52)
    *_, d_count, d_overlap = run_kernel(scorer, box, np.ones((2, 2, 3)))
    assert (d_count, d_overlap) == (0, 0)


@pytest.mark.parametrize("box", BOXES)
def test_box_gain_gives_box_changes_changes(box):
    ref, canvas = natural_pair(1)
    scorer = IncrementalSimilarity(ref, canvas)
    patch = np.random.default_rng(box.c1).random((box.r1 - box.r0, box.c1 - box.c0, 3))
    _, ssim_delta, abs_delta, _, _, d_count, d_overlap = run_kernel(scorer, box, patch)
    st = scorer._state
    scorer._generation += 1
    inner = scorer._interior
    gain = box_gain(st.canvas, st.grey, scorer.reference, patch, box.r0, box.r1, box.c0, box.c1, scorer._uy,
                    scorer._uy2_c1, scorer._vy_c2, st.ssim_map, inner.r0, inner.r1, inner.c0, inner.c1,
                    metrics._SSIM_COV_NORM, metrics._SSIM_C1, metrics._SSIM_C2, metrics._GAUSS_WEIGHTS, scorer._bleed,
                    st.low_masked, st.edges, scorer.reference_edges, scorer._stamp, scorer._queue, scorer._generation,
                    metrics.CANNY_HIGH_THRESHOLD, CANNY_LOW_THRESHOLD_F32)
    assert gain == (ssim_delta, abs_delta, d_count, d_overlap)

"""Similarity S (EASEL Eq. 1) and its incremental scorer (engine/easel/metrics.py)."""

import numpy as np
import pytest
from skimage.metrics import structural_similarity

from engine.easel.metrics import IncrementalSimilarity, edge_iou, edge_map, similarity
from engine.easel.painter import SearchPainter, mean_colour_fill
from engine.easel.references import ReconstructionCategory, generate_reference
from engine.easel.render import Stroke, blank_canvas, composite, stroke_coverage

EQUAL_TOL = 1e-9  # issue 11: incremental S equals the full recompute to 1e-9


def reference(category=ReconstructionCategory.SPATIAL_GEOMETRY, index=0):
    return generate_reference(category, seed=3, index=index)[0]


def test_identical_images_score_one():
    ref = reference()
    result = similarity(ref, ref)
    assert result.s == pytest.approx(1.0, abs=1e-12)
    assert result.ssim == pytest.approx(1.0) and result.l1 == 0.0 and result.edge_iou == 1.0


def test_ssim_equals_scikit_images_own_call():
    ref = reference()
    canvas = np.random.default_rng(0).random(ref.shape).astype(np.float32)
    expected = structural_similarity(canvas.astype(np.float64), ref.astype(np.float64), channel_axis=2,
                                     data_range=1.0)
    assert similarity(canvas, ref).ssim == expected
    # On the float32 images themselves scikit-image computes in float32: equal to float32 precision.
    assert similarity(canvas, ref).ssim == pytest.approx(
        structural_similarity(canvas, ref, channel_axis=2, data_range=1.0), abs=1e-5)


def test_l1_is_the_mean_absolute_difference():
    ref = reference()
    assert similarity(blank_canvas(ref.shape[0]), ref).l1 == pytest.approx(float(np.mean(np.abs(1.0 - ref))))


def test_uniform_fills_have_zero_edge_iou():
    ref = reference()
    assert similarity(mean_colour_fill(ref), ref).edge_iou == 0.0
    assert similarity(blank_canvas(ref.shape[0]), ref).edge_iou == 0.0


def test_two_edgeless_images_have_edge_iou_one():
    grey = np.full((32, 32, 3), 0.5, np.float32)
    assert similarity(grey, np.full_like(grey, 0.7)).edge_iou == 1.0


def test_s_weights_the_three_terms_as_equation_one():
    ref = reference()
    r = similarity(np.random.default_rng(1).random(ref.shape).astype(np.float32), ref)
    assert r.s == pytest.approx(0.5 * r.ssim + 0.3 * (1 - r.l1) + 0.2 * r.edge_iou, abs=1e-15)


@pytest.mark.parametrize("category", list(ReconstructionCategory))
def test_incremental_s_equals_full_recompute_on_random_episodes(category):
    ref = generate_reference(category, seed=5, index=1)[0]
    size = ref.shape[0]
    rng = np.random.default_rng(category.size + len(category.label))
    scorer = IncrementalSimilarity(ref)
    canvas = blank_canvas(size)
    for _ in range(25):
        params = rng.random(13)
        params[[6, 8]] *= rng.choice([0.15, 0.5, 1.0])
        covered = stroke_coverage(params, size, size)
        if covered is None:
            continue
        mask, box = covered
        patch = composite(canvas[box.slices], mask, params[10:13])
        predicted = scorer.gain(box, patch)
        canvas[box.slices] = patch
        committed = scorer.apply(box, patch)
        full = similarity(canvas, ref)
        assert abs(predicted.s - full.s) < EQUAL_TOL
        assert abs(committed.s - full.s) < EQUAL_TOL
        assert committed.edge_iou == full.edge_iou


def test_gain_does_not_commit():
    ref = reference()
    scorer = IncrementalSimilarity(ref)
    before = scorer.score
    mask, box = stroke_coverage(Stroke(0.1, 0.1, 0.5, 0.5, 0.9, 0.9, 1, 1, 1, 1, 0, 0, 0), 128, 128)
    scorer.gain(box, composite(scorer.canvas[box.slices], mask, (0, 0, 0)))
    assert scorer.score == before
    np.testing.assert_array_equal(scorer.canvas, np.ones_like(ref, dtype=np.float64))


def test_reset_scores_any_canvas_like_the_full_recompute():
    ref = reference()
    canvas = mean_colour_fill(ref)
    assert abs(IncrementalSimilarity(ref).reset(canvas).s - similarity(canvas, ref).s) < EQUAL_TOL


@pytest.mark.parametrize("index", [0, 1])
def test_candidate_and_committed_s_equal_the_full_recompute_with_long_edge_chains(index):
    # Natural references have edge chains across the canvas: a stroke can change the status of a chain
    # far outside its box (it adds or removes the chain's only strong pixel).
    ref = generate_reference(ReconstructionCategory.NATURAL, seed=0, index=index)[0]
    rng = np.random.default_rng(index)
    scorer = IncrementalSimilarity(ref)
    canvas = blank_canvas(ref.shape[0])
    for step in range(60):
        error = np.abs(canvas.astype(np.float64) - ref).sum(axis=2).ravel() + 1e-6
        params = SearchPainter.propose_stroke(rng, np.cumsum(error), 128, step / 60)
        params[10:13] = rng.random(3)
        covered = stroke_coverage(params, 128, 128)
        if covered is None:
            continue
        mask, box = covered
        patch = composite(canvas[box.slices], mask, params[10:13])
        trial = canvas.copy()
        trial[box.slices] = patch
        full = similarity(trial, ref).s
        assert abs(scorer.gain(box, patch).s - full) < 1e-12
        canvas = trial
        committed = scorer.apply(box, patch)
        assert abs(committed.s - full) < 1e-12
        assert committed.edge_iou == edge_iou(edge_map(canvas), edge_map(ref))  # the same edge maps


def test_a_canvas_smaller_than_the_ssim_window_is_refused_like_scikit_image_refuses_it():
    tiny = np.full((6, 6, 3), 0.5, np.float32)
    with pytest.raises(ValueError):
        similarity(tiny, tiny)
    with pytest.raises(ValueError):
        IncrementalSimilarity(tiny)


def test_a_float32_patch_scores_exactly_as_its_float64_copy():
    # The kernel reads composite's float32 patch value by value instead of a converted copy.
    reference = generate_reference(ReconstructionCategory.NATURAL, seed=0, index=0)[0]
    rng = np.random.default_rng(4)
    canvas = np.clip(reference + rng.normal(0.0, 0.1, reference.shape), 0.0, 1.0).astype(np.float32)
    scorer = IncrementalSimilarity(reference, canvas)
    for _ in range(20):
        params = rng.random(13)
        params[[6, 8]] *= 0.4
        covered = stroke_coverage(params, 128, 128)
        if covered is None:
            continue
        mask, box = covered
        patch = composite(canvas[box.slices], mask, params[10:13])
        assert patch.dtype == np.float32
        assert scorer.gain(box, patch) == scorer.gain(box, patch.astype(np.float64))


# --- images outside the metric's domain (float RGB in [0, 1]) are refused, never scored --------------

def _disguised_images():
    rng = np.random.default_rng(11)
    a, b = rng.random((32, 32, 3)), rng.random((32, 32, 3))
    nan = a.copy()
    nan[3, 4, 1] = np.nan
    inf = a.copy()
    inf[0, 0, 0] = np.inf
    return {
        # 8- and 16-bit images scored with data_range = 1 gave S = -24.6 and S = -6427 (L1 in grey levels)
        "8-bit": ((a * 255).astype(np.uint8), (b * 255).astype(np.uint8), "dtype uint8"),
        "16-bit": ((a * 65535).astype(np.uint16), (b * 65535).astype(np.uint16), "dtype uint16"),
        "bool": (a > 0.5, b > 0.5, "dtype bool"),
        # RGBA: the alpha channel entered SSIM and L1 as a fourth colour, but not the edges
        "RGBA": (np.dstack([a, np.ones((32, 32))]), np.dstack([b, np.zeros((32, 32))]), r"shape \(32, 32, 4\)"),
        "grey": (a[..., 0], b[..., 0], r"shape \(32, 32\)"),
        "NaN": (nan, b, "nan"),
        "inf": (inf, b, "inf"),
        "above 1": (a * 2, b, r"in \[0, 1\], got values from 0\.\d+ to 1\.9"),
        "below 0": (a - 0.5, b, r"in \[0, 1\], got values from -0\.4"),
    }


@pytest.mark.parametrize("name", list(_disguised_images()))
def test_an_image_outside_the_metrics_domain_is_refused_naming_the_problem(name):
    canvas, ref, fragment = _disguised_images()[name]
    with pytest.raises(ValueError, match=fragment):
        similarity(canvas, ref)
    with pytest.raises(ValueError, match=fragment):
        similarity(ref, canvas)
    with pytest.raises(ValueError, match=fragment):
        IncrementalSimilarity(ref, canvas)
    with pytest.raises(ValueError, match=fragment):
        IncrementalSimilarity(canvas)


def test_images_of_different_sizes_are_refused():
    a = np.ones((32, 32, 3))
    with pytest.raises(ValueError, match="same size"):
        similarity(a, np.ones((32, 31, 3)))
    with pytest.raises(ValueError, match="same size"):
        IncrementalSimilarity(a, np.ones((31, 32, 3)))
    with pytest.raises(ValueError, match="same size"):
        IncrementalSimilarity(a).reset(np.ones((32, 33, 3)))


def test_an_empty_image_is_refused_like_one_smaller_than_the_ssim_window():
    empty = np.ones((0, 0, 3))
    with pytest.raises(ValueError, match="at least 7x7"):
        similarity(empty, empty)
    with pytest.raises(ValueError, match="at least 7x7"):
        IncrementalSimilarity(empty)


# --- a change the scorer cannot apply is refused before the compiled kernel reads or writes anything -------

def _scorer_state(scorer):
    st = scorer._state
    return (scorer.score, st.canvas.copy(), st.grey.copy(), st.ssim_map.copy(), st.low_masked.copy(), st.edges.copy())


def _assert_same_state(before, after):
    assert before[0] == after[0]
    for old, new in zip(before[1:], after[1:], strict=True):
        np.testing.assert_array_equal(old, new)


def _bad_changes():
    from engine.easel.render import Box

    zeros = np.zeros((10, 10, 3))
    nan = zeros.copy()
    nan[3, 3, 1] = np.nan
    return {
        # the kernel indexes without bounds checks: gain read past the canvas (S = nan from stray memory),
        # apply wrote edge statuses, then failed on a numpy broadcast
        "past the bottom right": (Box(60, 70, 60, 70), zeros, "not inside the 64x64 canvas"),
        "before the top left": (Box(-5, 5, -5, 5), zeros, "not inside the 64x64 canvas"),
        "inverted": (Box(20, 10, 10, 20), np.zeros((0, 10, 3)), "not inside the 64x64 canvas"),
        "patch of another shape": (Box(10, 20, 10, 20), np.zeros((5, 5, 3)), r"patch of shape \(5, 5, 3\)"),
        "RGBA patch": (Box(10, 20, 10, 20), np.zeros((10, 10, 4)), r"patch of shape \(10, 10, 4\)"),
        "NaN in the patch": (Box(10, 20, 10, 20), nan, r"in \[0, 1\]"),
        "inf in the patch": (Box(10, 20, 10, 20), np.full((10, 10, 3), np.inf), r"in \[0, 1\]"),
        "patch above 1": (Box(10, 20, 10, 20), np.full((10, 10, 3), 5.0), r"in \[0, 1\]"),
        "8-bit patch": (Box(10, 20, 10, 20), np.full((10, 10, 3), 200, np.uint8), r"in \[0, 1\]"),
    }


@pytest.mark.parametrize("name", list(_bad_changes()))
def test_a_change_outside_the_canvas_or_its_domain_is_refused_and_changes_nothing(name):
    box, patch, fragment = _bad_changes()[name]
    ref = reference(ReconstructionCategory.PROGRAMMATIC)
    scorer = IncrementalSimilarity(ref, mean_colour_fill(ref))
    before = _scorer_state(scorer)
    with pytest.raises(ValueError, match=fragment):
        scorer.gain(box, patch)
    with pytest.raises(ValueError, match=fragment):
        scorer.apply(box, patch)
    _assert_same_state(before, _scorer_state(scorer))
    assert abs(scorer.score.s - similarity(scorer.canvas, ref).s) < 1e-12


def test_an_empty_change_scores_the_canvas_as_it_is():
    from engine.easel.render import Box

    ref = reference(ReconstructionCategory.PROGRAMMATIC)
    scorer = IncrementalSimilarity(ref)
    before = scorer.score
    assert scorer.gain(Box(10, 10, 10, 20), np.zeros((0, 10, 3))) == before
    assert scorer.apply(Box(10, 10, 10, 20), np.zeros((0, 10, 3))) == before

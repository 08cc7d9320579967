"""Reconstruction references and the suite (engine/easel/references.py, EASEL Table 1)."""

import numpy as np
import pytest

from engine.easel.references import (
    NATURAL_SOURCES,
    ReconstructionCategory,
    generate_reference,
    generate_suite,
    reconstruction_task_from_image,
)
from engine.easel.task import png_bytes

SMALL = {"programmatic": 2, "spatial_geometry": 2, "abstract_cartoon": 2, "natural": 2}


def test_categories_carry_table_one_sizes_and_budgets():
    assert [(c.label, c.size, c.budget) for c in ReconstructionCategory] == [
        ("programmatic", 64, 32), ("spatial_geometry", 128, 96), ("abstract_cartoon", 128, 96), ("natural", 128, 128)]


def test_default_suite_is_the_papers_110_references(monkeypatch):
    # Counting only: replace drawing by a blank image to keep the test fast.
    import engine.easel.references as refs

    monkeypatch.setattr(refs, "generate_reference",
                        lambda c, s, i, p=None: (np.ones((c.size, c.size, 3), np.float32), {}))
    tasks = refs.generate_suite(0)
    counts = {label: sum(t.category == label for t in tasks) for label in SMALL}
    assert counts == {"programmatic": 15, "spatial_geometry": 40, "abstract_cartoon": 15, "natural": 40}


def test_same_seed_gives_byte_identical_references():
    a, b = generate_suite(7, per_category=SMALL), generate_suite(7, per_category=SMALL)
    assert [png_bytes(t.reference) for t in a] == [png_bytes(t.reference) for t in b]
    assert [t.id for t in a] == [t.id for t in b]


def test_different_seeds_give_different_references():
    a = generate_reference(ReconstructionCategory.SPATIAL_GEOMETRY, 1, 0)[0]
    b = generate_reference(ReconstructionCategory.SPATIAL_GEOMETRY, 2, 0)[0]
    assert not np.array_equal(a, b)


def test_references_lie_on_the_8_bit_grid():
    for task in generate_suite(0, per_category=SMALL):
        assert task.reference.dtype == np.float32
        np.testing.assert_array_equal(np.round(task.reference * 255) / np.float32(255), task.reference)


def test_natural_sources_load_offline_from_the_wheel():
    for name, load in NATURAL_SOURCES.items():
        image = load()
        assert image.ndim == 3 and image.shape[2] >= 3, name


def test_unknown_category_is_rejected():
    with pytest.raises(ValueError, match="unknown"):
        generate_suite(0, per_category={"portraits": 1})


def test_an_imported_image_becomes_a_natural_task():
    image = (np.random.default_rng(0).random((200, 300, 3)) * 255).astype(np.uint8)
    task = reconstruction_task_from_image(image, task_id="imported-1")
    assert task.size == 128 and task.budget == 128 and task.category == "natural"
    with pytest.raises(ValueError, match="imported-2"):
        reconstruction_task_from_image(np.zeros((10, 10)), task_id="imported-2")


def test_a_negative_reference_count_is_refused():
    with pytest.raises(ValueError, match="cannot be negative"):
        generate_suite(0, per_category={"programmatic": -1})


def _imported(image):
    return reconstruction_task_from_image(image, task_id="imported-x").reference


def test_a_16_bit_image_is_read_on_its_own_scale():
    # uint16 was taken for 0..255 and clipped: mid-grey 32768 became white
    mid = np.full((64, 64, 3), 32768, np.uint16)
    assert np.allclose(_imported(mid), 128 / 255, atol=0.5 / 255)
    np.testing.assert_array_equal(_imported(np.full((64, 64, 3), 65535, np.uint16)), 1.0)


def test_transparent_pixels_are_the_white_canvas_not_their_hidden_colour():
    # RGBA: the alpha channel was dropped, so a transparent background came out as whatever colour it hid
    # (black for most editors); composited over white it is what a viewer shows and what the canvas starts as.
    image = np.zeros((64, 64, 4), np.uint8)
    image[16:48, 16:48] = (200, 40, 10, 255)  # an opaque red square on a transparent black ground
    reference = _imported(image)
    np.testing.assert_array_equal(reference[0, 0], 1.0)
    np.testing.assert_allclose(reference[64, 64], np.array([200, 40, 10]) / 255, atol=1e-6)
    half = image.copy()
    half[..., 3] = 128
    np.testing.assert_allclose(_imported(half)[64, 64], (np.array([200, 40, 10]) * 128 / 255 + (255 - 128)) / 255,
                               atol=0.5 / 255 + 1e-6)


@pytest.mark.parametrize("image,fragment", [
    (np.full((32, 32, 3), 200.0), r"values from 200\.0 to 200\.0"),  # 0..255 as floats was clipped to white
    (np.where(np.eye(32)[..., None] > 0, np.nan, 0.5) * np.ones((1, 1, 3)), "nan"),
    (np.full((32, 32, 3), 7, np.int32), "dtype int32"),
    (np.ones((32, 32, 3), bool), "dtype bool"),
    (np.zeros((0, 0, 3), np.uint8), "empty"),
], ids=["float 0..255", "NaN", "int32", "bool", "empty"])
def test_an_image_whose_values_are_not_colours_is_refused_naming_the_task(image, fragment):
    with pytest.raises(ValueError, match=f"imported-x.*{fragment}"):
        _imported(image)

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

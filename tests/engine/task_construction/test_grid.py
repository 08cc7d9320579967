import pytest

from engine.task_construction.grid import TABLE5_GRID, GridError, SubtypeGrid, grid_with_quotas


def test_table5_grid_has_the_papers_400_tasks_by_family():
    assert TABLE5_GRID.total == 400
    assert [TABLE5_GRID.family_quota(f) for f in ("abstraction", "combination", "transformation", "adaptation")] == [
        120, 90, 90, 100]


def test_table5_combination_bands_have_8_15_7_per_pair_type():
    quotas = TABLE5_GRID.quotas()
    for pair_type in ("AA", "AC", "CC"):
        assert [quotas[f"combination/{pair_type}-{b}/{b}"] for b in ("near", "medium", "far")] == [8, 15, 7]


def test_transformation_subtypes_split_equally_over_the_three_buckets():
    quotas = TABLE5_GRID.quotas()
    assert {quotas[f"transformation/material/{b}"] for b in ("near", "medium", "far")} == {10}


def test_grid_with_quotas_replaces_only_the_named_cells():
    grid = grid_with_quotas({"abstraction/metaphysical": 3})
    assert grid.quotas()["abstraction/metaphysical"] == 3
    assert grid.total == 400 - 17


def test_grid_with_quotas_rejects_an_unknown_cell():
    with pytest.raises(GridError, match="unknown grid cell"):
        grid_with_quotas({"abstraction/astrology": 3})


def test_a_negative_quota_is_refused():
    with pytest.raises(GridError, match="quota"):
        grid_with_quotas({"abstraction/metaphysical": -1})


def test_grid_round_trips_through_its_record():
    assert SubtypeGrid.from_dict(TABLE5_GRID.to_dict()) == TABLE5_GRID

"""EASEL site fixtures: a small suite (two programmatic references and the five semantic tasks)."""

from __future__ import annotations

import pytest

from leaderboard.easel import services

SMALL = {"programmatic": 2, "spatial_geometry": 0, "abstract_cartoon": 0, "natural": 0}


@pytest.fixture
def suite(db):
    task_set, _ = services.easel_suite_create(seed=0, per_category=SMALL, name="easel-test")
    return task_set

"""Writes of the leaderboard app, one module per concept:

- ``catalogue``: imports, exports, freezing, roles.
- ``judge_runs``: automatic judging runs, their comparisons and leaderboard snapshots.
"""

from leaderboard.services.catalogue import (
    BENCHMARK_NAMES,
    ImportSummary,
    benchmark_get_or_create,
    compose_two_field_text,
    responses_export,
    responses_import,
    role_groups_ensure,
    sha256_text,
    tasks_export,
    tasks_import,
    taskset_freeze,
)

__all__ = [
    "BENCHMARK_NAMES",
    "ImportSummary",
    "benchmark_get_or_create",
    "compose_two_field_text",
    "responses_export",
    "responses_import",
    "role_groups_ensure",
    "sha256_text",
    "tasks_export",
    "tasks_import",
    "taskset_freeze",
]

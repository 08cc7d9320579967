"""A judge run's output is pinned: the comparisons and the snapshot of a small simulated run (all three
dimensions, TIG Novelty anchors, swaps, duplicates, an auxiliary judge, malformed replies) hash to the
digest recorded on the code before the judge-run bookkeeping was made cheaper (issue 16). Faster
bookkeeping must plan, judge and store exactly the same thing for the same seed."""

from __future__ import annotations

import hashlib
import json

import pytest

from leaderboard.models import Comparison
from leaderboard.services import judge_runs
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db

#: sha256 of :func:`run_digest_source` computed on commit b5a7a72 (before issue 16's changes).
PINNED_DIGEST = "49795be4640a7d689c5b3af445f5889a74bbee9175a89f2a6f7c06e60a0fac8c"


def _rounded(value):
    """Floats rounded to 9 significant digits (the last bits of a BLAS sum may differ across machines),
    and -0.0 written as 0.0 (a residual of exactly zero may come out with either sign)."""
    if isinstance(value, float):
        return float(f"{value:.9g}") + 0.0
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def run_digest_source(run) -> str:
    """Everything a run wrote that does not depend on database ids: every comparison (identity by
    names, presentation, status, verdict, rationale, per-item outcomes, the checklist shown) and the
    snapshot payload (without the model ids)."""
    comparisons = []
    for c in Comparison.objects.filter(run=run).select_related("task", "model_x", "model_y", "shown_a__subject_model"):
        comparisons.append([
            c.task.external_id, c.dimension, c.model_x.display_name, c.model_y.display_name, c.kind, c.repeat,
            c.judge_name, c.sequence, c.shown_a.subject_model.display_name, c.status, c.winner, c.confidence,
            c.attempts, c.repaired, c.rationale, c.per_item_outcomes,
            [[row["slot"], row["version"], row["text"], row["source"]] for row in c.checklist],
        ])
    comparisons.sort(key=lambda row: json.dumps(row[:8]))
    payload = {k: v for k, v in run.snapshots.get().payload.items() if k != "model_ids"}
    return json.dumps(_rounded({"comparisons": comparisons, "snapshot": payload}), sort_keys=True)


def pinned_run():
    task_set, models = population(n_models=5, n_tasks=3, name="pin")
    run = simulated_run(
        task_set, models, budget=12, seed=11, dimensions="UEN", position_bias=0.3, length_bias=0.1,
        malformed_rate=0.15,
    )
    run.config.update({"swap_share": 0.3, "duplicate_share": 0.2, "auxiliary_judges": ["simulated-2"],
                       "auxiliary_share": 0.2})
    run.save(update_fields=["config"])
    judge_runs.judge_run_execute_inline(run=run)
    return run


def test_a_small_simulated_run_writes_exactly_what_the_code_before_issue_16_wrote():
    run = pinned_run()
    assert hashlib.sha256(run_digest_source(run).encode()).hexdigest() == PINNED_DIGEST

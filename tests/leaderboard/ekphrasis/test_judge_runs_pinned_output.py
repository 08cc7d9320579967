"""A judge run's output is pinned: the comparisons and the snapshot of a small simulated run (all three
dimensions, TIG Novelty anchors, swaps, duplicates, an auxiliary judge, malformed replies) hash to the
digest recorded on the code before the judge-run bookkeeping was made cheaper (issue 16). Faster
bookkeeping must plan, judge and store exactly the same thing for the same seed."""

from __future__ import annotations

import hashlib
import json

import pytest

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import Comparison
from tests.factories import ResponseFactory, SubjectModelFactory, TaskFactory, TaskSetFactory
from tests.leaderboard.judging_factories import FAMILIES, simulated_run

pytestmark = pytest.mark.django_db

#: sha256 of :func:`run_digest_source`. First computed on commit b5a7a72 (before issue 16's changes):
#: d7cc0732…; the faster bookkeeping reproduced it. Issue 15 then moved the simulated judge's latent skills
#: from the run seed to the judge's configuration, which changes every simulated verdict by design; the
#: value below was computed on that change with the old bookkeeping (branch wip/pages) and is reproduced
#: by the merged code, so the bookkeeping still writes exactly what the old code wrote. ClicheScore's Conv(C) then
#: moved to C's canonical atoms as App. G.3 writes it (it had averaged over input atoms): 25 of the 174 comparisons
#: show another Novelty TIG item, nothing else changed (the snapshot is identical); was 6161941b….
PINNED_DIGEST = "70dde76a52c06bb8aaa5804711e711d579d90329c0cfe16c2fd66dbb9825e3c6"


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


#: Fixed primary keys far above any sequence: ids enter the run (the replicate key, TIG context keys and
#: the order of the TIG population's ideas), so the pinned output must not depend on the tests before it.
PIN_ID = 900_000


def pinned_population(n_models: int = 5, n_tasks: int = 3):
    """:func:`tests.leaderboard.judging_factories.population` with fixed ids."""
    task_set = TaskSetFactory(id=PIN_ID, name="pin")
    models = [SubjectModelFactory(id=PIN_ID + k, display_name=f"pin-m{k}") for k in range(n_models)]
    for t in range(n_tasks):
        task = TaskFactory(id=PIN_ID + t, task_set=task_set, family=FAMILIES[t % 4], external_id=f"pin-t{t}",
                           brief=f"Express brief number {t} in one static image.", position=t)
        for k, m in enumerate(models):
            ResponseFactory(
                id=PIN_ID + 100 * t + k, task=task, subject_model=m, sample=1, is_primary=True,
                core_idea=f"Idea number {k} for task {t}: a lantern folding time.",
                visual_description=" ".join(["visible"] * (20 + k)) + f" variant {k} {t}",
            )
    return task_set, models


def pinned_run():
    task_set, models = pinned_population()
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

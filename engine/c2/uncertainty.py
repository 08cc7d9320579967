"""How sure C²'s headline is (c2-eval.txt Tables 1–2): an interval on Combined creativity and per-table
rank probabilities, from a paired bootstrap over prompts.

Combined creativity of a model over a table's task types T is the mean over types of the type's mean
per-prompt creativity, C = (1/|T|) Σ_t (1/n_t) Σ_{p∈t} (U_p + O_p + S_p)/3 (§3.2.2 and the tables'
captions; :func:`engine.c2.uos.combined_creativity`). One replicate resamples the prompts within each task
type — the same prompts for every model, since every model answers every prompt — and recomputes every
model's C (:mod:`engine.paired_bootstrap`, weighting "strata"). From it: C's percentile interval (95%,
the level of the per-type intervals, :data:`engine.c2.uos.BOOTSTRAP_LEVEL`), every pair's difference
interval and P(A > B), and each model's rank probabilities and rank set. ``task_type`` slices the
table to one type (its creativity, with the same bootstrap).

Input is the results dictionary a finished run stores (:func:`engine.c2.results.c2_results`): its
``prompts[model][prompt]`` hold each prompt's ``task_type`` and creativity ``c``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from engine.c2.uos import BOOTSTRAP_LEVEL, BOOTSTRAP_RESAMPLES
from engine.paired_bootstrap import bootstrap_payload, stratified_paired_bootstrap

__all__ = ["UNCERTAINTY_METHOD_VERSION", "combined_comparison"]

#: The version of the formulas behind :func:`combined_comparison` (this module, the paired bootstrap of
#: :mod:`engine.paired_bootstrap` and the constants of :mod:`engine.c2.uos` it reads). Bump it with any
#: change to them that can move a number it returns: the site caches the answer per run for a day
#: (``leaderboard.c2.selectors.combined_uncertainty``) under a key holding this version, so an unbumped
#: change would show the old numbers until the cache expired.
#: 1: the first numbered version.
#: 2: models that tie in a replicate share its ranks (they were ranked by index): rank probabilities and sets.
UNCERTAINTY_METHOD_VERSION = 2

METHOD = (f"{int(BOOTSTRAP_LEVEL * 100)}% paired percentile bootstrap over prompts ({BOOTSTRAP_RESAMPLES} "
          "resamples, stratified by task type; Combined = mean of the task types' creativity)")


def combined_comparison(results: Mapping, table: str, *, task_type: str | None = None, seed: int = 0) -> dict | None:
    """The table's Combined creativity (or one task type's creativity) per model with its interval, rank
    probabilities, rank sets, and every pair's difference interval and P(A > B); None when fewer than two
    models have a score on every task type of it."""
    types = list(results["tables"].get(table) or [])
    if task_type is not None:
        if task_type not in types:
            return None
        types = [task_type]
    if not types:
        return None
    prompts_of = results.get("prompts", {})
    prompt_type: dict[str, str] = {}
    for model in results["models"]:
        for prompt, scores in prompts_of.get(model, {}).items():
            if scores["task_type"] in types:
                prompt_type[prompt] = scores["task_type"]
    models = [m for m in results["models"]
              if {s["task_type"] for s in prompts_of.get(m, {}).values()} >= set(types)]
    if len(models) < 2:
        return None
    prompts = sorted(prompt_type, key=lambda p: (types.index(prompt_type[p]), p))
    values = np.array([[prompts_of[m][p]["c"] if p in prompts_of[m] else np.nan for p in prompts] for m in models])
    result = stratified_paired_bootstrap(values, [prompt_type[p] for p in prompts], weighting="strata",
                                         n_boot=BOOTSTRAP_RESAMPLES, level=BOOTSTRAP_LEVEL, seed=seed)
    payload = bootstrap_payload(result, models, method=METHOD)
    for row in payload["agents"]:
        row.pop("index")
    payload.update(table=table, task_type=task_type, task_types=types)
    return payload

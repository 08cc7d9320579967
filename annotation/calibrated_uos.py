"""Calibrated columns of the C² divergent table (issue 24): per model and component (U, O, S), the
people's mean rating corrected by the LLM rater — PPI++ for a mean (:func:`engine.calibration.ppi_means`).

Labelled: the campaign's complete items, the human mean per item (Y) and the rater's score of the
same sample (Ŷ). Unlabelled: the rater's primary scores of the same runs' other samples of that model
(no person rated them). The estimate targets the people's mean rating; λ says how far the rater's
scores were trusted, the effective n how many rated items alone would give the same precision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engine.calibration import ppi_means
from leaderboard.c2.models import C2Rating

ALPHA = 0.1
COMPONENT_FIELD = {"usefulness": "u", "originality": "o", "surprise": "s"}


def uos_calibrated_models(*, samples: Mapping[int, Mapping[str, Any]], complete: Mapping[int, list[dict]],
                          rated: Mapping[int, Mapping[str, float]], components: Sequence[str]) -> dict[str, list[dict]]:
    """Model name -> per component {estimate, lo, hi, lam, effective_n, n_human, n_rater_only}."""
    names = sorted({samples[i]["c2_sample__subject_model__display_name"] for i in rated})
    index = {n: k for k, n in enumerate(names)}
    labelled_samples = {samples[i]["c2_sample_id"] for i in samples}
    raters = {samples[i]["c2_sample__run__rater_name"] for i in rated}
    runs = {samples[i].get("c2_sample__run_id") for i in rated}
    extra = list(C2Rating.objects.filter(sample__run_id__in=runs, rater_name__in=raters, repeat=0,
                                         status=C2Rating.Status.OK)
                 .exclude(sample_id__in=labelled_samples)
                 .values_list("sample__subject_model__display_name", "u", "o", "s"))
    extra = [row for row in extra if row[0] in index]
    out: dict[str, list[dict]] = {n: [] for n in names}
    items = sorted(rated)
    groups = np.array([index[samples[i]["c2_sample__subject_model__display_name"]] for i in items], int)
    u_groups = np.array([index[row[0]] for row in extra], int)
    for c in components:
        human = np.array([np.mean([r[c] for r in complete[i]]) for i in items], float)
        machine = np.array([rated[i][c] for i in items], float)
        col = {"u": 1, "o": 2, "s": 3}[COMPONENT_FIELD[c]]
        unl = np.array([row[col] for row in extra], float)
        fit = ppi_means(len(names), (groups, human), (groups, machine), (u_groups, unl), alpha=ALPHA)
        for n, k in index.items():
            lo, hi = fit.intervals[k]
            est = fit.estimates[k]
            out[n].append({"estimate": None if np.isnan(est) else float(est),
                           "lo": float(lo) if np.isfinite(lo) else None, "hi": float(hi) if np.isfinite(hi) else None,
                           "lam": float(fit.lam[k]), "effective_n": float(fit.effective_human_n[k]),
                           "n_human": int(fit.n_human[k]), "n_rater_only": int(fit.n_judge_unpaired[k])})
    return out

"""The ``calibration`` pair-sampling rule (issue 24): human labels spent where they shrink the
calibrated board's intervals most. The classical rule (App. H.5 strata, :mod:`annotation.pair_sampling`)
stays the default; a campaign chooses per sampling (Admin → Campaign → Sample validation pairs →
rule), and each item records the rule that chose it in ``sampling_stratum``.

Priority of a model pair (a, b) for the next human label, from today's calibrated fit
(:func:`engine.calibration.ppi_bradley_terry`):

    targets   = neighbours on the board (by score) whose rank-sets overlap (all neighbours if none do)
    ΔVar_t    = p(1−p) (e_tᵀ Σ x_ab)² / (1 + p(1−p) x_abᵀ Σ x_ab)      (Sherman–Morrison: one more
                                                                       BT observation of (a, b))
    priority  = Σ_t ΔVar_t / Var_t × (½ + d_ab)

with Σ the human part of the covariance (the rectifier's, per label, over today's n), p = σ(θ_a − θ_b)
and d_ab the judge–human disagreement rate on (a, b) so far (the overall rate where a pair has no
joint labels): where the judge errs, the rectifier is noisy and a human label is worth most
(PPI++'s variance is the rectifier's). A pair no person compared yet gets the largest priority of all
pairs involving an unranked model, so every model is reached first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import expit

from annotation.pair_sampling import SampledPair
from engine.calibration import CalibratedBT

CALIBRATION_RULE = "calibration"
CLASSICAL_RULE = "classical"
RULES = ((CLASSICAL_RULE, "Classical (App. H.5 strata from the judge ranking)"),
         (CALIBRATION_RULE, "Calibration (shrink the calibrated intervals most)"))


def _targets(fit: CalibratedBT) -> list[tuple[int, int]]:
    ranked = [int(m) for m in np.argsort(-np.nan_to_num(fit.scores, nan=-np.inf)) if fit.identified[m]]
    adjacent = list(zip(ranked, ranked[1:]))
    overlapping = [(a, b) for a, b in adjacent
                   if not (fit.rank_sets[a][1] < fit.rank_sets[b][0] or fit.rank_sets[b][1] < fit.rank_sets[a][0])]
    return overlapping or adjacent


def _priorities(fit: CalibratedBT, sigma: np.ndarray, disagreement: Mapping[frozenset, float],
                overall: float) -> dict[frozenset, float]:
    K = fit.n_models
    targets = _targets(fit)
    e = np.zeros((len(targets), K))
    for t, (a, b) in enumerate(targets):
        e[t, a], e[t, b] = 1.0, -1.0
    var_t = np.maximum(np.einsum("tk,kl,tl->t", e, sigma, e), 1e-12)
    out: dict[frozenset, float] = {}
    top = 0.0
    for a in range(K):
        for b in range(a + 1, K):
            if not (fit.identified[a] and fit.identified[b]):
                continue
            x = np.zeros(K)
            x[a], x[b] = 1.0, -1.0
            p = float(expit(fit.scores[a] - fit.scores[b]))
            info = p * (1 - p)
            sx = sigma @ x
            # Sherman–Morrison: the drop of Var(e_tᵀθ) from one more observation of (a, b)
            drop = info * (e @ sx) ** 2 / (1 + info * float(x @ sx))
            d = disagreement.get(frozenset((a, b)), overall)
            out[frozenset((a, b))] = float(np.sum(drop / var_t)) * (0.5 + d)
            top = max(top, out[frozenset((a, b))])
    for a in range(K):  # an unranked model: compare it first (against a ranked one)
        for b in range(a + 1, K):
            if frozenset((a, b)) not in out:
                out[frozenset((a, b))] = 2 * top + 1.0 if (fit.identified[a] or fit.identified[b]) else top + 0.5
    return out


def _human_sigma(fit: CalibratedBT) -> np.ndarray:
    return np.nan_to_num(fit.cov_per_label) / max(fit.n_human, 1)  # the human part of today's covariance


def pair_priorities(fit: CalibratedBT, disagreement: Mapping[frozenset, float] | None = None,
                    overall_disagreement: float = 0.25) -> dict[frozenset, float]:
    """Priority per model pair (module docstring); larger = label next."""
    K = fit.n_models
    if int(fit.identified.sum()) < 2 or fit.cov_per_label is None:
        return {frozenset((a, b)): 1.0 for a in range(K) for b in range(a + 1, K)}
    return _priorities(fit, _human_sigma(fit), disagreement or {}, overall_disagreement)


def calibration_batch(fit: CalibratedBT, n_labels: int, disagreement: Mapping[frozenset, float] | None = None,
                      overall_disagreement: float = 0.25) -> list[tuple[int, int]]:
    """The next ``n_labels`` model pairs, greedily: after each choice Σ takes the rank-one update of
    that observation, so a batch spreads over pairs rather than repeating the top one."""
    K = fit.n_models
    if int(fit.identified.sum()) < 2 or fit.cov_per_label is None:
        pairs = [(a, b) for a in range(K) for b in range(a + 1, K)]
        return [pairs[k % len(pairs)] for k in range(n_labels)]
    sigma = _human_sigma(fit).copy()
    chosen = []
    for _ in range(n_labels):
        prio = _priorities(fit, sigma, disagreement or {}, overall_disagreement)
        a, b = sorted(max(prio, key=lambda k: (prio[k], -min(k))))
        chosen.append((a, b))
        if fit.identified[a] and fit.identified[b]:
            x = np.zeros(K)
            x[a], x[b] = 1.0, -1.0
            p = float(expit(fit.scores[a] - fit.scores[b]))
            sx = sigma @ x
            sigma -= p * (1 - p) * np.outer(sx, sx) / (1 + p * (1 - p) * float(x @ sx))
    return chosen


def calibration_pairs_for_tasks(batch: Sequence[tuple[Any, Any]], tasks: Sequence[Any], n_pairs: int) -> dict[Any, list[SampledPair]]:
    """Spread a batch of model pairs over tasks, at most ``n_pairs`` per task and each pair once per
    task (in batch order, round-robin), labelled with the rule's name as their stratum."""
    out: dict[Any, list[SampledPair]] = {t: [] for t in tasks}
    if not tasks:
        return out
    k = 0
    for a, b in batch:
        for _ in range(len(tasks)):
            task = tasks[k % len(tasks)]
            k += 1
            have = {frozenset((p.model_a, p.model_b)) for p in out[task]}
            if len(out[task]) < n_pairs and frozenset((a, b)) not in have:
                out[task].append(SampledPair(a, b, CALIBRATION_RULE))
                break
    return out


def calibration_pairs_sample(*, models: Sequence[Any], priorities: Mapping[frozenset, float],
                             n_pairs: int) -> list[SampledPair]:
    """The ``n_pairs`` model pairs of one task with the highest priority (ties by model order), each
    labelled with the rule's name as its stratum."""
    models = list(dict.fromkeys(models))
    pairs = [(a, b) for k, a in enumerate(models) for b in models[k + 1:]]
    pairs.sort(key=lambda p: (-priorities.get(frozenset(p), 0.0), str(p)))
    return [SampledPair(a, b, CALIBRATION_RULE) for a, b in pairs[:n_pairs]]


def disagreement_rates(human: tuple[np.ndarray, np.ndarray, np.ndarray], judge: np.ndarray) -> tuple[dict[frozenset, float], float]:
    """Per model pair, the share of jointly labelled comparisons where the people's side (A, B, tie
    at ½) differs from the judge's; and the overall share."""
    i, j, y = human
    if not y.size:
        return {}, 0.25
    sides = np.sign(np.round(y - 0.5, 9)), np.sign(np.round(judge - 0.5, 9))
    differ = sides[0] != sides[1]
    rates: dict[frozenset, list[bool]] = {}
    for a, b, dif in zip(i, j, differ):
        rates.setdefault(frozenset((int(a), int(b))), []).append(bool(dif))
    return {k: float(np.mean(v)) for k, v in rates.items()}, float(differ.mean())


def campaign_calibration_plan(*, campaign, dimensions: Sequence[str], tasks: Sequence[Any],
                              pairs_per_task: int) -> tuple[dict[str, dict[int, list[SampledPair]]], str]:
    """For the admin's sampling form and the demo: per dimension, the pairs (of subject model ids) the
    calibration rule hands out next, spread over ``tasks`` (task pk -> pairs), from the latest
    snapshot of the campaign's task set calibrated by this campaign's labels so far; and a sentence
    saying where they came from. A dimension that cannot be calibrated yet is left out (the caller
    samples it by the classical rule)."""
    from annotation import calibration
    from engine.calibration import ppi_bradley_terry
    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    snapshot = (LeaderboardSnapshot.objects.filter(run__task_set_id=campaign.task_set_id)
                .select_related("run").order_by("-created_at", "-pk").first())
    if snapshot is None:
        return {}, "no judge snapshot yet: the calibration rule needs one (classical rule used)"
    inputs = calibration.calibration_inputs(snapshot=snapshot, campaign=campaign)
    K = len(inputs.model_ids)
    out: dict[str, dict[int, list[SampledPair]]] = {}
    for dimension in dimensions:
        data = inputs.per_dimension.get(dimension)
        if data is None:
            continue
        m = data.judged
        h = tuple(a[m] for a in data.human)
        try:
            if h[2].size:
                fit = ppi_bradley_terry(K, h, (h[0], h[1], data.judge_paired[m]), data.judge_unpaired)
            else:  # no labels yet: the judge's own board and uncertainty decide where to start
                fit = ppi_bradley_terry(K, data.judge_all)
        except ValueError:
            continue
        rates, overall = disagreement_rates(h, data.judge_paired[m])
        batch = calibration_batch(fit, len(tasks) * pairs_per_task, rates, overall)
        by_id = [(inputs.model_ids[a], inputs.model_ids[b]) for a, b in batch]
        out[dimension] = {t.pk: pairs for t, pairs in calibration_pairs_for_tasks(by_id, list(tasks), pairs_per_task).items()}
    source = f"calibration rule from snapshot {snapshot.pk} and {inputs.n_labels} labels of this campaign"
    return out, source if out else "no dimension could be calibrated yet (classical rule used)"


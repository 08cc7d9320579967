"""Benchmark: human labels needed to reach a target calibrated interval width, ``calibration`` rule vs
the classical App. H.5 rule; and the calibrated board's fit time at issue 30's scale.

1. Labels. Ten models with known BT skills; a judge that agrees with a person 75 % of the time and
   otherwise prefers the weaker model has compared 20,000 random pairs. People label in rounds of
   ``--batch``: the classical rule draws App. H.5 strata per task from the judge's ranking
   (:func:`annotation.pair_sampling.validation_pairs_sample`, six pairs per task); the calibration
   rule takes :func:`annotation.calibration_sampling.calibration_batch` of today's calibrated fit.
   Both start from the same 60 random labels. After each round the calibrated board is refitted; a
   rule is done when the mean 90 % interval width of the neighbouring pairs' differences is at most
   ``--target``. Printed: labels per rule (mean over ``--repeats`` seeded repeats) and the ratio
   classical / calibration (> 1: the calibration rule needs fewer).
2. Time. ``ppi_bradley_terry`` for 20 models, 50,000 judge and 2,000 human comparisons (warm; the
   goal of issue 30 is ≤ 1 s), against the people-only fit of the same 2,000 labels in the same run.

Run: ``.venv/bin/python -m tests.benchmarks.bench_calibration_sampling [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
from scipy.special import expit

from annotation.calibration_sampling import calibration_batch, disagreement_rates
from annotation.pair_sampling import PAIRS_PER_TASK, validation_pairs_sample
from engine.calibration import ppi_bradley_terry

K = 10
THETA = np.linspace(1.2, -1.2, K)
N_JUDGE = 20_000
START = 60
CAP = 4_000


def _judge(rng, i, j, y):
    weaker_is_i = (THETA[i] < THETA[j]).astype(float)
    return np.where(rng.random(y.size) < 0.75, y, weaker_is_i)


def _label(rng, pairs):
    i = np.array([a for a, _ in pairs], int)
    j = np.array([b for _, b in pairs], int)
    y = (rng.random(i.size) < expit(THETA[i] - THETA[j])).astype(float)
    return i, j, y


def _width(fit) -> float:
    order = [m for m in np.argsort(-fit.scores)]
    widths = [np.subtract(*fit.difference_interval(a, b)[::-1]) for a, b in zip(order, order[1:])]
    return float(np.mean(widths))


def labels_to_target(rule: str, seed: int, target: float, batch: int) -> int:
    rng = np.random.default_rng(seed)
    ui = rng.integers(0, K, N_JUDGE)
    uj = (ui + rng.integers(1, K, N_JUDGE)) % K
    uy = (rng.random(N_JUDGE) < expit(THETA[ui] - THETA[uj])).astype(float)
    unpaired = (ui, uj, _judge(rng, ui, uj, uy))
    judge_fit = ppi_bradley_terry(K, unpaired)
    ranking = {m: float(judge_fit.scores[m]) for m in range(K)}
    first = rng.integers(0, K, START)
    pairs = list(zip(first, (first + rng.integers(1, K, START)) % K))
    i, j, y = _label(rng, pairs)
    yhat = _judge(rng, i, j, y)
    sampler = random.Random(seed)
    while True:
        fit = ppi_bradley_terry(K, (i, j, y), (i, j, yhat), unpaired)
        if _width(fit) <= target or y.size >= CAP:
            return int(y.size)
        if rule == "calibration":
            rates, overall = disagreement_rates((i, j, y), yhat)
            new = calibration_batch(fit, batch, rates, overall)
        else:
            new = []
            while len(new) < batch:  # one "task" at a time: App. H.5 strata from the judge ranking
                new += [(p.model_a, p.model_b) for p in validation_pairs_sample(
                    models=list(range(K)), ranking=ranking, n_pairs=PAIRS_PER_TASK, rng=sampler)]
            new = new[:batch]
        ni, nj, ny = _label(rng, new)
        i, j, y = np.concatenate([i, ni]), np.concatenate([j, nj]), np.concatenate([y, ny])
        yhat = np.concatenate([yhat, _judge(rng, ni, nj, ny)])


def fit_time() -> tuple[float, float]:
    rng = np.random.default_rng(0)
    theta = np.linspace(1.5, -1.5, 20)

    def draw(n):
        i = rng.integers(0, 20, n)
        j = (i + rng.integers(1, 20, n)) % 20
        return i, j, (rng.random(n) < expit(theta[i] - theta[j])).astype(float)

    hi, hj, hy = draw(2_000)
    yhat = np.where(rng.random(hy.size) < 0.75, hy, 1 - hy)
    ui, uj, uy = draw(50_000)
    uhat = np.where(rng.random(uy.size) < 0.75, uy, 1 - uy)
    ppi_bradley_terry(20, (hi, hj, hy), (hi, hj, yhat), (ui, uj, uhat))  # warm: imports, first compile
    runs = []
    for _ in range(3):
        t = time.perf_counter()
        ppi_bradley_terry(20, (hi, hj, hy), (hi, hj, yhat), (ui, uj, uhat))
        runs.append(time.perf_counter() - t)
    base = []
    for _ in range(3):
        t = time.perf_counter()
        ppi_bradley_terry(20, (hi, hj, hy))
        base.append(time.perf_counter() - t)
    return min(runs), min(base)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--target", type=float, default=0.9, help="mean 90%% width of neighbouring differences")
    parser.add_argument("--batch", type=int, default=30)
    args = parser.parse_args()
    counts = {"classical": [], "calibration": []}
    for seed in range(args.repeats):
        for rule in counts:
            counts[rule].append(labels_to_target(rule, seed, args.target, args.batch))
    classical, calibrated = np.mean(counts["classical"]), np.mean(counts["calibration"])
    print(f"labels to a mean neighbour-difference width ≤ {args.target} (90 %), {args.repeats} repeats, batch {args.batch}:")
    print(f"  classical (App. H.5 strata): {classical:.0f}  {counts['classical']}")
    print(f"  calibration rule:            {calibrated:.0f}  {counts['calibration']}")
    print(f"  ratio classical / calibration = {classical / calibrated:.2f} (> 1: the calibration rule needs fewer labels)")
    ppi, people = fit_time()
    print(f"calibrated board, 20 models, 50,000 judge + 2,000 human comparisons: {ppi:.3f} s "
          f"(goal ≤ 1 s: {'met' if ppi <= 1 else 'NOT met'}); people-only fit of the 2,000 labels {people:.3f} s; "
          f"ratio {ppi / people:.1f}×")


if __name__ == "__main__":
    main()

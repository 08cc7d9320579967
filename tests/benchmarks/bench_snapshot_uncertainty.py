"""Benchmark: what an Ekphrasis snapshot page's first view computes (leaderboard/ekphrasis/uncertainty.py) —
Overall tiers of the whole board and one board per task family — with ``summary_only`` against the full
board (the baseline, what the page computed before), measured in the same run on the same comparisons.

Setting: the demo's shape scaled up to a mid-size board — 8 models, 40 tasks in 4 families, 12 judge calls
per task and dimension on U, E and N, 1,000 resamples (the snapshot default). Every number a summary reads is
checked equal between the two before timing.

Run: ``.venv/bin/python -m tests.benchmarks.bench_snapshot_uncertainty [--models 8] [--tasks 40] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from engine.leaderboard import JudgedComparison, board_uncertainty
from engine.reliability import ComparisonRecord

FAMILIES = ("abstraction", "combination", "transformation", "adaptation")


def make_comparisons(n_models: int, n_tasks: int, per_task: int, seed: int = 0) -> list[JudgedComparison]:
    """Simulated judge decisions: model i beats j with probability σ(θi − θj), θ evenly spread in [−1, 1];
    10% ties, and every fifth call judged again with the pair swapped (the reliability diagnostics' input)."""
    rng = np.random.default_rng(seed)
    theta = np.linspace(1.0, -1.0, n_models)
    out = []
    for t in range(n_tasks):
        for d in "UEN":
            for k in range(per_task):
                a, b = (int(v) for v in rng.choice(n_models, size=2, replace=False))
                p = 1.0 / (1.0 + np.exp(-(theta[a] - theta[b])))
                key = f"t{t}:{d}:{k}"
                winner = "tie" if rng.random() > 0.9 else ("A" if rng.random() < p else "B")
                out.append(JudgedComparison(record=ComparisonRecord(task=f"t{t}", dimension=d, model_a=a, model_b=b,
                                                                    winner=winner, pair_key=key),
                                            confidence=0.8, family=FAMILIES[t % len(FAMILIES)]))
                if k % 5 == 0:
                    swapped = "tie" if rng.random() > 0.9 else ("A" if rng.random() < 1 - p else "B")
                    out.append(JudgedComparison(record=ComparisonRecord(task=f"t{t}", dimension=d, model_a=b, model_b=a,
                                                                        winner=swapped, kind="swap", pair_key=key),
                                                confidence=0.8, family=FAMILIES[t % len(FAMILIES)]))
    return out


def first_view(comparisons, models, summary_only: bool) -> list[dict]:
    """Overall tiers (the whole board) and each family's board, as the page's first view asks for them."""
    boards = [board_uncertainty(comparisons, models, summary_only=summary_only)]
    for family in FAMILIES:
        boards.append(board_uncertainty([c for c in comparisons if c.family == family], models, summary_only=summary_only))
    return boards


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--per-task", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats (best is reported)")
    args = parser.parse_args(argv)
    models = [f"m{k}" for k in range(args.models)]
    comparisons = make_comparisons(args.models, args.tasks, args.per_task)

    def best_of(summary_only: bool) -> tuple[float, list[dict]]:
        best, out = np.inf, []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            out = first_view(comparisons, models, summary_only)
            best = min(best, time.perf_counter() - t0)
        return best, out

    t_full, full = best_of(False)
    t_summary, summary = best_of(True)
    for a, b in zip(full, summary, strict=True):
        assert a["overall_tiers"] == b["overall_tiers"] and a["z_ci90"] == b["z_ci90"]
        assert a["payload"]["overall_ci90"] == b["payload"]["overall_ci90"]
        for d in a["payload"]["dimensions"]:
            assert a["payload"]["per_dimension"][d]["winrate_ci90"] == b["payload"]["per_dimension"][d]["winrate_ci90"]
    print(f"{len(comparisons)} comparisons, {args.models} models, {args.tasks} tasks in {len(FAMILIES)} families, "
          f"1000 resamples; best of {args.repeats}")
    print(f"first view, full boards (baseline): {t_full:.3f} s")
    print(f"first view, summary_only:           {t_summary:.3f} s")
    print(f"ratio baseline / summary_only: {t_full / t_summary:.2f}x (every number the summaries read is equal)")


if __name__ == "__main__":
    main()

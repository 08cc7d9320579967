"""Benchmark: active vs uniform pair selection in a paired simulation (Ekphrasis App. F.1).

Setting (issue 6): 14 models whose skills are as spread as the Ekphrasis leaderboard, a budget of 50
judge calls per task, one judgment per call. After every task the BT model is refitted on all decisive
comparisons so far and its ranking is compared with the true one by Kendall τ. Each seed draws one
world (per-task response-quality noise and the judge's coin flips); every rule is run on the *same*
world (common random numbers: the k-th judgment of pair (i, j) on task t uses the same uniform draw
whatever the rule), so differences between rules are paired.

Simulated world:

* true skills θ*: the Usefulness z scores of Ekphrasis Table 19 turned into expected win rates
  s = 0.5 + σ_s·z (σ_s = population SD of Table 19's "U win" column) and inverted through
  s_m = mean_n σ(θm − θn); then scaled by √(1 + π·2τ²/8) so that the *marginal* win probabilities,
  after per-task noise, keep that spread (logistic–normal approximation; Monahan & Stefanski 1992);
* per task t, each model's response quality is q_mt = θ*_m + ε_mt with ε ~ N(0, τ²) (``--task-sd``);
* each judge call on (i, j) is a tie with probability ``--p-tie`` (Ekphrasis Table 11: 10–13%),
  otherwise i wins with probability σ(q_it − q_jt).

Run: ``.venv/bin/python -m tests.benchmarks.bench_active_sampling [--seeds 20] [--tasks 160]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import least_squares
from scipy.special import expit

from engine.active_sampling import RULES, ActiveState, select_pairs
from engine.bt import expected_winrate, fit_win_matrix

#: Ekphrasis Table 19, "U z" column (Gemini … Llama-4-Mav), and the "U win" column it came from.
TABLE19_U_Z = (0.61, 1.53, 0.59, 0.49, 0.13, 1.10, 0.38, 0.43, 0.12, 0.45, -1.37, -1.95, -1.46, -1.06)
TABLE19_U_WIN = (0.61, 0.78, 0.61, 0.59, 0.52, 0.70, 0.57, 0.58, 0.52, 0.58, 0.25, 0.14, 0.23, 0.31)
BUDGET_PER_TASK = 50  # Ekphrasis Table 9: 50 judge calls per task and dimension
TAU_TARGET = 0.9  # issue 6: reach Kendall τ >= 0.9
FIT_L2 = 0.01  # ridge of the running fit (keeps early fits finite; negligible once data accumulate)


def true_skills(task_sd: float) -> np.ndarray:
    """Latent θ* reproducing the spread of Ekphrasis Table 19 (Usefulness) after task noise."""
    s_target = 0.5 + np.std(TABLE19_U_WIN) * np.asarray(TABLE19_U_Z)
    sol = least_squares(lambda th: expected_winrate(th - th.mean()) - s_target, np.zeros(len(s_target)))
    theta = sol.x - sol.x.mean()
    # logistic-normal attenuation: E σ(x + e), e ~ N(0, v) ≈ σ(x / √(1 + πv/8)) (Monahan & Stefanski 1992)
    return theta * np.sqrt(1.0 + np.pi * 2.0 * task_sd**2 / 8.0)


def kendall_tau(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Kendall τ between two rankings (τ-a; equals τ-b when neither has ties)."""
    i, j = np.triu_indices(truth.size, 1)
    return float(np.mean(np.sign(estimate[i] - estimate[j]) * np.sign(truth[i] - truth[j])))


def simulate(rule: str, theta: np.ndarray, seed: int, n_tasks: int, task_sd: float, p_tie: float) -> np.ndarray:
    """Kendall τ of the running fit after each task for one rule in the world of ``seed``."""
    n = theta.size
    eps = np.random.default_rng([seed, 0]).normal(0.0, task_sd, size=(n_tasks, n))
    global_wins = np.zeros((n, n))
    fit = fit_win_matrix(global_wins, l2=FIT_L2)
    taus = np.empty(n_tasks)
    for t in range(n_tasks):
        q = theta + eps[t]
        u_win = np.random.default_rng([seed, 1, t]).random((n, n, BUDGET_PER_TASK))
        u_tie = np.random.default_rng([seed, 2, t]).random((n, n, BUDGET_PER_TASK))
        task_wins = np.zeros((n, n))
        counts = np.zeros((n, n))
        calls = 0
        while True:
            state = ActiveState(n_models=n, wins=task_wins, pair_counts=counts, calls_made=calls, fit=fit)
            pairs = select_pairs(state, BUDGET_PER_TASK, seed=seed * 100_003 + t, rule=rule)
            if not pairs:
                break
            for i, j in pairs:
                k = int(counts[i, j])
                if u_tie[i, j, k] >= p_tie:
                    if u_win[i, j, k] < expit(q[i] - q[j]):
                        task_wins[i, j] += 1
                    else:
                        task_wins[j, i] += 1
                counts[i, j] += 1
                counts[j, i] += 1
                calls += 1
        global_wins += task_wins
        fit = fit_win_matrix(global_wins, l2=FIT_L2, theta0=fit.theta)
        taus[t] = kendall_tau(fit.theta, theta)
    return taus


SMOOTH_TASKS = 5  # crossings are read off a trailing moving average over this many tasks (250 calls)


def first_crossing(curve: np.ndarray, target: float) -> int | None:
    """Index of the first task at which the trailing moving average of the curve reaches the target."""
    kernel = np.ones(SMOOTH_TASKS) / SMOOTH_TASKS
    smooth = np.convolve(curve, kernel, mode="full")[: curve.size]
    smooth[: SMOOTH_TASKS - 1] = -np.inf  # not enough history yet
    hit = np.flatnonzero(smooth >= target)
    return int(hit[0]) if hit.size else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=240, help="tasks per run (x 50 calls)")
    parser.add_argument("--rules", default=",".join(RULES))
    parser.add_argument("--task-sd", type=float, default=0.0,
                        help="SD of per-task response quality (0 = independent judgments)")
    parser.add_argument("--p-tie", type=float, default=0.11)
    parser.add_argument("--every", type=int, default=10, help="print the curve every N tasks")
    args = parser.parse_args(argv)
    rules = [r.strip() for r in args.rules.split(",") if r.strip()]
    if "uniform" not in rules:
        rules.insert(0, "uniform")
    theta = true_skills(args.task_sd)

    print(f"Active vs uniform pair selection: {theta.size} models, {BUDGET_PER_TASK} calls/task, "
          f"{args.seeds} paired seeds, {args.tasks} tasks, task_sd={args.task_sd}, p_tie={args.p_tie}")
    print("true θ* (latent):", np.array2string(np.round(theta, 3), max_line_width=120))
    curves: dict[str, np.ndarray] = {}
    started = time.perf_counter()
    for rule in rules:
        t0 = time.perf_counter()
        curves[rule] = np.array([simulate(rule, theta, s, args.tasks, args.task_sd, args.p_tie)
                                 for s in range(args.seeds)])
        print(f"  simulated {rule:<16s} {time.perf_counter() - t0:6.1f} s")
    print(f"  total {time.perf_counter() - started:.1f} s\n")

    print("Mean Kendall τ to the true ranking (± s.e. over seeds) by judge calls")
    header = f"{'calls':>7s} " + " ".join(f"{r:>17s}" for r in rules)
    print(header)
    for t in range(args.every - 1, args.tasks, args.every):
        cells = []
        for r in rules:
            col = curves[r][:, t]
            cells.append(f"{col.mean():.3f} ± {col.std(ddof=1) / np.sqrt(col.size):.3f}".rjust(17))
        print(f"{(t + 1) * BUDGET_PER_TASK:7d} " + " ".join(cells))

    print(f"\nCalls to reach mean τ >= {TAU_TARGET} (mean curve over seeds, {SMOOTH_TASKS}-task trailing average), "
          "ratio vs uniform in the same run; paired: per-seed crossings (never = beyond the run)")
    print(f"{'rule':<17s} {'calls':>7s} {'ratio':>7s} {'paired median ratio':>20s} {'seeds better/equal/worse':>25s}")
    base_cross = first_crossing(curves["uniform"].mean(axis=0), TAU_TARGET)
    for r in rules:
        cross = first_crossing(curves[r].mean(axis=0), TAU_TARGET)
        calls = "never" if cross is None else str((cross + 1) * BUDGET_PER_TASK)
        ratio = ("n/a" if cross is None or base_cross is None else f"{(cross + 1) / (base_cross + 1):.2f}")
        # paired per-seed: smoothed crossing of each seed's curve (never → tasks + 1)
        per_seed = []
        better = equal = worse = 0
        for s in range(args.seeds):
            a = first_crossing(curves[r][s], TAU_TARGET)
            b = first_crossing(curves["uniform"][s], TAU_TARGET)
            a_calls = (args.tasks + 1) if a is None else a + 1
            b_calls = (args.tasks + 1) if b is None else b + 1
            per_seed.append(a_calls / b_calls)
            better += a_calls < b_calls
            equal += a_calls == b_calls
            worse += a_calls > b_calls
        print(f"{r:<17s} {calls:>7s} {ratio:>7s} {np.median(per_seed):>20.2f} {f'{better}/{equal}/{worse}':>25s}")
    auc_base = curves["uniform"].mean()
    print("\nMean τ over the whole run (area under the curve), paired difference vs uniform ± s.e.")
    for r in rules:
        diff = curves[r].mean(axis=1) - curves["uniform"].mean(axis=1)
        print(f"{r:<17s} {curves[r].mean():.4f}  ({diff.mean():+.4f} ± {diff.std(ddof=1) / np.sqrt(diff.size):.4f})"
              if r != "uniform" else f"{r:<17s} {auc_base:.4f}")


if __name__ == "__main__":
    main()

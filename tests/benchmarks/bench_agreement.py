"""Benchmark: agreement statistics on 5,000 judgments — fast enough for live dashboards?

Fleiss κ (with its z test) on 1,250 items x 4 raters and the six ICC forms on 1,250 targets x 4 raters
(5,000 judgments each), Krippendorff α on the same 5,000 labels; each compared with a library baseline
measured in the same run (statsmodels ``aggregate_raters`` + ``fleiss_kappa``; pingouin
``intraclass_corr`` from a long data frame, the layout it needs).

Run: ``.venv/bin/python -m tests.benchmarks.bench_agreement [--repeats 20]``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import pingouin
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from engine.agreement import fleiss_kappa_test, intraclass_correlation, krippendorff_alpha

N_ITEMS, N_RATERS = 1250, 4  # 5,000 judgments


def _median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, N_ITEMS)
    labels = np.where(rng.random((N_ITEMS, N_RATERS)) < 0.7, truth[:, None], rng.integers(0, 3, (N_ITEMS, N_RATERS)))
    counts, _ = aggregate_raters(labels, n_cat=3)
    scores = rng.normal(size=(N_ITEMS, 1)) + 0.6 * rng.normal(size=(N_ITEMS, N_RATERS))
    frame = pd.DataFrame({"target": np.repeat(np.arange(N_ITEMS), N_RATERS),
                          "rater": np.tile(np.arange(N_RATERS), N_ITEMS), "score": scores.ravel()})

    rows = [
        ("Fleiss κ + z (from counts)", lambda: fleiss_kappa_test(counts),
         "statsmodels fleiss_kappa", lambda: sm_fleiss_kappa(counts)),
        ("Fleiss κ + z (from labels)", lambda: fleiss_kappa_test(aggregate_raters(labels, n_cat=3)[0]),
         "statsmodels aggregate+κ", lambda: sm_fleiss_kappa(aggregate_raters(labels, n_cat=3)[0])),
        ("ICC, six forms + CIs", lambda: intraclass_correlation(scores),
         "pingouin intraclass_corr", lambda: pingouin.intraclass_corr(frame, "target", "rater", "score")),
        ("Krippendorff α nominal", lambda: krippendorff_alpha(labels.T.astype(float), "nominal"),
         "(krippendorff package; same call)", None),
    ]
    print(f"Agreement statistics on {N_ITEMS * N_RATERS:,} judgments ({N_ITEMS} items x {N_RATERS} raters), "
          f"median of {args.repeats} runs")
    print(f"{'statistic':<30s} {'engine':>10s} {'baseline':>34s} {'baseline':>10s} {'ratio':>7s}")
    for name, ours, base_name, base in rows:
        t_ours = _median_time(ours, args.repeats)
        if base is None:
            print(f"{name:<30s} {t_ours * 1e3:>8.2f}ms {base_name:>34s} {'—':>10s} {'—':>7s}")
            continue
        t_base = _median_time(base, args.repeats)
        print(f"{name:<30s} {t_ours * 1e3:>8.2f}ms {base_name:>34s} {t_base * 1e3:>8.2f}ms {t_base / t_ours:>6.1f}x")
    icc = intraclass_correlation(scores)["ICC2"].value
    ref = pingouin.intraclass_corr(frame, "target", "rater", "score").set_index("Type").loc["ICC(A,1)", "ICC"]
    print(f"check: ICC2 engine {icc:.10f} vs pingouin {ref:.10f}; "
          f"κ engine {fleiss_kappa_test(counts).kappa:.10f} vs statsmodels {sm_fleiss_kappa(counts):.10f}")


if __name__ == "__main__":
    main()

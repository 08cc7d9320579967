"""Whether two EASEL agents differ (easel.txt §5, Table 3): a paired bootstrap over references.

Table 3 ranks agents by Final S, the mean over references of each episode's final similarity
S = 0.5·SSIM + 0.3·(1 − L1) + 0.2·EdgeIoU (Eq. 1). Every agent paints the same references, so the
comparison is paired: one replicate resamples the references within each category (the suite's design,
Table 1) and recomputes every agent's mean on the same draw (:mod:`engine.paired_bootstrap`, weighting
"items"). From it: the 90% interval of Final S(A) − Final S(B) and P(A > B) for every pair of agents, and
each agent's rank probabilities and rank set. ``category`` restricts everything to one category (the
page's and the API's slice).

Each agent's own Final S and interval are not drawn here: the caller passes the board's
(:func:`engine.easel.leaderboard.easel_board`, a bootstrap over the run's own references seeded from its
id), the one interval every page prints for that number, so the paired replicates serve only the
differences, P(A > B) and the ranks.

The semantic tasks (Table 4) are one episode per task and agent: their mean over tasks gets the same
bootstrap over tasks (n = number of scored tasks); a single task has no interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from engine.easel.leaderboard import REFERENCE_KINDS, SEMANTIC_TASKS, BoardRun, run_label
from engine.paired_bootstrap import bootstrap_payload, stratified_paired_bootstrap
from engine.seeding import derived_seed

__all__ = ["N_BOOT", "LEVEL", "agent_comparison", "semantic_means"]

N_BOOT = 1000
LEVEL = 0.90
METHOD = (f"{int(LEVEL * 100)}% paired percentile bootstrap over references ({N_BOOT} resamples, stratified by "
          "category; the same references for every agent)")
SEMANTIC_METHOD = f"{int(LEVEL * 100)}% percentile bootstrap over semantic tasks ({N_BOOT} resamples)"


def agent_comparison(runs: Sequence[BoardRun], episodes: Mapping[int, Sequence[Mapping]], *,
                     intervals: Mapping[int, tuple[float, float, float]], category: str | None = None) -> dict | None:
    """Difference intervals, P(A > B) and rank probabilities of Final S for the ranked agents (anchors and
    the painter are reference rows, not agents); None when fewer than two agents have a reconstruction.

    ``intervals``: run id → (Final S, low, high) over the same references (all, or ``category``'s), the
    board's, printed as each agent's score; the bootstrap draws no per-agent interval of its own. Agents
    are ordered by their mean over the paired references, T_a = (1/n) Σ_i S_final(a, i) (Table 3).
    Raises ValueError when a compared run has no entry in ``intervals``."""
    agents = [r for r in runs if r.agent_kind not in REFERENCE_KINDS]
    finals: dict[int, dict[str, float]] = {}
    category_of: dict[str, str] = {}
    for run in agents:
        for e in episodes.get(run.id, []):
            if e["kind"] != "reconstruction" or e["final_s"] is None:
                continue
            if category is not None and e["category"] != category:
                continue
            finals.setdefault(run.id, {})[e["task_id"]] = e["final_s"]
            category_of[e["task_id"]] = e["category"]
    scored = [r for r in agents if finals.get(r.id)]
    if len(scored) < 2:
        return None
    references = sorted(category_of)
    values = np.array([[finals[r.id].get(t, np.nan) for t in references] for r in scored])
    seed = derived_seed("easel-paired-bootstrap", tuple(sorted(r.id for r in scored)), category or "")
    missing = [r.id for r in scored if r.id not in intervals]
    if missing:
        raise ValueError(f"no Final S interval for run(s) {missing}")
    result = stratified_paired_bootstrap(values, [category_of[t] for t in references], weighting="items",
                                         n_boot=N_BOOT, level=LEVEL, seed=seed % (2**32), agent_intervals=False)
    payload = bootstrap_payload(result, [run_label(r) for r in scored], method=METHOD,
                                intervals=[tuple(intervals[r.id]) for r in scored])
    runs_by_index = [r.id for r in scored]
    for row in payload["agents"]:
        row["run"] = runs_by_index[row.pop("index")]
    payload["category"] = category
    return payload


def semantic_means(runs: Sequence[BoardRun], episodes: Mapping[int, Sequence[Mapping]]) -> dict[int, dict]:
    """Run id → the mean semantic score over its scored tasks, its n and (n ≥ 2) its bootstrap interval."""
    names = [name for name, _ in SEMANTIC_TASKS]
    out: dict[int, dict] = {}
    for run in runs:
        scores = {e["task_id"]: e["semantic_score"] for e in episodes.get(run.id, [])
                  if e["kind"] == "semantic" and e["semantic_score"] is not None}
        present = [t for t in names if t in scores] + sorted(set(scores) - set(names))
        if not present:
            continue
        row = {"n": len(present), "mean": float(np.mean([scores[t] for t in present])), "low": None, "high": None,
               "method": SEMANTIC_METHOD}
        if len(present) >= 2:
            result = stratified_paired_bootstrap([[scores[t] for t in present]], ["semantic"] * len(present),
                                                 n_boot=N_BOOT, level=LEVEL,
                                                 seed=derived_seed("easel-semantic", run.id) % (2**32))
            row["low"], row["high"] = float(result.low[0]), float(result.high[0])
        out[run.id] = row
    return out

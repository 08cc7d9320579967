"""The judge card (issue 24): alpaca_eval's evaluator table made live — one row per judge, the same
columns for every judge so that judges can be compared.

Per judge (``JudgeRun.judge_name``) the latest finished snapshot stands for it:

* agreement with people: over the human items of the text-pairwise campaigns on that snapshot's task
  set that the judge compared too, the share where the people's outcome (majority side of the mean
  label: A, B or a tie at ½) equals the judge's (mean of its verdicts); a tie agrees only with a tie
  (Ekphrasis App. H.6);
* position-flip rate = 1 − swap decisive consistency; duplicate consistency; P(prefers longer) = the
  winner-longer rate; tie rate — the snapshot's reliability diagnostics (App. D.2, Tables 11–12),
  pooled over dimensions weighted by their counts;
* cost and time per 1,000 judgements: the run's recorded cost (USD, from the provider ledger) and
  wall time (started → finished) over its completed calls;
* λ when calibrated: the power-tuning λ of the latest calibration record of that snapshot, per
  dimension (see :mod:`annotation.calibration`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from annotation.models import CalibrationRecord
from engine.calibration_views import CALIBRATION_METHOD_VERSION
from leaderboard.ekphrasis.models import LeaderboardSnapshot


@dataclass
class JudgeCard:
    judge: str
    is_simulated: bool
    snapshot: int
    task_set: str
    n_judgements: int
    agreement_with_people: float | None
    n_agreement_pairs: int
    position_flip_rate: float | None
    duplicate_consistency: float | None
    prefers_longer: float | None
    tie_rate: float | None
    cost_per_1000_usd: float | None
    seconds_per_1000: float | None
    lam: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _pooled(reliability: dict[str, dict], value: str, weight: str) -> float | None:
    pairs = [(r.get(value), r.get(weight) or 0) for r in reliability.values() if r.get(value) is not None]
    total = sum(w for _, w in pairs)
    return round(sum(v * w for v, w in pairs) / total, 4) if total else None


def _side(y: float) -> str:
    return "A" if y > 0.5 else "B" if y < 0.5 else "tie"


def _agreement(snapshot: LeaderboardSnapshot) -> tuple[float | None, int, dict[str, float], list[str]]:
    from annotation import calibration

    agree = total = 0
    lam: dict[str, float] = {}
    notes: list[str] = []
    for campaign in calibration.text_campaigns_for(snapshot):
        inputs = calibration.calibration_inputs(snapshot=snapshot, campaign=campaign)
        for data in inputs.per_dimension.values():
            m = data.judged
            human = data.human[2][m]
            judge = data.judge_paired[m]
            agree += int(sum(_side(h) == _side(j) for h, j in zip(human, judge)))
            total += int(m.sum())
        record = CalibrationRecord.objects.filter(snapshot=snapshot, campaign=campaign,
                                                  method_version=CALIBRATION_METHOD_VERSION).first()
        if record is not None and not lam:
            lam = {d: v["calibrated"]["lam"] for d, v in record.payload["dimensions"].items() if "calibrated" in v}
    if not total:
        notes.append("no human item on this task set was also judged")
    return (round(agree / total, 4) if total else None), total, lam, notes


def judge_card_for(snapshot: LeaderboardSnapshot) -> JudgeCard:
    """The card of ``snapshot``'s judge computed from that snapshot (module docstring): shown beside
    the snapshot's calibrated board, and one row of :func:`judge_cards`."""
    run = snapshot.run
    reliability = snapshot.payload.get("reliability", {})
    swap = _pooled(reliability, "swap_decisive_consistency", "n_swap_decisive_pairs")
    n = int(run.calls_done or sum(r.get("n_primary", 0) for r in reliability.values()))
    cost = (run.usage or {}).get("cost_usd")
    seconds = (run.finished_at - run.started_at).total_seconds() if run.started_at and run.finished_at else None
    agreement, n_pairs, lam, notes = _agreement(snapshot)
    if cost is None:
        notes.append("no cost recorded (simulated or unpriced judge)" if run.is_simulated else "no cost recorded")
    return JudgeCard(
        judge=snapshot.judge_name, is_simulated=run.is_simulated, snapshot=snapshot.pk, task_set=str(run.task_set),
        n_judgements=n, agreement_with_people=agreement, n_agreement_pairs=n_pairs,
        position_flip_rate=None if swap is None else round(1 - swap, 4),
        duplicate_consistency=_pooled(reliability, "duplicate_consistency", "n_duplicate_pairs"),
        prefers_longer=_pooled(reliability, "winner_longer_rate", "n_winner_longer"),
        tie_rate=_pooled(reliability, "tie_rate", "n_primary"),
        cost_per_1000_usd=None if cost is None or not n else round(1000 * float(cost) / n, 4),
        seconds_per_1000=None if seconds is None or not n else round(1000 * seconds / n, 2),
        lam={d: round(float(v), 3) for d, v in lam.items() if v is not None and np.isfinite(v)}, notes=notes,
    )


def judge_cards() -> list[JudgeCard]:
    """One card per judge name: its latest snapshot's diagnostics (module docstring)."""
    latest: dict[str, LeaderboardSnapshot] = {}
    for snapshot in LeaderboardSnapshot.objects.select_related("run__task_set").order_by("-created_at", "-pk"):
        latest.setdefault(snapshot.judge_name, snapshot)
    return [judge_card_for(snapshot) for _, snapshot in sorted(latest.items())]

"""The pay report of a crowd campaign (issue 25): one row per participant, what a researcher checks
before paying on the panel — items labelled (every label they gave, one an edit of its item made stale
included), items skipped, active minutes (the page's measured active time, clamped
to wall time, :class:`~annotation.panel_models.ItemActiveTime`), state and verdict, the code they were
given, gold accuracy (gold items are silent attention checks), agreement with the majority of the
item's other labels, too-fast items, the bonus the researcher's rule suggests
(``bonus_per_item`` × items, when gold accuracy reaches ``bonus_min_gold_accuracy``), and the wall minutes
they spent in the study — what a researcher pays by hand to someone the study ended without a code
(state ``closed_before_work``: the campaign closed before their work began).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from decimal import Decimal

from django.db.models import Count, Q, Sum

from annotation.counted_labels import excluded_annotators
from annotation.kinds import kind_for
from annotation.models import Assignment, Item
from annotation.panel_models import ItemActiveTime, PanelStudy, Participant
from engine.csv_cells import csv_text


@dataclass(frozen=True)
class PayRow:
    participant_pk: int
    panel_id: str
    study_id: str
    session_id: str
    state: str
    verdict: str
    items: int
    skipped_items: int
    gold_items: int
    gold_correct: int
    gold_accuracy: float | None
    agreement_items: int
    agreement_with_majority: float | None
    active_ms: int
    active_minutes: float
    median_active_seconds: float | None
    too_fast_items: int
    code: str
    suggested_bonus: str
    entered_at: str
    finished_at: str
    #: Wall minutes from entry to the end of their path (or their last request, while on it): the time a
    #: participant with no code (closed before work, timed out, returned) gave, for a bonus by hand.
    study_minutes: float


@dataclass(frozen=True)
class PayReport:
    campaign_id: int
    panel: str
    too_fast_ms: int
    bonus_rule: str
    rows: list[PayRow]

    def as_dict(self) -> dict:
        return {"campaign": self.campaign_id, "panel": self.panel, "too_fast_ms": self.too_fast_ms,
                "bonus_rule": self.bonus_rule, "participants": [asdict(row) for row in self.rows]}


def _code(study: PanelStudy, participant: Participant) -> str:
    if participant.state == Participant.State.COMPLETED:
        return study.completion_code
    if participant.state == Participant.State.SCREENED_OUT:
        return study.screen_out_code
    return ""


def _bonus(study: PanelStudy, items: int, gold_accuracy: float | None, participant: Participant) -> Decimal:
    if participant.verdict or study.bonus_per_item <= 0:
        return Decimal("0.00")
    if study.bonus_min_gold_accuracy is not None and (gold_accuracy is None or gold_accuracy < study.bonus_min_gold_accuracy):
        return Decimal("0.00")
    return (study.bonus_per_item * items).quantize(Decimal("0.01"))


def _label_quality(study: PanelStudy, user_ids: set[int]) -> dict[int, tuple[int, int, int, int]]:
    """Per participant: (gold items, gold correct, regular items with others' majority, agreeing). The others'
    majority is of the labels the statistics count (:mod:`annotation.counted_labels`: no one's under a verdict)."""
    campaign = study.campaign
    kind = kind_for(campaign.kind)
    excluded = set(excluded_annotators(campaign_id=campaign.pk).values_list("user_id", flat=True))
    gold = dict(Item.objects.filter(campaign=campaign, is_gold=True).values_list("pk", "gold_answer"))
    by_item: dict[int, list[tuple[int, str]]] = defaultdict(list)
    # Everyone's current labels (a rejected participant's too: their own figures are what is judged; they
    # do not enter anyone else's majority).
    for label in kind.label_model.objects.filter(campaign=campaign, is_stale=False):
        by_item[label.item_id].append((label.annotator_id, kind.category(label)))
    out: dict[int, list[int]] = {uid: [0, 0, 0, 0] for uid in user_ids}
    for item_id, labels in by_item.items():
        for who, category in labels:
            if who not in out:
                continue
            if item_id in gold:
                out[who][0] += 1
                out[who][1] += int(category == gold[item_id])
                continue
            others = Counter(c for w, c in labels if w != who and w not in excluded)
            total = sum(others.values())
            top = others.most_common(1)
            if top and top[0][1] * 2 > total:  # a strict majority of the item's other labels
                out[who][2] += 1
                out[who][3] += int(category == top[0][0])
    return {uid: tuple(v) for uid, v in out.items()}


def pay_report(*, study: PanelStudy) -> PayReport:
    people = list(Participant.objects.filter(study=study).order_by("entered_at", "pk"))
    ids = {p.user_id for p in people}
    # The labels each gave, stale ones included: a label the researcher's later edit of its item made stale
    # (its assignment *stale*, no longer *submitted*) was work done, and its active time is counted too.
    label_model = kind_for(study.campaign.kind).label_model
    done = dict(label_model.objects.filter(campaign_id=study.campaign_id, annotator_id__in=ids)
                .values("annotator_id").annotate(n=Count("pk")).values_list("annotator_id", "n"))
    # Skipped items: a participant who skipped everything is completed (nothing is left for them), 0 items.
    skipped = dict(Assignment.objects.filter(campaign_id=study.campaign_id, annotator_id__in=ids,
                                             status=Assignment.Status.SKIPPED)
                   .values("annotator_id").annotate(n=Count("pk")).values_list("annotator_id", "n"))
    times = {row["participant_id"]: row for row in ItemActiveTime.objects.filter(participant__study=study)
             .values("participant_id").annotate(ms=Sum("active_ms"),
                                                fast=Count("pk", filter=Q(active_ms__lt=study.too_fast_ms)))}
    each: dict[int, list[int]] = defaultdict(list)
    for pid, ms in ItemActiveTime.objects.filter(participant__study=study).values_list("participant_id", "active_ms"):
        each[pid].append(ms)
    quality = _label_quality(study, ids)
    rows = []
    for p in people:
        gold_n, gold_ok, agree_n, agree_ok = quality.get(p.user_id, (0, 0, 0, 0))
        accuracy = gold_ok / gold_n if gold_n else None
        ms = int((times.get(p.pk) or {}).get("ms") or 0)
        items = done.get(p.user_id, 0)
        mine = sorted(each.get(p.pk, []))
        median = None
        if mine:
            mid = len(mine) // 2
            median = (mine[mid] if len(mine) % 2 else (mine[mid - 1] + mine[mid]) / 2) / 1000.0
        rows.append(PayRow(
            participant_pk=p.pk, panel_id=p.panel_id, study_id=p.panel_study_id, session_id=p.panel_session_id,
            state=p.monitoring_state, verdict=p.verdict, items=items, skipped_items=skipped.get(p.user_id, 0),
            gold_items=gold_n, gold_correct=gold_ok,
            gold_accuracy=accuracy, agreement_items=agree_n,
            agreement_with_majority=agree_ok / agree_n if agree_n else None, active_ms=ms,
            active_minutes=round(ms / 60000.0, 4), median_active_seconds=median,
            too_fast_items=int((times.get(p.pk) or {}).get("fast") or 0), code=_code(study, p),
            suggested_bonus=str(_bonus(study, items, accuracy, p)), entered_at=p.entered_at.isoformat(),
            finished_at=p.finished_at.isoformat() if p.finished_at else "",
            study_minutes=round(max(((p.finished_at or p.last_seen_at) - p.entered_at).total_seconds(), 0) / 60.0, 2),
        ))
    rule = f"{study.bonus_per_item} per item"
    if study.bonus_min_gold_accuracy is not None:
        rule += f" when gold accuracy ≥ {study.bonus_min_gold_accuracy:.0%}"
    return PayReport(study.campaign_id, study.panel, study.too_fast_ms, rule, rows)


def pay_report_csv(report: PayReport) -> str:
    """The report as CSV, through the site's one formula-safe writer (engine.csv_cells)."""
    fields = list(PayRow.__dataclass_fields__)
    return csv_text(fields, ([asdict(row)[k] for k in fields] for row in report.rows))


__all__ = ["PayReport", "PayRow", "pay_report", "pay_report_csv"]

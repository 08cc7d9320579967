"""The monitoring figures of a crowd campaign (issue 25): participants by state, throughput, median
active time per item and projected completion.

* throughput: the campaign's labels of regular items given in the last hour (and per hour since the
  first participant arrived);
* projected completion: the slots still without a label (regular items × k − labels) over the last
  hour's throughput, from now; None while nothing was labelled in the last hour.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Min
from django.utils import timezone

from annotation.models import Assignment, CampaignProgress
from annotation.panel_models import ItemActiveTime, PanelStudy, Participant

#: The states the page lists, in the participant's order.
MONITORING_STATES = ("training", "working", "completed", "screened_out", "returned", "timed_out", "closed_before_work",
                     "rejected")


@dataclass(frozen=True)
class PanelMonitoring:
    by_state: dict[str, int]
    participants: int
    labels: int
    slots: int
    labels_last_hour: int
    labels_per_hour: float | None
    median_active_seconds: float | None
    projected_completion: datetime | None
    hours_to_completion: float | None

    def as_dict(self) -> dict:
        out = asdict(self)
        out["projected_completion"] = self.projected_completion.isoformat() if self.projected_completion else None
        return out


def panel_monitoring(*, study: PanelStudy, now: datetime | None = None) -> PanelMonitoring:
    now = now or timezone.now()
    by_state = dict.fromkeys(MONITORING_STATES, 0)
    for state, verdict, n in (Participant.objects.filter(study=study).values("state", "verdict")
                              .annotate(n=Count("pk")).values_list("state", "verdict", "n")):
        by_state["rejected" if verdict else state] += n
    progress = CampaignProgress.objects.filter(campaign_id=study.campaign_id).first()
    labels, slots = (progress.labels, progress.slots) if progress else (0, 0)
    regular = Assignment.objects.filter(campaign_id=study.campaign_id, status=Assignment.Status.SUBMITTED,
                                        slot__isnull=False)
    last_hour = regular.filter(finished_at__gt=now - timedelta(hours=1)).count()
    first = Participant.objects.filter(study=study).aggregate(first=Min("entered_at"))["first"]
    per_hour = None
    if first is not None:
        hours = max((now - first).total_seconds() / 3600.0, 1 / 60)
        per_hour = regular.filter(annotator__panel_participant__study=study).count() / hours
    times = list(ItemActiveTime.objects.filter(participant__study=study).values_list("active_ms", flat=True))
    median = statistics.median(times) / 1000.0 if times else None
    remaining = max(slots - labels, 0)
    hours_left = remaining / last_hour if last_hour else (0.0 if remaining == 0 and slots else None)
    projected = now + timedelta(hours=hours_left) if hours_left is not None else None
    return PanelMonitoring(by_state, sum(by_state.values()), labels, slots, last_hour, per_hour, median, projected,
                           hours_left)


__all__ = ["MONITORING_STATES", "PanelMonitoring", "panel_monitoring"]

"""The labels the statistics count (issue 25): one place that every dashboard, agreement figure and
consensus reads its labels from, so that a rule about which labels count is written once.

A label counts unless it is stale (its item changed after it was given) or its annotator is a panel
participant a researcher rejected or blocked. Nothing is deleted: taking the verdict back makes the
same labels count again (the dashboards' cache key moves with every verdict, see
:func:`annotation.participants.participant_verdict_set`).
"""

from __future__ import annotations

from django.db.models import QuerySet

from annotation.label_models import Label
from annotation.panel_models import Participant


def excluded_annotators(*, campaign_id: int) -> QuerySet:
    """The user ids of the campaign's participants under a verdict (a subquery; few rows, indexed)."""
    return Participant.objects.filter(campaign_id=campaign_id).exclude(verdict="").values("user_id")


def counted_labels(label_model: type[Label], *, campaign_id: int, include_stale: bool = False) -> QuerySet:
    """The campaign's labels that enter the statistics (``include_stale``: stale ones too, for the
    readers that count them separately)."""
    labels = label_model.objects.filter(campaign_id=campaign_id)
    if not include_stale:
        labels = labels.filter(is_stale=False)
    return labels.exclude(annotator_id__in=excluded_annotators(campaign_id=campaign_id))


__all__ = ["counted_labels", "excluded_annotators"]

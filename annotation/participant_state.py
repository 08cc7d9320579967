"""The one rule of when a panel participant may act as an annotator on their campaign ("at work"),
written once for the ORM and once for the hot path's SQL (:mod:`annotation.request_facts`), which must
say the same: past the training (state *working*), no researcher's verdict, and within the time limit
(no deadline, or a deadline still ahead).

A participant who completed, was screened out, returned, timed out, or was rejected or blocked holds
no access; their account is scoped to this one campaign, so no other campaign ever admits them.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import Q

from annotation.panel_models import Participant


def participant_at_work_filter(*, now: datetime) -> Q:
    """The participants at work at ``now`` (filter of :class:`~annotation.panel_models.Participant`)."""
    return (Q(state=Participant.State.WORKING, verdict=Participant.Verdict.NONE)
            & (Q(deadline__isnull=True) | Q(deadline__gt=now)))


def participant_at_work_sql(*, user_column: str, campaign_column: str) -> str:
    """SQL: the user is the campaign's participant at work now (the same rule, the database's clock)."""
    return (f"EXISTS (SELECT 1 FROM {Participant._meta.db_table} pp WHERE pp.user_id = {user_column} "
            f"AND pp.campaign_id = {campaign_column} AND pp.state = '{Participant.State.WORKING.value}' "
            f"AND pp.verdict = '' AND (pp.deadline IS NULL OR pp.deadline > CURRENT_TIMESTAMP))")


__all__ = ["participant_at_work_filter", "participant_at_work_sql"]

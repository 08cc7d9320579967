"""The one rule of when a panel participant may act as an annotator on their campaign ("at work"),
written once for the ORM and once for the hot path's SQL (:mod:`annotation.request_facts`), which must
say the same: past the training (state *working*), no researcher's verdict, and within the time limit
(no deadline, or a deadline still ahead).

Beside it, the quota rule the gatekeeper's callers apply on every path that hands out an item
(:func:`annotation.services.item_next`, so the general annotator API too): a participant at work whose
live submitted items (:attr:`~annotation.models.AnnotatorProgress.done`) reached the study's
``item_quota`` gets no further item and is completed.

A participant who completed, was screened out, returned, timed out, or was rejected or blocked holds
no access; their account is scoped to this one campaign, so no other campaign ever admits them.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import F, Q

from annotation.panel_models import PanelStudy, Participant


def participant_at_work_filter(*, now: datetime) -> Q:
    """The participants at work at ``now`` (filter of :class:`~annotation.panel_models.Participant`)."""
    return (Q(state=Participant.State.WORKING, verdict=Participant.Verdict.NONE)
            & (Q(deadline__isnull=True) | Q(deadline__gt=now)))


def participant_at_quota_filter(*, done: F | int) -> Q:
    """The participants whose ``done`` items reached their study's quota (a filter of Participant)."""
    return Q(study__item_quota__isnull=False, study__item_quota__lte=done)


def _at_work_conditions(alias: str) -> str:
    return (f"{alias}.state = '{Participant.State.WORKING.value}' AND {alias}.verdict = '' "
            f"AND ({alias}.deadline IS NULL OR {alias}.deadline > CURRENT_TIMESTAMP)")


def participant_at_work_sql(*, user_column: str, campaign_column: str) -> str:
    """SQL: the user is the campaign's participant at work now (the same rule, the database's clock)."""
    return (f"EXISTS (SELECT 1 FROM {Participant._meta.db_table} pp WHERE pp.user_id = {user_column} "
            f"AND pp.campaign_id = {campaign_column} AND {_at_work_conditions('pp')})")


def participant_locked_cte_sql() -> str:
    """SQL: a ``WITH`` entry ``pp`` (two %s: user id, campaign id) that locks the user's participant row of
    the campaign, if any, and reads it with its study's quota. A row locked ``FOR UPDATE`` is read as last
    committed once the lock is had, not as of the statement's snapshot: a return, verdict or completion
    (which holds this lock until it commits) is seen by a next-item that waited for it."""
    return (f"pp AS (SELECT p.state, p.verdict, p.deadline, s.item_quota FROM {Participant._meta.db_table} p "
            f"JOIN {PanelStudy._meta.db_table} s ON s.id = p.study_id "
            f"WHERE p.user_id = %s AND p.campaign_id = %s FOR UPDATE OF p)")


def participant_locked_facts_sql(*, done_column: str) -> str:
    """SQL: two columns over the ``pp`` entry: at work; at work and ``done_column`` reached the quota."""
    at_work = _at_work_conditions("pp")
    return (f"EXISTS (SELECT 1 FROM pp WHERE {at_work}), "
            f"EXISTS (SELECT 1 FROM pp WHERE {at_work} AND pp.item_quota IS NOT NULL "
            f"AND pp.item_quota <= COALESCE({done_column}, 0))")


__all__ = ["participant_at_quota_filter", "participant_at_work_filter", "participant_at_work_sql",
           "participant_locked_cte_sql", "participant_locked_facts_sql"]

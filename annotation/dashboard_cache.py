"""The researcher dashboard, cached and invalidated by what changes it (issue 16).

A dashboard is a pure function of the campaign's items, labels, skips and adjudications and of the
judge runs finished on its task set. Its cache key names the state of both:

* the campaign's ``label_version`` (:class:`~annotation.models.CampaignProgress`), which every service
  that writes labels, items, skips or adjudications bumps in its own transaction (the admin edits items
  through the services; its deletions of items and adjudications are caught by the signals connected
  here);
* the judge state of the task set: how many runs finished, the latest finish, how many snapshots and
  the latest one (a run's completion changes it).

So a cached dashboard is never stale: the first load after any change recomputes it, later loads read
it back. The recompute of a text pairwise or image preference dashboard is
:func:`annotation.dashboard_tallies.campaign_dashboard_tallied` (one pass over the labels into item and
annotator tallies), of the other kinds :func:`annotation.selectors.campaign_dashboard`; both equal
:func:`campaign_dashboard_recomputed`, which builds every number from label rows. What a submission
does not change is kept apart, so that the recompute after a submission reads only the labels: the
judge's verdicts per *snapshot* (immutable once written), normalised and indexed once in each
process's memory, and the item rows per (campaign, ``item_version``), computed once for all the
processes that share the cache and then kept in each one's memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.core.cache import cache
from django.db.models import Count, F, Max, Q

from annotation import dashboard_tallies, judge_join, selectors
from annotation.models import Campaign, CampaignProgress
from leaderboard.ekphrasis.selectors import judge_pair_outcomes

#: Seconds a cached dashboard is kept (bounds memory; correctness comes from the key).
DASHBOARD_TTL_S = 600
#: Snapshots' verdicts and campaigns' item rows kept per process (least recently used dropped first).
KEPT_IN_MEMORY = 8

_memory: OrderedDict[str, Any] = OrderedDict()
_memory_lock = threading.Lock()


def _kept(key: str, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per key in this process (the key names an immutable state)."""
    with _memory_lock:
        if key in _memory:
            _memory.move_to_end(key)
            return _memory[key]
    value = compute()
    with _memory_lock:
        _memory[key] = value
        while len(_memory) > KEPT_IN_MEMORY:
            _memory.popitem(last=False)
    return value


def _shared(key: str, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per key for every process sharing the cache (the key names an immutable
    state): a process that has not seen it yet reads it back instead of recomputing it."""
    value = cache.get(key)
    if value is None:
        value = compute()
        cache.set(key, value, DASHBOARD_TTL_S)
    return value


def campaign_state(campaign: Campaign) -> tuple[str, str]:
    """(the labels' state, the items' state) of the campaign, from its counters row."""
    versions = CampaignProgress.objects.filter(pk=campaign.pk).values_list("label_version", "item_version").first()
    label_version, item_version = versions or (None, None)
    # created_at tells two campaigns that reused one primary key apart (a database rebuilt, a test)
    identity = f"{campaign.pk}@{campaign.created_at.timestamp()}"
    return f"{identity}:{label_version}", f"{identity}:{item_version}"


def _judge_state(campaign: Campaign) -> str:
    from leaderboard.ekphrasis.models import JudgeRun

    state = JudgeRun.objects.filter(task_set_id=campaign.task_set_id).aggregate(
        done=Count("pk", filter=Q(status=JudgeRun.Status.DONE), distinct=True),
        last=Max("finished_at"),
        n_snapshots=Count("snapshots", distinct=True),
        # the newest save, not the newest creation: a hand edit of a snapshot's payload (the judge's scores
        # the dashboard shows) changes the key (leaderboard.edit_stamps.EditStamped)
        last_snapshot=Max("snapshots__updated_at"),
    )
    last, last_snapshot = state["last"], state["last_snapshot"]
    return (f"{state['done']}:{last.timestamp() if last else 0}:{state['n_snapshots']}:"
            f"{last_snapshot.timestamp() if last_snapshot else 0}")


def _judge_outcomes_source(campaign: Campaign) -> Callable[[str], judge_join.IndexedOutcomes]:
    """The latest snapshot's primary verdicts per dimension, normalised and indexed once per snapshot
    for every process sharing the cache (then kept in each one's memory): a snapshot never changes,
    a newer one has another key."""
    from leaderboard.ekphrasis.selectors import latest_snapshot

    def read(code: str) -> judge_join.IndexedOutcomes:
        return judge_join.IndexedOutcomes(judge_pair_outcomes(task_set=campaign.task_set, dimension=code))

    def source(dimension: str) -> judge_join.IndexedOutcomes:
        code = judge_join.LEADERBOARD_DIMENSION.get(dimension, dimension)
        snapshot = latest_snapshot(task_set=campaign.task_set, dimension=code)
        if snapshot is None:
            return read(code)  # no run: nothing to keep
        key = f"judge-outcomes:{snapshot.pk}@{snapshot.created_at.timestamp()}:{code}"
        return _kept(key, lambda: _shared(f"atelier:dashboard-{key}", lambda: read(code)))

    return source


def campaign_dashboard_cached(*, campaign: Campaign) -> selectors.Dashboard:
    """The campaign's dashboard with its judge join, equal to a full recompute
    (:func:`campaign_dashboard_recomputed`), read from the cache while nothing it shows has changed."""
    labels_state, items_state = campaign_state(campaign)
    key = f"atelier:dashboard:{labels_state}:{_judge_state(campaign)}"
    dashboard = cache.get(key)
    if dashboard is None:
        _, scores = selectors.judge_sources(campaign=campaign)
        # the pairwise kinds from tallies (one pass over the labels); the others from label rows
        compute = (dashboard_tallies.campaign_dashboard_tallied if campaign.kind in dashboard_tallies.TALLIED_KINDS
                   else selectors.campaign_dashboard)
        sources = {"judge_outcomes": _judge_outcomes_source(campaign), "judge_scores": scores,
                   "judge_conditions": selectors.judge_condition_source(campaign=campaign)}
        items = _kept(f"items:{items_state}", lambda: dashboard_tallies.ItemTable(
            _shared(f"atelier:dashboard-items:{items_state}", lambda: selectors.item_rows(campaign=campaign))))
        try:
            dashboard = compute(campaign=campaign, items=items, **sources)
        except KeyError:
            # items created between reading the items' version and reading the labels: their labels
            # name items the kept rows do not have, so read the rows afresh (the next load's key is newer)
            dashboard = compute(campaign=campaign, items=dashboard_tallies.ItemTable(selectors.item_rows(campaign=campaign)),
                                **sources)
        cache.set(key, dashboard, DASHBOARD_TTL_S)
    dashboard.campaign = campaign
    return dashboard


def campaign_dashboard_recomputed(*, campaign: Campaign) -> selectors.Dashboard:
    """The dashboard recomputed from the database, nothing cached (what the cache must always equal)."""
    outcomes, scores = selectors.judge_sources(campaign=campaign)
    return selectors.campaign_dashboard(campaign=campaign, judge_outcomes=outcomes, judge_scores=scores,
                                        judge_conditions=selectors.judge_condition_source(campaign=campaign))


def _item_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    """An item deleted in the admin takes its slots, assignments and labels with it: recount."""
    from annotation.progress import campaign_counters_refresh

    campaign_counters_refresh(campaign_id=instance.campaign_id)


def _adjudication_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    from annotation.models import Item

    campaign_id = Item.objects.filter(pk=instance.item_id).values_list("campaign_id", flat=True).first()
    if campaign_id is not None:
        CampaignProgress.objects.filter(pk=campaign_id).update(label_version=F("label_version") + 1)


def connect_invalidation_signals() -> None:
    """Every write the services make bumps the version themselves; the admin can only delete around
    them (items and adjudications), so those deletions are caught here. Called from ``ready()``."""
    from django.db.models.signals import post_delete

    from annotation.models import Adjudication, Item

    post_delete.connect(_item_deleted, sender=Item, dispatch_uid="dashboard-cache-item-deleted")
    post_delete.connect(_adjudication_deleted, sender=Adjudication, dispatch_uid="dashboard-cache-adjudication-deleted")

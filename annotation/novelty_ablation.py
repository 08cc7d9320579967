"""The Novelty ablation on the human-labelled pairs (Ekphrasis §5.4, Table 4, App. D.1): two fixed-pair
judge runs on a campaign's Novelty items, one with TIG anchors and one with generic anchors. Reachable
from :mod:`annotation.services` under the same names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotation.choices import CampaignKind, Dimension
from annotation.errors import AblationInvalid
from annotation.models import Campaign, Item
from leaderboard.ekphrasis.models import JudgeRun
from leaderboard.models import Response, Task

__all__ = ["novelty_ablation_pairs", "novelty_ablation_runs_create", "novelty_ablation_runs_start"]


def novelty_ablation_pairs(*, campaign: Campaign) -> list[tuple[Task, Response, Response]]:
    """The (task, response A, response B) pairs of a text pairwise campaign's non-gold Novelty items,
    in item order and canonical A/B order: the rows both ablation conditions judge (App. D.1)."""
    items = (
        Item.objects.filter(campaign=campaign, dimension=Dimension.NOVELTY, is_gold=False,
                            response_a__isnull=False, response_b__isnull=False)
        .select_related("task", "response_a", "response_b").order_by("position", "pk")
    )
    return [(item.task, item.response_a, item.response_b) for item in items]


@transaction.atomic
def novelty_ablation_runs_create(
    *, campaign: Campaign, judge_name: str, seed: int = 42, config: Mapping[str, Any] | None = None,
    created_by: AbstractBaseUser | None = None,
) -> tuple[JudgeRun, JudgeRun]:
    """Two fixed-pair Novelty runs on the campaign's Novelty pairs with the same judge, seed and pairs:
    one with TIG anchors, one with generic anchors (the no-TIG condition). Both or neither are created;
    nothing is judged until they are started. Returns (TIG run, generic run)."""
    from leaderboard.ekphrasis.judge_runs import judge_run_create
    from leaderboard.providers import UnknownJudge
    from leaderboard.runs.errors import RunConfigurationError

    if campaign.kind != CampaignKind.TEXT_PAIRWISE:
        raise AblationInvalid("the Novelty ablation runs on a text pairwise campaign's Novelty items")
    pairs = novelty_ablation_pairs(campaign=campaign)
    if not pairs:
        raise AblationInvalid("this campaign has no Novelty pairs to judge")
    runs = []
    for anchor in ("tig", "generic"):
        try:
            runs.append(judge_run_create(
                task_set=campaign.task_set, judge_name=judge_name, dimensions="N", seed=seed, novelty_anchor=anchor,
                # campaign_id: the run page links back to the campaign whose pairs it judges
                pairs=pairs, config={**dict(config or {}), "campaign_id": campaign.pk}, created_by=created_by,
            ))
        except (UnknownJudge, RunConfigurationError) as exc:
            raise AblationInvalid(str(exc)) from exc
    return runs[0], runs[1]


def novelty_ablation_runs_start(
    *, campaign: Campaign, judge_name: str, seed: int = 42, config: Mapping[str, Any] | None = None,
    created_by: AbstractBaseUser | None = None,
) -> tuple[JudgeRun, JudgeRun]:
    """Create the two ablation runs (:func:`novelty_ablation_runs_create`) and queue them once committed
    (with CELERY_BROKER_URL unset they run in this process, eagerly)."""
    from leaderboard.ekphrasis.judge_runs import judge_run_start

    with transaction.atomic():
        tig, generic = novelty_ablation_runs_create(
            campaign=campaign, judge_name=judge_name, seed=seed, config=config, created_by=created_by
        )
        judge_run_start(run=tig)
        judge_run_start(run=generic)
    return tig, generic

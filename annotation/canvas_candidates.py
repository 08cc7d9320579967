"""The candidate canvases of EASEL reconstruction episodes that canvas-similarity items are drawn
from (:mod:`annotation.validation_items`) and that the calibrated human-preference table enumerates
as its population (:mod:`annotation.calibrated_preference`): one definition for both."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from leaderboard.easel.models import EaselEpisode, EaselRun, EaselStep

#: Where in an episode candidate canvases are taken (fractions of its stored steps; 1 = the last).
CANVAS_FRACTIONS = (0.25, 0.5, 1.0)


def canvas_candidates(runs: Sequence[EaselRun]) -> dict[int, list[EaselStep]]:
    """Task id -> candidate steps (¼, ½ and last stored canvas of each reconstruction episode)."""
    by_task: dict[int, list[EaselStep]] = defaultdict(list)
    episodes = EaselEpisode.objects.filter(run__in=runs, kind="reconstruction", status=EaselEpisode.Status.DONE)
    for episode in episodes.order_by("run_id", "position"):
        stored = list(EaselStep.objects.filter(episode=episode, canvas_png__isnull=False, s__isnull=False)
                      .order_by("index").defer("canvas_png", "raw"))
        if not stored:
            continue
        picked = {stored[max(0, round(f * len(stored)) - 1)].pk: stored[max(0, round(f * len(stored)) - 1)]
                  for f in CANVAS_FRACTIONS}
        by_task[episode.task_id].extend(picked.values())
    return by_task

"""Celery tasks of EASEL runs: thin, idempotent wrappers around :mod:`leaderboard.easel.services`.

One job per episode. A job takes ids, loads what it needs and calls one service; jobs are acknowledged
late (settings), so a job whose worker is killed is delivered again and resumes from the steps already
stored (see the resume rule in :mod:`leaderboard.easel.services`). Without a broker they run eagerly.
"""

from __future__ import annotations

from celery import shared_task

from leaderboard.easel import services


@shared_task(name="easel.run_dispatch")
def easel_run_dispatch(run_id: int) -> int:
    """Queue one job per unfinished episode of the run."""
    episode_ids = services.easel_run_pending_episodes(run_id=run_id)
    for episode_id in episode_ids:
        easel_episode.delay(run_id, episode_id)
    if not episode_ids:
        services.easel_run_finish_if_complete(run_id=run_id)
    return len(episode_ids)


@shared_task(name="easel.episode", bind=True, max_retries=5)
def easel_episode(self, run_id: int, episode_id: int) -> None:
    try:
        services.easel_episode_execute(run_id=run_id, episode_id=episode_id)
    except services.EpisodeTakenOver:
        return  # another delivery of this job is ahead of us: it will finish the episode
    except Exception as exc:
        if self.request.retries >= self.max_retries:
            services.easel_run_fail(run_id=run_id, error=f"episode {episode_id}: {exc!r}")
            raise
        raise self.retry(exc=exc, countdown=2 ** self.request.retries) from exc

"""Reads every job's live status shares: the fields a status page polls and the run_status.js script reads."""

from __future__ import annotations

from leaderboard.runs.lifecycle import run_may_resume
from leaderboard.runs.models import RunJob


def run_status(run: RunJob, *, error_chars: int = 5000) -> dict:
    """``status``, ``error`` and ``may_resume`` (whether a Resume is offered: a failed, resumable job)."""
    return {"status": run.status, "error": run.error[:error_chars], "may_resume": run_may_resume(run)}

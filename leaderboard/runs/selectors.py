"""Reads every job's live status shares: the fields a status page polls and the run_status.js script reads."""

from __future__ import annotations

from leaderboard.runs.lifecycle import run_resume_refusal
from leaderboard.runs.models import RunJob, RunStatus


def run_status(run: RunJob, *, error_chars: int = 5000) -> dict:
    """``status``, ``error``, ``may_resume`` (whether a Resume is offered: a failed, resumable job made with the
    prompts this code sends) and ``prompts_changed`` (why such a failed job is offered none, else "")."""
    refusal = run_resume_refusal(run)  # one reading of the rule (it reads the prompts' versions)
    changed = refusal if run.status == RunStatus.FAILED and run.resumable else ""
    return {"status": run.status, "error": run.error[:error_chars], "may_resume": not refusal,
            "prompts_changed": changed}

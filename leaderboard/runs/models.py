"""The abstract job every resumable background job stores: one :class:`RunStatus` and the bookkeeping the
lifecycle (:mod:`leaderboard.runs.lifecycle`) reads and writes. Judge runs, EASEL runs, C² runs, TIG
builds and task-set builds are its concrete models; each adds its own plan and progress counters."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class RunStatus(models.TextChoices):
    """pending → running → finalising → done; failed from pending or running (an error, or cancelled),
    and failed → running again on resume."""

    PENDING = "pending"
    RUNNING = "running"
    FINALISING = "finalising"
    DONE = "done"
    FAILED = "failed"


#: The statuses a job may be cancelled in (a finalising job is one write from done: it is left to finish).
LIVE_STATUSES = (RunStatus.PENDING, RunStatus.RUNNING)


class RunJob(models.Model):
    """Status, error, configuration, code version, usage, creator and timestamps of one resumable job."""

    Status = RunStatus

    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING)
    error = models.TextField(blank=True)
    resumable = models.BooleanField(
        default=True,
        help_text="Off when the job failed for a reason resuming cannot change (e.g. an invalid configuration).",
    )
    config = models.JSONField(default=dict, blank=True)
    code_version = models.CharField(max_length=64, blank=True)
    usage = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    #: Driven by Celery workers since it last started (not inline in a command's process): only such a
    #: job can lose a message, so only such a job is re-sent when the broker holds none of its messages
    #: (:mod:`leaderboard.runs.lost_messages`).
    queued = models.BooleanField(default=False, editable=False)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class TaskUnit(models.Model):
    """One task's share of a run: the unit a worker takes, finishes or resumes (a judge run's chunk, a C²
    run's prompt). The concrete model adds ``run``, the foreign key to its own run model."""

    task = models.ForeignKey("leaderboard.Task", on_delete=models.CASCADE, related_name="+")
    done = models.BooleanField(default=False)

    class Meta:
        abstract = True
        constraints = [models.UniqueConstraint(fields=["run", "task"], name="%(class)s_unique")]

"""Base API views of every resumable job: resume and cancel, written once. A protocol's view names its
model and how it shows a run (``detail``); the rules are the lifecycle's (:mod:`leaderboard.runs.lifecycle`),
their refusals the API's one error shape (409 ``conflict``)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework import serializers, status
from rest_framework.response import Response

from leaderboard.api_contract import ApiView
from leaderboard.runs.lifecycle import run_cancel
from leaderboard.runs.models import RunJob
from leaderboard.runs.starting import run_resume


class RunProgressOutput(serializers.Serializer):
    """The fields of a job's live status that every kind shares (a protocol's progress adds its counters)."""

    status = serializers.CharField()
    error = serializers.CharField(allow_blank=True)
    may_resume = serializers.BooleanField(help_text="A failed run whose failure resuming can change: POST …/resume.")


class RunOperationApi(ApiView):
    model: type[RunJob]

    def detail(self, run: RunJob) -> dict:  # pragma: no cover - each protocol's view says how it shows a run
        raise NotImplementedError


class RunResumeApi(RunOperationApi):
    """Queue a failed, resumable run again; it resumes from its stored units (409 otherwise)."""

    def post(self, request, pk: int):
        run = run_resume(get_object_or_404(self.model, pk=pk))
        return Response(self.detail(run), status=status.HTTP_202_ACCEPTED)


class RunCancelApi(RunOperationApi):
    """Stop a pending or running run (it becomes failed, 'cancelled', and can be resumed; 409 otherwise)."""

    def post(self, request, pk: int):
        run = run_cancel(get_object_or_404(self.model, pk=pk), by=request.user.get_username())
        return Response(self.detail(run))

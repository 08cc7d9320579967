"""Base API views of every resumable job: resume and cancel, written once. A protocol's view names its
model and how it shows a run (``detail``); the rules are the lifecycle's (:mod:`leaderboard.runs.lifecycle`),
their refusals the API's one error shape (409 ``conflict``)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from leaderboard.api_contract import ApiView, error_responses
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


def run_operation_apis(*, model: type[RunJob], detail, detail_output, operation_prefix: str):
    """The resume and cancel views of one kind of run, with their schema: ``(ResumeApi, CancelApi)``."""
    attrs = {"model": model, "detail": staticmethod(detail)}
    resume = extend_schema(operation_id=f"{operation_prefix}_resume", request=None,
                           responses={202: detail_output, **error_responses(404, 409)})(
        type(f"{model.__name__}ResumeApi", (RunResumeApi,), {**attrs, "__doc__": RunResumeApi.__doc__}))
    cancel = extend_schema(operation_id=f"{operation_prefix}_cancel", request=None,
                           responses={200: detail_output, **error_responses(404, 409)})(
        type(f"{model.__name__}CancelApi", (RunCancelApi,), {**attrs, "__doc__": RunCancelApi.__doc__}))
    return resume, cancel

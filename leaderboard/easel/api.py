"""EASEL in ``/api/v1/easel/``: runs (create, list, detail with live status, resume, cancel), a run's
episodes and an episode's steps (paginated), and the leaderboard of a suite (with an ETag).
One view per operation; reads through :mod:`leaderboard.easel.selectors`, writes through
:mod:`leaderboard.easel.services`; researchers only."""

from __future__ import annotations

import django_filters
from django.db.models import Max
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers

from engine.easel.leaderboard import CATEGORIES
from engine.easel.simulated import SKILL_RANGE
from leaderboard.api_contract import MAX_SEED, ApiListView, ApiView, error_responses, not_modified_or
from leaderboard.easel import selectors, services
from leaderboard.easel.models import EaselEpisode, EaselRun, EaselStep
from leaderboard.providers import code_version
from leaderboard.runs.api import RunCreateApi, RunUnitListApi, run_operation_apis, run_read_apis
from leaderboard.runs.serializers import run_detail_output, run_output, run_progress_output

EaselRunOutput = run_output(EaselRun, fields=[
    "id", "task_set", "agent_kind", "agent_name", "budget_setting", "seed", "is_simulated", "code_version", "status",
    "episodes_total", "episodes_done", "steps_planned", "steps_done", "error", "created_at", "started_at",
    "finished_at"])
EaselProgressOutput = run_progress_output(
    "EaselProgressOutput", counters=("episodes_done", "episodes_total", "steps_done", "steps_planned"))
EaselRunDetailOutput = run_detail_output(
    "EaselRunDetailOutput", run=EaselRunOutput, progress=EaselProgressOutput,
    summary=serializers.DictField(child=serializers.FloatField(), help_text="Mean Final S per category; semantic scores."))


def _detail(run: EaselRun) -> dict:
    return {"run": EaselRunOutput(run).data, "progress": selectors.run_progress(run=run),
            "summary": selectors.run_summary(run=run)}




EaselRunListApi, EaselRunDetailApi = run_read_apis(
    model=EaselRun, output=EaselRunOutput, detail=_detail, detail_output=EaselRunDetailOutput, runs=selectors.run_list,
    operation_prefix="easel_runs", filters={"agent_kind": django_filters.ChoiceFilter(choices=EaselRun.AgentKind.choices)})


class EaselRunInput(serializers.Serializer):
    task_set = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    agent = serializers.CharField(max_length=100)
    budget_setting = serializers.ChoiceField(choices=EaselRun.Budget.choices, default=EaselRun.Budget.ALIGNED)
    seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=0)
    skill = serializers.FloatField(min_value=SKILL_RANGE[0], max_value=SKILL_RANGE[1], required=False,
                                   allow_null=True)


class EaselRunCreateApi(RunCreateApi):
    """Create and queue an EASEL run: ``agent`` is ``simulated`` (with ``skill``), ``painter``, an anchor or a
    subject model's display name."""

    Input, detail_output, operation_id = EaselRunInput, EaselRunDetailOutput, "easel_runs_create"
    detail = staticmethod(_detail)

    def create(self, values: dict, *, created_by) -> EaselRun:
        task_set = selectors.easel_task_set_get(values.pop("task_set"))
        if task_set is None:
            raise Http404("No such EASEL task set.")
        return services.easel_run_create(task_set=task_set, created_by=created_by, **values)


EaselRunResumeApi, EaselRunCancelApi = run_operation_apis(
    model=EaselRun, detail=_detail, detail_output=EaselRunDetailOutput, operation_prefix="easel_runs")


class EaselEpisodeOutput(serializers.ModelSerializer):
    task = serializers.CharField(source="task.external_id")

    class Meta:
        model = EaselEpisode
        fields = ["id", "task", "kind", "category", "status", "initial_s", "final_s", "final_ssim", "final_l1",
                  "final_edge_iou", "at_50", "auc", "best", "fb_gap", "repeat_rate", "invalid_rate",
                  "semantic_score", "recogniser", "finished_at"]


class EaselRunEpisodeListApi(RunUnitListApi):
    serializer_class = EaselEpisodeOutput
    run_model, unit_model, operation_id = EaselRun, EaselEpisode, "easel_runs_episodes_list"

    def units(self, run):
        return selectors.run_episodes(run=run)


class EaselStepOutput(serializers.ModelSerializer):
    class Meta:
        model = EaselStep
        fields = ["id", "index", "action", "raw", "valid", "kind", "collision", "error", "s", "ssim", "l1", "edge_iou"]


class EaselStepFilter(django_filters.FilterSet):
    valid = django_filters.BooleanFilter()
    kind = django_filters.ChoiceFilter(choices=EaselStep.Kind.choices)

    class Meta:
        model = EaselStep
        fields = ["valid", "kind"]


class EaselEpisodeStepListApi(ApiListView):
    """The steps of one episode (actions and per-step scores; canvases are on the episode viewer page)."""

    serializer_class = EaselStepOutput
    filterset_class = EaselStepFilter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return EaselStep.objects.none()
        episode = get_object_or_404(EaselEpisode.objects.only("pk"), pk=self.kwargs["pk"])
        return EaselStep.objects.filter(episode=episode).defer("canvas_png")

    @extend_schema(operation_id="easel_episodes_steps_list", responses={200: EaselStepOutput(many=True), **error_responses(404)})
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class EaselLeaderboardApi(ApiView):
    """The leaderboard of one EASEL suite (``?task_set=``; the newest suite without it), the numbers of the
    page. ``updated`` is the suite's newest finished run's finish; the ETag names what the payload depends on:
    the finished runs and their episodes' scores (:func:`leaderboard.easel.selectors.board_fingerprint`, so a
    score changed in place is not answered 304), the code version and the category."""

    @extend_schema(operation_id="easel_leaderboard_retrieve",
                   parameters=[OpenApiParameter("task_set", int, required=False),
                               OpenApiParameter("category", str, required=False, enum=[name for name, _ in CATEGORIES],
                                                description="Slice the paired bootstrap (``uncertainty``) to one category.")],
                   responses={200: OpenApiResponse(description="The leaderboard payload (free-form object)."),
                              304: OpenApiResponse(description="Not modified."), **error_responses(404)})
    def get(self, request):
        wanted = request.query_params.get("task_set") or None
        task_set = selectors.easel_task_set_get(wanted)
        if task_set is None:
            raise Http404("No such EASEL task set.")
        runs = EaselRun.objects.filter(task_set=task_set, status=EaselRun.Status.DONE)
        updated = runs.aggregate(updated=Max("finished_at"))["updated"]
        category = request.query_params.get("category") or None
        if category is not None and category not in dict(CATEGORIES):
            raise serializers.ValidationError({"category": [f"one of {', '.join(name for name, _ in CATEGORIES)}"]})
        board, board_runs, episodes = selectors.easel_boards([task_set])[task_set.pk]
        version = code_version()
        body = {"task_set": task_set.pk, "updated": updated.isoformat() if updated else None,
                "code_version": version, "leaderboard": board,
                # the paired bootstrap over references (differences, P(A > B), rank probabilities; each agent's
                # Final S with the board's interval) and the semantic means with n and interval (keys are run ids)
                "uncertainty": selectors.easel_uncertainty(board=board, runs=board_runs, episodes=episodes,
                                                              category=category)}
        etag = f"easel-{task_set.pk}-{selectors.board_fingerprint(task_set)}-{version}-{category}"
        return not_modified_or(request, etag, body)

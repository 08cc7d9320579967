"""The Ekphrasis part of ``/api/v1/``: judge runs (create, list, detail with live status, resume,
cancel, comparisons) and leaderboard snapshots (list, detail, compare, slices, export).

HackSoft style: one view per operation with its own nested input and output serializers; the view
validates and calls a service (writes) or a selector (reads). Refusals are mapped once, in
:func:`leaderboard.api_contract.api_exception_handler`. Researchers read and start runs.
"""

from __future__ import annotations

import django_filters
from django.db.models import Max
from django.shortcuts import get_object_or_404
from django.utils.http import quote_etag
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from engine.leaderboard_exports import model_rows
from leaderboard.api_contract import (
    MAX_SEED,
    ApiListView,
    ApiView,
    IdFilter,
    client_holds,
    error_responses,
    not_modified_or,
    text_download,
)
from leaderboard.ekphrasis import judge_runs, results, selectors
from leaderboard.ekphrasis.models import Comparison, JudgeRun, LeaderboardSnapshot
from leaderboard.models import TaskSet
from leaderboard.runs.api import RunCreateApi, RunUnitListApi, run_operation_apis, run_read_apis
from leaderboard.runs.serializers import run_detail_output, run_output, run_progress_output

# ---------------------------------------------------------------- judge runs


JudgeRunOutput = run_output(JudgeRun, fields=[
    "id", "task_set", "judge_name", "is_simulated", "dimensions", "budget_per_task", "seed", "novelty_anchor",
    "code_version", "status", "tasks_total", "tasks_done", "calls_planned", "calls_done", "error", "created_at",
    "started_at", "finished_at"])
JudgeRunProgressOutput = run_progress_output(
    "JudgeRunProgressOutput", counters=("tasks_done", "tasks_total", "calls_done", "calls_planned"),
    doc="The live status the run page polls.", comparisons=serializers.DictField(child=serializers.IntegerField()),
    snapshot=serializers.IntegerField(allow_null=True), fixed_pairs=serializers.IntegerField())
JudgeRunDetailOutput = run_detail_output("JudgeRunDetailOutput", run=JudgeRunOutput, progress=JudgeRunProgressOutput)


def _judge_run_detail(run: JudgeRun) -> dict:
    return {"run": JudgeRunOutput(run).data, "progress": selectors.judge_run_progress(run=run)}


JudgeRunListApi, JudgeRunDetailApi = run_read_apis(
    model=JudgeRun, output=JudgeRunOutput, detail=_judge_run_detail, detail_output=JudgeRunDetailOutput,
    runs=selectors.judge_run_list, operation_prefix="judge_runs", filters={"judge_name": django_filters.CharFilter()},
    detail_runs=JudgeRun.objects.select_related("task_set"))


class JudgeRunInput(serializers.Serializer):
    task_set = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    judge = serializers.CharField(max_length=100, default="simulated")
    dimensions = serializers.RegexField(r"^[UEN]{1,3}$", default="UEN")
    budget_per_task = serializers.IntegerField(min_value=1, max_value=10_000, default=50)
    seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=42)
    novelty_anchor = serializers.ChoiceField(choices=["tig", "generic"], default="tig")


class JudgeRunCreateApi(RunCreateApi):
    """Create and queue a judge run (researchers). The same checks as the page's form and the CLI."""

    Input, detail_output, operation_id = JudgeRunInput, JudgeRunDetailOutput, "judge_runs_create"
    detail = staticmethod(_judge_run_detail)

    def create(self, values: dict, *, created_by) -> JudgeRun:
        return judge_runs.judge_run_create(
            task_set=get_object_or_404(TaskSet, pk=values["task_set"]), judge_name=values["judge"],
            dimensions=values["dimensions"], budget_per_task=values["budget_per_task"], seed=values["seed"],
            novelty_anchor=values["novelty_anchor"], created_by=created_by,
        )


JudgeRunResumeApi, JudgeRunCancelApi = run_operation_apis(
    model=JudgeRun, detail=_judge_run_detail, detail_output=JudgeRunDetailOutput, operation_prefix="judge_runs")


class ComparisonOutput(serializers.ModelSerializer):
    task = serializers.CharField(source="task.external_id")
    model_x = serializers.CharField(source="model_x.display_name")
    model_y = serializers.CharField(source="model_y.display_name")

    class Meta:
        model = Comparison
        fields = ["id", "task", "dimension", "model_x", "model_y", "kind", "repeat", "judge_name", "sequence",
                  "shown_a", "shown_b", "status", "winner", "confidence", "rationale", "repaired", "attempts",
                  "judged_at"]


class JudgeRunComparisonListApi(RunUnitListApi):
    """The run's comparisons (pairwise judge calls), newest first."""

    serializer_class = ComparisonOutput
    run_model, unit_model, operation_id = JudgeRun, Comparison, "judge_runs_comparisons_list"
    filters = {"dimension": django_filters.ChoiceFilter(choices=[("U", "U"), ("E", "E"), ("N", "N")]),
               "status": django_filters.ChoiceFilter(choices=Comparison.Status.choices),
               "kind": django_filters.ChoiceFilter(choices=Comparison.Kind.choices),
               "task": django_filters.CharFilter(field_name="task__external_id")}

    def units(self, run):
        return Comparison.objects.filter(run=run).select_related("task", "model_x", "model_y")


# ---------------------------------------------------------------- leaderboard snapshots


class SnapshotOutput(serializers.ModelSerializer):
    task_set = serializers.IntegerField(source="run.task_set_id")
    task_set_name = serializers.CharField(source="run.task_set.name")
    updated = serializers.DateTimeField(source="created_at", help_text="Snapshots never change once stored.")

    class Meta:
        model = LeaderboardSnapshot
        fields = ["id", "run", "task_set", "task_set_name", "task_set_version", "judge_name", "budget_per_task",
                  "seed", "code_version", "is_simulated", "is_demo", "created_at", "updated"]


class SnapshotFilter(django_filters.FilterSet):
    task_set = IdFilter(field_name="run__task_set_id")
    judge_name = django_filters.CharFilter()
    is_demo = django_filters.BooleanFilter()
    is_simulated = django_filters.BooleanFilter()

    class Meta:
        model = LeaderboardSnapshot
        fields = ["task_set", "judge_name", "is_demo", "is_simulated"]


class SnapshotListApi(ApiListView):
    """Stored leaderboards, newest first. The ETag changes when a snapshot is added or saved again (a hand edit:
    their newest ``updated_at``, leaderboard/edit_stamps.py) (If-None-Match → 304)."""

    serializer_class = SnapshotOutput
    filterset_class = SnapshotFilter

    def get_queryset(self):
        return selectors.snapshot_list()

    @extend_schema(operation_id="leaderboards_list",
                   responses={200: SnapshotOutput(many=True), 304: OpenApiResponse(description="Not modified."),
                              **error_responses()})
    def get(self, request, *args, **kwargs):
        queryset = self.filter_queryset(self.get_queryset())
        state = queryset.aggregate(latest=Max("pk"), edited=Max("updated_at"))
        edited = state["edited"] and state["edited"].timestamp()
        etag = quote_etag(f"snapshots-{queryset.count()}-{state['latest']}-{edited}-{request.GET.urlencode()}")
        if client_holds(request, etag):
            return Response(status=status.HTTP_304_NOT_MODIFIED, headers={"ETag": etag})
        response = super().get(request, *args, **kwargs)
        response["ETag"] = etag
        return response


class SnapshotDetailOutput(serializers.Serializer):
    """The numbers of the snapshot page: ranked rows (scores, 90% intervals, tiers), the family table,
    reliability and budget rows, and the raw stored payload."""

    snapshot = SnapshotOutput()
    rows = serializers.ListField(child=serializers.DictField())
    family_rows = serializers.ListField(child=serializers.DictField())
    reliability_rows = serializers.ListField(child=serializers.DictField())
    budget_rows = serializers.ListField(child=serializers.DictField())
    payload = serializers.DictField()


class SnapshotDetailApi(ApiView):
    @extend_schema(operation_id="leaderboards_retrieve",
                   responses={200: SnapshotDetailOutput, 304: OpenApiResponse(description="Not modified."),
                              **error_responses(404)})
    def get(self, request, pk: int):
        snapshot = get_object_or_404(LeaderboardSnapshot.objects.select_related("run__task_set"), pk=pk)
        payload = snapshot.payload
        body = {
            "snapshot": SnapshotOutput(snapshot).data,
            "rows": [vars(row) for row in model_rows(payload)],
            "family_rows": results.family_rows(payload),
            "reliability_rows": results.reliability_rows(payload),
            "budget_rows": results.budget_rows(payload),
            "payload": payload,
        }
        # its last save, not its creation: a payload edited by hand is a new ETag
        return not_modified_or(request, f"snapshot-{snapshot.pk}-{snapshot.updated_at.timestamp()}", body)


class SnapshotCompareApi(ApiView):
    """Two snapshots side by side: Overall VCI and rank per model, with the change (``?a=&b=``)."""

    class CompareQuery(serializers.Serializer):
        a = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
        b = serializers.IntegerField(min_value=1, max_value=2**63 - 1)

    class CompareRowOutput(serializers.Serializer):
        name = serializers.CharField()
        left_rank = serializers.IntegerField(allow_null=True)
        right_rank = serializers.IntegerField(allow_null=True)
        left_overall = serializers.FloatField(allow_null=True)
        right_overall = serializers.FloatField(allow_null=True)
        rank_change = serializers.IntegerField(allow_null=True)

    class CompareOutput(serializers.Serializer):
        a = serializers.IntegerField()
        b = serializers.IntegerField()
        rows = serializers.ListField(child=serializers.DictField())

    @extend_schema(operation_id="leaderboards_compare", parameters=[CompareQuery],
                   responses={200: CompareOutput, **error_responses(404)})
    def get(self, request):
        query = self.CompareQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        left = get_object_or_404(LeaderboardSnapshot, pk=query.validated_data["a"])
        right = get_object_or_404(LeaderboardSnapshot, pk=query.validated_data["b"])
        rows = results.comparison_rows(left.payload, right.payload)
        return Response({"a": left.pk, "b": right.pk, "rows": self.CompareRowOutput(rows, many=True).data})


class SnapshotSlicesApi(ApiView):
    """The snapshot's board sliced by task family or subtype (``?by=family|subtype``): per slice the board
    refitted on its tasks alone with the snapshot's bootstrap — Overall with 90% interval and tiers, per
    dimension expected win rates with intervals, z intervals — and the full board's Overall tiers."""

    class SlicesQuery(serializers.Serializer):
        by = serializers.ChoiceField(choices=["family", "subtype"], default="family")

    class SlicesOutput(serializers.Serializer):
        snapshot = serializers.IntegerField()
        by = serializers.CharField()
        overall_tiers = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()))
        slices = serializers.DictField(child=serializers.DictField(allow_null=True))

    @extend_schema(operation_id="leaderboards_slices_retrieve", parameters=[SlicesQuery],
                   responses={200: SlicesOutput, **error_responses(404)})
    def get(self, request, pk: int):
        from leaderboard.ekphrasis import uncertainty

        query = self.SlicesQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        snapshot = get_object_or_404(LeaderboardSnapshot.objects.select_related("run"), pk=pk)
        by = query.validated_data["by"]
        if by == "family":
            slices = uncertainty.family_intervals(snapshot)
        else:
            slices = {value: uncertainty.slice_board(snapshot, by, value)
                      for value in uncertainty.slice_choices(snapshot)[by]}
        return Response({"snapshot": snapshot.pk, "by": by, "overall_tiers": uncertainty.overall_tiers(snapshot),
                         "slices": slices})


class SnapshotExportApi(ApiView):
    """The snapshot as CSV, JSON or LaTeX — the files the page exports."""

    download_media_types = ("text/csv", "application/json", "application/x-tex")

    @extend_schema(operation_id="leaderboards_export",
                   parameters=[OpenApiParameter("fmt", str, enum=["csv", "json", "tex"], default="json")],
                   responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/json"): OpenApiTypes.OBJECT,
                              (200, "application/x-tex"): OpenApiTypes.STR, **error_responses(404)})
    def get(self, request, pk: int):
        fmt = request.query_params.get("fmt", "json")
        if fmt not in ("csv", "json", "tex"):
            raise serializers.ValidationError({"fmt": ["one of csv, json, tex"]})
        snapshot = get_object_or_404(LeaderboardSnapshot, pk=pk)
        body = {"csv": results.export_csv, "json": results.export_json, "tex": results.export_latex}[fmt](snapshot)
        return text_download(body, fmt, f"leaderboard-{snapshot.pk}.{fmt}")

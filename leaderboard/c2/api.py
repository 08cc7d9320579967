"""C² in ``/api/v1/c2/``: dataset imports (admins), runs (create, list, detail with live status, resume, cancel), a run's samples
with their ratings (paginated), and a finished run's results (the leaderboard's numbers, with an ETag).
One view per operation; reads through :mod:`leaderboard.c2.selectors`, writes through
:mod:`leaderboard.c2.services.runs`; researchers only."""

from __future__ import annotations

import django_filters
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from leaderboard.api_contract import (
    MAX_SEED,
    AdminOnly,
    ApiView,
    IdentifierField,
    ImportSummaryOutput,
    error_responses,
    import_summary,
    not_modified_or,
)
from leaderboard.c2 import selectors
from leaderboard.c2.models import C2Rating, C2Run, C2Sample
from leaderboard.c2.services import runs
from leaderboard.c2.services.imports import FORMATS, c2_tasks_import
from leaderboard.models import Benchmark, TaskSet
from leaderboard.runs.api import RunCreateApi, RunUnitListApi, run_operation_apis, run_read_apis
from leaderboard.runs.serializers import run_detail_output, run_output, run_progress_output


class C2TaskImportApi(ApiView):
    """Import one dataset file into a C² task set (admins) — the ``import_c2_tasks`` service: every item or
    none, errors as ``file:line: field``. Formats with images (OK-VQA, Creation-MMBench) need an image folder
    on the server: import those with the command line."""

    permission_classes = [AdminOnly]
    parser_classes = [MultiPartParser, FormParser]

    class C2TaskImportInput(serializers.Serializer):
        file = serializers.FileField(allow_empty_file=True)
        fmt = serializers.ChoiceField(choices=[f for f, (_, images, _) in FORMATS.items() if not images])
        task_set = serializers.CharField(max_length=100)
        version = serializers.CharField(max_length=40)
        description = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)

    @extend_schema(operation_id="c2_tasks_import", request={"multipart/form-data": C2TaskImportInput},
                   responses={200: ImportSummaryOutput, **error_responses()})
    def post(self, request):
        data = self.C2TaskImportInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        upload = values["file"]
        task_set, summary = c2_tasks_import(fmt=values["fmt"], name=upload.name, raw=upload.read(),
                                            task_set_name=values["task_set"], version=values["version"],
                                            description=values["description"])
        return Response(import_summary(task_set, summary))


C2RunOutput = run_output(C2Run, fields=[
    "id", "task_set", "subject_names", "n_samples", "template", "rater_name", "seed", "surprise_policy", "tau",
    "temperature", "embedder", "rerate_share", "is_simulated", "code_version", "status", "prompts_total",
    "prompts_done", "calls_planned", "calls_done", "error", "created_at", "started_at", "finished_at"])
C2ProgressOutput = run_progress_output(
    "C2ProgressOutput", counters=("prompts_done", "prompts_total", "calls_done", "calls_planned"),
    has_results=serializers.BooleanField())
C2RunDetailOutput = run_detail_output("C2RunDetailOutput", run=C2RunOutput, progress=C2ProgressOutput)


def _detail(run: C2Run) -> dict:
    return {"run": C2RunOutput(run).data, "progress": selectors.c2_run_progress(run=run)}


C2RunListApi, C2RunDetailApi = run_read_apis(
    model=C2Run, output=C2RunOutput, detail=_detail, detail_output=C2RunDetailOutput, runs=selectors.c2_run_list,
    operation_prefix="c2_runs", filters={"template": django_filters.ChoiceFilter(choices=C2Run.Template.choices)})


class C2RunInput(serializers.Serializer):
    task_set = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    models = serializers.ListField(child=IdentifierField(max_length=100), min_length=1, max_length=50)
    n_samples = serializers.IntegerField(min_value=1, max_value=50, default=runs.DEFAULT_SAMPLES)
    template = serializers.ChoiceField(choices=C2Run.Template.choices, default=C2Run.Template.STANDARD)
    rater = serializers.CharField(max_length=100, default="simulated")
    seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=42)
    surprise_policy = serializers.ChoiceField(choices=C2Run.SurprisePolicy.choices, default=C2Run.SurprisePolicy.ZERO)


class C2RunCreateApi(RunCreateApi):
    """Create and queue a C² run over ``models`` (display names; ``simulated-…`` names are simulated)."""

    Input, detail_output, operation_id = C2RunInput, C2RunDetailOutput, "c2_runs_create"
    detail = staticmethod(_detail)

    def create(self, values: dict, *, created_by) -> C2Run:
        task_set = get_object_or_404(TaskSet, pk=values["task_set"], benchmark__kind=Benchmark.Kind.C2)
        return runs.c2_run_create(
            task_set=task_set, model_names=values["models"], n_samples=values["n_samples"],
            template=values["template"], rater_name=values["rater"], seed=values["seed"],
            surprise_policy=values["surprise_policy"], created_by=created_by,
        )


C2RunResumeApi, C2RunCancelApi = run_operation_apis(
    model=C2Run, detail=_detail, detail_output=C2RunDetailOutput, operation_prefix="c2_runs")


class C2RatingOutput(serializers.ModelSerializer):
    class Meta:
        model = C2Rating
        fields = ["id", "rater_name", "repeat", "status", "u", "o", "s", "rationale_u", "rationale_o", "rationale_s"]


class C2SampleOutput(serializers.ModelSerializer):
    model = serializers.CharField(source="subject_model.display_name")
    task = serializers.CharField(source="task.external_id")
    ratings = C2RatingOutput(many=True)

    class Meta:
        model = C2Sample
        fields = ["id", "model", "task", "sample_index", "status", "text", "temperature", "confidence",
                  "confidence_status", "verdict", "usefulness", "correct", "cluster", "attempts", "error",
                  "generated_at", "ratings"]


class C2RunSampleListApi(RunUnitListApi):
    serializer_class = C2SampleOutput
    run_model, unit_model, operation_id = C2Run, C2Sample, "c2_runs_samples_list"
    filters = {"status": django_filters.ChoiceFilter(choices=C2Sample.Status.choices),
               "model": django_filters.CharFilter(field_name="subject_model__display_name"),
               "task": django_filters.CharFilter(field_name="task__external_id")}

    def units(self, run):
        return C2Sample.objects.filter(run=run).select_related("subject_model", "task").prefetch_related("ratings")


class C2RunResultsApi(ApiView):
    """A finished run's stored results (the numbers of the C² leaderboard page); immutable, with an ETag."""

    @extend_schema(operation_id="c2_runs_results_retrieve",
                   parameters=[OpenApiParameter("task_type", str, required=False,
                                                description="Slice the uncertainty to one task type (qa, code, vqa, story, idea, visual_story).")],
                   responses={200: OpenApiResponse(description="The stored results and, per table, Combined creativity's "
                                                               "paired bootstrap (free-form object)."),
                              304: OpenApiResponse(description="Not modified."), **error_responses(404)})
    def get(self, request, pk: int):
        run = get_object_or_404(C2Run, pk=pk)
        if run.status != C2Run.Status.DONE or run.results is None:
            raise Http404(f"C² run {run.pk} has no results yet ({run.status}).")
        updated = run.finished_at.isoformat() if run.finished_at else None
        task_type = request.query_params.get("task_type") or None
        if task_type is not None and task_type not in run.results.get("task_types", []):
            raise serializers.ValidationError({"task_type": ["not a task type of this run"]})
        uncertainty = {"tables": {table: selectors.combined_uncertainty(run, table) for table in run.results["tables"]},
                       "task_type": None}
        if task_type is not None:
            table = next(t for t, types in run.results["tables"].items() if task_type in types)
            uncertainty["task_type"] = selectors.combined_uncertainty(run, table, task_type=task_type)
        # the run's last save, not its finish: results edited by hand are a new ETag
        return not_modified_or(request, f"c2-{run.pk}-{run.updated_at.timestamp()}-{task_type}", {
            "run": run.pk, "updated": updated, "results": run.results, "uncertainty": uncertainty})

"""The catalogue part of ``/api/v1/``: task sets (list, detail, new version, imports, export), subject
models (list, create, update) and the researcher's model profiles and comparisons. The Ekphrasis part
(judge runs, leaderboard snapshots) is :mod:`leaderboard.ekphrasis.api`.

HackSoft style: one view per operation with its own nested input and output serializers; the view
validates and calls a service (writes) or a selector (reads). Refusals are mapped once, in
:func:`leaderboard.api_contract.api_exception_handler`. Researchers read; imports and subject-model
edits are for admins.
"""

from __future__ import annotations

import re

import django_filters
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from leaderboard import selectors
from leaderboard.api_contract import (
    AdminOnly,
    ApiListView,
    ApiView,
    IdentifierField,
    ImportSummaryOutput,
    error_responses,
    import_summary,
    text_download,
)
from leaderboard.models import Benchmark, SubjectModel, TaskSet
from leaderboard.services import api_operations
from leaderboard.services.catalogue import responses_export, responses_import, tasks_export, tasks_import

#: The environment variable a provider key is read from: a shell identifier.
ENV_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


# ---------------------------------------------------------------- task sets


class TaskSetOutput(serializers.ModelSerializer):
    benchmark = serializers.CharField(source="benchmark.kind")
    n_tasks = serializers.SerializerMethodField()

    class Meta:
        model = TaskSet
        fields = ["id", "name", "version", "benchmark", "description", "frozen", "is_demo", "created_at", "n_tasks"]

    def get_n_tasks(self, obj) -> int:
        # Lists read the count the selector annotates (one query for the page, not one per row).
        annotated = getattr(obj, "n_tasks", None)
        return annotated if annotated is not None else obj.tasks.count()


class TaskSetFilter(django_filters.FilterSet):
    benchmark = django_filters.ChoiceFilter(field_name="benchmark__kind", choices=Benchmark.Kind.choices)
    name = django_filters.CharFilter()
    is_demo = django_filters.BooleanFilter()
    frozen = django_filters.BooleanFilter()

    class Meta:
        model = TaskSet
        fields = ["benchmark", "name", "is_demo", "frozen"]


class TaskSetListApi(ApiListView):
    """Every task set of every benchmark, newest first."""

    serializer_class = TaskSetOutput
    filterset_class = TaskSetFilter

    def get_queryset(self):
        return selectors.task_set_list().select_related("benchmark")

    @extend_schema(operation_id="task_sets_list", responses={200: TaskSetOutput(many=True), **error_responses()})
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class TaskSetDetailApi(ApiView):
    class TaskSetDetailOutput(TaskSetOutput):
        normalisation = serializers.SerializerMethodField()

        class Meta(TaskSetOutput.Meta):
            fields = [*TaskSetOutput.Meta.fields, "normalisation"]

        def get_normalisation(self, obj) -> dict[str, int]:
            return selectors.normalisation_counts(task_set=obj)

    @extend_schema(operation_id="task_sets_retrieve", responses={200: TaskSetDetailOutput, **error_responses(404)})
    def get(self, request, pk: int):
        task_set = get_object_or_404(TaskSet.objects.select_related("benchmark"), pk=pk)
        return Response(self.TaskSetDetailOutput(task_set).data)


class TaskSetVersionCreateApi(ApiView):
    """A new, unfrozen version of the task set with a copy of its tasks (admins)."""

    permission_classes = [AdminOnly]

    class TaskSetVersionInput(serializers.Serializer):
        version = serializers.RegexField(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$", max_length=40)
        description = serializers.CharField(required=False, allow_blank=True, max_length=2000)

    @extend_schema(operation_id="task_sets_version_create", request=TaskSetVersionInput,
                   responses={201: TaskSetOutput, **error_responses(404, 409)})
    def post(self, request, pk: int):
        task_set = get_object_or_404(TaskSet, pk=pk)
        data = self.TaskSetVersionInput(data=request.data)
        data.is_valid(raise_exception=True)
        new = api_operations.task_set_version_create(task_set=task_set, **data.validated_data)
        return Response(TaskSetOutput(new).data, status=status.HTTP_201_CREATED)


class TaskImportApi(ApiView):
    """Import tasks (JSONL or CSV) into ``task_set`` at ``version`` — the CLI's import service: every
    record or none, every error as ``file:line: field``."""

    permission_classes = [AdminOnly]
    parser_classes = [MultiPartParser, FormParser]

    class TaskImportInput(serializers.Serializer):
        file = serializers.FileField(allow_empty_file=True)
        task_set = serializers.CharField(max_length=100)
        version = serializers.CharField(max_length=40)
        benchmark = serializers.ChoiceField(choices=Benchmark.Kind.choices, default=Benchmark.Kind.EKPHRASIS)
        description = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)

    @extend_schema(operation_id="task_sets_tasks_import", request={"multipart/form-data": TaskImportInput},
                   responses={200: ImportSummaryOutput, **error_responses()})
    def post(self, request):
        data = self.TaskImportInput(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        task_set, summary = tasks_import(
            name=upload.name, raw=upload.read(), task_set_name=data.validated_data["task_set"],
            version=data.validated_data["version"], benchmark_kind=data.validated_data["benchmark"],
            description=data.validated_data["description"],
        )
        return Response(import_summary(task_set, summary))


class ResponseImportApi(ApiView):
    """Import responses (JSONL or CSV) into the task set — the CLI's import service."""

    permission_classes = [AdminOnly]
    parser_classes = [MultiPartParser, FormParser]

    class ResponseImportInput(serializers.Serializer):
        file = serializers.FileField(allow_empty_file=True)
        create_models = serializers.BooleanField(default=False)

    @extend_schema(operation_id="task_sets_responses_import", request={"multipart/form-data": ResponseImportInput},
                   responses={200: ImportSummaryOutput, **error_responses(404)})
    def post(self, request, pk: int):
        task_set = get_object_or_404(TaskSet, pk=pk)
        data = self.ResponseImportInput(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        summary = responses_import(name=upload.name, raw=upload.read(), task_set=task_set,
                                   create_models=data.validated_data["create_models"])
        return Response(import_summary(task_set, summary))


class TaskSetExportApi(ApiView):
    """The task set's tasks or responses as JSONL or CSV (the same files the page exports)."""

    download_media_types = ("application/x-ndjson", "text/csv")

    class ExportQuery(serializers.Serializer):
        what = serializers.ChoiceField(choices=["tasks", "responses"], default="tasks")
        fmt = serializers.ChoiceField(choices=["jsonl", "csv"], default="jsonl")

    @extend_schema(operation_id="task_sets_export", parameters=[ExportQuery],
                   responses={(200, "application/x-ndjson"): OpenApiTypes.STR, (200, "text/csv"): OpenApiTypes.STR,
                              **error_responses(404)})
    def get(self, request, pk: int):
        task_set = get_object_or_404(TaskSet, pk=pk)
        query = self.ExportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        what, fmt = query.validated_data["what"], query.validated_data["fmt"]
        body = {"tasks": tasks_export, "responses": responses_export}[what](task_set=task_set, fmt=fmt)
        return text_download(body, fmt, f"{task_set.name}-v{task_set.version}-{what}.{fmt}")


# ---------------------------------------------------------------- subject models


class SubjectModelOutput(serializers.ModelSerializer):
    class Meta:
        model = SubjectModel
        fields = ["id", *api_operations.SUBJECT_MODEL_FIELDS, "is_demo", "is_simulated"]


class SubjectModelInput(serializers.Serializer):
    """``api_key_env`` is the NAME of the environment variable holding the key; the key is never sent."""

    display_name = IdentifierField(max_length=100)
    provider_id = serializers.CharField(max_length=200, required=False, allow_blank=True)
    role = serializers.ChoiceField(choices=SubjectModel.Role.choices, required=False)
    family = serializers.CharField(max_length=100, required=False, allow_blank=True)
    base_url = serializers.URLField(max_length=200, required=False, allow_blank=True)
    api_key_env = serializers.RegexField(ENV_VAR_NAME, max_length=100, required=False, allow_blank=True,
                                         error_messages={"invalid": "give the name of an environment variable, not a key"})
    temperature = serializers.FloatField(min_value=0.0, max_value=2.0, required=False, allow_null=True)
    max_tokens = serializers.IntegerField(min_value=1, max_value=1_000_000, required=False)
    reasoning = serializers.BooleanField(required=False, allow_null=True)
    price_input_per_mtok = serializers.FloatField(min_value=0.0, max_value=1e6, required=False)
    price_output_per_mtok = serializers.FloatField(min_value=0.0, max_value=1e6, required=False)
    accepts_images = serializers.BooleanField(required=False)


class SubjectModelFilter(django_filters.FilterSet):
    role = django_filters.ChoiceFilter(choices=SubjectModel.Role.choices)
    family = django_filters.CharFilter()
    is_demo = django_filters.BooleanFilter()

    class Meta:
        model = SubjectModel
        fields = ["role", "family", "is_demo"]


class SubjectModelListApi(ApiListView):
    serializer_class = SubjectModelOutput
    filterset_class = SubjectModelFilter
    queryset = SubjectModel.objects.all()

    @extend_schema(operation_id="subject_models_list", responses={200: SubjectModelOutput(many=True), **error_responses()})
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class SubjectModelCreateApi(ApiView):
    permission_classes = [AdminOnly]

    @extend_schema(operation_id="subject_models_create", request=SubjectModelInput,
                   responses={201: SubjectModelOutput, **error_responses(409)})
    def post(self, request):
        data = SubjectModelInput(data=request.data)
        data.is_valid(raise_exception=True)
        model = api_operations.subject_model_create(**data.validated_data)
        return Response(SubjectModelOutput(model).data, status=status.HTTP_201_CREATED)


class SubjectModelUpdateApi(ApiView):
    permission_classes = [AdminOnly]

    @extend_schema(operation_id="subject_models_partial_update", request=SubjectModelInput(partial=True),
                   responses={200: SubjectModelOutput, **error_responses(404, 409)})
    def patch(self, request, pk: int):
        model = get_object_or_404(SubjectModel, pk=pk)
        data = SubjectModelInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        model = api_operations.subject_model_update(model=model, **data.validated_data)
        return Response(SubjectModelOutput(model).data)


# ---------------------------------------------------------------- the researcher's view: model profiles


def _result_data(result) -> dict:
    from dataclasses import asdict

    data = asdict(result)
    data["date"] = result.date.isoformat() if result.date else None
    data["rank_set"] = list(result.rank_set) if result.rank_set else None
    return data


class ModelResultOutput(serializers.Serializer):
    protocol = serializers.CharField()
    task_set = serializers.CharField()
    board_url = serializers.CharField()
    measure = serializers.CharField()
    value = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    rank = serializers.IntegerField(allow_null=True)
    of = serializers.IntegerField()
    rank_set = serializers.ListField(child=serializers.IntegerField(), allow_null=True)
    n = serializers.CharField()
    date = serializers.CharField(allow_null=True)
    simulated = serializers.BooleanField()
    demo = serializers.BooleanField()
    interval = serializers.CharField()
    breakdown = serializers.ListField(child=serializers.DictField())
    runs = serializers.ListField(child=serializers.DictField())
    digits = serializers.IntegerField()
    key = serializers.CharField()


class ModelProfileOutput(serializers.Serializer):
    model = SubjectModelOutput()
    results = ModelResultOutput(many=True)
    validation = serializers.ListField(child=serializers.DictField())


class ModelProfileApi(ApiView):
    """One subject model on every protocol and task set it was evaluated on (the profile page's numbers):
    score with interval, rank and rank set, breakdown, runs with usage, and human-validation figures."""

    @extend_schema(operation_id="models_profile_retrieve", responses={200: ModelProfileOutput, **error_responses(404)})
    def get(self, request, pk: int):
        from dataclasses import asdict

        from leaderboard import overview

        model = get_object_or_404(SubjectModel, pk=pk, role=SubjectModel.Role.SUBJECT)
        profile = overview.model_profile(model)
        return Response({"model": SubjectModelOutput(model).data,
                         "results": [_result_data(r) for r in profile["results"]],
                         "validation": [asdict(v) for v in profile["validation"]]})


class ModelCompareOutput(serializers.Serializer):
    a = SubjectModelOutput()
    b = SubjectModelOutput()
    shared = serializers.ListField(child=serializers.DictField(), help_text="Boards ranking both: a, b, difference, apart.")
    a_only = ModelResultOutput(many=True)
    b_only = ModelResultOutput(many=True)


class ModelCompareApi(ApiView):
    """Two subject models side by side on every board that ranks both (and the boards only one of them has):
    the model ``id`` against ``?other=``."""

    class CompareQuery(serializers.Serializer):
        other = serializers.IntegerField(min_value=1, max_value=2**63 - 1)

    @extend_schema(operation_id="models_compare_retrieve", parameters=[CompareQuery],
                   responses={200: ModelCompareOutput, **error_responses(404)})
    def get(self, request, pk: int):
        from leaderboard import overview

        query = self.CompareQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        left = get_object_or_404(SubjectModel, pk=pk, role=SubjectModel.Role.SUBJECT)
        right = get_object_or_404(SubjectModel, pk=query.validated_data["other"], role=SubjectModel.Role.SUBJECT)
        pair = overview.model_pair(left, right)
        return Response({
            "a": SubjectModelOutput(left).data, "b": SubjectModelOutput(right).data,
            "shared": [{"a": _result_data(p.left), "b": _result_data(p.right), "difference": p.difference,
                        "apart": p.apart} for p in pair["shared"]],
            "a_only": [_result_data(r) for r in pair["left_only"]],
            "b_only": [_result_data(r) for r in pair["right_only"]],
        })

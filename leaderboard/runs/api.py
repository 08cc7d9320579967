"""Base API views of every resumable job, written once: list (filtered by status, task set and the kind's
own fields), create, detail, resume and cancel. A protocol's views name its model, its serializers and how
it shows a run (``detail``); the rules are the lifecycle's (:mod:`leaderboard.runs.lifecycle`), their
refusals the API's one error shape (409 ``conflict``)."""

from __future__ import annotations

from collections.abc import Callable

import django_filters
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from leaderboard.api_contract import ApiListView, ApiView, IdFilter, error_responses
from leaderboard.runs.lifecycle import run_cancel
from leaderboard.runs.models import RunJob
from leaderboard.runs.starting import run_resume, run_start


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
    """The resume and cancel views of one kind of run, with their schema: ``(ResumeApi, CancelApi)``. The schema
    decorates each view's ``post`` (on the class, drf-spectacular warns that an operation_id breaks the schema)."""
    attrs = {"model": model, "detail": staticmethod(detail)}

    def view(base: type[RunOperationApi], operation: str, answered: int) -> type[RunOperationApi]:
        @extend_schema(operation_id=f"{operation_prefix}_{operation}", request=None,
                       responses={answered: detail_output, **error_responses(404, 409)})
        def post(self, request, pk: int):
            return base.post(self, request, pk)

        return type(f"{model.__name__}{base.__name__.removeprefix('Run')}", (base,),
                    {**attrs, "post": post, "__doc__": base.__doc__})

    return view(RunResumeApi, "resume", 202), view(RunCancelApi, "cancel", 200)


def filterset(model: type, /, **filters: django_filters.Filter) -> type[django_filters.FilterSet]:
    """``<Model>Filter``: a list's ``filters`` on ``model``, in this order."""
    meta = type("Meta", (), {"model": model, "fields": list(filters)})
    return type(f"{model.__name__}Filter", (django_filters.FilterSet,), {**filters, "Meta": meta})


def run_filterset(model: type[RunJob], **filters: django_filters.Filter) -> type[django_filters.FilterSet]:
    """The filters of a run list: ``status``, ``task_set`` and the kind's own ``filters``."""
    return filterset(model, status=django_filters.ChoiceFilter(choices=model.Status.choices),
                     task_set=IdFilter(field_name="task_set_id"), **filters)


def run_read_apis(*, model: type[RunJob], output, detail, detail_output, runs: Callable[[], QuerySet],
                  operation_prefix: str, filters: dict | None = None, detail_runs: QuerySet | None = None):
    """The list and detail views of one kind of run, with their schema: ``(ListApi, DetailApi)``.
    ``runs()`` is the list's queryset (its selector), ``detail_runs`` the one a run is looked up in."""
    lookup = model.objects.all() if detail_runs is None else detail_runs

    def get_queryset(self):
        return runs()

    @extend_schema(operation_id=f"{operation_prefix}_list", responses={200: output(many=True), **error_responses()})
    def get_list(self, request, *args, **kwargs):
        return ApiListView.get(self, request, *args, **kwargs)

    @extend_schema(operation_id=f"{operation_prefix}_retrieve", responses={200: detail_output, **error_responses(404)})
    def get_detail(self, request, pk: int):
        return Response(detail(get_object_or_404(lookup, pk=pk)))

    list_api = type(f"{model.__name__}ListApi", (ApiListView,), {
        "serializer_class": output, "filterset_class": run_filterset(model, **(filters or {})),
        "get_queryset": get_queryset, "get": get_list})
    detail_api = type(f"{model.__name__}DetailApi", (ApiView,), {"get": get_detail})
    return list_api, detail_api


class RunCreateApi(ApiView):
    """Create and queue a run: validate ``Input``, create the run (:meth:`create`, the kind's service with
    its checks), start it (the lifecycle's one start policy) and answer 201 with its ``detail``."""

    Input: type[serializers.Serializer]
    operation_id: str
    detail_output: type[serializers.Serializer]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)

        @extend_schema(operation_id=cls.operation_id, request=cls.Input,
                       responses={201: cls.detail_output, **error_responses(404)})
        def post(self, request):
            return RunCreateApi.post(self, request)

        cls.post = post

    def create(self, values: dict, *, created_by) -> RunJob:  # pragma: no cover - each protocol's view creates
        raise NotImplementedError

    def detail(self, run: RunJob) -> dict:  # pragma: no cover - each protocol's view says how it shows a run
        raise NotImplementedError

    def post(self, request):
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        run = self.create(dict(data.validated_data), created_by=request.user)
        run_start(run)
        return Response(self.detail(run), status=status.HTTP_201_CREATED)


class RunUnitListApi(ApiListView):
    # The units of one run (its comparisons, episodes, samples), paginated: 404 for an unknown run. A
    # protocol's view names run_model/unit_model and selects units(run). (No docstring: the API's schema
    # shows a view's docstring, and these views keep the list description they had.)

    run_model: type[RunJob]
    unit_model: type
    operation_id: str
    filters: dict[str, django_filters.Filter] = {}  #: the list's query filters on the unit model

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.filterset_class = filterset(cls.unit_model, **cls.filters) if cls.filters else None

        @extend_schema(operation_id=cls.operation_id,
                       responses={200: cls.serializer_class(many=True), **error_responses(404)})
        def get(self, request, *args, **kwargs):
            return ApiListView.get(self, request, *args, **kwargs)

        cls.get = get

    def units(self, run: RunJob) -> QuerySet:  # pragma: no cover - each protocol's view selects its units
        raise NotImplementedError

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no pk
            return self.unit_model.objects.none()
        return self.units(get_object_or_404(self.run_model.objects.only("pk"), pk=self.kwargs["pk"]))

"""Catalogue pages. Views validate and delegate: reads through selectors,
writes through services; access through the gatekeepers in ``roles``."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render

from leaderboard import selectors
from leaderboard.models import TaskSet
from leaderboard.roles import require_researcher
from leaderboard.services import responses_export, tasks_export


def home(request):
    return render(request, "home.html", {"has_demo": selectors.demo_data_present()})


def task_set_list(request):
    require_researcher(request.user)
    return render(request, "leaderboard/task_set_list.html", {"task_sets": selectors.task_set_list()})


def task_set_detail(request, pk: int):
    require_researcher(request.user)
    task_set = get_object_or_404(TaskSet.objects.select_related("benchmark"), pk=pk)
    return render(
        request,
        "leaderboard/task_set_detail.html",
        {"task_set": task_set, "tasks": selectors.task_rows(task_set=task_set),
         "normalisation": selectors.normalisation_counts(task_set=task_set)},
    )


def task_set_export(request, pk: int, what: str, fmt: str):
    require_researcher(request.user)
    task_set = get_object_or_404(TaskSet, pk=pk)
    export = {"tasks": tasks_export, "responses": responses_export}[what]
    body = export(task_set=task_set, fmt=fmt)
    content_type = "text/csv" if fmt == "csv" else "application/x-ndjson"
    response = HttpResponse(body, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{task_set.name}-v{task_set.version}-{what}.{fmt}"'
    return response


def leaderboard_list(request):
    require_researcher(request.user)
    return render(request, "leaderboard/leaderboard_list.html", {"snapshots": []})

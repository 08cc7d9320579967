"""Reads from the catalogue."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from leaderboard.models import Response, TaskSet


def task_set_get(*, name: str, version: str | None = None) -> TaskSet:
    """The named task set at ``version``, or its most recently created version."""
    sets = TaskSet.objects.filter(name=name).select_related("benchmark")
    if version is not None:
        sets = sets.filter(version=version)
    task_set = sets.order_by("-created_at", "-pk").first()
    if task_set is None:
        raise TaskSet.DoesNotExist(f"no task set named {name!r}" + (f" at version {version!r}" if version else ""))
    return task_set


def task_set_list() -> QuerySet[TaskSet]:
    return TaskSet.objects.select_related("benchmark").annotate(
        n_tasks=Count("tasks", distinct=True)
    ).order_by("benchmark__kind", "name", "version")


def responses_needing_llm_split(*, task_set: TaskSet) -> QuerySet[Response]:
    return Response.objects.filter(task__task_set=task_set, normalisation_method=Response.Normalisation.PENDING)


def demo_data_present() -> bool:
    return TaskSet.objects.filter(is_demo=True).exists()


def task_rows(*, task_set: TaskSet):
    return task_set.tasks.annotate(n_responses=Count("responses")).order_by("position", "external_id")


def normalisation_counts(*, task_set: TaskSet) -> dict[str, int]:
    rows = (
        Response.objects.filter(task__task_set=task_set)
        .values_list("normalisation_method")
        .annotate(n=Count("id"))
    )
    return {method: n for method, n in rows}

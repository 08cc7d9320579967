"""Reads of the shared catalogue: task sets, tasks, responses and renders. Ekphrasis's reads (judge
runs, snapshots, judge outcomes, TIG, launch gates) are :mod:`leaderboard.ekphrasis.selectors`."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from leaderboard.models import CatalogueRevision, Render, Response, SubjectModel, TaskSet


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


# ---------------------------------------------------------------- the catalogue's names


#: First segments of a two-segment provider id that are API path words, not a model's maker ("models/x").
_NOT_MAKERS = frozenset({"model", "models"})


def catalogue_identity_strings() -> list[str]:
    """Every model's identity strings (any role): display name, provider id, the provider id's last path
    segment ("org/name" -> "name"), its maker (the "org" of an "org/name" id, as OpenRouter, Hugging Face
    and Together write them: "openai/gpt-4o" -> "openai", so "As an AI developed by OpenAI" names it) and
    family. What blinding checks shown text against (:func:`annotation.blinding.catalogue_identities`) and
    what the catalogue revision is a digest of."""
    strings = []
    for display_name, provider_id, family in SubjectModel.objects.values_list("display_name", "provider_id", "family"):
        strings += [display_name, provider_id, provider_id.rsplit("/", 1)[-1], family]
        maker, slash, rest = provider_id.partition("/")
        if slash and "/" not in rest and maker.strip().lower() not in _NOT_MAKERS:
            strings.append(maker)
    return strings


def catalogue_revision() -> int:
    """The catalogue's revision number (:class:`~leaderboard.models.CatalogueRevision`; 0 when it has no row)."""
    return CatalogueRevision.objects.filter(pk=1).values_list("number", flat=True).first() or 0


# ---------------------------------------------------------------- renders (App. I.1)


def task_set_renders(*, task_set: TaskSet, renderer: str | None = None) -> QuerySet[Render]:
    """Every render of the set's responses (optionally one renderer's), with task and model, in task order."""
    renders = Render.objects.filter(response__task__task_set=task_set)
    if renderer is not None:
        renders = renders.filter(renderer=renderer)
    return renders.select_related("response__task", "response__subject_model").order_by(
        "response__task__position", "response__task__external_id", "response__subject_model__display_name",
        "response__sample", "renderer", "seed",
    )


def task_set_renderers(*, task_set: TaskSet) -> list[tuple[str, int]]:
    """(renderer, number of renders) of the set, by name."""
    rows = (
        Render.objects.filter(response__task__task_set=task_set)
        .values_list("renderer").annotate(n=Count("id")).order_by("renderer")
    )
    return list(rows)


def task_set_render_get(*, task_set: TaskSet, pk: int) -> Render | None:
    """One render of the set, or None."""
    return Render.objects.filter(pk=pk, response__task__task_set=task_set).first()


def length_diagnostics(*, task_set: TaskSet) -> dict[str, list[tuple[str, list[int]]]]:
    """Core Idea and Visual Description word counts per model × family (Ekphrasis App. C.4)."""
    from engine.visual_plan import word_count

    groups: dict[str, dict[str, list[int]]] = {"core_idea": {}, "visual_description": {}}
    rows = (
        Response.objects.filter(task__task_set=task_set)
        .exclude(normalisation_method=Response.Normalisation.PENDING)
        .values_list("subject_model__display_name", "task__family", "core_idea", "visual_description")
        .order_by("subject_model__display_name", "task__family")
    )
    for model, family, core, visual in rows:
        key = f"{model} · {family}"
        groups["core_idea"].setdefault(key, []).append(word_count(core))
        groups["visual_description"].setdefault(key, []).append(word_count(visual))
    return {field: list(values.items()) for field, values in groups.items()}

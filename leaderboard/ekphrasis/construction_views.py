"""Task-set construction pages (Ekphrasis Algorithm 1, Table 5) and the launch-gate override.
Views validate and delegate: reads through selectors, writes through services."""

from __future__ import annotations

from django.contrib import messages
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from engine.task_construction.grid import TABLE5_GRID
from leaderboard.ekphrasis import construction_diagnostics as diagnostics
from leaderboard.ekphrasis import launch_gates, selectors
from leaderboard.ekphrasis import task_construction as construction
from leaderboard.ekphrasis.models import JudgeRun, RejectedCandidate, SourcePool, TaskSetBuild
from leaderboard.forms import ReasonForm, SourcePoolImportForm, TaskSetBuildForm, form_problems
from leaderboard.import_contract import ImportFailed
from leaderboard.roles import is_admin, require_admin, require_researcher


def _build_form(data=None):
    return TaskSetBuildForm(data, pools=SourcePool.objects.order_by("name"), screens=construction.screen_choices(),
                            grid=TABLE5_GRID)


def task_set_build_new(request):
    """Task sets → Build a task set (admins)."""
    require_admin(request.user)
    construction.demo_source_pool_ensure()
    form = _build_form(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            build = construction.task_set_build_create(
                name=form.cleaned_data["name"], version=form.cleaned_data["version"],
                pools=list(form.cleaned_data["pools"]), grid=form.chosen_grid(), seed=form.cleaned_data["seed"],
                screen=form.cleaned_data["screen"], created_by=request.user)
        except construction.BuildConfigurationError as exc:
            messages.error(request, f"Build not started: {exc}")
        else:
            construction.task_set_build_start(build=build, background=True)
            return redirect("task_set_build_detail", pk=build.pk)
    return render(request, "leaderboard/task_set_build_new.html", {
        "form": form, "pool_form": SourcePoolImportForm(), "pools": SourcePool.objects.order_by("name"),
        "builds": selectors.task_set_builds()[:20], "grid_total": TABLE5_GRID.total,
    })


@require_POST
def source_pool_import(request):
    require_admin(request.user)
    form = SourcePoolImportForm(request.POST, request.FILES)
    if not form.is_valid():
        messages.error(request, f"Pool not imported: {form_problems(form)}")
        return redirect("task_set_build_new")
    upload = form.cleaned_data["file"]
    try:
        pool, summary = construction.source_pool_import(name=form.cleaned_data["name"], raw=upload.read(),
                                                        file_name=upload.name)
    except ImportFailed as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Pool {pool.name}: {summary}")
    return redirect("task_set_build_new")


def task_set_build_detail(request, pk: int):
    """A build's live progress, then its diagnostics (Figures 6–8, quotas) and rejected candidates."""
    require_researcher(request.user)
    build = get_object_or_404(TaskSetBuild.objects.select_related("task_set"), pk=pk)
    record = build.record or {}
    return render(request, "leaderboard/task_set_build_detail.html", {
        "build": build, "progress": selectors.task_set_build_progress(build=build), "record": record,
        "pools": build.pools.order_by("name"),
        "abstraction_charts": diagnostics.abstraction_charts(record) if record else [],
        "combination_chart": diagnostics.combination_chart(record) if record else "",
        "transformation_chart": diagnostics.transformation_chart(record) if record else "",
        "quota_chart": diagnostics.quota_chart(record) if record else "",
        "short_cells": diagnostics.short_cells(record) if record else [],
        "band_edges": diagnostics.band_edges(record) if record else [],
        "rejected": build.rejected.select_related("override_task_set", "overridden_by"),
        "can_override": is_admin(request.user), "reason_form": ReasonForm(),
    })


def task_set_build_status(request, pk: int):
    require_researcher(request.user)
    build = get_object_or_404(TaskSetBuild, pk=pk)
    return JsonResponse(selectors.task_set_build_progress(build=build))


@require_POST
def rejected_candidate_override(request, pk: int, candidate_pk: int):
    require_admin(request.user)
    candidate = get_object_or_404(RejectedCandidate, pk=candidate_pk, build_id=pk)
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Not overridden: {form_problems(form)}")
        return redirect("task_set_build_detail", pk=pk)
    try:
        task_set = construction.rejected_candidate_override(candidate=candidate, reason=form.cleaned_data["reason"],
                                                            by=request.user)
    except construction.BuildConfigurationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{candidate.external_id} kept: new frozen version {task_set}.")
    return redirect("task_set_build_detail", pk=pk)


@require_POST
def launch_gates_override(request, pk: int):
    """An admin records why human validation may start from a run whose launch gates failed."""
    require_admin(request.user)
    run = get_object_or_404(JudgeRun, pk=pk)
    form = ReasonForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Not overridden: {form_problems(form)}")
    else:
        launch_gates.launch_gates_override(run=run, reason=form.cleaned_data["reason"], by=request.user)
        messages.success(request, "Override recorded: human validation may start from this run.")
    return redirect("judge_run_detail", pk=pk)

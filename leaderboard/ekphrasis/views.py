"""Ekphrasis pages: leaderboards and snapshots (detail, export, compare, task drill-down), judge runs
(new, detail, status, resume) and TIG builds and the TIG viewer. Views validate and delegate: reads
through selectors, writes through services; access through the gatekeepers in ``roles``."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import BadRequest
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from engine.active_sampling import DEFAULT_RULE
from engine.leaderboard_exports import DIMENSION_NAMES, model_rows, z_available
from evalsite.middleware import form_page
from evalsite.request_checks import id_of
from leaderboard import charts
from leaderboard.api_contract import text_download
from leaderboard.ekphrasis import judge_runs, results, selectors, tig, uncertainty
from leaderboard.ekphrasis.models import JudgeRun, LeaderboardSnapshot, TIGBuild
from leaderboard.forms import (
    DrilldownFilterForm,
    JudgeRunForm,
    SnapshotCompareForm,
    TIGBuildForm,
    compare_query_error,
    form_problems,
)
from leaderboard.models import Benchmark, Task, TaskSet
from leaderboard.providers import judge_choices
from leaderboard.roles import is_admin, require_researcher
from leaderboard.runs.starting import run_resume_from_page
from leaderboard.runs.views import run_form_typed, run_new_from_page, run_status_view


def leaderboard_list(request):
    require_researcher(request.user)
    return render(
        request,
        "leaderboard/leaderboard_list.html",
        {"snapshots": selectors.snapshot_list(), "runs": selectors.judge_run_list()[:50],
         "arena": results.arena_rows(selectors.latest_snapshots_per_task_set()),
         # a judge run takes an Ekphrasis task set: the form offers (and preselects) no other kind's
         "task_sets": TaskSet.objects.filter(benchmark__kind=Benchmark.Kind.EKPHRASIS).order_by("name", "version"),
         "judges": judge_choices(),
         "tig_choices": selectors.tig_component_choices(),
         # what a refused Start held, shown again (the form is written in the template)
         "typed": run_form_typed(request, JudgeRunForm)},
    )


def snapshot_detail(request, pk: int):
    require_researcher(request.user)
    snapshot = get_object_or_404(LeaderboardSnapshot.objects.select_related("run__task_set"), pk=pk)
    payload = snapshot.payload
    slice_kind, slice_value = _slice_param(request)
    choices = uncertainty.slice_choices(snapshot)
    if slice_kind is not None and slice_value not in choices[slice_kind]:
        raise Http404(f"This task set has no {slice_kind} {slice_value!r}.")
    chosen = uncertainty.slice_board(snapshot, slice_kind, slice_value) if slice_kind else None
    context = {
        "snapshot": snapshot,
        "run": snapshot.run,
        "payload": payload,
        "dimensions": [(d, DIMENSION_NAMES[d]) for d in payload["dimensions"]],
        "rows": model_rows(payload),
        "table": results.table_rows(payload, uncertainty.overall_tiers(snapshot)),
        "slice_choices": choices, "slice_kind": slice_kind, "slice_value": slice_value, "slice": chosen,
        "slice_rows": results.slice_rows(chosen) if chosen else [],
        "z_available": z_available(payload),
        "pairwise_charts": results.pairwise_matrices(payload),
        "overall_chart": results.overall_interval_chart(payload),
        "dimension_charts": results.dimension_interval_charts(payload),
        "rank_heat_map": results.rank_heat_map(payload),
        "tradeoff_chart": results.tradeoff_chart(payload),
        "family_rows": results.family_rows(payload, uncertainty.family_intervals(snapshot)),
        "ordered_models": [payload["models"][m] for m in payload["order"]],
        "reliability_rows": results.reliability_rows(payload),
        "budget_rows": results.budget_rows(payload),
        "tasks": snapshot.run.task_set.tasks.order_by("position", "external_id"),
        "other_snapshots": selectors.snapshot_list().exclude(pk=snapshot.pk)[:20],
        "gates": selectors.judge_run_launch_gates(run=snapshot.run),
        "can_override": False,  # overrides are recorded on the run's page
    }
    return render(request, "leaderboard/snapshot_detail.html", context)


def _slice_param(request) -> tuple[str | None, str | None]:
    """``?slice=family:<name>`` or ``?slice=subtype:<name>`` → (kind, value); (None, None) without one."""
    raw = request.GET.get("slice") or ""
    if not raw:
        return None, None
    kind, _, value = raw.partition(":")
    if kind not in uncertainty.SLICE_KINDS or not value:
        raise BadRequest("slice must be family:<name> or subtype:<name>")
    return kind, value


def snapshot_export(request, pk: int, fmt: str):
    require_researcher(request.user)
    snapshot = get_object_or_404(LeaderboardSnapshot, pk=pk)
    body = {"csv": results.export_csv, "json": results.export_json, "tex": results.export_latex}[fmt]
    return text_download(body(snapshot), fmt, f"leaderboard-{snapshot.pk}.{fmt}")


def snapshot_compare(request):
    """Two snapshots side by side (``?a=&b=``). The bare address, typed or bookmarked, goes to the picker on
    the leaderboard list, as EASEL's and C²'s bare compare addresses are their pickers; one id missing or
    malformed is a 400 saying which."""
    require_researcher(request.user)
    if "a" not in request.GET and "b" not in request.GET:
        return redirect(reverse("leaderboard_list") + "#compare")
    form = SnapshotCompareForm(request.GET)
    if not form.is_valid():
        raise compare_query_error(form, what="snapshot", where="under All snapshots on the Leaderboards page")
    left = get_object_or_404(LeaderboardSnapshot.objects.select_related("run__task_set"), pk=form.cleaned_data["a"])
    right = get_object_or_404(LeaderboardSnapshot.objects.select_related("run__task_set"), pk=form.cleaned_data["b"])
    differences = results.snapshot_differences(left, right)
    return render(request, "leaderboard/snapshot_compare.html", {
        "left": left, "right": right, "pair": (left, right),
        "left_label": f"#{left.pk}", "right_label": f"#{right.pk}",
        "left_url": reverse("snapshot_detail", args=[left.pk]), "right_url": reverse("snapshot_detail", args=[right.pk]),
        "rows": results.comparison_rows(left.payload, right.payload),
        "differences": differences, "n_differences": sum(d["differs"] for d in differences),
        "chart": results.comparison_chart(left, right),
    })


DRILLDOWN_PAGE_SIZE = 20


def task_drilldown(request, pk: int, task_pk: int):
    """One task of a snapshot: a per-dimension summary, each response once, and its comparisons
    filtered (dimension, kind, pair, judge) and paginated."""
    require_researcher(request.user)
    snapshot = get_object_or_404(LeaderboardSnapshot.objects.select_related("run"), pk=pk)
    task = get_object_or_404(Task, pk=task_pk, task_set=snapshot.run.task_set)
    form = DrilldownFilterForm(request.GET)
    if not form.is_valid():
        raise BadRequest(f"Bad drill-down filter: {form_problems(form)}")
    filters = form.cleaned_data
    comparisons = selectors.task_comparisons(run=snapshot.run, task=task)
    responses = {}
    pairs = {}
    for c in comparisons:
        for shown in (c.shown_a, c.shown_b):
            responses.setdefault(shown.pk, shown)
        pairs.setdefault(f"{c.model_x_id}-{c.model_y_id}", f"{c.model_x.display_name} – {c.model_y.display_name}")
    judges = sorted({c.judge_name for c in comparisons})
    if filters["dimension"]:
        comparisons = comparisons.filter(dimension=filters["dimension"])
    if filters["kind"]:
        comparisons = comparisons.filter(kind=filters["kind"])
    if filters["pair"]:
        x, y = (int(v) for v in filters["pair"].split("-"))
        comparisons = comparisons.filter(model_x_id=min(x, y), model_y_id=max(x, y))
    if filters["judge"]:
        comparisons = comparisons.filter(judge_name=filters["judge"])
    paginator = Paginator(comparisons, DRILLDOWN_PAGE_SIZE)
    page = paginator.get_page(filters["page"] or 1)
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "leaderboard/task_drilldown.html", {
        "snapshot": snapshot, "task": task, "form": form, "page": page, "query": query.urlencode(),
        "summary": [(DIMENSION_NAMES[d], s) for d, s in selectors.task_drilldown_summary(run=snapshot.run, task=task).items()],
        "responses": sorted(responses.values(), key=lambda r: r.subject_model.display_name),
        "pairs": sorted(pairs.items(), key=lambda kv: kv[1]), "judges": judges,
        "constraints": constraint_lines(task.constraints),
    })


def constraint_lines(constraints) -> list[tuple[str, str]]:
    """A task's constraints as (label, text) lines: lists joined by commas, nested values flattened."""
    if not constraints:
        return []
    if not isinstance(constraints, dict):
        return [("", ", ".join(map(str, constraints)) if isinstance(constraints, list) else str(constraints))]
    lines = []
    for key, value in constraints.items():
        if isinstance(value, list):
            text = ", ".join(str(v) for v in value)
        elif isinstance(value, dict):
            text = "; ".join(f"{k}: {v}" for k, v in value.items())
        else:
            text = str(value)
        lines.append((str(key).replace("_", " ").capitalize(), text))
    return lines


def judge_run_detail(request, pk: int):
    require_researcher(request.user)
    run = get_object_or_404(JudgeRun.objects.select_related("task_set"), pk=pk)
    # link templates for static/js/run_status.js: {id} is the snapshot, {row} the task
    page_data = {"snapshot_href": reverse("snapshot_detail", args=[0]).replace("/0/", "/{id}/"),
                 "drilldown_href": reverse("task_drilldown", args=[0, 0]).replace("/0/tasks/0/", "/{id}/tasks/{row}/")}
    return render(request, "leaderboard/judge_run_detail.html",
                  {"run": run, "progress": selectors.judge_run_progress(run=run), "page_data": page_data,
                   "gates": selectors.judge_run_launch_gates(run=run), "can_override": is_admin(request.user),
                   "injection": selectors.judge_run_flagged_responses(run=run),
                   # the active pair-selection rule the run used: its own, else the engine's default
                   "pair_rule": run.config.get("rule") or DEFAULT_RULE})


judge_run_status = run_status_view(JudgeRun, selectors.judge_run_progress)


@form_page("leaderboard_list")
@require_POST
def judge_run_new(request):
    require_researcher(request.user)
    extractors, embedders = selectors.tig_component_choices()
    form = JudgeRunForm(request.POST, judges=judge_choices(), extractors=extractors, embedders=embedders)
    return run_new_from_page(request, form, create=judge_runs.judge_run_create, back="leaderboard_list",
                             detail="judge_run_detail")


def tig_viewer(request, pk: int, task_pk: int):
    """The TIG of one task: researchers only (model names appear here; annotators never reach it)."""
    require_researcher(request.user)
    task = get_object_or_404(Task.objects.select_related("task_set__benchmark"), pk=task_pk, task_set_id=pk)
    if task.task_set.benchmark.kind != Benchmark.Kind.EKPHRASIS:  # an EASEL or C² task has no responses to graph
        raise Http404(f"Idea graphs are built for Ekphrasis task sets only; {task.task_set} is a "
                      f"{task.task_set.benchmark.name} task set.")
    pair = None
    models = selectors.subject_models_of(task.task_set)
    if request.GET.get("pair"):
        try:
            x, y = (int(v) for v in request.GET["pair"].split(","))
            pair = (x, y)
        except ValueError:
            messages.error(request, "pair must be two model ids separated by a comma")
        # a pair of unknown models would leave nobody out: the whole population shown as that pair's context
        if pair is not None and (x == y or not {x, y} <= {m.pk for m in models}):
            messages.error(request, f"pair {x},{y} is not two different subject models of this task set; "
                                    f"showing the whole population")
            pair = None
    build_id = request.GET.get("build")
    build = selectors.tig_viewer_build(task_set=task.task_set, build_id=id_of(build_id))
    if build_id and build is None:
        messages.error(request, f"no finished TIG build {build_id} of this task set; showing the offline components")
    data = selectors.tig_viewer(task=task, pair=pair, build=build)
    context = {
        "task": task,
        "data": data,
        "pair": pair,
        "build": build,
        "builds": selectors.tig_builds_of(task_set=task.task_set, done=True),
        "graph": charts.graph_plot(data["nodes"], data["edges"], title=f"Typed Idea Graph of {task.external_id}"),
        "models": models,
        "tasks": task.task_set.tasks.order_by("position", "external_id"),
    }
    return render(request, "leaderboard/tig_viewer.html", context)


@require_POST
def tig_build_new(request, pk: int):
    require_researcher(request.user)
    task_set = get_object_or_404(TaskSet, pk=pk)
    extractors, embedders = selectors.tig_component_choices()
    form = TIGBuildForm(request.POST, extractors=extractors, embedders=embedders)
    if not form.is_valid():
        messages.error(request, f"TIG build not started: {form_problems(form)}")
        return redirect("task_set_detail", pk=pk)
    try:
        build = tig.tig_build_create(task_set=task_set, created_by=request.user, **form.cleaned_data)
    except tig.TIGConfigurationError as exc:
        messages.error(request, f"TIG build not started: {exc}")
        return redirect("task_set_detail", pk=pk)
    tig.tig_build_start(build=build, background=True)
    return redirect("tig_build_detail", pk=pk, build_pk=build.pk)


def tig_build_detail(request, pk: int, build_pk: int):
    require_researcher(request.user)
    build = get_object_or_404(TIGBuild.objects.select_related("task_set"), pk=build_pk, task_set_id=pk)
    progress = selectors.tig_build_progress(build=build)
    return render(request, "leaderboard/tig_build_detail.html",
                  {"build": build, "progress": progress,
                   "first_task": build.task_set.tasks.order_by("position", "external_id").first()})


@require_POST
def tig_build_resume(request, pk: int, build_pk: int):
    """Queue a failed build again; it resumes from the stored extractions and embeddings."""
    require_researcher(request.user)
    run_resume_from_page(request, get_object_or_404(TIGBuild, pk=build_pk, task_set_id=pk))
    return redirect("tig_build_detail", pk=pk, build_pk=build_pk)


def tig_build_status(request, pk: int, build_pk: int):
    require_researcher(request.user)
    build = get_object_or_404(TIGBuild, pk=build_pk, task_set_id=pk)
    return JsonResponse(selectors.tig_build_progress(build=build))

"""C² pages (researchers only). Views validate and delegate: reads through :mod:`leaderboard.c2.selectors`,
writes through :mod:`leaderboard.c2.services`; access through the gatekeepers in :mod:`leaderboard.roles`.
A bad id or query string is a 404 or 400, never a 500."""

from __future__ import annotations

from django.core.exceptions import BadRequest
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST

from engine.c2.exports import TABLE_TITLES, TASK_TYPE_LABELS, leaderboard_tables
from evalsite.request_checks import id_of
from leaderboard import charts
from leaderboard.api_contract import text_download
from leaderboard.c2 import exports, selectors
from leaderboard.c2.forms import C2RunForm
from leaderboard.c2.models import C2Run, C2TaskImage
from leaderboard.c2.services import runs
from leaderboard.comparisons import board_headline, side_by_side
from leaderboard.forms import compare_pair_from_query
from leaderboard.models import Task
from leaderboard.roles import require_researcher
from leaderboard.runs.views import run_form_typed, run_new_from_page, run_resume_view, run_status_view

TABLE_TITLES_SHORT = {"text": "text tasks", "vision": "multimodal tasks"}


def _run_id_param(request) -> tuple[int | None, bool]:
    """(run id or None, valid) from ``?run=``."""
    raw = request.GET.get("run")
    if raw in (None, ""):
        return None, True
    run_id = id_of(raw)
    return run_id, run_id is not None


def leaderboard(request):
    require_researcher(request.user)
    run_id, valid = _run_id_param(request)
    if not valid:
        raise BadRequest("run must be a C² run id, a whole number as in ?run=2")  # the site's 400 page, not bare text
    run = selectors.leaderboard_run(run_id=run_id)
    if run_id is not None and run is None:
        raise Http404("No finished C² run with that id.")
    context = {
        "run": run, "runs": selectors.c2_run_list()[:30],
        "form": C2RunForm(raters=selectors.rater_choices(), initial=run_form_typed(request, C2RunForm)),
        "subjects": selectors.subject_choices(),
    }
    if run is not None:
        results = run.results
        partner = selectors.ablation_partner(run)
        ablation = selectors.ablation_rows(run, partner) if partner is not None else []
        task_type = request.GET.get("task_type") or None
        if task_type is not None and task_type not in results["task_types"]:
            raise Http404("This run has no such task type.")
        tables = leaderboard_tables(results)
        uncertainty = {t.key: selectors.combined_uncertainty(run, t.key) for t in tables}
        for table in tables:
            selectors.combined_intervals_apply(table, uncertainty[table.key])
        slice_table = next((k for k, types in results["tables"].items() if task_type in types), None)
        context.update(
            results=results,
            tables=tables,
            uncertainty=[(t, uncertainty[t.key]) for t in tables if uncertainty[t.key]],
            headline=board_headline(next((u for u in uncertainty.values() if u), None)),
            headline_note=next((f"Combined creativity, {TABLE_TITLES_SHORT[k]}" for k, u in uncertainty.items() if u), ""),
            task_type=task_type, task_types=[(t, TASK_TYPE_LABELS.get(t, t)) for t in results["task_types"]],
            type_slice=selectors.combined_uncertainty(run, slice_table, task_type=task_type) if slice_table else None,
            radars=[
                (f"{'Text' if table == 'text' else 'Vision'} tasks", charts.radar_chart(
                    selectors.radar_axis_labels(), selectors.radar_series(results, table),
                    title=f"Figure 4 shape ({table} tasks): U, O, S, creativity by regime",
                    axis_note="scores / 100, from 0 (centre) to 1 (rim)",
                ))
                for table, types in results["tables"].items() if types
            ],
            partner=partner,
            ablation_charts=[
                charts.interval_plot(
                    [charts.Interval(r.model, r.difference, r.low, r.high) for r in ablation if r.regime == regime],
                    title=f"Figure 5 shape ({regime}): creative − standard creativity", reference=0.0,
                    axis_label=f"{regime} creativity, creative − standard (95% paired bootstrap over prompts)",
                    fmt="{:+.1f}",
                )
                for regime in ("convergent", "divergent") if any(r.regime == regime for r in ablation)
            ],
            ablation=ablation,
            prompts=selectors.run_prompts(run),
        )
    return render(request, "leaderboard/c2/leaderboard.html", context)


def run_detail(request, pk: int):
    require_researcher(request.user)
    run = selectors.c2_run_get(pk)
    if run is None:
        raise Http404("No such C² run.")
    return render(request, "leaderboard/c2/run_detail.html",
                  {"run": run, "progress": selectors.c2_run_progress(run=run)})


run_status = run_status_view(C2Run, selectors.c2_run_progress)


@require_POST
def run_new(request):
    require_researcher(request.user)
    form = C2RunForm(request.POST, raters=selectors.rater_choices())
    return run_new_from_page(request, form, create=runs.c2_run_create, back="c2:leaderboard", detail="c2:run_detail")


run_resume = run_resume_view(C2Run, "c2:run_detail", "Queue a failed run again; it resumes from its planned rows.")


def prompt_detail(request, pk: int, task_pk: int):
    require_researcher(request.user)
    run = selectors.c2_run_get(pk)
    if run is None:
        raise Http404("No such C² run.")
    task = get_object_or_404(Task, pk=task_pk, task_set=run.task_set)
    return render(request, "leaderboard/c2/prompt_detail.html", {
        "run": run, "task": task, "image": C2TaskImage.objects.filter(task=task).only("pk", "task_id").first(),
        "models": selectors.prompt_drilldown(run, task), "prompts": selectors.run_prompts(run),
    })


def task_image(request, task_pk: int):
    require_researcher(request.user)
    image = get_object_or_404(C2TaskImage, task_id=task_pk)
    response = HttpResponse(bytes(image.data), content_type=image.content_type)
    response["Cache-Control"] = "private, max-age=3600"
    return response


def run_export(request, pk: int, fmt: str):
    require_researcher(request.user)
    run = get_object_or_404(C2Run, pk=pk, status=C2Run.Status.DONE, results__isnull=False)
    body = {"csv": exports.export_csv, "json": exports.export_json, "tex": exports.export_latex}[fmt]
    marker = "-simulated" if run.is_simulated else ""
    marker += "-demo" if run.task_set.is_demo else ""
    return text_download(body(run), fmt, f"c2-run-{run.pk}{marker}.{fmt}")


def compare(request):
    """Two finished C² runs side by side (``?a=&b=`` run ids; without them, the choice of runs): per table,
    each model's Combined creativity with its 95% paired bootstrap interval and rank, the rank change, and
    what differs in the runs' configuration."""
    require_researcher(request.user)
    context = {"choices": selectors.compare_choices()[:100]}
    pair = compare_pair_from_query(request.GET, selectors.compare_choices())
    if pair is not None:
        left, right = pair

        def side(run, table):
            c = selectors.combined_uncertainty(run, table)
            return {a["name"]: (a["value"], a["low"], a["high"], a["rank"]) for a in c["agents"]} if c else {}

        tables = [(key, TABLE_TITLES[key], side_by_side(side(left, key), side(right, key)))
                  for key in ("text", "vision") if left.results["tables"].get(key) or right.results["tables"].get(key)]
        differences = selectors.run_differences(left, right)
        context.update(left=left, right=right, tables=tables, differences=differences,
                       left_label=f"#{left.pk} ({left.template})", right_label=f"#{right.pk} ({right.template})",
                       n_differences=sum(d["differs"] for d in differences))
    return render(request, "leaderboard/c2/compare.html", context)

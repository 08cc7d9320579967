"""EASEL pages (researchers only). Views validate and delegate: reads through ``selectors``, writes
through ``services``, access through the one gatekeeper ``require_researcher``."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from engine.easel import exports
from engine.easel.leaderboard import CATEGORIES
from leaderboard.api_contract import text_download
from leaderboard.comparisons import board_headline
from leaderboard.easel import results, selectors, services
from leaderboard.easel.agents import agent_choices
from leaderboard.easel.forms import EaselRunForm
from leaderboard.easel.models import EaselEpisode, EaselRun
from leaderboard.forms import compare_pair_from_query
from leaderboard.providers import code_version
from leaderboard.roles import require_researcher
from leaderboard.runs.views import run_form_typed, run_new_from_page, run_resume_view, run_status_view


def _task_set_or_404(request):
    """The suite ``?task_set=ID`` names (404 for a malformed or unknown id), or the newest one."""
    wanted = request.GET.get("task_set") or None
    task_set = selectors.easel_task_set_get(wanted)
    if task_set is None and wanted is not None:
        raise Http404("No such EASEL task set.")
    return task_set


def _category_or_404(request) -> str | None:
    """The ``?category=`` slice (None: all references); 404 for a category EASEL does not have."""
    category = request.GET.get("category") or None
    if category is not None and category not in dict(CATEGORIES):
        raise Http404("No such EASEL category.")
    return category


def leaderboard(request):
    require_researcher(request.user)
    task_set = _task_set_or_404(request)
    category = _category_or_404(request)
    payload, uncertainty = None, None
    if task_set is not None:
        payload, runs, episodes = selectors.easel_boards([task_set])[task_set.pk]
        uncertainty = selectors.easel_uncertainty(board=payload, runs=runs, episodes=episodes, category=category)
    return render(request, "leaderboard/easel/leaderboard.html", {
        "task_set": task_set, "task_sets": selectors.easel_task_sets(), "payload": payload,
        "uncertainty": uncertainty, "categories": CATEGORIES, "category": category,
        "pairwise": results.pairwise_rows(uncertainty["comparison"]) if uncertainty else [],
        "headline": board_headline(uncertainty["comparison"]) if uncertainty else None,
        "headline_note": f"Final S{', ' + category if category else ''} with the reconstruction table's interval; "
                         "margin from the paired bootstrap over references",
        "progress_chart": results.progress_chart(payload) if payload else "",
        "table": results.reconstruction_table(payload) if payload else None,
        "semantic": results.semantic_table(payload, uncertainty["semantic"]) if payload else [],
        "runs": selectors.run_list(task_set=task_set)[:30] if task_set is not None else [],
        "form": EaselRunForm(agents=agent_choices(), initial={"task_set": task_set.pk if task_set else None,
                                                              **run_form_typed(request, EaselRunForm)}),
    })


def leaderboard_export(request, fmt: str):
    require_researcher(request.user)
    task_set = _task_set_or_404(request)
    if task_set is None:
        raise Http404("No EASEL task set yet.")
    payload = selectors.easel_leaderboard(task_set=task_set)
    body = {"csv": exports.export_csv, "tex": exports.export_latex}.get(fmt)
    text = body(payload) if body else results.export_json(payload, code_version=code_version())
    marker = "-demo" if payload["demo"] else ""
    marker += "-simulated" if payload["simulated"] else ""
    return text_download(text, fmt, f"easel-{task_set.name}-v{task_set.version}{marker}.{fmt}")


def run_detail(request, pk: int):
    require_researcher(request.user)
    run = get_object_or_404(EaselRun.objects.select_related("task_set", "subject_model"), pk=pk)
    return render(request, "leaderboard/easel/run_detail.html", {
        "run": run, "progress": selectors.run_progress(run=run), "episodes": selectors.run_episodes(run=run),
    })


run_status = run_status_view(EaselRun, selectors.run_page_status)


@require_POST
def run_new(request):
    require_researcher(request.user)
    form = EaselRunForm(request.POST, agents=agent_choices())
    refused = None
    if form.is_valid():  # a refusal of the service goes back to the suite the form named
        refused = reverse("easel:leaderboard") + f"?task_set={form.cleaned_data['task_set'].pk}"
    return run_new_from_page(request, form, create=services.easel_run_create, back="easel:leaderboard",
                             detail="easel:run_detail", refused=refused)


run_resume = run_resume_view(EaselRun, "easel:run_detail",
                             "Queue a failed run again; its episodes resume from their stored steps.")


def _episode(pk: int) -> EaselEpisode:
    return get_object_or_404(EaselEpisode.objects.select_related("run", "task").defer("final_canvas_png"), pk=pk)


def episode_viewer(request, pk: int):
    require_researcher(request.user)
    episode = _episode(pk)
    viewer = selectors.episode_viewer_data(episode=episode)
    # the script appends "<index>.png" to this prefix for each stored step
    viewer["canvas_prefix"] = reverse("easel:step_canvas", args=[episode.pk, 0])[: -len("0.png")]
    viewer["final_url"] = reverse("easel:final_canvas", args=[episode.pk])
    siblings = list(selectors.run_episodes(run=episode.run).values_list("pk", flat=True))
    where = siblings.index(episode.pk)
    return render(request, "leaderboard/easel/episode.html", {
        "episode": episode, "run": episode.run, "viewer": viewer, "chart": results.episode_chart(viewer),
        "previous": siblings[where - 1] if where > 0 else None,
        "next": siblings[where + 1] if where + 1 < len(siblings) else None,
    })


def _png(data: bytes | None) -> HttpResponse:
    if data is None:
        raise Http404("No stored canvas for that step.")
    response = HttpResponse(bytes(data), content_type="image/png")
    response["Cache-Control"] = "private, max-age=3600"
    return response


def task_image(request, pk: int):
    """An episode's reference (or semantic task image)."""
    require_researcher(request.user)
    episode = get_object_or_404(EaselEpisode.objects.select_related("task__easel_image"), pk=pk)
    image = getattr(episode.task, "easel_image", None)
    return _png(image.png if image is not None else None)


def step_canvas(request, pk: int, index: int):
    """The stored canvas after step ``index``; step 0 is the initial canvas."""
    require_researcher(request.user)
    episode = _episode(pk)
    if index == 0:
        task = services.engine_task_of(episode.task)
        return _png(services.canvas_png(task.initial_canvas()))
    return _png(selectors.episode_step_canvas(episode=episode, index=index))


def final_canvas(request, pk: int):
    require_researcher(request.user)
    episode = get_object_or_404(EaselEpisode.objects.only("pk", "final_canvas_png"), pk=pk)
    return _png(episode.final_canvas_png)


def compare(request):
    """Two EASEL runs side by side (``?a=&b=`` run ids; without them, the choice of runs)."""
    require_researcher(request.user)
    context = {"choices": selectors.compare_choices()[:100]}
    pair = compare_pair_from_query(request.GET, EaselRun.objects.select_related("task_set", "subject_model"))
    if pair is not None:
        left, right = pair
        comparison = selectors.run_comparison(left, right)
        context.update(comparison, left=left, right=right, pairwise=results.pairwise_rows(comparison["paired"]))
    return render(request, "leaderboard/easel/compare.html", context)

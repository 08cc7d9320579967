"""Home, search, model profiles and catalogue pages (task sets, exports, renders). Views validate and
delegate: reads through selectors, writes through services; access through the gatekeepers in ``roles``.
The Ekphrasis pages are :mod:`leaderboard.ekphrasis.views`."""

from __future__ import annotations

import mimetypes

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from evalsite.request_checks import id_of
from leaderboard import charts, overview, selectors
from leaderboard.api_contract import text_download
from leaderboard.ekphrasis.selectors import tig_builds_of, tig_component_choices
from leaderboard.models import Benchmark, SubjectModel, TaskSet
from leaderboard.protocols import protocol_for_kind
from leaderboard.roles import is_admin, is_researcher, require_researcher
from leaderboard.services.catalogue import responses_export, tasks_export


def home(request):
    """The researcher's overview: one block per registered protocol with its latest board, and the search
    box (annotators and people without a role see their tiles only: no model identities)."""
    boards = overview.overview_boards() if is_researcher(request.user) else []
    return render(request, "home.html", {"has_demo": selectors.demo_data_present(), "boards": boards})


def search(request):
    """Models and task sets whose names contain ``?q=`` (researchers)."""
    require_researcher(request.user)
    query = (request.GET.get("q") or "")[:100]
    return render(request, "leaderboard/search.html", {"results": overview.catalogue_search(query)})


def _subject_model_or_404(pk: int) -> SubjectModel:
    return get_object_or_404(SubjectModel, pk=pk, role=SubjectModel.Role.SUBJECT)


def model_profile(request, pk: int):
    """One model on every protocol and task set it was evaluated on (researchers)."""
    require_researcher(request.user)
    model = _subject_model_or_404(pk)
    return render(request, "leaderboard/model_profile.html", {
        **overview.model_profile(model),
        "others": SubjectModel.objects.filter(role=SubjectModel.Role.SUBJECT).exclude(pk=model.pk).order_by("display_name"),
    })


def model_compare_pick(request, pk: int):
    """The profile's compare form (``?other=``) → the two-model comparison. Without a choice (the bare
    URL, typed or bookmarked) it is the page to pick the other model; a choice that is not another
    subject model is that page again, saying why (400)."""
    require_researcher(request.user)
    model = _subject_model_or_404(pk)
    others = SubjectModel.objects.filter(role=SubjectModel.Role.SUBJECT).exclude(pk=model.pk).order_by("display_name")
    other = request.GET.get("other")
    if other is None:
        return render(request, "leaderboard/model_compare_pick.html", {"model": model, "others": others})
    other_id = id_of(other)
    if other_id is not None and others.filter(pk=other_id).exists():
        return redirect("model_compare", pk=model.pk, other=other_id)
    problem = (f"{model.display_name} is compared with another model: pick a different one." if other_id == model.pk
               else f"“{other[:40]}” names no other model: pick one from the list.")
    return render(request, "leaderboard/model_compare_pick.html",
                  {"model": model, "others": others, "problem": problem}, status=400)


def model_compare(request, pk: int, other: int):
    """Two models side by side on every board both were ranked on (researchers)."""
    require_researcher(request.user)
    return render(request, "leaderboard/model_compare.html",
                  overview.model_pair(_subject_model_or_404(pk), _subject_model_or_404(other)))


def task_set_list(request):
    require_researcher(request.user)
    return render(request, "leaderboard/task_set_list.html",
                  {"task_sets": selectors.task_set_list(), "is_admin": is_admin(request.user)})


def task_set_detail(request, pk: int):
    require_researcher(request.user)
    task_set = get_object_or_404(TaskSet.objects.select_related("benchmark"), pk=pk)
    context = {"task_set": task_set, "tasks": selectors.task_rows(task_set=task_set),
               "normalisation": selectors.normalisation_counts(task_set=task_set)}
    if task_set.benchmark.kind != Benchmark.Kind.EKPHRASIS:
        # Idea graphs, renders and Core Idea / Visual Description lengths are Ekphrasis's: an EASEL or C² set
        # has no responses for them (the page offered them empty, and a Build that was refused); its results
        # are on its protocol's page.
        protocol = protocol_for_kind(task_set.benchmark.kind)
        return render(request, "leaderboard/task_set_detail.html",
                      context | {"protocol": protocol, "protocol_url": reverse(protocol.nav_url)})
    lengths = selectors.length_diagnostics(task_set=task_set)
    extractors, embedders = tig_component_choices()
    return render(request, "leaderboard/task_set_detail.html", context | {
        "tig_builds": tig_builds_of(task_set=task_set)[:10], "extractors": extractors, "embedders": embedders,
        "core_idea_lengths": charts.box_plot(lengths["core_idea"], title="Core Idea words",
                                             axis_label="Core Idea length (words) per model × family"),
        "visual_lengths": charts.box_plot(lengths["visual_description"], title="Visual Description words",
                                          axis_label="Visual Description length (words) per model × family"),
    })


def task_set_export(request, pk: int, what: str, fmt: str):
    require_researcher(request.user)
    task_set = get_object_or_404(TaskSet, pk=pk)
    export = {"tasks": tasks_export, "responses": responses_export}[what]
    body = export(task_set=task_set, fmt=fmt)
    return text_download(body, fmt, f"{task_set.name}-v{task_set.version}-{what}.{fmt}")


def task_set_renders(request, pk: int):
    """The set's renders with task, model, renderer and seed: researchers only (annotators reach images
    only through the opaque per-assignment URLs of the annotation app)."""
    require_researcher(request.user)
    task_set = get_object_or_404(TaskSet.objects.select_related("benchmark"), pk=pk)
    if task_set.benchmark.kind != Benchmark.Kind.EKPHRASIS:
        # an EASEL or C² set has no responses to render: the page offered generate_renders for it, which
        # renders nothing (as the idea graphs, tig_viewer)
        raise Http404(f"Renders are made for Ekphrasis task sets only; {task_set} is a {task_set.benchmark.name} "
                      "task set (its results are on its protocol's page).")
    renderers = selectors.task_set_renderers(task_set=task_set)
    renderer = request.GET.get("renderer") or None
    if renderer is not None and renderer not in dict(renderers):
        messages.error(request, f"no renders by {renderer!r} in this task set; showing all")
        renderer = None
    return render(request, "leaderboard/task_set_renders.html", {
        "task_set": task_set, "renderers": renderers, "renderer": renderer,
        "renders": selectors.task_set_renders(task_set=task_set, renderer=renderer),
    })


def render_image(request, pk: int, render_pk: int):
    """One render's image file as stored, for the researchers' renders page."""
    require_researcher(request.user)
    task_set = get_object_or_404(TaskSet, pk=pk)
    render_obj = selectors.task_set_render_get(task_set=task_set, pk=render_pk)
    if render_obj is None:
        raise Http404("No such render in this task set.")
    try:
        with render_obj.image.open("rb") as handle:
            data = handle.read()
    except FileNotFoundError as exc:
        raise Http404("The render's image file is missing from media storage.") from exc
    content_type = mimetypes.guess_type(render_obj.image.name)[0] or "application/octet-stream"
    response = HttpResponse(data, content_type=content_type)
    response["Cache-Control"] = "private, max-age=3600"
    return response

"""Pages of the annotation app. Views validate and delegate: reads through ``selectors``, writes
through ``services``, access through the gatekeepers in ``leaderboard.roles`` and
``annotation.access.annotator_access_check`` (every annotator page)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST, require_safe

from annotation import annotator_reads, label_export, novelty_ablation, selectors, services
from annotation.access import annotator_access_check
from annotation.blinding_recheck import campaign_texts_current
from annotation.choices import CampaignKind, FlagReason
from annotation.dashboard_cache import campaign_dashboard_cached
from annotation.errors import (
    CAMPAIGN_PAUSED_MESSAGE,
    AnnotationError,
    CampaignNotOpen,
    ImageNotShown,
    NotAllowed,
    NotFound,
)
from annotation.forms import AdjudicationRequestForm, AdjudicationResolveForm, NoveltyAblationForm
from annotation.kinds import kind_for
from annotation.media_access import assignment_image
from leaderboard.api_contract import text_download
from leaderboard.forms import form_problems
from leaderboard.providers import judge_choices
from leaderboard.roles import require_researcher


def _campaign_or_404(pk: int):
    campaign = annotator_reads.campaign_get(pk=pk)
    if campaign is None:
        raise Http404("No such campaign.")
    return campaign


@require_safe
def queue(request):
    try:
        annotator_access_check(user=request.user)
    except NotAllowed as exc:
        raise PermissionDenied(exc.message) from exc
    return render(request, "annotation/queue.html", {"cards": annotator_reads.campaigns_for_annotator(annotator=request.user)})


@require_safe
@never_cache  # the page holds the item and the answer being chosen: nothing of it kept for Back after logout
def work(request, pk: int):
    """The keyboard-first labelling page; the item itself is fetched by the page from the API."""
    campaign = _campaign_or_404(pk)
    try:
        annotator_access_check(user=request.user, campaign=campaign)
    except NotAllowed as exc:
        raise PermissionDenied(exc.message) from exc
    except CampaignNotOpen as exc:
        messages.error(request, exc.message)
        return redirect("annotation:queue")
    if not campaign_texts_current(campaign=campaign):  # its texts name a model now: nothing of it is shown
        messages.error(request, CAMPAIGN_PAUSED_MESSAGE)
        return redirect("annotation:queue")
    kind = kind_for(campaign.kind)
    return render(request, "annotation/work.html", {
        "campaign": campaign,
        "kind": kind,
        "instructions": annotator_reads.markup_render(campaign.instructions),
        "examples": [(e, annotator_reads.markup_render(e.body)) for e in annotator_reads.calibration_examples(campaign=campaign)],
        "progress": annotator_reads.campaign_progress(campaign=campaign, annotator=request.user),
        "config": {
            "kind": kind.code,
            "next": reverse("annotation:api_next", args=[campaign.pk]),
            "submit": reverse("annotation:api_submit", args=["TOKEN"]),
            # Issue 30: the page saves and takes the next item in one request (SubmitApi, ?next=1).
            "submit_next": reverse("annotation:api_submit", args=["TOKEN"]) + "?next=1",
            "skip": reverse("annotation:api_skip", args=["TOKEN"]),
            "previous": reverse("annotation:api_previous", args=[campaign.pk]),
            "revise": reverse("annotation:api_revise", args=["TOKEN"]),
            "queue": reverse("annotation:queue"),
            "flag_reasons": [{"code": r.value, "label": r.label} for r in FlagReason],
        },
    })


@require_safe
def media(request, token: str, slot: str):
    """An image of the annotator's own assignment, by opaque token and shown slot, re-encoded from its
    pixels once and served from the cache (:func:`annotation.media_access.assignment_image`)."""
    try:
        annotator_access_check(user=request.user)
    except NotAllowed as exc:
        raise PermissionDenied(exc.message) from exc
    return media_response(user=request.user, token=token, slot=slot)


def media_response(*, user, token: str, slot: str) -> HttpResponse:
    """The image of ``user``'s own assignment (the gatekeeper runs on the assignment), pixels only."""
    try:
        body, content_type = assignment_image(token=token, annotator=user, shown_slot=slot)
    except NotFound as exc:
        raise Http404("No such image.") from exc
    except ImageNotShown as exc:
        return HttpResponse(exc.message, status=409, content_type="text/plain")
    response = HttpResponse(body, content_type=content_type)
    response["Cache-Control"] = "private, no-store"
    return response


# ---------------------------------------------------------------------------------------------------
# Researchers
# ---------------------------------------------------------------------------------------------------


@require_safe
def campaign_list(request):
    require_researcher(request.user)
    return render(request, "annotation/campaign_list.html", {"rows": selectors.campaign_list_rows()})


@require_safe
def campaign_dashboard(request, pk: int):
    require_researcher(request.user)
    campaign = _campaign_or_404(pk)
    dashboard = campaign_dashboard_cached(campaign=campaign)  # live: recomputed after any change it shows
    return render(request, "annotation/dashboard.html", {
        "d": dashboard, "campaign": campaign, "kind": kind_for(campaign.kind),
        "ablation_form": NoveltyAblationForm(judges=judge_choices()) if campaign.kind == CampaignKind.TEXT_PAIRWISE else None,
    })


@require_safe
def campaign_item(request, pk: int, item_pk: int):
    """One item as its annotators saw it, with their labels, flags and notes (blind adjudication)."""
    require_researcher(request.user)
    campaign = _campaign_or_404(pk)
    item = annotator_reads.campaign_item_get(campaign=campaign, pk=item_pk)
    return render(request, "annotation/item.html", {
        "campaign": campaign, "item": item, "kind": kind_for(campaign.kind),
        "view": annotator_reads.campaign_item_view(campaign=campaign, item=item),
    })


@require_safe
def campaign_export(request, pk: int, fmt: str):
    require_researcher(request.user)
    campaign = _campaign_or_404(pk)
    body = label_export.labels_export(campaign=campaign, fmt=fmt)
    return text_download(body, fmt, f"campaign-{campaign.pk}-labels.{fmt}")


@require_POST
def novelty_ablation_start(request, pk: int):
    """Start the two fixed-pair Novelty runs (TIG anchors, generic anchors) on the campaign's Novelty pairs."""
    require_researcher(request.user)
    campaign = _campaign_or_404(pk)
    form = NoveltyAblationForm(request.POST, judges=judge_choices())
    if not form.is_valid():
        messages.error(request, f"Ablation not started: {form_problems(form)}")
    else:
        try:
            tig, generic = novelty_ablation.novelty_ablation_runs_start(
                campaign=campaign, judge_name=form.cleaned_data["judge"], seed=form.cleaned_data["seed"],
                created_by=request.user,
            )
            messages.success(request, f"Novelty ablation started: run {tig.pk} (TIG anchors) and run {generic.pk} "
                                      f"(generic anchors), judge {tig.judge_name}.")
        except AnnotationError as exc:
            messages.error(request, f"Ablation not started: {exc.message}")
    return redirect(reverse("annotation:campaign_dashboard", args=[campaign.pk]) + "#judge")


@require_POST
def adjudication_request(request, pk: int):
    require_researcher(request.user)
    campaign = _campaign_or_404(pk)
    form = AdjudicationRequestForm(request.POST)
    if form.is_valid():
        item = annotator_reads.campaign_item_get(campaign=campaign, pk=form.cleaned_data["item"])
        try:
            services.adjudication_request(item=item, researcher=request.user, note=form.cleaned_data["note"])
            where = item.task.external_id + (f" · {item.get_dimension_display()}" if item.dimension else "")
            messages.success(request, f"Item {where} sent to adjudication.")
        except AnnotationError as exc:
            messages.error(request, exc.message)
    else:
        messages.error(request, f"Not sent to adjudication: {form_problems(form)}")
    return redirect(reverse("annotation:campaign_dashboard", args=[campaign.pk]) + "#adjudication")


@require_POST
def adjudication_resolve(request, pk: int):
    require_researcher(request.user)
    campaign = _campaign_or_404(pk)
    form = AdjudicationResolveForm(request.POST)
    if form.is_valid():
        adjudication = annotator_reads.adjudication_get(campaign=campaign, item_pk=form.cleaned_data["item"])
        try:
            services.adjudication_resolve(adjudication=adjudication, researcher=request.user,
                                          outcome=form.cleaned_data["outcome"], note=form.cleaned_data["note"])
            messages.success(request, "Adjudication saved.")
        except AnnotationError as exc:
            messages.error(request, exc.message)
    else:
        messages.error(request, f"Not resolved: {form_problems(form)}")
    return redirect(reverse("annotation:campaign_dashboard", args=[campaign.pk]) + "#adjudication")


@require_safe
def snapshot_calibration(request, pk: int):
    """The calibrated board of a leaderboard snapshot (issue 24): judge only, people only and
    calibrated by people side by side, per dimension, with the style-controlled toggle."""
    from annotation import calibration
    from annotation.judge_card import judge_card_for
    from engine.calibration_views import STYLE_MIN_COMPARISONS
    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    require_researcher(request.user)
    snapshot = LeaderboardSnapshot.objects.select_related("run__task_set").filter(pk=pk).first()
    if snapshot is None:
        raise Http404("No such leaderboard snapshot.")
    campaigns = calibration.text_campaigns_for(snapshot)
    campaign = _snapshot_campaign(campaigns, request.GET.get("campaign"))
    record = calibration.calibration_record_ensure(snapshot=snapshot, campaign=campaign) if campaign else None
    return render(request, "annotation/calibration.html", {
        "snapshot": snapshot, "campaigns": campaigns, "campaign": campaign, "record": record,
        "style": request.GET.get("style") == "1",
        "dimensions": calibration.page_dimensions(record) if record else [],
        "history": calibration.records_of(snapshot=snapshot, campaign=campaign) if campaign else [],
        "judge_card": [judge_card_for(snapshot)],
        "style_min": STYLE_MIN_COMPARISONS,
    })


@require_safe
def snapshot_calibration_export(request, pk: int, fmt: str):
    from annotation import calibration
    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    require_researcher(request.user)
    snapshot = LeaderboardSnapshot.objects.select_related("run").filter(pk=pk).first()
    campaign = _snapshot_campaign(calibration.text_campaigns_for(snapshot), request.GET.get("campaign")) if snapshot else None
    if campaign is None:
        raise Http404("No calibrated board: the snapshot has no text-pairwise campaign on its task set.")
    record = calibration.calibration_record_ensure(snapshot=snapshot, campaign=campaign)
    return text_download(calibration.EXPORTS[fmt](record), fmt, f"leaderboard-{snapshot.pk}-calibrated.{fmt}")


@require_safe
def c2_run_calibration(request, pk: int):
    """A C² run's divergent table with its calibrated U/O/S columns (issue 24): the rater alone, the
    people's mean and the calibrated mean per model, from a U-O-S campaign on the run's samples."""
    from annotation import calibrated_columns
    from leaderboard.c2.models import C2Run

    require_researcher(request.user)
    run = C2Run.objects.select_related("task_set").filter(pk=pk).first()
    if run is None:
        raise Http404("No such C² run.")
    campaigns = calibrated_columns.uos_campaigns_for_run(run)
    campaign = _run_campaign(campaigns, request.GET.get("campaign"))
    view = calibrated_columns.c2_run_calibrated(run=run, campaign=campaign) if campaign else None
    return render(request, "annotation/c2_calibration.html",
                  {"run": run, "campaigns": campaigns, "campaign": campaign, "view": view})


@require_safe
def c2_run_calibration_export(request, pk: int, fmt: str):
    from annotation import calibrated_columns
    from leaderboard.c2.models import C2Run

    require_researcher(request.user)
    run = C2Run.objects.filter(pk=pk).first()
    campaign = _run_campaign(calibrated_columns.uos_campaigns_for_run(run), request.GET.get("campaign")) if run else None
    if campaign is None:
        raise Http404("No calibrated columns: no U-O-S campaign rates this run's samples.")
    view = calibrated_columns.c2_run_calibrated(run=run, campaign=campaign)
    return text_download(calibrated_columns.C2_EXPORTS[fmt](view), fmt, f"c2-run-{run.pk}-calibrated.{fmt}")


@require_safe
def campaign_calibrated_export(request, pk: int, fmt: str):
    """The calibrated columns of a U-O-S (C²) or canvas-similarity (EASEL) campaign's panel."""
    from annotation import calibrated_columns

    require_researcher(request.user)
    view = calibrated_columns.campaign_calibrated(_campaign_or_404(pk))
    if view is None:
        raise Http404("Only U-O-S rating and canvas-similarity campaigns have calibrated columns.")
    body = calibrated_columns.campaign_calibrated_csv(view) if fmt == "csv" else calibrated_columns.as_json(view)
    return text_download(body, fmt, f"campaign-{pk}-calibrated.{fmt}")


def _campaign_among(campaigns, wanted: str | None, what: str):
    """The campaign asked for by id (``?campaign=``) among ``campaigns``, else the first; a 404 naming the
    parameter when it is not one of them (``what``: the campaigns it may name), on the page and its exports alike."""
    from annotation.calibration import campaign_choice

    campaign = campaign_choice(campaigns, wanted)
    if campaign is None and wanted:
        raise Http404(f"No {what} has the id given in campaign.")
    return campaign


def _snapshot_campaign(campaigns, wanted: str | None):
    return _campaign_among(campaigns, wanted, "text-pairwise campaign on this snapshot's task set")


def _run_campaign(campaigns, wanted: str | None):
    return _campaign_among(campaigns, wanted, "U-O-S campaign rating this run's samples")


@require_safe
def judge_cards(request):
    """One row per judge: agreement with people, position flips, duplicates, length preference, ties,
    cost and time per 1,000 judgements, λ when calibrated (issue 24)."""
    from annotation.judge_card import judge_cards as cards

    require_researcher(request.user)
    return render(request, "annotation/judge_cards.html", {"cards": cards()})

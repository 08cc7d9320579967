"""The admin page that fills an EASEL/C² validation campaign from stored runs (every write through
:mod:`annotation.validation_items`, i.e. ``services.items_create``)."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse

from annotation import validation_items
from annotation.choices import CampaignKind
from annotation.errors import AnnotationError
from annotation.models import Campaign
from annotation.validation_forms import ValidationItemsForm
from leaderboard.roles import require_admin

VALIDATION_KINDS = (CampaignKind.UOS_RATING, CampaignKind.CANVAS_SIMILARITY, CampaignKind.HANDWRITING)


def _create(campaign: Campaign, data: dict) -> list:
    if campaign.kind == CampaignKind.UOS_RATING:
        return validation_items.items_create_uos_samples(campaign=campaign, run=data["run"], rule=data["rule"],
                                                         n_items=data["k"], seed=data["seed"])
    if campaign.kind == CampaignKind.CANVAS_SIMILARITY:
        return validation_items.items_create_canvas_pairs(campaign=campaign, runs=list(data["runs"]), rule=data["rule"],
                                                          pairs_per_task=data["k"], seed=data["seed"])
    return validation_items.items_create_handwriting(campaign=campaign, runs=list(data["runs"]), limit=data["k"],
                                                     seed=data["seed"])


def items_from_runs_view(model_admin, request, pk: int):
    require_admin(request.user)
    campaign = get_object_or_404(Campaign, pk=pk)
    if campaign.kind not in VALIDATION_KINDS:
        messages.error(request, "Items from runs are for the U-O-S, canvas similarity and handwriting kinds.")
        return redirect("admin:annotation_campaign_change", campaign.pk)
    form = ValidationItemsForm(campaign=campaign)
    errors = None
    if request.method == "POST":
        form = ValidationItemsForm(request.POST, campaign=campaign)
        if form.is_valid():
            try:
                created = _create(campaign, form.cleaned_data)
                messages.success(request, f"{len(created)} items created.")
                return redirect("admin:annotation_campaign_change", campaign.pk)
            except AnnotationError as exc:
                errors = exc.message
    return TemplateResponse(request, "admin/annotation/campaign/items_form.html", {
        **model_admin.admin_site.each_context(request), "campaign": campaign, "form": form, "errors": errors,
        "title": f"Items from runs for {campaign} ({campaign.get_kind_display()})", "opts": model_admin.model._meta,
    })

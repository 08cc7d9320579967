"""The researcher's pages of a crowd campaign (issue 25): open it to a panel, its entry link, the
monitoring figures, the participants with their pay-report rows and the actions on them (panel
"returned", reject, block, take back), and the pay report as CSV or JSON."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from annotation import annotator_reads, participants
from annotation.errors import AnnotationError
from annotation.panel_api import PanelStudyApi, entry_link
from annotation.panel_models import Panel, PanelStudy, Participant
from annotation.panel_monitoring import panel_monitoring
from annotation.panels import ENTRY_SIGNATURE_PARAM, entry_signing_fingerprint, entry_signing_required
from annotation.pay_report import pay_report, pay_report_csv
from leaderboard.api_contract import text_download
from leaderboard.roles import require_researcher


def _campaign(pk: int):
    campaign = annotator_reads.campaign_get(pk=pk)
    if campaign is None:
        raise Http404("No such campaign.")
    return campaign


#: The settings the page's form sets (those of the API's input; a field left empty keeps its value).
FORM_FIELDS = ("panel", "consent_text", "training_min_correct", "training_max_attempts", "item_quota",
               "time_limit_minutes", "completion_code", "screen_out_code", "id_param", "too_fast_ms",
               "bonus_per_item", "bonus_min_gold_accuracy")


def _settings_saved(request, campaign) -> None:
    """Validate the form as the API validates its body (the same bounds: no number a column cannot hold),
    then open or change the study; the outcome as a message."""
    given = {name: request.POST[name] for name in FORM_FIELDS
             if name in request.POST and (name == "consent_text" or request.POST[name].strip())}
    data = PanelStudyApi.PanelStudyInput(data=given)
    if not data.is_valid():
        problems = "; ".join(f"{name}: {' '.join(str(e) for e in errors)}" for name, errors in data.errors.items())
        messages.error(request, f"Not saved: {problems}")
        return
    before = PanelStudy.objects.filter(campaign=campaign).first()
    try:
        study = participants.panel_study_open(campaign=campaign, **data.validated_data)
        dropped = before is not None and entry_signing_required(before) and not entry_signing_required(study)
        messages.success(request, "Panel settings saved." + (
            " Entries are no longer signed: only a generic panel's entries can be signed (the secret is dropped; "
            "back on a generic panel, turn signing on again for a new one)." if dropped else ""))
    except AnnotationError as exc:
        messages.error(request, f"Not saved: {exc.message}")


@require_http_methods(["GET", "POST"])
def panel_study(request, pk: int):
    require_researcher(request.user)
    campaign = _campaign(pk)
    if request.method == "POST":
        _settings_saved(request, campaign)
        return redirect("annotation:panel_study", pk=campaign.pk)
    return _study_page(request, campaign)


def _study_page(request, campaign, *, signing_secret: str = ""):
    """``signing_secret``: a new entry-signing secret, shown in this one response."""
    study = PanelStudy.objects.filter(campaign=campaign).first()
    context = {"campaign": campaign, "study": study, "panels": Panel.choices, "signing_secret": signing_secret,
               "signature_param": ENTRY_SIGNATURE_PARAM}
    if study is not None:
        context.update(link=entry_link(request, study), monitoring=panel_monitoring(study=study),
                       report=pay_report(study=study), signing_required=entry_signing_required(study),
                       signing_fingerprint=entry_signing_fingerprint(study.entry_signing_secret),
                       training_items=list(study.training_items.all()))
    return render(request, "annotation/panel/study.html", context)


@require_POST
@never_cache  # the response shows the new secret: no cache keeps it
def entry_signing(request, pk: int):
    """``action``: rotate (a new entry-signing secret, shown once: this response is rendered, not redirected) or
    off (entries need no signature); either only with ``confirm=yes``, the page's ticked box."""
    require_researcher(request.user)
    study = _study(pk)
    action = request.POST.get("action", "")
    if action not in ("rotate", "off"):
        messages.error(request, f"Unknown action {action!r}.")
        return redirect(reverse("annotation:panel_study", args=[pk]) + "#entry-signing")
    if request.POST.get("confirm") != "yes":
        # a new secret stops every link handed out (unsigned ones, or those signed with the old secret); turning
        # signing off lets unsigned links enter again, so an id that can be guessed is anyone's to take
        messages.error(request, "Nothing changed: tick the box to confirm that " + (
            "the links already handed out stop entering." if action == "rotate" else
            "links without a signature enter again."))
        return redirect(reverse("annotation:panel_study", args=[pk]) + "#entry-signing")
    try:
        secret = participants.panel_study_signing_set(study=study, required=action == "rotate",
                                                      replacing=request.POST.get("replacing"))
    except AnnotationError as exc:
        messages.error(request, exc.message)
        return redirect(reverse("annotation:panel_study", args=[pk]) + "#entry-signing")
    if not secret:
        messages.success(request, "Entries are no longer signed.")
        return redirect(reverse("annotation:panel_study", args=[pk]) + "#entry-signing")
    return _study_page(request, study.campaign, signing_secret=secret)


def _participant(study: PanelStudy, participant_pk: int) -> Participant:
    participant = Participant.objects.select_related("study").filter(study=study, pk=participant_pk).first()
    if participant is None:
        raise Http404("No such participant in this campaign.")
    return participant


def _study(pk: int) -> PanelStudy:
    study = PanelStudy.objects.select_related("campaign").filter(campaign_id=pk).first()
    if study is None:
        raise Http404("This campaign is not open to a panel.")
    return study


@require_POST
def participant_action(request, pk: int, participant_pk: int):
    """``action``: returned (the panel says the participant returned the study), rejected, blocked, or
    restore (take a verdict back)."""
    require_researcher(request.user)
    study = _study(pk)
    participant = _participant(study, participant_pk)
    action = request.POST.get("action", "")
    try:
        if action == "returned":
            participants.participant_leave(participant=participant)
        elif action in ("rejected", "blocked", "restore"):
            participants.participant_verdict_set(participant=participant, verdict="" if action == "restore" else action,
                                                 researcher=request.user, note=request.POST.get("note", ""))
        else:
            messages.error(request, f"Unknown action {action!r}.")
            return redirect("annotation:panel_study", pk=pk)
        messages.success(request, f"Participant {participant.panel_id}: {action}.")
    except AnnotationError as exc:
        messages.error(request, exc.message)
    return redirect(reverse("annotation:panel_study", args=[pk]) + "#participants")


@require_safe
def pay_report_download(request, pk: int, fmt: str):
    require_researcher(request.user)
    report = pay_report(study=_study(pk))
    body = pay_report_csv(report) if fmt == "csv" else json.dumps(report.as_dict(), indent=1)
    return text_download(body, fmt, f"campaign-{pk}-pay.{fmt}")


__all__ = ["entry_signing", "panel_study", "participant_action", "pay_report_download"]

"""The JSON API of a crowd campaign (issue 25).

* The participant's labelling page (under the entry link): next item, submit with the page's measured
  active time, previous label — the same services, blinded bodies and refusals as
  :mod:`annotation.api`, plus the participant's own rules (quota, time limit, state).
* Researchers (``/api/v1/``): the study's entry link and settings, its entry signing (a generic panel's), the
  monitoring figures, the pay report, and a participant's return (the panel said "returned") and verdict (reject, block, take back).
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from annotation import annotator_reads, participants, previous_label
from annotation.api import AnnotationAPIView, AnswerInput, ReviseApi, SkipApi
from annotation.errors import NotAllowed, NotFound
from annotation.models import Campaign
from annotation.panel_models import Panel, PanelStudy, Participant
from annotation.panel_monitoring import panel_monitoring
from annotation.panels import PANEL_ID_PATTERN, entry_query, entry_signing_fingerprint, entry_signing_required
from annotation.pay_report import pay_report, pay_report_csv
from leaderboard.api_contract import ApiView, error_responses, text_download

# ---------------------------------------------------------------- the participant's page


def _participant(request, entry: str) -> Participant:
    study = PanelStudy.objects.filter(entry_token=entry).first()
    participant = None
    if study is not None and request.user.is_authenticated:
        participant = Participant.objects.select_related("study", "user").filter(user=request.user, study=study).first()
    if participant is None:
        raise NotAllowed("Open the study from your panel's link.")
    return participant


def _items_total_for(study: PanelStudy, items_total: int) -> int:
    """The "of up to" a participant reads: the campaign's bound, at most their quota (``done`` counts every
    item, as the quota does). The campaign's bound alone told a participant with a quota of 3 "1 of up to 12
    items", and the study ended after the third."""
    return items_total if study.item_quota is None else min(items_total, study.item_quota)


def participant_progress(progress: annotator_reads.Progress, study: PanelStudy) -> annotator_reads.Progress:
    """The progress a participant reads (:func:`_items_total_for`)."""
    return dataclasses.replace(progress, items_total=_items_total_for(study, progress.items_total))


def _capped(body: dict, study: PanelStudy) -> dict:
    """An annotator route's answer (skip, revise) with its ``progress`` as :func:`participant_progress`."""
    if isinstance(body.get("progress"), dict):
        body["progress"] = {**body["progress"],
                            "items_total": _items_total_for(study, body["progress"]["items_total"])}
    return body


def _media_url(entry: str, token: str):
    return lambda shown_slot: reverse("annotation:panel_media", args=[entry, token, shown_slot])


class PanelNextApi(AnnotationAPIView):
    """POST: the participant's current or next item; ``assignment`` null and ``finished`` true when
    they are done (quota reached or nothing left for them)."""

    def post(self, request, entry: str):
        participant = _participant(request, entry)
        handed = participants.participant_next(participant=participant)
        if handed is None:
            progress = annotator_reads.campaign_progress(campaign=participant.campaign, annotator=request.user)
            return Response({"assignment": None, "finished": True,
                             "progress": participant_progress(progress, participant.study).as_dict()})
        assignment = handed.assignment
        body = annotator_reads.assignment_present(assignment=assignment, media_url=_media_url(entry, assignment.token))
        return Response({"assignment": body, "finished": False,
                         "progress": participant_progress(handed.progress, participant.study).as_dict()})


class PanelSubmitApi(AnnotationAPIView):
    """POST {idempotency_key, answer, time_on_item_ms, active_ms}: store the label with the active time
    the page measured (clamped to the wall time the item was held)."""

    class Input(AnswerInput):
        active_ms = serializers.JSONField(required=False, allow_null=True)

    def post(self, request, entry: str, token: str):
        participant = _participant(request, entry)
        data = self.Input(data=request.data)
        if not data.is_valid():
            return Response({"error": "invalid", "detail": "malformed submission", "fields": data.errors},
                            status=status.HTTP_400_BAD_REQUEST)
        done = participants.participant_label_submit(
            participant=participant, token=token, idempotency_key=data.validated_data["idempotency_key"],
            answer=data.validated_data["answer"], time_on_item_ms=data.validated_data.get("time_on_item_ms"),
            active_ms=data.validated_data.get("active_ms"),
        )
        submission = done.submission
        progress = submission.progress or annotator_reads.campaign_progress(campaign=participant.campaign,
                                                                       annotator=request.user)
        return Response({"saved": True, "replayed": submission.replayed, "finished": done.finished,
                         "active_ms": done.active.active_ms if done.active else None,
                         "progress": participant_progress(progress, participant.study).as_dict()},
                        status=status.HTTP_200_OK if submission.replayed else status.HTTP_201_CREATED)


class PanelPreviousApi(AnnotationAPIView):
    def get(self, request, entry: str):
        participant = _participant(request, entry)
        if participant.state != Participant.State.WORKING or participant.verdict:
            raise NotAllowed("You are not labelling in this study.")
        return Response({"previous": previous_label.previous_label_present(
            campaign=participant.campaign, annotator=request.user,
            media_url_for=lambda token: _media_url(entry, token))})


class PanelSkipApi(SkipApi):
    """POST {reason}: skip the participant's item (the annotators' skip, under the study's link: a
    participant's session reaches no other route)."""

    def post(self, request, entry: str, token: str):
        participant = _participant(request, entry)
        response = super().post(request, token)
        _capped(response.data, participant.study)
        return response


class PanelReviseApi(ReviseApi):
    """POST {idempotency_key, answer, time_on_item_ms}: change the participant's previous label (the
    annotators' change, under the study's link)."""

    def post(self, request, entry: str, token: str):
        participant = _participant(request, entry)
        response = super().post(request, token)
        _capped(response.data, participant.study)
        return response


# ---------------------------------------------------------------- researchers (/api/v1/)


def _study(pk: int) -> PanelStudy:
    campaign = get_object_or_404(Campaign, pk=pk)
    study = PanelStudy.objects.filter(campaign=campaign).select_related("campaign").first()
    if study is None:
        raise NotFound("This campaign is not open to a panel.")
    return study


def entry_link(request, study: PanelStudy) -> str:
    """The study's entry link with the panel's placeholders, absolute."""
    path = reverse("annotation:panel_entry", args=[study.entry_token])
    return request.build_absolute_uri(path) + entry_query(panel=study.panel, id_param=study.id_param,
                                                           signed=entry_signing_required(study))


class PanelStudyOutput(serializers.ModelSerializer):
    class Meta:
        model = PanelStudy
        fields = ["panel", "id_param", "consent_text", "training_min_correct", "training_max_attempts", "item_quota",
                  "time_limit_minutes", "completion_code", "screen_out_code", "too_fast_ms", "bonus_per_item",
                  "bonus_min_gold_accuracy"]


class PanelStudyApi(ApiView):
    """GET: the campaign's panel settings, its entry link and whether entries are signed. POST: open the campaign to a panel (or
    change its settings; fields left out are kept)."""

    class PanelStudyInput(serializers.Serializer):
        panel = serializers.ChoiceField(choices=Panel.choices)
        consent_text = serializers.CharField(required=False, allow_blank=True, max_length=20_000)
        training_min_correct = serializers.IntegerField(required=False, min_value=0, max_value=100)
        training_max_attempts = serializers.IntegerField(required=False, min_value=1, max_value=10)
        item_quota = serializers.IntegerField(required=False, min_value=1, max_value=100_000)
        time_limit_minutes = serializers.IntegerField(required=False, min_value=1, max_value=7 * 24 * 60)
        completion_code = serializers.CharField(required=False, max_length=32)
        screen_out_code = serializers.CharField(required=False, max_length=32)
        id_param = serializers.CharField(required=False, max_length=32)
        too_fast_ms = serializers.IntegerField(required=False, min_value=0, max_value=3_600_000)
        bonus_per_item = serializers.DecimalField(required=False, max_digits=8, decimal_places=2, min_value=Decimal(0))
        bonus_min_gold_accuracy = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)

    def _body(self, request, study: PanelStudy) -> dict:
        # whether entries are signed and under which secret (its fingerprint, for ``replacing``), never the secret
        signing = entry_signing_required(study)
        return {**PanelStudyOutput(study).data, "campaign": study.campaign_id, "entry_link": entry_link(request, study),
                "entry_signing": "required" if signing else "off",
                "entry_signing_fingerprint": entry_signing_fingerprint(study.entry_signing_secret) if signing else ""}

    @extend_schema(operation_id="campaigns_panel_retrieve", responses={200: OpenApiTypes.OBJECT, **error_responses(404)})
    def get(self, request, pk: int):
        return Response(self._body(request, _study(pk)))

    @extend_schema(operation_id="campaigns_panel_open", request=PanelStudyInput,
                   responses={200: OpenApiTypes.OBJECT, **error_responses(404)})
    def post(self, request, pk: int):
        campaign = get_object_or_404(Campaign, pk=pk)
        data = self.PanelStudyInput(data=request.data)
        data.is_valid(raise_exception=True)
        study = participants.panel_study_open(campaign=campaign, **data.validated_data)
        return Response(self._body(request, study))


class PanelEntrySigningApi(ApiView):
    """POST {action: rotate|off, replacing}: a generic study's entries must be signed, with a new secret (in
    this answer only), or need no signature. ``replacing``, the fingerprint of the secret the caller knows
    ("" for none), makes a rotate sent twice a 409 instead of a second secret."""

    class EntrySigningInput(serializers.Serializer):
        action = serializers.ChoiceField(choices=["rotate", "off"])
        replacing = serializers.CharField(required=False, allow_blank=True, max_length=64)

    @extend_schema(operation_id="campaigns_panel_entry_signing", request=EntrySigningInput,
                   responses={200: OpenApiTypes.OBJECT, **error_responses(404, 409)})
    def post(self, request, pk: int):
        study = _study(pk)
        data = self.EntrySigningInput(data=request.data)
        data.is_valid(raise_exception=True)
        secret = participants.panel_study_signing_set(study=study, required=data.validated_data["action"] == "rotate",
                                                      replacing=data.validated_data.get("replacing"))
        if not secret:
            return Response({"entry_signing": "off"})
        # the secret is in no other answer: no cache on the way may keep it
        return Response({"entry_signing": "required", "secret": secret, "fingerprint": entry_signing_fingerprint(secret)},
                        headers={"Cache-Control": "no-store"})


class PanelMonitoringApi(ApiView):
    @extend_schema(operation_id="campaigns_panel_monitoring", responses={200: OpenApiTypes.OBJECT, **error_responses(404)})
    def get(self, request, pk: int):
        return Response(panel_monitoring(study=_study(pk)).as_dict())


class PanelPayReportApi(ApiView):
    """The pay report, one row per participant (``?fmt=csv`` for CSV)."""

    download_media_types = ("text/csv",)

    class PayReportQuery(serializers.Serializer):
        fmt = serializers.ChoiceField(choices=["json", "csv"], default="json")

    @extend_schema(operation_id="campaigns_panel_pay_report", parameters=[PayReportQuery],
                   responses={(200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR,
                              **error_responses(404)})
    def get(self, request, pk: int):
        study = _study(pk)
        query = self.PayReportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        report = pay_report(study=study)
        if query.validated_data["fmt"] == "csv":
            return text_download(pay_report_csv(report), "csv", f"campaign-{study.campaign_id}-pay.csv")
        return Response(report.as_dict())


def _panel_participant(study: PanelStudy, panel_id: str) -> Participant:
    participant = participants.participant_for_panel_id(campaign=study.campaign, panel_id=panel_id)
    if participant is None:
        raise NotFound("No participant with this panel id in this campaign.")
    return participant


class PanelIdInput(serializers.Serializer):
    panel_id = serializers.RegexField(PANEL_ID_PATTERN.pattern, max_length=64)


class PanelReturnApi(ApiView):
    """POST {panel_id}: the panel reports the participant returned the study: their held item goes back
    to the queue, their labels are kept."""

    @extend_schema(operation_id="campaigns_panel_participant_return", request=PanelIdInput,
                   responses={200: OpenApiTypes.OBJECT, **error_responses(404)})
    def post(self, request, pk: int):
        data = PanelIdInput(data=request.data)
        data.is_valid(raise_exception=True)
        participant = participants.participant_leave(
            participant=_panel_participant(_study(pk), data.validated_data["panel_id"]))
        return Response({"panel_id": participant.panel_id, "state": participant.state})


class PanelVerdictApi(ApiView):
    """POST {panel_id, verdict: rejected|blocked|"", note}: reject or block a participant, or take it back."""

    class VerdictInput(PanelIdInput):
        verdict = serializers.ChoiceField(choices=Participant.Verdict.choices, allow_blank=True)
        note = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)

    @extend_schema(operation_id="campaigns_panel_participant_verdict", request=VerdictInput,
                   responses={200: OpenApiTypes.OBJECT, **error_responses(404)})
    def post(self, request, pk: int):
        data = self.VerdictInput(data=request.data)
        data.is_valid(raise_exception=True)
        participant = participants.participant_verdict_set(
            participant=_panel_participant(_study(pk), data.validated_data["panel_id"]), verdict=data.validated_data["verdict"],
            note=data.validated_data["note"], researcher=request.user)
        return Response({"panel_id": participant.panel_id, "state": participant.state, "verdict": participant.verdict})


__all__ = [
    "PanelEntrySigningApi",
    "PanelMonitoringApi",
    "PanelNextApi",
    "PanelPayReportApi",
    "PanelPreviousApi",
    "PanelReturnApi",
    "PanelReviseApi",
    "PanelSkipApi",
    "PanelStudyApi",
    "PanelSubmitApi",
    "PanelVerdictApi",
    "entry_link",
]

"""The annotation part of ``/api/v1/``.

Researchers: campaigns (list, detail, dashboard statistics, labels export); admins: campaign create and
items import. Annotators: the labelling page's operations (next, progress, submit, skip, and the previous
label and its change) and the images of their assignments (by token: the media URLs in the items handed
out here are these, so an API-token client fetches them with its token), the same
services and the same blinded bodies as :mod:`annotation.api` (whose routes stay for the page's own JS),
refusals in the API's one error shape. Every annotator request goes through
:func:`annotation.access.annotator_access_check`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import django_filters
import numpy as np
from django.db.models import Model
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import annotator_reads, api, item_creation, label_export, label_revision, services
from annotation.access import annotator_access_check
from annotation.choices import CampaignKind
from annotation.dashboard_cache import campaign_dashboard_cached
from annotation.errors import NotAllowed
from annotation.media_access import assignment_image
from annotation.models import Campaign
from leaderboard.api_contract import (
    AdminOnly,
    ApiListView,
    ApiView,
    IdField,
    IdFilter,
    error_responses,
    text_download,
)
from leaderboard.models import TaskSet

# ---------------------------------------------------------------- campaigns (researchers, admins)


class CampaignOutput(serializers.ModelSerializer):
    task_set = serializers.IntegerField(source="task_set_id")
    # Paused for review (annotation.blinding_recheck): researchers only. The reason names the model, so no
    # annotator-facing body carries it (they get only annotation.errors.CAMPAIGN_PAUSED_MESSAGE).
    texts_paused = serializers.SerializerMethodField(
        help_text="Paused for review: a shown text (name, instructions, calibration example, crowd study's consent "
                  "text or training question) names a model the catalogue gained or renamed after it was written. "
                  "Annotators get no item until an admin edits the text and resumes the campaign.")
    texts_paused_at = serializers.DateTimeField(read_only=True, allow_null=True, help_text="When it was paused; null when not paused.")
    texts_paused_reason = serializers.CharField(
        read_only=True, help_text="Which text names which model; empty when not paused.")

    class Meta:
        model = Campaign
        fields = ["id", "name", "kind", "task_set", "status", "k", "open_to_all_annotators", "gold_rate",
                  "show_brief", "assignment_ttl_seconds", "is_demo", "created_at",
                  "texts_paused", "texts_paused_at", "texts_paused_reason"]
        read_only_fields = ["texts_paused", "texts_paused_at", "texts_paused_reason"]

    def get_texts_paused(self, obj) -> bool:
        return obj.texts_paused_at is not None


class CampaignFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=CampaignKind.choices)
    status = django_filters.ChoiceFilter(choices=Campaign.Status.choices)
    task_set = IdFilter(field_name="task_set_id")

    class Meta:
        model = Campaign
        fields = ["kind", "status", "task_set"]


class CampaignListApi(ApiListView):
    serializer_class = CampaignOutput
    filterset_class = CampaignFilter
    queryset = Campaign.objects.all()

    @extend_schema(operation_id="campaigns_list", responses={200: CampaignOutput(many=True), **error_responses()})
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


def _campaign(pk: int) -> Campaign:
    return get_object_or_404(Campaign.objects.select_related("task_set"), pk=pk)


class CampaignDetailApi(ApiView):
    class CampaignDetailOutput(CampaignOutput):
        instructions = serializers.CharField()
        n_items = serializers.SerializerMethodField()
        labels = serializers.SerializerMethodField()

        class Meta(CampaignOutput.Meta):
            fields = [*CampaignOutput.Meta.fields, "instructions", "n_items", "labels"]

        # As the progress counters count them: an item withheld for blinding is no longer work.
        def get_n_items(self, obj) -> int:
            return obj.items.filter(is_gold=False, withheld_at__isnull=True).count()

        def get_labels(self, obj) -> int:
            return obj.assignments.filter(status="submitted", slot__isnull=False, item__withheld_at__isnull=True).count()

    @extend_schema(operation_id="campaigns_retrieve", responses={200: CampaignDetailOutput, **error_responses(404)})
    def get(self, request, pk: int):
        return Response(self.CampaignDetailOutput(_campaign(pk)).data)


class CampaignCreateApi(ApiView):
    """Create a campaign (admins): the same checks as the admin (known kind, no model identity in the
    name or instructions)."""

    permission_classes = [AdminOnly]

    class CampaignInput(serializers.Serializer):
        name = serializers.CharField(max_length=150)
        kind = serializers.ChoiceField(choices=CampaignKind.choices)
        task_set = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
        instructions = serializers.CharField(required=False, allow_blank=True, default="", max_length=20_000)
        k = serializers.IntegerField(min_value=1, max_value=9, default=3)  # as the DB constraint
        open_to_all_annotators = serializers.BooleanField(default=False)
        gold_rate = serializers.FloatField(min_value=0.0, max_value=0.5, default=0.1)  # as the DB constraint
        show_brief = serializers.BooleanField(default=False)
        assignment_ttl_seconds = serializers.IntegerField(min_value=60, max_value=7 * 24 * 3600, required=False,
                                                          allow_null=True)
        status = serializers.ChoiceField(choices=[Campaign.Status.DRAFT, Campaign.Status.OPEN],
                                         default=Campaign.Status.DRAFT)

    @extend_schema(operation_id="campaigns_create", request=CampaignInput,
                   responses={201: CampaignOutput, **error_responses(404, 409)})
    def post(self, request):
        data = self.CampaignInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        values["task_set"] = get_object_or_404(TaskSet, pk=values["task_set"])
        campaign = services.campaign_create(created_by=request.user, **values)
        return Response(CampaignOutput(campaign).data, status=status.HTTP_201_CREATED)


class CampaignItemsImportApi(ApiView):
    """Import items from a JSONL file (admins): all or nothing, errors as ``file:line: field``."""

    permission_classes = [AdminOnly]
    parser_classes = [MultiPartParser, FormParser]

    class ItemsImportInput(serializers.Serializer):
        file = serializers.FileField(allow_empty_file=True)
        replace_changed = serializers.BooleanField(default=False)

    class ItemsImportOutput(serializers.Serializer):
        created = serializers.IntegerField()
        updated = serializers.IntegerField()

    @extend_schema(operation_id="campaigns_items_import", request={"multipart/form-data": ItemsImportInput},
                   responses={200: ItemsImportOutput, **error_responses(404)})
    def post(self, request, pk: int):
        campaign = _campaign(pk)
        data = self.ItemsImportInput(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        created, updated = item_creation.items_import_jsonl(campaign=campaign, name=upload.name, raw=upload.read(),
                                                       replace_changed=data.validated_data["replace_changed"])
        return Response({"created": len(created), "updated": len(updated)})


def _plain(value: Any) -> Any:
    """A dashboard value as JSON: dataclasses (with their properties) as objects, rows as their id,
    numpy numbers as numbers, NaN and infinities as null."""
    if isinstance(value, Model):
        return value.pk
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name, attr in vars(type(value)).items():
            if isinstance(attr, property) and not name.startswith("_"):
                out[name] = _plain(getattr(value, name))
        return out
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if value is None or isinstance(value, str):
        return str(value) if value is not None else None
    return str(value)


class CampaignDashboardApi(ApiView):
    """The dashboard's statistics as JSON: per-question consensus (Fleiss κ, Krippendorff α, completion),
    annotator quality, ICC, human-vs-judge agreement and the kind's extras — the numbers of the page."""

    @extend_schema(operation_id="campaigns_dashboard_retrieve",
                   responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="Dashboard statistics."),
                              **error_responses(404)})
    def get(self, request, pk: int):
        campaign = _campaign(pk)
        # the page's numbers, from the same cache (always equal to a full recompute; see dashboard_cache)
        return Response(_plain(campaign_dashboard_cached(campaign=campaign)))


class CampaignLabelsExportApi(ApiView):
    """Every label with its assignment metadata, JSONL or CSV (researchers: it names models)."""

    download_media_types = ("application/x-ndjson", "text/csv")

    class LabelsQuery(serializers.Serializer):
        fmt = serializers.ChoiceField(choices=["jsonl", "csv"], default="jsonl")

    @extend_schema(operation_id="campaigns_labels_export", parameters=[LabelsQuery],
                   responses={(200, "application/x-ndjson"): OpenApiTypes.STR, (200, "text/csv"): OpenApiTypes.STR,
                              **error_responses(404)})
    def get(self, request, pk: int):
        campaign = _campaign(pk)
        query = self.LabelsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        fmt = query.validated_data["fmt"]
        return text_download(label_export.labels_export(campaign=campaign, fmt=fmt), fmt,
                              f"campaign-{campaign.pk}-labels.{fmt}")


# ---------------------------------------------------------------- the annotator's queue (blinded)


class AnnotatorAccess(BasePermission):
    """The queue-level check of the one annotator gatekeeper, before any body is read (the operation then
    checks the campaign or assignment through the same gatekeeper, as the page's routes do)."""

    message = "Annotators only."

    def has_permission(self, request, view) -> bool:
        try:
            annotator_access_check(user=request.user)
        except NotAllowed as exc:
            self.message = exc.message
            return False
        return True


class _AnnotatorApi(api.NeverStoredApi, ApiView):
    """The annotator operations of :mod:`annotation.api`, refused in the API's one error shape."""

    permission_classes = [AnnotatorAccess]
    # Items handed out here carry media URLs of /api/v1/ itself, so a token client can fetch them with
    # the same Authorization header (the page's /annotate/media/ wants its session).
    media_route = "api:annotate_media"

    def handle_exception(self, exc):
        return APIView.handle_exception(self, exc)


@extend_schema_view(get=extend_schema(
    operation_id="annotate_media",
    description="An image of the annotator's own assignment, by the assignment's opaque token and the shown "
                "slot (the URLs items carry): PNG re-encoded from the pixels, flattened, no metadata. "
                "409 when it changed since hand-out or cannot be shown.",
    responses={(200, "image/png"): OpenApiTypes.BINARY, **error_responses(404, 409)}))
class AssignmentMediaApi(_AnnotatorApi):
    def perform_content_negotiation(self, request, force=False):
        # An image client asks for image/*: the body is a PNG whatever it accepts, refusals are JSON.
        return super().perform_content_negotiation(request, force=True)

    def get(self, request, token: str, slot: str):
        body, content_type = assignment_image(token=token, annotator=request.user, shown_slot=slot)
        response = HttpResponse(body, content_type=content_type)
        response["Cache-Control"] = "private, no-store"
        return response


class ProgressOutput(serializers.Serializer):
    """The annotator's own figures; no campaign-wide label count (gold items do not move it, so it would
    tell which items were gold)."""

    done = serializers.IntegerField(help_text="Items this annotator submitted, every kind of item included.")
    assigned = serializers.IntegerField()
    items_total = serializers.IntegerField(help_text="The most items this annotator can be given, gold items included (each regular item once).")


class AssignmentOutput(serializers.Serializer):
    """Blinded: the opaque token and the kind's shown content; no item, model, score, gold status or
    other label."""

    token = serializers.CharField()
    kind = serializers.CharField()
    expires_at = serializers.DateTimeField()
    content = serializers.DictField()


class NextItemOutput(serializers.Serializer):
    assignment = AssignmentOutput(allow_null=True)
    progress = ProgressOutput(required=False)


class SubmitOutput(serializers.Serializer):
    saved = serializers.BooleanField()
    replayed = serializers.BooleanField()
    progress = ProgressOutput()


class SkipOutput(serializers.Serializer):
    skipped = serializers.BooleanField()
    progress = ProgressOutput()


class ProgressOnlyOutput(serializers.Serializer):
    progress = ProgressOutput()


class NextItemInput(api.NextItemApi.Input):
    pass


class SubmitInput(api.SubmitApi.Input):
    pass


class SkipInput(api.SkipApi.Input):
    pass


@extend_schema_view(post=extend_schema(operation_id="annotate_next", request=NextItemInput,
                                       responses={200: NextItemOutput, **error_responses(404, 409)}))
class NextItemApi(_AnnotatorApi, api.NextItemApi):
    pass


@extend_schema_view(get=extend_schema(operation_id="annotate_progress",
                                      responses={200: ProgressOnlyOutput, **error_responses(404, 409)}))
class ProgressApi(_AnnotatorApi, api.ProgressApi):
    pass


class SubmitApi(_AnnotatorApi):
    """Store the label once; a re-sent submission (same ``idempotency_key``) returns the stored one (200)."""

    @extend_schema(operation_id="annotate_submit", request=SubmitInput,
                   responses={201: SubmitOutput, 200: SubmitOutput, **error_responses(404, 409)})
    def post(self, request, token: str):
        data = SubmitInput(data=request.data)
        data.is_valid(raise_exception=True)
        submission = services.label_submit(
            token=token, annotator=request.user, idempotency_key=data.validated_data["idempotency_key"],
            answer=data.validated_data["answer"], time_on_item_ms=data.validated_data.get("time_on_item_ms"),
        )
        progress = submission.progress or annotator_reads.campaign_progress(campaign=submission.label.campaign,
                                                                       annotator=request.user)
        return Response({"saved": True, "replayed": submission.replayed, "progress": progress.as_dict()},
                        status=status.HTTP_200_OK if submission.replayed else status.HTTP_201_CREATED)


@extend_schema_view(post=extend_schema(operation_id="annotate_skip", request=SkipInput,
                                       responses={200: SkipOutput, **error_responses(404, 409)}))
class SkipApi(_AnnotatorApi, api.SkipApi):
    pass



class PreviousLabelOutput(serializers.Serializer):
    """Blinded, like an assignment: the opaque token, the kind's shown content in the orientation the
    annotator saw, their own answer in the page's shape, the label's version. No item, model, gold
    status or other label."""

    token = serializers.CharField()
    kind = serializers.CharField()
    version = serializers.IntegerField(min_value=1)
    revisable = serializers.BooleanField()
    refusal = serializers.CharField(allow_blank=True, help_text="Why it may not be changed; empty when it may.")
    content = serializers.DictField(allow_null=True)
    answer = serializers.DictField(allow_null=True)


class PreviousOutput(serializers.Serializer):
    previous = PreviousLabelOutput(allow_null=True)


class ReviseInput(api.ReviseApi.Input):
    pass


class ReviseOutput(serializers.Serializer):
    saved = serializers.BooleanField()
    version = serializers.IntegerField(min_value=1, help_text="The label's version this request wrote or found.")
    changed = serializers.BooleanField(help_text="False: the answer is the one already stored; nothing was written.")
    replayed = serializers.BooleanField(help_text="True: a re-sent request (same idempotency_key); nothing was written.")


@extend_schema_view(get=extend_schema(operation_id="annotate_previous",
                                      responses={200: PreviousOutput, **error_responses(404, 409)}))
class PreviousLabelApi(_AnnotatorApi, api.PreviousLabelApi):
    pass


class ReviseApi(_AnnotatorApi):
    """Change the annotator's previous label: a new version (201); a re-sent request (same
    ``idempotency_key``) or the same answer again writes nothing (200). Refused (409) when the label is
    not their most recent in the campaign, the item changed or was withheld, or the campaign closed."""

    @extend_schema(operation_id="annotate_revise", request=ReviseInput,
                   responses={201: ReviseOutput, 200: ReviseOutput, **error_responses(404, 409)})
    def post(self, request, token: str):
        data = ReviseInput(data=request.data)
        data.is_valid(raise_exception=True)
        revision = label_revision.label_revise(
            token=token, annotator=request.user, idempotency_key=data.validated_data["idempotency_key"],
            answer=data.validated_data["answer"], time_on_item_ms=data.validated_data.get("time_on_item_ms"),
        )
        return Response(api.revision_body(revision),
                        status=status.HTTP_201_CREATED if revision.changed and not revision.replayed else status.HTTP_200_OK)


# ---------------------------------------------------------------- calibrated boards and judge cards (issue 24)


class SnapshotCalibratedApi(ApiView):
    """The calibrated views of a leaderboard snapshot: judge only, people only and calibrated by people
    per dimension (scores, 90 % intervals, simultaneous rank-sets, λ, effective human n, rank changes),
    the style-controlled fits with their coefficients, the label budget, and which labels (campaign,
    label version) they were computed from."""

    class CalibratedQuery(serializers.Serializer):
        campaign = IdField(required=False, min_value=1, max_value=2**31 - 1)

    @extend_schema(operation_id="leaderboards_calibrated_retrieve", parameters=[CalibratedQuery],
                   responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="The calibrated views."),
                              **error_responses(404)})
    def get(self, request, pk: int):
        from annotation import calibration
        from leaderboard.ekphrasis.models import LeaderboardSnapshot

        query = self.CalibratedQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        snapshot = get_object_or_404(LeaderboardSnapshot.objects.select_related("run"), pk=pk)
        wanted = query.validated_data.get("campaign")
        campaign = calibration.campaign_choice(calibration.text_campaigns_for(snapshot), wanted)
        if campaign is None:
            raise NotFound("No text-pairwise campaign on this snapshot's task set" + (f" with id {wanted}." if wanted else "."))
        record = calibration.calibration_record_ensure(snapshot=snapshot, campaign=campaign)
        return Response({"record": record.pk, "created_at": record.created_at, "code_version": record.code_version,
                         "method_version": record.method_version, **record.payload})


class C2RunCalibratedApi(ApiView):
    """A C² run's divergent U/O/S per model on the board's 0–100 scale: the rater alone, the people's
    mean, and calibrated by people (PPI++ mean, 90 % interval, λ, effective n), with the campaign and
    label version the columns were computed from."""

    @extend_schema(operation_id="c2_runs_calibrated_retrieve", parameters=[SnapshotCalibratedApi.CalibratedQuery],
                   responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="The calibrated columns."),
                              **error_responses(404)})
    def get(self, request, pk: int):
        from annotation import calibrated_columns, calibration
        from leaderboard.c2.models import C2Run

        query = SnapshotCalibratedApi.CalibratedQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        run = get_object_or_404(C2Run, pk=pk)
        wanted = query.validated_data.get("campaign")
        campaign = calibration.campaign_choice(calibrated_columns.uos_campaigns_for_run(run), wanted)
        if campaign is None:
            raise NotFound("No U-O-S rating campaign rates this run's samples" + (f" with id {wanted}." if wanted else "."))
        return Response(calibrated_columns.c2_run_calibrated(run=run, campaign=campaign))


class CampaignCalibratedApi(ApiView):
    """The calibrated columns of a U-O-S rating (C²: per model and component) or canvas-similarity
    (EASEL: per agent, the human preference rate calibrated by S's sign) campaign."""

    @extend_schema(operation_id="campaigns_calibrated_retrieve",
                   responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="The calibrated columns."),
                              **error_responses(404)})
    def get(self, request, pk: int):
        from annotation import calibrated_columns

        view = calibrated_columns.campaign_calibrated(_campaign(pk))
        if view is None:
            raise NotFound("Only U-O-S rating and canvas-similarity campaigns have calibrated columns.")
        return Response(view)


class JudgeCardListApi(ApiView):
    """One card per judge (agreement with people, position-flip rate, duplicate consistency,
    P(prefers longer), tie rate, cost and time per 1,000 judgements, λ when calibrated)."""

    @extend_schema(operation_id="judges_cards_list",
                   responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="Judge cards."),
                              **error_responses()})
    def get(self, request):
        from annotation.judge_card import judge_cards

        return Response({"results": [c.as_dict() for c in judge_cards()]})

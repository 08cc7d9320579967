"""The JSON API of the labelling page. One class per operation with its own input serializer;
domain errors become HTTP responses in one place (``AnnotationAPIView.handle_exception``).

Blinding: responses carry the opaque assignment token and the kind's shown content only
(see :func:`annotation.annotator_reads.assignment_present`).
"""

from __future__ import annotations

import json
import time

from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.functional import SimpleLazyObject, empty
from django.utils.http import http_date
from rest_framework import serializers, status
from rest_framework.exceptions import APIException
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import annotator_reads, label_revision, services
from annotation.access import annotator_access_check
from annotation.errors import AnnotationError, NotFound
from annotation.previous_label import previous_label_present


class NeverStoredApi:
    """Answers that carry an item, an annotator's label or their progress are never stored by a browser or a
    proxy (``Cache-Control: no-store``, as the item's images): a later user of the same browser, going Back
    after the annotator logged out, would otherwise be shown the item and the answer chosen on it."""

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        never_stored(response)
        return response


#: The ``Cache-Control`` Django's ``add_never_cache_headers`` writes on a response that had none.
NEVER_STORED = "max-age=0, no-cache, no-store, must-revalidate, private"


def never_stored(response) -> None:
    """``django.utils.cache.add_never_cache_headers(response)``: on a response without ``Cache-Control`` (every
    answer of these views) the two headers it writes, set directly (issue 30: Django parses and rebuilds the
    header twice, ~2 % of a combined label's Python calls); any other response goes through Django's."""
    if response.has_header("Cache-Control"):
        add_never_cache_headers(response)
        return
    if not response.has_header("Expires"):
        response.headers["Expires"] = http_date(time.time())
    response.headers["Cache-Control"] = NEVER_STORED


#: The renderers and Accept headers :meth:`AnnotationAPIView.perform_content_negotiation` answers itself.
_JSON_ONLY = [JSONRenderer]
_PLAIN_ACCEPTS = frozenset({"application/json", "*/*"})


class AnnotationAPIView(NeverStoredApi, APIView):
    #: The route of the media URLs in the items this view hands out: the page's, reached with its session
    #: (the /api/v1/ operations hand out their own, which accept the API token too).
    media_route = "annotation:media"

    def perform_authentication(self, request):
        """DRF's (``request.user``), then the user itself in place of the session middleware's lazy wrapper,
        for the view and the services (and Django's request): they read the user a few dozen times a label,
        and each read through the wrapper raised and swallowed an AttributeError before reaching it (issue
        30). The same user object either way."""
        user = request.user
        if isinstance(user, SimpleLazyObject) and user._wrapped is not empty:
            request.user = user._wrapped

    def perform_content_negotiation(self, request, force=False):
        """DRF's negotiation, answered at once for what the labelling page sends: one renderer, JSON, asked
        for as ``application/json`` or ``*/*`` (or no ``Accept``), no format suffix or ``?format=``. DRF's
        :class:`~rest_framework.negotiation.DefaultContentNegotiation` answers those ``(JSONRenderer(),
        "application/json")`` too, after parsing the header into media types and ranking them (~2 % of the
        framework's share of a label, issue 30). Any other request goes through DRF's. Only these fixed
        header values are recognised: no client input is kept."""
        if (
            self.renderer_classes == _JSON_ONLY
            and request._request.META.get("HTTP_ACCEPT", "*/*") in _PLAIN_ACCEPTS
            and "format_kwarg" in self.__dict__ and not self.format_kwarg
            and self.settings.URL_FORMAT_OVERRIDE not in request._request.GET
        ):
            return JSONRenderer(), JSONRenderer.media_type
        return super().perform_content_negotiation(request, force=force)

    def media_url_for(self, token: str):
        return lambda shown_slot: reverse(self.media_route, args=[token, shown_slot])

    def assignment_json(self, assignment) -> dict | None:
        if assignment is None:
            return None
        return annotator_reads.assignment_present(assignment=assignment, media_url=self.media_url_for(assignment.token))

    def handle_exception(self, exc):
        if isinstance(exc, AnnotationError):
            return Response(exc.as_dict(), status=exc.status)
        if isinstance(exc, PermissionDenied):
            return Response({"error": "not_allowed", "detail": str(exc) or "Not allowed."}, status=status.HTTP_403_FORBIDDEN)
        return super().handle_exception(exc)


def _campaign(pk: int):
    campaign = annotator_reads.campaign_get(pk=pk)
    if campaign is None:
        raise NotFound("No such campaign.")
    return campaign


class NextItemApi(AnnotationAPIView):
    """POST {progress?}: the annotator's current item, or the next one; ``assignment`` is null when
    none is left; ``progress`` unless the page asked for none."""

    class Input(serializers.Serializer):
        # The page sends {"progress": false} right after a submission, whose answer carried it.
        progress = serializers.BooleanField(required=False, default=True)

    def post(self, request, pk: int):
        wanted = self._body(request, pk)
        # The service runs the gatekeeper on the facts it reads under the annotator's lock.
        handed = services.item_next(campaign_id=pk, annotator=request.user)
        body = {"assignment": self.assignment_json(handed.assignment)}
        if wanted["progress"]:
            body["progress"] = handed.progress.as_dict()
        return Response(body)


    def _body(self, request, pk: int) -> dict:
        """The validated body; a malformed one assigns nothing, and access is refused before it is (a
        researcher hears "Annotators only" whatever the body)."""
        try:
            data = self.Input(data=request.data)
            if data.is_valid():
                return data.validated_data
            problem = serializers.ValidationError(data.errors)
        except APIException as exc:  # not JSON, not an object, too large
            problem = exc
        annotator_access_check(user=request.user, campaign=_campaign(pk))
        raise problem


class ProgressApi(AnnotationAPIView):
    def get(self, request, pk: int):
        campaign = _campaign(pk)
        annotator_access_check(user=request.user, campaign=campaign)
        return Response({"progress": annotator_reads.campaign_progress(campaign=campaign, annotator=request.user).as_dict()})


class AnswerInput(serializers.Serializer):
    """The body of a submission and of a change to one: the same answer, key and time on item."""

    idempotency_key = serializers.CharField(max_length=64)
    answer = serializers.JSONField()
    time_on_item_ms = serializers.JSONField(required=False, allow_null=True)

    @staticmethod
    def plain(data) -> dict | None:
        """The validated body of the usual submission (a JSON object whose key is a trimmed ASCII string
        of 1–64 characters, with an answer), as the serializer would give it, without building its fields
        (~80 µs of a label's CPU, issue 30); None for anything else, which the serializer then decides
        with its own messages."""
        if type(data) is not dict:
            return None
        key, answer = data.get("idempotency_key"), data.get("answer")
        if (type(key) is not str or not 0 < len(key) <= 64 or not key.isascii() or key.strip() != key
                or "\x00" in key or answer is None):
            return None
        validated = {"idempotency_key": key, "answer": answer}
        if "time_on_item_ms" in data:
            validated["time_on_item_ms"] = data["time_on_item_ms"]
        try:  # what the serializer's JSON fields check: the value can be written back as JSON
            json.dumps(answer)
            json.dumps(validated.get("time_on_item_ms"))
        except (TypeError, ValueError):
            return None
        return validated

    @classmethod
    def validated(cls, data) -> tuple[dict | None, dict | None]:
        """(the validated body, None), or (None, the serializer's errors by field). A subclass with fields
        of its own always goes through the serializer."""
        plain = cls.plain(data) if cls is AnswerInput else None
        if plain is not None:
            return plain, None
        checked = cls(data=data)
        if checked.is_valid():
            return checked.validated_data, None
        return None, checked.errors


class SubmitApi(AnnotationAPIView):
    """POST {idempotency_key, answer, time_on_item_ms}: store the label once; a re-sent submission
    returns the stored one (``replayed``).

    ``?next=1`` (issue 30, what the labelling page sends): submit and give me the next, in one request.
    The label is stored exactly as above (its own transaction, committed first), then the next item is
    taken as :class:`NextItemApi` takes it (its own transaction, the gatekeeper run again); the answer
    adds ``assignment`` (the next item, null when none is left) and its ``progress`` is the one after
    the take. A re-sent request replays the label and hands back the same next item (next-item returns
    the one the annotator holds). When the label was saved but the next take is refused (the
    annotator's access ended, busy), the answer is still the submission's, without ``assignment``, and
    carries ``next_error``: the page then asks for the next item on its own and shows why.
    """

    Input = AnswerInput

    def post(self, request, token: str):
        validated, errors = self.Input.validated(request.data)
        if errors is not None:
            return Response({"error": "invalid", "detail": "malformed submission", "fields": errors},
                            status=status.HTTP_400_BAD_REQUEST)
        submission = services.label_submit(
            token=token, annotator=request.user, idempotency_key=validated["idempotency_key"],
            answer=validated["answer"], time_on_item_ms=validated.get("time_on_item_ms"),
        )
        answered = status.HTTP_200_OK if submission.replayed else status.HTTP_201_CREATED
        body = {"saved": True, "replayed": submission.replayed}
        if request.query_params.get("next") == "1":
            return Response(self._with_next(body, request, submission), status=answered)
        progress = submission.progress or annotator_reads.campaign_progress(
            campaign=submission.label.campaign, annotator=request.user)
        return Response({**body, "progress": progress.as_dict()}, status=answered)

    def _with_next(self, body: dict, request, submission) -> dict:
        """The submission's answer with the next item (the label is committed whatever the take says)."""
        try:
            handed = services.item_next(campaign_id=submission.label.campaign_id, annotator=request.user)
        except (AnnotationError, PermissionDenied) as exc:
            refused = self.handle_exception(exc)
            progress = annotator_reads.campaign_progress(campaign=submission.label.campaign, annotator=request.user)
            return {**body, "progress": progress.as_dict(), "next_error": {**refused.data, "status": refused.status_code}}
        return {**body, "assignment": self.assignment_json(handed.assignment), "progress": handed.progress.as_dict()}


class SkipApi(AnnotationAPIView):
    class Input(serializers.Serializer):
        reason = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")

    def post(self, request, token: str):
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        assignment = services.assignment_skip(token=token, annotator=request.user, reason=data.validated_data["reason"])
        progress = annotator_reads.campaign_progress(campaign=assignment.campaign, annotator=request.user)
        return Response({"skipped": True, "progress": progress.as_dict()})


class PreviousLabelApi(AnnotationAPIView):
    """GET: the annotator's previous label in the campaign, to show and change (``previous`` is null
    when they have labelled nothing here; see :func:`annotation.previous_label.previous_label_present`)."""

    def get(self, request, pk: int):
        campaign = _campaign(pk)
        annotator_access_check(user=request.user, campaign=campaign)
        return Response({"previous": previous_label_present(campaign=campaign, annotator=request.user,
                                                            media_url_for=self.media_url_for)})


class ReviseApi(AnnotationAPIView):
    """POST {idempotency_key, answer, time_on_item_ms}: change the annotator's previous label (a new
    version, :func:`annotation.label_revision.label_revise`); 201 when a version was written, 200 when
    the request was a re-send or the answer is the one already stored."""

    Input = AnswerInput

    def post(self, request, token: str):
        data = self.Input(data=request.data)
        if not data.is_valid():
            return Response({"error": "invalid", "detail": "malformed change", "fields": data.errors},
                            status=status.HTTP_400_BAD_REQUEST)
        revision = label_revision.label_revise(
            token=token, annotator=request.user, idempotency_key=data.validated_data["idempotency_key"],
            answer=data.validated_data["answer"], time_on_item_ms=data.validated_data.get("time_on_item_ms"),
        )
        return Response(revision_body(revision), status=status.HTTP_201_CREATED if revision.changed and not revision.replayed
                        else status.HTTP_200_OK)


def revision_body(revision: label_revision.Revision) -> dict:
    """The answer to a change request: the version now stored, whether this request wrote it."""
    return {"saved": True, "version": revision.version, "changed": revision.changed, "replayed": revision.replayed}

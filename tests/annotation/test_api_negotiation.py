"""The annotator endpoints' content negotiation answers every request as DRF's own negotiation does
(annotation/api.py: AnnotationAPIView.perform_content_negotiation, an equivalence test against DRF's)."""

from __future__ import annotations

import itertools

import pytest
from rest_framework.exceptions import NotAcceptable
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from annotation.api import AnnotationAPIView, SubmitApi

ACCEPTS = [None, "application/json", "*/*", "", "application/json; indent=4", "application/json;q=0.5",
           "text/html", "application/*", "application/json, text/html", "text/html, */*", "APPLICATION/JSON",
           " application/json", "application/json ", "image/png", "*/*; q=0.1"]
QUERIES = ["", "format=json", "format=api", "format=xml", "format=", "next=1"]
SUFFIXES = [None, "json", "xml"]


def _negotiated(negotiate, view_class, accept, query, suffix, force):
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().post("/annotate/api/x" + (f"?{query}" if query else ""), **headers))
    view = view_class()
    view.format_kwarg = suffix
    try:
        renderer, media_type = negotiate(view, request, force=force)
    except Exception as exc:  # noqa: BLE001 — the refusal is part of the answer compared
        return type(exc), None
    return type(renderer), media_type


@pytest.mark.parametrize("view_class", [AnnotationAPIView, SubmitApi])
def test_the_negotiation_answers_as_drfs_for_every_accept_format_and_suffix(view_class):
    for accept, query, suffix, force in itertools.product(ACCEPTS, QUERIES, SUFFIXES, (False, True)):
        ours = _negotiated(view_class.perform_content_negotiation, view_class, accept, query, suffix, force)
        drfs = _negotiated(APIView.perform_content_negotiation, view_class, accept, query, suffix, force)
        assert ours == drfs, (accept, query, suffix, force)


def test_a_page_request_takes_the_short_answer_and_other_requests_do_not(monkeypatch):
    """The short answer is taken (DRF's negotiator is not asked) for the page's own Accept only."""
    asked = []
    original = APIView.perform_content_negotiation
    monkeypatch.setattr(APIView, "perform_content_negotiation",
                        lambda self, request, force=False: asked.append(1) or original(self, request, force=force))
    assert _negotiated(SubmitApi.perform_content_negotiation, SubmitApi, "application/json", "next=1", None, False)[1] \
        == "application/json"
    assert asked == []
    assert _negotiated(SubmitApi.perform_content_negotiation, SubmitApi, "text/html", "", None, False)[0] is NotAcceptable
    assert asked == [1]

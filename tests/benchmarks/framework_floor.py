"""The framework's own cost of an annotator's request, for ``bench_annotation_load``: a URLconf with one
view shaped like the annotator endpoints (an :class:`annotation.api.AnnotationAPIView`: DRF, the session
and the user, CSRF, every middleware of the site) that reads its JSON body and answers ``{}`` without
touching the database further. Its CPU per request is what no change inside the services can remove."""

from __future__ import annotations

from django.urls import path
from rest_framework.response import Response

from annotation.api import AnnotationAPIView


class NothingApi(AnnotationAPIView):
    def post(self, request):
        request.data  # noqa: B018 — parse the body as the real endpoints do
        return Response({})


urlpatterns = [path("annotate/api/nothing", NothingApi.as_view())]

"""``/api/v1/bundles/<kind>/<id>``: a leaderboard's reproducibility bundle as a download (researchers).

One operation per kind (``ekphrasis``: id of a snapshot, ``easel``: id of a task set, ``c2``: id of a
finished run), each the archive ``manage.py export_bundle`` writes and ``manage.py verify_bundle`` checks."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from leaderboard.api_contract import ApiView, error_body, error_responses
from leaderboard.bundles.export import BundleSigningUnavailable
from leaderboard.bundles.views import SIGNING_UNAVAILABLE, bundle_archive_download

WHAT = {"ekphrasis": "an Ekphrasis leaderboard snapshot", "easel": "an EASEL task set's leaderboard",
        "c2": "a finished C² run"}


def _download_api(kind: str) -> type[ApiView]:
    @extend_schema(operation_id=f"bundles_{kind}_download", summary=f"The reproducibility bundle of {WHAT[kind]}",
                   description=f"A .tar.gz: manifest, records, media, the board (JSON, CSV, LaTeX) and a static "
                               f"viewer; the id is that of {WHAT[kind]}.",
                   responses={(200, "application/gzip"): OpenApiTypes.BINARY, **error_responses(404, 503)})
    def get(self, request, pk: int):
        try:
            return bundle_archive_download(kind, pk)
        except BundleSigningUnavailable:
            # the API's error shape, as JSON (the page's download answers a plain-text 503)
            return Response(error_body("unavailable", SIGNING_UNAVAILABLE), status=503)

    return type(f"{kind.capitalize()}BundleDownloadApi", (ApiView,), {
        "get": get, "download_media_types": ("application/gzip",), "__doc__": f"Bundle of {WHAT[kind]}."})


EkphrasisBundleDownloadApi = _download_api("ekphrasis")
EaselBundleDownloadApi = _download_api("easel")
C2BundleDownloadApi = _download_api("c2")

"""``/api/v1/bundles/``: a leaderboard's reproducibility bundle as a download (researchers)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema

from leaderboard.api_contract import ApiView, error_responses
from leaderboard.bundles.export import KINDS
from leaderboard.bundles.views import bundle_archive_response


class BundleDownloadApi(ApiView):
    """The bundle of one board as a ``.tar.gz``: KIND ``ekphrasis`` (id: a snapshot), ``easel`` (id: a task set)
    or ``c2`` (id: a finished run) — the archive ``manage.py export_bundle`` writes, which
    ``manage.py verify_bundle`` checks offline."""

    @extend_schema(operation_id="bundles_download",
                   parameters=[OpenApiParameter("kind", str, OpenApiParameter.PATH, enum=list(KINDS))],
                   responses={(200, "application/gzip"): OpenApiTypes.BINARY, **error_responses(404)})
    def get(self, request, kind: str, pk: int):
        return bundle_archive_response(kind, pk)

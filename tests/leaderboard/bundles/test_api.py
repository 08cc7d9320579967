"""/api/v1/bundles/: a download the site cannot sign is refused in the API's error shape."""

from __future__ import annotations

import pytest

from leaderboard.bundles import views
from leaderboard.bundles.export import BundleSigningUnavailable

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("accept", ["*/*", "application/gzip"])
def test_a_bundle_that_cannot_be_signed_is_a_503_in_the_error_shape(token_client, rita, monkeypatch, accept):
    # it was the page's plain-text 503, which no operation's schema documents and no API client parses
    def unsigned(kind, pk, out):
        raise BundleSigningUnavailable("ATELIER_BUNDLE_SIGNING_KEY cannot be read")

    monkeypatch.setattr(views, "bundle_export", unsigned)
    response = token_client(rita).get("/api/v1/bundles/c2/1", HTTP_ACCEPT=accept)
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"error": "unavailable", "message": views.SIGNING_UNAVAILABLE, "details": {}}

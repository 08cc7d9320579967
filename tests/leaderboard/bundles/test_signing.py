"""leaderboard/bundles/signing.py and its page: the site's bundle-signing key and where reviewers get it."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from engine.bundle.signature import key_id, read_public_keys
from leaderboard.bundles.signing import site_signing_key, site_signing_key_id

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _own_key(settings, tmp_path):
    settings.ATELIER_BUNDLE_SIGNING_KEY = tmp_path / "var" / "bundle-signing-key.pem"


def test_the_published_key_is_the_public_half_of_the_key_that_signs(client):
    answer = client.get("/bundles/signing-key.pem")
    (published,) = read_public_keys(answer.content)
    assert key_id(published) == key_id(site_signing_key().public_key()) == site_signing_key_id()


def test_the_command_prints_the_published_key_and_its_id(client):
    out, err = io.StringIO(), io.StringIO()
    call_command("bundle_signing_key", stdout=out, stderr=err)
    assert out.getvalue() == client.get("/bundles/signing-key.pem").content.decode()
    assert site_signing_key_id() in err.getvalue()


def test_an_unreadable_key_file_is_a_503_page_and_a_command_error_not_a_500(client, settings, tmp_path):
    settings.ATELIER_BUNDLE_SIGNING_KEY.parent.mkdir(parents=True)
    settings.ATELIER_BUNDLE_SIGNING_KEY.write_text("not a key")
    answer = client.get("/bundles/signing-key.pem")
    assert answer.status_code == 503 and b"administrator" in answer.content
    assert b"not a key" not in answer.content and str(tmp_path).encode() not in answer.content
    with pytest.raises(CommandError, match="ATELIER_BUNDLE_SIGNING_KEY"):
        call_command("bundle_signing_key", stdout=io.StringIO(), stderr=io.StringIO())

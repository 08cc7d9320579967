"""The upload size limit (evalsite/upload_limits.py): every import path answers 413 over
ATELIER_MAX_UPLOAD_BYTES, in the site's error shape, and writes nothing."""

from __future__ import annotations

from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import RequestFactory
from rest_framework.test import APIClient

from annotation.models import Campaign
from leaderboard.api_tokens.services import api_token_create
from leaderboard.models import TaskSet
from tests.annotation.factories import Catalogue, pairwise_campaign

pytestmark = pytest.mark.django_db

LIMIT = 4096


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.ATELIER_MAX_UPLOAD_BYTES = LIMIT


def big_file(name: str = "tasks.jsonl") -> SimpleUploadedFile:
    line = b'{"id": "t1", "family": "abstraction", "brief": "' + b"x" * 200 + b'"}\n'
    return SimpleUploadedFile(name, line * 30)  # ~6.7 KB


def token_client(user) -> APIClient:
    _, secret = api_token_create(user=user, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def assert_api_413(response) -> None:
    assert response.status_code == 413, response.content[:300]
    body = response.json()
    assert set(body) == {"error", "message", "details"} and body["error"] == "upload_too_large"
    assert f"the limit is {LIMIT:,} bytes" in body["message"] and "ATELIER_MAX_UPLOAD_BYTES" in body["message"]


def test_an_api_task_import_over_the_limit_is_a_413_and_writes_nothing(adam):
    response = token_client(adam).post("/api/v1/task-sets/import", {"file": big_file(), "task_set": "big", "version": "1"},
                                       format="multipart")
    assert_api_413(response)
    assert not TaskSet.objects.filter(name="big").exists()


def test_an_api_task_import_under_the_limit_still_works(adam):
    small = SimpleUploadedFile("tasks.jsonl", b'{"id": "t1", "family": "abstraction", "brief": "A brief."}\n')
    response = token_client(adam).post("/api/v1/task-sets/import", {"file": small, "task_set": "small", "version": "1"},
                                       format="multipart")
    assert response.status_code == 200


def test_an_api_responses_import_over_the_limit_is_a_413(adam):
    task_set = Catalogue(n_tasks=1).task_set
    response = token_client(adam).post(f"/api/v1/task-sets/{task_set.pk}/responses/import",
                                       {"file": big_file("responses.jsonl")}, format="multipart")
    assert_api_413(response)


def test_an_api_c2_import_over_the_limit_is_a_413(adam):
    response = token_client(adam).post("/api/v1/c2/task-sets/import",
                                       {"file": big_file("wp.txt"), "fmt": "writingprompts", "task_set": "c2", "version": "1"},
                                       format="multipart")
    assert_api_413(response)


def test_an_api_items_import_over_the_limit_is_a_413(adam):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    before = campaign.items.count()
    response = token_client(adam).post(f"/api/v1/campaigns/{campaign.pk}/items/import", {"file": big_file("items.jsonl")},
                                       format="multipart")
    assert_api_413(response)
    assert campaign.items.count() == before


def test_the_admin_import_page_over_the_limit_is_a_413_page(client, adam):
    client.force_login(adam)
    response = client.post("/admin/leaderboard/taskset/import/", {
        "kind": "tasks", "tasks-file": big_file(), "tasks-task_set": "big", "tasks-version": "1", "tasks-benchmark": "ekphrasis"})
    assert response.status_code == 413
    assert b"Upload too large" in response.content and b"ATELIER_MAX_UPLOAD_BYTES" in response.content
    assert not TaskSet.objects.filter(name="big").exists()


def test_the_admin_items_import_over_the_limit_is_a_413_page(client, adam):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    client.force_login(adam)
    response = client.post(f"/admin/annotation/campaign/{campaign.pk}/import-items/", {"file": big_file("items.jsonl")})
    assert response.status_code == 413 and b"ATELIER_MAX_UPLOAD_BYTES" in response.content
    assert Campaign.objects.get(pk=campaign.pk).items.count() == 1


def test_the_construction_pool_upload_over_the_limit_is_a_413_page(client, adam):
    client.force_login(adam)
    response = client.post("/task-sets/pools/import/", {"name": "pool", "file": big_file("pool.csv")})
    assert response.status_code == 413


def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_read(client, adam):
    client.force_login(adam)
    # the header alone: the body is never parsed (here it is not even multipart)
    response = client.generic("POST", "/api/v1/task-sets/import", b"x" * (LIMIT + 1), content_type="text/plain")
    assert response.status_code == 413 and response.json()["error"] == "upload_too_large"


def test_the_streamed_file_bytes_are_capped_whatever_the_header_said(settings, adam):
    # Without the Content-Length middleware, the upload handler stops the files at the limit itself.
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != "evalsite.upload_limits.RefuseOversizedUploads"]
    response = token_client(adam).post("/api/v1/task-sets/import", {"file": big_file(), "task_set": "big", "version": "1"},
                                       format="multipart")
    assert_api_413(response)


def test_the_streamed_cap_on_a_page_is_a_413_page_not_a_500(settings, client, adam):
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if m != "evalsite.upload_limits.RefuseOversizedUploads"]
    client.force_login(adam)
    response = client.post("/admin/leaderboard/taskset/import/", {
        "kind": "tasks", "tasks-file": big_file(), "tasks-task_set": "big", "tasks-version": "1", "tasks-benchmark": "ekphrasis"})
    assert response.status_code == 413 and b"ATELIER_MAX_UPLOAD_BYTES" in response.content


def test_the_upload_handler_counts_chunks_across_files():
    from evalsite.upload_limits import CappedUploadHandler, UploadTooLarge

    handler = CappedUploadHandler(RequestFactory().post("/"))
    assert handler.receive_data_chunk(b"x" * 3000, 0) == b"x" * 3000
    with pytest.raises(UploadTooLarge):
        handler.receive_data_chunk(b"y" * 2000, 0)  # a second file: 5000 bytes in all


def test_form_fields_over_djangos_field_limit_are_a_413_not_a_400(settings, client, adam):
    # under the upload limit, over DATA_UPLOAD_MAX_MEMORY_SIZE: the import sent as a form field instead of a file
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = token_client(adam).post("/api/v1/task-sets/import", {"task_set": "x" * 2000, "version": "1"},
                                       format="multipart")
    assert response.status_code == 413 and response.json()["error"] == "upload_too_large"
    assert "send a large import as a file" in response.json()["message"]
    client.force_login(adam)
    page = client.post("/admin/leaderboard/taskset/import/", {"kind": "tasks", "tasks-task_set": "x" * 2000})
    assert page.status_code == 413 and b"DATA_UPLOAD_MAX_MEMORY_SIZE" in page.content


@pytest.mark.parametrize("length", ["abc", "1.5", "0x10", "-5", "+5", "1_000", "１２", " "])
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_content_length_that_is_not_a_number_of_bytes_is_a_400_before_any_view(client, rita, method, length):
    # django-prometheus (last middleware) read it with int(): 'abc' was a 500 on every URL under runserver,
    # which passes the header on as it came (gunicorn refuses it itself).
    from leaderboard.api_tokens.models import ApiToken

    client.force_login(rita)
    response = client.generic(method, "/account/api-tokens/", b"name=laptop", content_type="application/x-www-form-urlencoded",
                              CONTENT_LENGTH=length)
    assert response.status_code == 400
    assert f"The Content-Length header {length!r} is not a number of bytes" in unescape(response.content.decode())
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_header_sent_as_content_underscore_length_that_is_not_a_number_is_a_400_not_a_500(client, rita, method):
    # HTTP_CONTENT_LENGTH (a header named CONTENT_LENGTH or Content_Length, which a WSGI client or server may keep) is
    # what request.headers calls Content-Length too, and django-prometheus read it with int(): a 500.
    client.force_login(rita)
    response = client.generic(method, "/account/api-tokens/", b"name=laptop", content_type="application/x-www-form-urlencoded",
                              HTTP_CONTENT_LENGTH="v6")
    assert response.status_code == 400
    assert "The Content-Length header 'v6' is not a number of bytes" in unescape(response.content.decode())


@pytest.mark.parametrize("length", ["", "0", "11", " 11 "])
def test_a_content_length_of_digits_or_none_is_read(client, rita, length):
    client.force_login(rita)
    response = client.generic("POST", "/account/api-tokens/", b"name=laptop",
                              content_type="application/x-www-form-urlencoded", CONTENT_LENGTH=length)
    assert response.status_code == 200

"""The API contract's download header: a task set's name, any text an admin typed, names the file."""

from __future__ import annotations

import pytest

from leaderboard.api_contract import download_disposition
from tests.factories import PASSWORD, TaskFactory, TaskSetFactory


@pytest.mark.parametrize("filename,header", [
    ("vci-v1-tasks.csv", 'attachment; filename="vci-v1-tasks.csv"'),
    ('a"b-v1-tasks.csv', 'attachment; filename="a\\"b-v1-tasks.csv"'),  # the quote no longer ends the value
    ('x"; filename=evil.html', 'attachment; filename="x\\"; filename=evil.html"'),
    ("a\nb\r-v1.csv", 'attachment; filename="a_b_-v1.csv"'),
    ("a\u200bb\u202e.csv", 'attachment; filename="a_b_.csv"'),
    ("résumé–v1.csv", "attachment; filename*=utf-8''r%C3%A9sum%C3%A9%E2%80%93v1.csv"),  # RFC 6266, not =?utf-8?b?…?=
])
def test_a_download_names_its_file_in_one_well_formed_header_value(filename, header):
    assert download_disposition(filename) == header


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["two\nlines", "carriage\rreturn", 'a "quoted" set'])
def test_a_task_set_named_with_a_line_break_or_quote_exports_on_the_page_and_the_api(client, token_client, adam, name):
    task_set = TaskSetFactory(name=name, version="1")
    TaskFactory(task_set=task_set, external_id="t1")
    assert client.login(username=adam.username, password=PASSWORD)

    page = client.get(f"/task-sets/{task_set.pk}/export/tasks.csv")
    api = token_client(adam).get(f"/api/v1/task-sets/{task_set.pk}/export?what=tasks&fmt=csv")

    for response in (page, api):
        assert response.status_code == 200
        assert response["Content-Disposition"] == download_disposition(f"{name}-v1-tasks.csv")
        assert "\n" not in response["Content-Disposition"] and "\r" not in response["Content-Disposition"]
        assert response.content.decode().startswith("id,family,")


@pytest.mark.django_db
@pytest.mark.parametrize("fmt,accept,media_type", [
    ("csv", "text/csv", "text/csv"),
    ("jsonl", "application/x-ndjson", "application/x-ndjson"),
    ("csv", "text/*;q=0.9", "text/csv"),
    ("csv", "text/html, text/csv;q=0.5", "text/csv"),
])
def test_an_export_asked_for_with_its_own_media_type_is_served(token_client, rita, fmt, accept, media_type):
    # the schema documents 200 text/csv (application/x-ndjson), yet 'Accept: text/csv' was refused 406:
    # negotiation knew only the JSON renderer
    task_set = TaskSetFactory(name="vci", version="1")
    TaskFactory(task_set=task_set, external_id="t1")
    response = token_client(rita).get(f"/api/v1/task-sets/{task_set.pk}/export?what=tasks&fmt={fmt}",
                                      HTTP_ACCEPT=accept)
    assert response.status_code == 200
    assert response["Content-Type"].split(";")[0] == media_type


@pytest.mark.django_db
@pytest.mark.parametrize("accept", ["application/xml", "text/csv;q=0", "image/png"])
def test_an_export_refuses_an_accept_it_cannot_serve_in_the_error_shape(token_client, rita, accept):
    task_set = TaskSetFactory(name="vci", version="1")
    response = token_client(rita).get(f"/api/v1/task-sets/{task_set.pk}/export?fmt=csv", HTTP_ACCEPT=accept)
    assert response.status_code == 406
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"] == "not_acceptable"


@pytest.mark.django_db
def test_a_refusal_of_an_export_asked_for_as_csv_is_json_in_the_error_shape(token_client, rita):
    response = token_client(rita).get("/api/v1/task-sets/999999/export?fmt=csv", HTTP_ACCEPT="text/csv")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert set(response.json()) == {"error", "message", "details"}


@pytest.mark.django_db
def test_a_method_an_operation_lacks_is_a_405_and_spends_no_write_budget(token_client, rita, settings):
    from django.core.cache import cache

    cache.clear()
    settings.ATELIER_API_TOKEN_WRITE_RATE = "2/minute"
    client = token_client(rita)
    wrong = [client.put("/api/v1/task-sets/", {}, format="json") for _ in range(3)]
    assert [r.status_code for r in wrong] == [405, 405, 405]
    assert all(r["Allow"] == "GET, HEAD, OPTIONS" and r.json()["error"] == "method_not_allowed" for r in wrong)
    # the budget is still whole: two writes pass the throttle (refused for their empty body), the third is 429
    writes = [client.post("/api/v1/judge-runs/create", {}, format="json") for _ in range(3)]
    assert [r.status_code for r in writes] == [400, 400, 429]
    assert int(writes[2]["Retry-After"]) > 0 and writes[2].json()["error"] == "throttled"
    cache.clear()


@pytest.mark.django_db
@pytest.mark.parametrize("cursor", ["p=abc", "p=1.5", "p=", "p=1e5", "r=1&p=x", "p=99999999999999999999999"])
def test_a_forged_cursor_position_is_a_400_not_a_500(token_client, rita, cursor):
    import base64

    TaskSetFactory()
    response = token_client(rita).get("/api/v1/task-sets/", {"cursor": base64.b64encode(cursor.encode()).decode()})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid" and list(response.json()["details"]) == ["cursor"]


@pytest.mark.django_db
def test_the_next_cursor_of_a_list_still_pages(token_client, rita):
    for _ in range(3):
        TaskSetFactory()
    client = token_client(rita)
    first = client.get("/api/v1/task-sets/", {"page_size": 2}).json()
    second = client.get(first["next"]).json()
    assert len(first["results"]) == 2 and len(second["results"]) == 1
    assert {r["id"] for r in first["results"]}.isdisjoint(r["id"] for r in second["results"])


@pytest.fixture
def snapshot(db):
    from leaderboard.ekphrasis import judge_runs
    from tests.leaderboard.judging_factories import population, simulated_run

    task_set, models = population(n_models=3, n_tasks=2)
    return judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=6))


@pytest.mark.parametrize("url", ["/api/v1/leaderboards/{pk}/", "/api/v1/leaderboards/"])
def test_a_poll_with_the_weak_form_of_the_etag_or_a_star_is_a_304(token_client, rita, snapshot, url):
    # RFC 9110: If-None-Match compares weakly, so W/"x" (as a client echoes an ETag a compressing proxy
    # made weak) and * name the version held; they were answered 200 with the whole body
    client = token_client(rita)
    url = url.format(pk=snapshot.pk)
    etag = client.get(url)["ETag"]
    for held in (f"W/{etag}", f'"other", W/{etag}', "*"):
        assert client.get(url, HTTP_IF_NONE_MATCH=held).status_code == 304, held
    assert client.get(url, HTTP_IF_NONE_MATCH='W/"other"').status_code == 200


def test_no_module_of_the_site_writes_a_content_disposition_but_the_one_header_writer():
    # every text download goes through text_download / download_disposition (a name in a hand-written
    # f'filename="…"' once broke the header); FileResponse(filename=…) is Django's own writer
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    hand_written = re.compile(r"""\[["']Content-Disposition["']\]\s*=(?!\s*download_disposition\()""")
    found = [str(path.relative_to(root)) for package in ("annotation", "engine", "evalsite", "leaderboard")
             for path in (root / package).rglob("*.py") if hand_written.search(path.read_text(encoding="utf-8"))]
    assert found == []


@pytest.mark.parametrize("digits", ["٠١٢٣٤٥٦٧٨٩", "０１２３４５６７８９"])
def test_a_list_filtered_by_an_id_in_other_digits_is_a_400_naming_the_filter(token_client, rita, digits):
    # int() reads "١" as 1: the list was filtered by task set 1 for a value that is no id
    task_set = TaskSetFactory()
    client = token_client(rita)
    other = str(task_set.pk).translate(str.maketrans("0123456789", digits))
    response = client.get("/api/v1/campaigns/", {"task_set": other})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid" and list(response.json()["details"]) == ["task_set"]
    assert client.get("/api/v1/campaigns/", {"task_set": task_set.pk}).status_code == 200

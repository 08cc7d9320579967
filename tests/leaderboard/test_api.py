"""/api/v1/ catalogue and Ekphrasis operations: tokens, roles, the one error shape, imports, runs and
leaderboards."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from leaderboard.api_tokens.models import ApiToken
from leaderboard.api_tokens.services import api_token_create, api_token_revoke, token_digest
from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import JudgeRun
from leaderboard.models import SubjectModel, TaskSet
from tests.factories import SubjectModelFactory, TaskFactory, TaskSetFactory
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


def token_client(user) -> APIClient:
    _, secret = api_token_create(user=user, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def assert_error_shape(body: dict, code: str) -> None:
    assert set(body) == {"error", "message", "details"}
    assert body["error"] == code


# ---------------------------------------------------------------- tokens


def test_a_token_is_stored_only_as_its_sha256(rita):
    token, secret = api_token_create(user=rita, name="notebook")
    stored = ApiToken.objects.get(pk=token.pk)
    assert stored.key_sha256 == token_digest(secret)
    assert secret not in {stored.key_sha256, stored.prefix, stored.name}


def test_a_token_authenticates_as_its_user(rita):
    TaskSetFactory(name="visible")
    response = token_client(rita).get("/api/v1/task-sets/")
    assert response.status_code == 200
    assert [row["name"] for row in response.json()["results"]] == ["visible"]


def test_a_revoked_token_is_refused_with_401(rita):
    token, secret = api_token_create(user=rita, name="old")
    api_token_revoke(token=token)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    response = client.get("/api/v1/task-sets/")
    assert response.status_code == 401
    assert_error_shape(response.json(), "not_authenticated")


def test_no_credentials_get_401_in_the_error_shape(db):
    response = APIClient().get("/api/v1/task-sets/")
    assert response.status_code == 401
    assert_error_shape(response.json(), "not_authenticated")


def test_the_tokens_page_shows_a_new_secret_once(client, rita):
    client.force_login(rita)
    created = client.post("/account/api-tokens/", {"name": "script"})
    secret = created.context["secret"]
    assert secret.startswith("atl_") and secret in created.content.decode()
    assert secret not in client.get("/account/api-tokens/").content.decode()
    token = ApiToken.objects.get(user=rita)
    client.post(f"/account/api-tokens/{token.pk}/revoke")
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_a_user_cannot_revoke_another_users_token(client, rita, adam):
    token, _ = api_token_create(user=adam, name="admin's")
    client.force_login(rita)
    assert client.post(f"/account/api-tokens/{token.pk}/revoke").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


# ---------------------------------------------------------------- roles


def test_an_annotator_token_is_refused_researcher_reads_with_a_reason(alice):
    response = token_client(alice).get("/api/v1/task-sets/")
    assert response.status_code == 403
    body = response.json()
    assert_error_shape(body, "not_allowed")
    assert body["message"] == "Researchers only."


def test_a_researcher_cannot_import(rita):
    upload = SimpleUploadedFile("tasks.jsonl", b'{"id": "t1", "family": "abstraction", "brief": "b"}\n')
    response = token_client(rita).post("/api/v1/task-sets/import",
                                       {"file": upload, "task_set": "s", "version": "1"}, format="multipart")
    assert response.status_code == 403
    assert response.json()["message"] == "Admins only."


# ---------------------------------------------------------------- task sets


def test_an_admin_imports_tasks_through_the_catalogue_service(adam):
    upload = SimpleUploadedFile("tasks.jsonl", b'{"id": "t1", "family": "abstraction", "brief": "A brief."}\n')
    response = token_client(adam).post("/api/v1/task-sets/import",
                                       {"file": upload, "task_set": "fresh", "version": "1"}, format="multipart")
    assert response.status_code == 200, response.json()
    assert response.json()["created"] == 1
    assert TaskSet.objects.get(name="fresh").tasks.count() == 1


def test_a_bad_import_names_file_line_and_field_and_writes_nothing(adam):
    raw = b'{"id": "t1", "family": "abstraction", "brief": "ok"}\n{"id": "t2", "family": "nonsense", "brief": "x"}\n'
    upload = SimpleUploadedFile("tasks.jsonl", raw)
    response = token_client(adam).post("/api/v1/task-sets/import",
                                       {"file": upload, "task_set": "broken", "version": "1"}, format="multipart")
    assert response.status_code == 400
    body = response.json()
    assert_error_shape(body, "import_invalid")
    assert any(message.startswith("tasks.jsonl:2: field 'family'") for message in body["details"]["family"])
    assert not TaskSet.objects.filter(name="broken").exists()


def test_an_easel_task_file_is_a_400_naming_the_suite_command_and_writes_nothing(adam):
    upload = SimpleUploadedFile("tasks.jsonl", b'{"id": "t1", "family": "natural", "brief": "Paint it."}\n')
    response = token_client(adam).post("/api/v1/task-sets/import", {"file": upload, "task_set": "easel-file",
                                       "version": "1", "benchmark": "easel"}, format="multipart")
    assert response.status_code == 400
    assert_error_shape(response.json(), "import_invalid")
    assert "manage.py easel_suite" in response.json()["message"]
    assert not TaskSet.objects.filter(name="easel-file").exists()

def test_a_new_version_copies_the_tasks_unfrozen(adam):
    task_set = TaskSetFactory(name="base", frozen=True)
    TaskFactory(task_set=task_set, external_id="a")
    response = token_client(adam).post(f"/api/v1/task-sets/{task_set.pk}/versions", {"version": "2"}, format="json")
    assert response.status_code == 201
    new = TaskSet.objects.get(name="base", version="2")
    assert not new.frozen and list(new.tasks.values_list("external_id", flat=True)) == ["a"]


def test_an_existing_version_is_a_409_naming_the_field(adam):
    task_set = TaskSetFactory(name="base", version="1")
    response = token_client(adam).post(f"/api/v1/task-sets/{task_set.pk}/versions", {"version": "1"}, format="json")
    assert response.status_code == 409
    assert "version" in response.json()["details"]


def test_the_export_is_the_pages_file(rita, client):
    task_set = TaskSetFactory(name="exp")
    TaskFactory(task_set=task_set, external_id="e1")
    api = token_client(rita).get(f"/api/v1/task-sets/{task_set.pk}/export?what=tasks&fmt=csv")
    client.force_login(rita)
    page = client.get(f"/task-sets/{task_set.pk}/export/tasks.csv")
    assert api.status_code == 200 and api.content == page.content


def test_an_unknown_task_set_is_a_404_in_the_error_shape(rita):
    response = token_client(rita).get("/api/v1/task-sets/999999/")
    assert response.status_code == 404
    assert_error_shape(response.json(), "not_found")


def test_lists_filter_and_paginate_by_cursor(rita):
    for k in range(3):
        TaskSetFactory(name=f"many{k}")
    TaskSetFactory(name="demo-one", is_demo=True)
    client = token_client(rita)
    first = client.get("/api/v1/task-sets/?is_demo=false&page_size=2").json()
    assert len(first["results"]) == 2 and first["next"]
    second = client.get(first["next"]).json()
    names = {row["name"] for row in first["results"] + second["results"]}
    assert names == {"many0", "many1", "many2"}


def test_a_bad_filter_value_is_a_400_naming_the_field(rita):
    response = token_client(rita).get("/api/v1/task-sets/?benchmark=nope")
    assert response.status_code == 400
    assert "benchmark" in response.json()["details"]


# ---------------------------------------------------------------- subject models


def test_an_api_key_itself_is_refused_as_the_env_var_name(adam):
    response = token_client(adam).post("/api/v1/subject-models/create",
                                       {"display_name": "m", "api_key_env": "sk-live-123/abc"}, format="json")
    assert response.status_code == 400
    assert "api_key_env" in response.json()["details"]


def test_an_admin_creates_and_updates_a_subject_model(adam):
    client = token_client(adam)
    created = client.post("/api/v1/subject-models/create",
                          {"display_name": "new-model", "api_key_env": "NEW_MODEL_KEY", "role": "judge"}, format="json")
    assert created.status_code == 201
    pk = created.json()["id"]
    updated = client.patch(f"/api/v1/subject-models/{pk}/", {"family": "fam"}, format="json")
    assert updated.status_code == 200
    model = SubjectModel.objects.get(pk=pk)
    assert (model.family, model.api_key_env, model.role) == ("fam", "NEW_MODEL_KEY", "judge")


def test_a_taken_display_name_is_a_409(adam):
    SubjectModelFactory(display_name="taken")
    response = token_client(adam).post("/api/v1/subject-models/create", {"display_name": "taken"}, format="json")
    assert response.status_code == 409
    assert "display_name" in response.json()["details"]


@pytest.mark.parametrize("name", ["taken\u200b", "tak\u202een", "taken\u00ad", "a\tb"])
def test_a_display_name_with_an_invisible_character_is_refused_on_create_and_rename(adam, name):
    # as every import refuses it: "taken\u200b" was made a second model shown exactly as "taken"
    model = SubjectModelFactory(display_name="taken")
    client = token_client(adam)
    created = client.post("/api/v1/subject-models/create", {"display_name": name}, format="json")
    renamed = client.patch(f"/api/v1/subject-models/{model.pk}/", {"display_name": name}, format="json")
    for response in (created, renamed):
        assert response.status_code == 400
        assert "invisible character" in response.json()["details"]["display_name"][0]
    assert list(SubjectModel.objects.values_list("display_name", flat=True)) == ["taken"]


@pytest.mark.parametrize("look_alike", ["GP\u0422-4o", "GPT-4\u043e", "gpt\u20144O"])
def test_a_display_name_reading_as_an_existing_model_is_refused_on_create_and_rename(adam, look_alike):
    # Cyrillic capital Te, Cyrillic small o, an em dash with case
    SubjectModelFactory(display_name="GPT-4o")
    other = SubjectModelFactory(display_name="other")
    client = token_client(adam)
    created = client.post("/api/v1/subject-models/create", {"display_name": look_alike}, format="json")
    renamed = client.patch(f"/api/v1/subject-models/{other.pk}/", {"display_name": look_alike}, format="json")
    for response in (created, renamed):
        assert response.status_code == 409
        message = response.json()["details"]["display_name"]
        assert "the existing model 'GPT-4o'" in str(message)
    assert sorted(SubjectModel.objects.values_list("display_name", flat=True)) == ["GPT-4o", "other"]


def test_a_model_is_renamed_to_a_look_alike_of_its_own_name_and_non_latin_names_are_created(adam):
    model = SubjectModelFactory(display_name="Claude")
    client = token_client(adam)
    renamed = client.patch(f"/api/v1/subject-models/{model.pk}/", {"display_name": "Cl\u0430ude"}, format="json")
    assert renamed.status_code == 200, renamed.json()
    for name in ("\u6587\u5fc3\u4e00\u8a00", "\u0413\u0438\u0433\u0430\u0427\u0430\u0442", "\u03a3\u03bf\u03c6\u03af\u03b1"):
        created = client.post("/api/v1/subject-models/create", {"display_name": name}, format="json")
        assert created.status_code == 201, (name, created.json())


# ---------------------------------------------------------------- judge runs and leaderboards


def test_a_researcher_starts_a_judge_run_and_sees_its_status(rita, django_capture_on_commit_callbacks):
    task_set, _ = population(n_models=3, n_tasks=2)
    client = token_client(rita)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        response = client.post("/api/v1/judge-runs/create",
                               {"task_set": task_set.pk, "judge": "simulated", "dimensions": "U", "budget_per_task": 3,
                                "novelty_anchor": "generic"}, format="json")
    assert response.status_code == 201, response.json()
    assert len(queued) == 1  # queued on commit, as the page does
    run_id = response.json()["run"]["id"]
    detail = client.get(f"/api/v1/judge-runs/{run_id}/").json()
    assert detail["progress"]["status"] == "pending" and detail["progress"]["tasks_total"] == 2


def test_a_run_configuration_error_is_a_400_with_the_services_message(rita):
    task_set = TaskSetFactory(name="empty")
    response = token_client(rita).post("/api/v1/judge-runs/create", {"task_set": task_set.pk}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert_error_shape(body, "run_invalid")
    assert "fewer than two subject models" in body["message"]


def test_a_judge_run_on_a_task_set_of_another_kind_is_a_400_naming_both_kinds(rita):
    from tests.factories import BenchmarkFactory

    other = TaskSetFactory(name="c2-set", benchmark=BenchmarkFactory(kind="c2", name="C²"))
    response = token_client(rita).post("/api/v1/judge-runs/create", {"task_set": other.pk}, format="json")
    assert response.status_code == 400
    assert_error_shape(response.json(), "run_invalid")
    assert "is of benchmark kind C², but Ekphrasis runs take only Ekphrasis task sets" in response.json()["message"]
    assert not JudgeRun.objects.exists()


def test_cancel_marks_a_live_run_failed_and_resume_accepts_it(rita, django_capture_on_commit_callbacks):
    task_set, models = population(n_models=3, n_tasks=1)
    run = simulated_run(task_set, models, budget=3)
    client = token_client(rita)
    cancelled = client.post(f"/api/v1/judge-runs/{run.pk}/cancel")
    assert cancelled.status_code == 200
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FAILED and run.error.startswith("cancelled")
    assert client.post(f"/api/v1/judge-runs/{run.pk}/cancel").status_code == 409
    with django_capture_on_commit_callbacks(execute=True) as queued:
        assert client.post(f"/api/v1/judge-runs/{run.pk}/resume").status_code == 202
    assert len(queued) == 1


def test_a_cancelled_run_resumed_through_the_api_ends_done_with_its_error_cleared(rita, django_capture_on_commit_callbacks):
    task_set, models = population(n_models=3, n_tasks=2)
    run = simulated_run(task_set, models, budget=3)
    client = token_client(rita)
    assert client.post(f"/api/v1/judge-runs/{run.pk}/cancel").status_code == 200
    with django_capture_on_commit_callbacks(execute=True):  # the queued dispatch runs (eagerly: no broker)
        assert client.post(f"/api/v1/judge-runs/{run.pk}/resume").status_code == 202
    progress = client.get(f"/api/v1/judge-runs/{run.pk}/").json()["progress"]
    assert progress["status"] == "done" and progress["error"] == ""
    assert progress["snapshot"] is not None


def test_resume_of_a_pending_run_is_a_409(rita):
    task_set, models = population(n_models=3, n_tasks=1)
    run = simulated_run(task_set, models, budget=3)
    response = token_client(rita).post(f"/api/v1/judge-runs/{run.pk}/resume")
    assert response.status_code == 409
    assert_error_shape(response.json(), "conflict")


@pytest.fixture
def snapshot(db):
    task_set, models = population(n_models=3, n_tasks=2)
    run = simulated_run(task_set, models, budget=6)
    return judge_runs.judge_run_execute_inline(run=run)


def test_snapshot_detail_has_the_pages_numbers(rita, snapshot):
    from engine.leaderboard_exports import model_rows
    from leaderboard.ekphrasis import results

    body = token_client(rita).get(f"/api/v1/leaderboards/{snapshot.pk}/").json()
    expected = model_rows(snapshot.payload)
    assert [row["name"] for row in body["rows"]] == [row.name for row in expected]
    assert [row["overall"] for row in body["rows"]] == [row.overall for row in expected]
    assert body["family_rows"] == results.family_rows(snapshot.payload)


def test_an_unchanged_snapshot_answers_304_to_its_etag(rita, snapshot):
    client = token_client(rita)
    first = client.get(f"/api/v1/leaderboards/{snapshot.pk}/")
    again = client.get(f"/api/v1/leaderboards/{snapshot.pk}/", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304


def test_the_snapshot_list_etag_changes_when_a_snapshot_is_added(rita, snapshot):
    client = token_client(rita)
    etag = client.get("/api/v1/leaderboards/")["ETag"]
    assert client.get("/api/v1/leaderboards/", HTTP_IF_NONE_MATCH=etag).status_code == 304
    judge_runs.judge_run_execute_inline(run=simulated_run(snapshot.run.task_set, list(SubjectModel.objects.all()),
                                                          budget=3, seed=9))
    assert client.get("/api/v1/leaderboards/", HTTP_IF_NONE_MATCH=etag).status_code == 200


def test_a_snapshot_edited_by_hand_is_a_new_etag_in_the_list_and_on_its_own(rita, snapshot):
    """No snapshot added: its payload edited (the shell, a data fix) and saved."""
    client = token_client(rita)
    listed = client.get("/api/v1/leaderboards/")["ETag"]
    alone = client.get(f"/api/v1/leaderboards/{snapshot.pk}/")["ETag"]
    snapshot.payload = {**snapshot.payload, "n_boot": int(snapshot.payload.get("n_boot", 1000)) + 1}
    snapshot.save()
    assert client.get("/api/v1/leaderboards/", HTTP_IF_NONE_MATCH=listed).status_code == 200
    assert client.get(f"/api/v1/leaderboards/{snapshot.pk}/", HTTP_IF_NONE_MATCH=alone).status_code == 200


def test_compare_and_export(rita, snapshot):
    client = token_client(rita)
    compared = client.get(f"/api/v1/leaderboards/compare?a={snapshot.pk}&b={snapshot.pk}").json()
    assert all(row["rank_change"] == 0 for row in compared["rows"])
    exported = client.get(f"/api/v1/leaderboards/{snapshot.pk}/export?fmt=csv")
    assert exported.status_code == 200 and exported["Content-Type"].startswith("text/csv")


def test_comparisons_of_a_run_are_paginated(rita, snapshot):
    body = token_client(rita).get(f"/api/v1/judge-runs/{snapshot.run_id}/comparisons/?page_size=5").json()
    assert len(body["results"]) == 5 and body["next"]


def test_comparisons_of_a_run_filter_by_kind_and_refuse_an_unknown_kind(rita, snapshot):
    client = token_client(rita)
    url = f"/api/v1/judge-runs/{snapshot.run_id}/comparisons/"
    primary = client.get(url, {"kind": "primary", "page_size": 500}).json()["results"]
    assert primary and {c["kind"] for c in primary} == {"primary"}
    assert client.get(url, {"kind": "nope"}).status_code == 400


# ---------------------------------------------------------------- throttling


def test_token_writes_are_throttled_at_the_configured_rate(rita, settings):
    from django.core.cache import cache

    cache.clear()
    settings.ATELIER_API_TOKEN_WRITE_RATE = "2/minute"
    client = token_client(rita)
    statuses = [client.post("/api/v1/judge-runs/create", {}, format="json").status_code for _ in range(3)]
    assert statuses == [400, 400, 429]
    assert client.get("/api/v1/task-sets/").status_code == 200  # reads are not throttled
    cache.clear()


# ---------------------------------------------------------------- the admin


def test_an_admin_creates_a_token_in_the_admin_and_sees_the_secret_once(client, adam, rita):
    client.force_login(adam)
    response = client.post("/admin/api_tokens/apitoken/add/", {"user": rita.pk, "name": "for rita"}, follow=True)
    token = ApiToken.objects.get(user=rita)
    shown = [str(m) for m in response.context["messages"]]
    secret = next(word for m in shown for word in m.split() if word.startswith("atl_"))
    assert token.key_sha256 == token_digest(secret)
    assert secret not in client.get(f"/admin/api_tokens/apitoken/{token.pk}/change/").content.decode()


def test_the_docs_page_loads_its_assets_from_static_files(client, rita):
    client.force_login(rita)
    body = client.get("/api/v1/docs/").content.decode()
    assert "/static/drf_spectacular_sidecar/" in body
    assert "<script>" not in body and "<style>" not in body


@pytest.mark.parametrize("url", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_the_docs_pages_name_their_language(client, rita, url):
    # <html> had no lang (WCAG 3.1.1, axe's html-has-lang): a screen reader guessed the language.
    client.force_login(rita)
    assert '<html lang="en">' in client.get(url).content.decode()


def test_list_queries_do_not_grow_with_the_rows(rita, django_assert_max_num_queries):
    client = token_client(rita)
    TaskSetFactory(name="first")
    client.get("/api/v1/task-sets/")  # warm: token lookup, content types
    with django_assert_max_num_queries(6) as few:
        client.get("/api/v1/task-sets/")
    for k in range(8):
        TaskFactory(task_set=TaskSetFactory(name=f"more{k}"))
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert len(client.get("/api/v1/task-sets/").json()["results"]) == 9


def test_only_the_docs_pages_allow_data_images(client, rita):
    client.force_login(rita)
    docs = client.get("/api/v1/docs/")["Content-Security-Policy"]
    tokens = client.get("/account/api-tokens/")["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in docs.split(";"))
    assert directives["img-src"] == "'self' blob: data:" and directives["script-src"] == "'self'"
    assert "data:" not in tokens

"""Role access: login everywhere, and each role reaches only its pages."""

import pytest

from tests.factories import PASSWORD, BenchmarkFactory, SubjectModelFactory, TaskFactory, TaskSetFactory

pytestmark = pytest.mark.django_db

RESEARCHER_PAGES = ["/task-sets/", "/leaderboards/", "/annotate/campaigns/"]


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.mark.parametrize("url", ["/", "/task-sets/", "/annotate/", "/leaderboards/"])
def test_anonymous_visitor_is_sent_to_login(client, url):
    response = client.get(url)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_login_page_is_public(client):
    assert client.get("/accounts/login/").status_code == 200


@pytest.mark.parametrize("url", RESEARCHER_PAGES)
def test_annotator_is_forbidden_researcher_pages(client, alice, url):
    assert login(client, alice).get(url).status_code == 403


def test_annotator_is_kept_out_of_django_admin(client, alice):
    response = login(client, alice).get("/admin/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


@pytest.mark.parametrize("url", RESEARCHER_PAGES)
def test_researcher_reaches_researcher_pages(client, rita, url):
    assert login(client, rita).get(url).status_code == 200


def test_researcher_is_kept_out_of_django_admin(client, rita):
    assert login(client, rita).get("/admin/").status_code == 302


def test_admin_reaches_django_admin_and_import_page(client, adam):
    login(client, adam)
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/leaderboard/taskset/import/").status_code == 200


def test_home_links_only_to_what_the_role_may_do(client, alice):
    body = login(client, alice).get("/").content.decode()
    assert "My work" in body and "Leaderboards" not in body


def test_admin_upload_page_imports_through_the_same_service(client, adam):
    import io

    login(client, adam)
    upload = io.BytesIO(b'{"id": "a1", "family": "abstraction", "brief": "Express time."}\n')
    upload.name = "tasks.jsonl"
    response = client.post(
        "/admin/leaderboard/taskset/import/",
        {"kind": "tasks", "tasks-file": upload, "tasks-task_set": "up", "tasks-version": "1", "tasks-benchmark": "ekphrasis"},
    )
    assert response.status_code == 302
    from leaderboard.models import Task

    assert Task.objects.filter(external_id="a1", task_set__name="up").exists()


def test_admin_upload_page_shows_errors_with_line_and_field(client, adam):
    import io

    login(client, adam)
    upload = io.BytesIO(b'{"id": "a1", "family": "mosaic", "brief": "Express time."}\n')
    upload.name = "tasks.jsonl"
    response = client.post(
        "/admin/leaderboard/taskset/import/",
        {"kind": "tasks", "tasks-file": upload, "tasks-task_set": "up", "tasks-version": "1", "tasks-benchmark": "ekphrasis"},
    )
    assert response.status_code == 200
    assert "tasks.jsonl:1: field &#x27;family&#x27;" in response.content.decode()


def test_the_model_admin_says_the_api_key_field_holds_a_variable_name_not_the_key(client, adam):
    body = login(client, adam).get("/admin/leaderboard/subjectmodel/add/").content.decode()
    assert "The NAME of the environment variable holding the key" in body


def _upload(content: bytes, name: str):
    import io

    upload = io.BytesIO(content)
    upload.name = name
    return upload


def test_admin_import_page_shows_the_format_and_goes_to_the_imported_set(client, adam):
    from leaderboard.models import TaskSet

    login(client, adam)
    page = client.get("/admin/leaderboard/taskset/import/").content.decode()
    assert '"family": "abstraction"' in page and "Create models" in page
    response = client.post("/admin/leaderboard/taskset/import/", {
        "kind": "tasks", "tasks-file": _upload(b'{"id": "a1", "family": "abstraction", "brief": "Express time."}\n', "t.jsonl"),
        "tasks-task_set": "landing", "tasks-version": "1", "tasks-benchmark": "ekphrasis"})
    task_set = TaskSet.objects.get(name="landing")
    assert response.status_code == 302 and response["Location"] == f"/admin/leaderboard/taskset/{task_set.pk}/change/"


def test_admin_import_reports_every_error_of_a_line_and_names_the_checkbox(client, adam):
    login(client, adam)
    client.post("/admin/leaderboard/taskset/import/", {
        "kind": "tasks", "tasks-file": _upload(b'{"id": "a1", "family": "abstraction", "brief": "Express time."}\n', "t.jsonl"),
        "tasks-task_set": "errs", "tasks-version": "1", "tasks-benchmark": "ekphrasis"})
    body = client.post("/admin/leaderboard/taskset/import/", {
        "kind": "tasks", "tasks-task_set": "errs2", "tasks-version": "1", "tasks-benchmark": "ekphrasis",
        "tasks-file": _upload(b'{"id": "b1", "family": "abstraction", "brief": "One."}\n'
                              b'{"id": "b1", "family": "mosaic", "brief": "Two."}\n', "t.jsonl")}).content.decode()
    assert "t.jsonl:2: field &#x27;family&#x27;" in body and "t.jsonl:2: field &#x27;id&#x27;" in body
    from leaderboard.models import TaskSet

    body = client.post("/admin/leaderboard/taskset/import/", {
        "kind": "responses", "responses-task_set": TaskSet.objects.get(name="errs").pk,
        "responses-file": _upload(b'{"task_id": "a1", "model": "stranger", "sample": 1, "core_idea": "x", "visual_description": "y"}\n',
                                  "r.jsonl")}).content.decode()
    assert "tick “Create models” on this page" in body and "--create-models" not in body


def test_the_campaign_annotator_inline_has_a_real_heading(client, adam):
    body = login(client, adam).get("/admin/annotation/campaign/add/").content.decode()
    assert "Annotators this campaign is open to" in body and "open tos" not in body.lower()


def test_the_admin_render_page_links_its_image_through_the_render_view_not_media(client, adam, settings, tmp_path):
    from django.core.files.base import ContentFile

    from leaderboard.models import Render
    from tests.factories import ResponseFactory

    settings.MEDIA_ROOT = str(tmp_path)
    response = ResponseFactory()
    render = Render.objects.create(response=response, image=ContentFile(b"\x89PNG\r\n\x1a\n", name="r.png"),
                                   image_sha256="0" * 64, renderer="demo", seed=1)
    login(client, adam)
    body = client.get(f"/admin/leaderboard/render/{render.pk}/change/").content.decode()
    link = f"/task-sets/{response.task.task_set_id}/renders/{render.pk}/image"
    assert link in body and 'href="/media/' not in body
    assert client.get(link).status_code == 200


def test_a_compare_choice_of_non_ascii_digits_is_a_400_not_a_500(client, rita):
    # "²" passes str.isdigit() but int() refuses it
    model = SubjectModelFactory()
    assert login(client, rita).get(f"/models/{model.pk}/compare/?other=%C2%B2").status_code == 400


@pytest.mark.parametrize(("kind", "name", "page"), [("c2", "C²-Eval", "/c2/"), ("easel", "EASEL", "/easel/")])
def test_an_easel_or_c2_task_set_page_links_its_protocol_page_and_offers_no_ekphrasis_only_tools(
        client, rita, kind, name, page):
    # The page offered a TIG build (refused on submit), an empty length-diagnostics card, renders and an
    # "Idea graph" per task whose page read "every sample of 0 model(s) ()".
    task_set = TaskSetFactory(benchmark=BenchmarkFactory(kind=kind, name=name))
    task = TaskFactory(task_set=task_set, family="qa")
    body = login(client, rita).get(f"/task-sets/{task_set.pk}/").content.decode()
    assert f'href="{page}"' in body and task.external_id in body
    for ekphrasis_only in ("Typed Idea Graphs", ">Idea graph<", "Length diagnostics (", "/renders/", "tig-builds/new"):
        assert ekphrasis_only not in body
    viewer = client.get(f"/task-sets/{task_set.pk}/tig/{task.pk}/")
    assert viewer.status_code == 404 and "Ekphrasis task sets only" in viewer.content.decode()


@pytest.mark.parametrize(("kind", "name"), [("c2", "C²-Eval"), ("easel", "EASEL")])
def test_the_renders_page_of_an_easel_or_c2_task_set_says_renders_are_ekphrasis_only(client, rita, kind, name):
    # it showed an empty renders page inviting `generate_renders --task-set …`, which has no responses to render
    task_set = TaskSetFactory(benchmark=BenchmarkFactory(kind=kind, name=name))
    response = login(client, rita).get(f"/task-sets/{task_set.pk}/renders/")
    assert response.status_code == 404 and "Ekphrasis task sets only" in response.content.decode()
    assert "generate_renders" not in response.content.decode()


def test_an_ekphrasis_task_set_page_keeps_its_idea_graphs_and_length_diagnostics(client, rita):
    task = TaskFactory()
    body = login(client, rita).get(f"/task-sets/{task.task_set.pk}/").content.decode()
    assert "Typed Idea Graphs" in body and "Length diagnostics" in body
    assert f"/task-sets/{task.task_set.pk}/tig/{task.pk}/" in body and f"/task-sets/{task.task_set.pk}/renders/" in body

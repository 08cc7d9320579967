"""Renders of the grounding subset (Ekphrasis App. I.1): manifest imports (every error class names file,
line and field and leaves database and media storage as they were), generation through the fake
OpenAI-compatible images endpoint (resumable, prompt from the two plan fields only), and the
researchers' renders page."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.choices import CampaignKind
from engine.render_prompt import rendering_prompt
from leaderboard.ekphrasis.renders import RenderConfigurationError, renders_generate, renders_import_manifest
from leaderboard.import_contract import ImportFailed
from leaderboard.models import Render, Response, SubjectModel
from tests.annotation.factories import Catalogue, RenderFactory, campaign_for
from tests.factories import PASSWORD, ResponseFactory, SubjectModelFactory, TaskFactory, TaskSetFactory
from tests.fakes import FakeOpenAIServer, Fault, deterministic_png

pytestmark = pytest.mark.django_db

MODELS = ("Vesper-Model-One", "Lumen-Model-Two")


@pytest.fixture
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def catalogue(media_root):
    """Two tasks × two models, sample 1 primary; the first model also has a sample 2."""
    task_set = TaskSetFactory(name="grounding")
    tasks = [TaskFactory(task_set=task_set, external_id=f"g{k}") for k in (1, 2)]
    models = [SubjectModelFactory(display_name=name) for name in MODELS]
    responses = [ResponseFactory(task=t, subject_model=m) for t in tasks for m in models]
    responses.append(ResponseFactory(task=tasks[0], subject_model=models[0], sample=2))
    return task_set


def image_file(directory: Path, name: str, seed: int) -> bytes:
    data = deterministic_png(name, seed)
    (directory / name).parent.mkdir(parents=True, exist_ok=True)
    (directory / name).write_bytes(data)
    return data


def good_rows(directory: Path) -> list[dict]:
    rows = []
    for k, (task, model) in enumerate([("g1", MODELS[0]), ("g1", MODELS[1]), ("g2", MODELS[0])]):
        image_file(directory, f"images/{k}.png", k)
        rows.append({"task_id": task, "model": model, "sample": 1, "image": f"images/{k}.png",
                     "renderer": "flux-dev", "seed": 42, "prompt": f"prompt {k}"})
    return rows


def write_manifest(directory: Path, rows: list[dict], fmt: str = "jsonl") -> Path:
    path = directory / f"manifest.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=["task_id", "model", "sample", "image", "renderer", "seed", "prompt"])
        writer.writeheader()
        writer.writerows(rows)
        path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


def import_manifest(path: Path, task_set):
    return renders_import_manifest(name=str(path), raw=path.read_bytes(), task_set=task_set, base_dir=path.parent)


def stored_files(media_root) -> list[Path]:
    return sorted(p for p in Path(media_root).rglob("*") if p.is_file())


def snapshot(media_root):
    return (
        list(Render.objects.order_by("pk").values_list("response_id", "renderer", "seed", "image_sha256", "prompt")),
        stored_files(media_root),
    )


# ---------------------------------------------------------------- import


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_import_stores_each_render_under_its_content_hash(catalogue, tmp_path, media_root, fmt):
    rows = good_rows(tmp_path)
    summary = import_manifest(write_manifest(tmp_path, rows, fmt), catalogue)
    assert (summary.created, summary.unchanged) == (3, 0)
    render = Render.objects.get(response__task__external_id="g1", response__subject_model__display_name=MODELS[1])
    data = (tmp_path / "images/1.png").read_bytes()
    assert (render.renderer, render.seed, render.prompt, render.is_placeholder) == ("flux-dev", 42, "prompt 1", False)
    assert render.image_sha256 == hashlib.sha256(data).hexdigest()
    with render.image.open("rb") as handle:
        assert handle.read() == data
    file_name = render.image.name.rsplit("/", 1)[-1]
    assert file_name == f"{render.image_sha256}.png"
    for render in Render.objects.all():
        lowered = render.image.name.lower()
        assert not any(s.lower() in lowered for s in (*MODELS, "g1", "g2", "flux", "images/"))


def test_the_prompt_is_optional(catalogue, tmp_path):
    rows = good_rows(tmp_path)[:1]
    del rows[0]["prompt"]
    import_manifest(write_manifest(tmp_path, rows), catalogue)
    assert Render.objects.get().prompt == ""


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_reimporting_the_same_manifest_changes_nothing(catalogue, tmp_path, media_root, fmt):
    path = write_manifest(tmp_path, good_rows(tmp_path), fmt)
    import_manifest(path, catalogue)
    before = snapshot(media_root)
    summary = import_manifest(path, catalogue)
    assert (summary.created, summary.unchanged) == (0, 3)
    assert snapshot(media_root) == before


def test_a_manifest_adding_renders_keeps_the_existing_ones(catalogue, tmp_path):
    rows = good_rows(tmp_path)
    import_manifest(write_manifest(tmp_path, rows[:2]), catalogue)
    first = list(Render.objects.order_by("pk").values_list("pk", "image_sha256"))
    summary = import_manifest(write_manifest(tmp_path, rows), catalogue)
    assert (summary.created, summary.unchanged) == (1, 2)
    assert list(Render.objects.order_by("pk").values_list("pk", "image_sha256"))[:2] == first


def _unknown_task(rows, directory):
    rows[1]["task_id"] = "nope"
    return 2, "task_id", "unknown task 'nope'"


def _unknown_model(rows, directory):
    rows[2]["model"] = "Ghost-Model"
    return 3, "model", "unknown model 'Ghost-Model'"


def _unknown_sample(rows, directory):
    rows[0]["sample"] = 3
    return 1, "sample", f"no sample 3 of '{MODELS[0]}' on 'g1'"


def _missing_image(rows, directory):
    rows[1]["image"] = "images/absent.png"
    return 2, "image", "no such image file 'images/absent.png'"


def _undecodable_image(rows, directory):
    (directory / "images/broken.png").write_bytes(b"\x89PNG\r\n\x1a\n but then nothing")
    rows[2]["image"] = "images/broken.png"
    return 3, "image", "not a decodable image"


def _truncated_image(rows, directory):
    data = (directory / "images/0.png").read_bytes()
    (directory / "images/cut.png").write_bytes(data[: len(data) // 2])
    rows[0]["image"] = "images/cut.png"
    return 1, "image", "not a decodable image"


def _duplicate_in_file(rows, directory):
    rows.append(dict(rows[0]))
    return 4, "seed", "duplicate (task_id, model, sample, renderer, seed) (first on line 1)"


def _sample_not_an_integer(rows, directory):
    rows[1]["sample"] = "one"
    return 2, "sample", "must be an integer"


def _seed_missing(rows, directory):
    del rows[2]["seed"]
    return 3, "seed", "missing required field"


def _seed_a_float(rows, directory):
    rows[0]["seed"] = 4.5
    return 1, "seed", "must be an integer"


def _unknown_field(rows, directory):
    rows[1]["model_rank"] = 1
    return 2, "model_rank", "unknown field"


def _absolute_image_path(rows, directory):
    rows[0]["image"] = str(directory / "images/0.png")
    return 1, "image", "must be a path relative to the manifest"


def _image_over_the_pixel_budget(rows, directory):
    from tests.hostile_images import huge_png

    (directory / "images/0.png").write_bytes(huge_png())
    return 1, "image", "64,000,000 pixels, over the budget of 16,777,216 pixels"


@pytest.mark.parametrize("breaks", [
    _unknown_task, _unknown_model, _unknown_sample, _missing_image, _undecodable_image, _truncated_image,
    _image_over_the_pixel_budget,
    _duplicate_in_file, _sample_not_an_integer, _seed_missing, _seed_a_float, _unknown_field, _absolute_image_path,
], ids=lambda f: f.__name__.strip("_"))
def test_each_bad_record_names_file_line_and_field_and_nothing_is_written(catalogue, tmp_path, media_root, breaks):
    rows = good_rows(tmp_path)
    line, field, fragment = breaks(rows, tmp_path)
    path = write_manifest(tmp_path, rows)
    before = snapshot(media_root)
    with pytest.raises(ImportFailed) as caught:
        import_manifest(path, catalogue)
    assert snapshot(media_root) == before
    assert f"{path}:{line}: field '{field}': " in str(caught.value)
    matching = [e for e in caught.value.errors if (e.line, e.field) == (line, field)]
    assert matching and fragment in matching[0].message, str(caught.value)
    assert "nothing was imported" in str(caught.value)


def test_changed_bytes_for_an_existing_render_are_refused(catalogue, tmp_path, media_root):
    rows = good_rows(tmp_path)
    import_manifest(write_manifest(tmp_path, rows), catalogue)
    before = snapshot(media_root)
    image_file(tmp_path, "images/1.png", 99)  # same record, new pixels
    path = write_manifest(tmp_path, rows)
    with pytest.raises(ImportFailed, match=r"manifest.jsonl:2: field 'image': .*already exists with different image bytes"):
        import_manifest(path, catalogue)
    assert snapshot(media_root) == before


def test_a_changed_prompt_for_an_existing_render_is_refused(catalogue, tmp_path, media_root):
    rows = good_rows(tmp_path)
    import_manifest(write_manifest(tmp_path, rows), catalogue)
    before = snapshot(media_root)
    rows[0]["prompt"] = "another prompt"
    with pytest.raises(ImportFailed, match=r"manifest.jsonl:1: field 'prompt': .*different prompt"):
        import_manifest(write_manifest(tmp_path, rows), catalogue)
    assert snapshot(media_root) == before


def test_every_error_of_the_file_is_reported_at_once(catalogue, tmp_path):
    rows = good_rows(tmp_path)
    for breaks in (_unknown_task, _missing_image, _unknown_model):
        breaks(rows, tmp_path)
    with pytest.raises(ImportFailed) as caught:
        import_manifest(write_manifest(tmp_path, rows), catalogue)
    assert {(e.line, e.field) for e in caught.value.errors} == {(2, "task_id"), (2, "image"), (3, "model")}
    assert not Render.objects.exists()


def test_csv_cells_are_type_checked_with_their_line(catalogue, tmp_path):
    rows = good_rows(tmp_path)
    rows[2]["seed"] = "forty-two"
    with pytest.raises(ImportFailed, match=r"manifest.csv:4: field 'seed': must be an integer"):
        import_manifest(write_manifest(tmp_path, rows, "csv"), catalogue)
    assert not Render.objects.exists()


def test_an_empty_manifest_is_an_error(catalogue, tmp_path):
    path = tmp_path / "manifest.jsonl"
    path.write_text("\n")
    with pytest.raises(ImportFailed, match="holds no records"):
        import_manifest(path, catalogue)


def test_responses_of_another_task_set_are_unknown_here(catalogue, tmp_path):
    other = TaskSetFactory(name="elsewhere")
    rows = good_rows(tmp_path)
    with pytest.raises(ImportFailed, match=r"field 'task_id': unknown task 'g1' in elsewhere"):
        import_manifest(write_manifest(tmp_path, rows), other)


# ---------------------------------------------------------------- generation


def renderer_for(server: FakeOpenAIServer, **extra) -> SubjectModel:
    return SubjectModelFactory(
        display_name="painter", role=SubjectModel.Role.RENDERER, base_url=server.base_url, provider_id="fake/painter",
        **extra,
    )


def primaries(task_set):
    return list(Response.objects.filter(task__task_set=task_set, is_primary=True).select_related("task", "subject_model"))


def test_generate_renders_every_primary_response_from_its_two_plan_fields_only(catalogue, media_root):
    with FakeOpenAIServer() as server:
        report = renders_generate(task_set=catalogue, renderer=renderer_for(server), seed=7)
        requests = server.image_requests
    assert (report.created, report.existing, report.failures) == (4, 0, [])
    assert len(requests) == 4
    by_prompt = {r.body["prompt"]: r.body for r in requests}
    for response in primaries(catalogue):
        prompt = rendering_prompt(response.core_idea, response.visual_description)
        body = by_prompt[prompt]
        assert (body["model"], body["seed"], body["n"]) == ("fake/painter", 7, 1)
        # App. I.1: nothing but the Core Idea and the Visual Description reaches the renderer.
        assert prompt.replace(response.core_idea, "").replace(response.visual_description, "") == (
            "Core idea: \nVisual description: "
        )
        for leak in (response.subject_model.display_name, response.task.external_id, response.task.brief):
            assert leak not in json.dumps(body)
        render = Render.objects.get(response=response, renderer="painter", seed=7)
        assert (render.prompt, render.is_placeholder) == (prompt, False)
        with render.image.open("rb") as handle:
            assert handle.read() == deterministic_png(prompt, 7)
        assert render.image.name.endswith(f"/{render.image_sha256}.png")


def test_generate_is_resumable_and_retries_only_what_failed(catalogue, media_root):
    failing = primaries(catalogue)[0]

    def flaky(request):
        return Fault.http(400) if failing.core_idea in request["prompt"] else deterministic_png(request["prompt"], 3)

    with FakeOpenAIServer(image_handler=flaky) as server:
        renderer = renderer_for(server)
        first = renders_generate(task_set=catalogue, renderer=renderer, seed=3)
        assert (first.created, len(first.failures)) == (3, 1)
        assert failing.task.external_id in first.failures[0] and "HTTP 400" in first.failures[0]
        assert not Render.objects.filter(response=failing).exists()

        server.image_handler = None
        server.reset()
        second = renders_generate(task_set=catalogue, renderer=renderer, seed=3)
        assert (second.created, second.existing, second.failures) == (1, 3, [])
        assert [r.body["prompt"] for r in server.image_requests] == [
            rendering_prompt(failing.core_idea, failing.visual_description)
        ]

        server.reset()
        before = snapshot(media_root)
        third = renders_generate(task_set=catalogue, renderer=renderer, seed=3)
        assert (third.created, third.existing) == (0, 4)
        assert server.image_requests == [] and snapshot(media_root) == before


def test_another_seed_is_another_render(catalogue, media_root):
    with FakeOpenAIServer() as server:
        renderer = renderer_for(server)
        renders_generate(task_set=catalogue, renderer=renderer, seed=1)
        renders_generate(task_set=catalogue, renderer=renderer, seed=2)
    assert Render.objects.filter(seed=1).count() == Render.objects.filter(seed=2).count() == 4


def test_generate_reports_progress_up_to_the_total(catalogue, media_root):
    seen = []
    with FakeOpenAIServer() as server:
        renders_generate(task_set=catalogue, renderer=renderer_for(server), seed=0, batch_size=3,
                         progress=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_generate_renders_the_chosen_responses_only(catalogue, media_root):
    chosen = Response.objects.filter(task__task_set=catalogue, sample=2)
    with FakeOpenAIServer() as server:
        report = renders_generate(task_set=catalogue, renderer=renderer_for(server), seed=0, responses=list(chosen))
    assert report.created == 1
    assert Render.objects.get().response.sample == 2


def test_responses_of_another_set_cannot_be_chosen(catalogue, media_root):
    stranger = ResponseFactory()
    with FakeOpenAIServer() as server:
        with pytest.raises(RenderConfigurationError, match="not in grounding"):
            renders_generate(task_set=catalogue, renderer=renderer_for(server), seed=0, responses=[stranger])


def test_an_unsplit_response_is_skipped_and_listed(catalogue, media_root):
    pending = primaries(catalogue)[1]
    Response.objects.filter(pk=pending.pk).update(core_idea="", visual_description="",
                                                  normalisation_method=Response.Normalisation.PENDING)
    with FakeOpenAIServer() as server:
        report = renders_generate(task_set=catalogue, renderer=renderer_for(server), seed=0)
        assert len(server.image_requests) == 3
    assert report.created == 3 and len(report.unsplit) == 1 and pending.task.external_id in report.unsplit[0]


def test_only_a_renderer_model_with_a_base_url_can_render(catalogue):
    with pytest.raises(RenderConfigurationError, match="not renderer"):
        renders_generate(task_set=catalogue, renderer=SubjectModel.objects.get(display_name=MODELS[0]), seed=0)
    no_url = SubjectModelFactory(display_name="offline", role=SubjectModel.Role.RENDERER)
    with pytest.raises(RenderConfigurationError, match="no base URL"):
        renders_generate(task_set=catalogue, renderer=no_url, seed=0)


def test_the_api_key_comes_from_the_named_environment_variable(catalogue, media_root, monkeypatch):
    monkeypatch.setenv("ATELIER_TEST_RENDER_KEY", "sk-render-123")
    with FakeOpenAIServer() as server:
        renders_generate(task_set=catalogue, renderer=renderer_for(server, api_key_env="ATELIER_TEST_RENDER_KEY"), seed=0)
        assert {r.headers["Authorization"] for r in server.image_requests} == {"Bearer sk-render-123"}


# ---------------------------------------------------------------- commands


def test_import_renders_command_imports_and_reimports(catalogue, tmp_path, capsys):
    path = write_manifest(tmp_path, good_rows(tmp_path))
    call_command("import_renders", str(path), "--task-set", "grounding", "--version", "1")
    assert "renders 3 created, 0 updated, 0 unchanged" in capsys.readouterr().out
    call_command("import_renders", str(path), "--task-set", "grounding")
    assert "renders 0 created, 0 updated, 3 unchanged" in capsys.readouterr().out
    assert Render.objects.count() == 3


def test_import_renders_command_reports_file_line_and_field(catalogue, tmp_path):
    rows = good_rows(tmp_path)
    _unknown_model(rows, tmp_path)
    path = write_manifest(tmp_path, rows)
    with pytest.raises(CommandError, match=r"manifest.jsonl:3: field 'model': unknown model 'Ghost-Model'"):
        call_command("import_renders", str(path), "--task-set", "grounding")
    assert not Render.objects.exists()


def test_import_renders_command_names_a_missing_manifest_or_task_set(catalogue, tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_renders", str(tmp_path / "absent.jsonl"), "--task-set", "grounding")
    path = write_manifest(tmp_path, good_rows(tmp_path))
    with pytest.raises(CommandError, match="no task set named 'nope'"):
        call_command("import_renders", str(path), "--task-set", "nope")


def test_generate_renders_command_renders_and_resumes(catalogue, media_root, capsys):
    with FakeOpenAIServer() as server:
        renderer_for(server)
        call_command("generate_renders", "--task-set", "grounding", "--renderer", "painter", "--seed", "5")
        assert "4 created, 0 already there" in capsys.readouterr().out
        call_command("generate_renders", "--task-set", "grounding", "--renderer", "painter", "--seed", "5")
        assert "0 created, 4 already there" in capsys.readouterr().out
        assert len(server.image_requests) == 4
        assert {r.body["size"] for r in server.image_requests} == {"1024x1024"}


def test_generate_renders_command_fails_loudly_on_failed_calls(catalogue, media_root):
    with FakeOpenAIServer(image_handler=lambda request: Fault.http(400)) as server:
        renderer_for(server)
        with pytest.raises(CommandError, match="4 render call"):
            call_command("generate_renders", "--task-set", "grounding", "--renderer", "painter", "--seed", "5")
    assert not Render.objects.exists()


def test_generate_renders_command_names_the_known_renderers(catalogue):
    SubjectModelFactory(display_name="painter", role=SubjectModel.Role.RENDERER, base_url="http://127.0.0.1:9/v1")
    with pytest.raises(CommandError, match="no renderer model named 'Vesper-Model-One'; known: painter"):
        call_command("generate_renders", "--task-set", "grounding", "--renderer", MODELS[0], "--seed", "1")


def test_generate_renders_command_names_a_missing_api_key(catalogue, monkeypatch):
    monkeypatch.delenv("ATELIER_ABSENT_RENDER_KEY", raising=False)
    SubjectModelFactory(display_name="painter", role=SubjectModel.Role.RENDERER, base_url="http://127.0.0.1:9/v1",
                        api_key_env="ATELIER_ABSENT_RENDER_KEY")
    with pytest.raises(CommandError, match="ATELIER_ABSENT_RENDER_KEY"):
        call_command("generate_renders", "--task-set", "grounding", "--renderer", "painter", "--seed", "1")


# ---------------------------------------------------------------- the renders page


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.fixture
def rendered(catalogue, tmp_path):
    """The catalogue with three imported renders and one labelled placeholder."""
    import_manifest(write_manifest(tmp_path, good_rows(tmp_path)), catalogue)
    placeholder = RenderFactory(response=Response.objects.get(task__external_id="g2", subject_model__display_name=MODELS[1]))
    return catalogue, placeholder


def test_researcher_sees_every_render_with_task_model_renderer_seed_and_prompt(client, rita, rendered):
    task_set, placeholder = rendered
    response = login(client, rita).get(f"/task-sets/{task_set.pk}/renders/")
    assert response.status_code == 200
    body = response.content.decode()
    assert body.count('class="card render"') == 4
    for text in (*MODELS, "g1", "g2", "flux-dev", "seed 42", "test-renderer", "prompt 1"):
        assert text in body
    assert body.count("PLACEHOLDER") == 1 and f'data-render="{placeholder.pk}"' in body
    assert 'title="prompt 0"' in body  # the prompt on hover


def test_the_page_filters_by_renderer(client, rita, rendered):
    task_set, _ = rendered
    body = login(client, rita).get(f"/task-sets/{task_set.pk}/renders/?renderer=flux-dev").content.decode()
    assert body.count('class="card render"') == 3 and "PLACEHOLDER" not in body
    body = client.get(f"/task-sets/{task_set.pk}/renders/?renderer=nobody").content.decode()
    assert body.count('class="card render"') == 4 and "no renders by" in body


def test_the_page_costs_the_same_queries_for_more_renders(client, rita, rendered, django_assert_max_num_queries):
    task_set, _ = rendered
    login(client, rita)
    with django_assert_max_num_queries(12) as few:
        client.get(f"/task-sets/{task_set.pk}/renders/")
    for response in Response.objects.filter(task__task_set=task_set):
        RenderFactory(response=response)
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert client.get(f"/task-sets/{task_set.pk}/renders/").content.decode().count('class="card render"') == 9


def test_researcher_gets_the_stored_image_bytes(client, rita, rendered, tmp_path):
    task_set, _ = rendered
    render = Render.objects.get(prompt="prompt 0")
    response = login(client, rita).get(f"/task-sets/{task_set.pk}/renders/{render.pk}/image")
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response.content == (tmp_path / "images/0.png").read_bytes()


def test_a_render_is_only_reachable_under_its_own_task_set(client, rita, rendered):
    _, placeholder = rendered
    other = TaskSetFactory(name="other")
    assert login(client, rita).get(f"/task-sets/{other.pk}/renders/{placeholder.pk}/image").status_code == 404


def test_annotator_is_forbidden_the_renders_page_and_images(client, alice, rendered):
    task_set, placeholder = rendered
    login(client, alice)
    assert client.get(f"/task-sets/{task_set.pk}/renders/").status_code == 403
    assert client.get(f"/task-sets/{task_set.pk}/renders/{placeholder.pk}/image").status_code == 403


def test_anonymous_visitor_is_sent_to_login(client, rendered):
    task_set, placeholder = rendered
    for url in (f"/task-sets/{task_set.pk}/renders/", f"/task-sets/{task_set.pk}/renders/{placeholder.pk}/image"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_task_set_page_links_to_its_renders(client, rita, catalogue):
    body = login(client, rita).get(f"/task-sets/{catalogue.pk}/").content.decode()
    assert f'href="/task-sets/{catalogue.pk}/renders/"' in body


@pytest.mark.parametrize("kind, linked", [
    (CampaignKind.FAITHFULNESS, True), (CampaignKind.IMAGE_PREFERENCE, True), (CampaignKind.TEXT_PAIRWISE, False),
])
def test_image_campaign_dashboards_link_to_the_renders(client, rita, media_root, kind, linked):
    catalogue = Catalogue(n_tasks=1)
    campaign = campaign_for(kind, catalogue)
    body = login(client, rita).get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    assert (f'href="/task-sets/{catalogue.task_set.pk}/renders/"' in body) is linked


def test_imported_renders_reach_annotators_only_through_opaque_media_urls(client, alice, catalogue, tmp_path):
    from annotation import item_creation
    from annotation import services as annotation_services
    from annotation.models import Campaign

    import_manifest(write_manifest(tmp_path, good_rows(tmp_path)), catalogue)
    campaign = annotation_services.campaign_create(
        name="faith", kind=CampaignKind.FAITHFULNESS, task_set=catalogue, k=1, annotators=[alice],
        status=Campaign.Status.OPEN, gold_rate=0.0,
    )
    renders = list(Render.objects.select_related("response__task"))
    item_creation.items_create(campaign=campaign, specs=[
        item_creation.ItemSpec(task=r.response.task, render_a=r) for r in renders
    ])
    login(client, alice)
    shown = []
    for _ in renders:
        assignment = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", content_type="application/json").json()["assignment"]
        url = assignment["content"]["image"]
        assert url.startswith(f"/annotate/media/{assignment['token']}/")
        for render in renders:
            assert render.image_sha256 not in url and str(render.pk) not in url.split("/")
        image = client.get(url)
        assert image.status_code == 200 and image["Content-Type"] == "image/png"
        shown.append(image.content)
        annotation_services.assignment_skip(token=assignment["token"], annotator=alice)
    # Annotators get images re-encoded from decoded pixels (blinding): the pixels are the files'.
    assert sorted(map(_pixels, shown)) == sorted(_pixels((tmp_path / f"images/{k}.png").read_bytes()) for k in range(3))


def _pixels(data: bytes) -> bytes:
    from PIL import Image

    return Image.open(io.BytesIO(data)).convert("RGB").tobytes()

"""C² pages: researchers see the leaderboard, radar, ablation, drill-down, run pages and exports;
annotators are refused; bad ids and query strings give 400/404, never 500."""

from __future__ import annotations

import json

import pytest

from leaderboard.c2.models import C2Run
from leaderboard.c2.services import runs
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.models import SubjectModel
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

SIMULATED = ["simulated-one", "simulated-two"]


@pytest.fixture(autouse=True)
def _isolated_caches(settings, tmp_path):
    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path / "provider-cache"


@pytest.fixture
def task_set():
    trivia = {"Data": [{"Question": f"Question {k}?", "QuestionId": f"q{k}",
                        "Answer": {"Value": "yes", "NormalizedAliases": ["yes", "aye"]}} for k in range(3)]}
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                  task_set_name="c2-pages", version="1")
    c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] A door in the sea.\n[ WP ] The moon resigns.\n",
                    task_set_name="c2-pages", version="1")
    return task_set


def finished_run(task_set, template: str) -> C2Run:
    run = runs.c2_run_create(task_set=task_set, model_names=SIMULATED, n_samples=2, template=template,
                             rater_name="simulated", rerate_share=0.5)
    return runs.c2_run_execute_inline(run=run)


@pytest.fixture
def standard_and_creative(task_set):
    return finished_run(task_set, "standard"), finished_run(task_set, "creative")


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


def pages(run: C2Run) -> list[str]:
    task = run.task_set.tasks.first()
    return ["/c2/", f"/c2/?run={run.pk}", f"/c2/runs/{run.pk}/", f"/c2/runs/{run.pk}/status.json",
            f"/c2/runs/{run.pk}/prompts/{task.pk}/", f"/c2/runs/{run.pk}/export.csv",
            f"/c2/runs/{run.pk}/export.json", f"/c2/runs/{run.pk}/export.tex"]


def test_researcher_reaches_every_c2_page(client, rita, standard_and_creative):
    login(client, rita)
    for url in pages(standard_and_creative[0]):
        assert client.get(url).status_code == 200, url


def test_annotator_is_forbidden_every_c2_page(client, alice, standard_and_creative):
    login(client, alice)
    for url in pages(standard_and_creative[0]):
        assert client.get(url).status_code == 403, url


def test_leaderboard_shows_table_one_marks_radar_ablation_and_the_surprise_policy(client, rita, standard_and_creative):
    standard, creative = standard_and_creative
    body = login(client, rita).get(f"/c2/?run={standard.pk}").content.decode()
    assert "Table 1 shape" in body and "Question Answering" in body and "Story Telling" in body
    assert 'class="num best"' in body
    assert "Figure 4 shape" in body and "<svg" in body
    assert f"#{creative.pk}</a> (creative)" in body and "creative − standard" in body
    assert "Surprise policy:" in body and "S = 0 when no sample is correct" in body
    assert "simulated" in body and "Table 2 shape" not in body  # no visual tasks in this set


def test_the_drilldown_shows_every_sample_with_verdict_confidence_and_ratings(client, rita, standard_and_creative):
    run = standard_and_creative[0]
    login(client, rita)
    qa = run.task_set.tasks.get(external_id="q0")
    body = client.get(f"/c2/runs/{run.pk}/prompts/{qa.pk}/").content.decode()
    for model in SIMULATED:
        assert model in body
    assert body.count("<pre class=\"sample\">") == 2 * 2 and "Probability" in body
    story = run.task_set.tasks.filter(family="story").first()
    body = client.get(f"/c2/runs/{run.pk}/prompts/{story.pk}/").content.decode()
    assert "U: simulated" in body and "O: simulated" in body


def test_exports_carry_the_simulated_marker(client, rita, standard_and_creative):
    run = standard_and_creative[0]
    login(client, rita)
    csv_body = client.get(f"/c2/runs/{run.pk}/export.csv").content.decode().splitlines()
    header, first = csv_body[0].split(","), csv_body[1].split(",")
    assert first[header.index("simulated")] == "true"
    assert json.loads(client.get(f"/c2/runs/{run.pk}/export.json").content)["simulated"] is True
    tex = client.get(f"/c2/runs/{run.pk}/export.tex")
    tex_body = tex.content.decode()
    assert "SIMULATED components" in tex_body and "simulated" in tex["Content-Disposition"]
    assert r"\textbf{" in tex_body and "Question Answering" in tex_body


@pytest.mark.parametrize("query", ["?run=abc", "?run=-1", "?run=1.5"])
def test_a_bad_run_query_is_a_400(client, rita, query):
    response = login(client, rita).get(f"/c2/{query}")
    # the site's 400 page with its navigation (it was the bare text "run must be a run id")
    assert response.status_code == 400 and "400 · Bad request" in response.content.decode()
    assert "run must be a C² run id" in response.content.decode()


def test_a_run_query_of_non_ascii_digits_is_a_400_not_a_500(client, rita):
    # "²" passes str.isdigit() but int() refuses it
    assert login(client, rita).get("/c2/?run=%C2%B2").status_code == 400


def test_unknown_ids_are_404s(client, rita, standard_and_creative, task_set):
    run = standard_and_creative[0]
    other, _ = c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] Elsewhere.\n", task_set_name="other", version="1")
    login(client, rita)
    for url in ["/c2/?run=99999", "/c2/runs/99999/", "/c2/runs/99999/status.json", "/c2/runs/99999/export.csv",
                f"/c2/runs/{run.pk}/prompts/{other.tasks.get().pk}/", "/c2/tasks/99999/image"]:
        assert client.get(url).status_code == 404, url


def test_starting_a_run_from_the_form_plans_it_and_queues_it_on_commit(client, rita, task_set, django_capture_on_commit_callbacks):
    login(client, rita)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post("/c2/runs/new/", {
            "task_set": task_set.pk, "models": ",".join(SIMULATED), "samples": 2, "template": "creative",
            "rater": "simulated", "seed": 7, "surprise_policy": "formula",
        })
    run = C2Run.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/c2/runs/{run.pk}/"
    assert (run.template, run.surprise_policy, run.status, run.samples.count()) == ("creative", "formula", "pending", 5 * 2 * 2)
    # the run's dispatch, and the catalogue's news: its simulated models are new (one revision move)
    assert len(callbacks) == 2


def test_the_form_refuses_a_text_only_model_for_a_visual_task_set_with_a_message(client, rita, tmp_path):
    from PIL import Image

    Image.new("RGB", (4, 4)).save(tmp_path / "pic.png")
    visual, _ = c2_tasks_import(fmt="creation_mmbench", name="cm.jsonl", images_dir=tmp_path,
                                raw=b'{"index": 1, "question": "Tell its story.", "image": "pic.png"}\n',
                                task_set_name="visual", version="1")
    SubjectModel.objects.create(display_name="plain-text", base_url="http://127.0.0.1:9/v1")
    response = login(client, rita).post("/c2/runs/new/", {
        "task_set": visual.pk, "models": "plain-text", "samples": 2, "template": "standard", "rater": "simulated",
        "seed": 1, "surprise_policy": "zero"}, follow=True)
    assert "text-only" in response.content.decode() and not C2Run.objects.exists()


def test_the_combined_column_has_an_interval_and_a_rank_set_and_each_table_its_rank_probabilities(client, rita, standard_and_creative):
    standard, _ = standard_and_creative
    html = login(client, rita).get(f"/c2/?run={standard.pk}").content.decode()
    assert "Combined creativity <span class=\"ci\">[95% CI]</span>" in html and "Rank set" in html
    assert 'id="rank-probabilities"' in html and 'class="c2-ranks" data-table="text"' in html
    assert "P(A &gt; B)" in html and "P(rank 2)" in html


def test_a_task_type_slice_ranks_by_that_types_creativity(client, rita, standard_and_creative):
    standard, _ = standard_and_creative
    login(client, rita)
    html = client.get(f"/c2/?run={standard.pk}&task_type=story").content.decode()
    assert 'id="c2-type-slice"' in html and "story creativity" in html
    assert client.get(f"/c2/?run={standard.pk}&task_type=nonesuch").status_code == 404


def test_two_runs_compare_side_by_side_with_intervals_ranks_and_what_differs(client, rita, standard_and_creative):
    standard, creative = standard_and_creative
    html = login(client, rita).get(f"/c2/compare/?a={standard.pk}&b={creative.pk}").content.decode()
    assert 'id="compare-differences"' in html and 'id="compare-ranks"' in html
    assert 'class="differs"><th>Template</th>' in html
    for name in SIMULATED:
        assert f'<tr data-name="{name}">' in html
    assert "95% CI" in html


def test_the_compare_page_offers_finished_runs_and_refuses_bad_ids(client, rita, standard_and_creative):
    standard, _ = standard_and_creative
    login(client, rita)
    assert f'value="{standard.pk}"' in client.get("/c2/compare/").content.decode()
    assert client.get("/c2/compare/?a=1.5&b=2").status_code == 400
    assert client.get(f"/c2/compare/?a={standard.pk}&b=999999").status_code == 404
    assert login(client, rita).get("/c2/compare/?b=1").status_code == 400


def test_the_compare_page_is_forbidden_to_an_annotator(client, alice):
    assert login(client, alice).get("/c2/compare/").status_code == 403


def test_the_results_api_carries_combined_uncertainty_and_a_task_type_slice(client, rita, standard_and_creative):
    standard, _ = standard_and_creative
    login(client, rita)
    data = client.get(f"/api/v1/c2/runs/{standard.pk}/results?task_type=story").json()
    text = data["uncertainty"]["tables"]["text"]
    assert {a["name"] for a in text["agents"]} == set(SIMULATED) and text["pairs"][0]["p_a_better"] is not None
    assert data["uncertainty"]["task_type"]["task_type"] == "story"
    assert client.get(f"/api/v1/c2/runs/{standard.pk}/results?task_type=zz").status_code == 400


def test_results_edited_by_hand_are_a_new_results_etag(client, rita, task_set):
    """A finished run's results change only by a hand edit (the shell, a data fix): same finish, new ETag."""
    run = finished_run(task_set, "standard")
    login(client, rita)
    etag = client.get(f"/api/v1/c2/runs/{run.pk}/results")["ETag"]
    run.results = {**run.results, "edited": True}
    run.save(update_fields=["results"])
    assert client.get(f"/api/v1/c2/runs/{run.pk}/results", HTTP_IF_NONE_MATCH=etag).status_code == 200

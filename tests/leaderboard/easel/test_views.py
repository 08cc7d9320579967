"""EASEL pages: researchers only, no 500 on bad ids or query strings, a run started from the page."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from django.urls import reverse

from leaderboard.easel import selectors, services
from leaderboard.easel.models import EaselRun
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_the_leaderboard_renders_for_a_researcher_before_any_suite_exists(client, rita):
    response = login(client, rita).get(reverse("easel:leaderboard"))
    assert response.status_code == 200 and b"easel_suite --seed 0" in response.content


def test_the_leaderboard_is_forbidden_to_an_annotator(client, alice, suite):
    assert login(client, alice).get(reverse("easel:leaderboard")).status_code == 403


def test_the_nav_links_the_easel_leaderboard_for_a_researcher(client, rita):
    response = login(client, rita).get(reverse("easel:leaderboard"))
    assert f'href="{reverse("easel:leaderboard")}"'.encode() in response.content


@pytest.mark.parametrize("query", ["?task_set=abc", "?task_set=999999", "?task_set=1%27"])
def test_a_bad_task_set_query_is_a_404_not_a_500(client, rita, suite, query):
    assert login(client, rita).get(reverse("easel:leaderboard") + query).status_code == 404


def test_a_task_set_query_of_non_ascii_digits_is_a_404_not_a_500(client, rita, suite):
    # "²" passes str.isdigit() but int() refuses it; the API reads ?task_set= through the same selector
    login(client, rita)
    assert client.get(reverse("easel:leaderboard") + "?task_set=%C2%B2").status_code == 404
    assert client.get("/api/v1/easel/leaderboard?task_set=%C2%B2").status_code == 404


@pytest.mark.parametrize("name", ["easel:run_detail", "easel:episode", "easel:task_image", "easel:final_canvas"])
def test_a_missing_object_is_a_404(client, rita, name):
    assert login(client, rita).get(reverse(name, args=[424242])).status_code == 404


def test_a_missing_step_canvas_is_a_404(client, rita, suite):
    run = services.easel_run_create(task_set=suite, agent="simulated")
    episode = run.episodes.first()
    assert login(client, rita).get(reverse("easel:step_canvas", args=[episode.pk, 5])).status_code == 404


def test_the_initial_canvas_is_served_as_png(client, rita, suite):
    run = services.easel_run_create(task_set=suite, agent="simulated")
    episode = run.episodes.first()
    response = login(client, rita).get(reverse("easel:step_canvas", args=[episode.pk, 0]))
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response.content.startswith(b"\x89PNG")


def test_an_invalid_run_form_starts_nothing_and_says_why(client, rita, suite):
    response = login(client, rita).post(reverse("easel:run_new"), {"task_set": suite.pk, "agent": "nobody", "budget": "aligned", "seed": 0})
    assert response.status_code == 302 and not EaselRun.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_researcher_starts_a_run_from_the_page_and_lands_on_its_live_status(client, rita, suite):
    response = login(client, rita).post(reverse("easel:run_new"), {"task_set": suite.pk, "agent": "mean_colour_fill",
                                                                   "budget": "aligned", "seed": 4})
    run = EaselRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("easel:run_detail", args=[run.pk])
    assert run.created_by == rita and run.seed == 4 and run.status == EaselRun.Status.DONE  # eager: no broker here


def test_starting_a_run_is_forbidden_to_an_annotator(client, alice, suite):
    response = login(client, alice).post(reverse("easel:run_new"), {"task_set": suite.pk, "agent": "simulated", "budget": "aligned", "seed": 0})
    assert response.status_code == 403 and not EaselRun.objects.exists()


def test_the_run_status_is_json_for_the_live_poller(client, rita, suite):
    run = services.easel_run_create(task_set=suite, agent="simulated")
    payload = login(client, rita).get(reverse("easel:run_status", args=[run.pk])).json()
    assert payload["status"] == "pending" and payload["episodes_total"] == run.episodes_total
    # each episode's row for the page's table: its state and steps against its budget, in the table's order
    episodes = list(run.episodes.order_by("position", "pk"))
    assert payload["episodes"] == [{"id": e.pk, "status": "planned", "steps": f"0/{e.budget}"} for e in episodes]


@pytest.mark.parametrize("fmt", ["csv", "json", "tex"])
def test_exports_answer_for_an_empty_leaderboard(client, rita, suite, fmt):
    response = login(client, rita).get(reverse("easel:leaderboard_export", kwargs={"fmt": fmt}) + f"?task_set={suite.pk}")
    assert response.status_code == 200


def stored_episode(suite, *, steps: int = 4):
    """A reconstruction episode with hand-written stored steps (one invalid, one exact repeat)."""
    from engine.easel.task import png_bytes
    from leaderboard.easel.models import EaselStep

    run = services.easel_run_create(task_set=suite, agent="simulated")
    episode = run.episodes.filter(kind="reconstruction").first()
    canvas = services.engine_task_of(episode.task).initial_canvas()
    for index in range(1, steps + 1):
        valid = index != 2
        EaselStep.objects.create(
            episode=episode, index=index, action={"action": "brush_stroke", "xs": 0.1 * index} if valid else None,
            raw="not json" if not valid else "{}", valid=valid, kind="stroke" if valid else "invalid",
            error="" if valid else "not JSON", s=0.4 + 0.05 * index, ssim=0.5, l1=0.2, edge_iou=0.1,
            canvas_png=png_bytes(canvas),
        )
    episode.steps_done = steps
    episode.save(update_fields=["steps_done"])
    return episode


def test_the_episode_viewer_renders_its_data_as_json_script_without_inline_code(client, rita, suite):
    episode = stored_episode(suite)
    response = login(client, rita).get(reverse("easel:episode", args=[episode.pk]))
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="easel-viewer-data" type="application/json"' in html and "js/easel_viewer.js" in html
    assert "<script>" not in html and "onclick" not in html
    assert "Best" in html and "Final" in html and "Step t" in html


def test_a_stored_step_canvas_is_served(client, rita, suite):
    episode = stored_episode(suite)
    response = login(client, rita).get(reverse("easel:step_canvas", args=[episode.pk, 3]))
    assert response.status_code == 200 and response.content.startswith(b"\x89PNG")


def test_a_filled_leaderboard_shows_tables_curves_badges_and_export_links(client, rita, suite):
    from tests.leaderboard.easel.test_selectors import finished, reference_ids

    ids = reference_ids(suite)
    finished(services.easel_run_create(task_set=suite, agent="simulated", label="simulated · keen"), dict.fromkeys(ids, 0.5))
    finished(services.easel_run_create(task_set=suite, agent="mean_colour_fill"), dict.fromkeys(ids, 0.53))
    html = login(client, rita).get(reverse("easel:leaderboard") + f"?task_set={suite.pk}").content.decode()
    assert 'id="table3"' in html and 'id="figure4"' in html and 'id="table4"' in html
    assert "simulated · keen" in html and "Reference mean-colour fill" in html and "includes simulated agents" in html
    assert "export.csv?task_set=" in html and "export.tex?task_set=" in html and "<svg" in html


def test_the_run_page_follows_status_with_the_shared_poller(client, rita, suite):
    run = services.easel_run_create(task_set=suite, agent="simulated")
    html = login(client, rita).get(reverse("easel:run_detail", args=[run.pk])).content.decode()
    assert "js/live_status.js" in html and "js/run_status.js" in html and "<script>" not in html
    assert "simulated agent" in html


@pytest.mark.django_db(transaction=True)
def test_a_run_whose_endpoint_fails_in_eager_mode_is_marked_failed_not_a_500(client, rita, suite, monkeypatch, settings, tmp_path):
    from leaderboard.models import SubjectModel
    from tests.fakes.openai_server import FakeOpenAIServer, Fault

    settings.ATELIER_PROVIDER_CACHE_DIR = tmp_path
    with FakeOpenAIServer(handler=lambda request: Fault.http(400)) as server:
        SubjectModel.objects.create(display_name="broken-vision", role="subject", base_url=server.base_url)
        response = login(client, rita).post(reverse("easel:run_new"), {"task_set": suite.pk, "agent": "broken-vision",
                                                                       "budget": "aligned", "seed": 0})
    run = EaselRun.objects.get()
    assert response.status_code == 302 and run.status == EaselRun.Status.FAILED and "400" in run.error


def test_the_leaderboard_page_asks_the_same_number_of_queries_for_more_runs(client, rita, suite):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.leaderboard.easel.test_selectors import finished, reference_ids

    ids = reference_ids(suite)
    login(client, rita)
    url = reverse("easel:leaderboard") + f"?task_set={suite.pk}"
    # A new session's first request reads its user apart (then one statement with the session, PostgreSQL).
    assert client.get(url).status_code == 200

    def queries_with(n_runs: int) -> int:
        while EaselRun.objects.count() < n_runs:
            k = EaselRun.objects.count()
            finished(services.easel_run_create(task_set=suite, agent="simulated", label=f"simulated · {k}"), dict.fromkeys(ids, 0.5))
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    assert queries_with(2) == queries_with(6)


def test_a_run_failed_for_good_offers_no_resume_and_its_stopped_episode_does_not_say_running(client, rita, suite):
    from leaderboard.easel.models import EaselEpisode
    from leaderboard.runs.lifecycle import run_fail

    run = services.easel_run_create(task_set=suite, agent="simulated")
    run.episodes.filter(position=0).update(status=EaselEpisode.Status.RUNNING)
    run_fail(EaselRun, run.pk, "reference programmatic-000 has no image", resumable=False)
    html = login(client, rita).get(reverse("easel:run_detail", args=[run.pk])).content.decode()
    assert "reference programmatic-000 has no image" in html
    assert reverse("easel:run_resume", args=[run.pk]) not in html and "Resume" not in html
    assert '">running</td>' not in html and '<td data-run-cell="status">stopped</td>' in html
    episodes = client.get(reverse("easel:run_status", args=[run.pk])).json()["episodes"]
    assert [e["status"] for e in episodes].count("stopped") == 1 and "running" not in [e["status"] for e in episodes]


def test_a_run_failed_resumably_offers_its_resume(client, rita, suite):
    from leaderboard.runs.lifecycle import run_fail

    run = services.easel_run_create(task_set=suite, agent="simulated")
    run_fail(EaselRun, run.pk, "The provider of the agent did not answer after its retries")
    html = login(client, rita).get(reverse("easel:run_detail", args=[run.pk])).content.decode()
    assert reverse("easel:run_resume", args=[run.pk]) in html


def _two_agents(suite):
    from tests.leaderboard.easel.test_selectors import finished_agent

    return finished_agent(suite, "simulated · keen", 0.60, 0.01), finished_agent(suite, "simulated · idle", 0.50, 0.01)


def test_the_leaderboard_shows_each_pairs_difference_p_a_better_and_rank_probabilities(client, rita, suite):
    _two_agents(suite)
    html = login(client, rita).get(reverse("easel:leaderboard") + f"?task_set={suite.pk}").content.decode()
    assert 'id="easel-pairwise"' in html and 'id="easel-rank-probabilities"' in html
    assert "+0.100" in html and "P(A &gt; B)" in html and "<strong>differ</strong>" in html
    assert "P(rank 2)" in html


def test_a_category_slice_of_the_leaderboard_answers_and_an_unknown_category_is_a_404(client, rita, suite):
    _two_agents(suite)
    login(client, rita)
    url = reverse("easel:leaderboard") + f"?task_set={suite.pk}"
    # A new session's first request reads its user apart (then one statement with the session, PostgreSQL).
    assert client.get(url).status_code == 200
    assert "programmatic only" in client.get(url + "&category=programmatic").content.decode()
    assert client.get(url + "&category=nonesuch").status_code == 404


def test_the_semantic_table_shows_n_and_the_mean_with_its_interval(client, rita, suite):
    from leaderboard.easel.models import EaselEpisode

    keen, _ = _two_agents(suite)
    semantic = [t for t in suite.tasks.exclude(subtype="reconstruction")][:3]
    for k, task in enumerate(semantic):
        EaselEpisode.objects.create(run=keen, task=task, kind="semantic", category=task.subtype, budget=10,
                                    status="done", semantic_score=0.2 + 0.3 * k)
    html = login(client, rita).get(reverse("easel:leaderboard") + f"?task_set={suite.pk}").content.decode()
    table4 = html[html.index('id="table4"'):]
    assert "Mean <span" in table4 and '<td class="num">3</td>' in table4 and "0.500" in table4


def test_two_runs_compare_side_by_side_with_intervals_ranks_and_what_differs(client, rita, suite):
    keen, idle = _two_agents(suite)
    html = login(client, rita).get(reverse("easel:compare") + f"?a={keen.pk}&b={idle.pk}").content.decode()
    assert 'id="compare-differences"' in html and 'id="compare-ranks"' in html and 'id="compare-paired"' in html
    assert 'class="differs"><th>Agent</th>' in html
    assert '<tr data-name="Final S">' in html and "▼1" in html  # keen is 1st on Final S, idle 2nd
    assert "P(A &gt; B)" in html



def test_a_run_not_finished_is_compared_side_by_side_but_not_paired(client, rita, suite):
    from leaderboard.easel.models import EaselEpisode

    keen, idle = _two_agents(suite)
    EaselRun.objects.filter(pk=idle.pk).update(status=EaselRun.Status.RUNNING)
    idle.episodes.filter(position=0).update(status=EaselEpisode.Status.RUNNING)
    html = login(client, rita).get(reverse("easel:compare") + f"?a={keen.pk}&b={idle.pk}").content.decode()
    assert 'id="compare-differences"' in html and "P(A &gt; B)" not in html
    assert "No paired difference" in html and "not finished" in html

def test_the_compare_page_offers_the_runs_without_a_choice_and_refuses_bad_ids(client, rita, suite):
    keen, _ = _two_agents(suite)
    login(client, rita)
    assert f'value="{keen.pk}"' in client.get(reverse("easel:compare")).content.decode()
    assert client.get(reverse("easel:compare") + "?a=x&b=1").status_code == 400
    assert client.get(reverse("easel:compare") + f"?a={keen.pk}&b=999999").status_code == 404


def test_the_compare_page_is_forbidden_to_an_annotator(client, alice, suite):
    assert login(client, alice).get(reverse("easel:compare")).status_code == 403


def test_the_api_leaderboard_carries_the_paired_bootstrap_and_a_category_slice(client, rita, suite):
    _two_agents(suite)
    login(client, rita)
    data = client.get(f"/api/v1/easel/leaderboard?task_set={suite.pk}&category=programmatic").json()
    pair = data["uncertainty"]["comparison"]["pairs"][0]
    assert pair["a"] == "simulated · keen" and pair["difference"] == pytest.approx(0.1) and pair["p_a_better"] == 1.0
    assert client.get(f"/api/v1/easel/leaderboard?task_set={suite.pk}&category=x").status_code == 400


def _interval_after(html: str, anchor: str) -> str:
    """The first ``[low, high]`` printed after ``anchor`` in ``html``."""
    return re.search(r"\[(\d\.\d{3}, \d\.\d{3})\]", html[html.index(anchor):]).group(1)


def test_an_agents_final_s_reads_with_one_interval_in_the_headline_both_tables_and_on_the_home_page(client, rita):
    """The headline and the agents' comparison printed the paired bootstrap's interval, the reconstruction
    table and the home page the board's (a second draw): 0.481 [0.449, 0.513] beside [0.450, 0.513]."""
    import numpy as np

    from tests.leaderboard.easel.test_selectors import finished, reference_ids

    suite, _ = services.easel_suite_create(seed=0, per_category={"programmatic": 8, "spatial_geometry": 6,
                                                                 "abstract_cartoon": 0, "natural": 0}, name="easel-wide")
    ids = reference_ids(suite)
    spread = np.random.default_rng(3).uniform(0.0, 0.3, size=(2, len(ids)))
    keen = finished(services.easel_run_create(task_set=suite, agent="simulated", label="simulated · keen"),
                    {t: 0.45 + v for t, v in zip(ids, spread[0], strict=True)})
    idle = finished(services.easel_run_create(task_set=suite, agent="simulated", label="simulated · idle"),
                    {t: 0.40 + v for t, v in zip(ids, spread[1], strict=True)})
    login(client, rita)
    board = client.get(reverse("easel:leaderboard") + f"?task_set={suite.pk}").content.decode()
    home = client.get("/").content.decode()
    table3 = board[board.index('id="table3"'):board.index('id="agent-differences"')]
    for run in (keen, idle):
        # the reconstruction table's Final column comes after the two categories' columns
        row = table3[table3.index(f'href="/easel/runs/{run.pk}/"'):]
        final = re.findall(r'<span class="muted small">\[(\d\.\d{3}, \d\.\d{3})\]</span>', row)[2]
        assert _interval_after(board, f'<tr data-agent="{run.agent_name}">') == final, run.agent_name
        assert _interval_after(home[home.index('id="board-easel"'):], f">{run.agent_name}</") == final, run.agent_name
    keen_final = re.findall(r'<span class="muted small">\[(\d\.\d{3}, \d\.\d{3})\]</span>',
                            table3[table3.index(f'href="/easel/runs/{keen.pk}/"'):])[2]
    assert _interval_after(board, 'id="board-headline"') == keen_final


def _comparison_as_before(board, runs, episodes, category):
    """The agents' comparison as easel_uncertainty computed it before agent_comparison took the board's
    intervals: a paired bootstrap that drew each agent's interval too, then overwritten with the board's."""
    from engine.easel.leaderboard import run_label
    from engine.easel.uncertainty import LEVEL, METHOD, N_BOOT
    from engine.paired_bootstrap import bootstrap_payload, stratified_paired_bootstrap
    from engine.seeding import derived_seed

    finals, category_of = {}, {}
    for run in runs:
        for e in episodes.get(run.pk, []):
            if e["kind"] == "reconstruction" and e["final_s"] is not None and category in (None, e["category"]):
                finals.setdefault(run.pk, {})[e["task_id"]] = e["final_s"]
                category_of[e["task_id"]] = e["category"]
    scored = [selectors.board_run_of(r) for r in runs if finals.get(r.pk)]
    references = sorted(category_of)
    values = np.array([[finals[r.id].get(t, np.nan) for t in references] for r in scored])
    seed = derived_seed("easel-paired-bootstrap", tuple(sorted(r.id for r in scored)), category or "")
    result = stratified_paired_bootstrap(values, [category_of[t] for t in references], weighting="items",
                                         n_boot=N_BOOT, level=LEVEL, seed=seed % (2**32))
    payload = bootstrap_payload(result, [run_label(r) for r in scored], method=METHOD)
    intervals = selectors.final_s_intervals(board, category=category)
    for row in payload["agents"]:
        row["run"] = scored[row.pop("index")].id
        row["value"], row["low"], row["high"] = intervals[row["run"]]
    payload["category"] = category
    payload["interval"] = board["interval"]
    return payload


def test_the_api_and_the_page_print_the_agents_comparison_as_before_it_took_the_boards_intervals(client, rita):
    """agent_comparison no longer draws per-agent intervals that the board's replaced: every number of the
    API's ``uncertainty.comparison`` and of the page's rank table is what the old computation gave."""
    from tests.leaderboard.easel.test_selectors import finished, reference_ids

    suite, _ = services.easel_suite_create(seed=0, per_category={"programmatic": 6, "spatial_geometry": 5,
                                                                 "abstract_cartoon": 0, "natural": 0}, name="easel-same")
    ids = reference_ids(suite)
    spread = np.random.default_rng(7).uniform(0.0, 0.3, size=(3, len(ids)))
    for k, label in enumerate(("simulated · keen", "simulated · even", "simulated · idle")):
        finished(services.easel_run_create(task_set=suite, agent="simulated", label=label),
                 {t: 0.45 - 0.02 * k + v for t, v in zip(ids, spread[k], strict=True)})
    board, runs, episodes = selectors.easel_boards([suite])[suite.pk]
    login(client, rita)
    for category in (None, "programmatic", "spatial_geometry"):
        before = json.loads(json.dumps(_comparison_as_before(board, runs, episodes, category)))
        query = f"?task_set={suite.pk}" + (f"&category={category}" if category else "")
        assert client.get("/api/v1/easel/leaderboard" + query).json()["uncertainty"]["comparison"] == before
        html = client.get(reverse("easel:leaderboard") + query).content.decode()
        for agent in before["agents"]:
            printed = f'{agent["value"]:.3f} <span class="ci">[{agent["low"]:.3f}, {agent["high"]:.3f}]</span>'
            assert printed in html[html.index(f'<tr data-agent="{agent["name"]}">'):], (category, agent["name"])

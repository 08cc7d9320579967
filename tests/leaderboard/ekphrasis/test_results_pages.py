"""Results pages: the snapshot, its exports, comparison, drill-down and live run status."""

import csv
import io
import json

import pytest

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import JudgeRun
from tests.factories import PASSWORD
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def snapshot():
    task_set, models = population(n_models=4, n_tasks=4)
    run = simulated_run(task_set, models, budget=12, dimensions="UEN")
    return judge_runs.judge_run_execute_inline(run=run)


@pytest.fixture
def researcher_client(client, rita):
    client.login(username=rita.username, password=PASSWORD)
    return client


def test_snapshot_page_draws_intervals_heat_map_and_trade_off(researcher_client, snapshot):
    body = researcher_client.get(f"/leaderboards/{snapshot.pk}/").content.decode()
    assert "simulated judge" in body
    assert body.count("<svg") >= 5  # overall, three dimensions, heat map, trade-off
    for name in snapshot.payload["models"]:
        assert name in body


def test_snapshot_csv_export_has_one_row_per_model(researcher_client, snapshot):
    response = researcher_client.get(f"/leaderboards/{snapshot.pk}/export.csv")
    lines = response.content.decode().strip().splitlines()
    assert lines[0].startswith("rank,model,overall_vci") and len(lines) == 1 + 4


def test_snapshot_csv_export_neutralises_a_model_name_that_is_a_formula(researcher_client):
    task_set, models = population(n_models=3, n_tasks=3)
    models[0].display_name = "=HYPERLINK(\"http://evil\")"
    models[0].save(update_fields=["display_name"])
    snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=6, dimensions="U"))
    rows = list(csv.DictReader(io.StringIO(researcher_client.get(f"/leaderboards/{snapshot.pk}/export.csv").content.decode())))
    assert "'=HYPERLINK(\"http://evil\")" in [row["model"] for row in rows]
    assert not any(cell.startswith(tuple("=+@")) for row in rows for cell in row.values())


def test_snapshot_json_export_is_pinned_to_its_configuration(researcher_client, snapshot):
    data = json.loads(researcher_client.get(f"/leaderboards/{snapshot.pk}/export.json").content)
    assert (data["judge"], data["seed"], data["budget_per_task"], data["simulated"]) == ("simulated", 7, 12, True)
    assert data["code_version"]


def test_snapshot_latex_export_is_a_table(researcher_client, snapshot):
    tex = researcher_client.get(f"/leaderboards/{snapshot.pk}/export.tex").content.decode()
    assert tex.startswith("\\begin{table}") and "Simulated judge" in tex and tex.count("\\\\") >= 5


def test_two_snapshots_compare_side_by_side(researcher_client, snapshot):
    second = judge_runs.judge_run_execute_inline(run=judge_runs.judge_run_create(
        task_set=snapshot.run.task_set, judge_name="simulated", budget_per_task=6, seed=99, dimensions="UEN",
        config={"n_boot": 100}))
    body = researcher_client.get(f"/leaderboards/compare/?a={snapshot.pk}&b={second.pk}").content.decode()
    assert f"#{snapshot.pk}" in body and f"#{second.pk}" in body


def test_drilldown_shows_each_judgment_with_its_checklist_outcomes(researcher_client, snapshot):
    task = snapshot.run.task_set.tasks.first()
    body = researcher_client.get(f"/leaderboards/{snapshot.pk}/tasks/{task.pk}/").content.decode()
    assert "Checklist item" in body and "Rationale" in body


def test_drilldown_says_what_a_comparisons_repeat_number_and_call_number_are(researcher_client, snapshot):
    """Headings read "primary #1 · call 7": the page never said #1 is the pair's first repeat in that kind,
    nor what the call number counts."""
    from leaderboard.ekphrasis.models import Comparison

    repeated = Comparison.objects.filter(run=snapshot.run, repeat__gt=0).select_related("task").first()
    assert repeated is not None, "the run judged no pair twice"
    body = researcher_client.get(f"/leaderboards/{snapshot.pk}/tasks/{repeated.task_id}/").content.decode()
    assert f"{repeated.kind} #{repeated.repeat} · call" in body
    assert 'id="comparison-key"' in body and "#k" in body and "call n" in body


def test_run_status_json_reports_progress(researcher_client, snapshot):
    data = researcher_client.get(f"/runs/{snapshot.run_id}/status.json").json()
    assert data["status"] == "done" and data["tasks_done"] == data["tasks_total"] == 4
    assert data["snapshot"] == snapshot.pk


def test_researcher_starts_a_run_from_the_page(researcher_client):
    task_set, _ = population(n_models=3, n_tasks=2, name="page")
    response = researcher_client.post("/runs/new/", {
        "task_set": task_set.pk, "judge": "simulated", "dimensions": "U", "budget_per_task": 4, "seed": 1,
        "novelty_anchor": "tig",
    })
    run = JudgeRun.objects.get(task_set=task_set)
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"


def test_annotator_cannot_reach_results(client, alice, snapshot):
    client.login(username=alice.username, password=PASSWORD)
    for url in (f"/leaderboards/{snapshot.pk}/", f"/leaderboards/{snapshot.pk}/export.json",
                f"/runs/{snapshot.run_id}/status.json"):
        assert client.get(url).status_code == 403


def test_every_snapshot_export_carries_the_simulated_and_demo_marker(researcher_client, snapshot):
    snapshot.is_demo = True
    snapshot.save(update_fields=["is_demo"])
    rows = list(csv.DictReader(io.StringIO(researcher_client.get(f"/leaderboards/{snapshot.pk}/export.csv").content.decode())))
    assert {(r["simulated_judge"], r["demo_data"]) for r in rows} == {("true", "true")}
    data = json.loads(researcher_client.get(f"/leaderboards/{snapshot.pk}/export.json").content)
    assert data["simulated"] is True and data["demo"] is True
    tex = researcher_client.get(f"/leaderboards/{snapshot.pk}/export.tex").content.decode()
    assert "Simulated judge" in tex and "Demo data" in tex


def test_snapshot_page_names_each_dimension_plot_and_the_tier_legend(researcher_client, snapshot):
    body = researcher_client.get(f"/leaderboards/{snapshot.pk}/").content.decode()
    for name in ("Usefulness", "Expressiveness", "Novelty"):
        assert f"<title>{name}: BT expected win rate" in body
        assert f"<title>{name}: P(row beats column)" in body
    assert ">Tier:</text>" in body
    assert "Rank-probability heat map" in body


def test_leaderboard_list_shows_the_latest_snapshot_as_a_sortable_table(researcher_client, snapshot):
    body = researcher_client.get("/leaderboards/").content.decode()
    assert 'class="sortable results"' in body and "js/sortable_table.js" in body
    for name in snapshot.payload["models"]:
        assert name in body
    home = researcher_client.get("/").content.decode()
    assert "Latest leaderboards" in home and snapshot.payload["models"][0] in home


def test_compare_page_says_what_differs_and_shows_intervals(researcher_client, snapshot):
    second = judge_runs.judge_run_execute_inline(run=judge_runs.judge_run_create(
        task_set=snapshot.run.task_set, judge_name="simulated", budget_per_task=6, seed=99, dimensions="UEN",
        config={"n_boot": 100}))
    body = researcher_client.get(f"/leaderboards/compare/?a={snapshot.pk}&b={second.pk}").content.decode()
    assert '<tr class="differs"><th>Seed</th>' in body
    assert '<tr class="differs"><th>Budget per task and dimension</th>' in body  # calls per task and dimension
    assert '<tr><th>Judge</th>' in body
    low = second.payload["overall_ci90"][0][second.payload["order"][0]]
    assert f"[{low:.2f}," in body


def test_drilldown_summarises_the_task_and_shows_each_response_once(researcher_client, snapshot):
    from leaderboard.ekphrasis.models import Comparison

    snapshot.run.task_set.tasks.update(constraints={"avoid": ["clocks", "watches"], "format": "square"})
    task = snapshot.run.task_set.tasks.first()
    body = researcher_client.get(f"/leaderboards/{snapshot.pk}/tasks/{task.pk}/").content.decode()
    assert "Task BT win rate" in body
    assert "<li><strong>Avoid:</strong> clocks, watches</li>" in body and "{'avoid'" not in body
    shown = set(Comparison.objects.filter(run=snapshot.run, task=task).values_list("shown_a_id", flat=True))
    for pk in shown:
        assert body.count(f'id="response-{pk}"') == 1
    primary = Comparison.objects.filter(run=snapshot.run, task=task, kind="primary", dimension="U", status="ok")
    wins = sum(1 for c in primary if c.winner != "tie")
    assert wins > 0 and f"({primary.count()} primary judgment" in body


def test_drilldown_filters_and_paginates_comparisons(researcher_client, snapshot):
    from leaderboard.ekphrasis.models import Comparison

    task = snapshot.run.task_set.tasks.first()
    url = f"/leaderboards/{snapshot.pk}/tasks/{task.pk}/"
    every = Comparison.objects.filter(run=snapshot.run, task=task)
    body = researcher_client.get(url).content.decode()
    assert body.count('<article class="comparison">') == min(every.count(), 20)
    swaps = every.filter(dimension="E", kind="primary").count()
    body = researcher_client.get(url, {"dimension": "E", "kind": "primary"}).content.decode()
    assert body.count('<article class="comparison">') == min(swaps, 20) and f"Comparisons <span class=\"muted\">({swaps})" in body
    c = every.first()
    pair = every.filter(model_x=c.model_x, model_y=c.model_y).count()
    body = researcher_client.get(url, {"pair": f"{c.model_y_id}-{c.model_x_id}"}).content.decode()
    assert f"({pair})" in body
    if every.count() > 20:
        second = researcher_client.get(url, {"page": 2}).content.decode()
        assert "page 2 of" in second


def test_drilldown_refuses_a_bad_filter_with_400(researcher_client, snapshot):
    task = snapshot.run.task_set.tasks.first()
    url = f"/leaderboards/{snapshot.pk}/tasks/{task.pk}/"
    for query in ({"dimension": "X"}, {"pair": "1-"}, {"page": "0"}, {"page": "abc"}, {"kind": "nope"}):
        assert researcher_client.get(url, query).status_code == 400


def test_run_page_shows_chunks_comparisons_and_that_a_simulated_run_has_no_tokens(researcher_client, snapshot):
    body = researcher_client.get(f"/runs/{snapshot.run_id}/").content.decode()
    assert "simulated — no tokens" in body
    for task in snapshot.run.task_set.tasks.all():
        assert (f'<tr data-task="{task.pk}" data-run-row="{task.pk}"><td class="nowrap">{task.external_id}</td>'
                f'<td class="chunk-state" data-run-cell="state">done</td>') in body
        assert f"/leaderboards/{snapshot.pk}/tasks/{task.pk}/" in body
    data = researcher_client.get(f"/runs/{snapshot.run_id}/status.json").json()
    assert data["comparisons_done"] == data["comparisons"].get("ok", 0) + data["comparisons"].get("failed", 0) > 0


def c2_task_set(name: str = "c2-other"):
    from tests.factories import BenchmarkFactory, TaskSetFactory

    return TaskSetFactory(name=name, benchmark=BenchmarkFactory(kind="c2", name="C²"))


def test_the_run_form_offers_only_ekphrasis_task_sets(researcher_client):
    task_set, _ = population(n_models=3, n_tasks=1, name="ekph")
    other = c2_task_set()
    body = researcher_client.get("/leaderboards/").content.decode()
    assert f'<option value="{task_set.pk}">' in body
    assert f'<option value="{other.pk}">' not in body


def test_the_run_form_refuses_a_task_set_of_another_kind_with_a_clear_message(researcher_client):
    other = c2_task_set()
    response = researcher_client.post("/runs/new/", {
        "task_set": other.pk, "judge": "simulated", "dimensions": "U", "budget_per_task": 4, "seed": 1,
        "novelty_anchor": "generic",
    }, follow=True)
    assert not JudgeRun.objects.exists()
    assert "is of benchmark kind C², but Ekphrasis runs take only Ekphrasis task sets" in response.content.decode()


def test_a_board_where_every_model_scores_alike_says_why_it_shows_no_z(researcher_client):
    from tests.leaderboard.judging_factories import cyclic_run

    snapshot = judge_runs.judge_run_finalise(run_id=cyclic_run().pk)
    body = researcher_client.get(f"/leaderboards/{snapshot.pk}/").content.decode()
    assert "Every model has the same expected win rate on a dimension" in body
    assert "need at least 3 models" not in body


def test_the_bare_snapshot_compare_address_goes_to_the_picker_on_the_leaderboard_list(researcher_client):
    # it was a 400 ("a is missing; b is missing") where EASEL's and C²'s bare compare addresses are their pickers
    response = researcher_client.get("/leaderboards/compare/")
    assert response.status_code == 302 and response["Location"] == "/leaderboards/#compare"
    assert 'id="compare"' in researcher_client.get("/leaderboards/").content.decode()


@pytest.mark.parametrize(("url", "says"), [
    ("/leaderboards/compare/?b=1", "a is missing"),
    ("/leaderboards/compare/?a=1", "b is missing"),
    ("/leaderboards/compare/?a=x&b=1", "a is not a snapshot id"),
    ("/c2/compare/?a=1.5&b=2", "a is not a run id"),
    ("/easel/compare/?b=1", "a is missing"),
])
def test_compare_without_two_ids_says_which_is_wrong_and_where_to_pick_two(researcher_client, url, says):
    # The 400 page printed the form's errors as text: "Compare needs two snapshot ids: * a * This field is required."
    response = researcher_client.get(url)
    body = response.content.decode()
    assert response.status_code == 400 and says in body and "This field is required" not in body and "* a" not in body
    assert ("under All snapshots on the Leaderboards page" if "/leaderboards/" in url else "on this page without the query") in body


def test_with_one_snapshot_the_list_says_how_to_get_a_second_to_compare_instead_of_offering_radios(researcher_client, snapshot):
    # The home page's "Compare" leads here; with one snapshot the section offered two radio buttons, "Pick two",
    # and no button to press.
    body = researcher_client.get("/leaderboards/").content.decode()
    assert "There is only one so far" in body and 'href="#start-run"' in body and 'id="start-run"' in body
    assert 'name="a"' not in body and "Pick two" not in body


def test_with_two_snapshots_the_list_offers_the_compare_choice(researcher_client, snapshot):
    judge_runs.judge_run_execute_inline(run=judge_runs.judge_run_create(
        task_set=snapshot.run.task_set, judge_name="simulated", budget_per_task=6, seed=99, dimensions="UEN",
        config={"n_boot": 100}))
    body = researcher_client.get("/leaderboards/").content.decode()
    assert body.count('name="a"') == 2 and "Pick two" in body and "Compare selected" in body


def test_a_board_of_one_task_says_its_intervals_show_no_uncertainty(researcher_client, snapshot):
    """App. F.3 resamples tasks with replacement: with one task every resample is that task, so every 90% interval
    is the point estimate. The page says so rather than letting a zero-width interval read as certainty."""
    task_set, models = population(n_models=3, n_tasks=1, name="one")
    one = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=6, dimensions="U"))
    low, high = one.payload["per_dimension"]["U"]["winrate_ci90"]
    assert low == high == one.payload["per_dimension"]["U"]["winrate"]
    body = researcher_client.get(f"/leaderboards/{one.pk}/").content.decode()
    assert 'id="one-task"' in body and "resamples of the run's 1 task " in body
    assert 'id="one-task"' not in researcher_client.get(f"/leaderboards/{snapshot.pk}/").content.decode()


def test_run_page_names_the_active_pair_selection_rule_it_used(researcher_client, snapshot):
    """Algorithm 2 / App. F.1 selects active pairs by s(i,j); a run spends its budget under the engine's default rule
    (``ranking_info``) unless it asked for ``paper``, and the page says which, so a reader does not assume App. F.1."""
    body = researcher_client.get(f"/runs/{snapshot.run_id}/").content.decode()
    assert "active pair selection <code>ranking_info</code> (App. F.1's s(i,j) rule is <code>paper</code>)" in body
    run = snapshot.run
    run.config["rule"] = "paper"
    run.save(update_fields=["config"])
    body = researcher_client.get(f"/runs/{run.pk}/").content.decode()
    assert "active pair selection <code>paper</code> ·" in body


def test_snapshot_page_states_the_budget_per_task_and_dimension_and_the_papers_tier_rule(researcher_client, snapshot):
    """Table 9 budgets 50 judge calls per task *and dimension*, and App. F.4's tiers use the Wald interval of the BT
    difference: the page said "12/task" and cited App. F.4 for its own bootstrap tier rule."""
    body = researcher_client.get(f"/leaderboards/{snapshot.pk}/").content.decode()
    assert "budget 12 calls per task and dimension" in body and "/task ·" not in body
    assert "App. F.4 states the rule with the Wald interval of the BT difference instead" in body
    listing = researcher_client.get("/leaderboards/").content.decode()
    assert "Budget per task and dimension" in listing and "Budget/task" not in listing


def test_the_two_position_figures_on_the_snapshot_page_name_the_calls_they_measure(researcher_client, snapshot):
    # Table 11's A-position bias (every decisive primary call, App. D.2) and gate (v) (swapped pairs only,
    # App. D.3) were both called a position bias/effect with nothing telling them apart.
    body = researcher_client.get(f"/leaderboards/{snapshot.pk}/").content.decode()
    assert "A-position bias, all decisive primary calls (pp, App. D.2 Table 11)" in body
    assert "(v) order-swap position effect: A share on swapped pairs only" in body
    assert 'id="position-bias-note"' in body

"""Launch gates of a finished judge run on its pages, and the admin's recorded override."""

import pytest

from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import LaunchGateOverride
from leaderboard.ekphrasis.selectors import judge_run_launch_gates
from tests.factories import PASSWORD
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.fixture
def finished_run():
    task_set, models = population(n_models=4, n_tasks=2, name="gates")
    run = simulated_run(task_set, models, budget=8, dimensions="U")
    judge_runs.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    return run


def test_the_selector_measures_the_runs_comparisons(finished_run):
    gates = {g["key"]: g for g in judge_run_launch_gates(run=finished_run)["results"]}
    assert gates["parsing"]["measured"] == 1.0 and gates["parsing"]["passed"]
    assert gates["json_repair"]["measured"] == 0.0  # malformed_rate 0 in the factory run
    assert gates["l2mo_profiles"]["measured"] is None  # no Novelty dimension: not measured, not passed
    assert not gates["auxiliary_rank_corr"]["passed"]


def test_the_run_page_shows_each_value_beside_its_threshold(client, rita, finished_run):
    page = login(client, rita).get(f"/runs/{finished_run.pk}/").content.decode()
    assert "Launch gates (App. D.3)" in page and "not launch-ready" in page
    assert "&gt; 95%" in page and "&lt; 2% of primary calls" in page


def test_the_snapshot_page_shows_the_panel(client, rita, finished_run):
    snapshot = finished_run.snapshots.get()
    assert "Launch gates (App. D.3)" in login(client, rita).get(f"/leaderboards/{snapshot.pk}/").content.decode()


def test_only_an_admin_records_an_override_and_it_needs_a_reason(client, rita, adam, finished_run):
    url = f"/runs/{finished_run.pk}/launch-override"
    assert login(client, rita).post(url, {"reason": "x"}).status_code == 403
    login(client, adam).post(url, {"reason": ""})
    assert not LaunchGateOverride.objects.exists()
    login(client, adam).post(url, {"reason": "pilot on purpose without auxiliary judges"})
    override = LaunchGateOverride.objects.get()
    assert override.created_by == adam and override.failed_gates
    assert judge_run_launch_gates(run=finished_run)["cleared"]


def test_an_override_reason_over_the_limit_is_refused_saying_so_not_that_it_is_missing(client, adam, finished_run):
    # A reason of 2001 characters was refused with "An override needs a reason.", and the box had no limit.
    url = f"/runs/{finished_run.pk}/launch-override"
    page = login(client, adam).post(url, {"reason": "x" * 2001}, follow=True).content.decode()
    assert not LaunchGateOverride.objects.exists()
    assert "Not overridden: Reason — Ensure this value has at most 2000 characters (it has 2001)." in page
    assert "needs a reason" not in page and 'maxlength="2000"' in page


def test_a_response_parsed_anew_after_the_run_changes_the_gates(finished_run):
    from django.utils import timezone

    from leaderboard.models import Response

    before = {g["key"]: g for g in judge_run_launch_gates(run=finished_run)["results"]}
    response = Response.objects.filter(task__task_set=finished_run.task_set).order_by("pk").first()
    Response.objects.filter(pk=response.pk).update(normalisation_method=Response.Normalisation.PENDING,
                                                   normalised_at=timezone.now())
    after = {g["key"]: g for g in judge_run_launch_gates(run=finished_run)["results"]}
    assert after["parsing"]["measured"] < before["parsing"]["measured"] == 1.0


def test_a_finished_runs_gates_are_measured_once_and_its_overrides_read_fresh(finished_run, rita, monkeypatch):
    from engine import launch_gates

    first = judge_run_launch_gates(run=finished_run)
    monkeypatch.setattr(launch_gates, "launch_gates", lambda *a, **k: pytest.fail("measured again"))
    LaunchGateOverride.objects.create(run=finished_run, reason="pilot reviewed by hand", created_by=rita)
    again = judge_run_launch_gates(run=finished_run)
    assert again["results"] == first["results"] and not first["overrides"]
    assert [o.reason for o in again["overrides"]] == ["pilot reviewed by hand"] and again["cleared"]


def test_an_edited_response_measures_the_gates_again(finished_run, monkeypatch):
    from engine import launch_gates
    from leaderboard.models import Response

    judge_run_launch_gates(run=finished_run)
    measured = []
    real = launch_gates.launch_gates
    monkeypatch.setattr(launch_gates, "launch_gates", lambda *a, **k: measured.append(1) or real(*a, **k))
    response = Response.objects.filter(task__task_set=finished_run.task_set).first()
    response.core_idea = ""
    response.save(update_fields=["core_idea"])
    gates = {g["key"]: g for g in judge_run_launch_gates(run=finished_run)["results"]}
    assert measured == [1] and gates["parsing"]["measured"] < 1.0


def test_the_gates_read_each_calls_inspected_texts_and_only_novelty_checklists_and_measure_as_from_whole_rows():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from engine.launch_gates import GateComparison, ParsedResponse, launch_gates
    from leaderboard.ekphrasis import selectors
    from leaderboard.ekphrasis.models import Comparison
    from leaderboard.models import Response

    task_set, models = population(n_models=4, n_tasks=2, name="gates-read")
    run = simulated_run(task_set, models, budget=8, dimensions="UEN")
    judge_runs.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    with CaptureQueriesContext(connection) as queries:
        measured = selectors._launch_gate_results(run)
    read = next(q["sql"] for q in queries if f'FROM "{Comparison._meta.db_table}"' in q["sql"])
    # one text a side (the field the dimension inspects) and the checklist of Novelty calls only, not every
    # field of both responses and every call's checklist (~1.5 kB a row, 100 MB at the paper's scale)
    assert read.upper().count("CASE WHEN") == 3
    field = {"U": "core_idea", "E": "visual_description", "N": "core_idea"}
    whole = [
        GateComparison(
            task=c.task.external_id, dimension=c.dimension, model_a=str(c.shown_a.subject_model_id),
            model_b=str(c.shown_b.subject_model_id), winner=c.winner, kind=c.kind, repaired=c.repaired,
            judge=c.judge_name, text_a=getattr(c.shown_a, field[c.dimension]),
            text_b=getattr(c.shown_b, field[c.dimension]), pair_key=f"{c.task_id}:{c.model_x_id}:{c.model_y_id}",
            novelty_profile=selectors._novelty_profile(c.checklist) if c.dimension == "N" else None,
            active_selected=c.kind == Comparison.Kind.PRIMARY,
        )
        for c in Comparison.objects.filter(run=run, status=Comparison.Status.OK).exclude(
            kind=Comparison.Kind.AUTOMATIC).order_by("task_id", "dimension", "sequence")
        .select_related("task", "shown_a", "shown_b")
    ]
    parsed = [
        ParsedResponse(str(r.pk), bool(r.core_idea.strip()) and bool(r.visual_description.strip()))
        for r in Response.objects.filter(task__task_set=task_set)
    ]
    assert [r.to_dict() for r in measured] == [r.to_dict() for r in launch_gates(parsed, whole)]


def test_the_gates_decode_each_distinct_novelty_checklist_once_not_once_a_call(monkeypatch):
    import json

    from leaderboard.ekphrasis import selectors
    from leaderboard.ekphrasis.models import Comparison

    task_set, models = population(n_models=4, n_tasks=2, name="gates-decode")
    run = simulated_run(task_set, models, budget=8, dimensions="N")
    judge_runs.judge_run_execute_inline(run=run)
    run.refresh_from_db()
    expected = [r.to_dict() for r in selectors._launch_gate_results(run)]
    decoded = []
    loads = json.loads

    def counting(text, *args, **kwargs):
        decoded.append(text)
        return loads(text, *args, **kwargs)

    monkeypatch.setattr(selectors.json, "loads", counting)
    assert [r.to_dict() for r in selectors._launch_gate_results(run)] == expected
    novelty_calls = Comparison.objects.filter(run=run, status=Comparison.Status.OK, dimension="N").exclude(
        kind=Comparison.Kind.AUTOMATIC).count()
    assert len(decoded) == len(set(decoded)) < novelty_calls

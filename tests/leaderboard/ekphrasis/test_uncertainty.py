"""Overall tiers, family-table intervals and family/subtype slices of a stored snapshot
(leaderboard/ekphrasis/uncertainty.py), on the snapshot page and in the API."""

from __future__ import annotations

import pytest

from leaderboard.ekphrasis import judge_runs, uncertainty
from leaderboard.models import Task
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def snapshot():
    task_set, models = population(n_models=4, n_tasks=8)
    for k, task in enumerate(Task.objects.filter(task_set=task_set).order_by("external_id")):
        task.subtype = "AC-easy" if k % 2 else "AC-hard"
        task.save(update_fields=["subtype"])
    return judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=12, dimensions="UEN"))


@pytest.fixture
def researcher(client, rita):
    client.force_login(rita)
    return client


def test_overall_tiers_cover_every_model_and_never_join_models_whose_intervals_are_apart(snapshot):
    tiers = uncertainty.overall_tiers(snapshot)
    payload = snapshot.payload
    assert sorted(m for tier in tiers for m in tier) == list(range(len(payload["models"])))
    assert [m for tier in tiers for m in tier] == payload["order"]
    low, high = payload["overall_ci90"]
    for tier in tiers:
        for m, k in zip(tier[:-1], tier[1:]):
            assert low[m] <= high[k] and low[k] <= high[m]


def test_the_family_intervals_surround_the_family_tables_own_z(snapshot):
    families = uncertainty.family_intervals(snapshot)
    stored = snapshot.payload["families"]
    assert set(families) == set(stored)
    for family, summary in families.items():
        for d in snapshot.payload["dimensions"]:
            assert summary["per_dimension"][d]["z"] == stored[family]["z"][d]
            low, high = summary["z_ci90"][d]
            assert len(low) == len(high) == len(snapshot.payload["models"])
        assert summary["overall"] == stored[family]["task_avg"]


def test_a_subtype_slice_refits_the_board_on_that_subtypes_tasks(snapshot):
    board = uncertainty.slice_board(snapshot, "subtype", "AC-easy")
    assert board["n_tasks"] == 4 and board["kind"] == "subtype"
    low, high = board["overall_ci90"]
    assert all(lo <= v <= hi for lo, v, hi in zip(low, board["overall"], high))
    assert uncertainty.slice_board(snapshot, "subtype", "no-such") is None
    with pytest.raises(ValueError):
        uncertainty.slice_board(snapshot, "colour", "x")


def test_the_snapshot_page_shows_overall_tiers_family_intervals_and_a_slice(researcher, snapshot):
    body = researcher.get(f"/leaderboards/{snapshot.pk}/").content.decode()
    assert "Overall tier" in body and body.count('class="overall-tier"') == len(snapshot.payload["models"])
    assert "bootstrap\nover the family's own tasks" in body or "over the family's own tasks" in body
    family = sorted(snapshot.payload["families"])[0]
    sliced = researcher.get(f"/leaderboards/{snapshot.pk}/?slice=family:{family}").content.decode()
    assert 'id="slice-table"' in sliced and sliced.count("<tr><td class=\"num\">") >= len(snapshot.payload["models"])


@pytest.mark.parametrize(("query", "status"), [("slice=colour:x", 400), ("slice=family:", 400),
                                               ("slice=family:nonesuch", 404), ("slice=subtype:%00", 400)])
def test_a_bad_slice_is_a_400_or_404_not_a_500(researcher, snapshot, query, status):
    assert researcher.get(f"/leaderboards/{snapshot.pk}/?{query}").status_code == status


def test_the_api_gives_every_slice_with_its_intervals(researcher, snapshot):
    data = researcher.get(f"/api/v1/leaderboards/{snapshot.pk}/slices?by=subtype").json()
    assert set(data["slices"]) == {"AC-easy", "AC-hard"} and data["overall_tiers"]
    families = researcher.get(f"/api/v1/leaderboards/{snapshot.pk}/slices").json()
    assert set(families["slices"]) == set(snapshot.payload["families"])
    assert researcher.get(f"/api/v1/leaderboards/{snapshot.pk}/slices?by=colour").status_code == 400
    assert researcher.get("/api/v1/leaderboards/999999/slices").status_code == 404


def test_a_warmed_snapshot_answers_tiers_and_family_intervals_from_the_cache(snapshot, monkeypatch):
    from django.core.cache import cache

    cache.clear()
    uncertainty.snapshot_uncertainty_warm(snapshot_id=snapshot.pk)
    tiers, families = uncertainty.overall_tiers(snapshot), uncertainty.family_intervals(snapshot)

    def refit(*args, **kwargs):
        raise AssertionError("recomputed after the warm-up")

    monkeypatch.setattr(uncertainty, "board_uncertainty", refit)
    assert uncertainty.overall_tiers(snapshot) == tiers and tiers
    assert uncertainty.family_intervals(snapshot) == families and families


def test_a_snapshot_edited_by_hand_is_computed_afresh_not_read_from_the_cache(snapshot, monkeypatch):
    """A snapshot's payload (its models, dimensions, seed) changes only by a hand edit: its last save is in the key."""
    from django.core.cache import cache

    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    cache.clear()
    uncertainty.snapshot_uncertainty_warm(snapshot_id=snapshot.pk)
    stored = LeaderboardSnapshot.objects.get(pk=snapshot.pk)
    stored.payload = {**stored.payload, "seed": int(stored.payload.get("seed", 42)) + 1}
    stored.save()
    refits = []
    monkeypatch.setattr(uncertainty, "board_uncertainty", lambda *args, **kwargs: refits.append(kwargs) or None)
    uncertainty.overall_tiers(LeaderboardSnapshot.objects.get(pk=stored.pk))
    assert [kwargs["seed"] for kwargs in refits] == [stored.payload["seed"]]


def test_finishing_a_run_queues_the_warm_up_of_its_snapshot_after_the_commit(settings, monkeypatch,
                                                                             django_capture_on_commit_callbacks):
    from leaderboard.ekphrasis import tasks

    sent = []
    monkeypatch.setattr(tasks.snapshot_uncertainty_warm_task, "delay", sent.append)
    task_set, models = population(n_models=3, n_tasks=4)
    run = simulated_run(task_set, models, budget=6, dimensions="U")
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker: the finishing step only queues the warm-up
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = judge_runs.judge_run_finalise(run_id=_executed(run).pk)
    assert sent == [snapshot.pk]


def test_without_a_broker_or_background_jobs_finishing_a_run_warms_nothing(settings, monkeypatch,
                                                                          django_capture_on_commit_callbacks):
    from leaderboard.ekphrasis import tasks

    sent = []
    monkeypatch.setattr(tasks.snapshot_uncertainty_warm_task, "delay", sent.append)
    settings.CELERY_TASK_ALWAYS_EAGER, settings.ATELIER_EAGER_JOBS_IN_BACKGROUND = True, False
    task_set, models = population(n_models=3, n_tasks=4)
    with django_capture_on_commit_callbacks(execute=True):
        judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=6, dimensions="U"))
    assert sent == []


def test_the_warm_up_after_a_run_finishes_in_this_process_uses_the_comparisons_the_finishing_read(
    settings, monkeypatch, django_capture_on_commit_callbacks
):
    from django.core.cache import cache

    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    settings.CELERY_TASK_ALWAYS_EAGER, settings.ATELIER_EAGER_JOBS_IN_BACKGROUND = True, True  # warmed here
    cache.clear()
    task_set, models = population(n_models=4, n_tasks=4)
    read_again = []
    monkeypatch.setattr(uncertainty, "judged_comparisons", lambda *a, **k: read_again.append(1) or [])
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = judge_runs.judge_run_execute_inline(
            run=simulated_run(task_set, models, budget=8, dimensions="UN")
        )
    assert read_again == []
    monkeypatch.setattr(uncertainty, "board_uncertainty", lambda *a, **k: pytest.fail("not warmed"))
    stored = LeaderboardSnapshot.objects.get(pk=snapshot.pk)  # a reader's own copy, without the records
    warmed = uncertainty.overall_tiers(stored), uncertainty.family_intervals(stored)
    assert warmed[0] and warmed[1]
    # the same answers as from the database's comparisons
    monkeypatch.undo()
    cache.clear()
    fresh = LeaderboardSnapshot.objects.get(pk=snapshot.pk)
    assert (uncertainty.overall_tiers(fresh), uncertainty.family_intervals(fresh)) == warmed


def _executed(run):
    """The run with every chunk judged, not yet finalised."""
    for task_id in judge_runs.judge_run_pending_chunks(run_id=run.pk):
        judge_runs.judge_run_task_execute(run_id=run.pk, task_id=task_id)
    run.refresh_from_db()
    return run


def test_the_warm_up_after_a_run_finishes_in_this_process_draws_no_second_bootstrap_for_the_overall_tiers(
    settings, monkeypatch, django_capture_on_commit_callbacks
):
    """The finishing step draws the board's bootstrap once, with its Overall tiers; the warm-up then draws one
    bootstrap per family only, and the tiers are those a reader computes from the database."""
    from django.core.cache import cache

    from leaderboard.ekphrasis.models import LeaderboardSnapshot

    settings.CELERY_TASK_ALWAYS_EAGER, settings.ATELIER_EAGER_JOBS_IN_BACKGROUND = True, True  # warmed here
    cache.clear()
    task_set, models = population(n_models=4, n_tasks=4)
    drawn = []
    real = uncertainty.board_uncertainty
    monkeypatch.setattr(uncertainty, "board_uncertainty", lambda *a, **k: drawn.append(len(a[0])) or real(*a, **k))
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=8, dimensions="UN"))
    families = set(Task.objects.filter(task_set=task_set).values_list("family", flat=True))
    assert len(families) >= 2
    assert len(drawn) == len(families)  # one per family, none on all the comparisons
    stored = LeaderboardSnapshot.objects.get(pk=snapshot.pk)
    warmed = uncertainty.overall_tiers(stored)
    assert warmed
    cache.clear()
    assert uncertainty.overall_tiers(LeaderboardSnapshot.objects.get(pk=snapshot.pk)) == warmed
    assert len(drawn) == len(families) + 1  # the reader's own, from the database

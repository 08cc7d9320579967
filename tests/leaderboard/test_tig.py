"""Typed Idea Graphs in the site: lazily materialised leave-two-models-out Novelty items, the generic
ablation, audit outcomes flowing back, and the researcher-only viewer."""

from __future__ import annotations

import pytest

from leaderboard.models import ChecklistItem, Comparison
from leaderboard.services import judge_runs
from leaderboard.services.tig import novelty_context_items, task_population_index, tig_audit_apply
from tests.factories import PASSWORD, ResponseFactory, SubjectModelFactory, TaskFactory, TaskSetFactory

pytestmark = pytest.mark.django_db

CLICHE = [
    "An hourglass whose sand drains away as the day passes.",
    "A giant hourglass with sand slipping through its narrow waist.",
    "Sand pouring through an hourglass on a quiet table.",
]
UNIQUE = {
    "a": ["A subway map whose stations collapse into missed deadlines.",
          "A tailor's measuring tape unspooling into a river delta.",
          "A library card stamped with the dates of every season."],
    "b": ["A violin bow worn down into a pencil stub.",
          "A staircase of stacked calendars sinking into moss.",
          "Footprints in fresh snow that fade towards the horizon."],
}


@pytest.fixture
def planted():
    """Models c and d always use the hourglass cliché; a and b never do."""
    task_set = TaskSetFactory()
    task = TaskFactory(task_set=task_set)
    models = {name: SubjectModelFactory(display_name=f"tig-{name}") for name in "abcd"}
    for name, model in models.items():
        ideas = CLICHE if name in "cd" else UNIQUE[name]
        for sample, idea in enumerate(ideas, start=1):
            ResponseFactory(task=task, subject_model=model, sample=sample, is_primary=sample == 1, core_idea=idea)
    return task_set, task, models


def context_text(task, x, y) -> str:
    rows = novelty_context_items(task=task, model_x_id=x.pk, model_y_id=y.pk, index=task_population_index(task))
    return rows[0].text if rows else ""


def test_the_pair_that_avoids_the_cliche_is_judged_against_it(planted):
    _, task, m = planted
    assert "hourglass" in context_text(task, m["a"], m["b"]) or "sand" in context_text(task, m["a"], m["b"])


def test_a_motif_used_only_by_the_two_candidates_never_reaches_their_context(planted):
    _, task, m = planted
    text = context_text(task, m["c"], m["d"])
    assert "hourglass" not in text and "sand" not in text


def test_context_items_are_stored_once_per_pair_and_population_version(planted):
    _, task, m = planted
    context_text(task, m["a"], m["b"])
    context_text(task, m["a"], m["b"])
    assert ChecklistItem.objects.filter(task=task, source="tig").count() == 1


def test_novelty_judge_sees_the_tig_item_in_slot_one(planted):
    task_set, _, m = planted
    run = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="N",
                                      budget_per_task=20, config={"n_boot": 50})
    judge_runs.judge_run_execute_inline(run=run)
    ab = Comparison.objects.filter(run=run, model_x=min(m["a"].pk, m["b"].pk), model_y=max(m["a"].pk, m["b"].pk)).first()
    assert ab is not None and ab.checklist[0]["source"] == "tig"
    cd = Comparison.objects.filter(run=run, model_x=min(m["c"].pk, m["d"].pk), model_y=max(m["c"].pk, m["d"].pk))
    assert cd.exists()  # the warm start covers every model, and the active rounds reach this pair too
    for row in cd:  # the candidates' own cliché never anchors their comparison
        assert "hourglass" not in row.checklist[0]["text"] and "sand" not in row.checklist[0]["text"]


def test_generic_anchor_runs_use_no_population_items(planted):
    task_set, _, _ = planted
    run = judge_runs.judge_run_create(task_set=task_set, judge_name="simulated", dimensions="N",
                                      budget_per_task=6, novelty_anchor="generic", config={"n_boot": 50})
    judge_runs.judge_run_execute_inline(run=run)
    sources = {c["source"] for row in Comparison.objects.filter(run=run, kind="primary") for c in row.checklist}
    assert sources == {"template"}


def test_an_excluded_item_is_not_used_again_and_a_revision_replaces_the_wording(planted):
    _, task, m = planted
    index = task_population_index(task)
    item = novelty_context_items(task=task, model_x_id=m["a"].pk, model_y_id=m["b"].pk, index=index)[0]
    revised = tig_audit_apply(item_id=item.pk, action="revise", revision="Which response avoids the hourglass?")
    assert novelty_context_items(task=task, model_x_id=m["a"].pk, model_y_id=m["b"].pk, index=index)[0].pk == revised.pk
    tig_audit_apply(item_id=revised.pk, action="exclude", note="leaks a candidate's motif")
    assert novelty_context_items(task=task, model_x_id=m["a"].pk, model_y_id=m["b"].pk, index=index) == []


def test_viewer_is_for_researchers_only(client, rita, alice, planted):
    task_set, task, _ = planted
    url = f"/task-sets/{task_set.pk}/tig/{task.pk}/"
    client.login(username=alice.username, password=PASSWORD)
    assert client.get(url).status_code == 403
    client.login(username=rita.username, password=PASSWORD)
    body = client.get(url).content.decode()
    assert "<svg" in body and "ClicheScore" in body

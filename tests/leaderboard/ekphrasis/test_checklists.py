"""Stored checklist items: created from templates, versioned on edit, shown to the judge as stored."""

import pytest

from leaderboard.ekphrasis.checklists import (
    checklist_for_judging,
    checklist_item_revise,
    checklist_items_ensure,
)
from leaderboard.ekphrasis.models import ChecklistItem
from tests.factories import PASSWORD, TaskFactory

pytestmark = pytest.mark.django_db


def test_template_items_fill_three_slots_labelled_as_templates():
    task = TaskFactory(family="combination")
    rows = checklist_items_ensure(task=task, dimension="E")
    assert [r.slot for r in rows] == [1, 2, 3]
    assert {r.source for r in rows} == {"template"} and {r.inspects for r in rows} == {"visual_description"}
    assert "fused entity" in rows[0].text


def test_usefulness_and_novelty_items_inspect_the_core_idea():
    task = TaskFactory()
    for dimension in "UN":
        assert {r.inspects for r in checklist_items_ensure(task=task, dimension=dimension)} == {"core_idea"}


def test_revising_an_item_keeps_the_old_version_inactive():
    task = TaskFactory()
    first = checklist_items_ensure(task=task, dimension="U")[0]
    revised = checklist_item_revise(item=first, text="Which Core Idea fits the brief best?")
    first.refresh_from_db()
    assert (revised.version, revised.active, first.active) == (2, True, False)
    assert checklist_items_ensure(task=task, dimension="U")[0].pk == revised.pk


def test_the_judge_sees_the_stored_wording():
    task = TaskFactory()
    rows = checklist_items_ensure(task=task, dimension="N")
    checklist_item_revise(item=rows[1], text="Which Core Idea borrows from an unexpected domain?")
    checklist = checklist_for_judging(checklist_items_ensure(task=task, dimension="N"), task=task, dimension="N")
    assert checklist.items[1].text == "Which Core Idea borrows from an unexpected domain?"


def test_admin_edit_creates_a_new_version(client, adam):
    task = TaskFactory()
    item = checklist_items_ensure(task=task, dimension="U")[0]
    client.login(username=adam.username, password=PASSWORD)
    response = client.post(f"/admin/leaderboard/checklistitem/{item.pk}/change/", {"text": "Edited wording?"})
    assert response.status_code == 302
    assert ChecklistItem.objects.filter(task=task, dimension="U", slot=1).count() == 2
    assert ChecklistItem.objects.get(task=task, dimension="U", slot=1, active=True).text == "Edited wording?"

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


def test_an_admin_form_sent_twice_stores_one_new_version(client, adam):
    """The second POST names the version the first one superseded: it made a second active version of
    the slot (IntegrityError on checklist_item_one_active_per_slot, a 500 on the change page)."""
    task = TaskFactory()
    item = checklist_items_ensure(task=task, dimension="U")[0]
    client.force_login(adam)
    for _ in range(2):
        response = client.post(f"/admin/leaderboard/checklistitem/{item.pk}/change/", {"text": "Edited wording?"})
        assert response.status_code == 302
    assert ChecklistItem.objects.filter(task=task, dimension="U", slot=1).count() == 2


def test_revising_a_superseded_version_supersedes_the_active_one():
    task = TaskFactory()
    first = checklist_items_ensure(task=task, dimension="U")[0]
    second = checklist_item_revise(item=first, text="Second wording?")
    third = checklist_item_revise(item=first, text="Third wording?")
    second.refresh_from_db()
    assert (third.version, third.active, second.active) == (3, True, False)
    assert list(ChecklistItem.objects.filter(task=task, dimension="U", slot=1, active=True)) == [third]

"""The demo loader: labelled demo data, accounts with roles, idempotent."""

import pytest
from django.contrib.auth import get_user_model

from leaderboard.demo import demo_accounts_create, demo_catalogue_load
from leaderboard.models import Response, SubjectModel
from leaderboard.roles import user_roles

pytestmark = pytest.mark.django_db


def test_demo_catalogue_has_eight_briefs_two_per_family_and_96_plans():
    demo = demo_catalogue_load()
    families = sorted(demo.task_set.tasks.values_list("family", flat=True))
    assert families == sorted(["abstraction", "combination", "transformation", "adaptation"] * 2)
    assert Response.objects.filter(task__task_set=demo.task_set).count() == 96
    assert Response.objects.filter(is_primary=True).count() == 32


def test_demo_data_is_labelled_as_demo_everywhere():
    demo = demo_catalogue_load()
    assert demo.task_set.is_demo and "DEMO" in demo.task_set.description
    assert all(SubjectModel.objects.values_list("is_demo", flat=True))


def test_demo_unsplittable_answers_wait_for_the_llm_splitter():
    demo_catalogue_load()
    assert Response.objects.filter(normalisation_method="pending").count() == 2
    assert Response.objects.filter(normalisation_method="parser").count() == 10


def test_demo_loader_is_idempotent():
    demo_catalogue_load()
    again = demo_catalogue_load()
    assert (again.tasks.created, again.responses.created, again.responses.unchanged) == (0, 0, 96)


def test_demo_accounts_get_their_roles_and_passwords_once():
    first = demo_accounts_create()
    second = demo_accounts_create()
    assert all(first.values()) and not any(second.values())
    users = {u.username: user_roles(u) for u in get_user_model().objects.all()}
    assert "admin" in users["admin"] and "researcher" in users["researcher"]
    assert users["annotator1"] == frozenset({"annotator"})

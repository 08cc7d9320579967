"""The protocol registry: every protocol registers itself, and the role groups, navigation and kind checks
read it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from leaderboard.protocols import (
    Protocol,
    protocol_app_labels,
    protocol_register,
    protocols,
    task_set_kind_check,
)
from leaderboard.runs.errors import RunConfigurationError
from leaderboard.services.catalogue import role_groups_ensure
from tests.factories import BenchmarkFactory, TaskSetFactory

PROTOCOL_APPS = ["leaderboard", "easel", "c2"]


def test_the_three_protocols_register_themselves_in_their_app_configs():
    assert [p.kind for p in protocols()] == ["ekphrasis", "easel", "c2"]
    assert protocol_app_labels() == PROTOCOL_APPS


def test_a_second_different_protocol_of_a_registered_kind_is_refused():
    with pytest.raises(ValueError, match="registered already"):
        protocol_register(Protocol(kind="c2", app_label="other", title="x", run_model="other.Run", nav_url="home"))


@pytest.mark.django_db
@pytest.mark.parametrize("app_label", PROTOCOL_APPS)
@pytest.mark.parametrize("group", ["researcher", "admin"])
def test_the_researcher_and_admin_groups_hold_permissions_of_every_protocol_app(group, app_label):
    role_groups_ensure()
    labels = set(Group.objects.get(name=group).permissions.values_list("content_type__app_label", flat=True))
    assert app_label in labels


@pytest.mark.django_db
def test_a_researcher_may_view_c2_runs_and_only_an_admin_may_change_them():
    role_groups_ensure()
    researcher = set(Group.objects.get(name="researcher").permissions.values_list("codename", flat=True))
    admin = set(Group.objects.get(name="admin").permissions.values_list("codename", flat=True))
    assert "view_c2run" in researcher and "change_c2run" not in researcher
    assert "change_c2run" in admin


@pytest.mark.django_db
def test_a_task_set_of_another_kind_is_refused_naming_both_kinds():
    task_set = TaskSetFactory(name="c2-set", benchmark=BenchmarkFactory(kind="c2", name="C²"))
    with pytest.raises(RunConfigurationError, match="c2-set.* is of benchmark kind C², but Ekphrasis runs take only Ekphrasis task sets"):
        task_set_kind_check(task_set, kind="ekphrasis")
    task_set_kind_check(task_set, kind="c2")  # its own kind passes


@pytest.mark.django_db
def test_the_navigation_and_home_page_link_every_registered_protocol(client, rita):
    from django.urls import reverse

    client.force_login(rita)
    body = client.get("/").content.decode()
    for protocol in protocols():
        assert body.count(f'href="{reverse(protocol.nav_url)}"') >= 2  # the navigation entry and the home tile
        assert protocol.summary in body

"""The API's own writes when a request running at the same time takes the name first: found by eight
identical POSTs at once (task-set versions, subject models); the name was checked free, the insert then
hit the unique index and the request answered 500. Each race is made deterministic here: the other
request's row appears after the check (a task-set version) or while this request waits for the catalogue's
lock on names (a subject model, whose name is checked under that lock)."""

from __future__ import annotations

import pytest

from leaderboard.models import SubjectModel, TaskSet
from leaderboard.services import api_operations
from leaderboard.services.api_operations import ApiOperationRefused
from tests.factories import SubjectModelFactory, TaskFactory

pytestmark = pytest.mark.django_db


def _other_request_wins_after_the_check(monkeypatch, check_name: str, insert) -> None:
    """The first call of ``check_name`` finds the name free, then the other request inserts its row."""
    real = getattr(api_operations, check_name)
    calls = {"n": 0}

    def check(*args, **kwargs):
        real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 1:
            insert()

    monkeypatch.setattr(api_operations, check_name, check)


def test_a_version_created_meanwhile_is_refused_as_a_conflict(monkeypatch):
    task_set = TaskFactory().task_set
    _other_request_wins_after_the_check(monkeypatch, "_version_free", lambda: TaskSet.objects.create(
        benchmark=task_set.benchmark, name=task_set.name, version="2"))
    with pytest.raises(ApiOperationRefused) as refused:
        api_operations.task_set_version_create(task_set=task_set, version="2")
    assert refused.value.status == 409 and refused.value.errors == {"version": f"{task_set.name} v2 already exists"}
    assert TaskSet.objects.filter(name=task_set.name, version="2").count() == 1


def _other_request_commits_while_this_one_waits_for_the_names_lock(monkeypatch, insert) -> None:
    """Subject-model names are checked under the catalogue's lock (leaderboard.services.catalogue): the other
    request's row appears while this one waits for that lock, so the check after it must see the row."""
    from leaderboard.services import catalogue

    real = catalogue._model_names_lock
    calls = {"n": 0}

    def lock():
        calls["n"] += 1
        if calls["n"] == 1:
            insert()
        real()

    monkeypatch.setattr(catalogue, "_model_names_lock", lock)


def test_a_subject_model_created_meanwhile_is_refused_as_a_conflict(monkeypatch):
    _other_request_commits_while_this_one_waits_for_the_names_lock(
        monkeypatch, lambda: SubjectModel.objects.create(display_name="twin"))
    with pytest.raises(ApiOperationRefused) as refused:
        api_operations.subject_model_create(display_name="twin")
    assert refused.value.status == 409 and set(refused.value.errors) == {"display_name"}


def test_a_rename_to_a_name_taken_meanwhile_is_refused_as_a_conflict(monkeypatch):
    model = SubjectModelFactory(display_name="before")
    _other_request_commits_while_this_one_waits_for_the_names_lock(
        monkeypatch, lambda: SubjectModel.objects.create(display_name="after"))
    with pytest.raises(ApiOperationRefused) as refused:
        api_operations.subject_model_update(model=model, display_name="after")
    assert refused.value.status == 409 and set(refused.value.errors) == {"display_name"}
    model.refresh_from_db()
    assert model.display_name == "before"

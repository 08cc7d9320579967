"""Every JSON box of the admin reads its text as an API body or an import file is read
(engine.strict_json): a NUL, a lone surrogate, a non-finite number or nesting past the limit is a
form error. Django's own JSONField form field took all four, and PostgreSQL's jsonb refused the first
three on save (a 500 on /admin/leaderboard/task/<id>/change/); the fourth raised RecursionError."""

from __future__ import annotations

import pytest
from django import forms
from django.contrib import admin
from django.test import RequestFactory

from leaderboard.forms import StrictJSONField
from leaderboard.models import Task
from tests.factories import TaskFactory

pytestmark = pytest.mark.django_db


def _json_form_fields(request):
    for model, model_admin in admin.site._registry.items():
        obj = model.objects.first()
        admins = [model_admin, *model_admin.get_inline_instances(request, obj)]
        for each in admins:
            form = each.get_formset(request, obj).form if each is not model_admin else each.get_form(request, obj)
            for name, field in form.base_fields.items():
                if isinstance(field, forms.JSONField):
                    yield f"{type(each).__name__}.{name}", field


def test_every_json_field_of_every_admin_form_is_strict(adam):
    TaskFactory()  # an object to open, so that change forms are built too
    request = RequestFactory().get("/admin/")
    request.user = adam
    found = dict(_json_form_fields(request))
    assert "TaskAdmin.constraints" in found
    assert [name for name, field in found.items() if not isinstance(field, StrictJSONField)] == []


def _task_change(client, task, constraints: str):
    return client.post(f"/admin/leaderboard/task/{task.pk}/change/", {
        "task_set": task.task_set_id, "external_id": task.external_id, "family": task.family,
        "subtype": task.subtype, "brief": task.brief, "constraints": constraints, "source": "{}",
        "position": task.position,
    })


@pytest.mark.parametrize(("text", "message"), [
    ('{"avoid": "x\\u0000"}', "avoid: contains a NUL character"),
    ('{"\\u0000": 1}', "the key contains a NUL character"),
    ('["\\ud800"]', "[0]: contains a lone surrogate (U+D800)"),
    ('{"n": 1e999}', "n: must be a finite number, got 1e999"),
    ('{"n": NaN}', "n: must be a finite number, got NaN"),
    ("[" * 3000 + "]" * 3000, "nested deeper than"),
], ids=["nul", "nul-key", "lone-surrogate", "overflowing-float", "nan", "deep"])
def test_a_json_box_with_what_no_database_stores_is_a_form_error_and_nothing_is_saved(client, adam, text, message):
    task = TaskFactory(constraints={"avoid": []})
    client.force_login(adam)
    response = _task_change(client, task, text)
    assert response.status_code == 200
    assert message in str(response.context["adminform"].form.errors["constraints"])
    task.refresh_from_db()
    assert task.constraints == {"avoid": []}


def test_a_clean_json_box_is_saved(client, adam):
    task = TaskFactory(constraints={})
    client.force_login(adam)
    assert _task_change(client, task, '{"avoid": ["red"], "n": 2.5}').status_code == 302
    task.refresh_from_db()
    assert task.constraints == {"avoid": ["red"], "n": 2.5}
    assert Task.objects.count() == 1

"""leaderboard/runs/views.py: a page's Start that is refused goes back to the page, which shows again what the
researcher typed (it came back with the form's defaults, everything typed lost)."""

from __future__ import annotations

import pytest

from tests.leaderboard.c2.test_views import login

pytestmark = pytest.mark.django_db

TYPED = '7"><b>x'  # a wrong value, shown again escaped


def test_a_refused_judge_run_form_shows_what_was_typed_again(client, rita):
    page = login(client, rita).post("/runs/new/", {
        "dimensions": "UE", "budget_per_task": "0", "seed": "11", "novelty_anchor": "generic"}, follow=True)
    html = page.content.decode()
    assert "Run not started" in html
    assert 'name="dimensions" value="UE"' in html and 'name="budget_per_task" type="number" value="0"' in html
    assert 'name="seed" type="number" value="11"' in html and '<option value="generic" selected>' in html
    again = client.get("/leaderboards/").content.decode()  # once: the next visit shows the defaults
    assert 'name="budget_per_task" type="number" value="50"' in again and 'name="seed" type="number" value="42"' in again


def test_a_refused_c2_run_form_shows_what_was_typed_again(client, rita):
    page = login(client, rita).post("/c2/runs/new/", {
        "models": "demo-atlas, demo-brook", "samples": "0", "seed": TYPED, "template": "creative"}, follow=True)
    html = page.content.decode()
    assert "Run not started" in html and 'value="demo-atlas, demo-brook"' in html
    assert 'value="7&quot;&gt;&lt;b&gt;x"' in html and '<b>x' not in html
    assert '<option value="creative" selected>' in html


def test_a_refused_easel_run_form_shows_what_was_typed_again(client, rita):
    from leaderboard.easel.services import easel_suite_create

    suite, _ = easel_suite_create(seed=0, name="easel-typed", per_category={
        "programmatic": 1, "spatial_geometry": 0, "abstract_cartoon": 0, "natural": 0})
    html = login(client, rita).post("/easel/runs/new/", {
        "task_set": suite.pk, "agent": "simulated", "budget": "native", "seed": "5", "skill": "3"},
        follow=True).content.decode()
    assert "Run not started" in html and 'name="seed" value="5"' in html and 'name="skill" value="3"' in html
    assert '<option value="native" selected>' in html

"""annotation.calibrated_columns: a C² run's calibrated divergent U/O/S (page, CSV/JSON/LaTeX, API) and
the campaign-level calibrated columns export of U-O-S and canvas-similarity campaigns."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from annotation.calibrated_columns import c2_run_calibrated
from annotation.validation_dashboards import uos_panel
from leaderboard.c2.models import C2Rating
from tests.annotation.helpers import annotators, fill
from tests.annotation.test_validation_kinds import _score
from tests.annotation.validation_factories import C2World, EaselWorld, canvas_campaign, uos_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def rated():
    users = annotators(3)
    world = C2World()
    campaign = uos_campaign(world, annotators=users, n_items=6)
    bias = {u.username: i - 1 for i, u in enumerate(users)}
    fill(campaign, users, lambda u, a: _score(u, a, bias))
    return world, campaign


def test_the_run_view_is_the_panels_calibrated_means_on_the_boards_scale(rated):
    world, campaign = rated
    view = c2_run_calibrated(run=world.run, campaign=campaign)
    panel = {m["name"]: m for m in uos_panel(campaign=campaign)["models"]}
    assert view["models"] and view["campaign"] == campaign.pk
    assert any(m["cells"][0]["calibrated"] is not None for m in view["models"])
    for m in view["models"]:
        u = m["cells"][0]
        cal = panel[m["model"]]["calibrated"][0]
        if cal["estimate"] is None:  # fewer than two rated samples of this model
            assert u["calibrated"] is None
        else:
            assert u["calibrated"] == pytest.approx(round(cal["estimate"] * 20, 2))
        assert u["lam"] == cal["lam"] and u["n_human"] == cal["n_human"]
        scores = C2Rating.objects.filter(sample__run=world.run, sample__subject_model__display_name=m["model"],
                                         repeat=0, status="ok").values_list("u", flat=True)
        assert u["rater_only"] == pytest.approx(round(float(np.mean(list(scores))) * 20, 2))


def test_the_run_page_shows_the_calibrated_columns_and_links_its_exports(rated, client, rita):
    world, campaign = rated
    client.force_login(rita)
    page = client.get(f"/annotate/calibration/c2/runs/{world.run.pk}/").content.decode()
    assert 'id="c2-calibrated"' in page and "data-calibrated=" in page
    for fmt in ("csv", "json", "tex"):
        assert f"/annotate/calibration/c2/runs/{world.run.pk}/export.{fmt}?campaign={campaign.pk}" in page


def test_the_run_exports_and_api_carry_every_model_and_component(rated, client, rita):
    world, campaign = rated
    client.force_login(rita)
    base = f"/annotate/calibration/c2/runs/{world.run.pk}/export"
    rows = list(csv.DictReader(io.StringIO(client.get(base + ".csv").content.decode())))
    view = c2_run_calibrated(run=world.run, campaign=campaign)
    assert len(rows) == 3 * len(view["models"])
    assert {r["component"] for r in rows} == {"usefulness", "originality", "surprise"}
    assert json.loads(client.get(base + ".json").content)["models"] == json.loads(json.dumps(view["models"]))
    tex = client.get(base + ".tex").content.decode()
    assert tex.startswith(r"\begin{table}") and "calibrated" in tex and view["models"][0]["model"] in tex
    api = client.get(f"/api/v1/c2/runs/{world.run.pk}/calibrated").json()
    assert api["models"] == json.loads(json.dumps(view["models"]))
    assert client.get(f"/api/v1/c2/runs/{world.run.pk}/calibrated?campaign=999999").status_code == 404


ARABIC_INDIC, FULLWIDTH = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"), str.maketrans("0123456789", "０１２３４５６７８９")


@pytest.mark.parametrize("digits", [ARABIC_INDIC, FULLWIDTH])
def test_the_calibrated_apis_refuse_a_campaign_id_in_other_digits_naming_the_parameter(rated, client, rita, digits):
    # int() reads "١" or "１" as 1: the board of that campaign was answered for a value that is no id
    world, campaign = rated
    client.force_login(rita)
    other = str(campaign.pk).translate(digits)
    for url in (f"/api/v1/c2/runs/{world.run.pk}/calibrated", "/api/v1/leaderboards/999999/calibrated"):
        got = client.get(url, {"campaign": other})
        assert got.status_code == 400, url
        assert got.json()["error"] == "invalid" and list(got.json()["details"]) == ["campaign"], url
    assert client.get(f"/api/v1/c2/runs/{world.run.pk}/calibrated", {"campaign": campaign.pk}).status_code == 200


def test_a_run_nobody_rated_has_no_calibrated_columns(client, rita):
    world = C2World()
    client.force_login(rita)
    page = client.get(f"/annotate/calibration/c2/runs/{world.run.pk}/").content.decode()
    # the admin button it points to is "Items from runs" (templates/admin/annotation/campaign/change_form.html)
    assert 'id="no-campaign"' in page and '"Items from runs"' in page
    assert client.get(f"/annotate/calibration/c2/runs/{world.run.pk}/export.csv").status_code == 404
    assert client.get(f"/api/v1/c2/runs/{world.run.pk}/calibrated").status_code == 404
    assert client.get("/annotate/calibration/c2/runs/999999/").status_code == 404


def test_the_calibrated_pages_answer_head_as_get_without_a_body_and_refuse_post(rated, client, rita):
    # read-only pages take GET and HEAD (require_safe): a link checker's or a proxy's HEAD was a 405
    world, campaign = rated
    client.force_login(rita)
    for url in (f"/annotate/calibration/c2/runs/{world.run.pk}/", f"/annotate/calibration/c2/runs/{world.run.pk}/export.csv",
                f"/annotate/campaigns/{campaign.pk}/calibrated.csv", "/annotate/calibration/judges/"):
        got, head = client.get(url), client.head(url)
        assert got.status_code == head.status_code == 200, url
        assert head["Content-Type"] == got["Content-Type"] and head.content == b"", url
        assert client.post(url).status_code == 405, url


def test_the_campaign_export_has_the_uos_and_the_preference_columns(rated, client, rita):
    _, uos = rated
    users = annotators(3, prefix="canvas")
    canvas = canvas_campaign(EaselWorld(), annotators=users, pairs_per_task=6)
    fill(canvas, users, lambda u, a: {"choice": "A"})
    client.force_login(rita)
    rows = list(csv.DictReader(io.StringIO(client.get(f"/annotate/campaigns/{uos.pk}/calibrated.csv").content.decode())))
    assert rows and {r["component"] for r in rows} == {"usefulness", "originality", "surprise"}
    rows = list(csv.DictReader(io.StringIO(client.get(f"/annotate/campaigns/{canvas.pk}/calibrated.csv").content.decode())))
    assert rows and {r["component"] for r in rows} == {"preference_rate"}
    api = client.get(f"/api/v1/campaigns/{canvas.pk}/calibrated").json()
    assert {a["agent"] for a in api["agents"]} == {r["group"] for r in rows}
    assert json.loads(client.get(f"/annotate/campaigns/{uos.pk}/calibrated.json").content)["models"]


def test_the_canvas_columns_are_computed_once_per_state_of_their_labels(client, rita, monkeypatch):
    # recomputed on every request (~0.15 s each); now kept while the labels, items and episodes are unchanged
    from annotation import calibrated_preference
    from annotation.validation_dashboards import similarity_panel

    users = annotators(3, prefix="canvas")
    canvas = canvas_campaign(EaselWorld(), annotators=users, pairs_per_task=6)
    fill(canvas, users[:2], lambda u, a: {"choice": "A"})
    computed = []
    compute = calibrated_preference.preference_calibrated_agents
    monkeypatch.setattr(calibrated_preference, "preference_calibrated_agents",
                        lambda **kw: computed.append(1) or compute(**kw))
    client.force_login(rita)
    first = client.get(f"/api/v1/campaigns/{canvas.pk}/calibrated").json()
    assert client.get(f"/api/v1/campaigns/{canvas.pk}/calibrated").json() == first
    assert client.get(f"/annotate/campaigns/{canvas.pk}/calibrated.csv").status_code == 200
    assert len(computed) == 1
    # an episode of its runs finished since (a run still painting): its S-only pairs may be new
    from django.utils import timezone

    from leaderboard.easel.models import EaselEpisode

    EaselEpisode.objects.filter(pk=EaselEpisode.objects.filter(status="done", kind="reconstruction").first().pk).update(
        finished_at=timezone.now())
    assert client.get(f"/api/v1/campaigns/{canvas.pk}/calibrated").json() == first and len(computed) == 2
    fill(canvas, users[2:], lambda u, a: {"choice": "B"})  # new labels: a new state, computed again
    after = client.get(f"/api/v1/campaigns/{canvas.pk}/calibrated").json()
    assert len(computed) == 3 and after != first
    assert after["agents"] == json.loads(json.dumps(similarity_panel(campaign=canvas)["calibrated"]["agents"]))


def test_an_annotator_cannot_read_calibrated_columns(rated, client):
    world, campaign = rated
    client.force_login(annotators(1, prefix="other")[0])
    assert client.get(f"/annotate/calibration/c2/runs/{world.run.pk}/").status_code in (302, 403)
    assert client.get(f"/annotate/campaigns/{campaign.pk}/calibrated.csv").status_code in (302, 403)
    assert client.get(f"/api/v1/c2/runs/{world.run.pk}/calibrated").status_code == 403


def test_a_model_the_people_never_rated_keeps_its_rater_column(rated, client, rita):
    # a model added to the run after the labels: the rater scored its samples, nobody rated them. The run's
    # calibrated table listed only the models people rated, so it vanished, rater column and all
    from leaderboard.c2.models import C2Sample
    from tests.factories import SubjectModelFactory

    world, campaign = rated
    late = SubjectModelFactory(display_name="Late-Model", provider_id="provider/late")
    world.run.subjects.add(late)
    for task in world.stories:
        sample = C2Sample.objects.create(run=world.run, subject_model=late, task=task, sample_index=1, status="done",
                                         text="A late story.")
        C2Rating.objects.create(sample=sample, rater_name="simulated", repeat=0, status="ok", u=4, o=2, s=3)
    view = c2_run_calibrated(run=world.run, campaign=campaign)
    row = next(m for m in view["models"] if m["model"] == "Late-Model")
    u = row["cells"][0]
    assert u["rater_only"] == 80.0 and u["n_rater"] == 2
    assert u["people"] is None and u["calibrated"] is None and u["n_human"] == 0 and row["n_rated"] == 0
    client.force_login(rita)
    page = client.get(f"/annotate/calibration/c2/runs/{world.run.pk}/").content.decode()
    assert 'data-model="Late-Model"' in page
    for fmt in ("csv", "json", "tex"):
        assert client.get(f"/annotate/calibration/c2/runs/{world.run.pk}/export.{fmt}").status_code == 200


def test_the_canvas_columns_follow_s_rescored_in_place_on_the_next_request(client, rita):
    """The key named the labels, items and finished episodes but not the scores: S rewritten in place (the
    same episodes, no new finish) was read stale from the cache for up to DASHBOARD_TTL_S."""
    from django.db.models import F

    from annotation.validation_dashboards import similarity_panel
    from leaderboard.easel.models import EaselStep

    world = EaselWorld()
    users = annotators(3, prefix="canvas")
    canvas = canvas_campaign(world, annotators=users, pairs_per_task=6)
    fill(canvas, users, lambda u, a: {"choice": "A"})
    client.force_login(rita)
    first = client.get(f"/api/v1/campaigns/{canvas.pk}/calibrated").json()
    # the strongest agent's canvases rescored (a new S formula, say): S's sign flips on its pairs
    EaselStep.objects.filter(episode__run=world.runs[-1]).update(s=F("s") * 0.1)
    after = client.get(f"/api/v1/campaigns/{canvas.pk}/calibrated").json()
    assert after != first
    assert after["agents"] == json.loads(json.dumps(similarity_panel(campaign=canvas)["calibrated"]["agents"]))

"""The calibrated board of the demo snapshot (annotation.calibration, its page, export and API) and the
judge cards (annotation.judge_card), on the real demo: the catalogue, the simulated judge's run and
the demo campaigns with their simulated labels. Loaded once per module; each test in its own
rolled-back transaction."""

from __future__ import annotations

import csv
import io
import shutil
import subprocess

import pytest

from annotation import calibration
from annotation.choices import CampaignKind
from annotation.models import CalibrationRecord, Campaign, CampaignProgress, Item
from engine.calibration_views import CALIBRATION_METHOD_VERSION
from engine.latex import tex_escape
from leaderboard.ekphrasis.models import LeaderboardSnapshot
from tests.annotation.demo_support import demo_loaded

pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("demo")]


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), demo_loaded(judge_run=True) as loaded:
        yield loaded


def _text_campaign(task_set) -> Campaign:
    # the demo's crowd study (annotation.demo_panel) is a text pairwise campaign on the same task set too
    return Campaign.objects.get(task_set=task_set, kind=CampaignKind.TEXT_PAIRWISE, is_demo=True,
                                panel_study__isnull=True)


def test_the_demo_board_shows_the_three_views_side_by_side(demo, client, rita):
    client.force_login(rita)
    page = client.get(f"/annotate/calibration/snapshots/{demo['snapshot'].pk}/").content.decode()
    for name in ("Judge only", "People only", "Calibrated by people"):
        assert name in page
    for dimension in ("usefulness", "expressiveness", "novelty"):
        assert f'id="views-{dimension}"' in page
    assert "rank-set" in page and "λ =" in page and "effective human n" in page
    assert "Labels used: campaign" in page  # which labels (campaign, label version) the board used


def test_the_style_toggle_shows_the_coefficients(demo, client, rita):
    client.force_login(rita)
    url = f"/annotate/calibration/snapshots/{demo['snapshot'].pk}/"
    assert 'class="style-coefficients"' not in client.get(url).content.decode()
    page = client.get(url + "?style=1").content.decode()
    assert 'class="style-coefficients"' in page
    for feature in ("length", "list_items", "adjectives"):
        assert f'data-feature="{feature}"' in page


def test_the_calibrated_view_borrows_from_the_judge_on_pairs_nobody_labelled(demo):
    campaign = _text_campaign(demo["task_set"])
    record = calibration.calibration_record_ensure(snapshot=demo["snapshot"], campaign=campaign)
    views = record.payload["dimensions"]
    assert set(views) == {"usefulness", "expressiveness", "novelty"}
    borrowing = []
    for dimension, view in views.items():
        c = view["calibrated"]
        # people label every pair of half the demo tasks; the judge's verdicts on the other half are
        # the comparisons nobody labelled
        assert c["n_human"] >= 15 and c["n_judge_unpaired"] >= 20, dimension
        # λ is estimated from a few dozen paired labels per dimension, so on one dimension it can come out 0
        # (the tuned λ clipped at 0, or the people's own fit narrower): the demo judge's comparisons
        # depend on the database's ids through active sampling. Where it borrows, it narrows.
        assert 0 <= c["lam"] <= 1, dimension
        if c["lam"] > 0:
            borrowing.append(dimension)
            assert c["effective_human_n"] > c["n_human"], dimension
        for row in c["rows"]:
            best, worst = row["rank_set"]
            assert 1 <= best <= worst <= len(record.payload["models"])
    # the demo's simulated judge and annotators see the same per-answer qualities, so the judge's verdict
    # predicts the people's beyond the two models' skills: the fit borrows from it
    assert borrowing, "the calibrated fit borrowed from the judge on no dimension"


def test_a_record_is_kept_per_label_version(demo):
    campaign = _text_campaign(demo["task_set"])
    first = calibration.calibration_record_ensure(snapshot=demo["snapshot"], campaign=campaign)
    again = calibration.calibration_record_ensure(snapshot=demo["snapshot"], campaign=campaign)
    assert again.pk == first.pk
    CampaignProgress.objects.filter(pk=campaign.pk).update(label_version=first.label_version + 1)
    newer = calibration.calibration_record_ensure(snapshot=demo["snapshot"], campaign=campaign)
    assert newer.pk != first.pk and newer.label_version == first.label_version + 1
    assert CalibrationRecord.objects.filter(snapshot=demo["snapshot"], campaign=campaign).count() == 2


def test_a_board_stored_by_older_calibration_formulas_is_computed_again(demo):
    # a record is reused until new labels arrive; a board computed by older engine code (before a fix in
    # engine/calibration.py or engine/style_control.py) must not be shown forever for the same labels
    campaign = _text_campaign(demo["task_set"])
    first = calibration.calibration_record_ensure(snapshot=demo["snapshot"], campaign=campaign)
    assert first.method_version == CALIBRATION_METHOD_VERSION
    CalibrationRecord.objects.filter(pk=first.pk).update(method_version=CALIBRATION_METHOD_VERSION - 1,
                                                         payload={**first.payload, "dimensions": {}})
    again = calibration.calibration_record_ensure(snapshot=demo["snapshot"], campaign=campaign)
    assert again.pk != first.pk and again.method_version == CALIBRATION_METHOD_VERSION
    assert again.label_version == first.label_version and again.payload["dimensions"] == first.payload["dimensions"]
    # the older record stays readable in the history; the current one is read back from now on
    assert CalibrationRecord.objects.filter(snapshot=demo["snapshot"], campaign=campaign).count() == 2
    assert calibration.calibration_record_ensure(snapshot=demo["snapshot"], campaign=campaign).pk == again.pk


def test_a_model_profile_takes_no_figures_from_a_board_of_older_calibration_formulas(demo):
    from annotation.model_validation import model_validation_figures
    from leaderboard.models import SubjectModel

    record = calibration.calibration_record_ensure(snapshot=demo["snapshot"], campaign=_text_campaign(demo["task_set"]))
    model = SubjectModel.objects.get(display_name=record.payload["models"][0])
    assert model_validation_figures(model)
    CalibrationRecord.objects.update(method_version=CALIBRATION_METHOD_VERSION - 1)
    assert model_validation_figures(model) == []


def test_the_export_has_every_view(demo, client, rita):
    client.force_login(rita)
    response = client.get(f"/annotate/calibration/snapshots/{demo['snapshot'].pk}/export.csv")
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert {r["view"] for r in rows} >= {"judge_only", "people_only", "calibrated"}
    assert {r["campaign"] for r in rows} == {_text_campaign(demo["task_set"]).name}


def test_the_latex_export_sets_the_three_views_side_by_side_per_dimension(demo, client, rita, tmp_path):
    client.force_login(rita)
    response = client.get(f"/annotate/calibration/snapshots/{demo['snapshot'].pk}/export.tex")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/x-tex")
    tex = response.content.decode()
    record = calibration.calibration_record_ensure(snapshot=demo["snapshot"], campaign=_text_campaign(demo["task_set"]))
    assert tex.count(r"\begin{table}") == len(record.payload["dimensions"])
    for name in ("Judge only", "People only", "Calibrated by people", "rank [set]", "label version"):
        assert name in tex
    for model in record.payload["models"]:
        assert tex_escape(model) in tex
    if shutil.which("pdflatex"):  # the table compiles (booktabs, as the snapshot's own LaTeX export)
        (tmp_path / "board.tex").write_text("\\documentclass{article}\\usepackage{booktabs}\\usepackage[utf8]{inputenc}"
                                            "\\begin{document}\n" + tex + "\\end{document}\n")
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "board.tex"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout[-2000:]


def test_the_api_returns_the_calibrated_views(demo, client, rita):
    client.force_login(rita)
    body = client.get(f"/api/v1/leaderboards/{demo['snapshot'].pk}/calibrated").json()
    assert body["campaign"] == _text_campaign(demo["task_set"]).pk and "label_version" in body
    assert set(body["dimensions"]["usefulness"]) >= {"judge_only", "people_only", "calibrated", "rank_changes"}


def test_an_unknown_campaign_or_snapshot_is_a_404(demo, client, rita):
    client.force_login(rita)
    pk = demo["snapshot"].pk
    assert client.get(f"/annotate/calibration/snapshots/{pk}/?campaign=999999").status_code == 404
    assert client.get(f"/annotate/calibration/snapshots/{pk}/?campaign=abc").status_code == 404
    assert client.get("/annotate/calibration/snapshots/999999/").status_code == 404
    assert client.get("/api/v1/leaderboards/999999/calibrated").status_code == 404


def test_an_annotator_cannot_read_the_calibrated_board(demo, client, alice):
    client.force_login(alice)
    assert client.get(f"/annotate/calibration/snapshots/{demo['snapshot'].pk}/").status_code == 403
    assert client.get("/annotate/calibration/judges/").status_code == 403


def test_the_snapshot_page_links_to_the_calibrated_board(demo, client, rita):
    client.force_login(rita)
    page = client.get(f"/leaderboards/{demo['snapshot'].pk}/").content.decode()
    assert f"/annotate/calibration/snapshots/{demo['snapshot'].pk}/" in page


def test_the_judge_card_has_one_row_per_judge_with_every_column(demo, client, rita):
    client.force_login(rita)
    cards = client.get("/api/v1/judges/cards").json()["results"]
    judges = [c["judge"] for c in cards]
    assert len(judges) == len(set(judges)) and "simulated" in judges
    card = next(c for c in cards if c["judge"] == "simulated")
    for column in ("agreement_with_people", "position_flip_rate", "duplicate_consistency", "prefers_longer",
                   "tie_rate", "cost_per_1000_usd", "seconds_per_1000", "lam"):
        assert column in card
    assert 0 <= card["agreement_with_people"] <= 1 and card["n_agreement_pairs"] > 0
    page = client.get("/annotate/calibration/judges/").content.decode()
    assert 'data-judge="simulated"' in page


def test_the_demo_shows_both_sampling_rules(demo):
    strata = set(Item.objects.filter(campaign=_text_campaign(demo["task_set"])).values_list("sampling_stratum", flat=True))
    assert "calibration" in strata and strata - {"calibration"}


def test_the_snapshot_without_a_campaign_says_so(demo, client, rita):
    client.force_login(rita)
    Campaign.objects.filter(task_set=demo["task_set"], kind=CampaignKind.TEXT_PAIRWISE).update(kind=CampaignKind.STRATEGY)
    page = client.get(f"/annotate/calibration/snapshots/{demo['snapshot'].pk}/").content.decode()
    assert 'id="no-campaign"' in page
    assert LeaderboardSnapshot.objects.filter(pk=demo["snapshot"].pk).exists()


# --- degenerate labels on a small world (no demo): four models on six tasks, one simulated judge run ------------


def _small_board(answer, *, k: int = 1, labelled_models: int = 4):
    """A snapshot of a simulated judge run on four models × six tasks (usefulness only) and a text-pairwise
    campaign on its task set whose items pair the first ``labelled_models`` models, labelled by one
    annotator with ``answer(user, assignment)`` (None: nobody labels)."""
    import random

    from annotation import item_creation
    from annotation.choices import Dimension
    from leaderboard.ekphrasis import judge_runs
    from leaderboard.ekphrasis.launch_gates import launch_gates_override
    from leaderboard.models import Response
    from tests.annotation.factories import campaign_for
    from tests.annotation.helpers import annotators, fill
    from tests.factories import UserFactory
    from tests.leaderboard.judging_factories import population, simulated_run

    task_set, models = population(n_models=4, n_tasks=6, name="small")
    snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=12, dimensions="U"))
    launch_gates_override(run=snapshot.run, reason="a test board", by=UserFactory(role="admin"))
    users = annotators(1, prefix="small")

    class _Catalogue:
        pass

    catalogue = _Catalogue()
    catalogue.task_set = task_set
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue, k=k, annotators=users)
    pairs = [(a, b) for a in range(labelled_models) for b in range(a + 1, labelled_models)]
    specs = []
    for task in task_set.tasks.all():
        shown = {r.subject_model_id: r for r in Response.objects.filter(task=task, is_primary=True)}
        specs += [item_creation.ItemSpec(task=task, dimension=Dimension.USEFULNESS, response_a=shown[models[a].pk],
                                         response_b=shown[models[b].pk], payload={"checklist": ["Does it fit?"]})
                  for a, b in pairs]
    item_creation.items_create(campaign=campaign, specs=specs, rng=random.Random(1))
    if answer is not None:
        fill(campaign, users, answer)
    return snapshot, campaign, models


def _page_text(client, url: str) -> str:
    import re

    response = client.get(url)
    assert response.status_code == 200
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def test_the_style_toggle_without_enough_comparisons_says_so_and_is_no_500(client, rita):
    # nobody labelled yet: no people's style-controlled fit (it needs 10 comparisons). The page's resample
    # count read the people's fit as a filter argument, which Django raises on when it is None: a 500
    snapshot, campaign, _ = _small_board(None)
    client.force_login(rita)
    text = _page_text(client, f"/annotate/calibration/snapshots/{snapshot.pk}/?style=1")
    assert "People Too few comparisons for a style-controlled fit (0; it needs at least 10)" in text
    assert "50 resamples" in text  # the judge's fit has its resamples


def test_a_model_added_after_the_labels_is_unranked_in_every_people_view(client, rita):
    # people labelled pairs of three models; the fourth was never shown to anyone. The style-controlled
    # people's fit gave it the reference model's score with a bootstrap interval, ranked among the others
    import itertools

    choices = itertools.cycle("AABAB")
    snapshot, campaign, models = _small_board(lambda user, assignment: {"choice": next(choices)}, labelled_models=3)
    client.force_login(rita)
    body = client.get(f"/api/v1/leaderboards/{snapshot.pk}/calibrated").json()["dimensions"]["usefulness"]
    new = models[3].display_name
    for view in ("people_only", "calibrated", "style_people"):
        row = next(r for r in body[view]["rows"] if r["model"] == new)
        assert row["score"] is None and row["rank"] is None, view
    assert all(r["rank"] is not None for r in body["style_people"]["rows"] if r["model"] != new)
    # the small world's answers are alike in style (same length, no list, no adjective): no coefficient is estimable
    assert all(c["gamma"] is None for c in body["style_people"]["coefficients"])
    text = _page_text(client, f"/annotate/calibration/snapshots/{snapshot.pk}/?style=1")
    assert f"{new} unranked: its comparisons do not place it among the others" in text
    assert "not estimable: the two answers never differ in it" in text


def test_every_label_a_tie_says_so_instead_of_zero_width_intervals(client, rita):
    snapshot, campaign, _ = _small_board(lambda user, assignment: {"choice": "tie"})
    client.force_login(rita)
    body = client.get(f"/api/v1/leaderboards/{snapshot.pk}/calibrated").json()["dimensions"]["usefulness"]
    assert "people_only" not in body and "calibrated" not in body and "rank_changes" not in body
    assert any(n.startswith("people only: every comparison is a tie") for n in body["notes"])
    assert any(n.startswith("calibrated: every comparison is a tie") for n in body["notes"])
    text = _page_text(client, f"/annotate/calibration/snapshots/{snapshot.pk}/?style=1")
    assert "people only: every comparison is a tie (36)" in text
    assert "[0.00, 0.00]" not in text
    for fmt in ("csv", "json", "tex"):
        assert client.get(f"/annotate/calibration/snapshots/{snapshot.pk}/export.{fmt}").status_code == 200


def test_a_board_nobody_labelled_says_there_is_nothing_to_rank(client, rita):
    snapshot, _, _ = _small_board(None)
    client.force_login(rita)
    text = _page_text(client, f"/annotate/calibration/snapshots/{snapshot.pk}/")
    assert "people only: nothing to rank yet — 0 complete human items" in text
    assert "calibrated: nothing to rank yet — 0 complete human items the judge also compared" in text
    # it said the calibrated and judge-only ranks agree for every model, of a calibrated board that ranked none
    assert "agree for every model" not in text and "No calibrated ranks to compare the judge's with" in text


def test_a_rank_move_inside_the_calibrated_rank_set_is_not_called_the_judges_bias(client, rita):
    # one annotator answering A, B, B, A, B, B, …: the people's board is noise, its rank-sets wide; the judge's
    # board follows the planted skills. The page called every difference of rank "the judge's bias, made visible"
    import itertools

    choices = itertools.cycle("ABB")
    snapshot, _, _ = _small_board(lambda user, assignment: {"choice": next(choices)})
    client.force_login(rita)
    body = client.get(f"/api/v1/leaderboards/{snapshot.pk}/calibrated").json()["dimensions"]["usefulness"]
    inside = [c for c in body["rank_changes"] if not c["judge_rank_outside_calibrated_set"]]
    outside = [c for c in body["rank_changes"] if c["judge_rank_outside_calibrated_set"]]
    assert inside, body["rank_changes"]
    text = _page_text(client, f"/annotate/calibration/snapshots/{snapshot.pk}/")
    assert "made visible" not in text
    assert ("The judge's bias, beyond what the labels can explain" in text) == bool(outside)
    assert "not distinguishable from chance" in text
    for c in inside:
        best, worst = c["calibrated_rank_set"]
        assert f"{c['model']} {c['judge_rank']} by the judge, {c['calibrated_rank']} [{best}–{worst}] calibrated" in text


def test_the_page_says_what_theta_and_its_intervals_are(client, rita):
    # it said "All intervals are 90 %" and nothing of the scale, of marginal against simultaneous, of the normal
    # approximation, or of what each board estimates
    snapshot, _, _ = _small_board(None)
    client.force_login(rita)
    text = _page_text(client, f"/annotate/calibration/snapshots/{snapshot.pk}/")
    for phrase in ("log-odds scale, centred", "a 90 % interval for that model alone (not for all models at once)",
                   "normal approximation", "hold simultaneously at 90 %", "estimate what people prefer",
                   "estimates what the judge prefers"):
        assert phrase in text, phrase

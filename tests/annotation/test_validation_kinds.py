"""The EASEL/C² validation kinds (issue 13): item creation from runs, answer validation, media through
the blinded path, content-hash pinning, dashboards equal to the engine functions, exports."""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid

import numpy as np
import pytest

from annotation import annotator_reads, item_creation, label_export, services
from annotation.choices import CampaignKind
from annotation.errors import AssignmentClosed, ItemsInvalid, LabelInvalid
from annotation.kinds import kind_for
from annotation.label_models import HandwritingLabel, PairwiseLabel, UOSLabel
from annotation.models import Item
from annotation.validation_dashboards import handwriting_panel, similarity_panel, uos_panel
from annotation.validation_items import (
    items_create_canvas_pairs,
    items_create_handwriting,
    items_create_uos_samples,
)
from engine import agreement
from engine.c2 import rater
from engine.c2.rater import RUBRIC, RUBRIC_SCALES_VERSION
from engine.easel.semantic import letter_match_rate
from engine.method_comparison import instrument_agreement
from engine.perception_fit import perception_weights
from leaderboard.c2.models import C2Rating
from leaderboard.easel.models import EaselStep
from tests.annotation.helpers import annotators, fill
from tests.annotation.validation_factories import (
    C2World,
    EaselWorld,
    canvas_campaign,
    handwriting_campaign,
    uos_campaign,
)

pytestmark = pytest.mark.django_db


def _validate(campaign, answer):
    assignment = services.assignment_next(campaign=campaign, annotator=campaign.annotators.first())
    return kind_for(campaign.kind).validate(answer, item=assignment.item, assignment=assignment)


# --- item creation ------------------------------------------------------------------------------


def test_uos_items_are_divergent_samples_of_the_run_only():
    world = C2World()
    campaign = uos_campaign(world, n_items=100)
    families = set(Item.objects.filter(campaign=campaign).values_list("task__family", flat=True))
    assert families == {"story", "visual_story"}
    assert campaign.items.count() == 3 * 3 * 2  # 3 models × 3 divergent prompts × 2 samples


def test_uos_rater_spread_takes_both_ends_of_the_rater_scale():
    world = C2World()
    campaign = uos_campaign(world, n_items=4)
    means = {r.sample_id: (r.u + r.o + r.s) / 3 for r in C2Rating.objects.all()}
    chosen = [means[i.c2_sample_id] for i in campaign.items.all()]
    assert min(chosen) == min(means.values()) and max(chosen) == max(means.values())


def test_uos_items_refuse_a_run_of_another_task_set():
    world, other = C2World(), C2World(seed=1)
    campaign = services.campaign_create(name="x", kind=CampaignKind.UOS_RATING, task_set=world.task_set)
    with pytest.raises(ItemsInvalid, match="is on"):
        items_create_uos_samples(campaign=campaign, run=other.run)


def test_canvas_pairs_are_two_distinct_canvases_of_one_reference():
    world = EaselWorld()
    campaign = canvas_campaign(world, pairs_per_task=3)
    items = list(campaign.items.select_related("easel_step_a__episode", "easel_step_b__episode"))
    assert len(items) == 3 * len(world.references)
    for item in items:
        assert item.easel_step_a.episode.task_id == item.easel_step_b.episode.task_id == item.task_id
        assert bytes(item.easel_step_a.canvas_png) != bytes(item.easel_step_b.canvas_png)


def test_canvas_pairs_across_steps_stay_within_one_episode():
    world = EaselWorld()
    campaign = services.campaign_create(name="steps", kind=CampaignKind.CANVAS_SIMILARITY, task_set=world.task_set)
    items_create_canvas_pairs(campaign=campaign, runs=world.runs, rule="across_steps", pairs_per_task=5)
    assert all(i.easel_step_a.episode_id == i.easel_step_b.episode_id for i in campaign.items.all())


def test_canvas_pairs_span_the_s_differences_available():
    world = EaselWorld()
    campaign = canvas_campaign(world, pairs_per_task=4)
    gaps = sorted(abs(i.easel_step_a.s - i.easel_step_b.s) for i in campaign.items.filter(task=world.references[0]))
    assert gaps[-1] - gaps[0] > 0.2


def test_handwriting_items_are_the_last_canvas_of_each_hello_episode():
    world = EaselWorld()
    campaign = handwriting_campaign(world)
    assert campaign.items.count() == len(world.runs)
    assert set(campaign.items.values_list("easel_step_a__index", flat=True)) == {2}


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="the tesseract binary is not installed")
def test_earlier_hello_canvases_come_with_tesseracts_reading_kept_off_the_page():
    world = EaselWorld()
    campaign = services.campaign_create(name="hw", kind=CampaignKind.HANDWRITING, task_set=world.task_set,
                                        annotators=annotators(1))
    items_create_handwriting(campaign=campaign, runs=world.runs, partial_fractions=(0.5,))
    partial = campaign.items.filter(sampling_stratum="partial_canvas")
    assert partial.count() == len(world.runs) and set(partial.values_list("easel_step_a__index", flat=True)) == {1}
    for item in partial:
        assert isinstance(item.payload["meta"]["recognised"], str)
        assert item.payload["meta"]["recogniser"].lower().startswith("tesseract")
    services.campaign_status_set(campaign=campaign, status="open")
    assignment = services.assignment_next(campaign=campaign, annotator=campaign.annotators.first())
    content = annotator_reads.assignment_present(assignment=assignment, media_url=lambda s: f"/m/{s}")["content"]
    assert "recognised" not in json.dumps(content) and "tesseract" not in json.dumps(content).lower()


def test_a_canvas_from_another_reference_is_refused_with_its_field():
    world = EaselWorld()
    campaign = services.campaign_create(name="bad", kind=CampaignKind.CANVAS_SIMILARITY, task_set=world.task_set)
    a = EaselStep.objects.filter(episode__task=world.references[0]).first()
    b = EaselStep.objects.filter(episode__task=world.references[1]).first()
    with pytest.raises(ItemsInvalid) as exc:
        item_creation.items_create(campaign=campaign, specs=[item_creation.ItemSpec(task=world.references[0], easel_step_a=a, easel_step_b=b)])
    assert ("easel_step_b", "the canvas was painted towards another reference") in [(f, m) for _, f, m in exc.value.errors]


# --- answers ------------------------------------------------------------------------------------


def test_a_uos_answer_needs_three_scores_from_0_to_5():
    campaign = uos_campaign(C2World(), annotators=annotators(1))
    assert _validate(campaign, {"usefulness": 0, "originality": 5, "surprise": 3})["rubric_version"] == RUBRIC_SCALES_VERSION
    with pytest.raises(LabelInvalid) as exc:
        _validate(campaign, {"usefulness": 6, "originality": True, "surprise": 2})
    assert set(exc.value.errors) == {"usefulness", "originality"}


def test_a_uos_answer_missing_a_component_is_refused():
    campaign = uos_campaign(C2World(), annotators=annotators(1))
    with pytest.raises(LabelInvalid) as exc:
        _validate(campaign, {"usefulness": 1, "originality": 2})
    assert set(exc.value.errors) == {"surprise"}


def test_a_similarity_answer_is_a_b_or_tie_mapped_through_the_swap():
    campaign = canvas_campaign(EaselWorld(), annotators=annotators(1))
    assignment = services.assignment_next(campaign=campaign, annotator=campaign.annotators.first())
    values = kind_for(campaign.kind).validate({"choice": "A"}, item=assignment.item, assignment=assignment)
    assert values["choice"] == ("B" if assignment.swapped else "A")
    with pytest.raises(LabelInvalid):
        kind_for(campaign.kind).validate({"choice": "left"}, item=assignment.item, assignment=assignment)


def test_a_handwriting_reading_is_at_most_20_characters():
    campaign = handwriting_campaign(EaselWorld(), annotators=annotators(1))
    assert _validate(campaign, {"text": "  he  llo "})["text"] == "he llo"
    with pytest.raises(LabelInvalid, match="20 characters"):
        _validate(campaign, {"text": "h" * 21})


def test_a_handwriting_answer_is_a_reading_or_unreadable_not_both_nor_neither():
    campaign = handwriting_campaign(EaselWorld(), annotators=annotators(1))
    assert _validate(campaign, {"unreadable": True}) == {"text": "", "unreadable": True, "flag_reason": "", "flag_note": ""}
    for answer in ({"text": "hi", "unreadable": True}, {"text": "   "}, {"text": 5}, {"unreadable": "yes"}):
        with pytest.raises(LabelInvalid):
            _validate(campaign, answer)


# --- what is shown --------------------------------------------------------------------------------


@pytest.mark.parametrize("code", [k.value for k in CampaignKind])
def test_every_kinds_keys_help_names_the_keys_the_page_offers_it(code):
    # The page header offers instructions, calibration examples and help to every kind, and the page
    # handles F, S and Enter for every kind; the handwriting help left out C.
    offered = {k for key, _ in kind_for(code).keys for k in key.split()}
    assert {"I", "C", "?", "F", "S", "Enter"} <= offered


def test_the_uos_item_shows_the_raters_rubric_text_by_version():
    world = C2World()
    campaign = uos_campaign(world, annotators=annotators(1))
    assignment = services.assignment_next(campaign=campaign, annotator=campaign.annotators.first())
    content = annotator_reads.assignment_present(assignment=assignment, media_url=lambda s: f"/m/{s}")["content"]
    assert content["rubric_version"] == RUBRIC_SCALES_VERSION
    for component in content["components"]:
        assert component["definition"] in RUBRIC
        assert [level["level"] for level in component["levels"]] == [0, 1, 2, 3, 4, 5]
        assert all(level["text"] in RUBRIC for level in component["levels"])


def test_a_new_model_rater_prompt_leaves_uos_items_and_their_labels_as_they_were(monkeypatch):
    # a human U-O-S rater is shown the rubric's definitions and levels, not the model rater's prompt: a new
    # version of that prompt (c2-rubric-v3 cut long responses) must not mark every label of a campaign stale
    from annotation.kinds import uos_rating

    campaign = uos_campaign(C2World(), annotators=annotators(1))
    monkeypatch.setattr(rater, "RUBRIC_VERSION", "c2-rubric-v99")
    monkeypatch.setattr(uos_rating, "RUBRIC_VERSION", "c2-rubric-v99", raising=False)
    assert item_creation.campaign_content_refresh(campaign=campaign) == []


def test_media_of_a_canvas_item_is_the_pinned_bytes_per_shown_slot():
    world = EaselWorld()
    campaign = canvas_campaign(world, annotators=annotators(1))
    assignment = services.assignment_next(campaign=campaign, annotator=campaign.annotators.first())
    item = assignment.item
    data, expected = annotator_reads.media_bytes_for_assignment(assignment=assignment, shown_slot="R")
    assert data == bytes(item.task.easel_image.png) and hashlib.sha256(data).hexdigest() == expected
    shown_a, _ = annotator_reads.media_bytes_for_assignment(assignment=assignment, shown_slot="A")
    canonical_a = bytes((item.easel_step_b if assignment.swapped else item.easel_step_a).canvas_png)
    assert shown_a == canonical_a
    with pytest.raises(KeyError):
        annotator_reads.media_bytes_for_assignment(assignment=assignment, shown_slot="C")


def test_a_label_is_refused_when_the_canvas_changed_after_hand_out():
    world = EaselWorld()
    campaign = handwriting_campaign(world, annotators=annotators(1))
    user = campaign.annotators.first()
    assignment = services.assignment_next(campaign=campaign, annotator=user)
    EaselStep.objects.filter(pk=assignment.item.easel_step_a_id).update(canvas_png=b"\x89PNG changed")
    with pytest.raises(AssignmentClosed):
        services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(), answer={"text": "hello"})


def test_labels_carry_the_content_hash_of_what_was_shown():
    campaign = uos_campaign(C2World(), annotators=annotators(1), n_items=2)
    fill(campaign, list(campaign.annotators.all()), lambda u, a: {"usefulness": 1, "originality": 2, "surprise": 3})
    for label in UOSLabel.objects.filter(campaign=campaign).select_related("item"):
        assert label.content_hash == kind_for(campaign.kind).shown_content(label.item).digest


# --- dashboards equal the engine on the same labels --------------------------------------------------


def _score(user, assignment, bias):
    sample_rating = C2Rating.objects.get(sample_id=assignment.item.c2_sample_id)
    shift = bias[user.username]
    return {"usefulness": max(0, min(5, sample_rating.u + shift)), "originality": max(0, min(5, sample_rating.o - shift)),
            "surprise": max(0, min(5, (sample_rating.s + assignment.item.pk) % 6))}


def test_the_uos_panel_equals_the_engine_on_the_same_labels():
    users = annotators(3)
    campaign = uos_campaign(C2World(), annotators=users, n_items=10)
    bias = {u.username: i - 1 for i, u in enumerate(users)}
    fill(campaign, users, lambda u, a: _score(u, a, bias))
    panel = uos_panel(campaign=campaign)
    labels = list(UOSLabel.objects.filter(campaign=campaign).order_by("item_id", "created_at", "pk"))
    by_item: dict[int, list[UOSLabel]] = {}
    for label in labels:
        by_item.setdefault(label.item_id, []).append(label)
    usefulness = next(d for d in panel["dimensions"] if d["code"] == "usefulness")
    table = [[label.usefulness for label in by_item[i]] for i in sorted(by_item)]
    assert usefulness["icc_single"].value == pytest.approx(agreement.intraclass_correlation(table)["ICC2"].value)
    assert usefulness["icc_average"].value == pytest.approx(agreement.intraclass_correlation(table)["ICC2k"].value)
    raters = sorted({label.annotator_id for label in labels})
    data = np.full((3, len(by_item)), np.nan)
    for j, item in enumerate(sorted(by_item)):
        for label in by_item[item]:
            data[raters.index(label.annotator_id), j] = label.usefulness
    assert usefulness["alpha"] == pytest.approx(agreement.krippendorff_alpha(data, level="ordinal"))
    items = {i.pk: i.c2_sample_id for i in Item.objects.filter(campaign=campaign)}
    human = [np.mean([label.usefulness for label in by_item[i]]) for i in sorted(by_item)]
    rater = [C2Rating.objects.get(sample_id=items[i]).u for i in sorted(by_item)]
    expected = instrument_agreement(human, rater)
    assert usefulness["vs_rater"].icc_a1 == pytest.approx(expected.icc_a1)
    assert usefulness["vs_rater"].spearman == pytest.approx(expected.spearman)
    assert usefulness["vs_rater"].mean_absolute_difference == pytest.approx(expected.mean_absolute_difference)
    assert "<svg" in usefulness["chart"] and "human mean − rater score" in usefulness["chart"]
    assert [t["n"] for t in panel["taus"]] == [len(panel["models"])] * 4


def test_each_bland_altman_plot_on_the_dashboard_names_its_component(client, rita):
    """The three plots stand side by side under the per-sample table; their titles were only the SVGs'
    tooltips, so nothing visible said which plot was U, O or S."""
    import re

    from django.urls import reverse

    users = annotators(3)
    campaign = uos_campaign(C2World(), annotators=users, n_items=10)
    bias = {u.username: i - 1 for i, u in enumerate(users)}
    fill(campaign, users, lambda u, a: _score(u, a, bias))
    client.force_login(rita)
    html = client.get(reverse("annotation:campaign_dashboard", args=[campaign.pk])).content.decode()
    figures = re.findall(r'<figure class="chart-figure">(.*?)</figure>', html.split('id="uos-panel"', 1)[1], re.S)
    captions = [re.search(r"<figcaption>(.*?)</figcaption>", f, re.S) for f in figures]
    assert len(figures) == 3 and all(captions)
    assert [c.group(1).split(":")[0] for c in captions] == ["Usefulness (U)", "Originality (O)", "Surprise (S)"]


def test_the_similarity_panel_equals_the_engine_on_the_same_labels():
    users = annotators(3)
    world = EaselWorld()
    campaign = canvas_campaign(world, annotators=users, pairs_per_task=6)

    def choose(user, assignment):
        item = assignment.item
        gap = item.easel_step_a.ssim - item.easel_step_b.ssim + 0.1 * (users.index(user) - 1)
        canonical = "tie" if abs(gap) < 0.03 else "A" if gap > 0 else "B"
        if canonical == "tie" or not assignment.swapped:
            return {"choice": canonical}
        return {"choice": "B" if canonical == "A" else "A"}

    fill(campaign, users, choose)
    panel = similarity_panel(campaign=campaign, seed=3)
    items = {i.pk: i for i in Item.objects.filter(campaign=campaign).select_related("easel_step_a", "easel_step_b")}
    choices: dict[int, list[str]] = {}
    for item_id, choice in PairwiseLabel.objects.filter(campaign=campaign).order_by("item_id", "created_at", "pk").values_list("item_id", "choice"):
        choices.setdefault(item_id, []).append(choice)
    ids = sorted(choices)
    p = [1.0 if agreement.majority_label(choices[i]) == "A" else 0.0 if agreement.majority_label(choices[i]) == "B" else 0.5 for i in ids]
    expected_s = agreement.pair_sign_agreement([items[i].easel_step_a.s - items[i].easel_step_b.s for i in ids], p)
    row = next(r for r in panel["rows"] if r["term"] == "s")
    assert row["result"] == expected_s
    rows = [(i, c) for i in ids for c in choices[i]]
    deltas = [[items[i].easel_step_a.ssim - items[i].easel_step_b.ssim, items[i].easel_step_b.l1 - items[i].easel_step_a.l1,
               items[i].easel_step_a.edge_iou - items[i].easel_step_b.edge_iou] for i, _ in rows]
    fit = perception_weights(deltas, [c for _, c in rows], [i for i, _ in rows], seed=3)
    assert [w["implied"] for w in panel["weights"]] == pytest.approx(list(fit.weights))
    # rel 1e-4: the panel forms Δ(1 − L1) as (1 − l1_A) − (1 − l1_B), the test as l1_B − l1_A; in a separated
    # bootstrap resample that last-bit difference moves where the Newton iteration stops
    assert [b for w in panel["weights"] for b in (w["low"], w["high"])] == pytest.approx(
        [b for pair in fit.intervals for b in pair], rel=1e-4)


def test_the_handwriting_panel_scores_people_with_the_recognisers_function():
    users = annotators(3)
    world = EaselWorld()
    campaign = handwriting_campaign(world, annotators=users)
    readings = {users[0].username: "hello", users[1].username: "hel", users[2].username: None}
    fill(campaign, users, lambda u, a: {"unreadable": True} if readings[u.username] is None else {"text": readings[u.username]})
    panel = handwriting_panel(campaign=campaign)
    human = np.mean([letter_match_rate("hello"), letter_match_rate("hel"), 0.0])
    assert [r["human_rate"] for r in panel["rows"]] == pytest.approx([human] * len(world.runs))
    assert sorted(r["recogniser_rate"] for r in panel["rows"]) == sorted(letter_match_rate(t) for t in ("hello", "hcllo", ""))
    assert panel["recognisers"] == ["tesseract"]
    assert panel["worst"][0]["recognised"] == ""  # 0 vs the people's 0.53: the largest gap
    assert HandwritingLabel.objects.filter(campaign=campaign, unreadable=True).count() == len(world.runs)


def test_the_dashboard_page_shows_each_validation_panel(client):
    from tests.factories import PASSWORD, UserFactory

    UserFactory(username="rita", role="researcher")
    users = annotators(3)
    c2, easel = C2World(), EaselWorld()
    campaigns = [uos_campaign(c2, annotators=users, n_items=6), canvas_campaign(easel, annotators=users),
                 handwriting_campaign(easel, annotators=users)]
    fill(campaigns[0], users, lambda u, a: {"usefulness": a.item.pk % 6, "originality": 2, "surprise": (a.item.pk + users.index(u)) % 6})
    fill(campaigns[1], users, lambda u, a: {"choice": "A" if a.item.pk % 2 else "B"})
    fill(campaigns[2], users, lambda u, a: {"text": "helo"})
    assert client.login(username="rita", password=PASSWORD)
    listing = client.get("/annotate/campaigns/").content.decode()
    assert all(c.name in listing for c in campaigns)
    for campaign, marker in zip(campaigns, ("uos-panel", "similarity-panel", "handwriting-panel")):
        page = client.get(f"/annotate/campaigns/{campaign.pk}/")
        assert page.status_code == 200
        assert f'id="{marker}"' in page.content.decode()


def test_the_uos_dashboard_opens_before_any_sample_has_all_its_ratings(client):
    # No complete item means no model in the per-model table: its Kendall τ raised on two empty series
    # and the dashboard of every new U-O-S campaign was a 500 until its first sample had k ratings.
    from tests.factories import PASSWORD, UserFactory

    UserFactory(username="rita", role="researcher")
    users = annotators(3)
    campaign = uos_campaign(C2World(), annotators=users, n_items=2)
    assert client.login(username="rita", password=PASSWORD)
    assert client.get(f"/annotate/campaigns/{campaign.pk}/").status_code == 200
    fill(campaign, users[:2], lambda u, a: {"usefulness": 3, "originality": 2, "surprise": 3})
    page = client.get(f"/annotate/campaigns/{campaign.pk}/")
    assert page.status_code == 200 and 'id="uos-panel"' in page.content.decode()
    assert "needs two samples with all k = 3 ratings; 0 so far" in page.content.decode()


def test_the_uos_dashboard_does_not_claim_every_item_has_a_majority(client):
    # U-O-S items are not adjudicated; the section said "Every complete item has a majority." beside a
    # consensus table counting items with no majority.
    from tests.factories import PASSWORD, UserFactory

    UserFactory(username="rita", role="researcher")
    users = annotators(3)
    campaign = uos_campaign(C2World(), annotators=users, n_items=2)
    fill(campaign, users, lambda u, a: {"usefulness": users.index(u), "originality": 2, "surprise": 3})
    assert client.login(username="rita", password=PASSWORD)
    page = client.get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    assert "no majority: 2" in page
    assert "Every complete item has a majority" not in page
    assert "items are not adjudicated" in page


def test_exports_name_the_sample_and_canvases_behind_each_label(client):
    users = annotators(3)
    easel = EaselWorld()
    campaign = canvas_campaign(easel, annotators=users, pairs_per_task=1)
    fill(campaign, users, lambda u, a: {"choice": "tie"})
    lines = [json.loads(line) for line in label_export.labels_export(campaign=campaign, fmt="jsonl").splitlines()]
    assert lines and all(r["easel_step_a_id"] and r["easel_step_b_id"] for r in lines)
    assert {r["model_a"] for r in lines} <= set(r.agent_name for r in easel.runs)
    assert "easel_step_a_id" in label_export.labels_export(campaign=campaign, fmt="csv").splitlines()[0]


def test_a_visual_story_item_serves_its_task_image_and_a_story_item_none():
    world = C2World()
    campaign = uos_campaign(world, annotators=annotators(1), n_items=100)
    user = campaign.annotators.first()
    seen = set()
    while True:
        assignment = services.assignment_next(campaign=campaign, annotator=user)
        if assignment is None:
            break
        content = annotator_reads.assignment_present(assignment=assignment, media_url=lambda s: f"/m/{s}")["content"]
        family = assignment.item.task.family
        seen.add(family)
        if family == "visual_story":
            data, expected = annotator_reads.media_bytes_for_assignment(assignment=assignment, shown_slot="A")
            assert data == bytes(world.visual.c2_image.data) and hashlib.sha256(data).hexdigest() == expected
        else:
            assert content["image"] is None
            with pytest.raises(KeyError):
                annotator_reads.media_bytes_for_assignment(assignment=assignment, shown_slot="A")
        services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(),
                              answer={"usefulness": 1, "originality": 1, "surprise": 1})
    assert seen == {"story", "visual_story"}


def test_the_live_status_counts_current_labels_for_researchers_only(client):
    from tests.factories import PASSWORD, UserFactory

    users = annotators(3)
    campaign = handwriting_campaign(EaselWorld(), annotators=users)
    fill(campaign, users[:1], lambda u, a: {"text": "hello"})
    UserFactory(username="rita", role="researcher")
    assert client.login(username=users[0].username, password=PASSWORD)
    assert client.get(f"/annotate/campaigns/{campaign.pk}/status.json").status_code == 403
    assert client.login(username="rita", password=PASSWORD)
    assert client.get(f"/annotate/campaigns/{campaign.pk}/status.json").json() == {"status": "open", "labels": 3}
    assert client.get("/annotate/campaigns/999999/status.json").status_code == 404
    page = client.get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    assert 'id="live-status"' in page and "js/dashboard_live.js" in page


def test_every_link_on_a_validation_campaigns_dashboard_and_item_pages_answers(client):
    # an EASEL canvas item's page linked the "task set's renders", a page only Ekphrasis task sets have: a 404
    import re

    from tests.factories import PASSWORD, UserFactory

    UserFactory(username="rita", role="researcher")
    users = annotators(3)
    c2, easel = C2World(), EaselWorld()
    campaigns = [uos_campaign(c2, annotators=users, n_items=3), canvas_campaign(easel, annotators=users, pairs_per_task=1),
                 handwriting_campaign(easel, annotators=users)]
    assert client.login(username="rita", password=PASSWORD)
    for campaign in campaigns:
        item = campaign.items.order_by("pk").first()
        for page in (f"/annotate/campaigns/{campaign.pk}/", f"/annotate/campaigns/{campaign.pk}/items/{item.pk}/"):
            html = client.get(page).content.decode()
            links = set(re.findall(r'<a[^>]*\shref="(/[^"#]*)"', html)) - {"/accounts/logout/"}
            assert links
            broken = [(link, status) for link in sorted(links)
                      if (status := client.get(link.replace("&amp;", "&")).status_code) >= 400]
            assert broken == [], f"{page}: {broken}"

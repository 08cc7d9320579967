"""Dashboards, the judge join, H.5 pair sampling and exports. Every number is checked against
``engine.agreement`` applied by hand to the same labels."""

from __future__ import annotations

import csv
import io
import json
import random

import numpy as np
import pytest

from annotation import annotator_reads, item_creation, label_export, pair_sampling, selectors
from annotation.choices import CampaignKind
from annotation.judge_join import (
    HumanPair,
    JudgeOutcome,
    human_bt_fit,
    human_judge_join,
    image_text_sign_agreement,
    novelty_ablation,
)
from annotation.label_models import PairwiseLabel
from engine import agreement
from tests.annotation.factories import (
    Catalogue,
    faithfulness_campaign,
    pairwise_campaign,
    strategy_campaign,
    tig_campaign,
)
from tests.annotation.helpers import annotators, fill

pytestmark = pytest.mark.django_db


def canonical_answers(pattern):
    """answer_for that presses keys so the stored canonical choice is pattern[user][item position]."""

    def answer(user, assignment):
        wanted = pattern[user.username][assignment.item.position % len(pattern[user.username])]
        if assignment.swapped and wanted != "tie":
            wanted = {"A": "B", "B": "A"}[wanted]
        return {"choice": wanted}

    return answer


@pytest.fixture
def labelled():
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=users)
    pattern = {"ann0": ["A", "B", "A", "tie", "B", "A"], "ann1": ["A", "B", "B", "tie", "B", "A"],
               "ann2": ["A", "A", "B", "A", "tie", "B"]}
    fill(campaign, users, canonical_answers(pattern))
    return campaign


def engine_counts(campaign):
    rows = []
    for item in campaign.items.order_by("pk"):
        choices = list(PairwiseLabel.objects.filter(item=item, is_stale=False).values_list("choice", flat=True))
        if len(choices) == campaign.k:
            rows.append([choices.count(c) for c in ("A", "B", "tie")])
    return np.array(rows)


def test_dashboard_kappa_is_engine_fleiss_kappa_of_the_same_labels(labelled):
    dashboard = selectors.campaign_dashboard(campaign=labelled)
    (row,) = dashboard.rows
    assert row.kappa.value == pytest.approx(agreement.fleiss_kappa(engine_counts(labelled)))


def test_dashboard_consensus_columns_follow_table_17(labelled):
    (row,) = selectors.campaign_dashboard(campaign=labelled).rows
    items = [list(PairwiseLabel.objects.filter(item=i).values_list("choice", flat=True)) for i in labelled.items.all()]
    summary = agreement.consensus_summary(items)
    assert (row.n_items, row.n_complete, row.n_judgments, row.n_annotators) == (6, 6, 18, 3)
    assert row.unanimous == pytest.approx(summary["unanimous_rate"])
    assert row.majority == pytest.approx(summary["majority_rate"])
    assert dict(row.outcome_counts) == {c: summary["majority_counts"].get(c, 0) for c in ("A", "B", "tie")}
    assert row.no_majority == summary["no_majority"]


def test_incomplete_items_stay_out_of_kappa_but_count_as_judgments():
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users)
    fill(campaign, users[:2], lambda u, a: {"choice": "A"})
    (row,) = selectors.campaign_dashboard(campaign=campaign).rows
    assert (row.n_complete, row.n_judgments) == (0, 6)
    assert row.kappa.value is None and "no complete items" in row.kappa.note


def test_a_single_rater_campaign_shows_no_unanimity_or_majority_rate():
    # With k = 1 every item is "unanimous": the row said 100.0% unanimous, 100.0% majority.
    users = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, k=1)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    (row,) = selectors.campaign_dashboard(campaign=campaign).rows
    assert row.n_complete == row.n_items > 0
    assert (row.unanimous, row.majority) == (None, None)
    assert row.kappa.value is None and "two annotators" in row.kappa.note
    assert sum(n for _, n in row.outcome_counts) == row.n_complete  # each item's one label is its outcome


def test_stale_labels_are_left_out_and_counted(labelled):
    item = labelled.items.order_by("pk").first()
    item.response_a.core_idea = "changed"
    item.response_a.save()
    changed = item_creation.campaign_content_refresh(campaign=labelled)  # every item showing that response
    dashboard = selectors.campaign_dashboard(campaign=labelled)
    assert len(changed) >= 1
    assert dashboard.n_stale == 3 * len(changed)
    assert dashboard.rows[0].n_complete == 6 - len(changed)


def test_gold_labels_measure_accuracy_and_stay_out_of_agreement():
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=users, gold_rate=0.5)
    gold = campaign.items.order_by("position").first()
    item_creation.item_gold_set(item=gold, answer="A")
    fill(campaign, users, lambda u, a: {"choice": "A" if not a.swapped else "B"})
    dashboard = selectors.campaign_dashboard(campaign=campaign)
    assert dashboard.rows[0].n_items == 5
    quality = {q.annotator: q for q in dashboard.quality}
    assert all((q.gold_correct, q.gold_n) == (1, 1) for q in quality.values())


def test_annotator_quality_reports_leave_one_out_agreement_tie_rate_and_position_bias(labelled):
    dashboard = selectors.campaign_dashboard(campaign=labelled)
    quality = {q.annotator: q for q in dashboard.quality}
    labels = list(PairwiseLabel.objects.filter(annotator__username="ann2"))
    ties = sum(label.choice == "tie" for label in labels)
    shown_a = sum(label.shown_choice == "A" for label in labels if label.choice != "tie")
    q = quality["ann2"]
    assert (q.ties, q.decisive, q.shown_a) == (ties, len(labels) - ties, shown_a)
    # leave-one-out: ann2's label against the majority of ann0 and ann1 where they agree
    expected = 0
    n = 0
    for label in labels:
        others = list(PairwiseLabel.objects.filter(item=label.item).exclude(annotator__username="ann2").values_list("choice", flat=True))
        majority = agreement.majority_label(others)
        if majority is not None:
            n += 1
            expected += label.choice == majority
    assert (q.loo_agree, q.loo_n) == (expected, n)


def test_longer_response_rate_counts_choices_of_the_longer_shown_field():
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, n_items=1)
    # the catalogue makes the visual description of model 1 longer than model 0's; ask on expressiveness
    item = campaign.items.get()
    item.dimension = "expressiveness"
    item.save()
    item_creation.campaign_content_refresh(campaign=campaign)
    fill(campaign, users, lambda u, a: {"choice": "A" if not a.swapped else "B"})  # canonical A = model 0 (shorter)
    dashboard = selectors.campaign_dashboard(campaign=campaign)
    assert all((q.longer, q.longer_n) == (0, 1) for q in dashboard.quality)


def test_faithfulness_icc_uses_the_two_way_absolute_form_for_a_fixed_panel(media_root):
    users = annotators(3)
    campaign, renders = faithfulness_campaign(Catalogue(n_tasks=2), annotators=users)
    scores = {"ann0": [5, 4, 2, 1, 3, 5, 4, 2], "ann1": [5, 3, 2, 2, 3, 4, 4, 1], "ann2": [4, 4, 1, 1, 2, 5, 5, 2]}
    order = {r.pk: i for i, r in enumerate(renders)}
    fill(campaign, users, lambda u, a: {"score": scores[u.username][order[a.item.render_a_id]]})
    icc = selectors.campaign_dashboard(campaign=campaign).extras["faithfulness"]["icc"]
    matrix = [[scores[u][order[r.pk]] for u in ("ann0", "ann1", "ann2")] for r in sorted(renders, key=lambda r: r.pk)]
    assert icc.form == "ICC2" and "fixed panel" in icc.note and "absolute agreement" in icc.note
    assert icc.result.value == pytest.approx(agreement.intraclass_correlation(matrix)["ICC2"].value)


def test_faithfulness_icc_falls_back_to_one_way_when_raters_differ(media_root):
    users = annotators(4)
    campaign, _ = faithfulness_campaign(Catalogue(n_tasks=1), annotators=users)
    rng = random.Random(3)
    from tests.annotation.helpers import fill_round_robin

    fill_round_robin(campaign, users, lambda u, a: {"score": rng.randint(1, 5)})
    icc = selectors.campaign_dashboard(campaign=campaign).extras["faithfulness"]["icc"]
    assert icc.form == "ICC1" and "raters differ" in icc.note


def test_faithfulness_pass_rates_by_model_use_the_majority_of_annotators(media_root):
    users = annotators(3)
    catalogue = Catalogue(n_tasks=2)
    campaign, _ = faithfulness_campaign(catalogue, annotators=users)
    good_model = catalogue.models[0].pk
    fill(campaign, users, lambda u, a: {"score": 5 if a.item.render_a.response.subject_model_id == good_model else 2})
    rates = {r.name: (r.passed, r.n) for r in selectors.campaign_dashboard(campaign=campaign).extras["faithfulness"]["by_model"]}
    assert rates[catalogue.models[0].display_name] == (2, 2)
    assert rates[catalogue.models[1].display_name] == (0, 2)


def test_tig_dashboard_reports_action_kappa_and_each_criterion():
    users = annotators(3)
    campaign = tig_campaign(Catalogue(n_tasks=3), annotators=users)
    actions = {"ann0": ["accept", "revise", "exclude"], "ann1": ["accept", "revise", "revise"], "ann2": ["accept", "exclude", "exclude"]}
    crit = ("cluster_validity", "visual_specificity", "faithfulness", "non_leakage", "usefulness_for_judging")

    def answer(user, assignment):
        action = actions[user.username][assignment.item.position]
        codes = {c: "pass" for c in crit}
        if action == "exclude":
            codes["non_leakage"] = "fail"
        return {"criteria": codes, "overall_action": action, "revision_note": "tighten wording" if action == "revise" else ""}

    fill(campaign, users, answer)
    dashboard = selectors.campaign_dashboard(campaign=campaign)
    counts = [[[actions[u][i] for u in actions].count(a) for a in ("accept", "revise", "exclude")] for i in range(3)]
    assert dashboard.rows[0].kappa.value == pytest.approx(agreement.fleiss_kappa(counts))
    assert len(dashboard.extras["criteria"]) == 5


def test_strategy_dashboard_reports_presence_per_strategy():
    users = annotators(3)
    campaign = strategy_campaign(Catalogue(n_tasks=1), annotators=users)
    fill(campaign, users, lambda u, a: {"strategies": {"medium_adaptation": "central"} if u.username != "ann2" else {}})
    rows = {s["code"]: s for s in selectors.campaign_dashboard(campaign=campaign).extras["strategies"]}
    assert (rows["medium_adaptation"]["n_marked"], rows["medium_adaptation"]["n_labels"]) == (8, 12)
    assert rows["medium_adaptation"]["n_central"] == 8


# ---------------------------------------------------------------- the judge join (pure)


def pair(item_id, majority, ra=1, rb=2, ma=10, mb=20, task="t1", dim="novelty"):
    return HumanPair(item_id, task, dim, ra, rb, ma, mb, majority)


def test_judge_join_counts_a_tie_as_agreement_only_with_a_tie():
    pairs = [pair(1, "tie", 1, 2), pair(2, "A", 3, 4), pair(3, "tie", 5, 6)]
    outcomes = [JudgeOutcome("t1", "novelty", 1, 2, None), JudgeOutcome("t1", "novelty", 3, 4, 3),
                JudgeOutcome("t1", "novelty", 5, 6, 5)]
    join = human_judge_join(pairs=pairs, judge_outcomes=outcomes, judge_scores=None)
    assert (join.n_agree, join.n_pairs) == (2, 3)
    assert join.agreement.value == pytest.approx(agreement.pairwise_agreement(["tie", "A", "tie"], ["tie", "A", "A"]))


def test_judge_join_reads_the_winner_by_response_whatever_order_the_judge_saw():
    pairs = [pair(1, "B", ra=1, rb=2)]
    outcomes = [{"task_external_id": "t1", "dimension": "novelty", "response_a_id": 2, "response_b_id": 1, "winner_response_id": 2}]
    join = human_judge_join(pairs=pairs, judge_outcomes=outcomes, judge_scores=None)
    assert (join.n_agree, join.n_pairs) == (1, 1)


def test_judge_join_counts_pairs_without_a_human_majority_or_a_judge_outcome():
    pairs = [pair(1, None, 1, 2), pair(2, "A", 3, 4)]
    join = human_judge_join(pairs=pairs, judge_outcomes=[], judge_scores=None)
    assert (join.n_pairs, join.n_human_no_majority, join.n_unjudged) == (0, 1, 1)


def test_judge_join_compares_the_human_bt_ranking_with_the_judges():
    # models 10 > 20 > 30 > 40 in human majorities, each pair decided both ways once so the MLE exists
    wins = [(10, 20), (10, 30), (10, 40), (20, 30), (20, 40), (30, 40), (10, 20), (20, 30), (30, 40), (40, 10)]
    pairs = [HumanPair(i, f"t{i}", "novelty", 2 * i, 2 * i + 1, a, b, "A") for i, (a, b) in enumerate(wins)]
    judge = {10: 1.5, 20: 0.5, 30: -0.5, 40: -1.5}
    join = human_judge_join(pairs=pairs, judge_outcomes=[], judge_scores=judge)
    theta = join.bt.human_theta
    expected = agreement.rank_correlation([theta[m] for m in (10, 20, 30, 40)], [judge[m] for m in (10, 20, 30, 40)])
    assert join.bt.spearman.value == pytest.approx(expected["spearman"][0])
    assert join.bt.kendall.value == pytest.approx(expected["kendall"][0])


def test_image_text_sign_agreement_counts_decisive_pairs_and_ties_as_neutral():
    pairs = [pair(1, "A", ma=1, mb=2), pair(2, "B", ma=1, mb=2), pair(3, "tie", ma=2, mb=1), pair(4, None, ma=1, mb=2)]
    view = image_text_sign_agreement(pairs=pairs, text_scores={1: 1.0, 2: 0.0}, source="test")
    expected = agreement.pair_sign_agreement([1.0, 1.0, -1.0], [1.0, 0.0, 0.5])
    assert view.result == expected
    assert (view.result.decisive_agree, view.result.decisive_pairs, view.result.all_pairs) == (1, 2, 3)


def test_novelty_ablation_compares_two_judge_conditions_on_the_same_pairs():
    pairs = [pair(i, "A", 2 * i, 2 * i + 1) for i in range(30)]
    outcomes = []
    for i in range(30):
        outcomes.append(JudgeOutcome("t1", "novelty", 2 * i, 2 * i + 1, 2 * i if i < 24 else 2 * i + 1, "tig"))
        outcomes.append(JudgeOutcome("t1", "novelty", 2 * i, 2 * i + 1, 2 * i if i < 15 else None, "no_tig"))
    view = novelty_ablation(pairs=pairs, judge_outcomes=outcomes, conditions=("tig", "no_tig"))
    assert (view.n, view.correct, view.discordant) == (30, (24, 15), (9, 0))
    assert view.mcnemar.p == pytest.approx(agreement.mcnemar(9, 0).p)
    expected = agreement.paired_difference_interval(9, 0, 30, a=15)
    assert (view.interval.low, view.interval.high) == pytest.approx((expected.low, expected.high))


# ---------------------------------------------------------------- H.5 pair sampling (pure)


def test_validation_pairs_follow_the_h5_strata_from_a_ranking():
    models = list(range(9))
    ranking = {m: float(9 - m) for m in models}
    other = {m: float(m) for m in models}  # reversed: every pair is a trade-off
    pairs = pair_sampling.validation_pairs_sample(models=models, ranking=ranking, other_rankings=[other], rng=random.Random(1))
    strata = [p.stratum for p in pairs]
    assert len(pairs) == 6 and len({frozenset((p.model_a, p.model_b)) for p in pairs}) == 6
    assert strata.count("top_bottom") == 2 and strata.count("top_middle") == 1
    assert strata.count("middle_middle") == 1 and strata.count("tradeoff") == 2
    assert (pairs[0].model_a, pairs[0].model_b) == (0, 8)  # the extreme top–bottom pair first


def test_validation_pairs_without_a_ranking_are_random_and_labelled_so():
    pairs = pair_sampling.validation_pairs_sample(models=["m1", "m2", "m3", "m4"], ranking=None, rng=random.Random(2))
    assert len(pairs) == 6 and {p.stratum for p in pairs} == {"random_order"}


def test_validation_pairs_fill_from_other_strata_when_one_runs_short():
    pairs = pair_sampling.validation_pairs_sample(models=["a", "b", "c", "d"], ranking={"a": 4, "b": 3, "c": 2, "d": 1})
    assert len(pairs) == 6


# ---------------------------------------------------------------- exports and markup


def test_export_jsonl_has_every_label_with_its_assignment_metadata(labelled):
    rows = [json.loads(line) for line in label_export.labels_export(campaign=labelled, fmt="jsonl").splitlines()]
    assert len(rows) == 18
    row = rows[0]
    assert {"annotator", "swapped", "slot", "assigned_at", "submitted_at", "content_hash", "model_a", "answer"} <= set(row)
    assert row["answer"]["choice"] == row["category"]


def test_export_csv_has_a_header_and_one_row_per_label(labelled):
    reader = list(csv.DictReader(io.StringIO(label_export.labels_export(campaign=labelled, fmt="csv"))))
    assert len(reader) == 18 and reader[0]["kind"] == CampaignKind.TEXT_PAIRWISE


def test_export_csv_neutralises_a_flag_note_formula_and_jsonl_keeps_it_raw(labelled):
    note = '=HYPERLINK("http://evil","click")'
    PairwiseLabel.objects.filter(pk=PairwiseLabel.objects.order_by("pk").first().pk).update(flag_note=note)
    csv_notes = [row["flag_note"] for row in csv.DictReader(io.StringIO(label_export.labels_export(campaign=labelled, fmt="csv")))]
    jsonl_notes = [json.loads(line)["flag_note"] for line in label_export.labels_export(campaign=labelled, fmt="jsonl").splitlines()]
    assert "'" + note in csv_notes and note not in csv_notes
    assert note in jsonl_notes


def test_instructions_markup_escapes_html():
    html = annotator_reads.markup_render("**Bold** and <script>alert(1)</script>\n- one\n- two")
    assert "<strong>Bold</strong>" in html and "<script>" not in html and "<li>one</li>" in html


def test_progress_counts_the_annotators_done_and_open_items(labelled):
    user = PairwiseLabel.objects.first().annotator
    progress = annotator_reads.campaign_progress(campaign=labelled, annotator=user)
    assert (progress.done, progress.assigned, progress.items_total) == (6, 0, 6)
    assert set(progress.as_dict()) == {"done", "assigned", "items_total"}  # no campaign-wide count



@pytest.mark.django_db
def test_the_human_bt_fallback_note_is_a_sentence_naming_the_model_that_never_lost():
    from tests.factories import SubjectModelFactory

    best, mid, low = (SubjectModelFactory(display_name=n) for n in ("never-loses", "middling", "lowly"))
    wins = [(best, mid), (best, low), (mid, low), (low, mid)]
    pairs = [HumanPair(i, f"t{i}", "novelty", 2 * i, 2 * i + 1, a.pk, b.pk, "A") for i, (a, b) in enumerate(wins)]
    _, _, note = human_bt_fit(pairs)
    assert "never-loses never lost a decisive human majority" in note
    assert "[" not in note and "l2" not in note and "MLE" not in note

"""The Novelty ablation on real judge runs (Ekphrasis §5.4, Table 4, App. D.1): the service starts a
TIG-anchored and a generic-anchored fixed-pair run on a campaign's Novelty pairs; the dashboard
joins their verdicts to the human majorities; the button, the command and the permissions."""

from __future__ import annotations

import io
import re
from collections import Counter

import pytest
from django.core.management import CommandError, call_command
from statsmodels.stats.contingency_tables import mcnemar as statsmodels_mcnemar

from annotation import novelty_ablation, selectors
from annotation.choices import CampaignKind, Dimension
from annotation.errors import AblationInvalid
from annotation.label_models import PairwiseLabel
from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import Comparison, JudgeRun
from tests.annotation.factories import Catalogue, campaign_for, pairwise_campaign
from tests.annotation.helpers import annotators, fill
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db

#: statsmodels' McNemar and ours must agree to floating-point accuracy (same formulas).
P_TOLERANCE = 1e-12
FLIP = {"A": "B", "B": "A", "tie": "tie"}


def canonical_answer(item) -> str:
    """A fixed human answer per item, in canonical order (a mix of A, B and tie)."""
    return ("A", "B", "A", "tie", "B")[item.pk % 5]


def labelled_campaign(n_tasks: int = 6):
    users = annotators(3)
    catalogue = Catalogue(n_tasks=n_tasks)
    campaign = pairwise_campaign(catalogue, annotators=users)

    def answer(user, assignment):
        choice = canonical_answer(assignment.item)
        if user.username == "ann2" and assignment.item.pk % 3 == 0:
            choice = FLIP[choice] if choice != "tie" else "A"  # one dissenting annotator on a third of the items
        return {"choice": FLIP[choice] if assignment.swapped else choice}

    fill(campaign, users, answer)
    return campaign, catalogue


def run_both(campaign, **kwargs):
    tig, generic = novelty_ablation.novelty_ablation_runs_create(campaign=campaign, judge_name="simulated", **kwargs)
    for run in (tig, generic):
        judge_runs.judge_run_execute_inline(run=run)
    return tig, generic


def independent_counts(campaign, tig, generic) -> tuple[int, int, int, int, int]:
    """correct(TIG), correct(generic), n, b, c counted straight from the label and comparison rows."""
    majorities = {}
    for item in campaign.items.filter(dimension=Dimension.NOVELTY, is_gold=False):
        votes = Counter(PairwiseLabel.objects.filter(item=item, is_stale=False).values_list("choice", flat=True))
        top, count = votes.most_common(1)[0]
        if count >= 2:  # k = 3: a strict majority is two or three votes
            majorities[frozenset((item.response_a_id, item.response_b_id))] = (item, top)

    def verdicts(run):
        out = {}
        for c in Comparison.objects.filter(run=run, kind="primary", status="ok"):
            key = frozenset((c.shown_a_id, c.shown_b_id))
            if key in majorities:
                item, _ = majorities[key]
                winner = c.winner_response_id
                out[key] = "tie" if winner is None else ("A" if winner == item.response_a_id else "B")
        return out

    v_tig, v_generic = verdicts(tig), verdicts(generic)
    both = set(v_tig) & set(v_generic)
    ok_tig = {k for k in both if v_tig[k] == majorities[k][1]}
    ok_generic = {k for k in both if v_generic[k] == majorities[k][1]}
    return len(ok_tig), len(ok_generic), len(both), len(ok_tig - ok_generic), len(ok_generic - ok_tig)


def test_the_service_starts_a_tig_and_a_generic_run_on_the_campaigns_novelty_pairs():
    campaign, _ = labelled_campaign(n_tasks=2)
    tig, generic = novelty_ablation.novelty_ablation_runs_create(campaign=campaign, judge_name="simulated", seed=11)
    assert (tig.novelty_anchor, generic.novelty_anchor) == ("tig", "generic")
    items = campaign.items.filter(dimension=Dimension.NOVELTY, is_gold=False).order_by("position", "pk")
    expected = [[i.task_id, i.response_a_id, i.response_b_id] for i in items]
    for run in (tig, generic):
        assert run.judge_name == "simulated" and run.is_simulated and run.seed == 11 and run.dimensions == "N"
        assert run.config["fixed_pairs"] == expected
        assert run.status == JudgeRun.Status.PENDING


def test_the_service_refuses_a_campaign_without_novelty_pairs_and_an_unknown_judge():
    catalogue = Catalogue(n_tasks=1)
    with pytest.raises(AblationInvalid, match="text pairwise"):
        novelty_ablation.novelty_ablation_runs_create(campaign=campaign_for(CampaignKind.STRATEGY, catalogue), judge_name="simulated")
    with pytest.raises(AblationInvalid, match="no Novelty pairs"):
        novelty_ablation.novelty_ablation_runs_create(campaign=campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue), judge_name="simulated")
    with pytest.raises(AblationInvalid, match="no judge model named"):
        novelty_ablation.novelty_ablation_runs_create(campaign=pairwise_campaign(catalogue), judge_name="nobody")
    assert not JudgeRun.objects.exists()


def test_the_dashboard_panel_counts_correct_over_n_from_the_real_runs(client, rita):
    campaign, _ = labelled_campaign()
    tig, generic = run_both(campaign, config={"simulated": {"tie_rate": 0.0}})
    # The simulated judge gives both conditions the same verdicts; make the generic run disagree on a
    # few pairs (as a judge reading other anchors would) so that the join has discordant pairs to count.
    for c in Comparison.objects.filter(run=generic, kind="primary").order_by("pk")[:5]:
        c.winner = FLIP[c.winner]
        c.save(update_fields=["winner"])
    c_tig, c_generic, n, b, c = independent_counts(campaign, tig, generic)
    assert n > 10 and 0 < b + c <= 5  # a flip against a tie majority leaves both conditions wrong

    assert client.login(username=rita.username, password=PASSWORD)
    body = client.get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    rows = dict(re.findall(r'<tr data-condition="(\w+)">.*?<td class="num">(\d+ / \d+)</td>', body, re.S))
    assert rows == {"tig": f"{c_tig} / {n}", "generic": f"{c_generic} / {n}"}
    for run in (tig, generic):
        assert f'href="/runs/{run.pk}/"' in body
    assert "simulated judge" in body and "does not read the checklist anchors" in body

    view = selectors.novelty_ablation_panel(campaign=campaign)["ablation"]
    assert (view.n, view.correct, view.discordant) == (n, (c_tig, c_generic), (b, c))
    table = [[c_tig - b, b], [c, n - c_tig - c]]  # rows: TIG correct / wrong; columns: generic correct / wrong
    reference = statsmodels_mcnemar(table, exact=b + c < 25, correction=True)
    assert view.mcnemar.p == pytest.approx(reference.pvalue, abs=P_TOLERANCE)


def test_the_chi_square_branch_matches_statsmodels_too():
    campaign, _ = labelled_campaign(n_tasks=14)
    tig, generic = run_both(campaign, config={"simulated": {"tie_rate": 0.0}})
    for comparison in Comparison.objects.filter(run=generic, kind="primary"):
        comparison.winner = FLIP[comparison.winner]
        comparison.save(update_fields=["winner"])
    c_tig, _, n, b, c = independent_counts(campaign, tig, generic)
    assert b + c >= 25
    view = selectors.novelty_ablation_panel(campaign=campaign)["ablation"]
    reference = statsmodels_mcnemar([[c_tig - b, b], [c, n - c_tig - c]], exact=False, correction=True)
    assert view.mcnemar.method == "chi-square with continuity correction"
    assert view.mcnemar.p == pytest.approx(reference.pvalue, abs=P_TOLERANCE)


def test_identical_verdicts_of_the_simulated_judge_are_shown_as_such():
    campaign, _ = labelled_campaign(n_tasks=2)
    run_both(campaign)
    panel = selectors.novelty_ablation_panel(campaign=campaign)
    view = panel["ablation"]
    assert view.correct[0] == view.correct[1] and view.discordant == (0, 0) and view.mcnemar is None
    assert "discordant" in view.note
    assert panel["ablation_simulated"] and any("does not read the checklist anchors" in n for n in panel["ablation_notes"])


def test_a_researcher_starts_the_ablation_from_the_dashboard(client, rita, django_capture_on_commit_callbacks):
    campaign, _ = labelled_campaign(n_tasks=2)
    assert client.login(username=rita.username, password=PASSWORD)
    page = client.get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    assert "Run the Novelty ablation" in page and f"/annotate/campaigns/{campaign.pk}/novelty-ablation" in page
    with django_capture_on_commit_callbacks(execute=True):  # no broker: the runs are judged eagerly
        response = client.post(f"/annotate/campaigns/{campaign.pk}/novelty-ablation", {"judge": "simulated", "seed": 42})
    assert response.status_code == 302
    runs = JudgeRun.objects.filter(task_set=campaign.task_set)
    assert sorted(runs.values_list("novelty_anchor", "status", "created_by")) == [
        ("generic", "done", rita.pk), ("tig", "done", rita.pk)]
    body = client.get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    assert body.count('<tr data-condition="') == 2


def test_an_annotator_cannot_start_the_ablation(client, alice):
    campaign, _ = labelled_campaign(n_tasks=1)
    assert client.login(username=alice.username, password=PASSWORD)
    response = client.post(f"/annotate/campaigns/{campaign.pk}/novelty-ablation", {"judge": "simulated", "seed": 42})
    assert response.status_code == 403
    assert not JudgeRun.objects.exists()


def test_an_unknown_judge_is_refused_by_the_form(client, rita):
    campaign, _ = labelled_campaign(n_tasks=1)
    assert client.login(username=rita.username, password=PASSWORD)
    client.post(f"/annotate/campaigns/{campaign.pk}/novelty-ablation", {"judge": "nobody", "seed": 42})
    assert not JudgeRun.objects.exists()


def test_the_command_runs_both_conditions_and_prints_the_counts():
    campaign, _ = labelled_campaign(n_tasks=2)
    out = io.StringIO()
    call_command("run_novelty_ablation", "--campaign", str(campaign.pk), "--judge", "simulated", stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    view = selectors.novelty_ablation_panel(campaign=campaign)["ablation"]
    assert f"{view.correct[0]} / {view.n}" in text and "TIG anchors" in text and "No TIG (generic anchors)" in text
    assert "SIMULATED judge" in text and "does not read the checklist anchors" in text
    assert JudgeRun.objects.filter(task_set=campaign.task_set, status="done").count() == 2


def test_the_command_names_a_missing_campaign():
    with pytest.raises(CommandError, match="no campaign 999999"):
        call_command("run_novelty_ablation", "--campaign", "999999", "--judge", "simulated")

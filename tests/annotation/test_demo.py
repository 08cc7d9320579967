"""``manage.py load_demo_campaigns`` on the real demo data (leaderboard's demo task set): one
campaign of each kind, labelled as demo, pre-filled by simulated annotators labelled as such,
dashboards with numbers, items left open for annotator1..3. The demo is loaded once per module
(it takes seconds) and removed afterwards; each test runs in its own rolled-back transaction."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from annotation import selectors, services
from annotation.choices import CampaignKind
from annotation.demo import DEMO_ANNOTATORS, SIMULATED_USERNAMES, _Simulator
from annotation.kinds import kind_for
from annotation.models import Campaign, CampaignAnnotator, Item
from annotation.validation_dashboards import VALIDATION_KINDS
from leaderboard.ekphrasis.models import JudgeRun
from leaderboard.models import Render, Response
from tests.annotation.demo_support import demo_loaded


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), demo_loaded() as loaded:
        yield loaded


# The demo is loaded once per module: a parallel run keeps these tests on one worker.
pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("demo")]


def demo_campaigns(task_set):
    """The demo campaign of each kind (the crowd study, labelled by its simulated participants, apart)."""
    return {c.kind: c for c in Campaign.objects.filter(task_set=task_set, is_demo=True, panel_study__isnull=True)}


def _pairwise_item(task: str, dimension: str, model_a: str, model_b: str):
    def response(model):
        return SimpleNamespace(subject_model=SimpleNamespace(display_name=model))

    return SimpleNamespace(response_a_id=1, response_a=response(model_a), response_b=response(model_b),
                           task=SimpleNamespace(external_id=task), dimension=dimension)


def test_a_simulated_pairwise_answer_does_not_depend_on_the_order_items_are_handed_out():
    items = [_pairwise_item(f"t{n}", "novelty", "demo-atlas", "demo-dune") for n in range(30)]
    forward = [_Simulator(7).pairwise("simulated-annotator-3", item, False, "novelty") for item in items]
    one_simulator = _Simulator(7)
    backward = [one_simulator.pairwise("simulated-annotator-3", item, False, "novelty") for item in reversed(items)]
    assert forward == backward[::-1]
    assert len({a["choice"] for a in forward}) > 1  # noisy answers, not a constant


def test_the_demo_has_one_open_demo_campaign_of_each_kind(demo):
    campaigns = demo_campaigns(demo["task_set"])
    assert set(campaigns) == set(CampaignKind.values) - set(VALIDATION_KINDS)  # those live on the EASEL/C² demo data
    assert all(c.status == Campaign.Status.OPEN and c.name.startswith("DEMO") for c in campaigns.values())


def test_every_prefilled_label_comes_from_a_simulated_annotator_and_says_so(demo):
    for campaign in demo_campaigns(demo["task_set"]).values():
        labels = kind_for(campaign.kind).label_model.objects.filter(campaign=campaign)
        assert labels.exists()
        assert set(labels.values_list("annotator__username", flat=True)) <= set(SIMULATED_USERNAMES)
        assert not labels.filter(is_simulated=False).exists()
    simulated = get_user_model().objects.filter(username__in=SIMULATED_USERNAMES)
    assert simulated.count() == 3 and not simulated.filter(is_active=True).exists()  # they cannot log in


def test_every_demo_dashboard_shows_a_kappa(demo):
    for campaign in demo_campaigns(demo["task_set"]).values():
        dashboard = selectors.campaign_dashboard(campaign=campaign)
        assert dashboard.n_simulated > 0
        assert any(row.kappa.value is not None for row in dashboard.rows), (campaign.kind, [r.kappa for r in dashboard.rows])


def test_the_faithfulness_demo_reports_score_reliability_and_pass_rates(demo):
    faith = demo_campaigns(demo["task_set"])[CampaignKind.FAITHFULNESS]
    extras = selectors.campaign_dashboard(campaign=faith).extras["faithfulness"]
    assert extras["icc"].result is not None and extras["mean_score"] is not None
    assert len(extras["by_model"]) == 4 and len(extras["by_family"]) == 4


def test_image_pairs_of_the_demo_only_use_renders_that_passed_the_gate(demo):
    campaigns = demo_campaigns(demo["task_set"])
    passing = selectors.faithfulness_gate(campaign=campaigns[CampaignKind.FAITHFULNESS])
    for item in Item.objects.filter(campaign=campaigns[CampaignKind.IMAGE_PREFERENCE]):
        assert passing.get(item.render_a_id) and passing.get(item.render_b_id)


def test_demo_renders_are_labelled_placeholders(demo):
    renders = Render.objects.filter(response__task__task_set=demo["task_set"])
    assert renders.count() == Response.objects.filter(task__task_set=demo["task_set"], is_primary=True).count()
    assert set(renders.values_list("renderer", "is_placeholder")) == {("schematic-demo", True)}


def test_each_demo_annotator_can_take_an_open_item_in_every_campaign(demo):
    User = get_user_model()
    for campaign in demo_campaigns(demo["task_set"]).values():
        for username in DEMO_ANNOTATORS:
            assignment = services.assignment_next(campaign=campaign, annotator=User.objects.get(username=username))
            assert assignment is not None, (campaign.kind, username)


def test_running_the_demo_command_again_changes_nothing(demo):
    before = {c.pk: c.items.count() for c in Campaign.objects.filter(is_demo=True)}
    out = io.StringIO()
    call_command("load_demo_campaigns", "--no-protocol-demo-data", stdout=out)
    assert "already exist" in out.getvalue()
    assert {c.pk: c.items.count() for c in Campaign.objects.filter(is_demo=True)} == before


def test_in_make_demos_order_annotator1_to_3_get_every_campaign_and_then_a_password_that_works(demo, client):
    # make demo: load_demo --no-accounts, load_demo_campaigns, and only then serve_demo's passwords
    from leaderboard.demo import demo_accounts_refresh

    User = get_user_model()
    User.objects.filter(username__in=DEMO_ANNOTATORS).delete()
    call_command("load_demo_campaigns", "--reset", "--no-protocol-demo-data", stdout=io.StringIO())
    passwords = demo_accounts_refresh()
    campaigns = demo_campaigns(demo["task_set"]).values()
    for username in DEMO_ANNOTATORS:
        user = User.objects.get(username=username)
        assert user.check_password(passwords[username])
        client.force_login(user)
        page = client.get(reverse("annotation:queue")).content.decode()
        assert all(campaign.name in page for campaign in campaigns), username
        for campaign in campaigns:
            assert services.assignment_next(campaign=campaign, annotator=user) is not None, (campaign.kind, username)


def test_loading_the_demo_campaigns_again_makes_annotator1_to_3_members_of_those_made_without_them(demo):
    User = get_user_model()
    campaigns = list(demo_campaigns(demo["task_set"]).values())
    CampaignAnnotator.objects.filter(campaign__in=campaigns, annotator__username__in=DEMO_ANNOTATORS).delete()
    call_command("load_demo_campaigns", "--no-protocol-demo-data", stdout=io.StringIO())
    for campaign in campaigns:
        members = set(campaign.memberships.values_list("annotator__username", flat=True))
        assert set(DEMO_ANNOTATORS) <= members, campaign.kind
    assert User.objects.filter(username__in=DEMO_ANNOTATORS).count() == len(DEMO_ANNOTATORS)


def test_the_command_says_what_is_simulated(demo):
    assert "SIMULATED annotators" in demo["output"] and "left open for annotator1..3" in demo["output"]


def test_the_demo_runs_the_novelty_ablation_with_the_simulated_judge_and_says_it_cannot_differ(demo):
    text = demo_campaigns(demo["task_set"])[CampaignKind.TEXT_PAIRWISE]
    panel = selectors.novelty_ablation_panel(campaign=text)
    view = panel["ablation"]
    assert [r.condition for r in panel["ablation_runs"]] == ["tig", "generic"]
    assert all(r.is_simulated and r.judge_name == "simulated" for r in panel["ablation_runs"])
    assert view.n > 0 and view.correct[0] == view.correct[1] and view.discordant == (0, 0)
    assert any("does not read the checklist anchors" in note for note in panel["ablation_notes"])
    assert "Novelty ablation with the SIMULATED judge" in demo["output"]
    # the ablation runs are not leaderboards
    runs = JudgeRun.objects.filter(pk__in=[r.run_id for r in panel["ablation_runs"]])
    assert all(run.snapshots.count() == 0 for run in runs)


def test_the_demo_crowd_study_has_simulated_participants_in_every_state(demo):
    from annotation.demo_panel import DEMO_PANEL_CAMPAIGN
    from annotation.panel_models import Participant
    from annotation.panel_monitoring import MONITORING_STATES, panel_monitoring

    campaign = Campaign.objects.get(name=DEMO_PANEL_CAMPAIGN, is_demo=True)
    monitoring = panel_monitoring(study=campaign.panel_study)
    # every state but "closed before work": the demo campaign is open, and that state comes only with its closing
    assert all(monitoring.by_state[state] >= 1 for state in MONITORING_STATES if state != "closed_before_work"), \
        monitoring.by_state
    assert all(p.panel_id.startswith("DEMOSIM") for p in Participant.objects.filter(campaign=campaign))
    labels = kind_for(campaign.kind).label_model.objects.filter(campaign=campaign)
    assert labels.exists() and not labels.filter(is_simulated=False).exists()
    assert "DEMO crowd study" in demo["output"] and "SIMULATED participants" in demo["output"]


def test_reset_deletes_the_old_simulated_participants_accounts(demo):
    # Last in the module: it recreates the demo campaigns the other tests read.
    from annotation.panel_models import Participant

    before = Participant.objects.filter(campaign__task_set=demo["task_set"]).count()
    old_users = set(Participant.objects.values_list("user_id", flat=True))
    call_command("load_demo_campaigns", "--reset", "--no-protocol-demo-data", stdout=io.StringIO())
    assert Participant.objects.filter(campaign__task_set=demo["task_set"]).count() == before > 0
    assert not get_user_model().objects.filter(pk__in=old_users).exists()
    assert not get_user_model().objects.filter(username__startswith="panel-", panel_participant__isnull=True).exists()


def test_the_crowd_study_name_names_no_model_even_beside_the_c2_demos_simulated_family():
    from annotation.blinding import texts_identity_problems
    from annotation.demo_panel import DEMO_PANEL_CAMPAIGN
    from leaderboard.models import SubjectModel

    SubjectModel.objects.create(display_name="simulated-aurora", family="simulated")
    assert texts_identity_problems({"name": DEMO_PANEL_CAMPAIGN}) == {}

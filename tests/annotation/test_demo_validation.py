"""The DEMO validation campaigns: built on the EASEL/C² demo data, labelled simulated, items left open."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from annotation.demo_validation import (
    CANVAS_NAME,
    HANDWRITING_NAME,
    OPEN_ITEMS,
    UOS_NAME,
    validation_demo_load,
)
from annotation.label_models import HandwritingLabel, PairwiseLabel, UOSLabel
from annotation.models import Campaign
from leaderboard.models import TaskSet
from tests.annotation.validation_factories import C2World, EaselWorld
from tests.factories import TaskSetFactory

pytestmark = pytest.mark.django_db


def _demo_worlds():
    easel, c2 = EaselWorld(), C2World()
    TaskSet.objects.filter(pk=easel.task_set.pk).update(name="easel-demo", is_demo=True)
    TaskSet.objects.filter(pk=c2.task_set.pk).update(name="c2-demo", is_demo=True)
    return easel, c2


def test_missing_protocol_data_is_skipped_with_a_note_when_asked():
    summary = validation_demo_load(load_missing=False)
    assert summary.campaigns == []
    assert any("EASEL demo data missing" in n for n in summary.notes)
    assert any("C² demo data missing" in n for n in summary.notes)


def test_the_demo_has_one_campaign_of_each_validation_kind_with_simulated_labels_and_open_items():
    _demo_worlds()
    summary = validation_demo_load(seed=3)
    names = {c.name: c for c in summary.campaigns}
    assert set(names) == {UOS_NAME, CANVAS_NAME, HANDWRITING_NAME}
    for campaign in names.values():
        assert campaign.is_demo and campaign.status == Campaign.Status.OPEN
        assert summary.open_items[campaign.name] >= OPEN_ITEMS[campaign.kind]
    for model in (UOSLabel, PairwiseLabel, HandwritingLabel):
        labels = model.objects.filter(campaign__name__in=list(names))
        assert labels.exists() and not labels.filter(is_simulated=False).exists()


def test_loading_twice_keeps_the_campaigns():
    _demo_worlds()
    first = validation_demo_load()
    second = validation_demo_load()
    assert {c.pk for c in second.campaigns} == {c.pk for c in first.campaigns}
    assert Campaign.objects.filter(name=UOS_NAME).count() == 1


def test_the_demo_annotators_are_members_from_the_start_and_again_after_losing_it():
    from annotation.demo import DEMO_ANNOTATORS
    from annotation.models import CampaignAnnotator

    _demo_worlds()
    campaigns = validation_demo_load().campaigns
    for campaign in campaigns:  # made before any demo account existed, as in make demo
        assert set(DEMO_ANNOTATORS) <= set(campaign.memberships.values_list("annotator__username", flat=True))
    CampaignAnnotator.objects.filter(campaign__in=campaigns, annotator__username__in=DEMO_ANNOTATORS).delete()
    validation_demo_load()
    for campaign in campaigns:
        assert set(DEMO_ANNOTATORS) <= set(campaign.memberships.values_list("annotator__username", flat=True))


def test_the_command_prints_the_skip_note(capsys):
    # an Ekphrasis demo already loaded: the command goes straight to the validation campaigns
    Campaign.objects.create(name="DEMO · existing", kind="text_pairwise", task_set=TaskSetFactory(name="ekphrasis-demo"),
                            is_demo=True)
    call_command("load_demo_campaigns", "--no-protocol-demo-data")
    out = capsys.readouterr().out
    assert "EASEL demo data missing" in out and "skipped" in out


PAPER_REFERENCE = ("§", "Eq.", "App.", "c2-eval")


def test_the_names_and_instructions_annotators_see_carry_no_paper_references():
    _demo_worlds()
    for campaign in validation_demo_load(seed=3).campaigns:
        shown = [campaign.name, campaign.instructions.splitlines()[0]]
        assert not [text for text in shown if any(ref in text for ref in PAPER_REFERENCE)], shown


def test_a_demo_made_with_the_old_names_is_renamed_when_loaded_again_not_duplicated():
    _demo_worlds()
    validation_demo_load(seed=3)
    Campaign.objects.filter(name=UOS_NAME).update(name="DEMO · C² U-O-S rating (c2-eval §3.2.2)")
    Campaign.objects.filter(name=HANDWRITING_NAME).update(name="DEMO · EASEL handwriting reading (§3.3)")
    validation_demo_load(seed=3)
    assert Campaign.objects.filter(name__in=[UOS_NAME, CANVAS_NAME, HANDWRITING_NAME]).count() == 3
    assert Campaign.objects.filter(is_demo=True, name__contains="§").count() == 0

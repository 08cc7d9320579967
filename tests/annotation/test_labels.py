"""Label validation of every kind: a bad answer is rejected with a message naming the field, and
nothing is stored; a good answer is stored with the kind's fields."""

from __future__ import annotations

import uuid

import pytest

from annotation import services
from annotation.choices import CampaignKind
from annotation.errors import LabelInvalid
from annotation.kinds import kind_for
from annotation.models import Assignment
from tests.annotation.factories import (
    VALID_ANSWERS,
    Catalogue,
    faithfulness_campaign,
    image_campaign,
    pairwise_campaign,
    strategy_campaign,
    tig_campaign,
)
from tests.annotation.helpers import annotators

pytestmark = pytest.mark.django_db

CRITERIA = ("cluster_validity", "visual_specificity", "faithfulness", "non_leakage", "usefulness_for_judging")


def tig(action="accept", note="", **codes):
    criteria = {c: "pass" for c in CRITERIA}
    criteria.update(codes)
    return {"criteria": criteria, "overall_action": action, "revision_note": note}


@pytest.fixture
def build(media_root):
    """build(kind) -> (campaign, annotator, assignment) with one open assignment."""

    def _build(kind):
        (ann,) = annotators(1, prefix=f"v-{kind}-")
        catalogue = Catalogue(n_tasks=1)
        if kind == CampaignKind.TEXT_PAIRWISE:
            campaign = pairwise_campaign(catalogue, annotators=[ann])
        elif kind == CampaignKind.TIG_AUDIT:
            campaign = tig_campaign(catalogue, annotators=[ann])
        elif kind == CampaignKind.FAITHFULNESS:
            campaign, _ = faithfulness_campaign(catalogue, annotators=[ann])
        elif kind == CampaignKind.IMAGE_PREFERENCE:
            _, renders = faithfulness_campaign(catalogue)
            campaign = image_campaign(catalogue, renders, annotators=[ann])
        else:
            campaign = strategy_campaign(catalogue, annotators=[ann])
        return campaign, ann, services.assignment_next(campaign=campaign, annotator=ann)

    return _build


def submit(assignment, ann, answer, **kwargs):
    return services.label_submit(token=assignment.token, annotator=ann, idempotency_key=uuid.uuid4(), answer=answer, **kwargs)


INVALID = [
    # (kind, answer, field, message fragment)
    (CampaignKind.TEXT_PAIRWISE, {}, "choice", "choose A, B or tie"),
    (CampaignKind.TEXT_PAIRWISE, {"choice": "C"}, "choice", "choose A, B or tie"),
    (CampaignKind.IMAGE_PREFERENCE, {"choice": "left"}, "choice", "choose A, B or tie"),
    (CampaignKind.FAITHFULNESS, {"score": 6}, "score", "out of range"),
    (CampaignKind.FAITHFULNESS, {"score": 0}, "score", "out of range"),
    (CampaignKind.FAITHFULNESS, {"score": "4"}, "score", "whole-number score"),
    (CampaignKind.FAITHFULNESS, {"score": 4.5}, "score", "whole-number score"),
    (CampaignKind.FAITHFULNESS, {"score": True}, "score", "whole-number score"),
    (CampaignKind.FAITHFULNESS, {"score": 2, "hard_fail": True, "hard_fail_reasons": []}, "hard_fail_reasons", "at least one reason"),
    (CampaignKind.FAITHFULNESS, {"score": 2, "hard_fail_reasons": ["blurry"]}, "hard_fail_reasons", "unknown hard-fail reason"),
    (CampaignKind.FAITHFULNESS, {"score": 3, "hard_fail": "yes", "hard_fail_reasons": ["missing_core_object"]},
     "hard_fail", "true or false"),
    (CampaignKind.FAITHFULNESS, {"score": 5, "hard_fail": False, "hard_fail_reasons": ["missing_core_object"]},
     "hard_fail", "mark the hard fail or drop the reasons"),
    (CampaignKind.TIG_AUDIT, tig(non_leakage="maybe"), "criteria.non_leakage", "unknown code 'maybe'"),
    (CampaignKind.TIG_AUDIT, {**tig(), "criteria": {**tig()["criteria"], "beauty": "pass"}}, "criteria.beauty", "unknown criterion"),
    (CampaignKind.TIG_AUDIT, {**tig(), "criteria": {c: "pass" for c in CRITERIA[:4]}}, "criteria.usefulness_for_judging", "mark usefulness"),
    (CampaignKind.TIG_AUDIT, tig(action="keep"), "overall_action", "choose one of"),
    (CampaignKind.TIG_AUDIT, tig(action="revise"), "revision_note", "say what to revise"),
    (CampaignKind.TIG_AUDIT, tig(action="accept", non_leakage="fail"), "overall_action", "must be excluded"),
    (CampaignKind.TIG_AUDIT, tig(action="revise", note="reword", cluster_validity="fail"), "overall_action", "must be excluded"),
    (CampaignKind.STRATEGY, {"strategies": {"collage": "central"}}, "strategies.collage", "unknown strategy"),
    (CampaignKind.STRATEGY, {"strategies": {"style_transfer": "major"}}, "strategies.style_transfer", "central or incidental"),
    (CampaignKind.STRATEGY, {"strategies": ["style_transfer"]}, "strategies", "must be an object"),
    (CampaignKind.TEXT_PAIRWISE, {"choice": "A", "flag": {"reason": "ambiguous_brief", "note": ""}}, "flag.note", "needs a short note"),
    (CampaignKind.TEXT_PAIRWISE, {"choice": "A", "flag": {"reason": "boring", "note": "meh"}}, "flag.reason", "unknown flag reason"),
    (CampaignKind.TEXT_PAIRWISE, {"choice": "A", "flag": {"reason": "ambiguous_brief", "note": "x" * 501}}, "flag.note", "under 500"),
    (CampaignKind.FAITHFULNESS, "4", "answer", "must be a JSON object"),
]


@pytest.mark.parametrize(("kind", "answer", "field", "fragment"), INVALID,
                         ids=[f"{k}-{f}-{i}" for i, (k, _, f, _) in enumerate(INVALID)])
def test_an_invalid_answer_is_rejected_with_a_clear_message_and_nothing_stored(build, kind, answer, field, fragment):
    _, ann, assignment = build(kind)
    with pytest.raises(LabelInvalid) as info:
        submit(assignment, ann, answer)
    assert field in info.value.errors, info.value.errors
    assert fragment in info.value.errors[field]
    assert assignment.__class__.objects.get(pk=assignment.pk).status == Assignment.Status.ACTIVE
    assert not kind_for(kind).label_model.objects.exists()


@pytest.mark.parametrize("bad", [-1, 10**9, "12", 1.5])
def test_time_on_item_must_be_a_sane_whole_number_of_milliseconds(build, bad):
    _, ann, assignment = build(CampaignKind.TEXT_PAIRWISE)
    with pytest.raises(LabelInvalid, match="time_on_item_ms"):
        submit(assignment, ann, {"choice": "A"}, time_on_item_ms=bad)


def test_the_idempotency_key_must_be_a_uuid(build):
    _, ann, assignment = build(CampaignKind.TEXT_PAIRWISE)
    with pytest.raises(LabelInvalid, match="idempotency_key"):
        services.label_submit(token=assignment.token, annotator=ann, idempotency_key="not-a-uuid", answer={"choice": "A"})


@pytest.mark.parametrize("kind", list(VALID_ANSWERS))
def test_a_valid_answer_of_every_kind_is_stored(build, kind):
    _, ann, assignment = build(kind)
    submission = submit(assignment, ann, VALID_ANSWERS[kind])
    assert submission.label.pk is not None and not submission.replayed


def test_faithfulness_passes_at_four_without_a_hard_fail(build):
    _, ann, assignment = build(CampaignKind.FAITHFULNESS)
    label = submit(assignment, ann, {"score": 4, "hard_fail_reasons": []}).label
    assert label.passed is True


def test_faithfulness_fails_below_four(build):
    _, ann, assignment = build(CampaignKind.FAITHFULNESS)
    assert submit(assignment, ann, {"score": 3}).label.passed is False


def test_a_hard_fail_fails_the_image_whatever_the_score(build):
    _, ann, assignment = build(CampaignKind.FAITHFULNESS)
    label = submit(assignment, ann, {"score": 5, "hard_fail": True, "hard_fail_reasons": ["missing_core_object"]}).label
    assert (label.passed, label.hard_fail_reasons) == (False, ["missing_core_object"])


def test_a_tig_audit_stores_all_five_criteria_and_the_note(build):
    _, ann, assignment = build(CampaignKind.TIG_AUDIT)
    label = submit(assignment, ann, tig(action="revise", note="  not visual enough  ", visual_specificity="partial")).label
    assert (label.visual_specificity, label.overall_action, label.revision_note) == ("partial", "revise", "not visual enough")


def test_a_tig_fail_on_usefulness_alone_may_still_be_revised(build):
    _, ann, assignment = build(CampaignKind.TIG_AUDIT)
    label = submit(assignment, ann, tig(action="revise", note="sharpen", usefulness_for_judging="fail")).label
    assert label.overall_action == "revise"


def test_strategies_are_stored_central_or_incidental_and_others_absent(build):
    _, ann, assignment = build(CampaignKind.STRATEGY)
    label = submit(assignment, ann, {"strategies": {"medium_adaptation": "central", "style_transfer": "incidental"}}).label
    assert label.strategies == {"medium_adaptation": "central", "style_transfer": "incidental"}
    assert label.scenario_embedding == "absent"


def test_a_response_may_receive_no_strategy(build):
    _, ann, assignment = build(CampaignKind.STRATEGY)
    assert submit(assignment, ann, {"strategies": {}}).label.strategies == {}


def test_a_flag_with_a_note_is_stored_beside_the_choice(build):
    _, ann, assignment = build(CampaignKind.TEXT_PAIRWISE)
    label = submit(assignment, ann, {"choice": "tie", "flag": {"reason": "missing_or_truncated", "note": "visual field truncated"}}).label
    assert (label.choice, label.flag_reason, label.flag_note) == ("tie", "missing_or_truncated", "visual field truncated")


@pytest.mark.django_db(False)
@pytest.mark.parametrize("shown", ["A", "B", "tie", "a", "TIE", "C", "", None, 1, ["A"], {"choice": "A"}, ("A",)])
def test_a_pair_choice_is_accepted_exactly_when_it_is_one_of_the_enums_values(shown):
    """Equivalence (issue 30): the choice is checked against the values kept once, as against
    ``PairChoice.values`` itself, unhashable answers included."""
    from types import SimpleNamespace

    from annotation.choices import PairChoice
    from annotation.kinds.base import PAIR_CHOICE_VALUES, validate_pair_choice

    assert PAIR_CHOICE_VALUES == tuple(PairChoice.values)
    values, errors = validate_pair_choice({"choice": shown}, SimpleNamespace(swapped=False))
    assert (not errors) == (shown in PairChoice.values)
    assert values == ({"shown_choice": shown, "choice": shown, "swapped": False} if not errors else {})

"""Changing one's previous label (annotation/label_revision.py): a new version, the old values archived,
idempotent, pinned to what the item showed, refused with nothing written otherwise."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import annotator_reads, item_creation, label_export, selectors, services
from annotation.choices import CampaignKind
from annotation.errors import CampaignNotOpen, LabelInvalid, LabelNotRevisable, NotFound, SubmissionConflict
from annotation.kinds import kind_for
from annotation.kinds.base import pair_choice_to_canonical
from annotation.label_models import LabelRevision, PairwiseLabel, StrategyLabel
from annotation.label_revision import label_revise
from annotation.models import Adjudication, AnnotatorProgress, Campaign, CampaignProgress
from annotation.previous_label import previous_label_present
from tests.annotation.factories import (
    VALID_ANSWERS,
    Catalogue,
    faithfulness_campaign,
    pairwise_campaign,
    strategy_campaign,
    tig_campaign,
)
from tests.annotation.helpers import annotators, take_and_label
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue():
    return Catalogue(n_tasks=2)


@pytest.fixture
def labelled(catalogue):
    """Ann labelled one pairwise item 'A' with a flag: (campaign, ann, assignment, label)."""
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann], n_items=3)
    answer = {"choice": "A", "flag": {"reason": "ambiguous_brief", "note": "which audience?"}}
    assignment, submission = take_and_label(campaign, ann, answer, time_on_item_ms=4000)
    return campaign, ann, assignment, submission.label


def _state(campaign):
    """Everything a change could write, to compare before and after a refusal."""
    progress = CampaignProgress.objects.get(pk=campaign.pk)
    label_model = kind_for(campaign.kind).label_model
    return (
        list(LabelRevision.objects.values_list("pk", flat=True)),
        [label_model.objects.filter(pk=label.pk).values().get() for label in label_model.objects.all()],
        (progress.labels, progress.label_version),
        list(AnnotatorProgress.objects.values_list("done", flat=True)),
    )


def _revise(assignment, user, answer, key=None, **kwargs):
    return label_revise(token=assignment.token, annotator=user, idempotency_key=key or uuid.uuid4(), answer=answer,
                        **kwargs)


def test_a_change_writes_version_2_and_archives_the_values_it_replaced(labelled):
    campaign, ann, assignment, label = labelled
    revision = _revise(assignment, ann, {"choice": "tie"}, time_on_item_ms=1500)
    assert (revision.version, revision.changed, revision.replayed) == (2, True, False)
    label.refresh_from_db()
    assert (label.shown_choice, label.flag_reason, label.flag_note, label.version) == ("tie", "", "", 2)
    assert label.revised_at is not None and label.time_on_item_ms == 4000  # the first labelling's time stays
    (archived,) = LabelRevision.objects.filter(assignment=assignment)
    assert archived.version == 1 and archived.annotator == ann and archived.time_on_revision_ms == 1500
    assert archived.values["shown_choice"] == "A" and archived.values["flag_note"] == "which audience?"
    assert (archived.content_hash, archived.task_set_version) == (label.content_hash, label.task_set_version)
    assert archived.given_at == label.created_at and archived.superseded_at == label.revised_at


def test_a_pairwise_change_maps_the_key_pressed_through_the_orientation_seen(labelled):
    _campaign, ann, assignment, label = labelled
    _revise(assignment, ann, {"choice": "B"})
    label.refresh_from_db()
    assert label.shown_choice == "B" and label.choice == ("A" if assignment.swapped else "B")


def test_a_second_change_archives_version_2_and_keeps_version_1(labelled):
    _campaign, ann, assignment, label = labelled
    _revise(assignment, ann, {"choice": "tie"})
    _revise(assignment, ann, {"choice": "B"})
    label.refresh_from_db()
    assert label.version == 3 and label.shown_choice == "B"
    history = {r.version: r.values["shown_choice"] for r in LabelRevision.objects.filter(assignment=assignment)}
    assert history == {1: "A", 2: "tie"}


def test_re_sending_the_same_change_writes_nothing_and_returns_the_same_result(labelled):
    campaign, ann, assignment, _label = labelled
    key = uuid.uuid4()
    first = _revise(assignment, ann, {"choice": "tie"}, key=key)
    before = _state(campaign)
    again = _revise(assignment, ann, {"choice": "tie"}, key=str(key))
    assert (again.version, again.changed, again.replayed) == (first.version, True, True)
    assert _state(campaign) == before


def test_re_sending_an_earlier_change_after_a_later_one_replays_the_earlier(labelled):
    _campaign, ann, assignment, label = labelled
    key = uuid.uuid4()
    _revise(assignment, ann, {"choice": "tie"}, key=key)
    _revise(assignment, ann, {"choice": "B"})
    again = _revise(assignment, ann, {"choice": "tie"}, key=key)
    assert (again.version, again.replayed) == (2, True)
    label.refresh_from_db()
    assert label.version == 3 and label.shown_choice == "B"


def test_re_sending_the_original_submission_after_a_change_replays_it_and_writes_nothing(labelled):
    campaign, ann, assignment, label = labelled
    _revise(assignment, ann, {"choice": "tie"})
    before = _state(campaign)
    original = {"choice": "A", "flag": {"reason": "ambiguous_brief", "note": "which audience?"}}
    again = services.label_submit(token=assignment.token, annotator=ann, idempotency_key=label.idempotency_key,
                                  answer=original)
    assert again.replayed and again.label.shown_choice == "tie"
    assert _state(campaign) == before
    with pytest.raises(SubmissionConflict):
        services.label_submit(token=assignment.token, annotator=ann, idempotency_key=label.idempotency_key,
                              answer={"choice": "B"})


def test_re_using_a_change_key_with_another_answer_is_a_conflict(labelled):
    campaign, ann, assignment, _label = labelled
    key = uuid.uuid4()
    _revise(assignment, ann, {"choice": "tie"}, key=key)
    before = _state(campaign)
    with pytest.raises(SubmissionConflict, match="different answer"):
        _revise(assignment, ann, {"choice": "B"}, key=key)
    assert _state(campaign) == before


def test_the_submission_key_of_a_label_cannot_be_used_for_a_change(labelled):
    campaign, ann, assignment, label = labelled
    before = _state(campaign)
    with pytest.raises(SubmissionConflict, match="already used"):
        _revise(assignment, ann, {"choice": "tie"}, key=label.idempotency_key)
    assert _state(campaign) == before


def test_the_same_answer_again_writes_no_empty_version(labelled):
    campaign, ann, assignment, _label = labelled
    before = _state(campaign)
    same = _revise(assignment, ann, {"choice": "A", "flag": {"reason": "ambiguous_brief", "note": "which audience?"}})
    assert (same.version, same.changed) == (1, False)
    assert _state(campaign) == before


def test_a_change_bumps_the_dashboards_label_version_and_leaves_the_counters(labelled):
    campaign, ann, assignment, _label = labelled
    progress = CampaignProgress.objects.get(pk=campaign.pk)
    done = AnnotatorProgress.objects.get(campaign=campaign, annotator=ann).done
    _revise(assignment, ann, {"choice": "B"})
    after = CampaignProgress.objects.get(pk=campaign.pk)
    assert after.label_version == progress.label_version + 1
    assert (after.labels, after.slots) == (progress.labels, progress.slots)
    assert AnnotatorProgress.objects.get(campaign=campaign, annotator=ann).done == done
    assert PairwiseLabel.objects.filter(campaign=campaign).count() == 1


def test_the_dashboard_reads_the_current_version(catalogue):
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users, n_items=1)
    assignments = []
    for user in users:  # each presses the key that means the canonical A in the order they saw
        assignment = services.assignment_next(campaign=campaign, annotator=user)
        services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(),
                              answer={"choice": pair_choice_to_canonical("A", assignment.swapped)})
        assignments.append(assignment)
    item = campaign.items.get()
    assert selectors.item_consensus(item=item).majority == "A"
    for assignment, user, canonical in zip(assignments[1:], users[1:], ("B", "tie"), strict=True):
        _revise(assignment, user, {"choice": pair_choice_to_canonical(canonical, assignment.swapped)})
    consensus = selectors.item_consensus(item=item)
    assert consensus.n_labels == 3 and consensus.majority is None  # A, B and tie: no majority any more


def test_an_invalid_answer_is_refused_by_the_kinds_own_validation(labelled):
    campaign, ann, assignment, _label = labelled
    before = _state(campaign)
    with pytest.raises(LabelInvalid) as refused:
        _revise(assignment, ann, {"choice": "C", "flag": {"reason": "ambiguous_brief", "note": ""}})
    assert set(refused.value.errors) == {"choice", "flag.note"}
    assert _state(campaign) == before


def test_a_label_that_is_not_the_annotators_most_recent_is_refused(labelled):
    campaign, ann, assignment, _label = labelled
    take_and_label(campaign, ann, {"choice": "B"})
    before = _state(campaign)
    with pytest.raises(LabelNotRevisable, match="most recent"):
        _revise(assignment, ann, {"choice": "tie"})
    assert _state(campaign) == before


def test_the_previous_label_stays_changeable_while_the_next_item_is_open(labelled):
    campaign, ann, assignment, _label = labelled
    current = services.assignment_next(campaign=campaign, annotator=ann)
    assert current is not None and current.pk != assignment.pk
    assert _revise(assignment, ann, {"choice": "tie"}).version == 2
    current.refresh_from_db()
    assert current.status == "active"


def test_someone_elses_label_is_not_found(labelled):
    campaign, _ann, assignment, _label = labelled
    bob = UserFactory(username="bob", role="annotator")
    services.campaign_annotators_add(campaign=campaign, annotators=[bob])
    before = _state(campaign)
    with pytest.raises(NotFound):
        _revise(assignment, bob, {"choice": "tie"})
    assert _state(campaign) == before


def test_an_item_not_yet_answered_has_nothing_to_change(labelled):
    campaign, ann, _assignment, _label = labelled
    current = services.assignment_next(campaign=campaign, annotator=ann)
    before = _state(campaign)
    with pytest.raises(LabelNotRevisable, match="no saved label"):
        _revise(current, ann, {"choice": "tie"})
    assert _state(campaign) == before


def test_a_closed_campaign_refuses_a_change(labelled):
    campaign, ann, assignment, _label = labelled
    services.campaign_status_set(campaign=campaign, status=Campaign.Status.CLOSED)
    before = _state(campaign)
    with pytest.raises(CampaignNotOpen):
        _revise(assignment, ann, {"choice": "tie"})
    assert _state(campaign) == before


def test_a_change_after_the_items_content_changed_is_refused(labelled):
    campaign, ann, assignment, label = labelled
    response = assignment.item.response_a
    response.core_idea = "Rewritten after the label was given"
    response.save()
    before = _state(campaign)
    with pytest.raises(LabelNotRevisable, match="the item changed since you labelled it, or it is under review"):
        _revise(assignment, ann, {"choice": "tie"})
    assert _state(campaign) == before
    label.refresh_from_db()
    assert label.version == 1 and label.shown_choice == "A"


def test_a_stale_label_is_refused(labelled):
    campaign, ann, assignment, _label = labelled
    response = assignment.item.response_b
    response.core_idea = "Rewritten and refreshed"
    response.save()
    item_creation.campaign_content_refresh(campaign=campaign)
    before = _state(campaign)
    with pytest.raises(Exception, match="changed") as refused:
        _revise(assignment, ann, {"choice": "tie"})
    assert refused.value.status == 409
    assert _state(campaign) == before


@pytest.mark.parametrize("resolved", [False, True], ids=["requested", "resolved"])
def test_an_item_in_adjudication_changes_like_any_other(labelled, resolved):
    campaign, ann, assignment, _label = labelled
    rita = UserFactory(username="rita", role="researcher")
    now = timezone.now()
    Adjudication.objects.create(item=assignment.item, requested_by=rita, requested_at=now,
                                **({"outcome": "B", "resolved_by": rita, "resolved_at": now} if resolved else {}))
    # refusing it would tell the annotator that the others disagreed
    assert _revise(assignment, ann, {"choice": "tie"}).version == 2
    assert LabelRevision.objects.filter(assignment=assignment, version=1).exists()  # the researcher sees it changed


def test_the_researchers_item_view_marks_a_label_changed_after_the_item_went_to_adjudication(labelled):
    campaign, ann, assignment, _label = labelled
    rita = UserFactory(username="rita", role="researcher")
    item = assignment.item
    Adjudication.objects.create(item=item, requested_by=rita, requested_at=timezone.now())
    assert [row["changed_in_review"] for row in annotator_reads.campaign_item_view(campaign=campaign, item=item)["labels"]] == [False]
    _revise(assignment, ann, {"choice": "tie"})
    client = Client()
    assert client.login(username="rita", password=PASSWORD)
    page = client.get(f"/annotate/campaigns/{campaign.pk}/items/{item.pk}/").content.decode()
    assert "changed during adjudication" in page and "now version 2" in page


def test_a_gold_items_label_changes_like_any_other(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann], n_items=2)
    item_creation.item_gold_set(item=campaign.items.order_by("position").first(), answer="A")
    campaign.gold_rate = 0.5
    campaign.save(update_fields=["gold_rate"])
    for _ in range(3):  # the gold schedule hands it out second
        assignment, _ = take_and_label(campaign, ann, {"choice": "A"})
        if assignment.item.is_gold:
            break
    assert assignment.item.is_gold  # refusing it would tell the annotator which items are gold
    assert _revise(assignment, ann, {"choice": "B"}).version == 2


def test_a_strategy_label_changes_through_the_kinds_validation(catalogue):
    (ann,) = annotators(1)
    campaign = strategy_campaign(catalogue, annotators=[ann])
    assignment, _ = take_and_label(campaign, ann, VALID_ANSWERS[CampaignKind.STRATEGY])
    _revise(assignment, ann, {"strategies": {"style_transfer": "incidental"}})
    label = StrategyLabel.objects.get(assignment=assignment)
    assert label.strategies == {"style_transfer": "incidental"} and label.version == 2
    archived = LabelRevision.objects.get(assignment=assignment).values
    assert archived["medium_adaptation"] == "central" and archived["style_transfer"] == "absent"


def test_a_faithfulness_change_recomputes_the_pass_rule(catalogue, media_root):
    from annotation.label_models import FaithfulnessLabel

    (ann,) = annotators(1)
    campaign, _ = faithfulness_campaign(catalogue, annotators=[ann])
    assignment, _ = take_and_label(campaign, ann, {"score": 5, "hard_fail_reasons": []})
    _revise(assignment, ann, {"score": 5, "hard_fail": True, "hard_fail_reasons": ["missing_core_object"]})
    label = FaithfulnessLabel.objects.get(assignment=assignment)
    assert label.passed is False and label.missing_core_object and label.version == 2
    assert LabelRevision.objects.get(assignment=assignment).values["passed"] is True


@pytest.mark.parametrize("kind", [CampaignKind.TEXT_PAIRWISE, CampaignKind.STRATEGY, CampaignKind.TIG_AUDIT,
                                  CampaignKind.FAITHFULNESS])
def test_the_page_answer_of_a_label_validates_back_to_the_label(catalogue, media_root, kind):
    (ann,) = annotators(1)
    builders = {CampaignKind.TEXT_PAIRWISE: lambda: pairwise_campaign(catalogue, annotators=[ann]),
                CampaignKind.STRATEGY: lambda: strategy_campaign(catalogue, annotators=[ann]),
                CampaignKind.TIG_AUDIT: lambda: tig_campaign(catalogue, annotators=[ann]),
                CampaignKind.FAITHFULNESS: lambda: faithfulness_campaign(catalogue, annotators=[ann])[0]}
    campaign = builders[kind]()
    answer = dict(VALID_ANSWERS[kind], flag={"reason": "ambiguous_brief", "note": "unclear"})
    assignment, submission = take_and_label(campaign, ann, answer)
    kind_ = kind_for(kind)
    values = kind_.validate(kind_.answer_for_page(submission.label), item=assignment.item, assignment=assignment)
    assert all(getattr(submission.label, name) == value for name, value in values.items())


def test_the_previous_label_is_shown_as_seen_with_the_annotators_own_answer(labelled):
    campaign, ann, assignment, _label = labelled
    previous = previous_label_present(campaign=campaign, annotator=ann,
                                                media_url_for=lambda token: lambda slot: f"/m/{token}/{slot}")
    presented = annotator_reads.assignment_present(assignment=services.assignment_for_token(token=assignment.token, annotator=ann),
                                             media_url=lambda slot: slot)
    assert previous["token"] == assignment.token and previous["revisable"] and previous["version"] == 1
    assert previous["content"] == presented["content"]  # the same sides, in the same shown order
    assert previous["answer"] == {"choice": "A", "flag": {"reason": "ambiguous_brief", "note": "which audience?"}}
    assert set(previous) == {"token", "kind", "version", "revisable", "refusal", "content", "answer"}


def test_a_previous_label_that_may_not_change_says_why_and_shows_nothing(labelled):
    campaign, ann, assignment, _label = labelled
    response = assignment.item.response_a
    response.core_idea = "Rewritten"
    response.save()
    previous = previous_label_present(campaign=campaign, annotator=ann, media_url_for=lambda t: str)
    assert previous["revisable"] is False and "changed" in previous["refusal"]
    assert previous["content"] is None and previous["answer"] is None


def test_no_previous_label_before_the_first_answer(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann], n_items=1)
    assert previous_label_present(campaign=campaign, annotator=ann, media_url_for=lambda t: str) is None


def test_the_labels_export_carries_the_version_and_the_superseded_versions(labelled):
    import csv
    import io
    import json

    campaign, ann, assignment, _label = labelled
    _revise(assignment, ann, {"choice": "tie"})
    (row,) = [json.loads(line) for line in label_export.labels_export(campaign=campaign, fmt="jsonl").splitlines()]
    assert row["version"] == 2 and row["answer"]["shown_choice"] == "tie" and row["revised_at"]
    assert row["revisions"]["1"]["answer"]["shown_choice"] == "A"
    assert row["revisions"]["1"]["flag_note"] == "which audience?"
    (cells,) = csv.DictReader(io.StringIO(label_export.labels_export(campaign=campaign, fmt="csv")))
    assert cells["version"] == "2" and json.loads(cells["revisions"])["1"]["category"] in ("A", "B")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_racing_changes_on_postgresql_archive_every_version_once():
    """Four copies of one change (double Enter, retries) and two other changes at the same instant:
    the copies write one version, the others one each, and no superseded version is lost."""
    import threading

    from django.db import connection

    from tests.conftest import require_service

    require_service("postgres")
    (ann,) = annotators(1, prefix="racing")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[ann], n_items=1)
    assignment, _ = take_and_label(campaign, ann, {"choice": "A"})
    key = uuid.uuid4()
    requests = [(key, "tie")] * 4 + [(uuid.uuid4(), "B"), (uuid.uuid4(), "A")]
    barrier = threading.Barrier(len(requests))
    results, errors = [], []

    def send(request_key, choice):
        try:
            barrier.wait(timeout=30)
            results.append(_revise(assignment, ann, {"choice": choice}, key=request_key))
        except BaseException as exc:  # noqa: BLE001 — reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=request) for request in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    label = PairwiseLabel.objects.get(assignment=assignment)
    versions = sorted(LabelRevision.objects.filter(assignment=assignment).values_list("version", flat=True))
    written = [r for r in results if r.changed and not r.replayed]
    # "A" again may find "A" current (no version) or not, depending on the order the requests ran in
    assert versions == list(range(1, label.version)) and len(written) == label.version - 1
    assert sum(r.replayed for r in results) == 3 and len({r.version for r in results if r.replayed}) == 1


@pytest.mark.parametrize("kind", [CampaignKind.UOS_RATING, CampaignKind.CANVAS_SIMILARITY, CampaignKind.HANDWRITING])
def test_a_validation_kinds_page_answer_validates_back_and_changes_to_a_new_version(kind):
    from tests.annotation.validation_factories import (
        VALID_VALIDATION_ANSWERS,
        C2World,
        EaselWorld,
        canvas_campaign,
        handwriting_campaign,
        uos_campaign,
    )

    (ann,) = annotators(1, prefix="validation")
    builders = {CampaignKind.UOS_RATING: lambda: uos_campaign(C2World(), annotators=[ann], n_items=2),
                CampaignKind.CANVAS_SIMILARITY: lambda: canvas_campaign(EaselWorld(), annotators=[ann], pairs_per_task=1),
                CampaignKind.HANDWRITING: lambda: handwriting_campaign(EaselWorld(), annotators=[ann])}
    campaign = builders[kind]()
    assignment, submission = take_and_label(campaign, ann, VALID_VALIDATION_ANSWERS[kind])
    kind_ = kind_for(kind)
    page_answer = kind_.answer_for_page(submission.label)
    values = kind_.validate(page_answer, item=assignment.item, assignment=assignment)
    assert all(getattr(submission.label, name) == value for name, value in values.items())
    other = {CampaignKind.UOS_RATING: {"usefulness": 0, "originality": 5, "surprise": 4},
             CampaignKind.CANVAS_SIMILARITY: {"choice": "tie"},
             CampaignKind.HANDWRITING: {"text": "", "unreadable": True}}[kind]
    assert _revise(assignment, ann, other).version == 2
    assert LabelRevision.objects.get(assignment=assignment).values == {
        name: getattr(submission.label, name) for name in values}


def _annotator_view_after_the_item_completes(catalogue, *, other_answer: str, adjudicated: bool) -> dict:
    """Ann labels the only item of a k = 2 campaign a tie and Bob labels it ``other_answer`` (the researcher
    sends it to adjudication when ``adjudicated``); then everything Ann can load about it, as she loads it
    (her pages and the annotators' APIs, old and /api/v1/), and a change of her label, with what names the
    item (its token, the campaign's id) taken out."""
    ann, bob = annotators(2, prefix=f"{other_answer}{int(adjudicated)}-")
    campaign = pairwise_campaign(catalogue, annotators=[ann, bob], n_items=1, k=2)
    ann_assignment, _ = take_and_label(campaign, ann, {"choice": "tie"})
    take_and_label(campaign, bob, {"choice": other_answer})
    if adjudicated:
        services.adjudication_request(item=ann_assignment.item, researcher=UserFactory(role="researcher"))
        assert Adjudication.objects.filter(item=ann_assignment.item).exists()
    client = Client()
    assert client.login(username=ann.username, password=PASSWORD)
    pk, token = campaign.pk, ann_assignment.token

    def blind(value):
        text = json.dumps(value, sort_keys=True).replace(token, "TOKEN")
        return re.sub(r"\d+", "#", text)

    def page(url):
        response = client.get(url)
        return response.status_code, re.sub(r"\d+|csrfmiddlewaretoken\" value=\"[^\"]*\"|nonce=\"[^\"]*\"", "#",
                                             response.content.decode().replace(ann.username, "ANN"))

    def answer(response):
        return response.status_code, blind(response.json())

    seen = {
        "previous": answer(client.get(reverse("annotation:api_previous", args=[pk]))),
        "v1.previous": answer(client.get(f"/api/v1/annotate/campaigns/{pk}/previous")),
        "progress": answer(client.get(reverse("annotation:api_progress", args=[pk]))),
        "next": answer(client.post(reverse("annotation:api_next", args=[pk]), {}, content_type="application/json")),
        "queue": page(reverse("annotation:queue")),
        "work": page(reverse("annotation:work", args=[pk])),
    }
    body = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "B"}}
    seen["revise"] = answer(client.post(reverse("annotation:api_revise", args=[token]), body,
                                        content_type="application/json"))
    seen["revise again"] = answer(client.post(reverse("annotation:api_revise", args=[token]), body,
                                              content_type="application/json"))
    seen["v1.revise"] = answer(client.post(f"/api/v1/annotate/assignments/{token}/revise",
                                           {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}},
                                           content_type="application/json"))
    return seen


def test_an_annotator_cannot_tell_an_item_in_adjudication_from_one_everybody_agreed_on(catalogue):
    agreed = _annotator_view_after_the_item_completes(catalogue, other_answer="tie", adjudicated=False)
    disputed = _annotator_view_after_the_item_completes(catalogue, other_answer="A", adjudicated=True)
    assert agreed["revise"][0] == 201  # the label was changeable: the comparison is of two live views
    assert {key: value for key, value in disputed.items() if value != agreed[key]} == {}

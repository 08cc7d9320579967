"""Assignment, submission, expiry, counterbalancing, staleness, gold and adjudication services."""

from __future__ import annotations

import json
import random
import uuid
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone

from annotation import item_creation, services
from annotation.choices import CampaignKind
from annotation.errors import (
    AssignmentClosed,
    CampaignNotOpen,
    ItemsInvalid,
    NotAllowed,
    NotFound,
    SubmissionConflict,
)
from annotation.label_models import PairwiseLabel
from annotation.models import Assignment, Campaign, ItemSlot
from tests.annotation.factories import (
    Catalogue,
    campaign_for,
    faithfulness_campaign,
    pairwise_campaign,
    tig_campaign,
)
from tests.annotation.helpers import annotators, fill, fill_round_robin, take_and_label
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue():
    return Catalogue(n_tasks=2)


# ---------------------------------------------------------------- handing out items


def test_next_gives_an_open_item_with_a_token_not_an_id(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    assignment = services.assignment_next(campaign=campaign, annotator=ann)
    assert assignment.status == Assignment.Status.ACTIVE
    assert len(assignment.token) >= 32 and str(assignment.item_id) != assignment.token


def test_asking_twice_returns_the_same_open_assignment(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    first = services.assignment_next(campaign=campaign, annotator=ann)
    second = services.assignment_next(campaign=campaign, annotator=ann)
    assert first.pk == second.pk
    assert Assignment.objects.filter(annotator=ann).count() == 1


def test_an_annotator_never_gets_an_item_twice(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    fill(campaign, [ann], lambda u, a: {"choice": "A"})
    items = list(Assignment.objects.filter(annotator=ann).values_list("item_id", flat=True))
    assert len(items) == len(set(items)) == campaign.items.count()


def test_item_with_k_labels_is_not_given_to_another_annotator():
    catalogue = Catalogue(n_tasks=1)
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, n_items=1, k=2, annotators=users)
    fill(campaign, users[:2], lambda u, a: {"choice": "A"})
    assert services.assignment_next(campaign=campaign, annotator=users[2]) is None


def test_item_with_k_active_assignments_is_not_given_to_another_annotator():
    catalogue = Catalogue(n_tasks=1)
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, n_items=1, k=2, annotators=users)
    services.assignment_next(campaign=campaign, annotator=users[0])
    services.assignment_next(campaign=campaign, annotator=users[1])
    assert services.assignment_next(campaign=campaign, annotator=users[2]) is None


def test_every_item_gets_exactly_k_labels_from_k_annotators(catalogue):
    users = annotators(5)
    campaign = pairwise_campaign(catalogue, annotators=users)
    fill(campaign, users, lambda u, a: {"choice": "B"})
    for item in campaign.items.all():
        labels = PairwiseLabel.objects.filter(item=item)
        assert labels.count() == 3
        assert len(set(labels.values_list("annotator_id", flat=True))) == 3


def test_items_are_created_with_k_slots(catalogue):
    campaign = pairwise_campaign(catalogue, k=3)
    assert ItemSlot.objects.filter(item__campaign=campaign).count() == 3 * campaign.items.count()


def test_annotator_outside_the_campaign_is_refused(catalogue):
    insider, outsider = annotators(2)
    campaign = pairwise_campaign(catalogue, annotators=[insider])
    with pytest.raises(NotAllowed):
        services.assignment_next(campaign=campaign, annotator=outsider)


def test_campaign_open_to_all_annotators_accepts_any_annotator(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, open_to_all_annotators=True)
    assert services.assignment_next(campaign=campaign, annotator=ann) is not None


def test_a_researcher_without_the_annotator_role_is_refused(catalogue, rita):
    campaign = pairwise_campaign(catalogue, open_to_all_annotators=True)
    with pytest.raises(NotAllowed):
        services.assignment_next(campaign=campaign, annotator=rita)


def test_a_draft_campaign_hands_out_nothing(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann], status=Campaign.Status.DRAFT)
    with pytest.raises(CampaignNotOpen):
        services.assignment_next(campaign=campaign, annotator=ann)


def test_a_campaign_without_items_cannot_open(catalogue):
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue, status=Campaign.Status.DRAFT)
    with pytest.raises(CampaignNotOpen):
        services.campaign_status_set(campaign=campaign, status=Campaign.Status.OPEN)


# ---------------------------------------------------------------- expiry and skip


def test_assignment_expires_after_the_configured_time(catalogue, settings):
    settings.ATELIER_ASSIGNMENT_TTL_SECONDS = 600
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    now = timezone.now()
    assignment = services.assignment_next(campaign=campaign, annotator=ann, now=now)
    assert assignment.expires_at == now + timedelta(seconds=600)


def test_campaign_ttl_overrides_the_setting(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann], assignment_ttl_seconds=60)
    now = timezone.now()
    assert services.assignment_next(campaign=campaign, annotator=ann, now=now).expires_at == now + timedelta(seconds=60)


def test_expired_assignment_returns_its_slot_to_the_pool():
    catalogue = Catalogue(n_tasks=1)
    users = annotators(2)
    campaign = pairwise_campaign(catalogue, n_items=1, k=1, annotators=users)
    now = timezone.now()
    first = services.assignment_next(campaign=campaign, annotator=users[0], now=now)
    assert services.assignment_next(campaign=campaign, annotator=users[1], now=now) is None
    later = now + timedelta(hours=2)
    second = services.assignment_next(campaign=campaign, annotator=users[1], now=later)
    assert second is not None and second.item_id == first.item_id
    first.refresh_from_db()
    assert first.status == Assignment.Status.EXPIRED


def test_late_submission_is_saved_while_the_assignment_is_still_held():
    catalogue = Catalogue(n_tasks=1)
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, n_items=1, k=1, annotators=[ann])
    now = timezone.now()
    assignment = services.assignment_next(campaign=campaign, annotator=ann, now=now)
    submission = services.label_submit(token=assignment.token, annotator=ann, idempotency_key=uuid.uuid4(),
                                       answer={"choice": "A"}, now=now + timedelta(hours=2))
    assert submission.label.assignment.status == Assignment.Status.SUBMITTED


def test_late_submission_is_refused_once_the_assignment_went_back_to_the_queue():
    catalogue = Catalogue(n_tasks=1)
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, n_items=1, k=1, annotators=[ann])
    now = timezone.now()
    assignment = services.assignment_next(campaign=campaign, annotator=ann, now=now)
    services.assignments_expire(campaign=campaign, now=now + timedelta(hours=2))
    with pytest.raises(AssignmentClosed, match="went back to the queue"):
        services.label_submit(token=assignment.token, annotator=ann, idempotency_key=uuid.uuid4(),
                              answer={"choice": "A"}, now=now + timedelta(hours=2))
    assert PairwiseLabel.objects.count() == 0


def test_late_submission_is_refused_once_the_slot_went_to_someone_else():
    catalogue = Catalogue(n_tasks=1)
    users = annotators(2)
    campaign = pairwise_campaign(catalogue, n_items=1, k=1, annotators=users)
    now = timezone.now()
    late = services.assignment_next(campaign=campaign, annotator=users[0], now=now)
    services.assignment_next(campaign=campaign, annotator=users[1], now=now + timedelta(hours=2))
    with pytest.raises(AssignmentClosed, match="went back to the queue"):
        services.label_submit(token=late.token, annotator=users[0], idempotency_key=uuid.uuid4(),
                              answer={"choice": "A"}, now=now + timedelta(hours=2))
    assert PairwiseLabel.objects.count() == 0


def _late_walk_campaign(users):
    """k = 1, a third of the items gold, gold due every other item."""
    campaign = pairwise_campaign(Catalogue(n_tasks=3), annotators=list(users), k=1, gold_rate=0.5)
    for item in campaign.items.order_by("position")[:3]:
        item_creation.item_gold_set(item=item, answer="A")
    return campaign


def _held_until(campaign, user, gold: bool) -> Assignment:
    """``user`` labels what they are given until they hold a gold (or a regular) item; that assignment."""
    for _ in range(12):
        assignment = services.assignment_next(campaign=campaign, annotator=user)
        if assignment.item.is_gold == gold:
            return assignment
        services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(),
                              answer={"choice": "A"})
    raise AssertionError(f"{user} was never handed a {'gold' if gold else 'regular'} item")


def _overdue(assignment: Assignment) -> None:
    now = timezone.now()
    Assignment.objects.filter(pk=assignment.pk).update(created_at=now - timedelta(hours=1),
                                                       expires_at=now - timedelta(seconds=1))


def _annotator_client(user) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


SUBMIT_URLS = {"page": "/annotate/api/assignments/{}/submit", "v1": "/api/v1/annotate/assignments/{}/submit"}


@pytest.mark.parametrize("api", sorted(SUBMIT_URLS))
def test_a_late_answer_to_a_gold_item_is_refused_as_one_to_a_regular_item_is(api):
    ann, bob = annotators(2)
    campaign = _late_walk_campaign([ann, bob])
    regular = _held_until(campaign, ann, gold=False)
    _overdue(regular)
    services.assignments_expire(campaign=campaign)  # back to the queue, where Bob takes it (k = 1: its one slot)
    bob_took = _held_until(campaign, bob, gold=False)
    while bob_took.item_id != regular.item_id:
        services.label_submit(token=bob_took.token, annotator=bob, idempotency_key=uuid.uuid4(), answer={"choice": "A"})
        bob_took = _held_until(campaign, bob, gold=False)
    gold = _held_until(campaign, ann, gold=True)
    _overdue(gold)
    services.assignments_expire(campaign=campaign)  # back to the queue: gold has no slot, nobody can take it
    client = _annotator_client(ann)
    answers = {}
    for name, assignment in (("regular", regular), ("gold", gold)):
        late = client.post(SUBMIT_URLS[api].format(assignment.token),
                           {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}},
                           content_type="application/json")
        answers[name] = (late.status_code, late.json())
    assert answers["regular"][0] == 409
    assert answers["gold"] == answers["regular"]  # a refusal says nothing of which items were gold
    assert not PairwiseLabel.objects.filter(assignment=gold).exists()  # the gold score did not move


@pytest.mark.parametrize("api", sorted(SUBMIT_URLS))
def test_an_overdue_answer_still_held_is_saved_alike_for_gold_and_regular_items(api):
    (ann,) = annotators(1)
    campaign = _late_walk_campaign([ann])
    client = _annotator_client(ann)
    for gold in (False, True):
        assignment = _held_until(campaign, ann, gold=gold)
        _overdue(assignment)  # not swept: still the annotator's
        body = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "B"}}
        late = client.post(SUBMIT_URLS[api].format(assignment.token), body, content_type="application/json")
        assert (late.status_code, late.json()["replayed"]) == (201, False), late.json()
        services.assignments_expire(campaign=campaign)
        again = client.post(SUBMIT_URLS[api].format(assignment.token), body, content_type="application/json")
        assert (again.status_code, again.json()["replayed"]) == (200, True)  # a re-send replays, even after the sweep


def test_skip_is_recorded_and_the_item_is_not_given_again(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    assignment = services.assignment_next(campaign=campaign, annotator=ann)
    services.assignment_skip(token=assignment.token, annotator=ann, reason="cannot judge")
    assignment.refresh_from_db()
    assert (assignment.status, assignment.skip_reason) == (Assignment.Status.SKIPPED, "cannot judge")
    following = services.assignment_next(campaign=campaign, annotator=ann)
    assert following.item_id != assignment.item_id


def test_a_skipped_slot_returns_to_the_pool_for_others():
    catalogue = Catalogue(n_tasks=1)
    users = annotators(2)
    campaign = pairwise_campaign(catalogue, n_items=1, k=1, annotators=users)
    skipped = services.assignment_next(campaign=campaign, annotator=users[0])
    services.assignment_skip(token=skipped.token, annotator=users[0])
    assert services.assignment_next(campaign=campaign, annotator=users[1]).item_id == skipped.item_id


def test_a_skipped_item_cannot_be_submitted(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    assignment = services.assignment_next(campaign=campaign, annotator=ann)
    services.assignment_skip(token=assignment.token, annotator=ann)
    with pytest.raises(AssignmentClosed):
        services.label_submit(token=assignment.token, annotator=ann, idempotency_key=uuid.uuid4(), answer={"choice": "A"})


# ---------------------------------------------------------------- counterbalancing


def test_an_items_k_annotators_see_both_orders():
    catalogue = Catalogue(n_tasks=2)
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    for item in campaign.items.all():
        orders = sorted(Assignment.objects.filter(item=item).values_list("swapped", flat=True))
        assert orders in ([False, False, True], [False, True, True])


def test_a_choice_pressed_on_a_swapped_screen_is_stored_in_canonical_order(catalogue):
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    for label in PairwiseLabel.objects.all():
        assert label.shown_choice == "A"
        assert label.choice == ("B" if label.assignment.swapped else "A")


# ---------------------------------------------------------------- idempotent submission


def test_resending_a_submission_returns_the_stored_label_without_a_second_one(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    assignment = services.assignment_next(campaign=campaign, annotator=ann)
    key = uuid.uuid4()
    first = services.label_submit(token=assignment.token, annotator=ann, idempotency_key=key, answer={"choice": "tie"})
    again = services.label_submit(token=assignment.token, annotator=ann, idempotency_key=str(key), answer={"choice": "tie"})
    assert (first.replayed, again.replayed) == (False, True)
    assert again.label.pk == first.label.pk
    assert PairwiseLabel.objects.count() == 1


def test_a_different_answer_for_a_saved_item_is_a_conflict(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    assignment = services.assignment_next(campaign=campaign, annotator=ann)
    key = uuid.uuid4()
    services.label_submit(token=assignment.token, annotator=ann, idempotency_key=key, answer={"choice": "A"})
    with pytest.raises(SubmissionConflict):
        services.label_submit(token=assignment.token, annotator=ann, idempotency_key=key, answer={"choice": "B"})
    assert PairwiseLabel.objects.get().choice in ("A", "B")


def test_a_submission_key_reused_on_another_item_is_a_conflict(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    key = uuid.uuid4()
    first = services.assignment_next(campaign=campaign, annotator=ann)
    services.label_submit(token=first.token, annotator=ann, idempotency_key=key, answer={"choice": "A"})
    second = services.assignment_next(campaign=campaign, annotator=ann)
    with pytest.raises(SubmissionConflict):
        services.label_submit(token=second.token, annotator=ann, idempotency_key=key, answer={"choice": "A"})


def test_someone_elses_token_is_not_found(catalogue):
    owner, other = annotators(2)
    campaign = pairwise_campaign(catalogue, annotators=[owner, other])
    assignment = services.assignment_next(campaign=campaign, annotator=owner)
    with pytest.raises(NotFound):
        services.label_submit(token=assignment.token, annotator=other, idempotency_key=uuid.uuid4(), answer={"choice": "A"})


def test_label_records_time_on_item_and_the_pinned_version(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    assignment, submission = take_and_label(campaign, ann, {"choice": "A"}, time_on_item_ms=4200)
    label = submission.label
    assert label.time_on_item_ms == 4200
    assert label.content_hash == assignment.item.content_hash
    assert label.task_set_version == catalogue.task_set.version


# ---------------------------------------------------------------- content staleness


def test_changed_response_text_marks_earlier_labels_stale(catalogue):
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users, n_items=1)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    item = campaign.items.get()
    item.response_a.core_idea = "A rewritten idea"
    item.response_a.save()
    changed = item_creation.campaign_content_refresh(campaign=campaign)
    assert [i.pk for i in changed] == [item.pk]
    assert set(PairwiseLabel.objects.values_list("is_stale", flat=True)) == {True}


def test_stale_labels_free_their_slots_for_the_new_content(catalogue):
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users, n_items=1)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    item = campaign.items.get()
    item.response_b.core_idea = "Another idea"
    item.response_b.save()
    item_creation.campaign_content_refresh(campaign=campaign)
    again = services.assignment_next(campaign=campaign, annotator=users[0])
    assert again.item_id == item.pk and again.content_hash != PairwiseLabel.objects.first().content_hash


def test_a_submission_for_content_that_changed_meanwhile_is_refused(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann], n_items=1)
    assignment = services.assignment_next(campaign=campaign, annotator=ann)
    response = assignment.item.response_a
    response.core_idea = "Changed while the annotator was reading"
    response.save()
    with pytest.raises(AssignmentClosed, match="changed"):
        services.label_submit(token=assignment.token, annotator=ann, idempotency_key=uuid.uuid4(), answer={"choice": "A"})
    assert PairwiseLabel.objects.count() == 0


def test_reimporting_an_item_with_new_checklist_cues_marks_its_labels_stale(catalogue):
    users = annotators(3)
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue, annotators=users)
    task = catalogue.tasks[0]

    def jsonl(cue):
        return json.dumps({"key": "p1", "task_id": task.external_id, "dimension": "novelty",
                           "a": {"model": catalogue.models[0].display_name}, "b": {"model": catalogue.models[1].display_name},
                           "checklist": [cue]}).encode()

    item_creation.items_import_jsonl(campaign=campaign, name="items.jsonl", raw=jsonl("Avoids plant imagery?"))
    fill(campaign, users, lambda u, a: {"choice": "B"})
    item_creation.items_import_jsonl(campaign=campaign, name="items.jsonl", raw=jsonl("Avoids clock imagery?"), replace_changed=True)
    assert PairwiseLabel.objects.filter(is_stale=True).count() == 3


def test_replaced_image_bytes_mark_faithfulness_labels_stale(catalogue, media_root):
    users = annotators(3)
    campaign, renders = faithfulness_campaign(Catalogue(n_tasks=1, models=("Zephyr-Secret-Alpha", "Quasar-Hidden-Beta")), annotators=users)
    fill(campaign, users, lambda u, a: {"score": 5})
    render = renders[0]
    with open(render.image.path, "ab") as handle:
        handle.write(b"\x00")
    changed = item_creation.campaign_content_refresh(campaign=campaign)
    assert len(changed) == 1
    assert campaign.items.get(render_a=render).faithfulnesslabels.filter(is_stale=True).count() == 3


# ---------------------------------------------------------------- gold


def test_gold_items_are_mixed_in_at_the_set_rate(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=4), annotators=[ann], gold_rate=0.25)
    for item in campaign.items.order_by("position")[:3]:
        item_creation.item_gold_set(item=item, answer="A")
    fill(campaign, [ann], lambda u, a: {"choice": "A"})
    served = list(Assignment.objects.filter(annotator=ann).order_by("created_at", "pk").values_list("item__is_gold", flat=True))
    # a quarter of the items are gold, within one item at every point, at positions drawn for this
    # annotator (tests/annotation/test_gold_blindness.py), while unseen gold items remain
    assert sum(served) == 3 and len(served) == 12
    for n in range(1, len(served) + 1):
        if sum(served[:n - 1]) < 3:
            assert abs(sum(served[:n]) - n * 0.25) < 1, (n, served)


def test_a_gold_item_is_shown_to_every_annotator_not_only_k(catalogue):
    users = annotators(4)
    campaign = pairwise_campaign(catalogue, annotators=users, k=2, gold_rate=0.5)
    gold = campaign.items.order_by("position").first()
    item_creation.item_gold_set(item=gold, answer="B")
    fill_round_robin(campaign, users, lambda u, a: {"choice": "B"})
    assert PairwiseLabel.objects.filter(item=gold).count() == 4


def test_a_gold_answer_must_be_a_valid_label(catalogue):
    campaign = pairwise_campaign(catalogue)
    with pytest.raises(ItemsInvalid, match="expected one of"):
        item_creation.item_gold_set(item=campaign.items.first(), answer="maybe")


# ---------------------------------------------------------------- adjudication


def _no_majority_item(catalogue):
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users, n_items=1)
    answers = iter([{"choice": "A"}, {"choice": "B"}, {"choice": "tie"}])
    for user in users:
        assignment = services.assignment_next(campaign=campaign, annotator=user)
        shown = next(answers)
        # press so that the canonical choices are A, B, tie whatever the shown order
        choice = shown["choice"] if not assignment.swapped or shown["choice"] == "tie" else {"A": "B", "B": "A"}[shown["choice"]]
        services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(), answer={"choice": choice})
    return campaign.items.get()


def test_an_item_without_a_majority_can_be_sent_to_adjudication_and_resolved(catalogue, rita):
    item = _no_majority_item(catalogue)
    adjudication = services.adjudication_request(item=item, researcher=rita, note="split three ways")
    services.adjudication_resolve(adjudication=adjudication, researcher=rita, outcome="B", note="B keeps the brief")
    adjudication.refresh_from_db()
    assert (adjudication.outcome, adjudication.resolved_by) == ("B", rita)


def test_an_item_with_a_majority_is_not_adjudicated(catalogue, rita):
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users, n_items=1)
    fill(campaign, users, lambda u, a: {"choice": "tie"})
    with pytest.raises(ItemsInvalid, match="majority"):
        services.adjudication_request(item=campaign.items.get(), researcher=rita)


def test_an_adjudication_outcome_must_be_a_category(catalogue, rita):
    item = _no_majority_item(catalogue)
    adjudication = services.adjudication_request(item=item, researcher=rita)
    with pytest.raises(ItemsInvalid):
        services.adjudication_resolve(adjudication=adjudication, researcher=rita, outcome="C")


def test_an_annotator_cannot_adjudicate(catalogue):
    item = _no_majority_item(catalogue)
    with pytest.raises(NotAllowed):
        services.adjudication_request(item=item, researcher=UserFactory(username="plain", role="annotator"))


# ---------------------------------------------------------------- item creation and import


def test_an_item_payload_naming_a_model_is_refused(catalogue):
    campaign = campaign_for(CampaignKind.TIG_AUDIT, catalogue)
    spec = item_creation.ItemSpec(task=catalogue.tasks[0], payload={
        "checklist_text": "Avoid lanterns?", "cluster_summary": "lanterns, as Zephyr-Secret-Alpha put it",
        "provenance": {"models_sharing": 2}})
    with pytest.raises(ItemsInvalid, match="names a model"):
        item_creation.items_create(campaign=campaign, specs=[spec])


def test_tig_provenance_must_be_counts_not_identities(catalogue):
    campaign = campaign_for(CampaignKind.TIG_AUDIT, catalogue)
    spec = item_creation.ItemSpec(task=catalogue.tasks[0], payload={
        "checklist_text": "Avoid lanterns?", "cluster_summary": "lanterns", "provenance": {"models": ["m1", "m2"]}})
    with pytest.raises(ItemsInvalid, match="counts only"):
        item_creation.items_create(campaign=campaign, specs=[spec])


def test_a_pair_of_two_responses_of_one_model_is_refused(catalogue):
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue)
    task = catalogue.tasks[0]
    from tests.factories import ResponseFactory

    other_sample = ResponseFactory(task=task, subject_model=catalogue.models[0], sample=2)
    spec = item_creation.ItemSpec(task=task, dimension="usefulness", response_a=catalogue.response(task, 0), response_b=other_sample)
    with pytest.raises(ItemsInvalid, match="same model"):
        item_creation.items_create(campaign=campaign, specs=[spec])


def test_jsonl_import_reports_every_bad_line_with_its_field_and_writes_nothing(catalogue):
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue)
    task = catalogue.tasks[0].external_id
    good = {"task_id": task, "dimension": "usefulness", "a": {"model": "Zephyr-Secret-Alpha"}, "b": {"model": "Quasar-Hidden-Beta"}}
    lines = [good, {**good, "task_id": "nope"}, {**good, "b": {"model": "Unknown"}}, {**good, "dimension": "beauty"}]
    with pytest.raises(ItemsInvalid) as info:
        item_creation.items_import_jsonl(campaign=campaign, name="x.jsonl", raw="\n".join(json.dumps(x) for x in lines).encode())
    fields = {(line, field) for line, field, _ in info.value.errors}
    assert {(2, "task_id"), (3, "b")} <= fields
    assert campaign.items.count() == 0


def test_jsonl_import_shows_only_an_excerpt_of_a_refused_gold_answer(catalogue):
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue)
    huge = "x" * 5_000_000
    record = {"task_id": catalogue.tasks[0].external_id, "dimension": "usefulness", "a": {"model": "Zephyr-Secret-Alpha"},
              "b": {"model": "Quasar-Hidden-Beta"}, "gold": huge}
    with pytest.raises(ItemsInvalid) as info:
        item_creation.items_import_jsonl(campaign=campaign, name="x.jsonl", raw=json.dumps(record).encode())
    ((line, field, message),) = info.value.errors
    assert (line, field) == (1, "gold")
    assert message == f"expected one of A, B, tie, got '{'x' * 79}… (5,000,002 characters)"


def test_jsonl_import_is_idempotent(catalogue):
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue)
    raw = json.dumps({"task_id": catalogue.tasks[0].external_id, "dimension": "expressiveness",
                      "a": {"model": "Zephyr-Secret-Alpha"}, "b": {"model": "Orion-Masked-Delta", "sample": 1}}).encode()
    created, _ = item_creation.items_import_jsonl(campaign=campaign, name="x.jsonl", raw=raw)
    again, _ = item_creation.items_import_jsonl(campaign=campaign, name="x.jsonl", raw=raw)
    assert (len(created), len(again), campaign.items.count()) == (1, 0, 1)


def test_image_pairs_need_renders_that_passed_the_faithfulness_gate(media_root):
    catalogue = Catalogue(n_tasks=1)
    users = annotators(3)
    faith, renders = faithfulness_campaign(catalogue, annotators=users)
    # renders of models 0 and 1 pass (score 5), the others fail (score 2)
    passing_ids = {renders[0].pk, renders[1].pk}
    fill(faith, users, lambda u, a: {"score": 5 if a.item.render_a_id in passing_ids else 2})
    images = campaign_for(CampaignKind.IMAGE_PREFERENCE, catalogue)
    created = item_creation.items_create_image_pairs(campaign=images, pairs=[(renders[0], renders[1])])
    assert len(created) == 1
    with pytest.raises(ItemsInvalid, match="faithfulness gate"):
        item_creation.items_create_image_pairs(campaign=images, pairs=[(renders[0], renders[2])])


def test_validation_pairs_are_sampled_per_task_and_dimension(catalogue):
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue)
    ranking = {m.pk: float(4 - i) for i, m in enumerate(catalogue.models)}
    created = item_creation.items_create_validation_pairs(
        campaign=campaign, dimensions=["usefulness", "novelty"], rankings={"usefulness": ranking}, pairs_per_task=3,
        rng=random.Random(0),
    )
    assert len(created) == 2 * 2 * 3
    strata = set(campaign.items.filter(dimension="usefulness").values_list("sampling_stratum", flat=True))
    assert "top_bottom" in strata
    assert set(campaign.items.filter(dimension="novelty").values_list("sampling_stratum", flat=True)) == {"random_order"}


# ---------------------------------------------------------------- database invariants


def test_the_database_refuses_a_second_live_assignment_on_one_slot(catalogue):
    owner, intruder = annotators(2)
    campaign = pairwise_campaign(catalogue, annotators=[owner, intruder], n_items=1)
    taken = services.assignment_next(campaign=campaign, annotator=owner)
    now = timezone.now()
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(campaign=campaign, item=taken.item, slot=taken.slot, annotator=intruder, token="x" * 32,
                                  swapped=False, content_hash=taken.content_hash, task_set_version="1",
                                  created_at=now, expires_at=now + timedelta(minutes=5))


def test_the_database_refuses_a_choice_that_does_not_follow_the_swap(catalogue):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[ann])
    _, submission = take_and_label(campaign, ann, {"choice": "A"})
    label = submission.label
    label.choice = "B" if label.choice == "A" else "A"
    with pytest.raises(IntegrityError), transaction.atomic():
        label.save()


def test_the_database_refuses_a_pass_with_a_score_below_four(media_root):
    (ann,) = annotators(1)
    campaign, _ = faithfulness_campaign(Catalogue(n_tasks=1, models=("Zephyr-Secret-Alpha",)), annotators=[ann])
    _, submission = take_and_label(campaign, ann, {"score": 4})
    label = submission.label
    label.score = 2
    with pytest.raises(IntegrityError), transaction.atomic():
        label.save()


def test_the_database_refuses_a_revise_action_without_a_note(catalogue):
    (ann,) = annotators(1)
    campaign = tig_campaign(catalogue, annotators=[ann])
    criteria = {c: "partial" for c in ("cluster_validity", "visual_specificity", "faithfulness", "non_leakage", "usefulness_for_judging")}
    _, submission = take_and_label(campaign, ann, {"criteria": criteria, "overall_action": "revise", "revision_note": "too vague"})
    label = submission.label
    label.revision_note = ""
    with pytest.raises(IntegrityError), transaction.atomic():
        label.save()


def test_placeholder_renders_are_labelled_and_named_opaquely(media_root):
    catalogue = Catalogue(n_tasks=1, models=("Zephyr-Secret-Alpha",))
    response = catalogue.response(catalogue.tasks[0], 0)
    render = services.render_placeholder_create(response=response)
    assert (render.is_placeholder, render.renderer) == (True, "schematic-demo")
    assert "Zephyr" not in render.image.name and catalogue.tasks[0].external_id not in render.image.name
    assert services.render_placeholder_create(response=response).pk == render.pk

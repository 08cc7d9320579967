"""The free-slot queue: every slot's ``is_free`` flag equals "no live assignment holds it" after each
way a slot is taken or freed (next item, submission, late submission, skip, own expiry, the sweep,
content staleness, gold), and the queue hands slots out in item order."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotation import item_creation, services
from annotation.errors import AssignmentClosed
from annotation.models import Assignment, ItemSlot
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators, fill

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue():
    return Catalogue(n_tasks=2)


def flags_disagreeing(campaign) -> list[int]:
    """Slots whose stored flag differs from what the assignments say."""
    live = Assignment.objects.filter(slot=OuterRef("pk"), status__in=Assignment.LIVE)
    rows = ItemSlot.objects.filter(campaign=campaign).annotate(truly_free=~Exists(live))
    return [slot.pk for slot in rows if slot.is_free != slot.truly_free]


def submit(assignment, user, now=None):
    return services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(),
                                 answer={"choice": "A"}, now=now)


def test_taking_and_submitting_keep_every_flag_true_to_the_assignments(catalogue):
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users)
    taken = services.assignment_next(campaign=campaign, annotator=users[0])
    assert not ItemSlot.objects.get(pk=taken.slot_id).is_free
    assert flags_disagreeing(campaign) == []
    fill(campaign, users, lambda u, a: {"choice": "B"})
    assert flags_disagreeing(campaign) == []
    assert not ItemSlot.objects.filter(campaign=campaign, is_free=True).exists()


def test_a_skip_frees_the_slot_and_the_skipper_never_gets_the_item_again(catalogue):
    alice, bob = annotators(2)
    campaign = pairwise_campaign(catalogue, n_items=1, k=1, annotators=[alice, bob])
    skipped = services.assignment_next(campaign=campaign, annotator=alice)
    services.assignment_skip(token=skipped.token, annotator=alice)
    assert ItemSlot.objects.get(pk=skipped.slot_id).is_free
    assert services.assignment_next(campaign=campaign, annotator=alice) is None
    assert services.assignment_next(campaign=campaign, annotator=bob).slot_id == skipped.slot_id
    assert flags_disagreeing(campaign) == []


def test_the_sweep_and_an_own_overdue_assignment_free_their_slots(catalogue):
    alice, bob = annotators(2)
    campaign = pairwise_campaign(catalogue, n_items=2, k=1, annotators=[alice, bob], assignment_ttl_seconds=60)
    now = timezone.now()
    first = services.assignment_next(campaign=campaign, annotator=alice, now=now)
    second = services.assignment_next(campaign=campaign, annotator=bob, now=now)
    later = now + timedelta(seconds=61)
    assert services.assignments_expire(campaign=campaign, now=later) == 2
    assert ItemSlot.objects.filter(pk__in=[first.slot_id, second.slot_id], is_free=True).count() == 2
    again = services.assignment_next(campaign=campaign, annotator=alice, now=later)
    much_later = later + timedelta(seconds=61)
    services.assignment_next(campaign=campaign, annotator=alice, now=much_later)  # her own overdue one expires
    again.refresh_from_db()
    assert again.status == Assignment.Status.EXPIRED
    assert flags_disagreeing(campaign) == []


def test_a_late_submission_after_the_sweep_leaves_its_freed_slot_in_the_queue(catalogue):
    # a late answer is refused once its assignment went back to the queue (gold or not: annotation.services),
    # so the slot the sweep freed stays free and its flag true
    (alice,) = annotators(1)
    campaign = pairwise_campaign(catalogue, n_items=1, k=1, annotators=[alice], assignment_ttl_seconds=60)
    now = timezone.now()
    assignment = services.assignment_next(campaign=campaign, annotator=alice, now=now)
    services.assignments_expire(campaign=campaign, now=now + timedelta(seconds=61))
    assert ItemSlot.objects.get(pk=assignment.slot_id).is_free
    with pytest.raises(AssignmentClosed):
        submit(assignment, alice, now=now + timedelta(seconds=62))
    assert ItemSlot.objects.get(pk=assignment.slot_id).is_free
    assert flags_disagreeing(campaign) == []


def test_stale_labels_put_their_slots_back_in_the_queue(catalogue):
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users, n_items=1)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    item = campaign.items.get()
    item.response_a.core_idea = "A rewritten idea"
    item.response_a.save()
    item_creation.campaign_content_refresh(campaign=campaign)
    assert ItemSlot.objects.filter(item=item, is_free=True).count() == campaign.k
    assert flags_disagreeing(campaign) == []


def test_a_wrong_flag_is_repaired_when_the_unique_index_refuses_the_slot(catalogue):
    alice, bob = annotators(2)
    campaign = pairwise_campaign(catalogue, n_items=2, k=1, annotators=[alice, bob])
    held = services.assignment_next(campaign=campaign, annotator=alice)
    ItemSlot.objects.filter(pk=held.slot_id).update(is_free=True)  # a write around the services
    given = services.assignment_next(campaign=campaign, annotator=bob)
    assert given is not None and given.slot_id != held.slot_id
    assert flags_disagreeing(campaign) == []


def test_slots_are_handed_out_in_item_order(catalogue):
    (alice,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[alice], k=1)
    order = []
    while (assignment := services.assignment_next(campaign=campaign, annotator=alice)) is not None:
        order.append(assignment.item.position)
        submit(assignment, alice)
    assert order == sorted(order) and len(order) == campaign.items.count()


def test_gold_items_leave_the_queue_and_come_back_when_unmarked(catalogue):
    (alice,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[alice], n_items=2)
    item = campaign.items.order_by("position").first()
    item_creation.item_gold_set(item=item, answer="A")
    assert not ItemSlot.objects.filter(item=item).exists()
    item_creation.item_gold_set(item=item, answer=None)
    slots = ItemSlot.objects.filter(item=item)
    assert slots.count() == campaign.k and all(s.is_free and s.campaign_id == campaign.pk for s in slots)


def test_a_held_assignment_is_returned_and_no_slot_is_taken_beside_it(catalogue):
    from annotation.slot_queue import active_or_free_slot_take

    alice = annotators(1)[0]
    campaign = pairwise_campaign(catalogue, annotators=[alice])
    held = services.assignment_next(campaign=campaign, annotator=alice)
    free_before = ItemSlot.objects.filter(campaign=campaign, is_free=True).count()
    found, slot = active_or_free_slot_take(campaign_id=campaign.pk, annotator_id=alice.pk)
    assert (found.pk, found.slot_id, slot) == (held.pk, held.slot_id, None)
    assert ItemSlot.objects.filter(campaign=campaign, is_free=True).count() == free_before


def test_without_a_held_assignment_the_first_free_slot_is_taken(catalogue):
    from annotation.slot_queue import active_or_free_slot_take

    alice = annotators(1)[0]
    campaign = pairwise_campaign(catalogue, annotators=[alice])
    first = ItemSlot.objects.filter(campaign=campaign, is_free=True).order_by("position", "item_id", "index").first()
    found, slot = active_or_free_slot_take(campaign_id=campaign.pk, annotator_id=alice.pk)
    assert found is None and slot.pk == first.pk
    assert not ItemSlot.objects.get(pk=first.pk).is_free


def test_the_take_reads_the_taken_slots_item_as_the_item_read_reads_it(catalogue):
    """Asked for the item's relations, the statement that takes the slot brings its item (PostgreSQL; elsewhere
    the caller reads it), equal to :func:`annotation.request_facts.item_with_content`'s, its relations attached."""
    from django.db import connection

    from annotation.kinds import kind_for
    from annotation.request_facts import item_with_content
    from annotation.slot_queue import active_or_free_slot_take

    alice = annotators(1)[0]
    campaign = pairwise_campaign(catalogue, annotators=[alice])
    relations = kind_for(campaign.kind).content_relations
    _, slot = active_or_free_slot_take(campaign_id=campaign.pk, annotator_id=alice.pk, item_relations=relations)
    if connection.vendor != "postgresql":
        assert not ItemSlot.item.is_cached(slot)
        return
    assert ItemSlot.item.is_cached(slot) and slot.item.pk == slot.item_id
    read = item_with_content(item_id=slot.item_id, relations=relations)
    fields = [f.attname for f in type(read)._meta.concrete_fields]
    assert [getattr(slot.item, f) for f in fields] == [getattr(read, f) for f in fields]
    for relation in relations:  # attached, with the same row: no query when the kind shows it
        assert getattr(slot.item, relation).pk == getattr(read, relation).pk
        assert type(slot.item)._meta.get_field(relation).is_cached(slot.item)
    assert not slot.item._state.adding


def test_a_take_that_finds_no_slot_brings_no_item(catalogue):
    from annotation.kinds import kind_for
    from annotation.slot_queue import active_or_free_slot_take

    alice = annotators(1)[0]
    campaign = pairwise_campaign(catalogue, annotators=[alice])
    ItemSlot.objects.filter(campaign=campaign).update(is_free=False)
    found, slot = active_or_free_slot_take(campaign_id=campaign.pk, annotator_id=alice.pk,
                                           item_relations=kind_for(campaign.kind).content_relations)
    assert (found, slot) == (None, None)


def _first_eligible_free_slot(campaign, annotator) -> int | None:
    """The slot the queue must hand ``annotator`` next, computed in Python: the first free slot in queue
    order (position, item, index) whose item they have not been shown."""
    seen = set(Assignment.objects.filter(campaign=campaign, annotator=annotator, status__in=Assignment.SEEN)
               .values_list("item_id", flat=True))
    for slot in ItemSlot.objects.filter(campaign=campaign, is_free=True).order_by("position", "item_id", "index"):
        if slot.item_id not in seen:
            return slot.pk
    return None


def test_a_lone_annotator_passes_the_free_slots_of_items_already_seen_and_gets_every_item_in_queue_order():
    """With k = 3 and one annotator, every item taken leaves its two other slots free at the queue's front,
    so the take must look past more and more of them."""
    (alice,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=12), annotators=[alice], k=3)
    order = []
    while (expected := _first_eligible_free_slot(campaign, alice)) is not None:
        assignment = services.assignment_next(campaign=campaign, annotator=alice)
        assert assignment.slot_id == expected
        order.append(assignment.item.position)
        submit(assignment, alice)
    assert services.assignment_next(campaign=campaign, annotator=alice) is None
    assert order == sorted(order) and len(order) == campaign.items.count()
    assert flags_disagreeing(campaign) == []


def _after_another_campaigns_history(catalogue):
    """A new annotator, after another campaign's 3,000 returned assignments by three others (no unique index
    holds returned ones), on PostgreSQL."""
    raters, (alice,) = annotators(3, prefix="rater"), annotators(1)
    earlier = pairwise_campaign(catalogue, annotators=raters)
    item = earlier.items.first()
    now = timezone.now()
    Assignment.objects.bulk_create([
        Assignment(campaign=earlier, item=item, annotator=raters[i % 3], token=f"history-{i}", swapped=False,
                   status=Assignment.Status.EXPIRED, content_hash=item.content_hash, task_set_version="1",
                   created_at=now, expires_at=now + timedelta(minutes=30), finished_at=now)
        for i in range(3000)
    ])
    return alice


def test_among_many_annotators_each_take_is_the_first_free_slot_of_an_unseen_item():
    """Interleaved annotators, with skips putting slots back at the queue's front: each take is the slot
    computed from the assignments."""
    users = annotators(5)
    campaign = pairwise_campaign(Catalogue(n_tasks=12), annotators=users, k=3)
    now = timezone.now()
    for turn in range(90):
        user = users[(turn * 3) % len(users)]
        expected = _first_eligible_free_slot(campaign, user)
        assignment = services.assignment_next(campaign=campaign, annotator=user, now=now)
        if expected is None:
            assert assignment is None
            continue
        assert assignment.slot_id == expected, turn
        if turn % 7 == 3 or turn % 11 == 5:  # the slot goes back to the queue's front for the others
            services.assignment_skip(token=assignment.token, annotator=user)
        else:
            submit(assignment, user, now=now)
        assert flags_disagreeing(campaign) == []


def test_the_take_keeps_one_plan_for_every_request(catalogue):
    """PostgreSQL (issue 30): the slot take's prepared statement runs on the generic plan PostgreSQL keeps
    after five executions, whatever the statistics say of this campaign. Its statuses were parameters and
    its "not shown" set was asked by campaign and annotator values the planner looked at: with statistics
    taken before the campaign had assignments (as on a site whose tables were analyzed before a campaign
    opened) a plan made for those values looked cheaper than the generic one, so the take was planned
    anew at every request (and scanned the campaign's every assignment)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("prepared statements and their plans are PostgreSQL's")
    alice = _after_another_campaigns_history(catalogue)
    campaign = pairwise_campaign(Catalogue(n_tasks=4), annotators=[alice])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_assignment")  # the new campaign has no assignment yet
    for _ in range(8):
        submit(services.assignment_next(campaign=campaign, annotator=alice), alice)
    with connection.cursor() as cursor:
        cursor.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE %s",
                       ["%WITH held AS%"])
        plans = cursor.fetchall()
    assert len(plans) == 1
    generic, custom = plans[0]
    assert generic >= 3 and custom == 5


def test_the_takes_plan_asks_each_slot_read_by_the_annotators_item_index(catalogue):
    """PostgreSQL (issue 30): "not shown" is a probe of ``assignment_item_once_per_annotator`` for each slot
    the queue reads, in the generic plan the take keeps, never a read of the annotator's (or the table's)
    every assignment (the ``NOT IN`` form's plan read the annotator's shown assignments into a hash at each
    take), here with another campaign's 3,000 assignments analyzed."""
    from django.db import connection

    from annotation.slot_queue import _FIRST_FREE_SLOT_SQL

    if connection.vendor != "postgresql":
        pytest.skip("prepared statements and their plans are PostgreSQL's")
    alice = _after_another_campaigns_history(catalogue)
    campaign = pairwise_campaign(Catalogue(n_tasks=4), annotators=[alice])
    submit(services.assignment_next(campaign=campaign, annotator=alice), alice)
    statement = _FIRST_FREE_SLOT_SQL.replace("%s", "$1", 1).replace("%s", "$2", 1).replace("%s", "$3", 1)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_assignment")
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE first_free_slot (bigint, bigint, bigint) AS {statement}")
        cursor.execute("EXPLAIN (COSTS OFF) EXECUTE first_free_slot (%s, %s, %s)", [campaign.pk, campaign.pk, alice.pk])
        plan = "\n".join(line for (line,) in cursor.fetchall())
        cursor.execute("DEALLOCATE first_free_slot")
    assert "Index Scan using assignment_item_once_per_annotator on annotation_assignment" in plan, plan
    assert "SubPlan" not in plan and "Seq Scan on annotation_assignment" not in plan, plan

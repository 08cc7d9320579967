"""The periodic assignment-expiry sweep: the service, the management command, the Celery task and
its beat schedule entry."""

from __future__ import annotations

import uuid
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation import services
from annotation.errors import AssignmentClosed
from annotation.label_models import PairwiseLabel
from annotation.models import Assignment
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators

pytestmark = pytest.mark.django_db

TTL = timedelta(seconds=60)


@pytest.fixture
def catalogue():
    return Catalogue(n_tasks=1)


def _take(campaign, user, now):
    assignment = services.assignment_next(campaign=campaign, annotator=user, now=now)
    assert assignment is not None
    return assignment


def _status(assignment) -> str:
    assignment.refresh_from_db()
    return assignment.status


def test_sweep_returns_an_overdue_assignment_to_the_pool(catalogue):
    alice, bob = annotators(2)
    campaign = pairwise_campaign(catalogue, n_items=1, k=1, annotators=[alice, bob], assignment_ttl_seconds=60)
    now = timezone.now()
    overdue = _take(campaign, alice, now)
    assert services.assignment_next(campaign=campaign, annotator=bob, now=now) is None  # the one slot is held

    later = now + TTL + timedelta(seconds=1)
    assert services.assignments_expire(now=later) == 1

    overdue.refresh_from_db()
    assert (overdue.status, overdue.finished_at) == (Assignment.Status.EXPIRED, later)
    # The slot is back in the pool: the next annotator gets the same item.
    assert _take(campaign, bob, later).item_id == overdue.item_id


def test_sweep_leaves_assignments_that_are_not_yet_due(catalogue):
    (alice,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[alice], assignment_ttl_seconds=60)
    now = timezone.now()
    assignment = _take(campaign, alice, now)
    assert services.assignments_expire(now=now + TTL - timedelta(seconds=1)) == 0
    assert _status(assignment) == Assignment.Status.ACTIVE


def test_sweep_leaves_submitted_assignments_and_their_labels_untouched(catalogue):
    alice, bob = annotators(2)
    campaign = pairwise_campaign(catalogue, annotators=[alice, bob], assignment_ttl_seconds=60)
    now = timezone.now()
    done = _take(campaign, alice, now)
    services.label_submit(token=done.token, annotator=alice, idempotency_key=uuid.uuid4(), answer={"choice": "A"}, now=now)
    label_before = PairwiseLabel.objects.values().get(assignment=done)
    pending = _take(campaign, bob, now)

    assert services.assignments_expire(now=now + timedelta(hours=1)) == 1

    assert _status(done) == Assignment.Status.SUBMITTED
    assert _status(pending) == Assignment.Status.EXPIRED
    assert PairwiseLabel.objects.values().get(assignment=done) == label_before
    assert PairwiseLabel.objects.count() == 1


def test_sweep_is_idempotent(catalogue):
    alice, bob = annotators(2)
    campaign = pairwise_campaign(catalogue, annotators=[alice, bob], assignment_ttl_seconds=60)
    now = timezone.now()
    first, second = _take(campaign, alice, now), _take(campaign, bob, now)
    later = now + timedelta(hours=1)
    assert services.assignments_expire(now=later) == 2
    assert services.assignments_expire(now=later + timedelta(minutes=5)) == 0
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.finished_at == second.finished_at == later  # the second run rewrote nothing


def test_sweep_covers_every_campaign_unless_given_one(catalogue):
    (alice,) = annotators(1)
    one = pairwise_campaign(catalogue, annotators=[alice], assignment_ttl_seconds=60)
    other = pairwise_campaign(catalogue, annotators=[alice], assignment_ttl_seconds=60)
    now = timezone.now()
    in_one, in_other = _take(one, alice, now), _take(other, alice, now)
    later = now + timedelta(hours=1)
    assert services.assignments_expire(campaign=one, now=later) == 1
    assert (_status(in_one), _status(in_other)) == (Assignment.Status.EXPIRED, Assignment.Status.ACTIVE)
    assert services.assignments_expire(now=later) == 1
    assert _status(in_other) == Assignment.Status.EXPIRED


def test_sweep_works_through_more_than_one_batch(catalogue, monkeypatch):
    users = annotators(3)
    campaign = pairwise_campaign(catalogue, annotators=users, assignment_ttl_seconds=60)
    now = timezone.now()
    taken = [_take(campaign, user, now) for user in users]
    monkeypatch.setattr(services, "EXPIRE_BATCH", 2)
    assert services.assignments_expire(now=now + timedelta(hours=1)) == 3
    assert {_status(a) for a in taken} == {Assignment.Status.EXPIRED}


def test_a_late_submission_after_the_sweep_is_refused_and_writes_nothing(catalogue):
    (alice,) = annotators(1)
    campaign = pairwise_campaign(catalogue, n_items=1, k=1, annotators=[alice], assignment_ttl_seconds=60)
    now = timezone.now()
    assignment = _take(campaign, alice, now)
    later = now + timedelta(hours=1)
    services.assignments_expire(now=later)
    with pytest.raises(AssignmentClosed, match="went back to the queue"):
        services.label_submit(token=assignment.token, annotator=alice, idempotency_key=uuid.uuid4(),
                              answer={"choice": "B"}, now=later)
    assert _status(assignment) == Assignment.Status.EXPIRED and not PairwiseLabel.objects.exists()


# ---------------------------------------------------------------- the command


def test_the_command_expires_overdue_assignments_and_says_how_many(catalogue, settings):
    settings.ATELIER_ASSIGNMENT_TTL_SECONDS = 60
    (alice,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[alice])
    assignment = _take(campaign, alice, timezone.now() - timedelta(hours=1))  # handed out an hour ago
    out = StringIO()
    call_command("expire_assignments", stdout=out)
    assert "1 overdue assignment(s) returned to the pool (all campaigns)" in out.getvalue()
    assert _status(assignment) == Assignment.Status.EXPIRED
    out = StringIO()
    call_command("expire_assignments", "--campaign", str(campaign.pk), stdout=out)
    assert out.getvalue().startswith("0 overdue assignment(s)")


def test_the_command_refuses_an_unknown_campaign():
    with pytest.raises(CommandError, match="no campaign with id 999999"):
        call_command("expire_assignments", "--campaign", "999999")


# ---------------------------------------------------------------- the task and its schedule


def test_the_task_is_registered_and_calls_the_sweep(catalogue):
    from annotation.tasks import expire_assignments
    from evalsite.celery import app

    app.loader.import_default_modules()
    assert "annotation.expire_assignments" in app.tasks
    assert expire_assignments.name == "annotation.expire_assignments"
    (alice,) = annotators(1)
    campaign = pairwise_campaign(catalogue, annotators=[alice], assignment_ttl_seconds=60)
    assignment = _take(campaign, alice, timezone.now() - timedelta(hours=1))
    assert expire_assignments.delay().get() == 1  # eager without a broker (CELERY_BROKER_URL unset)
    assert _status(assignment) == Assignment.Status.EXPIRED
    assert expire_assignments.delay().get() == 0


def test_the_sweep_is_in_the_beat_schedule_at_the_configured_interval(settings):
    from evalsite.celery import app

    entry = app.conf.beat_schedule["annotation.expire_assignments"]
    assert entry["task"] == "annotation.expire_assignments"
    assert entry["schedule"] == float(settings.ATELIER_ASSIGNMENT_SWEEP_SECONDS)

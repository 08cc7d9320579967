"""Concurrency on PostgreSQL: many threads asking for and submitting items at the same instant,
with double clicks (two threads per annotator), lost responses (re-sent submissions) and retries.
Every item must end with exactly k labels from k distinct annotators, none lost, none doubled."""

from __future__ import annotations

import threading
import uuid
from collections import Counter

import pytest
from django.db import OperationalError, close_old_connections, connection

from annotation import services
from annotation.errors import AssignmentClosed, Busy, SubmissionConflict
from annotation.label_models import PairwiseLabel
from annotation.models import Assignment
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.conftest import require_service

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

N_ANNOTATORS = 9
THREADS_PER_ANNOTATOR = 2  # a double click: two requests of one person racing each other
KEY_NAMESPACE = uuid.UUID("6f1c1a8e-7f5b-4c1e-9a56-1d2f3a4b5c6d")


def retrying(call, attempts=8):
    """What the page does: retry on a busy server or a dropped connection."""
    for attempt in range(attempts):
        try:
            return call()
        except (Busy, OperationalError):
            if attempt == attempts - 1:
                raise
            close_old_connections()


def test_many_annotators_at_once_leave_every_item_with_exactly_k_labels():
    require_service("postgres")
    users = annotators(N_ANNOTATORS, prefix="racer")
    campaign = pairwise_campaign(Catalogue(n_tasks=5), annotators=users)  # 15 items x k=3 = 45 labels
    n_items = campaign.items.count()
    barrier = threading.Barrier(N_ANNOTATORS * THREADS_PER_ANNOTATOR)
    outcomes: Counter = Counter()
    errors: list[BaseException] = []
    lock = threading.Lock()

    def work(user):
        try:
            barrier.wait(timeout=30)
            for _ in range(4 * n_items):
                assignment = retrying(lambda: services.assignment_next(campaign=campaign, annotator=user))
                if assignment is None:
                    return
                # the page's key for this item: both racing threads of one person send the same one
                key = uuid.uuid5(KEY_NAMESPACE, assignment.token)
                answer = {"choice": ("A", "B", "tie")[assignment.item_id % 3]}
                for _resend in range(2):  # the second send is a retry after a "lost" response
                    try:
                        result = retrying(lambda token=assignment.token, key=key, answer=answer: services.label_submit(
                            token=token, annotator=user, idempotency_key=key, answer=answer))
                        with lock:
                            outcomes["replayed" if result.replayed else "saved"] += 1
                    except (AssignmentClosed, SubmissionConflict) as exc:  # never expected here
                        with lock:
                            errors.append(exc)
        except BaseException as exc:  # noqa: BLE001 — reported by the main thread below
            with lock:
                errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(user,)) for user in users for _ in range(THREADS_PER_ANNOTATOR)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker hung"
    assert not errors, errors

    labels = list(PairwiseLabel.objects.filter(item__campaign=campaign).values_list("item_id", "annotator_id"))
    per_item = Counter(item for item, _ in labels)
    assert len(labels) == n_items * campaign.k
    assert all(per_item[item.pk] == campaign.k for item in campaign.items.all())
    assert len(set(labels)) == len(labels), "an annotator labelled an item twice"
    assert outcomes["saved"] == n_items * campaign.k
    assert outcomes["replayed"] >= n_items * campaign.k  # every resend replayed, nothing stored twice
    assert not Assignment.objects.filter(campaign=campaign, status=Assignment.Status.ACTIVE).exists()

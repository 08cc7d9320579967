"""Small helpers shared by the annotation tests."""

from __future__ import annotations

import uuid

from annotation import services
from tests.factories import UserFactory


def annotators(n: int, prefix: str = "ann"):
    return [UserFactory(username=f"{prefix}{i}", role="annotator") for i in range(n)]


def take_and_label(campaign, user, answer, **kwargs):
    """Ask for the next item and label it; returns (assignment, submission)."""
    assignment = services.assignment_next(campaign=campaign, annotator=user)
    assert assignment is not None, f"{user} got no item"
    submission = services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(), answer=answer, **kwargs)
    return assignment, submission


def fill(campaign, users, answer_for):
    """Every user labels until the queue is empty; ``answer_for(user, assignment)`` gives the answer."""
    for user in users:
        while True:
            assignment = services.assignment_next(campaign=campaign, annotator=user)
            if assignment is None:
                break
            services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(),
                                  answer=answer_for(user, assignment))


def fill_round_robin(campaign, users, answer_for):
    """Users take turns, one item each, until nobody gets anything."""
    active = list(users)
    while active:
        for user in list(active):
            assignment = services.assignment_next(campaign=campaign, annotator=user)
            if assignment is None:
                active.remove(user)
                continue
            services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(),
                                  answer=answer_for(user, assignment))

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


def signed_in_participant():
    """A test client of a crowd participant (Prolific) of a study on a campaign of its own, through the study's entry
    link: consented, instructions read, holding an item."""
    from django.test import Client

    from annotation import participants
    from annotation.panel_models import Participant
    from tests.annotation.factories import Catalogue, pairwise_campaign

    study = participants.panel_study_open(campaign=pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=2),
                                          panel="prolific", consent_text="You agree.")
    client = Client()
    client.get(f"/annotate/p/{study.entry_token}/",
               {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S", "SESSION_ID": "X"})
    participant = participants.participant_consent(participant=Participant.objects.get(study=study))
    participant = participants.participant_instructions_read(participant=participant)
    assert participants.participant_next(participant=participant) is not None
    return client

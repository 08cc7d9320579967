"""The training phase of a crowd campaign (issue 25): answers graded one at a time, attempts, screen-out."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from annotation import participants
from annotation.panel_models import Participant, TrainingAnswer
from tests.annotation.factories import Catalogue, pairwise_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limit():
    cache.clear()


def _in_training():
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=1, n_items=2)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", training_min_correct=2)
    first = participants.training_item_add(study=study, question="q1", choices=["A", "B"], answer="A")
    second = participants.training_item_add(study=study, question="q2", choices=["A", "B"], answer="B")
    client = Client()
    client.get(reverse("annotation:panel_entry", args=[study.entry_token]),
               {"PROLIFIC_PID": "P1", "STUDY_ID": "S", "SESSION_ID": "X"})
    entry = study.entry_token
    client.post(reverse("annotation:panel_consent", args=[entry]), {"consent": "yes"})
    client.post(reverse("annotation:panel_instructions", args=[entry]))
    return study, client, first, second


def test_the_last_answer_of_a_failed_attempt_sent_again_is_not_an_answer_of_the_next_attempt():
    """A double click (or a reload re-posting the form) on the last question of a failed attempt reached
    the server after the attempt had closed: it was recorded as the next attempt's answer, so the
    participant's last attempt started with a question already answered (wrongly, here) and they were
    screened out whatever they answered next. The form carries its attempt; a late copy is the same answer."""
    study, client, first, second = _in_training()
    training = reverse("annotation:panel_training", args=[study.entry_token])
    page = client.get(training).content.decode()
    assert 'name="attempt" value="1"' in page
    client.post(training, {"item": first.pk, "attempt": 1, "answer": "B"})
    closing = client.post(training, {"item": second.pk, "attempt": 1, "answer": "A"})
    again = client.post(training, {"item": second.pk, "attempt": 1, "answer": "A"})
    assert b'data-outcome="retry"' in closing.content
    assert again.status_code == 200 and b'data-outcome="retry"' in again.content
    assert list(TrainingAnswer.objects.filter(attempt=2)) == []
    assert 'name="attempt" value="2"' in client.get(training).content.decode()
    # the second attempt is whole: both questions, and passing it passes the training
    client.post(training, {"item": first.pk, "attempt": 2, "answer": "A"})
    passed = client.post(training, {"item": second.pk, "attempt": 2, "answer": "B"})
    assert b'data-outcome="passed"' in passed.content
    assert Participant.objects.get().state == Participant.State.WORKING


def test_an_answer_for_an_attempt_that_is_not_open_is_refused():
    study, client, first, _ = _in_training()
    training = reverse("annotation:panel_training", args=[study.entry_token])
    for attempt in (0, 2, 7):
        response = client.post(training, {"item": first.pk, "attempt": attempt, "answer": "A"})
        assert response.status_code == 400 and f"this answer is for attempt {attempt}".encode() in response.content
    assert not TrainingAnswer.objects.exists()

"""The race of a next-item in flight while a participant's return commits (PostgreSQL: real row locks)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import close_old_connections, transaction

from annotation import participants, services
from annotation.errors import NotAllowed
from annotation.models import Assignment
from annotation.panel_models import Participant
from annotation.panels import PanelEntry
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.conftest import require_service

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_a_next_item_in_flight_when_a_return_commits_hands_out_nothing():
    require_service("postgres")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=3)
    study = participants.panel_study_open(campaign=campaign, panel="prolific")
    person = participants.participant_enter(study=study, entry=PanelEntry("P1", "S", "X")).participant
    participants.participant_consent(participant=person)
    person = participants.participant_instructions_read(participant=person)
    returned, asked = threading.Event(), threading.Event()
    outcome = {}

    def researcher_returns():
        try:
            with transaction.atomic():
                participants.participant_leave(participant=person)
                returned.set()
                asked.wait(5)
                time.sleep(0.5)  # the next-item is now waiting on the participant's row lock
        finally:
            close_old_connections()

    def participant_asks():
        returned.wait(5)
        asked.set()
        try:
            outcome["handed"] = services.item_next(campaign_id=campaign.pk, annotator=person.user).assignment
        except NotAllowed as exc:
            outcome["refused"] = exc
        finally:
            close_old_connections()

    threads = [threading.Thread(target=researcher_returns), threading.Thread(target=participant_asks)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert "refused" in outcome, outcome
    assert Participant.objects.get().state == Participant.State.RETURNED
    assert not Assignment.objects.filter(annotator=person.user).exists()

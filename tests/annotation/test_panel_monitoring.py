"""The monitoring figures of a crowd campaign (annotation/panel_monitoring.py)."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import participants
from annotation.panel_monitoring import panel_monitoring
from annotation.panels import PanelEntry
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_monitoring_counts_states_throughput_median_active_time_and_projects_completion():
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=3)  # 6 slots
    study = participants.panel_study_open(campaign=campaign, panel="prolific")
    now = timezone.now()
    people = []
    for n, seconds in enumerate([4, 8, 6]):
        person = participants.participant_enter(study=study, entry=PanelEntry(f"P{n}", "S", "X"),
                                                now=now - timedelta(hours=2)).participant
        participants.participant_consent(participant=person)
        person = participants.participant_instructions_read(participant=person)
        handed = participants.participant_next(participant=person, now=now - timedelta(minutes=30))
        participants.participant_label_submit(participant=person, token=handed.assignment.token,
                                              idempotency_key=uuid.uuid4(), answer={"choice": "A"},
                                              active_ms=seconds * 1000, now=now - timedelta(minutes=29))
        people.append(person)
    participants.participant_enter(study=study, entry=PanelEntry("P9", "S", "X"), now=now)  # in training
    participants.participant_leave(participant=people[1])
    participants.participant_verdict_set(participant=people[2], verdict="rejected",
                                         researcher=UserFactory(username="rita", role="researcher"))
    figures = panel_monitoring(study=study, now=now)
    assert figures.by_state == {"training": 1, "working": 1, "completed": 0, "screened_out": 0, "returned": 1,
                                "timed_out": 0, "closed_before_work": 0, "rejected": 1}
    assert (figures.labels, figures.slots, figures.labels_last_hour) == (3, 6, 3)
    assert figures.labels_per_hour == pytest.approx(3 / 2)
    assert figures.median_active_seconds == 6.0
    assert figures.hours_to_completion == pytest.approx(1.0)  # 3 open slots at 3 labels an hour
    assert figures.projected_completion == now + timedelta(hours=1)


def test_monitoring_projects_nothing_without_recent_labels():
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=1)
    study = participants.panel_study_open(campaign=campaign, panel="prolific")
    figures = panel_monitoring(study=study)
    assert figures.projected_completion is None and figures.median_active_seconds is None
    assert figures.participants == 0


def test_the_study_page_writes_states_as_words(client):
    # The monitoring headers read "screenedout" and "timedout" (underscores cut), the participants' states
    # "timed_out".
    from annotation.panel_models import Participant
    from tests.factories import PASSWORD

    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=1)
    study = participants.panel_study_open(campaign=campaign, panel="prolific")
    person = participants.participant_enter(study=study, entry=PanelEntry("P1", "S", "X")).participant
    Participant.objects.filter(pk=person.pk).update(state=Participant.State.TIMED_OUT)
    rita = UserFactory(username="rita", role="researcher")
    client.login(username=rita.username, password=PASSWORD)
    body = client.get(f"/annotate/campaigns/{campaign.pk}/panel/").content.decode()
    assert '<th scope="col">screened out</th>' in body and '<th scope="col">timed out</th>' in body
    assert "<td>timed out</td>" in body and "timedout" not in body and "timed_out</td>" not in body

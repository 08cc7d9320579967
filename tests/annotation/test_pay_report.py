"""The pay report of a crowd campaign (issue 25): what a researcher checks before paying."""

from __future__ import annotations

import csv
import io
import uuid

import pytest
from django.core.cache import cache

from annotation import item_creation, participants
from annotation.models import Assignment
from annotation.panels import PanelEntry
from annotation.pay_report import pay_report, pay_report_csv
from tests.annotation.factories import Catalogue, pairwise_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_rate_limit():
    cache.clear()


def test_a_label_made_stale_by_an_edited_item_is_still_paid_for():
    """An item whose shown text changed after a participant labelled it (the researcher edited a response)
    turns their label stale and its assignment *stale*. The report counted submitted assignments only, so
    the participant's items and suggested bonus dropped after they were done (2 items, 1.00 → 1 item,
    0.50) while their active minutes still counted both. They gave two labels: two items are paid."""
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=1, n_items=3)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", item_quota=2, bonus_per_item="0.50")
    person = participants.participant_enter(study=study, entry=PanelEntry("P1", "S", "X")).participant
    participants.participant_consent(participant=person)
    person = participants.participant_instructions_read(participant=person)
    for _ in range(2):
        handed = participants.participant_next(participant=person)
        participants.participant_label_submit(participant=person, token=handed.assignment.token,
                                              idempotency_key=uuid.uuid4(), answer={"choice": "A"}, active_ms=3000)
    before = pay_report(study=study).rows[0]
    assert (before.state, before.items, before.suggested_bonus) == ("completed", 2, "1.00")
    edited = Assignment.objects.filter(campaign=campaign, annotator=person.user).first().item
    edited.response_a.core_idea = "A lantern, rewritten by the researcher."
    edited.response_a.save()
    assert item_creation.campaign_content_refresh(campaign=campaign)
    assert Assignment.objects.filter(annotator=person.user, status=Assignment.Status.STALE).count() == 1
    after = pay_report(study=study).rows[0]
    assert (after.items, after.suggested_bonus, after.active_ms) == (2, "1.00", before.active_ms)
    rows = list(csv.DictReader(io.StringIO(pay_report_csv(pay_report(study=study)))))
    assert (rows[0]["items"], rows[0]["suggested_bonus"]) == ("2", "1.00")


def test_a_participant_who_skipped_every_item_is_seen_as_such_in_the_report():
    """Skipping every item leaves nothing for a participant, who is then completed with the code (a skip
    is an honest "I cannot judge this"). The report showed them as any participant the study ran out
    for: completed, 0 items, the code, with nothing saying they skipped everything. Their skips are counted."""
    from django.test import Client
    from django.urls import reverse

    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=3)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", item_quota=2)
    client = Client()
    entry = study.entry_token
    client.get(reverse("annotation:panel_entry", args=[entry]), {"PROLIFIC_PID": "P1", "STUDY_ID": "S", "SESSION_ID": "X"})
    client.post(reverse("annotation:panel_consent", args=[entry]), {"consent": "yes"})
    client.post(reverse("annotation:panel_instructions", args=[entry]))
    skipped = 0
    while not (handed := client.post(reverse("annotation:panel_api_next", args=[entry]),
                                     content_type="application/json").json())["finished"]:
        client.post(reverse("annotation:panel_api_skip", args=[entry, handed["assignment"]["token"]]),
                    {"reason": "cannot tell"}, content_type="application/json")
        skipped += 1
    row = pay_report(study=study).rows[0]
    assert (row.state, row.items, row.code) == ("completed", 0, study.completion_code)
    assert row.skipped_items == skipped == 3
    rows = list(csv.DictReader(io.StringIO(pay_report_csv(pay_report(study=study)))))
    assert rows[0]["skipped_items"] == "3"


def _label_meaning(study, pid, meant):
    """``pid`` enters and labels every item they are given with the answer ``meant`` (canonical A/B,
    pressed on the side the page shows it)."""
    person = participants.participant_enter(study=study, entry=PanelEntry(pid, "S", "X")).participant
    participants.participant_consent(participant=person)
    person = participants.participant_instructions_read(participant=person)
    while (handed := participants.participant_next(participant=person)) is not None:
        shown = {"A": "B", "B": "A"}[meant] if handed.assignment.swapped else meant
        participants.participant_label_submit(participant=person, token=handed.assignment.token,
                                              idempotency_key=uuid.uuid4(), answer={"choice": shown}, active_ms=3000)
    return person


def test_a_rejected_participants_labels_leave_the_others_majority_and_come_back_when_taken_back():
    """A verdict takes a participant's labels out of every statistic (annotation/counted_labels.py), but the
    report's agreement with the majority still counted them in the other participants' majorities: P1 and
    P2 (A) against the rejected spammer P3 (B) had no strict majority to agree with. The rejected
    participant's own figures are still computed, against the counted labels."""
    from tests.factories import UserFactory

    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=3, n_items=1)
    study = participants.panel_study_open(campaign=campaign, panel="prolific")
    people = {pid: _label_meaning(study, pid, meant) for pid, meant in (("P1", "A"), ("P2", "A"), ("P3", "B"))}

    def agreement():
        rows = {row.panel_id: row for row in pay_report(study=study).rows}
        return {pid: (rows[pid].agreement_items, rows[pid].agreement_with_majority) for pid in people}

    assert agreement() == {"P1": (0, None), "P2": (0, None), "P3": (1, 0.0)}
    researcher = UserFactory(username="rita", role="researcher")
    participants.participant_verdict_set(participant=people["P3"], verdict="rejected", researcher=researcher)
    assert agreement() == {"P1": (1, 1.0), "P2": (1, 1.0), "P3": (1, 0.0)}
    participants.participant_verdict_set(participant=people["P3"], verdict="", researcher=researcher)
    assert agreement() == {"P1": (0, None), "P2": (0, None), "P3": (1, 0.0)}

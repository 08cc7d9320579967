"""Crowd campaigns (issue 25): entry through a panel's link, the participant's scope, leaving and
verdicts, through the pages and the services."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import label_export, participants, selectors
from annotation.counted_labels import counted_labels
from annotation.dashboard_cache import campaign_dashboard_cached
from annotation.models import Assignment, Item, PairwiseLabel
from annotation.panel_models import Participant
from annotation.panels import PanelEntry
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"


@pytest.fixture(autouse=True)
def _fresh_rate_limit():
    cache.clear()


def _study(*, k=2, n_items=3, **settings):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=k, n_items=n_items)
    study = participants.panel_study_open(campaign=campaign, panel=settings.pop("panel", "prolific"),
                                          consent_text="You agree.", **settings)
    return campaign, study


def _prolific(pid=PID, study="STUDY1", session="SESSION1"):
    return {"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": session}


def _entry_url(study):
    return reverse("annotation:panel_entry", args=[study.entry_token])


def _enter(study, pid) -> Participant:
    return participants.participant_enter(study=study, entry=PanelEntry(pid, "S", "X")).participant


def _to_work(participant):
    participants.participant_consent(participant=participant)
    return participants.participant_instructions_read(participant=participant)


def _label(participant, choice="A", active_ms=4000, held_seconds=10):
    """Label the next item, held for ``held_seconds`` of wall time, with the page's ``active_ms``."""
    start = timezone.now()
    handed = participants.participant_next(participant=participant, now=start)
    token = handed.assignment.token
    participants.participant_label_submit(participant=participant, token=token, idempotency_key=uuid.uuid4(),
                                          answer={"choice": choice}, active_ms=active_ms,
                                          now=start + timedelta(seconds=held_seconds))
    return handed.assignment


@pytest.mark.parametrize("params", [
    {},
    {"STUDY_ID": "S", "SESSION_ID": "X"},
    _prolific(pid="{{%PROLIFIC_PID%}}"),
    _prolific(pid="x" * 65),
    _prolific(pid="<script>alert(1)</script>"),
    _prolific(pid="../../admin"),
    _prolific(session=""),
    _prolific(study="a b"),
])
def test_missing_or_malformed_prolific_params_show_a_clear_page_and_create_nothing(params):
    _, study = _study()
    users = get_user_model().objects.count()
    response = Client().get(_entry_url(study), params)
    assert response.status_code == 400
    assert b"This study link is incomplete" in response.content
    assert Participant.objects.count() == 0
    assert get_user_model().objects.count() == users
    assert "_auth_user_id" not in Client().session


@pytest.mark.parametrize("params", [
    {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1", "turkSubmitTo": "https://evil.example.org"},
    {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1"},
    {"assignmentId": "ASG1", "hitId": "HIT1", "turkSubmitTo": "https://www.mturk.com"},
])
def test_malformed_mturk_params_create_nothing(params):
    _, study = _study(panel="mturk")
    response = Client().get(_entry_url(study), params)
    assert response.status_code == 400
    assert Participant.objects.count() == 0


def test_mturk_preview_shows_the_task_and_creates_nothing():
    _, study = _study(panel="mturk")
    response = Client().get(_entry_url(study), {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "HIT1"})
    assert response.status_code == 200
    assert b"Accept the HIT" in response.content
    assert Participant.objects.count() == 0


def test_mturk_worker_ends_with_a_form_posting_to_mturk():
    _, study = _study(panel="mturk", item_quota=1)
    client = Client()
    client.get(_entry_url(study), {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1",
                                   "turkSubmitTo": "https://workersandbox.mturk.com"})
    participant = Participant.objects.get()
    _label(_to_work(participant))
    page = client.get(reverse("annotation:panel_done", args=[study.entry_token])).content.decode()
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in page
    assert 'name="assignmentId" value="ASG1"' in page
    assert study.completion_code in page


def test_an_unknown_entry_token_is_the_same_page_whatever_it_is():
    first = Client().get(reverse("annotation:panel_entry", args=["nope"]), _prolific())
    second = Client().get(reverse("annotation:panel_entry", args=["x" * 43]), _prolific())
    assert first.status_code == second.status_code == 404
    assert Participant.objects.count() == 0


def test_the_same_panel_id_returns_to_the_same_participant_and_account():
    _, study = _study()
    Client().get(_entry_url(study), _prolific())
    Client().get(_entry_url(study), _prolific(session="SESSION2"))
    participant = Participant.objects.get()
    assert participant.panel_study_id == "STUDY1" and participant.panel_session_id == "SESSION1"
    assert not participant.user.has_usable_password()
    assert list(participant.user.groups.all()) == []


def test_entry_is_rate_limited_per_address(settings):
    settings.ATELIER_PANEL_ENTRIES_PER_MINUTE = 3
    _, study = _study()
    codes = [Client().get(_entry_url(study), _prolific(pid=f"P{i}")).status_code for i in range(5)]
    assert codes[:3] == [302, 302, 302]
    assert codes[3:] == [429, 429]
    assert Participant.objects.count() == 3


def test_a_signed_in_researcher_opening_the_link_keeps_their_session_and_creates_nothing():
    _, study = _study()
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    response = client.get(_entry_url(study), _prolific())
    assert response.status_code == 409
    assert Participant.objects.count() == 0


def test_a_participant_cannot_open_another_campaigns_pages_or_api():
    campaign, study = _study()
    other, other_study = _study()
    other.open_to_all_annotators = True
    other.save(update_fields=["open_to_all_annotators"])
    client = Client()
    client.get(_entry_url(study), _prolific())
    participant = _to_work(Participant.objects.get())
    assert client.post(reverse("annotation:panel_api_next", args=[study.entry_token]),
                       content_type="application/json").status_code == 200
    # the other campaign: its participant pages, its API, the annotators' pages and API
    assert client.get(reverse("annotation:panel_work", args=[other_study.entry_token])).status_code == 403
    assert client.post(reverse("annotation:panel_api_next", args=[other_study.entry_token]),
                       content_type="application/json").status_code == 403
    assert client.post(reverse("annotation:api_next", args=[other.pk]), content_type="application/json").status_code == 403
    assert client.get(reverse("annotation:work", args=[other.pk])).status_code == 403
    assert client.post(f"/api/v1/annotate/campaigns/{other.pk}/next", content_type="application/json").status_code == 403
    # nothing else either: the queue, the researchers' pages, the pay report
    assert client.get(reverse("annotation:queue")).status_code == 403
    assert client.get(reverse("annotation:campaign_dashboard", args=[campaign.pk])).status_code == 403
    assert client.get(reverse("annotation:panel_pay_report_json", args=[campaign.pk])).status_code == 403
    assert not Assignment.objects.filter(campaign=other).exists()
    assert participant.state == Participant.State.WORKING


def test_a_participant_in_training_gets_no_item_through_the_annotators_api():
    campaign, study = _study(training_min_correct=1)
    participants.training_item_add(study=study, question="Which is A?", choices=["A", "B"], answer="A")
    client = Client()
    client.get(_entry_url(study), _prolific())
    _to_work(Participant.objects.get())
    assert Participant.objects.get().state == Participant.State.TRAINING
    assert client.post(reverse("annotation:api_next", args=[campaign.pk]), content_type="application/json").status_code == 403
    assert not Assignment.objects.exists()


def test_a_returned_participants_held_slot_goes_to_someone_else_and_no_item_gets_more_than_k_labels():
    campaign, study = _study(k=2, n_items=2)
    first = _to_work(_enter(study, "P1"))
    held = participants.participant_next(participant=first).assignment
    first = participants.participant_leave(participant=first)
    assert first.state == Participant.State.RETURNED
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.EXPIRED
    others = [_to_work(_enter(study, f"P{i}")) for i in range(2, 6)]
    for person in others:
        while (handed := participants.participant_next(participant=person)) is not None:
            participants.participant_label_submit(participant=person, token=handed.assignment.token,
                                                  idempotency_key=uuid.uuid4(), answer={"choice": "B"}, active_ms=3000)
    got = {a.annotator_id for a in Assignment.objects.filter(item=held.item, status="submitted")}
    assert len(got) == 2 and first.user_id not in got
    for item in Item.objects.filter(campaign=campaign, is_gold=False):
        assert PairwiseLabel.objects.filter(item=item).count() <= campaign.k
    assert all(p.state == Participant.State.COMPLETED for p in Participant.objects.exclude(pk=first.pk)
               if PairwiseLabel.objects.filter(annotator=p.user).exists())


def test_a_returned_participants_labels_are_kept_and_they_cannot_go_on():
    _, study = _study()
    person = _to_work(_enter(study, "P1"))
    _label(person)
    person = participants.participant_leave(participant=person)
    assert PairwiseLabel.objects.filter(annotator=person.user).count() == 1
    rows = [json.loads(line) for line in label_export.labels_export(campaign=person.campaign, fmt="jsonl").splitlines()]
    assert [(r["panel_id"], r["participant_state"], r["counted"], r["active_ms"]) for r in rows] == [
        ("P1", "returned", True, 4000)]
    with pytest.raises(participants.ParticipantRefused):
        participants.participant_next(participant=person)


def test_a_rejected_participants_labels_leave_the_dashboard_and_come_back_when_taken_back():
    campaign, study = _study(k=2, n_items=2)
    researcher = UserFactory(username="rita", role="researcher")
    people = [_to_work(_enter(study, f"P{i}")) for i in range(2)]
    for person in people:
        for _ in range(2):
            _label(person)
    before = selectors.campaign_dashboard(campaign=campaign)
    assert before.rows[0].n_judgments == 4
    assert campaign_dashboard_cached(campaign=campaign).rows[0].n_judgments == 4
    participants.participant_verdict_set(participant=people[0], verdict="rejected", researcher=researcher)
    during = selectors.campaign_dashboard(campaign=campaign)
    assert during.rows[0].n_judgments == 2
    assert campaign_dashboard_cached(campaign=campaign).rows[0].n_judgments == 2  # the cache saw the verdict
    assert [q.annotator for q in during.quality] == [people[1].user.username]  # per-annotator quality too
    assert counted_labels(PairwiseLabel, campaign_id=campaign.pk).count() == 2
    assert PairwiseLabel.objects.filter(campaign=campaign).count() == 4  # nothing deleted
    participants.participant_verdict_set(participant=people[0], verdict="", researcher=researcher)
    after = selectors.campaign_dashboard(campaign=campaign)
    assert after.rows[0].n_judgments == 4
    assert campaign_dashboard_cached(campaign=campaign).rows[0].n_judgments == 4


def test_a_rejected_participants_open_item_goes_back_to_the_queue():
    _, study = _study()
    researcher = UserFactory(username="rita", role="researcher")
    person = _to_work(_enter(study, "P1"))
    held = participants.participant_next(participant=person).assignment
    participants.participant_verdict_set(participant=person, verdict="blocked", researcher=researcher)
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.EXPIRED
    assert held.slot.__class__.objects.get(pk=held.slot_id).is_free


def test_active_time_is_clamped_to_the_wall_time_the_item_was_held():
    _, study = _study()
    person = _to_work(_enter(study, "P1"))
    handed = participants.participant_next(participant=person)
    later = handed.assignment.created_at + timedelta(seconds=5)
    done = participants.participant_label_submit(participant=person, token=handed.assignment.token,
                                                 idempotency_key=uuid.uuid4(), answer={"choice": "A"},
                                                 active_ms=3_600_000, now=later)
    assert done.active.reported_ms == 3_600_000
    assert done.active.active_ms == done.active.wall_ms == 5000


def test_a_participant_past_the_time_limit_times_out_and_their_item_is_released():
    _, study = _study(time_limit_minutes=10)
    person = _to_work(_enter(study, "P1"))
    held = participants.participant_next(participant=person).assignment
    assert participants.participants_time_out(now=timezone.now() + timedelta(minutes=11)) == 1
    assert Participant.objects.get().state == Participant.State.TIMED_OUT
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.EXPIRED


def test_training_passes_fails_and_screens_out_after_the_attempts():
    _, study = _study(training_min_correct=2)
    a = participants.training_item_add(study=study, question="q1", choices=["A", "B"], answer="A")
    b = participants.training_item_add(study=study, question="q2", choices=["A", "B"], answer="B")
    from annotation.training import training_answer

    person = _to_work(_enter(study, "P1"))
    assert training_answer(participant=person, item_id=a.pk, answer="B").outcome == "next"
    assert training_answer(participant=person, item_id=b.pk, answer="B").outcome == "retry"
    training_answer(participant=person, item_id=a.pk, answer="B")
    assert training_answer(participant=person, item_id=b.pk, answer="A").outcome == "screened_out"
    assert Participant.objects.get().state == Participant.State.SCREENED_OUT
    second = _to_work(_enter(study, "P2"))
    training_answer(participant=second, item_id=a.pk, answer="A")
    assert training_answer(participant=second, item_id=b.pk, answer="B").outcome == "passed"
    assert Participant.objects.get(pk=second.pk).state == Participant.State.WORKING


def test_the_quota_completes_a_participant_and_the_pay_report_counts_their_items():
    from annotation.pay_report import pay_report

    _, study = _study(item_quota=2, bonus_per_item="0.50")
    person = _to_work(_enter(study, "P1"))
    _label(person, active_ms=1500)
    _label(person, active_ms=2500)
    assert Participant.objects.get().state == Participant.State.COMPLETED
    row = pay_report(study=study).rows[0]
    assert (row.items, row.code, row.suggested_bonus) == (2, study.completion_code, "1.00")
    assert row.too_fast_items == 1  # 1.5 s under the 2 s default
    assert row.active_ms == 4000 and row.active_minutes == round(4000 / 60000, 4)


def test_campaign_entry_link_prints_the_url_with_the_panels_placeholders(capsys):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    call_command("campaign_entry_link", str(campaign.pk), "--panel", "prolific")
    out = capsys.readouterr().out.strip()
    study = campaign.panel_study
    assert out.endswith(f"/annotate/p/{study.entry_token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}")


def test_researcher_api_returns_a_participant_and_reports_pay():
    campaign, study = _study()
    person = _to_work(_enter(study, "P1"))
    participants.participant_next(participant=person)
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    assert client.get(f"/api/v1/campaigns/{campaign.pk}/panel").json()["entry_link"].startswith("http")
    assert client.post(f"/api/v1/campaigns/{campaign.pk}/panel/return", {"panel_id": "nobody"},
                       content_type="application/json").status_code == 404
    assert client.post(f"/api/v1/campaigns/{campaign.pk}/panel/return", {"panel_id": "P1"},
                       content_type="application/json").json()["state"] == "returned"
    assert not Assignment.objects.filter(status="active").exists()
    report = client.get(f"/api/v1/campaigns/{campaign.pk}/panel/pay-report").json()
    assert report["participants"][0]["state"] == "returned"
    csv = client.get(f"/api/v1/campaigns/{campaign.pk}/panel/pay-report?fmt=csv").content.decode()
    assert csv.splitlines()[0].startswith("participant_pk,panel_id")
    assert client.get(f"/api/v1/campaigns/{campaign.pk}/panel/monitoring").json()["by_state"]["returned"] == 1
    verdict = client.post(f"/api/v1/campaigns/{campaign.pk}/panel/verdict", {"panel_id": "P1", "verdict": "rejected"},
                          content_type="application/json")
    assert verdict.json()["verdict"] == "rejected"
    assert client.get(f"/api/v1/campaigns/{campaign.pk}/panel/monitoring").json()["by_state"]["rejected"] == 1
    page = client.get(reverse("annotation:panel_study", args=[campaign.pk])).content.decode()
    assert study.entry_token in page and "{{%PROLIFIC_PID%}}" in page
    download = client.get(reverse("annotation:panel_pay_report_csv", args=[campaign.pk]))
    assert download["Content-Type"].startswith("text/csv") and b"P1,S,X,rejected" in download.content


def test_a_participant_at_their_quota_gets_no_item_from_the_annotators_services_and_is_completed():
    # The annotators' services (what the general API and a token's /api/v1 call; a participant's session is
    # refused those pages by the login middleware anyway): the quota holds there, not only on the study's pages.
    from annotation.errors import NotAllowed
    from annotation.services import item_next, label_submit

    campaign, study = _study(item_quota=1, n_items=3)
    person = _to_work(_enter(study, "P1"))
    token = item_next(campaign_id=campaign.pk, annotator=person.user).assignment.token
    label_submit(token=token, annotator=person.user, idempotency_key=uuid.uuid4(), answer={"choice": "A"})
    assert Participant.objects.get().state == Participant.State.WORKING  # the general submit: not yet
    assert item_next(campaign_id=campaign.pk, annotator=person.user).assignment is None
    assert Participant.objects.get().state == Participant.State.COMPLETED
    assert Assignment.objects.filter(campaign=campaign).count() == 1
    with pytest.raises(NotAllowed):  # completed: no access at all
        item_next(campaign_id=campaign.pk, annotator=person.user)


def test_a_participant_past_their_time_limit_gets_no_item_from_the_annotators_services():
    from annotation.errors import NotAllowed
    from annotation.services import item_next

    campaign, study = _study(time_limit_minutes=10)
    person = _to_work(_enter(study, "P1"))
    Participant.objects.update(deadline=timezone.now() - timedelta(seconds=1))
    with pytest.raises(NotAllowed):
        item_next(campaign_id=campaign.pk, annotator=person.user)
    assert not Assignment.objects.exists()


def test_a_block_bars_the_panel_id_from_other_campaigns_and_taking_it_back_lifts_it():
    _, study = _study()
    _, other_study = _study()
    researcher = UserFactory(username="rita", role="researcher")
    person = _to_work(_enter(study, "P1"))
    participants.participant_verdict_set(participant=person, verdict="blocked", researcher=researcher)
    client = Client()
    refused = client.get(_entry_url(other_study), _prolific(pid="P1"))
    assert refused.status_code == 403 and b"ended your participation" in refused.content
    assert not Participant.objects.filter(study=other_study).exists()
    assert get_user_model().objects.filter(panel_participant__isnull=False).count() == 1
    assert Client().get(_entry_url(study), _prolific(pid="P1")).status_code == 302  # its own study: the end page
    participants.participant_verdict_set(participant=person, verdict="", researcher=researcher)
    assert Client().get(_entry_url(other_study), _prolific(pid="P1")).status_code == 302
    assert Participant.objects.filter(study=other_study, panel_id="P1").exists()


def test_a_rejection_does_not_bar_the_panel_id_from_other_campaigns():
    _, study = _study()
    _, other_study = _study()
    researcher = UserFactory(username="rita", role="researcher")
    person = _to_work(_enter(study, "P1"))
    participants.participant_verdict_set(participant=person, verdict="blocked", researcher=researcher)
    participants.participant_verdict_set(participant=person, verdict="rejected", researcher=researcher)
    assert _enter(other_study, "P1").campaign_id == other_study.campaign_id

"""Crowd campaigns (issue 25): entry through a panel's link, the participant's scope, leaving and
verdicts, through the pages and the services."""

from __future__ import annotations

import html
import json
import re
import uuid
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import label_export, participants, selectors
from annotation.counted_labels import counted_labels
from annotation.dashboard_cache import campaign_dashboard_cached
from annotation.errors import ItemsInvalid, NotAllowed
from annotation.label_models import PairwiseLabel
from annotation.models import Assignment, Item
from annotation.panel_models import Participant
from annotation.panels import PanelEntry, entry_signature, entry_signing_fingerprint
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.evalsite.test_content_security_policy import policy
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
    {**_prolific(), "PROLIFIC_PID": [PID, "6b2c3d4e5f6a7b8c9d0e1f2a"]},  # two ids: neither is taken
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
    # urlsplit cannot read these (a 500 before): a bad port, an unclosed IPv6 bracket
    {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1", "turkSubmitTo": "https://www.mturk.com:abc"},
    {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1", "turkSubmitTo": "https://www.mturk.com:99999"},
    {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1", "turkSubmitTo": "https://[www.mturk.com"},
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
    client = Client()
    client.get(_entry_url(study), _prolific())
    assert client.get(_entry_url(study), _prolific(session="SESSION2")).status_code == 302  # the same browser
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


def test_the_entry_rate_limit_is_not_escaped_by_a_forged_forwarded_for_header(settings):
    """The limit was keyed by the right-most X-Forwarded-For entry whether or not a proxy is in front: with
    no proxy (ATELIER_BEHIND_PROXY off) the client writes that header itself, and a new value on each request
    made a new participant (and account) each time, without limit. Without a proxy, the connection's address."""
    settings.ATELIER_PANEL_ENTRIES_PER_MINUTE = 3
    settings.ATELIER_BEHIND_PROXY = False
    _, study = _study()
    codes = [Client().get(_entry_url(study), _prolific(pid=f"P{i}"), HTTP_X_FORWARDED_FOR=f"198.51.100.{i}").status_code
             for i in range(5)]
    assert codes == [302, 302, 302, 429, 429]
    assert Participant.objects.count() == 3
    # behind the proxy, the address it appended is the client's
    settings.ATELIER_BEHIND_PROXY = True
    assert Client().get(_entry_url(study), _prolific(pid="P9"), HTTP_X_FORWARDED_FOR="203.0.113.9").status_code == 302


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


def test_a_participants_labelling_page_and_item_answers_are_never_stored():
    # As the annotators' page: kept in the browser's cache, the item and the answer being chosen stayed there
    # for whoever used the (often shared) browser next.
    _, study = _study()
    client = Client()
    client.get(_entry_url(study), _prolific())
    _to_work(Participant.objects.get())
    page = client.get(reverse("annotation:panel_work", args=[study.entry_token]))
    handed = client.post(reverse("annotation:panel_api_next", args=[study.entry_token]), content_type="application/json")
    previous = client.get(reverse("annotation:panel_api_previous", args=[study.entry_token]))
    for answer in (page, handed, previous):
        assert answer.status_code == 200, answer.content
        assert "no-store" in answer["Cache-Control"], answer.request["PATH_INFO"]


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


def _first_label_held(held: timedelta, active_ms: int = 3_600_000):
    """A new participant's first item labelled ``held`` after it was handed out, the page reporting
    ``active_ms`` (an hour by default, more than either test holds the item): what the wall-time clamps see."""
    _, study = _study()
    person = _to_work(_enter(study, "P1"))
    handed = participants.participant_next(participant=person)
    return participants.participant_label_submit(participant=person, token=handed.assignment.token,
                                                 idempotency_key=uuid.uuid4(), answer={"choice": "A"},
                                                 active_ms=active_ms, now=handed.assignment.created_at + held)


def test_active_time_is_clamped_to_the_wall_time_the_item_was_held():
    done = _first_label_held(timedelta(seconds=5))
    assert done.active.reported_ms == 3_600_000
    assert done.active.active_ms == done.active.wall_ms == 5000


def test_an_item_held_past_the_wall_time_column_is_stored_with_the_wall_time_clamped():
    """A study without a time limit keeps a participant's late label while the slot is free; an item held
    25 days is 2_160_000_000 ms of wall time, past the 32-bit column: PostgreSQL refused the row (a 500
    on the panel's submit, /annotate/p/<entry>/api/assignments/<token>/submit), SQLite stored it."""
    done = _first_label_held(timedelta(days=25))
    assert done.submission.replayed is False
    assert done.active.active_ms == done.active.reported_ms == 3_600_000
    assert done.active.wall_ms == participants.WALL_MS_MAX == 2**31 - 1


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
    retry = training_answer(participant=person, item_id=b.pk, answer="B")
    assert (retry.outcome, retry.attempts_left) == ("retry", 1)
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


def _entered_elsewhere_page(study) -> str:
    participants.participant_enter(study=study, entry=PanelEntry("PSOMEONE", "S", "X"))
    page = Client().get(_entry_url(study), _prolific(pid="PSOMEONE", session="SESSION9")).content.decode()
    Participant.objects.filter(study=study, panel_id="PSOMEONE").delete()
    return page


def test_a_block_bars_the_panel_id_from_other_campaigns_and_taking_it_back_lifts_it():
    _, study = _study()
    _, other_study = _study()
    researcher = UserFactory(username="rita", role="researcher")
    person = _to_work(_enter(study, "P1"))
    participants.participant_verdict_set(participant=person, verdict="blocked", researcher=researcher)
    client = Client()
    refused = client.get(_entry_url(other_study), _prolific(pid="P1"))
    # the answer to an id that entered this study already: a stranger presenting the id learns nothing of the block
    assert refused.status_code == 409 and refused.content.decode() == _entered_elsewhere_page(other_study)
    assert not Participant.objects.filter(study=other_study).exists()
    assert get_user_model().objects.filter(panel_participant__isnull=False).count() == 1
    # its own study: the end page (opened from the panel's link of the submission they entered under)
    assert Client().get(_entry_url(study), _prolific(pid="P1", study="S", session="X")).status_code == 302
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


def _mturk_client(study, **extra):
    client = Client()
    client.get(_entry_url(study), {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1",
                                   "turkSubmitTo": "https://www.mturk.com", **extra})
    return client


def test_an_mturk_studys_pages_may_be_framed_by_mturk_only():
    _, study = _study(panel="mturk")
    client = _mturk_client(study)
    page = client.get(reverse("annotation:panel_consent", args=[study.entry_token]))
    assert page.status_code == 200 and "X-Frame-Options" not in page.headers
    # directives come in no fixed order: compare them parsed
    assert policy(page)["frame-ancestors"] == [
        "https://worker.mturk.com", "https://www.mturk.com", "https://workersandbox.mturk.com"]


def test_a_prolific_studys_pages_may_not_be_framed():
    _, study = _study()
    client = Client()
    client.get(_entry_url(study), _prolific())
    page = client.get(reverse("annotation:panel_consent", args=[study.entry_token]))
    assert page.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]


def test_an_mturk_end_page_may_post_to_the_workers_turk_submit_address_only():
    _, study = _study(panel="mturk", item_quota=1)
    client = _mturk_client(study)
    _label(_to_work(Participant.objects.get()))
    page = client.get(reverse("annotation:panel_done", args=[study.entry_token]))
    assert policy(page)["form-action"] == ["'self'", "https://www.mturk.com"]


def test_a_participant_skips_and_changes_their_label_through_their_studys_api():
    _, study = _study(n_items=3)
    client = Client()
    client.get(_entry_url(study), _prolific())
    _to_work(Participant.objects.get())
    entry = study.entry_token
    first = client.post(reverse("annotation:panel_api_next", args=[entry]), content_type="application/json").json()
    token = first["assignment"]["token"]
    # the annotators' routes are not the participant's (the login middleware refuses them)
    assert client.post(reverse("annotation:api_skip", args=[token]), content_type="application/json").status_code == 403
    skipped = client.post(reverse("annotation:panel_api_skip", args=[entry, token]), content_type="application/json")
    assert skipped.status_code == 200 and Assignment.objects.get(token=token).status == Assignment.Status.SKIPPED
    token = client.post(reverse("annotation:panel_api_next", args=[entry]),
                        content_type="application/json").json()["assignment"]["token"]
    body = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "active_ms": 1000}
    assert client.post(reverse("annotation:panel_api_submit", args=[entry, token]), body,
                       content_type="application/json").status_code == 201
    change = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "B"}}
    revised = client.post(reverse("annotation:panel_api_revise", args=[entry, token]), change,
                          content_type="application/json")
    assert revised.status_code == 201 and revised.json()["version"] == 2


def test_another_studys_participant_cannot_skip_through_this_studys_api():
    _, study = _study()
    _, other_study = _study()
    mine = Client()
    mine.get(_entry_url(study), _prolific(pid="P1"))
    _to_work(Participant.objects.get(panel_id="P1"))
    token = mine.post(reverse("annotation:panel_api_next", args=[study.entry_token]),
                      content_type="application/json").json()["assignment"]["token"]
    theirs = Client()
    theirs.get(_entry_url(other_study), _prolific(pid="P2"))
    _to_work(Participant.objects.get(panel_id="P2"))
    for entry in (study.entry_token, other_study.entry_token):
        response = theirs.post(reverse("annotation:panel_api_skip", args=[entry, token]), content_type="application/json")
        assert response.status_code in (403, 404)
    assert Assignment.objects.get(token=token).status == Assignment.Status.ACTIVE


@pytest.mark.parametrize("item", ["²", "١", "9" * 30, "-1", "abc", ""])
def test_a_tampered_training_item_id_is_no_such_item(item):
    _, study = _study(training_min_correct=1)
    participants.training_item_add(study=study, question="Which is A?", choices=["A", "B"], answer="A")
    client = Client()
    client.get(_entry_url(study), _prolific())
    _to_work(Participant.objects.get())
    response = client.post(reverse("annotation:panel_training", args=[study.entry_token]), {"item": item, "answer": "A"})
    assert response.status_code == 400 and b"no such training item" in response.content
    assert Participant.objects.get().state == Participant.State.TRAINING


@pytest.mark.parametrize("value", ["²", "9" * 20, "0"])
def test_the_study_page_refuses_a_number_out_of_bounds_and_saves_nothing(value):
    campaign, study = _study(item_quota=3)
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    response = client.post(reverse("annotation:panel_study", args=[campaign.pk]),
                           {"panel": "prolific", "item_quota": value}, follow=True)
    assert response.status_code == 200 and b"Not saved: item_quota" in response.content
    assert response.content.count(b"Not saved: item_quota") == 1  # once, in the site's message box
    study.refresh_from_db()
    assert study.item_quota == 3


def test_the_study_page_sets_the_bonus_rule_and_the_too_fast_mark():
    campaign, study = _study()
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    client.post(reverse("annotation:panel_study", args=[campaign.pk]),
                {"panel": "prolific", "bonus_per_item": "0.25", "bonus_min_gold_accuracy": "0.8", "too_fast_ms": "1500"})
    study.refresh_from_db()
    assert (str(study.bonus_per_item), study.bonus_min_gold_accuracy, study.too_fast_ms) == ("0.25", 0.8, 1500)


def test_a_completion_code_of_non_ascii_letters_is_refused():
    campaign, _ = _study()
    with pytest.raises(ItemsInvalid):
        participants.panel_study_open(campaign=campaign, panel="prolific", completion_code="ÜBER1")


def test_the_pay_report_scores_gold_items_and_agreement_with_the_majority():
    from annotation import item_creation
    from annotation.pay_report import pay_report

    campaign, study = _study(k=4, n_items=3, bonus_per_item="0.10", bonus_min_gold_accuracy=1.0)
    campaign.gold_rate = 0.5
    campaign.save(update_fields=["gold_rate"])
    item_creation.item_gold_set(item=campaign.items.order_by("position").first(), answer="A")
    # The answer each participant means (A, A, A, B), pressed on the side the page shows it.
    means = {"P1": "A", "P2": "A", "P3": "A", "P4": "B"}
    for pid, meant in means.items():
        person = _to_work(_enter(study, pid))
        while (handed := participants.participant_next(participant=person)) is not None:
            shown = {"A": "B", "B": "A"}[meant] if handed.assignment.swapped else meant
            participants.participant_label_submit(participant=person, token=handed.assignment.token,
                                                  idempotency_key=uuid.uuid4(), answer={"choice": shown}, active_ms=3000)
    rows = {row.panel_id: row for row in pay_report(study=study).rows}
    assert [(rows[p].gold_items, rows[p].gold_correct, rows[p].gold_accuracy) for p in means] == [
        (1, 1, 1.0), (1, 1, 1.0), (1, 1, 1.0), (1, 0, 0.0)]
    # two regular items: the others' strict majority is A for everyone (P4's dissent is one of three)
    assert [(rows[p].agreement_items, rows[p].agreement_with_majority) for p in means] == [
        (2, 1.0), (2, 1.0), (2, 1.0), (2, 0.0)]
    assert [rows[p].suggested_bonus for p in means] == ["0.30", "0.30", "0.30", "0.00"]


def test_an_mturk_worker_who_accepts_the_hit_again_submits_the_assignment_they_hold_now():
    _, study = _study(panel="mturk", item_quota=1)
    client = _mturk_client(study)
    client.get(_entry_url(study), {**MTURK_ENTRY, "assignmentId": "ASG2", "turkSubmitTo": "https://workersandbox.mturk.com"})
    participant = Participant.objects.get()
    assert (participant.panel_id, participant.panel_session_id) == ("A1B2C3", "ASG2")
    _label(_to_work(participant))
    page = client.get(reverse("annotation:panel_done", args=[study.entry_token])).content.decode()
    assert 'name="assignmentId" value="ASG2"' in page
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in page


def test_a_refused_training_answer_is_shown_as_an_excerpt_not_in_full():
    _, study = _study()
    huge = "x" * 5_000_000
    with pytest.raises(ItemsInvalid) as refused:
        participants.training_item_add(study=study, question="Which is A?", choices=["A", "B"], answer=huge)
    message = str(refused.value)
    assert "is not one of the choices" in message and "5,000,002 characters" in message
    assert len(message) < 300


def test_an_mturk_worker_who_completed_gets_no_second_submission_from_another_assignment():
    """MTurk gives a worker a new assignmentId for every HIT of a batch they accept. A worker who completed
    (and submitted assignment ASG1 with the code) and then accepts another HIT of the study entered it
    with ASG2 and was given the end page again, with a form posting ASG2 and the completion code: a
    second paid assignment for the same work. They are told they took part already; nothing changes."""
    _, study = _study(panel="mturk", item_quota=1)
    first = _mturk_client(study)
    _label(_to_work(Participant.objects.get()))
    second_hit = {"workerId": "A1B2C3", "assignmentId": "ASG2", "hitId": "HIT2", "turkSubmitTo": "https://www.mturk.com"}
    response = first.get(_entry_url(study), second_hit, follow=True)
    page = response.content.decode()
    assert response.status_code == 409 and "already taken part" in page
    assert study.completion_code not in page and "externalSubmit" not in page
    again = Client()  # in another browser: the worker id and an assignment of one's own resume nobody
    page = again.get(_entry_url(study), second_hit, follow=True).content.decode()
    assert study.completion_code not in page and "externalSubmit" not in page
    assert "_auth_user_id" not in again.session
    participant = Participant.objects.get()
    assert (participant.panel_study_id, participant.panel_session_id) == ("HIT1", "ASG1")
    # the assignment they completed under still gets its form, in the browser they used or another
    done = first.get(reverse("annotation:panel_done", args=[study.entry_token])).content.decode()
    assert 'name="assignmentId" value="ASG1"' in done and study.completion_code in done
    assert _mturk_client(study).get(reverse("annotation:panel_done", args=[study.entry_token])).status_code == 200


@pytest.mark.parametrize("ending", ["completed", "screened_out"])
def test_a_prolific_participant_who_finished_gets_no_code_from_another_session(ending):
    """A finished participant's code goes to the Prolific submission (SESSION_ID) they finished in; another
    session of the same PROLIFIC_PID (a second submission) is told they took part already, with no code."""
    _, study = _study(item_quota=1, training_min_correct=1, training_max_attempts=1)
    item = participants.training_item_add(study=study, question="Which is A?", choices=["A", "B"], answer="A")
    from annotation.training import training_answer

    first = Client()
    first.get(_entry_url(study), _prolific())
    person = _to_work(Participant.objects.get())
    training_answer(participant=person, item_id=item.pk, answer="A" if ending == "completed" else "B")
    if ending == "completed":
        _label(Participant.objects.get())
    code = study.completion_code if ending == "completed" else study.screen_out_code
    assert Participant.objects.get().state == ending
    other = first.get(_entry_url(study), _prolific(session="SESSION2"), follow=True)
    assert other.status_code == 409 and code.encode() not in other.content
    assert b"already taken part" in other.content
    elsewhere = Client().get(_entry_url(study), _prolific(session="SESSION2"), follow=True)
    assert elsewhere.status_code == 409 and code.encode() not in elsewhere.content
    same = Client().get(_entry_url(study), _prolific(), follow=True)
    assert same.status_code == 200 and code.encode() in same.content
    assert Participant.objects.get().panel_session_id == "SESSION1"


def test_a_participant_at_work_when_the_campaign_closes_is_completed_with_their_code():
    """A researcher closing the campaign mid-study left the participants at work stranded: next-item said
    "This campaign is not open." for ever, with no code to take back to the panel. A closed campaign has
    nothing left for anyone: they are completed, as when nothing is left for them, their labels kept."""
    from annotation import services

    campaign, study = _study(k=1, n_items=3)
    client = Client()
    client.get(_entry_url(study), _prolific())
    person = _to_work(Participant.objects.get())
    _label(person)
    held = participants.participant_next(participant=person).assignment
    services.campaign_status_set(campaign=campaign, status="closed")
    entry = study.entry_token
    body = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "active_ms": 1000}
    late = client.post(reverse("annotation:panel_api_submit", args=[entry, held.token]), body,
                       content_type="application/json")
    assert late.status_code == 409  # the closed campaign takes no label
    following = client.post(reverse("annotation:panel_api_next", args=[entry]), content_type="application/json")
    assert following.status_code == 200 and following.json()["finished"] is True
    person = Participant.objects.get()
    assert person.state == Participant.State.COMPLETED
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.EXPIRED
    assert PairwiseLabel.objects.filter(annotator=person.user).count() == 1
    done = client.get(reverse("annotation:panel_done", args=[entry]))
    assert study.completion_code.encode() in done.content


def test_a_participant_at_work_when_the_campaign_is_paused_for_review_is_not_completed(monkeypatch):
    """A pause for review (a text now names a model) is not a closing: it ends nobody's work."""
    from annotation import services
    from annotation.errors import CampaignPaused

    _, study = _study(k=1, n_items=3)
    person = _to_work(_enter(study, "P1"))
    monkeypatch.setattr(services, "campaign_texts_current", lambda **kwargs: False)
    with pytest.raises(CampaignPaused):
        participants.participant_next(participant=person)
    assert Participant.objects.get().state == Participant.State.WORKING


def test_a_newcomer_to_a_full_study_is_told_so_and_nothing_is_created():
    """Once every item had its k labels, a new participant (Prolific reopens the place of everyone who
    returns or times out) still went through consent, instructions and training, got no item and was
    completed: the completion code, paid, for no work. A study with nothing left to hand out now says it is
    full at the entry and creates nothing; a slot someone still holds may come back, so it is not full."""
    _, study = _study(k=1, n_items=1)
    first = Client()
    first.get(_entry_url(study), _prolific(pid="P1"))
    person = _to_work(Participant.objects.get())
    held = participants.participant_next(participant=person)
    assert Client().get(_entry_url(study), _prolific(pid="P2", session="S2")).status_code == 302  # P1 may give it back
    participants.participant_label_submit(participant=person, token=held.assignment.token,
                                          idempotency_key=uuid.uuid4(), answer={"choice": "A"}, active_ms=2000)
    users = get_user_model().objects.count()
    late = Client().get(_entry_url(study), _prolific(pid="P3", session="S3"))
    assert late.status_code == 409 and b"This study is full" in late.content
    assert not Participant.objects.filter(panel_id="P3").exists() and get_user_model().objects.count() == users
    # those already in come back to where they are (P1: their code)
    assert Client().get(_entry_url(study), _prolific(pid="P1"), follow=True).status_code == 200
    assert Client().get(_entry_url(study), _prolific(pid="P2", session="S2")).status_code == 302


def test_an_mturk_preview_of_a_full_or_closed_study_says_not_to_accept_the_hit():
    from annotation import services

    campaign, study = _study(panel="mturk", k=1, n_items=1)
    preview = {"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "HIT1"}
    assert b"Accept the HIT" in Client().get(_entry_url(study), preview).content
    services.campaign_status_set(campaign=campaign, status="closed")
    closed = Client().get(_entry_url(study), preview)
    assert closed.status_code == 200 and b"do not accept this HIT" in closed.content
    assert b"Accept the HIT</strong> on MTurk to start" not in closed.content
    assert Participant.objects.count() == 0


def test_a_participant_with_a_quota_reads_it_as_their_items_up_to_on_every_answer():
    # The page read "1 of up to 6 items" (the campaign's bound) for a quota of 2, and the study ended after
    # the second item.
    _, study = _study(item_quota=2, n_items=3)  # k=2: 3 regular items, up to 3 for anyone
    client = Client()
    client.get(_entry_url(study), _prolific())
    _to_work(Participant.objects.get())
    entry = study.entry_token

    def post(url, body=None):
        return client.post(url, body or {}, content_type="application/json").json()

    page = client.get(reverse("annotation:panel_work", args=[entry])).content.decode()
    assert 'aria-valuemax="2"' in page and "of up to 2 items" in page
    handed = post(reverse("annotation:panel_api_next", args=[entry]))
    assert handed["progress"]["items_total"] == 2
    skipped = post(reverse("annotation:panel_api_skip", args=[entry, handed["assignment"]["token"]]), {"reason": "unsure"})
    assert skipped["progress"]["items_total"] == 2
    handed = post(reverse("annotation:panel_api_next", args=[entry]))
    submitted = post(reverse("annotation:panel_api_submit", args=[entry, handed["assignment"]["token"]]),
                     {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}, "active_ms": 3000})
    assert submitted["progress"] == {"done": 1, "assigned": 0, "items_total": 2}


# ---------------------------------------------------------------- a panel id in another case is the same person


def test_a_panel_id_in_another_case_resumes_the_same_participant():
    """Ids were compared as typed: ``a1b2c3`` made a second participant beside ``A1B2C3``, with a fresh
    quota and another code to claim."""
    _, study = _study(panel="mturk")
    first = _mturk_client(study)
    again = Client().get(_entry_url(study), {"workerId": "a1b2c3", "assignmentId": "ASG1", "hitId": "HIT1",
                                             "turkSubmitTo": "https://www.mturk.com"})
    assert again.status_code == 302
    person = Participant.objects.get()
    assert person.panel_id == "A1B2C3"  # the id as the panel first sent it: the one a researcher pays
    assert first.session["_auth_user_id"] == str(person.user_id)


def test_a_blocked_panel_id_in_another_case_is_still_barred_from_other_campaigns():
    _, study = _study()
    _, other_study = _study()
    researcher = UserFactory(username="rita", role="researcher")
    participants.participant_verdict_set(participant=_to_work(_enter(study, PID)), verdict="blocked",
                                         researcher=researcher)
    refused = Client().get(_entry_url(other_study), _prolific(pid=PID.upper()))
    assert refused.status_code == 409 and refused.content.decode() == _entered_elsewhere_page(other_study)
    assert not Participant.objects.filter(study=other_study).exists()


def test_a_finished_panel_id_in_another_case_and_session_gets_no_second_code():
    _, study = _study(item_quota=1)
    client = Client()
    client.get(_entry_url(study), _prolific())
    _label(_to_work(Participant.objects.get()))
    other = client.get(_entry_url(study), _prolific(pid=PID.upper(), session="SESSION2"), follow=True)
    assert other.status_code == 409 and b"already taken part" in other.content
    assert study.completion_code.encode() not in other.content
    assert Participant.objects.count() == 1


def test_the_researchers_api_finds_a_participant_by_their_id_in_any_case():
    _, study = _study()
    _enter(study, PID)
    assert participants.participant_for_panel_id(campaign=study.campaign, panel_id=f" {PID.upper()}").panel_id == PID


def test_two_participants_whose_ids_differ_only_in_case_cannot_be_stored_in_one_campaign():
    from django.db import IntegrityError, transaction

    _, study = _study()
    person = _enter(study, PID)
    with pytest.raises(IntegrityError), transaction.atomic():
        Participant.objects.create(study=study, campaign=study.campaign, user=UserFactory(), panel_id=PID.upper(),
                                   panel_key=PID, entered_at=person.entered_at, last_seen_at=person.entered_at)


def test_the_migration_gives_an_earlier_case_twin_the_key_and_keeps_the_later_one_apart():
    """Rows made before ids were matched in any case: two participants of one campaign whose ids differ only
    in case both stay (nothing merged or deleted); the first to enter holds the key, the id resumes them."""
    import importlib

    from django.apps import apps

    from annotation.panel_models import BlockedPanelId

    migration = importlib.import_module("annotation.migrations.0013_participant_panel_key_matches_any_case")
    _, study = _study()
    first = _enter(study, "ABC")
    later = _enter(study, "XYZ")
    Participant.objects.filter(pk=later.pk).update(panel_id="abc", panel_key="stale~1")
    BlockedPanelId.objects.create(participant=first, panel="prolific", panel_id="ABC", panel_key="",
                                  blocked_at=first.entered_at)
    migration._keys_fill(apps, None)
    assert Participant.objects.get(pk=first.pk).panel_key == "abc"
    assert Participant.objects.get(pk=later.pk).panel_key == f"abc~{later.pk}"
    assert BlockedPanelId.objects.get().panel_key == "abc"
    assert participants.participant_for_panel_id(campaign=study.campaign, panel_id="Abc").pk == first.pk


# ---------------------------------------------------------------- the campaign closes before a participant's work


def _training_study(**settings):
    campaign, study = _study(training_min_correct=1, **settings)
    participants.training_item_add(study=study, question="Which is A?", choices=["A", "B"], answer="A")
    return campaign, study


@pytest.mark.parametrize("panel, params, told", [
    ("prolific", _prolific(), "return your submission on Prolific"),
    ("mturk", {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1", "turkSubmitTo": "https://www.mturk.com"},
     "return the HIT on MTurk"),
])
def test_a_participant_in_training_when_the_campaign_closes_gets_no_code_and_is_told_to_return(panel, params, told):
    """They were completed with the completion code and 0 items: on Prolific and MTurk, full pay for no work."""
    from annotation import services
    from annotation.pay_report import pay_report

    campaign, study = _training_study(panel=panel)
    client = Client()
    client.get(_entry_url(study), params)
    entry = study.entry_token
    client.post(reverse("annotation:panel_consent", args=[entry]), {"consent": "yes"})
    client.post(reverse("annotation:panel_instructions", args=[entry]))
    Participant.objects.update(entered_at=timezone.now() - timedelta(minutes=7))
    services.campaign_status_set(campaign=campaign, status="closed")
    page = client.get(reverse("annotation:panel_training", args=[entry]), follow=True)
    text = page.content.decode()
    assert page.status_code == 200 and "The study closed before your work began" in text and told in text
    assert study.completion_code not in text and study.screen_out_code not in text
    assert "externalSubmit" not in text and "submissions/complete" not in text
    assert Participant.objects.get().state == Participant.State.CLOSED_BEFORE_WORK
    row = pay_report(study=study).rows[0]
    assert (row.state, row.code, row.items) == ("closed_before_work", "", 0)
    assert row.study_minutes == pytest.approx(7, abs=0.1)


def test_a_participant_at_work_with_nothing_labelled_when_the_campaign_closes_gets_no_code():
    from annotation import services

    campaign, study = _study()
    client = Client()
    client.get(_entry_url(study), _prolific())
    held = participants.participant_next(participant=_to_work(Participant.objects.get())).assignment
    services.campaign_status_set(campaign=campaign, status="closed")
    following = client.post(reverse("annotation:panel_api_next", args=[study.entry_token]),
                            content_type="application/json")
    assert following.status_code == 200 and following.json()["finished"] is True
    assert Participant.objects.get().state == Participant.State.CLOSED_BEFORE_WORK
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.EXPIRED
    done = client.get(reverse("annotation:panel_done", args=[study.entry_token])).content.decode()
    assert study.completion_code not in done and "closed before your work began" in done


def test_a_pause_for_review_does_not_close_a_participants_path_in_training(monkeypatch):
    from annotation import panel_views

    _, study = _training_study()
    client = Client()
    client.get(_entry_url(study), _prolific())
    monkeypatch.setattr(panel_views, "campaign_texts_current", lambda **kwargs: False)
    assert client.get(reverse("annotation:panel_consent", args=[study.entry_token])).status_code == 409
    assert Participant.objects.get().state == Participant.State.TRAINING


@pytest.mark.parametrize("panel, params, told", [
    ("prolific", _prolific(), "return your submission on Prolific"),
    ("mturk", {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1", "turkSubmitTo": "https://www.mturk.com"},
     "return the HIT on MTurk"),
    ("generic", {"pid": "P1"}, "on the panel that sent you"),
])
@pytest.mark.parametrize("ending", ["timed_out", "returned"])
def test_a_participant_who_timed_out_or_returned_is_told_what_to_do_on_their_panel(panel, params, told, ending):
    _, study = _study(panel=panel)
    client = Client()
    client.get(_entry_url(study), params)
    participants.participant_leave(participant=Participant.objects.get(), state=ending)
    text = client.get(reverse("annotation:panel_done", args=[study.entry_token])).content.decode()
    assert told in text
    assert study.completion_code not in text and "externalSubmit" not in text


def test_a_newcomer_refused_at_a_closed_mturk_study_is_told_to_return_the_hit():
    from annotation import services

    campaign, study = _study(panel="mturk")
    services.campaign_status_set(campaign=campaign, status="closed")
    refused = Client().get(_entry_url(study), {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1",
                                               "turkSubmitTo": "https://www.mturk.com"})
    assert refused.status_code == 409 and b"return the HIT on MTurk" in refused.content
    assert Participant.objects.count() == 0


def test_a_participant_in_training_when_the_study_fills_up_gets_no_code_and_is_told_at_their_next_page():
    """The study filled (every item got its k labels) while they trained: they passed, got no item and were
    completed with the completion code, paid for no work."""
    _, study = _training_study(k=1, n_items=1)
    worker = _to_work(_enter(study, "P1"))
    client = Client()
    client.get(_entry_url(study), _prolific(pid="P2", session="S2"))
    entry = study.entry_token
    client.post(reverse("annotation:panel_consent", args=[entry]), {"consent": "yes"})
    client.post(reverse("annotation:panel_instructions", args=[entry]))
    from annotation.training import training_answer

    training_answer(participant=worker, item_id=study.training_items.get().pk, answer="A")
    _label(Participant.objects.get(panel_id="P1"))
    page = client.get(reverse("annotation:panel_training", args=[entry]), follow=True).content.decode()
    assert "closed before your work began" in page and study.completion_code not in page
    assert Participant.objects.get(panel_id="P2").state == Participant.State.CLOSED_BEFORE_WORK


def test_the_bare_link_opened_in_a_participants_own_session_takes_them_to_their_step():
    """It said the link was incomplete (their panel's parameters missing) to someone already in the study."""
    _, study = _study()
    client = Client()
    client.get(_entry_url(study), _prolific())
    bare = client.get(_entry_url(study))
    assert bare.status_code == 302 and bare.url == reverse("annotation:panel_consent", args=[study.entry_token])
    stranger = Client().get(_entry_url(study))
    assert stranger.status_code == 400 and b"This study link is incomplete" in stranger.content
    assert client.get(_entry_url(study), {"PROLIFIC_PID": PID}).status_code == 400  # parameters, but not all


def test_two_first_entries_of_one_id_in_two_cases_at_once_make_one_participant(monkeypatch):
    """The race of two first entries (a double click, two tabs): the other entry's insert lands between this
    one's look-up and its own insert; this one then resumes that participant, with a resumed entry's checks
    (the same assignment: a double click; another assignment is another browser's, refused)."""
    _, study = _study(panel="mturk")
    entry = PanelEntry("a1b2c3", "HIT1", "ASG1", "https://www.mturk.com")
    work_left = participants.study_work_left

    def the_other_entry_lands_first(*, study):
        monkeypatch.setattr(participants, "study_work_left", work_left)
        participants.participant_enter(study=study, entry=PanelEntry("A1B2C3", "HIT1", "ASG1", "https://www.mturk.com"))
        return work_left(study=study)

    monkeypatch.setattr(participants, "study_work_left", the_other_entry_lands_first)
    entered = participants.participant_enter(study=study, entry=entry)
    assert not entered.created and Participant.objects.count() == 1
    person = Participant.objects.get()
    assert (entered.participant.pk, person.panel_id) == (person.pk, "A1B2C3")
    assert person.panel_session_id == "ASG1"
    monkeypatch.setattr(participants, "study_work_left", the_other_entry_lands_first)
    Participant.objects.all().delete()
    with pytest.raises(participants.EnteredElsewhere):
        participants.participant_enter(study=study, entry=PanelEntry("a1b2c3", "HIT1", "ASG2", "https://www.mturk.com"))


def test_the_sweep_ends_the_path_of_participants_of_a_closed_campaign_who_never_come_back():
    """The pay report listed them as in training for ever when they closed the tab: a researcher paying after
    closing could not see who to compensate."""
    from annotation import services
    from annotation.pay_report import pay_report
    from annotation.tasks import expire_assignments

    campaign, study = _study(k=1, n_items=3)
    trainee = _enter(study, "P1")
    worker = _to_work(_enter(study, "P2"))
    _label(worker)
    _, other_study = _study()
    elsewhere = _enter(other_study, "P3")
    services.campaign_status_set(campaign=campaign, status="closed")
    expire_assignments()
    states = {row.panel_id: (row.state, row.code) for row in pay_report(study=study).rows}
    assert states == {"P1": ("closed_before_work", ""), "P2": ("completed", study.completion_code)}
    assert Participant.objects.get(pk=trainee.pk).finished_at is not None
    assert Participant.objects.get(pk=elsewhere.pk).state == Participant.State.TRAINING  # an open campaign's
    assert participants.participants_study_closed() == 0


def test_a_campaign_back_in_draft_ends_no_participants_path_in_training():
    from annotation import services

    campaign, study = _training_study()
    client = Client()
    client.get(_entry_url(study), _prolific())
    services.campaign_status_set(campaign=campaign, status="draft")
    assert participants.participants_study_closed() == 0
    assert client.get(reverse("annotation:panel_consent", args=[study.entry_token])).status_code == 200
    assert Participant.objects.get().state == Participant.State.TRAINING


# ---------------------------------------------------------------- a panel id alone resumes nobody


def _work_pages(client, study) -> dict:
    """What a browser can load of the study's participant: the labelling page, their previous label, their end page."""
    entry = study.entry_token
    return {"work": client.get(reverse("annotation:panel_work", args=[entry])).status_code,
            "previous": client.get(reverse("annotation:panel_api_previous", args=[entry])).status_code,
            "done": client.get(reverse("annotation:panel_done", args=[entry])).status_code}


MTURK_ENTRY = {"workerId": "A1B2C3", "assignmentId": "ASG1", "hitId": "HIT1", "turkSubmitTo": "https://www.mturk.com"}


@pytest.mark.parametrize(("panel", "theirs", "guessed"), [
    ("prolific", _prolific(), _prolific(session="SESSION9")),  # the PID, with a submission of one's own
    ("prolific", _prolific(), _prolific(study="STUDY9", session="SESSION1")),
    ("mturk", MTURK_ENTRY, {**MTURK_ENTRY, "assignmentId": "ASG9"}),  # the worker id, with a HIT accepted oneself
    ("generic", {"pid": "P1"}, {"pid": "P1"}),
])
def test_a_known_panel_id_alone_does_not_take_over_a_participant_in_another_browser(panel, theirs, guessed):
    _, study = _study(panel=panel, item_quota=3)
    owner = Client()
    assert owner.get(_entry_url(study), theirs).status_code == 302
    person = _to_work(Participant.objects.get())
    _label(person)
    stored = Participant.objects.values().get()
    intruder = Client()
    refused = intruder.get(_entry_url(study), guessed)
    assert refused.status_code == 409 and b"started with your panel id in another browser" in refused.content
    assert "_auth_user_id" not in intruder.session
    assert set(_work_pages(intruder, study).values()) == {403}  # nothing of theirs: no item, label or progress
    assert Participant.objects.values().get() == {**stored, "last_seen_at": stored["last_seen_at"]}
    assert _work_pages(owner, study) == {"work": 200, "previous": 200, "done": 302}  # still theirs


@pytest.mark.parametrize(("panel", "theirs"), [("prolific", _prolific()), ("mturk", MTURK_ENTRY), ("generic", {"pid": "P1"})])
def test_a_participant_comes_back_in_the_same_browser_after_their_session_ended(panel, theirs):
    _, study = _study(panel=panel)
    owner = Client()
    owner.get(_entry_url(study), theirs)
    _to_work(Participant.objects.get())
    owner.session.flush()  # the session ran out; the browser keeps the study's key
    assert "_auth_user_id" not in owner.session
    assert owner.get(_entry_url(study), theirs).status_code == 302
    assert _work_pages(owner, study)["work"] == 200


@pytest.mark.parametrize(("panel", "theirs"), [("prolific", _prolific()), ("mturk", MTURK_ENTRY)])
def test_a_participant_resumes_in_another_browser_from_the_panels_own_link(panel, theirs):
    """The panel's id of the attempt (Prolific's SESSION_ID, MTurk's assignmentId) is seen only by the panel and
    the participant: opening the study from the panel again resumes them anywhere, with a key for that browser."""
    _, study = _study(panel=panel)
    Client().get(_entry_url(study), theirs)
    _to_work(Participant.objects.get())
    elsewhere = Client()
    resumed = elsewhere.get(_entry_url(study), theirs)
    assert resumed.status_code == 302 and resumed.cookies[settings.ATELIER_PANEL_KEY_COOKIE_NAME].value
    assert resumed.cookies[settings.ATELIER_PANEL_KEY_COOKIE_NAME]["path"].startswith(_entry_url(study))
    assert _work_pages(elsewhere, study)["work"] == 200


def test_the_browser_key_reaches_mturks_frame_and_stays_on_the_site_elsewhere():
    _, mturk = _study(panel="mturk")
    framed = Client().get(_entry_url(mturk), MTURK_ENTRY).cookies[settings.ATELIER_PANEL_KEY_COOKIE_NAME]
    assert (framed["samesite"], framed["secure"], framed["httponly"]) == ("None", True, True)
    _, prolific = _study()
    plain = Client().get(_entry_url(prolific), _prolific()).cookies[settings.ATELIER_PANEL_KEY_COOKIE_NAME]
    assert (plain["samesite"], plain["httponly"], plain["path"]) == ("Lax", True, _entry_url(prolific))
    assert Participant.objects.get(study=prolific).browser_key_hash == participants.browser_key_hash(plain.value)


def test_a_double_click_on_a_generic_panels_link_resumes_once_before_consent_and_not_later():
    # a generic panel's link carries no attempt id: the browser shows the second click's answer, and the first's
    # key and session may never reach it, so the second entry was refused and the participant locked out for good
    _, study = _study(panel="generic")
    first_click = Client()
    assert first_click.get(_entry_url(study), {"pid": "P1"}).status_code == 302
    second_click = Client()  # none of the first answer's cookies
    assert second_click.get(_entry_url(study), {"pid": "P1"}).status_code == 302
    assert second_click.session["_auth_user_id"] == str(Participant.objects.get().user_id)
    assert Client().get(_entry_url(study), {"pid": "P1"}).status_code == 409  # the grace is used once


def test_repeated_clicks_of_one_browser_on_a_generic_panels_link_each_resume_within_the_grace():
    # The grace is for an entry that carries neither the key nor the session (the double click's other click,
    # whose answer's cookies the browser may never get); a browser that holds either resumes on every click, so a
    # third click sent after the first answers arrived resumes too. A third entry with neither is refused: the
    # site cannot tell it from another browser with the id, which the grace, used once, gives nothing.
    _, study = _study(panel="generic")
    browser = Client()
    assert [browser.get(_entry_url(study), {"pid": "P1"}).status_code for _ in range(4)] == [302] * 4
    participant = Participant.objects.get()
    assert browser.session["_auth_user_id"] == str(participant.user_id)
    assert participant.browser_key_hash == participants.browser_key_hash(
        browser.cookies[settings.ATELIER_PANEL_KEY_COOKIE_NAME].value)
    assert Client().get(_entry_url(study), {"pid": "P1"}).status_code == 409


@pytest.mark.parametrize("after", ["consent", "grace"])
def test_a_generic_participant_is_not_resumed_without_the_key_after_consent_or_past_the_grace(after):
    _, study = _study(panel="generic")
    entered = participants.participant_enter(study=study, entry=PanelEntry("P1", "", "")).participant
    now = timezone.now()
    if after == "consent":
        participants.participant_consent(participant=entered)
    else:
        now += participants.FIRST_ENTRY_GRACE + timedelta(seconds=1)
    with pytest.raises(participants.EnteredElsewhere):
        participants.participant_enter(study=study, entry=PanelEntry("P1", "", ""), now=now)


@pytest.mark.parametrize("panel", ["generic", "prolific"])
def test_every_entry_of_a_double_click_leaves_its_browser_a_key_that_resumes_after_the_session(panel):
    # the browser keeps the answer of the click it sent last, which the server may have handled first: a key given
    # by one entry of the double click and replaced by the other's locked a generic participant out for good once
    # their session ran out (a generic link has no attempt id to come back with)
    _, study = _study(panel=panel)
    entry = PanelEntry("P1", "STUDY1", "SESSION1") if panel == "prolific" else PanelEntry("P1")
    now = timezone.now()
    clicks = [participants.participant_enter(study=study, entry=entry, now=now + timedelta(seconds=s)) for s in (0, 1)]
    later = now + timedelta(hours=13)  # the sessions have run out
    for click in clicks:
        resumed = participants.participant_enter(study=study, entry=PanelEntry("P1"), browser_key=click.browser_key,
                                                 now=later)
        assert resumed.participant.pk == clicks[0].participant.pk and resumed.browser_key == ""


def test_a_resume_from_the_panels_link_after_the_grace_still_gives_that_browser_a_new_key():
    _, study = _study()
    entry = PanelEntry("P1", "STUDY1", "SESSION1")
    now = timezone.now()
    first = participants.participant_enter(study=study, entry=entry, now=now)
    later = participants.participant_enter(study=study, entry=entry, now=now + participants.FIRST_ENTRY_GRACE * 2)
    assert later.browser_key and later.browser_key != first.browser_key
    with pytest.raises(participants.EnteredElsewhere):  # the first browser's key is no longer the participant's
        participants.participant_enter(study=study, entry=PanelEntry("P1"), browser_key=first.browser_key,
                                       now=now + timedelta(hours=13))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("panel", ["generic", "prolific"])
def test_both_entries_of_a_double_click_at_the_same_instant_give_keys_that_resume_after_the_session(panel):
    from tests.concurrency import raised, run_at_once
    from tests.conftest import require_service

    require_service("postgres")
    _, study = _study(panel=panel)
    for round_ in range(3):
        entry = PanelEntry(f"P{round_}", "STUDY1", f"SESSION{round_}") if panel == "prolific" else PanelEntry(f"P{round_}")
        entered = run_at_once([lambda: participants.participant_enter(study=study, entry=entry)] * 2)
        assert not raised(entered), entered
        later = timezone.now() + timedelta(hours=13)
        for click in entered:
            assert participants.participant_enter(study=study, entry=PanelEntry(f"P{round_}"), browser_key=click.browser_key,
                                                  now=later).participant.pk == entered[0].participant.pk



@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_four_entries_of_one_browser_at_the_same_instant_on_a_generic_panel_make_one_participant_with_one_key():
    # A generic link's double (or quadruple) click: every entry reads the participant before any of them
    # records it was seen, so the grace admits more than one of them (two to four of four, seen on
    # PostgreSQL), and the others are refused as another browser's. What each admitted one gives is the same:
    # one participant, one account, one membership, the first entry's key; a refused one makes nothing.
    from annotation.models import CampaignAnnotator
    from tests.concurrency import raised, run_at_once
    from tests.conftest import require_service

    require_service("postgres")
    campaign, study = _study(panel="generic")
    for round_ in range(3):
        clicks = [Client() for _ in range(4)]  # one browser with none of the other clicks' cookies
        # each call says which click it was: run_at_once gives the outcomes in the order they finished
        answers = run_at_once([lambda click=click: (click, click.get(_entry_url(study), {"pid": f"P{round_}"}))
                               for click in clicks])
        assert not raised(answers), answers
        participant = Participant.objects.get(campaign=campaign, panel_key=f"p{round_}")
        admitted = [click for click, answer in answers if answer.status_code == 302]
        assert admitted and {answer.status_code for _, answer in answers} <= {302, 409}
        assert {click.session["_auth_user_id"] for click in admitted} == {str(participant.user_id)}
        keys = {click.cookies[settings.ATELIER_PANEL_KEY_COOKIE_NAME].value for click in admitted}
        assert len(keys) == 1 and participant.browser_key_hash == participants.browser_key_hash(*keys)
    assert Participant.objects.filter(campaign=campaign).count() == 3
    assert get_user_model().objects.filter(username__startswith=f"panel-{campaign.pk}-").count() == 3
    assert CampaignAnnotator.objects.filter(campaign=campaign).count() == 3
    assert not Assignment.objects.filter(campaign=campaign).exists()


# ---------------------------------------------------------------- a stranger learns nothing of a panel id's state


def _ids_in_three_states(study, pids=("PBLOCKED", "PACTIVE", "PFINISHED")) -> tuple[str, ...]:
    """Three participants of ``study`` (entered with study "S", session "X"): blocked, at work, completed."""
    researcher = UserFactory(username=f"rita-{study.pk}", role="researcher")
    blocked, active, finished = (_to_work(_enter(study, pid)) for pid in pids)
    participants.participant_verdict_set(participant=blocked, verdict="blocked", researcher=researcher)
    participants.participant_complete(participant=finished)
    return pids


@pytest.mark.parametrize("panel", ["prolific", "generic"])
def test_a_stranger_presenting_a_blocked_active_or_finished_id_gets_one_answer_byte_for_byte(panel):
    # from a new browser; on Prolific with a submission of the stranger's own (STUDY_ID, SESSION_ID), not the participant's
    _, study = _study(panel=panel)
    pids = _ids_in_three_states(study)
    answers = {pid: Client().get(_entry_url(study), _prolific(pid=pid, study="STUDY9", session="SESSION9")
                                 if panel == "prolific" else {"pid": pid})
               for pid in pids}
    assert {a.status_code for a in answers.values()} == {409}
    assert len({a.content for a in answers.values()}) == 1, {p: a.content[:200] for p, a in answers.items()}
    assert b"block" not in answers["PBLOCKED"].content.lower()


def test_a_stranger_presenting_in_another_study_an_id_blocked_elsewhere_gets_the_answer_of_a_known_id():
    # the block bars the id from every campaign of the site; the refusal said "a researcher ended your participation
    # in another of its studies" to whoever presented the id. Now it reads as an id that entered this study already.
    _, study = _study()
    _, other_study = _study()
    _ids_in_three_states(study)
    _ids_in_three_states(other_study, pids=("PACTIVE2", "PKNOWN", "PFINISHED2"))
    blocked_elsewhere = Client().get(_entry_url(other_study), _prolific(pid="PBLOCKED", session="SESSION9"))
    known_here = Client().get(_entry_url(other_study), _prolific(pid="PKNOWN", session="SESSION9"))
    finished_here = Client().get(_entry_url(other_study), _prolific(pid="PFINISHED2", session="SESSION9"))
    assert blocked_elsewhere.status_code == known_here.status_code == finished_here.status_code == 409
    assert blocked_elsewhere.content == known_here.content == finished_here.content
    assert b"ended your participation" not in blocked_elsewhere.content
    assert not Participant.objects.filter(study=other_study, panel_id="PBLOCKED").exists()


def test_a_participants_log_out_lands_on_a_page_saying_how_to_go_on_not_the_staff_login():
    """A participant has no password: the header's Log out took them to the site's username/password form."""
    import html
    import re

    _, study = _study()
    client = Client()
    page = client.get(_entry_url(study), _prolific(), follow=True).content.decode()
    form = re.search(r'<form class="logout".*?</form>', page, re.S).group(0)
    next_url = re.search(r'name="next" value="([^"]+)"', form).group(1)
    response = client.post(reverse("logout"), {"next": next_url})
    assert response.status_code == 302 and response["Location"] == next_url
    assert "/accounts/login/" not in response["Location"]
    left = client.get(next_url)
    assert left.status_code == 200 and not left.wsgi_request.user.is_authenticated
    text = html.unescape(left.content.decode())
    assert "You have logged out of the study" in text and "open the study's link from your panel again" in text
    # the entry link takes them back where they were
    assert client.get(_entry_url(study), _prolific()).status_code == 302
    assert Participant.objects.count() == 1


def test_the_participants_read_only_pages_answer_head_but_the_entry_link_takes_get_only():
    # The entry link creates the participant and logs them in: a link checker's HEAD must do neither.
    _, study = _study()
    client = Client()
    assert client.head(_entry_url(study), _prolific()).status_code == 405
    assert not Participant.objects.exists()
    client.get(_entry_url(study), _prolific())
    _to_work(Participant.objects.get())
    for name in ("annotation:panel_work", "annotation:panel_done", "annotation:panel_logged_out"):
        url = reverse(name, args=[study.entry_token])
        got, head = client.get(url), client.head(url)
        assert head.status_code == got.status_code and head.content == b"", name
        assert client.put(url).status_code == 405, name


# ---------------------------------------------------------------- a generic panel that signs its entries


def _signing_study(**settings):
    """A generic study that requires signed entries, and its secret."""
    campaign, study = _study(panel="generic", **settings)
    secret = participants.panel_study_signing_set(study=study, required=True)
    study.refresh_from_db()
    return campaign, study, secret


def _signed(study, secret, pid="P1"):
    return {"pid": pid, "sig": entry_signature(secret=secret, entry_token=study.entry_token, panel_id=pid)}


def _nothing_written(campaign, users_before: int) -> bool:
    from annotation.models import CampaignAnnotator

    return (not Participant.objects.exists() and get_user_model().objects.count() == users_before
            and not CampaignAnnotator.objects.filter(campaign=campaign).exists())


def test_a_signed_entry_enters_a_signing_study():
    _, study, secret = _signing_study()
    client = Client()
    response = client.get(_entry_url(study), _signed(study, secret))
    assert response.status_code == 302 and response.url == reverse("annotation:panel_consent", args=[study.entry_token])
    assert Participant.objects.get().panel_id == "P1"
    assert client.session["_auth_user_id"] == str(Participant.objects.get().user_id)


@pytest.mark.parametrize("signature", [
    None,  # missing
    "",
    "OTHER",  # another id's signature
    "TOKEN",  # this id's, for another study's token
    "SECRET",  # this id's, under another secret
    "0" * 64,
    "z" * 64,  # not hex
    "ab" * 31,  # too short
    "ab" * 33,  # too long
    "TWO",  # the right one beside another: neither is taken
])
def test_an_entry_of_a_signing_study_without_its_signature_is_refused_and_writes_nothing(signature):
    campaign, study, secret = _signing_study()
    right = _signed(study, secret)["sig"]
    sig = {"OTHER": _signed(study, secret, pid="P2")["sig"],
           "TOKEN": entry_signature(secret=secret, entry_token="another-token", panel_id="P1"),
           "SECRET": entry_signature(secret="another-secret", entry_token=study.entry_token, panel_id="P1"),
           "TWO": [right, "0" * 64]}.get(signature, signature)
    users = get_user_model().objects.count()
    client = Client()
    response = client.get(_entry_url(study), {"pid": "P1"} if sig is None else {"pid": "P1", "sig": sig})
    assert response.status_code == 403
    assert b"not signed for your id by the panel that sent you" in response.content
    assert _nothing_written(campaign, users)
    assert "_auth_user_id" not in client.session
    assert settings.ATELIER_PANEL_KEY_COOKIE_NAME not in response.cookies


def test_an_unsigned_entry_of_a_taken_id_learns_nothing_of_it():
    # Refused as any unsigned entry (403), not as an id known to the study (409): it cannot tell taken ids apart.
    _, study, secret = _signing_study()
    Client().get(_entry_url(study), _signed(study, secret))
    stored = Participant.objects.values().get()
    refused = Client().get(_entry_url(study), {"pid": "P1"})  # within the double click's grace, too
    assert refused.status_code == 403 and b"not signed for your id" in refused.content
    assert Participant.objects.values().get() == stored


def test_the_service_refuses_an_unsigned_entry_of_a_signing_study():
    campaign, study, _ = _signing_study()
    users = get_user_model().objects.count()
    with pytest.raises(participants.EntryNotSigned):
        participants.participant_enter(study=study, entry=PanelEntry("P1", signature="0" * 64))
    assert _nothing_written(campaign, users)


def test_a_participant_of_a_signing_study_comes_back_in_their_browser_without_a_signature():
    _, study, secret = _signing_study()
    owner = Client()
    owner.get(_entry_url(study), _signed(study, secret))
    _to_work(Participant.objects.get())
    assert owner.get(_entry_url(study), {"pid": "P1"}).status_code == 302  # their session
    owner.session.flush()  # the session ran out; the browser keeps the study's key
    assert owner.get(_entry_url(study), {"pid": "P1"}).status_code == 302
    assert _work_pages(owner, study)["work"] == 200
    assert owner.get(_entry_url(study)).status_code == 302  # the bare link, in their session


def test_a_new_secret_stops_the_links_signed_with_the_old_one():
    _, study, old = _signing_study()
    new = participants.panel_study_signing_set(study=study, required=True)
    study.refresh_from_db()
    assert new != old and len(new) == 64
    assert Client().get(_entry_url(study), _signed(study, old)).status_code == 403
    assert Client().get(_entry_url(study), _signed(study, new)).status_code == 302


@pytest.mark.parametrize("sig", [None, "junk", "0" * 64])
def test_a_generic_study_that_does_not_sign_admits_any_entry_as_before(sig):
    _, study = _study(panel="generic")
    response = Client().get(_entry_url(study), {"pid": "P1"} if sig is None else {"pid": "P1", "sig": sig})
    assert response.status_code == 302 and Participant.objects.get().panel_id == "P1"


def test_signing_is_turned_off_and_unsigned_entries_enter_again():
    _, study, _ = _signing_study()
    assert participants.panel_study_signing_set(study=study, required=False) == ""
    study.refresh_from_db()
    assert Client().get(_entry_url(study), {"pid": "P1"}).status_code == 302


@pytest.mark.parametrize("panel", ["prolific", "mturk"])
def test_only_a_generic_panels_entries_can_be_signed(panel):
    _, study = _study(panel=panel)
    with pytest.raises(NotAllowed, match="^Prolific does not sign|^Amazon Mechanical Turk does not sign"):
        participants.panel_study_signing_set(study=study, required=True)
    study.refresh_from_db()
    assert study.entry_signing_secret == ""


def test_a_study_opened_to_another_panel_signs_nothing_any_more():
    campaign, study, _ = _signing_study()
    participants.panel_study_open(campaign=campaign, panel="prolific")
    study.refresh_from_db()
    assert study.entry_signing_secret == ""


def test_a_signing_study_cannot_take_its_id_in_the_signatures_parameter():
    campaign, study, _ = _signing_study()
    with pytest.raises(ItemsInvalid, match="carries the signature"):
        participants.panel_study_open(campaign=campaign, panel="generic", id_param="sig")
    participants.panel_study_signing_set(study=study, required=False)
    participants.panel_study_open(campaign=campaign, panel="generic", id_param="sig")
    with pytest.raises(ItemsInvalid, match="carries the signature"):
        participants.panel_study_signing_set(study=study, required=True)


def test_the_study_page_makes_the_secret_shows_it_once_and_says_signing_is_required():
    campaign, study = _study(panel="generic")
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    page = client.get(reverse("annotation:panel_study", args=[campaign.pk])).content.decode()
    assert "Not required." in page and "Require signed entries" in page
    made = client.post(reverse("annotation:panel_entry_signing", args=[campaign.pk]),
                       {"action": "rotate", "confirm": "yes", "replacing": ""})
    study.refresh_from_db()
    secret = study.entry_signing_secret
    assert made.status_code == 200 and "no-store" in made["Cache-Control"]
    assert secret and secret in made.content.decode()
    page = client.get(reverse("annotation:panel_study", args=[campaign.pk])).content.decode()
    assert "Required." in page and secret not in page  # shown once
    assert "&sig={{SIGNATURE}}" in html.unescape(page)  # the link to paste carries the signature's placeholder
    off = client.post(reverse("annotation:panel_entry_signing", args=[campaign.pk]), {"action": "off", "confirm": "yes"},
                      follow=True)
    assert b"Entries are no longer signed." in off.content
    study.refresh_from_db()
    assert study.entry_signing_secret == ""


def _signing_page_post(client, campaign, **form):
    return client.post(reverse("annotation:panel_entry_signing", args=[campaign.pk]), form, follow=True)


@pytest.mark.parametrize("signing", [False, True])
def test_the_study_page_asks_before_a_new_secret_breaks_the_links_handed_out(signing):
    # Turning signing on stops every unsigned link, a new secret every link signed with the old one: both need
    # the confirmation ticked, or nothing changes.
    campaign, study = _study(panel="generic")
    old = participants.panel_study_signing_set(study=study, required=True) if signing else ""
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    page = client.get(reverse("annotation:panel_study", args=[campaign.pk])).content.decode()
    assert 'name="confirm"' in page
    replacing = entry_signing_fingerprint(old)
    refused = _signing_page_post(client, campaign, action="rotate", replacing=replacing)
    study.refresh_from_db()
    assert study.entry_signing_secret == old
    assert "Nothing changed: tick the box" in refused.content.decode()
    made = _signing_page_post(client, campaign, action="rotate", replacing=replacing, confirm="yes")
    study.refresh_from_db()
    assert study.entry_signing_secret not in ("", old) and study.entry_signing_secret in made.content.decode()


def test_the_study_page_asks_before_stopping_signing_lets_unsigned_links_enter_again():
    # Stopping signing re-opens entry to unsigned links (whoever enters first with a guessable id holds it): it
    # needs the confirmation ticked, as turning signing on does, or nothing changes.
    campaign, study = _study(panel="generic")
    secret = participants.panel_study_signing_set(study=study, required=True)
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    page = client.get(reverse("annotation:panel_study", args=[campaign.pk])).content.decode()
    off_form = page[page.index('id="entry-signing-off"'):]
    off_form = off_form[:off_form.index("</form>")]
    assert 'name="confirm" value="yes" required' in off_form
    for unticked in ({}, {"confirm": "no"}):
        refused = _signing_page_post(client, campaign, action="off", **unticked)
        study.refresh_from_db()
        assert study.entry_signing_secret == secret
        assert "Nothing changed: tick the box" in refused.content.decode()
    stopped = _signing_page_post(client, campaign, action="off", confirm="yes")
    study.refresh_from_db()
    assert study.entry_signing_secret == "" and "Entries are no longer signed." in stopped.content.decode()


def test_a_stale_tabs_stop_keeps_the_secret_another_tab_has_just_made():
    # The stop form carries the fingerprint of the secret its page showed: when another tab has since made a new
    # secret (and the researcher copied it into the panel), the stale tab's stop changes nothing.
    campaign, study = _study(panel="generic")
    participants.panel_study_signing_set(study=study, required=True)
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    page = client.get(reverse("annotation:panel_study", args=[campaign.pk])).content.decode()
    off_form = page[page.index('id="entry-signing-off"'):]
    off_form = off_form[:off_form.index("</form>")]
    stale = re.search(r'name="replacing" value="([0-9a-f]*)"', off_form)
    assert stale is not None, "the stop form names the secret it stops"
    newer = participants.panel_study_signing_set(study=study, required=True)  # the other tab
    refused = _signing_page_post(client, campaign, action="off", confirm="yes", replacing=stale.group(1))
    study.refresh_from_db()
    assert study.entry_signing_secret == newer
    assert "already replaced" in refused.content.decode()


def test_the_new_secrets_page_sent_again_makes_no_other_secret():
    # A reload of the page that shows the new secret posts its form again: the secret just copied must stay.
    campaign, study = _study(panel="generic")
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    form = {"action": "rotate", "confirm": "yes", "replacing": ""}
    _signing_page_post(client, campaign, **form)
    study.refresh_from_db()
    shown = study.entry_signing_secret
    again = _signing_page_post(client, campaign, **form)
    study.refresh_from_db()
    assert study.entry_signing_secret == shown
    assert "already replaced" in again.content.decode() and shown not in again.content.decode()


def test_campaign_entry_signing_prints_a_new_secret_that_signs_the_links_and_turns_signing_off(capsys):
    campaign, study = _study(panel="generic")
    call_command("campaign_entry_signing", str(campaign.pk), "--new-secret")
    out, err = capsys.readouterr()
    study.refresh_from_db()
    assert out.strip() == study.entry_signing_secret and len(out.strip()) == 64  # stdout: the secret alone
    assert "sig" in err and "stop entering" in err
    assert Client().get(_entry_url(study), _signed(study, out.strip())).status_code == 302
    call_command("campaign_entry_signing", str(campaign.pk), "--off")
    study.refresh_from_db()
    assert study.entry_signing_secret == "" and capsys.readouterr().out == ""


@pytest.mark.parametrize(("panel", "says"), [
    (None, "campaign {pk} is not open to a panel"),
    ("prolific", "campaign {pk}: Prolific does not sign its links; only a generic panel's entries can be signed"),
])
def test_campaign_entry_signing_names_the_campaign_it_refuses(panel, says):
    from django.core.management.base import CommandError

    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    if panel:
        participants.panel_study_open(campaign=campaign, panel=panel)
    with pytest.raises(CommandError) as refused:
        call_command("campaign_entry_signing", str(campaign.pk), "--new-secret")
    assert str(refused.value).startswith(says.format(pk=campaign.pk))
    with pytest.raises(CommandError, match="no campaign with id 999999"):
        call_command("campaign_entry_signing", "999999", "--off")


def test_the_study_page_says_that_opening_a_signing_study_to_prolific_stops_signing():
    campaign, study, _ = _signing_study()
    client = Client()
    client.force_login(UserFactory(username="rita", role="researcher"))
    saved = client.post(reverse("annotation:panel_study", args=[campaign.pk]), {"panel": "prolific"}, follow=True)
    told = [str(m) for m in saved.context["messages"]]
    assert told == ["Panel settings saved. Entries are no longer signed: only a generic panel's entries can be "
                    "signed (the secret is dropped; back on a generic panel, turn signing on again for a new one)."]


def test_the_admin_says_whether_signing_is_required_and_never_shows_the_secret():
    campaign, study, secret = _signing_study()
    client = Client()
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    page = client.get(reverse("admin:annotation_panelstudy_change", args=[study.pk])).content.decode()
    assert "Required: each entry link carries sig" in page and secret not in page


def test_the_entry_signing_secret_is_on_no_page_a_participant_can_load():
    campaign, study, secret = _signing_study(item_quota=1)
    participants.training_item_add(study=study, question="Which is A?", choices=["A", "B"], answer="A")
    participants.panel_study_open(campaign=campaign, panel="generic", training_min_correct=1)
    entry = study.entry_token
    client = Client()
    seen = [client.get(_entry_url(study), _signed(study, secret)),
            Client().get(_entry_url(study), {"pid": "P2"}),  # refused: unsigned
            Client().get(_entry_url(study), {"pid": "{{PARTICIPANT_ID}}"})]  # refused: incomplete
    for step, form in (("consent", {"consent": "yes"}), ("instructions", {}),
                       ("training", {"item": study.training_items.get().pk, "answer": "A", "attempt": 1})):
        url = reverse(f"annotation:panel_{step}", args=[entry])
        seen += [client.get(url), client.post(url, form)]
    seen += [client.get(reverse("annotation:panel_work", args=[entry])),
             handed := client.post(reverse("annotation:panel_api_next", args=[entry]), content_type="application/json")]
    token = handed.json()["assignment"]["token"]
    seen.append(client.post(reverse("annotation:panel_api_submit", args=[entry, token]),
                            {"answer": {"choice": "A"}, "idempotency_key": str(uuid.uuid4()), "active_ms": 3000},
                            content_type="application/json"))
    seen += [client.get(reverse("annotation:panel_api_previous", args=[entry])),
             client.get(reverse("annotation:panel_done", args=[entry])),
             client.get(reverse("annotation:panel_logged_out", args=[entry]))]
    assert Participant.objects.get().state == Participant.State.COMPLETED  # the whole path was walked
    assert [r.status_code for r in seen[:3]] == [302, 403, 400]
    for response in seen:
        assert response.status_code < 500, response.content
        assert secret not in response.content.decode(), response.request["PATH_INFO"]
        assert secret.upper() not in response.content.decode().upper()

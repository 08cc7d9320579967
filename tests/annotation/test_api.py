"""The labelling page's JSON API: next item, submit (idempotent), skip, progress, the previous label and its
change; media."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from annotation.label_models import PairwiseLabel
from annotation.models import Assignment
from tests.annotation.factories import Catalogue, faithfulness_campaign, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


def next_item(client, campaign):
    return client.post(f"/annotate/api/campaigns/{campaign.pk}/next", content_type="application/json")


def submit(client, token, answer, key=None, **extra):
    body = {"idempotency_key": str(key or uuid.uuid4()), "answer": answer, **extra}
    return client.post(f"/annotate/api/assignments/{token}/submit", body, content_type="application/json")


@pytest.fixture
def campaign_and_user():
    (ann,) = annotators(1)
    return pairwise_campaign(Catalogue(n_tasks=1), annotators=[ann], n_items=2), ann


def test_next_returns_the_blinded_item_and_progress(client, campaign_and_user):
    campaign, ann = campaign_and_user
    body = next_item(login(client, ann), campaign).json()
    assert body["assignment"]["kind"] == "text_pairwise"
    assert set(body["assignment"]["content"]["sides"]) == {"A", "B"}
    assert body["progress"] == {"done": 0, "assigned": 1, "items_total": 2}


def test_submit_saves_once_and_a_resend_is_replayed(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    token = next_item(client, campaign).json()["assignment"]["token"]
    key = uuid.uuid4()
    first = submit(client, token, {"choice": "A"}, key=key, time_on_item_ms=1500)
    again = submit(client, token, {"choice": "A"}, key=key, time_on_item_ms=1700)
    assert (first.status_code, first.json()["replayed"]) == (201, False)
    assert (again.status_code, again.json()["replayed"]) == (200, True)
    assert PairwiseLabel.objects.count() == 1
    assert first.json()["progress"]["done"] == 1


def test_an_invalid_answer_gets_400_with_the_field_message(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    token = next_item(client, campaign).json()["assignment"]["token"]
    response = submit(client, token, {"choice": "maybe"})
    assert response.status_code == 400
    assert response.json()["fields"] == {"choice": "choose A, B or tie"}


def test_a_conflicting_resubmission_gets_409(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    token = next_item(client, campaign).json()["assignment"]["token"]
    key = uuid.uuid4()
    submit(client, token, {"choice": "A"}, key=key)
    response = submit(client, token, {"choice": "B"}, key=key)
    assert response.status_code == 409 and "different answer" in response.json()["detail"]


def test_a_malformed_submission_gets_400(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    token = next_item(client, campaign).json()["assignment"]["token"]
    response = client.post(f"/annotate/api/assignments/{token}/submit", {"answer": {"choice": "A"}}, content_type="application/json")
    assert response.status_code == 400 and "idempotency_key" in response.json()["fields"]


def test_skip_moves_on_to_another_item(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    first = next_item(client, campaign).json()["assignment"]["token"]
    assert client.post(f"/annotate/api/assignments/{first}/skip", {"reason": "unsure"}, content_type="application/json").status_code == 200
    second = next_item(client, campaign).json()["assignment"]["token"]
    assert second != first
    assert Assignment.objects.get(token=first).status == Assignment.Status.SKIPPED


def test_next_is_null_when_nothing_is_left(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    for _ in range(2):
        token = next_item(client, campaign).json()["assignment"]["token"]
        submit(client, token, {"choice": "tie"})
    assert next_item(client, campaign).json()["assignment"] is None


def test_an_annotator_outside_the_campaign_gets_403(client, campaign_and_user):
    campaign, _ = campaign_and_user
    (outsider,) = annotators(1, prefix="out")
    assert next_item(login(client, outsider), campaign).status_code == 403


def test_submitting_to_someone_elses_token_is_404(client, campaign_and_user):
    campaign, ann = campaign_and_user
    (other,) = annotators(1, prefix="oth")
    login(client, ann)
    token = next_item(client, campaign).json()["assignment"]["token"]
    client.logout()
    assert submit(login(client, other), token, {"choice": "A"}).status_code == 404


def test_the_api_requires_a_session(client, campaign_and_user):
    campaign, _ = campaign_and_user
    response = next_item(client, campaign)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_api_requires_the_csrf_token(campaign_and_user):
    from django.test import Client

    campaign, ann = campaign_and_user
    client = Client(enforce_csrf_checks=True)
    login(client, ann)
    assert next_item(client, campaign).status_code == 403


def test_media_is_served_by_token_without_metadata(client, media_root):
    (ann,) = annotators(1)
    campaign, renders = faithfulness_campaign(Catalogue(n_tasks=1), annotators=[ann])
    # put a text chunk naming the model into the stored file, as a text-to-image tool might
    import struct
    import zlib

    render = renders[0]
    path = Path(render.image.path)
    data = path.read_bytes()
    chunk_data = b"Software\x00Zephyr-Secret-Alpha renderer"
    chunk = struct.pack(">I", len(chunk_data)) + b"tEXt" + chunk_data + struct.pack(">I", zlib.crc32(b"tEXt" + chunk_data))
    path.write_bytes(data[:33] + chunk + data[33:])
    login(client, ann)
    body = next_item(client, campaign).json()
    url = body["assignment"]["content"]["image"]
    assert url.startswith("/annotate/media/") and str(render.pk) not in url.split("/")[-1]
    response = client.get(url)
    # the assignment was made after the file change, so the pinned hash matches; the chunk is gone
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert b"Zephyr" not in response.content and b"tEXt" not in response.content


def test_media_of_another_annotators_assignment_is_404(client, media_root):
    owner, other = annotators(2)
    campaign, _ = faithfulness_campaign(Catalogue(n_tasks=1), annotators=[owner, other])
    login(client, owner)
    url = next_item(client, campaign).json()["assignment"]["content"]["image"]
    client.logout()
    assert login(client, other).get(url).status_code == 404


def test_media_whose_bytes_changed_after_assignment_is_refused(client, media_root):
    (ann,) = annotators(1)
    campaign, _ = faithfulness_campaign(Catalogue(n_tasks=1), annotators=[ann])
    login(client, ann)
    body = next_item(client, campaign).json()
    assignment = Assignment.objects.get(token=body["assignment"]["token"])
    with open(assignment.item.render_a.image.path, "ab") as handle:
        handle.write(b"\x00")
    assert client.get(body["assignment"]["content"]["image"]).status_code == 409


def test_the_page_changes_its_previous_label_through_its_own_routes(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    shown = next_item(client, campaign).json()["assignment"]
    token = shown["token"]
    assert submit(client, token, {"choice": "A"}).status_code == 201
    previous = client.get(f"/annotate/api/campaigns/{campaign.pk}/previous").json()["previous"]
    assert previous["token"] == token and previous["answer"] == {"choice": "A"}
    assert previous["content"] == shown["content"]  # the item as it was shown, sides in the same order
    changed = client.post(f"/annotate/api/assignments/{token}/revise",
                          {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "B"}}, content_type="application/json")
    assert changed.status_code == 201 and changed.json()["version"] == 2
    assert PairwiseLabel.objects.get(assignment__token=token).shown_choice == "B"


def test_a_refused_change_through_the_pages_route_is_a_409_with_the_reason(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    first = next_item(client, campaign).json()["assignment"]["token"]
    submit(client, first, {"choice": "A"})
    second = next_item(client, campaign).json()["assignment"]["token"]
    submit(client, second, {"choice": "A"})
    refused = client.post(f"/annotate/api/assignments/{first}/revise",
                          {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "B"}}, content_type="application/json")
    assert refused.status_code == 409 and refused.json()["error"] == "label_not_revisable"


# --------------------------------------------------------------------------------------------------
# Submit and give me the next (issue 30): POST …/submit?next=1, what the labelling page sends
# --------------------------------------------------------------------------------------------------


def submit_next(client, token, answer, key=None, **extra):
    body = {"idempotency_key": str(key or uuid.uuid4()), "answer": answer, **extra}
    return client.post(f"/annotate/api/assignments/{token}/submit?next=1", body, content_type="application/json")


def test_submit_next_saves_the_label_and_hands_out_the_next_item_with_the_progress_after_it(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    token = next_item(client, campaign).json()["assignment"]["token"]
    response = submit_next(client, token, {"choice": "A"})
    body = response.json()
    assert (response.status_code, body["saved"], body["replayed"]) == (201, True, False)
    assert Assignment.objects.get(token=token).status == Assignment.Status.SUBMITTED
    assert body["assignment"]["token"] != token
    assert body["progress"] == {"done": 1, "assigned": 1, "items_total": 2}
    # The item handed out is the one the annotator now holds, blinded the way next-item blinds it.
    assert next_item(client, campaign).json()["assignment"] == body["assignment"]


def test_a_resent_submit_next_replays_the_label_and_hands_back_the_same_next_item(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    token = next_item(client, campaign).json()["assignment"]["token"]
    key = uuid.uuid4()
    first = submit_next(client, token, {"choice": "B"}, key=key, time_on_item_ms=1200)
    again = submit_next(client, token, {"choice": "B"}, key=key, time_on_item_ms=1900)
    assert (first.status_code, again.status_code, again.json()["replayed"]) == (201, 200, True)
    assert again.json()["assignment"] == first.json()["assignment"]
    # Stored once, as first sent (the choice is kept in the item's own order, the time as given).
    assert list(PairwiseLabel.objects.filter(assignment__token=token).values_list("time_on_item_ms", flat=True)) == [1200]
    assert Assignment.objects.filter(annotator=ann).count() == 2  # the replay took nothing more


def test_submit_next_on_the_last_item_hands_out_none_and_a_resend_still_none(client, campaign_and_user):
    campaign, ann = campaign_and_user
    login(client, ann)
    token = next_item(client, campaign).json()["assignment"]["token"]
    token = submit_next(client, token, {"choice": "tie"}).json()["assignment"]["token"]
    key = uuid.uuid4()
    last = submit_next(client, token, {"choice": "A"}, key=key).json()
    assert last["assignment"] is None and last["progress"]["done"] == 2 and last["progress"]["assigned"] == 0
    assert submit_next(client, token, {"choice": "A"}, key=key).json()["assignment"] is None


@pytest.mark.parametrize("case", ["invalid_answer", "malformed", "conflict", "reused_key", "someone_elses", "skipped"])
def test_submit_next_refuses_what_submit_refuses_and_takes_nothing(client, case):
    owner, other = annotators(2)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[owner, other])
    login(client, owner)
    token = next_item(client, campaign).json()["assignment"]["token"]
    key, answer = uuid.uuid4(), {"choice": "A"}
    if case == "invalid_answer":
        answer = {"choice": "maybe"}
    elif case == "malformed":
        key = "not-a-uuid"
    elif case in ("conflict", "reused_key"):
        submit(client, token, {"choice": "A"}, key=key)
        if case == "conflict":
            answer = {"choice": "B"}
        else:  # the key of the saved label sent for another item
            token = next_item(client, campaign).json()["assignment"]["token"]
    elif case == "skipped":
        client.post(f"/annotate/api/assignments/{token}/skip", {}, content_type="application/json")
    elif case == "someone_elses":
        client.logout()
        login(client, other)
    held = set(Assignment.objects.values_list("pk", "status"))
    labels = PairwiseLabel.objects.count()
    plain = submit(client, token, answer, key=key)
    combined = submit_next(client, token, answer, key=key)
    assert plain.status_code >= 400 and combined.status_code == plain.status_code
    assert combined.json() == plain.json()
    assert set(Assignment.objects.values_list("pk", "status")) == held and PairwiseLabel.objects.count() == labels


def test_submit_next_keeps_every_item_at_exactly_k_labels(client):
    users = annotators(5)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=users, k=3)
    for user in users:
        client.logout()
        login(client, user)
        handed = next_item(client, campaign).json()["assignment"]
        while handed is not None:
            handed = submit_next(client, handed["token"], {"choice": "A"}).json()["assignment"]
    per_item = {}
    for item_id, annotator_id in PairwiseLabel.objects.values_list("item_id", "annotator_id"):
        per_item.setdefault(item_id, []).append(annotator_id)
    assert len(per_item) == campaign.items.count() == 6
    assert all(len(who) == 3 and len(set(who)) == 3 for who in per_item.values())
    assert not Assignment.objects.filter(status=Assignment.Status.ACTIVE).exists()


def test_when_the_take_after_a_submit_is_refused_the_label_stands_and_the_answer_says_why(client, campaign_and_user, monkeypatch):
    from annotation import services
    from annotation.errors import AnnotationError

    campaign, ann = campaign_and_user
    login(client, ann)
    token = next_item(client, campaign).json()["assignment"]["token"]

    class Refused(AnnotationError):
        status = 403
        code = "not_allowed"

    def refused(**kwargs):
        raise Refused("Your time in this study is over.")

    monkeypatch.setattr(services, "item_next", refused)
    response = submit_next(client, token, {"choice": "A"})
    body = response.json()
    assert response.status_code == 201 and body["saved"] and "assignment" not in body
    assert body["next_error"]["status"] == 403 and "time in this study" in body["next_error"]["detail"]
    assert body["progress"]["done"] == 1
    assert PairwiseLabel.objects.filter(assignment__token=token).exists()


def test_answers_carrying_the_item_or_the_label_are_never_stored_by_the_browser(client, campaign_and_user):
    # Kept in the browser's cache (no Cache-Control), the item and the annotator's own label stayed there for
    # whoever used the browser next; the media already said "no-store".
    campaign, ann = campaign_and_user
    login(client, ann)
    handed = next_item(client, campaign)
    token = handed.json()["assignment"]["token"]
    answers = [handed, submit(client, token, {"choice": "A"}),
               client.get(f"/annotate/api/campaigns/{campaign.pk}/previous"),
               client.get(f"/annotate/api/campaigns/{campaign.pk}/progress")]
    for answer in answers:
        assert answer.status_code in (200, 201), answer.content
        assert "no-store" in answer["Cache-Control"] and "private" in answer["Cache-Control"], answer.request["PATH_INFO"]


@pytest.mark.django_db(False)
@pytest.mark.parametrize("before", [{}, {"Expires": "Thu, 01 Jan 2026 00:00:00 GMT"},
                                    {"Cache-Control": "max-age=60, public"},
                                    {"Cache-Control": "no-transform", "Expires": "Thu, 01 Jan 2026 00:00:00 GMT"}])
def test_the_never_stored_headers_are_djangos_add_never_cache_headers(before):
    """Equivalence (issue 30): the headers an annotator answer carries, set directly, are the ones Django's
    ``add_never_cache_headers`` writes, in the same order, whatever the response held before."""
    from unittest import mock

    from django.utils.cache import add_never_cache_headers
    from rest_framework.response import Response

    from annotation.api import never_stored

    ours, djangos = Response({}, headers=before), Response({}, headers=before)
    with mock.patch("time.time", return_value=1_765_000_000.75):
        never_stored(ours)
        add_never_cache_headers(djangos)
    assert list(ours.headers.items()) == list(djangos.headers.items())
    assert "no-store" in ours["Cache-Control"]

"""/api/v1/ annotation operations: campaigns for researchers and admins, the annotator's queue under the
same prefix with the same behaviour as the page's own routes, refusals in the API's error shape."""

from __future__ import annotations

import json
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from annotation.choices import CampaignKind
from annotation.models import Campaign, Item
from leaderboard.api_tokens.services import api_token_create
from tests.annotation.factories import MODEL_NAMES, VALID_ANSWERS, Catalogue, pairwise_campaign

pytestmark = pytest.mark.django_db


def token_client(user) -> APIClient:
    _, secret = api_token_create(user=user, name="test")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


@pytest.fixture
def campaign(alice):
    return pairwise_campaign(Catalogue(n_tasks=2), annotators=[alice])


def test_an_annotator_gets_a_blinded_item_through_v1(alice, campaign):
    response = token_client(alice).post(f"/api/v1/annotate/campaigns/{campaign.pk}/next", {}, format="json")
    assert response.status_code == 200
    body = response.content.decode()
    assert response.json()["assignment"]["token"]
    assert not any(name in body for name in MODEL_NAMES)


def test_v1_next_returns_the_same_body_as_the_pages_route(alice, campaign, client):
    client.force_login(alice)
    page = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", "{}", content_type="application/json").json()
    # the same open assignment comes back: next hands out the current item first
    v1 = token_client(alice).post(f"/api/v1/annotate/campaigns/{campaign.pk}/next", {}, format="json").json()
    assert v1 == page


def test_submit_then_replay_through_v1(alice, campaign):
    client = token_client(alice)
    token = client.post(f"/api/v1/annotate/campaigns/{campaign.pk}/next", {}, format="json").json()["assignment"]["token"]
    body = {"idempotency_key": str(uuid.uuid4()), "answer": VALID_ANSWERS[CampaignKind.TEXT_PAIRWISE]}
    first = client.post(f"/api/v1/annotate/assignments/{token}/submit", body, format="json")
    again = client.post(f"/api/v1/annotate/assignments/{token}/submit", body, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["replayed"] is True


def test_a_malformed_submission_is_a_400_in_the_error_shape(alice, campaign):
    client = token_client(alice)
    token = client.post(f"/api/v1/annotate/campaigns/{campaign.pk}/next", {}, format="json").json()["assignment"]["token"]
    response = client.post(f"/api/v1/annotate/assignments/{token}/submit", {"answer": "A"}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert set(body) == {"error", "message", "details"} and "idempotency_key" in body["details"]


def test_a_researcher_is_refused_the_queue_with_a_reason(rita, campaign):
    response = token_client(rita).post(f"/api/v1/annotate/campaigns/{campaign.pk}/next", {}, format="json")
    assert response.status_code == 403
    assert response.json()["message"] == "Annotators only."


def test_an_annotator_not_on_the_campaign_is_refused(campaign):
    from tests.factories import UserFactory

    outsider = UserFactory(username="outsider", role="annotator")
    response = token_client(outsider).get(f"/api/v1/annotate/campaigns/{campaign.pk}/progress")
    assert response.status_code == 403
    assert response.json() == {"error": "not_allowed", "message": "This campaign is not open to you.", "details": {}}


def test_an_annotator_is_refused_campaign_statistics(alice, campaign):
    response = token_client(alice).get(f"/api/v1/campaigns/{campaign.pk}/dashboard")
    assert response.status_code == 403


def test_the_dashboard_json_carries_the_consensus_rows(rita, campaign):
    response = token_client(rita).get(f"/api/v1/campaigns/{campaign.pk}/dashboard")
    assert response.status_code == 200
    body = response.json()
    assert body["campaign"] == campaign.pk
    assert isinstance(body["rows"], list) and "quality" in body


def test_only_an_admin_creates_a_campaign(rita, adam, campaign):
    payload = {"name": "fresh campaign", "kind": CampaignKind.TEXT_PAIRWISE, "task_set": campaign.task_set_id}
    assert token_client(rita).post("/api/v1/campaigns/create", payload, format="json").status_code == 403
    created = token_client(adam).post("/api/v1/campaigns/create", payload, format="json")
    assert created.status_code == 201
    assert Campaign.objects.get(pk=created.json()["id"]).status == Campaign.Status.DRAFT


def test_a_campaign_name_naming_a_model_is_refused_with_the_field(adam, campaign):
    payload = {"name": f"about {MODEL_NAMES[0]}", "kind": CampaignKind.TEXT_PAIRWISE, "task_set": campaign.task_set_id}
    response = token_client(adam).post("/api/v1/campaigns/create", payload, format="json")
    assert response.status_code == 400
    assert "name" in response.json()["details"]


def test_a_bad_items_file_names_file_line_and_field_and_writes_nothing(adam, campaign):
    before = Item.objects.filter(campaign=campaign).count()
    raw = json.dumps({"task_id": "no-such-task", "dimension": "U", "a": {"model": "x"}, "b": {"model": "y"}}).encode()
    upload = SimpleUploadedFile("items.jsonl", raw + b"\n")
    response = token_client(adam).post(f"/api/v1/campaigns/{campaign.pk}/items/import", {"file": upload},
                                       format="multipart")
    assert response.status_code == 400
    messages = [m for ms in response.json()["details"].values() for m in ms]
    assert any(m.startswith("items.jsonl:1") for m in messages)
    assert Item.objects.filter(campaign=campaign).count() == before


def test_labels_export_is_the_pages_file(rita, campaign, client):
    api = token_client(rita).get(f"/api/v1/campaigns/{campaign.pk}/labels/export?fmt=csv")
    client.force_login(rita)
    page = client.get(f"/annotate/campaigns/{campaign.pk}/labels.csv")
    assert api.status_code == 200 and api.content == page.content


def test_a_campaign_name_taken_is_a_409_conflict_naming_the_field(adam, campaign):
    payload = {"name": campaign.name, "kind": CampaignKind.TEXT_PAIRWISE, "task_set": campaign.task_set_id}
    response = token_client(adam).post("/api/v1/campaigns/create", payload, format="json")
    assert response.status_code == 409
    assert response.json()["error"] == "conflict" and list(response.json()["details"]) == ["name"]


def test_a_campaign_created_meanwhile_under_the_same_name_is_a_409_not_a_500(adam, campaign, monkeypatch):
    # found by eight identical POSTs at once: the name was checked before the insert, and the requests
    # that lost the race to the unique index answered 500 (IntegrityError)
    from annotation import services

    real = services.catalogue_identities

    def another_request_inserts_first():
        Campaign.objects.create(name="twin", kind=CampaignKind.TEXT_PAIRWISE, task_set=campaign.task_set)
        return real()

    monkeypatch.setattr(services, "catalogue_identities", another_request_inserts_first)
    payload = {"name": "twin", "kind": CampaignKind.TEXT_PAIRWISE, "task_set": campaign.task_set_id}
    response = token_client(adam).post("/api/v1/campaigns/create", payload, format="json")
    assert response.status_code == 409
    assert response.json()["error"] == "conflict" and "name" in response.json()["details"]
    assert Campaign.objects.filter(name="twin").count() == 1


def test_a_gold_rate_the_database_refuses_is_a_400_not_a_500(adam, campaign):
    # found by schemathesis: the serializer allowed what the campaign_gold_rate_in_range constraint refuses
    payload = {"name": "too much gold", "kind": CampaignKind.TEXT_PAIRWISE, "task_set": campaign.task_set_id,
               "gold_rate": 0.9, "k": 12}
    response = token_client(adam).post("/api/v1/campaigns/create", payload, format="json")
    assert response.status_code == 400
    assert {"gold_rate", "k"} <= set(response.json()["details"])


# ---------------------------------------------------------------- changing the previous label


def _label_one(client, campaign, choice="A"):
    token = client.post(f"/api/v1/annotate/campaigns/{campaign.pk}/next", {}, format="json").json()["assignment"]["token"]
    saved = client.post(f"/api/v1/annotate/assignments/{token}/submit",
                        {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": choice}}, format="json")
    assert saved.status_code == 201
    return token


def test_the_previous_label_comes_back_blinded_and_prefilled_through_v1(alice, campaign):
    client = token_client(alice)
    assert client.get(f"/api/v1/annotate/campaigns/{campaign.pk}/previous").json() == {"previous": None}
    token = _label_one(client, campaign, "B")
    response = client.get(f"/api/v1/annotate/campaigns/{campaign.pk}/previous")
    assert response.status_code == 200
    previous = response.json()["previous"]
    assert previous["token"] == token and previous["answer"] == {"choice": "B"} and previous["revisable"] is True
    assert set(previous["content"]["sides"]) == {"A", "B"}
    assert not any(name in response.content.decode() for name in MODEL_NAMES)
    assert "gold" not in response.content.decode()


def test_a_change_through_v1_writes_a_version_and_a_resend_replays_it(alice, campaign):
    from annotation.label_models import LabelRevision, PairwiseLabel

    client = token_client(alice)
    token = _label_one(client, campaign, "A")
    body = {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "tie"}, "time_on_item_ms": 800}
    first = client.post(f"/api/v1/annotate/assignments/{token}/revise", body, format="json")
    again = client.post(f"/api/v1/annotate/assignments/{token}/revise", body, format="json")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json() == {"saved": True, "version": 2, "changed": True, "replayed": False}
    assert again.json() == {"saved": True, "version": 2, "changed": True, "replayed": True}
    assert PairwiseLabel.objects.get(assignment__token=token).shown_choice == "tie"
    assert LabelRevision.objects.count() == 1


def test_changing_a_label_that_is_not_the_latest_is_a_409_in_the_error_shape(alice, campaign):
    client = token_client(alice)
    older = _label_one(client, campaign)
    _label_one(client, campaign)
    response = client.post(f"/api/v1/annotate/assignments/{older}/revise",
                           {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "B"}}, format="json")
    assert response.status_code == 409
    assert response.json() == {"error": "label_not_revisable", "details": {},
                               "message": "Only your most recent label in this campaign can be changed."}


@pytest.mark.parametrize("body", [{"answer": {"choice": "B"}}, {"idempotency_key": "not-a-uuid", "answer": {"choice": "B"}},
                                  {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "Z"}},
                                  {"idempotency_key": str(uuid.uuid4()), "answer": ["B"], "time_on_item_ms": -1}],
                         ids=["no key", "bad key", "bad choice", "bad answer and time"])
def test_a_malformed_change_is_a_400_and_writes_nothing(alice, campaign, body):
    from annotation.label_models import LabelRevision, PairwiseLabel

    client = token_client(alice)
    token = _label_one(client, campaign)
    response = client.post(f"/api/v1/annotate/assignments/{token}/revise", body, format="json")
    assert response.status_code == 400 and set(response.json()) == {"error", "message", "details"}
    assert LabelRevision.objects.count() == 0 and PairwiseLabel.objects.get().version == 1


def test_a_researcher_cannot_change_labels(rita, alice, campaign):
    token = _label_one(token_client(alice), campaign)
    response = token_client(rita).post(f"/api/v1/annotate/assignments/{token}/revise",
                                       {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "B"}}, format="json")
    assert response.status_code == 403


def test_the_change_operations_are_in_the_schema(rita):
    schema = token_client(rita).get("/api/v1/schema/?format=json").json()
    operations = {op["operationId"] for path in schema["paths"].values() for op in path.values() if isinstance(op, dict)}
    assert {"annotate_previous", "annotate_revise"} <= operations


# ---------------------------------------------------------------- images for token clients (issue 23)


@pytest.fixture
def image_item(alice, media_root):
    """(alice's token client, the image URL of her faithfulness item, the render behind it)."""
    from tests.annotation.factories import faithfulness_campaign

    campaign, renders = faithfulness_campaign(Catalogue(n_tasks=1), annotators=[alice])
    client = token_client(alice)
    content = client.post(f"/api/v1/annotate/campaigns/{campaign.pk}/next", {}, format="json").json()["assignment"]["content"]
    return client, content["image"], renders


def test_an_item_handed_out_by_token_carries_a_media_url_that_works_with_the_token(image_item):
    client, url, _renders = image_item
    assert url.startswith("/api/v1/annotate/assignments/") and url.endswith("/media/A")
    served = client.get(url, HTTP_ACCEPT="image/avif,image/webp,*/*")
    assert served.status_code == 200 and served["Content-Type"] == "image/png"
    assert served.content.startswith(b"\x89PNG")


def test_the_token_media_url_names_no_model_render_or_file(image_item):
    _client, url, renders = image_item
    prefix, token, media, slot = url.rsplit("/", 3)
    assert (prefix, media, slot) == ("/api/v1/annotate/assignments", "media", "A")  # token and slot only
    assert not any(name.lower() in url.lower() for name in MODEL_NAMES)
    assert not any(str(r.pk) == token or r.image_sha256[:12] in url or r.image.name in url for r in renders)


def test_the_token_media_url_is_refused_without_credentials_and_to_another_annotator(image_item):
    from tests.factories import UserFactory

    _client, url, _renders = image_item
    assert APIClient().get(url).status_code == 401
    bob = UserFactory(username="bob", role="annotator")
    refused = token_client(bob).get(url)
    assert refused.status_code == 404 and set(refused.json()) == {"error", "message", "details"}


def test_the_page_route_still_hands_out_the_page_s_media_url(alice, image_item, client):
    _token_client, v1_url, _renders = image_item
    client.force_login(alice)
    campaign_pk = Campaign.objects.get(kind=CampaignKind.FAITHFULNESS).pk
    page = client.post(f"/annotate/api/campaigns/{campaign_pk}/next", "{}", content_type="application/json").json()
    assert page["assignment"]["content"]["image"].startswith("/annotate/media/")
    assert client.get(page["assignment"]["content"]["image"]).status_code == 200
    assert client.get(v1_url).status_code == 200  # the v1 address takes the session too


def test_the_annotators_v1_answers_are_never_stored(alice, campaign):
    client = token_client(alice)
    handed = client.post(f"/api/v1/annotate/campaigns/{campaign.pk}/next", {}, format="json")
    token = handed.json()["assignment"]["token"]
    submitted = client.post(f"/api/v1/annotate/assignments/{token}/submit",
                            {"idempotency_key": str(uuid.uuid4()), "answer": {"choice": "A"}}, format="json")
    previous = client.get(f"/api/v1/annotate/campaigns/{campaign.pk}/previous")
    for answer in (handed, submitted, previous):
        assert answer.status_code in (200, 201), answer.content
        assert "no-store" in answer["Cache-Control"], answer.request["PATH_INFO"]

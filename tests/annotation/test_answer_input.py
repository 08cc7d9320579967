"""The submission body's validation (annotation.api.AnswerInput): the usual body is validated without
building the serializer's fields (issue 30), to exactly what the serializer gives; anything else is the
serializer's to decide, with its messages."""

from __future__ import annotations

import uuid

import pytest

from annotation.api import AnswerInput
from annotation.label_models import PairwiseLabel
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD

KEY = str(uuid.uuid4())

BODIES = [
    {"idempotency_key": KEY, "answer": {"choice": "A"}, "time_on_item_ms": 1500},
    {"idempotency_key": KEY, "answer": {"choice": "B"}},
    {"idempotency_key": KEY, "answer": {"choice": "A"}, "time_on_item_ms": None},
    {"idempotency_key": KEY, "answer": {"choice": "A"}, "time_on_item_ms": "slow", "ignored": [1]},
    {"idempotency_key": "k" * 64, "answer": [1, 2.5, None, "x"]},
    {"idempotency_key": "a", "answer": 0},
    {"idempotency_key": KEY, "answer": ""},
    # what only the serializer decides
    {"idempotency_key": " padded ", "answer": {"choice": "A"}},
    {"idempotency_key": "k" * 65, "answer": {"choice": "A"}},
    {"idempotency_key": "", "answer": {"choice": "A"}},
    {"idempotency_key": "   ", "answer": {"choice": "A"}},
    {"idempotency_key": 12345, "answer": {"choice": "A"}},
    {"idempotency_key": True, "answer": {"choice": "A"}},
    {"idempotency_key": ["x"], "answer": {"choice": "A"}},
    {"idempotency_key": "nul\x00key", "answer": {"choice": "A"}},
    {"idempotency_key": "clé-ü", "answer": {"choice": "A"}},
    {"idempotency_key": "\ud800", "answer": {"choice": "A"}},
    {"idempotency_key": KEY, "answer": None},
    {"idempotency_key": KEY},
    {"answer": {"choice": "A"}},
    {"idempotency_key": KEY, "answer": {"choice": {1, 2}}},
    {"idempotency_key": KEY, "answer": {"choice": "A"}, "time_on_item_ms": object()},
    [],
    "not an object",
]


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_the_validated_body_and_the_errors_are_the_serializers(body):
    checked = AnswerInput(data=body)
    expected = (dict(checked.validated_data), None) if checked.is_valid() else (None, checked.errors)
    validated, errors = AnswerInput.validated(body)
    assert (None if validated is None else dict(validated), errors) == expected


def test_the_usual_bodies_are_validated_without_the_serializer():
    assert AnswerInput.plain(BODIES[0]) == BODIES[0]
    assert AnswerInput.plain(BODIES[1]) == BODIES[1]


def test_a_subclass_with_fields_of_its_own_is_validated_by_its_serializer():
    class WithActive(AnswerInput):
        from rest_framework import serializers

        active_ms = serializers.JSONField(required=False, allow_null=True)

    validated, errors = WithActive.validated({"idempotency_key": KEY, "answer": {"choice": "A"}, "active_ms": 900})
    assert errors is None and validated["active_ms"] == 900


@pytest.mark.django_db
def test_a_usual_submission_builds_no_serializer_and_is_stored_once(client, monkeypatch):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[ann], n_items=2)
    assert client.login(username=ann.username, password=PASSWORD)
    token = client.post(f"/annotate/api/campaigns/{campaign.pk}/next", content_type="application/json"
                        ).json()["assignment"]["token"]
    built = []
    original = AnswerInput.__init__
    monkeypatch.setattr(AnswerInput, "__init__", lambda self, *a, **k: built.append(1) or original(self, *a, **k))
    body = {"idempotency_key": KEY, "answer": {"choice": "A"}, "time_on_item_ms": 1200}
    first = client.post(f"/annotate/api/assignments/{token}/submit?next=1", body, content_type="application/json")
    again = client.post(f"/annotate/api/assignments/{token}/submit?next=1", body, content_type="application/json")
    assert (first.status_code, again.status_code, again.json()["replayed"]) == (201, 200, True)
    assert first.json()["assignment"] == again.json()["assignment"]
    assert built == []
    assert PairwiseLabel.objects.get().time_on_item_ms == 1200  # (its choice is stored in the item's orientation)
    malformed = client.post(f"/annotate/api/assignments/{token}/submit", {"answer": {"choice": "A"}},
                            content_type="application/json")
    assert malformed.status_code == 400 and "idempotency_key" in malformed.json()["fields"] and built == [1]

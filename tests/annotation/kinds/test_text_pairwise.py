"""The text pairwise kind's item, read on the labelling path without the response columns it neither shows
nor checks (``content_unread``), shows and hashes exactly what the item read in full does."""

from __future__ import annotations

import uuid

import pytest

from annotation import services
from annotation.kinds import kind_for
from annotation.models import Item
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators

pytestmark = pytest.mark.django_db


@pytest.fixture
def handed():
    alice, = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=[alice])
    first = services.assignment_next(campaign=campaign, annotator=alice)
    services.label_submit(token=first.token, annotator=alice, idempotency_key=uuid.uuid4(), answer={"choice": "A"})
    return services.assignment_next(campaign=campaign, annotator=alice)  # taken by the statement that takes a slot


def test_the_labelling_paths_item_leaves_the_unshown_response_columns_unread(handed):
    for response in (handed.item.response_a, handed.item.response_b):
        assert {"raw_text", "raw_sha256", "normalisation_model"} <= response.get_deferred_fields()
        assert "core_idea" not in response.get_deferred_fields()
    assert {"render_a_id", "gold_answer", "created_at"} <= handed.item.get_deferred_fields()
    assert {"source", "position"} <= handed.item.task.get_deferred_fields()


def test_the_item_read_without_them_shows_and_hashes_what_the_full_item_does(handed):
    kind = kind_for(handed.campaign.kind)
    full = Item.objects.select_related(*kind.content_relations).get(pk=handed.item_id)
    assert kind.shown_content(handed.item).digest == kind.shown_content(full).digest == handed.content_hash
    media_url = lambda slot: f"/media/{slot}"  # noqa: E731
    assert kind.present(handed.item, handed, media_url=media_url) == kind.present(full, handed, media_url=media_url)
    assert handed.item.response_a.raw_text == full.response_a.raw_text  # read on use, should anyone ask

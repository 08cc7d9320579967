"""Item creation (annotation/item_creation.py): the blinding draws of sampled items are not predictable, and
the same item file imported twice at the same instant (on PostgreSQL) creates its items once."""

from __future__ import annotations

import json

import pytest

from annotation import item_creation
from annotation.choices import CampaignKind
from annotation.models import Item, ItemSlot
from tests.annotation.factories import Catalogue, campaign_for
from tests.concurrency import raised, run_at_once
from tests.conftest import require_service

pytestmark = pytest.mark.django_db


def _draws(campaign) -> dict:
    """Per sampled pair (task, dimension, the two responses): which response is the canonical A, the item's
    orientation and its place in the queue — what an annotator would need to tell which side is which."""
    return {(item.task_id, item.dimension, frozenset((item.response_a_id, item.response_b_id))):
            (item.response_a_id, item.orientation, item.position)
            for item in Item.objects.filter(campaign=campaign)}


def test_validation_pairs_canonical_order_queue_order_and_orientation_are_not_a_function_of_the_campaign():
    # The admin's "Sample validation pairs" passes no generator. Drawn from random.Random(campaign.pk), the
    # coins that hide the judge's ranking (the sampler lists the better-ranked model first) could be replayed
    # by an annotator who reads the code and the campaign's id in the labelling page's URL: the same campaign
    # filled twice drew exactly the same canonical sides, orientations and queue order.
    catalogue = Catalogue(n_tasks=4)
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue)
    ranking = {m.pk: float(len(catalogue.models) - i) for i, m in enumerate(catalogue.models)}

    def fill() -> dict:
        item_creation.items_create_validation_pairs(campaign=campaign, dimensions=["usefulness", "novelty"],
                                                    rankings={"usefulness": ranking}, pairs_per_task=3)
        drawn = _draws(campaign)
        Item.objects.filter(campaign=campaign).delete()
        return drawn

    first, second = fill(), fill()
    assert len(first) == 4 * 2 * 3
    assert set(first) == set(second)  # the same pairs are sampled: the sampling itself stays reproducible
    assert first != second


def test_sampling_the_same_pairs_again_adds_no_second_copy_of_any():
    # The item's key must name the pair as sampled: named as drawn (canonical sides by a coin), a second
    # "Sample validation pairs" with the same inputs added a reversed copy of about half the pairs.
    catalogue = Catalogue(n_tasks=3)
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue)
    ranking = {m.pk: float(len(catalogue.models) - i) for i, m in enumerate(catalogue.models)}

    def sample() -> list:
        return item_creation.items_create_validation_pairs(campaign=campaign, dimensions=["usefulness", "novelty"],
                                                           rankings={"usefulness": ranking}, pairs_per_task=3)

    first = sample()
    assert len(first) == 3 * 2 * 3
    assert sample() == []
    assert campaign.items.count() == len(first)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("items_before", [0, 1])
def test_the_same_item_file_imported_twice_at_once_creates_its_items_once(items_before):
    require_service("postgres")
    catalogue = Catalogue(n_tasks=6)
    campaign = campaign_for(CampaignKind.TEXT_PAIRWISE, catalogue, k=3)
    records = [{"key": f"item-{task.external_id}", "task_id": task.external_id, "dimension": "usefulness",
                "a": {"model": "Zephyr-Secret-Alpha"}, "b": {"model": "Quasar-Hidden-Beta"}} for task in catalogue.tasks]
    raw = "".join(json.dumps(record) + "\n" for record in records).encode()
    if items_before:  # the campaign already has an item, which the first import locks
        item_creation.items_import_jsonl(campaign=campaign, name="items.jsonl", raw=raw.splitlines()[0])

    errors = raised(run_at_once([
        lambda: item_creation.items_import_jsonl(campaign=campaign, name="items.jsonl", raw=raw) for _ in range(2)
    ]))

    assert not errors, errors
    assert campaign.items.count() == 6
    assert ItemSlot.objects.filter(item__campaign=campaign).count() == 6 * 3
    assert sorted(campaign.items.values_list("position", flat=True)) == list(range(6))

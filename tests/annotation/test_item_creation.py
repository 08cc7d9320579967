"""Item creation (annotation/item_creation.py): the blinding draws of sampled items are not predictable."""

from __future__ import annotations

import pytest

from annotation import item_creation
from annotation.models import CampaignKind, Item
from tests.annotation.factories import Catalogue, campaign_for

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

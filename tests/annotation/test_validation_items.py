"""Items of the EASEL and C² validation kinds drawn from runs (annotation/validation_items.py): the seed
makes the drawn items reproducible, never the blinding draws (queue order, canonical A/B, orientation)."""

from __future__ import annotations

import pytest

from annotation import services
from annotation.choices import CampaignKind
from annotation.models import Item
from annotation.validation_items import (
    items_create_canvas_pairs,
    items_create_handwriting,
    items_create_uos_samples,
)
from tests.annotation.validation_factories import C2World, EaselWorld

pytestmark = pytest.mark.django_db

FILLS = 6


def _draws(campaign) -> dict:
    """Per drawn item (the sample or canvases it shows): the canonical A canvas, the orientation and the place
    in the queue — with the runs' listing order (by run, by reference and |ΔS|, by rater score) what would
    tell an annotator which agent painted a canvas or where the rater put a response."""
    return {frozenset(filter(None, (item.c2_sample_id, item.easel_step_a_id, item.easel_step_b_id))):
            (item.easel_step_a_id, item.orientation, item.position)
            for item in Item.objects.filter(campaign=campaign)}


def _uos(world_holder):
    world = world_holder.setdefault("world", C2World())
    return world.task_set, lambda c: items_create_uos_samples(campaign=c, run=world.run, rule="rater_spread", n_items=8)


def _canvas(world_holder):
    world = world_holder.setdefault("world", EaselWorld())
    return world.task_set, lambda c: items_create_canvas_pairs(campaign=c, runs=world.runs, rule="mixed", pairs_per_task=3)


def _handwriting(world_holder):
    world = world_holder.setdefault("world", EaselWorld())
    return world.task_set, lambda c: items_create_handwriting(campaign=c, runs=world.runs)


@pytest.mark.parametrize(("kind", "setup"), [(CampaignKind.UOS_RATING, _uos), (CampaignKind.CANVAS_SIMILARITY, _canvas),
                                             (CampaignKind.HANDWRITING, _handwriting)])
def test_the_seed_draws_the_items_but_not_their_queue_order_canonical_sides_or_orientation(kind, setup):
    # Drawn from random.Random(seed) (0 unless the admin types another), the same items came in the same
    # queue order with the same sides every time: an annotator reading the code could replay them.
    task_set, fill = setup({})
    campaign = services.campaign_create(name=f"{kind} blinding draws", kind=kind, task_set=task_set, k=3, gold_rate=0.0)
    fills = []
    for _ in range(FILLS):
        fill(campaign)
        fills.append(_draws(campaign))
        Item.objects.filter(campaign=campaign).delete()
    assert len(fills[0]) > 1
    assert all(set(drawn) == set(fills[0]) for drawn in fills)  # the same items: the seed still decides them
    assert any(drawn != fills[0] for drawn in fills[1:])


def test_drawing_the_same_canvas_pairs_again_adds_no_second_copy_of_any():
    # Keyed by the canvases as drawn (A/B by a coin), a second fill with the same seed added reversed copies.
    world = EaselWorld()
    campaign = services.campaign_create(name="canvas pairs twice", kind=CampaignKind.CANVAS_SIMILARITY,
                                        task_set=world.task_set, k=3, gold_rate=0.0)
    first = items_create_canvas_pairs(campaign=campaign, runs=world.runs, rule="mixed", pairs_per_task=4)
    assert len(first) > 2
    assert items_create_canvas_pairs(campaign=campaign, runs=world.runs, rule="mixed", pairs_per_task=4) == []
    assert campaign.items.count() == len(first)

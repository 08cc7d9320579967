"""annotation.calibrated_uos: the C² table's calibrated columns equal ppi_py's mean interval on the
same labels and rater scores."""

from __future__ import annotations

import numpy as np
import pytest
from ppi_py import ppi_mean_ci

from annotation.label_models import UOSLabel
from annotation.models import Item
from annotation.validation_dashboards import uos_panel
from leaderboard.c2.models import C2Rating
from tests.annotation.helpers import annotators, fill
from tests.annotation.test_validation_kinds import _score
from tests.annotation.validation_factories import C2World, uos_campaign

pytestmark = pytest.mark.django_db


def test_the_calibrated_columns_are_ppi_means_of_people_and_rater():
    users = annotators(3)
    world = C2World()
    campaign = uos_campaign(world, annotators=users, n_items=6)
    bias = {u.username: i - 1 for i, u in enumerate(users)}
    fill(campaign, users, lambda u, a: _score(u, a, bias))
    panel = uos_panel(campaign=campaign)
    checked = 0
    labelled = {i.c2_sample_id: i.pk for i in Item.objects.filter(campaign=campaign, is_gold=False)}
    for m in panel["models"]:
        assert len(m["calibrated"]) == 3
        ratings = list(C2Rating.objects.filter(sample__subject_model__display_name=m["name"], repeat=0,
                                               status=C2Rating.Status.OK))
        human, rater, rater_only = [], [], []
        for r in ratings:
            if r.sample_id in labelled:
                item = labelled[r.sample_id]
                human.append(np.mean([label.usefulness for label in UOSLabel.objects.filter(item_id=item)]))
                rater.append(r.u)
            else:
                rater_only.append(r.u)
        c = m["calibrated"][0]
        assert c["n_human"] == len(human) and c["n_rater_only"] == len(rater_only)
        if len(human) >= 2 and len(rater_only) >= 2 and c["lam"] > 0:
            lo, hi = ppi_mean_ci(np.array(human), np.array(rater, float), np.array(rater_only, float), alpha=0.1,
                                 lam=c["lam"])
            assert (c["lo"], c["hi"]) == pytest.approx((float(lo[0]), float(hi[0])))
            checked += 1
        assert c["n_rater_only"] > 0  # the rater scored samples nobody rated: something to borrow
    print("models checked against ppi_mean_ci:", checked)

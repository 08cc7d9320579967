"""End to end in Chromium for the EASEL/C² validation kinds: an annotator labels each kind with the
keyboard alone (two others have labelled through the services), and the researcher's dashboard shows
the statistic the engine computes for the same labels."""

from __future__ import annotations

import numpy as np
import pytest

from annotation.label_models import HandwritingLabel, PairwiseLabel, UOSLabel
from annotation.models import Item
from engine import agreement
from engine.easel.semantic import letter_match_rate
from engine.method_comparison import instrument_agreement
from leaderboard.c2.models import C2Rating
from tests.annotation.helpers import annotators, fill
from tests.annotation.validation_factories import (
    C2World,
    EaselWorld,
    canvas_campaign,
    handwriting_campaign,
    uos_campaign,
)
from tests.browser.conftest import TIMEOUT_MS, log_in, wait_for_item, wait_for_save_status, wait_until
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _page(browser, base, username):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, base, username)
    return context, page


def _saved_then_next(page, token):
    wait_for_save_status(page, starts="Saved")
    return wait_for_item(page, token)


def _dashboard(browser, base, campaign):
    UserFactory(username="rita", role="researcher")
    context, page = _page(browser, base, "rita")
    page.goto(f"{base}/annotate/campaigns/{campaign.pk}/")
    return context, page


def test_uos_is_rated_by_keyboard_and_the_dashboard_shows_the_engines_icc(live_server, browser):
    users = annotators(3, prefix="uos")
    campaign = uos_campaign(C2World(), annotators=users, n_items=3)
    # per item position, so the table has within- and between-sample variance whatever the ids
    plan = {0: (1, 4, 2), 1: (2, 5, 5)}
    fill(campaign, users[:2], lambda u, a: {"usefulness": plan[users.index(u)][a.item.position], "originality": 2,
                                            "surprise": a.item.position + users.index(u)})
    context, page = _page(browser, live_server.url, users[2].username)
    page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
    token = wait_for_item(page)
    for n in range(3):
        assert "Usefulness (U)" in page.inner_text("#item") and "Surprise (S)" in page.inner_text("#item")
        page.keyboard.press("2")          # U = 2, focus moves to O
        page.keyboard.press("Shift+Tab")  # back to U
        page.keyboard.press(str(3 + n % 3))  # U corrected
        page.keyboard.press("1")          # O
        page.keyboard.press("ArrowUp")    # back to O …
        page.keyboard.press("Tab")        # … and on to S
        page.keyboard.press("4")          # S
        assert page.eval_on_selector(".uos-row[data-component='surprise'] .rubric-levels li.on", "e => e.dataset.level") == "4"
        page.keyboard.press("Enter")
        token = _saved_then_next(page, token)
    page.wait_for_selector("text=Nothing left for you in this campaign.")
    context.close()
    mine = list(UOSLabel.objects.filter(annotator=users[2]).values_list("usefulness", "originality", "surprise"))
    assert sorted(mine) == sorted((3 + n % 3, 1, 4) for n in range(3))

    labels = list(UOSLabel.objects.filter(campaign=campaign).order_by("item_id", "created_at", "pk"))
    table = [[label.usefulness for label in labels if label.item_id == item] for item in sorted({x.item_id for x in labels})]
    expected = agreement.intraclass_correlation(table)["ICC2"].value
    samples = dict(Item.objects.filter(campaign=campaign).values_list("pk", "c2_sample_id"))
    human = [np.mean(row) for row in table]
    rater = [C2Rating.objects.get(sample_id=samples[item]).u for item in sorted({x.item_id for x in labels})]
    mad = instrument_agreement(human, rater).mean_absolute_difference
    context, page = _dashboard(browser, live_server.url, campaign)
    shown = page.get_attribute("#uos-icc tr[data-component='usefulness'] td[data-icc-single]", "data-icc-single")
    assert float(shown) == pytest.approx(expected)
    assert float(page.get_attribute("#uos-rater tr[data-component='usefulness'] td[data-mad]", "data-mad")) == pytest.approx(mad)
    assert page.is_visible("#uos-panel svg")
    context.close()


def test_canvas_pairs_are_chosen_by_keyboard_and_the_dashboard_shows_the_engines_sign_agreement(live_server, browser):
    users = annotators(3, prefix="cv")
    campaign = canvas_campaign(EaselWorld(n_references=1), annotators=users, pairs_per_task=3)
    fill(campaign, users[:2], lambda u, a: {"choice": "A" if (a.item.pk + users.index(u)) % 2 else "B"})
    context, page = _page(browser, live_server.url, users[2].username)
    page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
    token = wait_for_item(page)
    for key in ("a", "b", "t"):
        assert page.is_visible("#item .reference img") and page.is_visible("#item .side[data-side='B'] img")
        page.keyboard.press(key)
        page.keyboard.press("Enter")
        token = _saved_then_next(page, token)
    page.wait_for_selector("text=Nothing left for you in this campaign.")
    context.close()

    items = {i.pk: i for i in Item.objects.filter(campaign=campaign).select_related("easel_step_a", "easel_step_b")}
    ids = sorted(items)
    choices = {i: list(PairwiseLabel.objects.filter(item_id=i).values_list("choice", flat=True)) for i in ids}
    p = [{"A": 1.0, "B": 0.0}.get(agreement.majority_label(choices[i]), 0.5) for i in ids]
    expected = agreement.pair_sign_agreement([items[i].easel_step_a.s - items[i].easel_step_b.s for i in ids], p)
    context, page = _dashboard(browser, live_server.url, campaign)
    shown = page.get_attribute("#similarity-sign tr[data-term='s'] td[data-neutral]", "data-neutral")
    assert float(shown) == pytest.approx(expected.neutral_rate)
    context.close()


def test_handwriting_is_read_by_keyboard_and_the_dashboard_shows_the_engines_match_rate(live_server, browser):
    users = annotators(3, prefix="hw")
    campaign = handwriting_campaign(EaselWorld(n_references=1), annotators=users)
    fill(campaign, users[:2], lambda u, a: {"text": ("hello", "hxllo")[users.index(u)]})
    context, page = _page(browser, live_server.url, users[2].username)
    page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
    token = wait_for_item(page)
    wait_until(page, "() => document.activeElement && document.activeElement.id === 'handwriting-text'")
    page.keyboard.type("helo")
    page.keyboard.press("Enter")
    token = _saved_then_next(page, token)
    wait_until(page, "() => document.activeElement && document.activeElement.id === 'handwriting-text'")
    page.keyboard.press("Escape")
    page.keyboard.press("u")
    page.keyboard.press("Enter")
    token = _saved_then_next(page, token)
    page.keyboard.type("HELLO there, reader!!")  # 21 characters: the box keeps 20
    assert len(page.input_value("#handwriting-text")) == 20
    page.keyboard.press("Enter")
    _saved_then_next(page, token)
    page.wait_for_selector("text=Nothing left for you in this campaign.")
    context.close()
    assert HandwritingLabel.objects.filter(annotator=users[2], unreadable=True).count() == 1

    context, page = _dashboard(browser, live_server.url, campaign)
    for item in Item.objects.filter(campaign=campaign):
        rates = [0.0 if label.unreadable else letter_match_rate(label.text) for label in HandwritingLabel.objects.filter(item=item)]
        shown = page.get_attribute(f"#handwriting-canvases tr[data-item='{item.pk}'] td[data-human-rate]", "data-human-rate")
        assert float(shown) == pytest.approx(float(np.mean(rates)))
    assert "tesseract" in page.inner_text("#handwriting-panel")
    context.close()

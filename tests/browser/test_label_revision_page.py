"""Changing the previous label in Chromium (annotation/label_revision.py through static/annotation/annotate.js):
Z shows the item answered last as it was seen, prefilled with the annotator's label; Enter stores a new
version; the current item comes back as it was left (its answer in progress kept). Pairwise and strategy
by keyboard, pairwise again by touch on a 390 px screen."""

from __future__ import annotations

import pytest

from annotation.label_models import LabelRevision, PairwiseLabel, StrategyLabel
from tests.annotation.factories import Catalogue, pairwise_campaign, strategy_campaign
from tests.annotation.helpers import annotators
from tests.browser.conftest import (
    label_by_keyboard,
    log_in,
    wait_for_item,
    wait_for_save_status,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _open(browser, live_server, user, campaign, width=1366, height=768):
    page = browser.new_page(viewport={"width": width, "height": height})
    log_in(page, live_server.url, user.username)
    page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
    wait_for_item(page)
    return page


def _shown_sides(page) -> list[str]:
    return page.locator(".side p").all_inner_texts()


def test_z_changes_the_first_pairwise_label_and_the_second_item_comes_back_as_left(live_server, browser):
    (user,) = annotators(1, prefix="back")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[user], n_items=3)
    page = _open(browser, live_server, user, campaign)
    first_token = page.eval_on_selector("#item", "e => e.dataset.token")
    first_sides = _shown_sides(page)
    second_token = label_by_keyboard(page, "a")
    page.keyboard.press("b")  # the second item's answer in progress, not yet submitted

    page.keyboard.press("z")
    wait_for_item(page, second_token)
    assert page.eval_on_selector("#item", "e => e.dataset.token") == first_token
    assert _shown_sides(page) == first_sides  # the same sides, in the order first seen
    assert page.locator("#choices button.on").get_attribute("data-choice") == "A"  # prefilled with the label
    assert "Changing your previous label" in page.inner_text("#revise-banner")
    assert page.is_hidden("#skip-button") and page.inner_text("#submit-button").endswith("Save change")
    page.keyboard.press("t")
    page.keyboard.press("Enter")
    wait_for_save_status(page, starts="Saved ✓ as version 2")

    wait_for_item(page, first_token)
    assert page.eval_on_selector("#item", "e => e.dataset.token") == second_token
    assert page.locator("#choices button.on").get_attribute("data-choice") == "B"  # kept while away
    assert page.is_hidden("#revise-banner") and page.is_visible("#skip-button")
    assert page.inner_text("#submit-button").endswith("Submit")
    label = PairwiseLabel.objects.get(assignment__token=first_token)
    assert (label.shown_choice, label.version) == ("tie", 2)
    assert LabelRevision.objects.get(assignment=label.assignment).values["shown_choice"] == "A"
    assert not PairwiseLabel.objects.filter(assignment__token=second_token).exists()

    page.keyboard.press("Enter")  # the second item is submitted as it was left
    wait_for_item(page, second_token)
    assert PairwiseLabel.objects.get(assignment__token=second_token).shown_choice == "B"


def test_esc_returns_from_the_previous_label_without_changing_it(live_server, browser):
    (user,) = annotators(1, prefix="esc")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[user], n_items=2)
    page = _open(browser, live_server, user, campaign)
    first_token = page.eval_on_selector("#item", "e => e.dataset.token")
    second_token = label_by_keyboard(page, "a")
    page.keyboard.press("z")
    wait_for_item(page, second_token)
    page.keyboard.press("b")
    page.keyboard.press("Escape")
    wait_for_item(page, first_token)
    assert page.eval_on_selector("#item", "e => e.dataset.token") == second_token
    assert PairwiseLabel.objects.get(assignment__token=first_token).version == 1
    assert not LabelRevision.objects.exists()


def test_a_strategy_label_is_shown_as_saved_and_changed_to_a_new_version(live_server, browser):
    (user,) = annotators(1, prefix="stratback")
    campaign = strategy_campaign(Catalogue(n_tasks=1), annotators=[user])
    page = _open(browser, live_server, user, campaign)
    first_token = page.eval_on_selector("#item", "e => e.dataset.token")
    page.keyboard.press("3")  # medium adaptation: central
    page.keyboard.press("Enter")
    wait_for_save_status(page, starts="Saved")
    second_token = wait_for_item(page, first_token)

    page.keyboard.press("z")
    wait_for_item(page, second_token)
    row = page.locator(".strategy[data-strategy=medium_adaptation]")
    assert "central" in row.inner_text() and "on" in row.get_attribute("class")
    page.keyboard.press("3")  # central -> incidental
    page.keyboard.press("6")  # style transfer: central
    page.keyboard.press("Enter")
    wait_for_save_status(page, starts="Saved ✓ as version 2")
    wait_for_item(page, first_token)
    label = StrategyLabel.objects.get(assignment__token=first_token)
    assert label.strategies == {"medium_adaptation": "incidental", "style_transfer": "central"} and label.version == 2
    assert LabelRevision.objects.get(assignment=label.assignment).values["medium_adaptation"] == "central"


def test_the_previous_label_can_be_changed_by_touch_on_a_phone(live_server, browser):
    (user,) = annotators(1, prefix="phoneback")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[user], n_items=2)
    page = _open(browser, live_server, user, campaign, width=390, height=800)
    first_token = page.eval_on_selector("#item", "e => e.dataset.token")
    page.click("#choices button[data-choice=A]")
    page.click("#submit-button")
    wait_for_save_status(page, starts="Saved")
    second_token = wait_for_item(page, first_token)

    page.click("#previous-button")
    wait_for_item(page, second_token)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert page.is_visible("#revise-banner")
    page.click("#choices button[data-choice=B]")
    page.click("#submit-button")
    wait_for_save_status(page, starts="Saved ✓ as version 2")
    wait_for_item(page, first_token)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert PairwiseLabel.objects.get(assignment__token=first_token).shown_choice == "B"


def test_with_nothing_labelled_yet_z_says_so(live_server, browser):
    (user,) = annotators(1, prefix="nothing")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[user], n_items=1)
    page = _open(browser, live_server, user, campaign)
    page.keyboard.press("z")
    wait_for_save_status(page, starts="You have no saved label")
    assert page.is_hidden("#revise-banner")


def test_the_last_label_of_a_campaign_can_be_changed_from_the_done_screen(live_server, browser):
    (user,) = annotators(1, prefix="last")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[user], n_items=1)
    page = _open(browser, live_server, user, campaign)
    token = page.eval_on_selector("#item", "e => e.dataset.token")
    label_by_keyboard(page, "a")
    assert "Nothing left" in page.inner_text("#item") and "press Z" in page.inner_text("#item")
    page.keyboard.press("z")
    wait_for_item(page, "")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    wait_for_save_status(page, starts="Saved ✓ as version 2")
    wait_until(page, "() => document.querySelector('#item').textContent.includes('Nothing left')")
    assert PairwiseLabel.objects.get(assignment__token=token).shown_choice == "B"


def test_a_tig_audit_label_comes_back_with_its_codes_action_and_note(live_server, browser):
    from annotation.label_models import TigAuditLabel
    from tests.annotation.factories import tig_campaign

    (user,) = annotators(1, prefix="tigback")
    campaign = tig_campaign(Catalogue(n_tasks=2), annotators=[user])
    page = _open(browser, live_server, user, campaign)
    first_token = page.eval_on_selector("#item", "e => e.dataset.token")
    for _ in range(5):
        page.keyboard.press("1")  # pass on every criterion
    page.keyboard.press("2")  # revise
    page.keyboard.press("n")
    page.keyboard.type("tighten the wording")
    page.keyboard.press("Enter")
    wait_for_save_status(page, starts="Saved")
    second_token = wait_for_item(page, first_token)

    page.keyboard.press("z")
    wait_for_item(page, second_token)
    assert page.input_value("#revision-note") == "tighten the wording"
    assert page.locator("tr[data-row=overall_action] button.on").get_attribute("data-action") == "revise"
    assert page.locator("tr[data-row=faithfulness] button.on").get_attribute("data-code") == "pass"
    page.keyboard.press("ArrowDown")  # the cursor starts on the first criterion
    page.keyboard.press("ArrowDown")  # faithfulness
    page.keyboard.press("3")  # fail: the item must now be excluded
    page.keyboard.press("3")  # (the cursor moved on to non-leakage) fail again
    page.keyboard.press("ArrowDown")  # the action row
    page.keyboard.press("3")  # exclude
    page.keyboard.press("Enter")
    wait_for_save_status(page, starts="Saved ✓ as version 2")
    wait_for_item(page, first_token)
    label = TigAuditLabel.objects.get(assignment__token=first_token)
    assert (label.faithfulness, label.non_leakage, label.overall_action, label.version) == ("fail", "fail", "exclude", 2)
    assert label.revision_note == "tighten the wording"


def test_one_esc_returns_from_a_previous_handwriting_label_even_from_its_text_box(live_server, browser):
    from annotation.label_models import HandwritingLabel
    from tests.annotation.validation_factories import EaselWorld, handwriting_campaign

    (user,) = annotators(1, prefix="hwesc")
    campaign = handwriting_campaign(EaselWorld(n_references=1), annotators=[user])
    page = _open(browser, live_server, user, campaign)
    first_token = page.eval_on_selector("#item", "e => e.dataset.token")
    wait_until(page, "() => document.activeElement && document.activeElement.id === 'handwriting-text'")
    page.keyboard.type("abc")
    page.keyboard.press("Enter")
    second_token = wait_for_item(page, first_token)
    page.keyboard.press("Escape")  # leave the reading box, so that Z opens the previous label
    page.keyboard.press("z")
    wait_for_item(page, second_token)
    page.click("#handwriting-text")
    page.keyboard.type("x")
    page.keyboard.press("Escape")  # one Esc, from inside the text box
    wait_for_item(page, first_token)
    assert page.eval_on_selector("#item", "e => e.dataset.token") == second_token
    assert HandwritingLabel.objects.get(assignment__token=first_token).version == 1

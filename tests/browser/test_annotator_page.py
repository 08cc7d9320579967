"""The annotator page in Chromium: the chosen faithfulness score, U-O-S score and unreadable mark are
highlighted with a readable key badge, the brief's constraints are shown whole, the TIG audit shows its
A/B candidates, the progress bar is the annotator's own, and the page fits a 390 px screen."""

from __future__ import annotations

import pytest

from annotation import item_creation
from annotation.choices import CampaignKind
from tests.annotation.factories import Catalogue, campaign_for, faithfulness_campaign, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.annotation.validation_factories import C2World, EaselWorld, handwriting_campaign, uos_campaign
from tests.browser.conftest import label_by_keyboard, log_in, wait_for_item, wait_for_save_status, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_CONSTRAINTS = {f"rule_{n}": f"constraint number {n} that the annotator must be able to read" for n in range(9)}


def _open(browser, live_server, user, campaign, width=1366, height=768):
    page = browser.new_page(viewport={"width": width, "height": height})
    log_in(page, live_server.url, user.username)
    page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
    wait_for_item(page)
    return page


def test_the_chosen_faithfulness_score_is_highlighted_with_a_readable_key(live_server, browser):
    (user,) = annotators(1, prefix="gate")
    campaign, _ = faithfulness_campaign(Catalogue(n_tasks=1), annotators=[user])
    page = _open(browser, live_server, user, campaign)
    page.keyboard.press("4")
    chosen = page.locator("#choices button.on")
    assert chosen.count() == 1 and chosen.get_attribute("data-choice") == "4"
    colours = chosen.evaluate("""(b) => { const k = b.querySelector('kbd');
        return [getComputedStyle(k).color, getComputedStyle(b).backgroundColor]; }""")
    assert colours[0] == "rgb(255, 255, 255)" and colours[1] != "rgb(255, 255, 255)"


def _key_badge_colours(button) -> list[str]:
    return button.evaluate("""(b) => { const k = b.querySelector('kbd');
        return [getComputedStyle(k).color, getComputedStyle(k).backgroundColor, getComputedStyle(b).backgroundColor]; }""")


def test_the_chosen_uos_score_keeps_its_number_readable(live_server, browser):
    # The chosen button turns accent blue with white text; its key badge kept its light grey fill, so the
    # chosen score's number was white on light grey: the one number the annotator needs to see vanished.
    (user,) = annotators(1, prefix="uosbadge")
    page = _open(browser, live_server, user, uos_campaign(C2World(), annotators=[user], n_items=1))
    page.keyboard.press("3")
    chosen = page.locator('.uos-row[data-component="usefulness"] button.on')
    assert chosen.count() == 1 and chosen.get_attribute("data-score") == "3"
    text, badge, _ = _key_badge_colours(chosen)
    assert text == "rgb(255, 255, 255)" and badge == "rgba(0, 0, 0, 0)"


def test_the_marked_unreadable_button_keeps_its_key_readable(live_server, browser):
    (user,) = annotators(1, prefix="hwbadge")
    page = _open(browser, live_server, user, handwriting_campaign(EaselWorld(n_references=1), annotators=[user]))
    page.keyboard.press("Escape")
    page.keyboard.press("u")
    chosen = page.locator("#unreadable-button.on")
    assert chosen.count() == 1
    text, badge, _ = _key_badge_colours(chosen)
    assert text == "rgb(255, 255, 255)" and badge == "rgba(0, 0, 0, 0)"


def test_the_brief_shows_every_constraint_and_the_bar_is_the_annotators_own(live_server, browser):
    (user,) = annotators(1, prefix="brief")
    catalogue = Catalogue(n_tasks=1)
    for task in catalogue.tasks:
        task.constraints = LONG_CONSTRAINTS
        task.save(update_fields=["constraints"])
    campaign = pairwise_campaign(catalogue, annotators=[user], n_items=2)
    page = _open(browser, live_server, user, campaign)
    box = page.locator(".brief")
    assert box.evaluate("(b) => b.scrollHeight <= b.clientHeight + 1")  # nothing hidden behind a scroll
    assert box.locator("li").count() == len(LONG_CONSTRAINTS)
    assert page.get_attribute("#progress-bar", "aria-valuenow") == "0"
    assert "You: 0 of up to" in page.inner_text("#progress-text")
    assert page.locator("#progress-campaign").count() == 0  # no campaign-wide count: gold does not move it


def test_the_tig_audit_shows_the_two_candidates(live_server, browser):
    (user,) = annotators(1, prefix="tig")
    catalogue = Catalogue(n_tasks=1)
    task = catalogue.tasks[0]
    a, b = catalogue.response(task, 0), catalogue.response(task, 1)
    campaign = campaign_for(CampaignKind.TIG_AUDIT, catalogue, annotators=[user])
    key = "|".join(sorted([a.subject_model.display_name, b.subject_model.display_name]))
    item_creation.items_create(campaign=campaign, specs=[item_creation.ItemSpec(task=task, payload={
        "checklist_text": "Which response avoids relying on common plant-growth imagery?",
        "cluster_summary": "plants as a stand-in for calm", "provenance": {"models_sharing": 3},
        "meta": {"comparison_key": key},
    })])
    page = _open(browser, live_server, user, campaign)
    candidates = page.locator(".candidates details")
    assert candidates.count() == 2
    text = page.inner_text(".candidates")
    assert "Candidate A" in text and "Candidate B" in text
    for name in (a.subject_model.display_name, b.subject_model.display_name):
        assert name not in page.content()
    candidates.first.locator("summary").click()
    by_name = sorted((a, b), key=lambda response: response.subject_model.display_name)
    # Which is Candidate A is the item's random bit, never the order of the models' names.
    first = by_name[1] if campaign.items.get().orientation else by_name[0]
    assert first.core_idea in page.inner_text(".candidates details >> nth=0")


def test_the_labelling_page_fits_a_phone(live_server, browser):
    (user,) = annotators(1, prefix="phone")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[user], n_items=2)
    page = _open(browser, live_server, user, campaign, width=390, height=800)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    page.keyboard.press("a")
    assert page.locator("#choices button.on").get_attribute("data-choice") == "A"
    page.goto(f"{live_server.url}/annotate/")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390


def test_an_empty_strategy_label_needs_a_second_enter(live_server, browser):
    from annotation.label_models import StrategyLabel
    from tests.annotation.factories import strategy_campaign

    (user,) = annotators(1, prefix="strat")
    campaign = strategy_campaign(Catalogue(n_tasks=1), annotators=[user])
    page = _open(browser, live_server, user, campaign)
    page.keyboard.press("Enter")
    assert "Press Enter again" in page.inner_text("#save-status")
    assert not StrategyLabel.objects.filter(annotator=user).exists()
    page.keyboard.press("Enter")
    wait_for_save_status(page, starts="Saved")
    assert StrategyLabel.objects.get(annotator=user).strategies == {}


def test_enter_in_the_tig_revision_note_submits_like_everywhere_else(live_server, browser):
    (user,) = annotators(1, prefix="note")
    catalogue = Catalogue(n_tasks=1)
    campaign = campaign_for(CampaignKind.TIG_AUDIT, catalogue, annotators=[user])
    item_creation.items_create(campaign=campaign, specs=[item_creation.ItemSpec(task=catalogue.tasks[0], payload={
        "checklist_text": "Which response avoids plant imagery?", "cluster_summary": "plants", "provenance": {}})])
    page = _open(browser, live_server, user, campaign)
    for _ in range(5):
        page.keyboard.press("1")  # pass on every criterion
    page.keyboard.press("2")  # revise
    page.keyboard.press("n")
    page.keyboard.type("tighten the wording")
    page.keyboard.press("Enter")
    wait_for_save_status(page, starts="Saved")
    from annotation.label_models import TigAuditLabel

    assert TigAuditLabel.objects.get(annotator=user).revision_note == "tighten the wording"


def test_the_end_of_the_queue_hides_the_actions_and_the_bar_says_done(live_server, browser):
    (user,) = annotators(1, prefix="end")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[user], n_items=1)
    page = _open(browser, live_server, user, campaign)
    assert page.is_visible("#submit-button")
    label_by_keyboard(page, "a")
    wait_until(page, "() => document.querySelector('#item').textContent.includes('Nothing left')")
    for button in ("#submit-button", "#skip-button", "#flag-button"):
        assert not page.is_visible(button), button
    bar = page.locator("#progress-bar")
    assert bar.get_attribute("aria-valuenow") == bar.get_attribute("aria-valuemax") == "1"
    assert "done" in page.inner_text("#progress-text")
    # Z brings the previous label back with its Save button
    page.keyboard.press("z")
    page.wait_for_selector("#submit-button", state="visible")


def test_a_campaign_paused_for_review_while_its_page_is_open_leaves_the_page_with_the_neutral_message(
        live_server, browser):
    """The open page keeps the campaign's texts (the instructions overlay); once the campaign is paused
    (a text now names a model), the first refused request takes the annotator off the page to the queue,
    which says only that it is paused — not a 'press Enter for the next item' that is refused again."""
    from annotation.errors import CAMPAIGN_PAUSED_MESSAGE
    from annotation.models import Campaign
    from leaderboard.services.catalogue import catalogue_revision_sync
    from tests.factories import SubjectModelFactory

    (user,) = annotators(1, prefix="pz")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[user], k=1, n_items=3,
                                 instructions="Judge as Demo Atlas would.")
    page = browser.new_page()
    log_in(page, live_server.url, user.username)
    page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
    wait_for_item(page)
    SubjectModelFactory(display_name="Demo Atlas")
    catalogue_revision_sync()
    page.keyboard.press("a")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/annotate/", timeout=15_000)
    assert CAMPAIGN_PAUSED_MESSAGE in page.inner_text("body")
    assert "Demo Atlas" not in page.content()
    assert Campaign.objects.get(pk=campaign.pk).texts_paused_at is not None


def test_the_paused_campaigns_message_on_the_queue_is_announced_and_has_focus(live_server, browser):
    """Sent from a paused campaign's labelling page to the queue, the annotator's screen reader reads the
    neutral message first: its box is an alert and takes the focus (not the body, behind the navigation);
    the page still passes axe-core's WCAG rules (tests.browser.test_accessibility)."""
    from annotation.errors import CAMPAIGN_PAUSED_MESSAGE
    from leaderboard.services.catalogue import catalogue_revision_sync
    from tests.browser.test_accessibility import _violations
    from tests.factories import SubjectModelFactory

    (user,) = annotators(1, prefix="pf")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[user], k=1, n_items=2,
                                 instructions="Judge as Demo Atlas would.")
    SubjectModelFactory(display_name="Demo Atlas")
    catalogue_revision_sync()
    page = browser.new_page()
    log_in(page, live_server.url, user.username)
    page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
    page.wait_for_url(f"{live_server.url}/annotate/")
    box = page.locator("#messages")
    assert box.get_attribute("role") == "alert" and CAMPAIGN_PAUSED_MESSAGE in box.inner_text()
    page.wait_for_load_state("load")  # static/js/messages_focus.js has run (on DOMContentLoaded)
    assert page.evaluate("() => document.activeElement && document.activeElement.id") == "messages"
    assert _violations(page) == []


def test_a_panel_opened_by_its_key_takes_the_focus_and_the_keys_still_work(live_server, browser):
    # The panels (role=dialog) opened with the focus left on the page behind them, so a screen reader did
    # not announce them.
    (user,) = annotators(1, prefix="dialog")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[user], n_items=1)
    page = _open(browser, live_server, user, campaign)
    focused_in = "() => { const o = document.activeElement.closest('.overlay'); return o ? o.id : null; }"
    for key, overlay in (("?", "overlay-help"), ("i", "overlay-instructions"), ("c", "overlay-calibration")):
        page.keyboard.press(key)
        assert page.is_visible(f"#{overlay}") and page.evaluate(focused_in) == overlay
        page.keyboard.press("Escape")
        assert not page.is_visible(f"#{overlay}") and page.evaluate(focused_in) is None
    page.keyboard.press("f")
    assert page.evaluate(focused_in) == "overlay-flag"
    page.keyboard.press("1")
    page.keyboard.type("the visual field is cut off")
    page.keyboard.press("Enter")  # saves the flag
    assert not page.is_visible("#overlay-flag") and "cut off" in page.inner_text("#flag-indicator")
    page.keyboard.press("a")
    page.keyboard.press("Enter")
    wait_until(page, "() => /saved|done/i.test(document.getElementById('save-status').textContent"
                     " + document.getElementById('progress-text').textContent)")

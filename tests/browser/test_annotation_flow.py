"""End to end in Chromium: three annotators label a text pairwise campaign by keyboard (one flags
an item with a note, one survives a failed request), the progress bar moves, and the researcher's
dashboard shows the Fleiss κ that engine.agreement computes for the same labels."""

from __future__ import annotations

import numpy as np
import pytest

from annotation.label_models import PairwiseLabel
from engine import agreement
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.browser.conftest import TIMEOUT_MS, label_by_keyboard, log_in, wait_for_item, wait_for_save_status
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def labels_given(page) -> int:
    """The annotator's own labels so far, from the progress bar (annotators see no campaign-wide count)."""
    return int(page.get_attribute("#progress-bar", "aria-valuenow"))


def test_three_annotators_label_by_keyboard_and_the_dashboard_shows_the_engines_kappa(live_server, browser):
    users = annotators(3, prefix="kb")
    UserFactory(username="rita", role="researcher")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, n_items=3,
                                 instructions="Judge **Novelty** only.")
    base = live_server.url
    plans = {"kb0": ["a", "b", "t"], "kb1": ["a", "a", "b"], "kb2": ["b", "t", "t"]}
    failed = {"n": 0}

    def flaky(route):
        if failed["n"] == 0:
            failed["n"] += 1
            route.abort()
        else:
            route.continue_()

    for user in users:
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        log_in(page, base, user.username)
        page.goto(f"{base}/annotate/c/{campaign.pk}/")
        wait_for_item(page)
        if user.username == "kb0":
            # the common case fits a laptop screen without scrolling
            assert page.evaluate("document.documentElement.scrollHeight <= window.innerHeight + 1")
            page.keyboard.press("?")
            assert page.is_visible("#overlay-help")
            page.keyboard.press("Escape")
            page.keyboard.press("i")
            assert "Novelty" in page.inner_text("#overlay-instructions")
            page.keyboard.press("Escape")
        before = labels_given(page)
        keys = plans[user.username]

        label_by_keyboard(page, keys[0])
        assert labels_given(page) == before + 1
        if user.username == "kb0":
            label_by_keyboard(page, keys[1], flag_note="visual field truncated")
            # the next request fails once: the page keeps the choice and retries by itself
            page.route("**/submit*", flaky)  # the page submits to …/submit?next=1
            page.keyboard.press(keys[2])
            page.keyboard.press("Enter")
            wait_for_save_status(page, contains="retrying")
            wait_for_save_status(page, starts="Saved")
            page.unroute("**/submit*")
            assert failed["n"] == 1
        else:
            label_by_keyboard(page, keys[1])
            label_by_keyboard(page, keys[2])
        page.wait_for_selector("text=Nothing left for you in this campaign.")
        assert labels_given(page) == before + 3
        assert "You: 3 labelled · done" in page.inner_text("#progress-text")
        assert page.get_attribute("#progress-bar", "aria-valuenow") == "3"  # the bar is the annotator's own
        context.close()

    flagged = PairwiseLabel.objects.get(annotator__username="kb0", flag_reason="field_dimension_mismatch")
    assert flagged.flag_note == "visual field truncated"
    assert PairwiseLabel.objects.filter(item__campaign=campaign).count() == 9
    assert all(label.time_on_item_ms is not None for label in PairwiseLabel.objects.all())

    counts = np.array([[list(PairwiseLabel.objects.filter(item=item).values_list("choice", flat=True)).count(c)
                        for c in ("A", "B", "tie")] for item in campaign.items.all()])
    expected = agreement.fleiss_kappa(counts)

    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    log_in(page, base, "rita")
    page.goto(f"{base}/annotate/campaigns/{campaign.pk}/")
    shown = page.inner_text("#consensus tr[data-scope='Novelty'] td.kappa")
    assert shown == f"{expected:.3f}"
    assert float(page.get_attribute("#consensus tr[data-scope='Novelty'] td.kappa", "data-kappa")) == pytest.approx(expected)
    context.close()


def test_every_other_kind_is_labelled_by_keyboard_alone(live_server, browser, settings, tmp_path):
    from annotation.label_models import FaithfulnessLabel, StrategyLabel, TigAuditLabel
    from tests.annotation.factories import (
        faithfulness_campaign,
        image_campaign,
        strategy_campaign,
        tig_campaign,
    )

    settings.MEDIA_ROOT = tmp_path / "media"
    (ann,) = annotators(1, prefix="keys")
    catalogue = Catalogue(n_tasks=1, models=("Zephyr-Secret-Alpha", "Quasar-Hidden-Beta"))
    faith, renders = faithfulness_campaign(catalogue, annotators=[ann])
    campaigns = {
        "faithfulness": faith,
        "tig_audit": tig_campaign(catalogue, annotators=[ann]),
        "strategy": strategy_campaign(catalogue, annotators=[ann]),
        "image_preference": image_campaign(catalogue, renders, annotators=[ann]),
    }
    keys = {
        # score 2, hard fail with "missing core object"
        "faithfulness": ["2", "h", "m"],
        # five criteria: pass, pass, partial, pass, partial; then action "revise" needs a note
        "tig_audit": ["1", "1", "2", "1", "2", "2"],
        # medium adaptation central, style transfer incidental
        "strategy": ["3", "6", "6"],
        "image_preference": ["b"],
    }
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, live_server.url, ann.username)
    for kind, campaign in campaigns.items():
        page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
        token = wait_for_item(page)
        assert page.evaluate("document.documentElement.scrollHeight <= window.innerHeight + 1"), kind
        for key in keys[kind]:
            page.keyboard.press(key)
        if kind == "tig_audit":
            page.keyboard.press("Enter")  # refused: revise needs a note
            wait_for_save_status(page, contains="revise")
            page.keyboard.press("n")
            page.keyboard.type("name the plants concretely")
            page.keyboard.press("Escape")
        page.keyboard.press("Enter")
        wait_for_save_status(page, starts="Saved")
        wait_for_item(page, token)

    faith_label = FaithfulnessLabel.objects.get(annotator=ann)
    assert (faith_label.score, faith_label.hard_fail_reasons, faith_label.passed) == (2, ["missing_core_object"], False)
    tig_label = TigAuditLabel.objects.get(annotator=ann)
    assert (tig_label.faithfulness, tig_label.usefulness_for_judging, tig_label.overall_action) == ("partial", "partial", "revise")
    assert tig_label.revision_note == "name the plants concretely"
    assert StrategyLabel.objects.get(annotator=ann).strategies == {"medium_adaptation": "central", "style_transfer": "incidental"}
    image_label = PairwiseLabel.objects.get(annotator=ann, campaign=campaigns["image_preference"])
    assert image_label.shown_choice == "B"
    context.close()


def test_an_answer_sent_while_the_server_is_unreachable_is_saved_after_a_reload(live_server, browser):
    # The annotator answers, the server cannot be reached ("retrying"), and they reload the page: the
    # answer lived only in the page, so the held item came back blank and the answer was gone.
    users = annotators(1, prefix="reload")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, n_items=2)
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, live_server.url, users[0].username)
    page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
    token = wait_for_item(page)
    page.route("**/submit*", lambda route: route.abort())
    page.keyboard.press("t")
    page.keyboard.press("Enter")
    wait_for_save_status(page, contains="retrying")
    page.reload()  # still unreachable: no retry of the old page can get through first
    wait_for_item(page)
    page.unroute("**/submit*")
    wait_for_save_status(page, starts="Saved")
    wait_for_item(page, token)
    context.close()
    labels = PairwiseLabel.objects.filter(item__campaign=campaign, annotator=users[0])
    assert [(label.assignment.token, label.choice) for label in labels] == [(token, "tie")]


def test_r_retries_a_failed_save_only_and_does_not_submit_a_fresh_answer(live_server, browser):
    # The keys help says R retries a failed save; it submitted any answer at any time, so a slip from T
    # (tie) onto R saved the item with the answer chosen before.
    users = annotators(1, prefix="rkey")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, n_items=2)
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, live_server.url, users[0].username)
    page.goto(f"{live_server.url}/annotate/c/{campaign.pk}/")
    token = wait_for_item(page)
    page.keyboard.press("a")
    page.keyboard.press("r")
    page.wait_for_timeout(1000)
    assert page.inner_text("#save-status") == "Not saved yet"
    assert page.eval_on_selector("#item", "e => e.dataset.token") == token
    assert not PairwiseLabel.objects.filter(item__campaign=campaign).exists()
    page.route("**/submit*", lambda route: route.abort())
    page.keyboard.press("Enter")
    wait_for_save_status(page, contains="Press R")
    page.unroute("**/submit*")
    page.keyboard.press("r")  # after a failed save, R sends it now
    wait_for_save_status(page, starts="Saved")
    context.close()
    assert PairwiseLabel.objects.filter(item__campaign=campaign).count() == 1

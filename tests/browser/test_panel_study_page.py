"""The researcher's *Crowd study* page in Chromium at 1280 and 390 px, for each panel kind and for a generic study
that signs its entries (with its new secret on screen): the entry link, the secret and the tables stay inside the
screen — no page-wide horizontal scrolling — and the rotate step asks before breaking the links handed out, as
stopping signing asks before unsigned links enter again."""

from __future__ import annotations

import pytest

from annotation import participants
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.browser.conftest import TIMEOUT_MS, log_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = {1280: 800, 390: 844}  # viewport width → height


def _fits(page, width: int) -> None:
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width, page.url


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_the_crowd_study_page_of_every_panel_fits_the_screen(live_server, browser, width):
    UserFactory(username="rita", role="researcher")
    page = browser.new_page(viewport={"width": width, "height": WIDTHS[width]})
    log_in(page, live_server.url, "rita")
    for panel in ("prolific", "mturk", "generic"):
        campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=3)
        participants.panel_study_open(campaign=campaign, panel=panel, consent_text="I agree.")
        page.goto(f"{live_server.url}/annotate/campaigns/{campaign.pk}/panel/")
        assert page.locator("#panel-link").is_visible()
        _fits(page, width)
    page.check("#entry-signing-on input[name=confirm]")
    page.click("#entry-signing-on button")
    page.wait_for_selector("#entry-signing-secret")  # the new secret, shown once
    _fits(page, width)
    box = page.locator("#entry-signing-secret").bounding_box()
    assert box["x"] + box["width"] <= width


def test_stopping_signed_entries_needs_the_box_ticked(live_server, browser):
    UserFactory(username="rita", role="researcher")
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=3)
    study = participants.panel_study_open(campaign=campaign, panel="generic")
    secret = participants.panel_study_signing_set(study=study, required=True)
    page = browser.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    log_in(page, live_server.url, "rita")
    page.goto(f"{live_server.url}/annotate/campaigns/{campaign.pk}/panel/")
    box = page.locator("#entry-signing-off input[name=confirm]")
    # unticked, the form is invalid: the button does not send it
    assert page.eval_on_selector("#entry-signing-off", "f => f.checkValidity()") is False
    assert box.evaluate("e => e.validity.valueMissing") is True
    study.refresh_from_db()
    assert study.entry_signing_secret == secret
    box.check()
    page.click("#entry-signing-off button")
    page.wait_for_selector("#messages >> text=Entries are no longer signed.")
    assert "Not required." in page.inner_text("#entry-signing-state")
    study.refresh_from_db()
    assert study.entry_signing_secret == ""

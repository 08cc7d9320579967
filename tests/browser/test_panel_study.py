"""End to end in Chromium (issue 25): three Prolific participants arrive through the study's entry link
and go through consent, instructions and the training — one passes, one fails twice and is screened
out, one passes on the second attempt — then label by keyboard until nothing is left for them and are
sent back to Prolific with their code. Re-opening the link resumes the same participant; the pay
report's active minutes are what the pages measured. A signing study's participant enters with the panel's signature
and resumes in the same browser without it."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache

from annotation import participants
from annotation.label_models import PairwiseLabel
from annotation.models import Assignment
from annotation.panel_models import Participant
from annotation.panels import entry_signature
from annotation.pay_report import pay_report
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.browser.conftest import TIMEOUT_MS, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
PROLIFIC = "https://app.prolific.com/"
#: Each participant's answers to the two training items, attempt by attempt (right answers: A, then B).
PLANS = {
    "5f0000000000000000000001": [["A", "B"]],                # passes at once
    "5f0000000000000000000002": [["B", "B"], ["A", "A"]],    # fails twice: screened out
    "5f0000000000000000000003": [["B", "A"], ["A", "B"]],    # passes on the second attempt
}


def _link(live_server, study, pid):
    return (f"{live_server.url}/annotate/p/{study.entry_token}/?PROLIFIC_PID={pid}&STUDY_ID=60aa00000000000000000001"
            f"&SESSION_ID=sess{pid[-1]}")


def _train(page, attempts):
    for n, answers in enumerate(attempts):
        for answer in answers:
            page.wait_for_selector("#training-form")
            page.check(f"input[name=answer][value='{answer}']")
            page.click("#training-submit")
            page.wait_for_selector("#training-verdict")
            # the explanation is shown after each answer
            assert "Explained:" in page.inner_text("#training-explanation")
            outcome = page.get_attribute("#training-outcome", "data-outcome")
            page.click("#training-continue")
        if outcome == "retry":
            assert n + 1 < len(attempts)
    return outcome


def _label_until_done(page, measured):
    """Label by keyboard until the page hands the participant on; ``measured`` collects what the page
    sent as each item's active time."""
    while True:
        wait_until(page, "() => (document.querySelector('#item') && document.querySelector('#item').dataset.token) "
                         "|| location.href.includes('/done') || location.href.startsWith('https://app.prolific.com')")
        if "/work" not in page.url:
            return
        token = page.eval_on_selector("#item", "e => e.dataset.token")
        page.mouse.move(200, 300)
        page.wait_for_timeout(700)  # reading the item
        page.mouse.move(220, 320)
        with page.expect_request(lambda r: r.url.endswith("/submit")) as sent:
            page.keyboard.press("a")
            page.keyboard.press("Enter")
        measured.append(json.loads(sent.value.post_data)["active_ms"])
        wait_until(page, "prev => !document.querySelector('#item') || document.querySelector('#item').dataset.token !== prev",
                   token)


def test_three_prolific_participants_train_label_and_return_to_prolific_with_their_codes(live_server, browser):
    cache.clear()
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=3, instructions="Judge **Novelty** only.")
    study = participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="I agree to **take part**.",
                                          training_min_correct=2, completion_code="DONE1234", screen_out_code="SCRN5678")
    participants.training_item_add(study=study, question="Which is **A**?", choices=["A", "B"], answer="A",
                                   explanation="Explained: A is on the left.")
    participants.training_item_add(study=study, question="Which is **B**?", choices=["A", "B"], answer="B",
                                   explanation="Explained: B is on the right.")
    measured: dict[str, list[int]] = {}
    for pid, attempts in PLANS.items():
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        returned_to = []
        context.route(f"{PROLIFIC}**", lambda route: (returned_to.append(route.request.url),
                                                     route.fulfill(status=200, body="Prolific", content_type="text/plain")))
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(_link(live_server, study, pid))
        assert "take part" in page.inner_text("#consent-text")
        page.click("#consent-submit")  # without the tick: asked again
        page.wait_for_selector("text=Tick the box")
        page.check("#consent-box")
        page.click("#consent-submit")
        assert "Novelty" in page.inner_text("#instructions-text")
        page.click("#instructions-done")
        outcome = _train(page, attempts)
        if outcome == "screened_out":
            page.wait_for_selector("#panel-done[data-state=screened_out]")
            assert page.inner_text("#panel-code") == "SCRN5678"
            page.wait_for_url(f"{PROLIFIC}**", timeout=TIMEOUT_MS)
            assert returned_to[-1] == "https://app.prolific.com/submissions/complete?cc=SCRN5678"
            context.close()
            continue
        assert outcome == "passed"
        page.wait_for_selector("#item")
        measured[pid] = []
        _label_until_done(page, measured[pid])
        page.wait_for_url(f"{PROLIFIC}**", timeout=TIMEOUT_MS)
        assert returned_to[-1] == "https://app.prolific.com/submissions/complete?cc=DONE1234"
        context.close()

    by_pid = {p.panel_id: p for p in Participant.objects.all()}
    assert {pid: p.state for pid, p in by_pid.items()} == {
        "5f0000000000000000000001": "completed", "5f0000000000000000000002": "screened_out",
        "5f0000000000000000000003": "completed"}
    assert by_pid["5f0000000000000000000003"].training_attempts == 2
    assert not PairwiseLabel.objects.filter(annotator=by_pid["5f0000000000000000000002"].user).exists()
    # k = 2 and two participants labelled: every item has exactly its two labels, none more
    for item in campaign.items.all():
        assert PairwiseLabel.objects.filter(item=item).count() == 2
    assert not Assignment.objects.filter(status="active").exists()

    # re-opening the link resumes the same participant (their end page, their code), creating nobody
    context = browser.new_context()
    context.route(f"{PROLIFIC}**", lambda route: route.fulfill(status=200, body="Prolific"))
    page = context.new_page()
    page.goto(_link(live_server, study, "5f0000000000000000000001"))
    page.wait_for_selector("#panel-done[data-state=completed]")
    assert page.inner_text("#panel-code") == "DONE1234"
    context.close()
    assert Participant.objects.count() == 3

    # the pay report's active minutes are the pages' measured times (within a second)
    rows = {row.panel_id: row for row in pay_report(study=study).rows}
    for pid, times in measured.items():
        assert len(times) == rows[pid].items == 3
        assert abs(rows[pid].active_minutes * 60_000 - sum(times)) < 1000
        assert abs(rows[pid].active_ms - sum(times)) < 1000
    assert max(t for times in measured.values() for t in times) > 300  # the page did measure time
    assert rows["5f0000000000000000000002"].code == "SCRN5678"


def test_a_participants_last_label_leads_to_their_code_without_a_refused_request(live_server, browser):
    # At their quota the submit's answer says finished: the page went on to ask for a next item anyway, which
    # the study refuses a completed participant (403, an error in the console), and only then to the end page.
    cache.clear()
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=4)
    study = participants.panel_study_open(campaign=campaign, panel="prolific", consent_text="I agree.", item_quota=2,
                                          completion_code="QUOTA123")
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    context.route(f"{PROLIFIC}**", lambda route: route.fulfill(status=200, body="Prolific", content_type="text/plain"))
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors, refused = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: refused.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(_link(live_server, study, "5f0000000000000000000009"))
    page.check("#consent-box")
    page.click("#consent-submit")
    page.click("#instructions-done")
    page.wait_for_selector("#item")
    _label_until_done(page, [])
    page.wait_for_url(f"{PROLIFIC}**", timeout=TIMEOUT_MS)
    context.close()
    assert Participant.objects.get().state == "completed"
    assert PairwiseLabel.objects.filter(annotator=Participant.objects.get().user).count() == 2
    assert not refused and not errors, (refused, errors)


def test_a_signing_studys_participant_enters_with_the_panels_signature_and_comes_back_without_it(live_server, browser):
    # Refused without the signature (a page that names no secret and no id), admitted with it; the same browser
    # then resumes from the unsigned link, another browser does not.
    cache.clear()
    campaign = pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=3)
    study = participants.panel_study_open(campaign=campaign, panel="generic", consent_text="I agree.")
    secret = participants.panel_study_signing_set(study=study, required=True)
    base = f"{live_server.url}/annotate/p/{study.entry_token}/?pid=P7"
    sig = entry_signature(secret=secret, entry_token=study.entry_token, panel_id="P7")
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    assert page.goto(base).status == 403
    refusal = page.content()
    assert "not signed for your id" in page.inner_text("main")
    assert secret not in refusal and "P7" not in page.inner_text("main") and not Participant.objects.exists()
    page.goto(f"{base}&sig={sig}")
    page.check("#consent-box")
    page.click("#consent-submit")
    page.wait_for_selector("#instructions-done")
    assert page.goto(base).status == 200  # the same browser, the unsigned link: their step
    assert page.locator("#instructions-done").is_visible()
    context.close()
    other = browser.new_context().new_page()
    assert other.goto(base).status == 403
    other.context.close()
    assert Participant.objects.count() == 1

"""Pages: the annotator's queue and labelling page, the researcher's campaign list, dashboards,
exports and adjudication; each role reaches only its pages."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import dashboard_cache, selectors, services
from annotation.choices import CampaignKind
from annotation.kinds import kind_for
from annotation.label_models import STRATEGIES
from annotation.models import Adjudication, Campaign
from tests.annotation.factories import (
    Catalogue,
    faithfulness_campaign,
    image_campaign,
    pairwise_campaign,
    strategy_campaign,
    tig_campaign,
)
from tests.annotation.helpers import annotators, fill
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


def test_queue_lists_the_open_campaigns_of_the_annotator(client):
    (ann,) = annotators(1)
    mine = pairwise_campaign(Catalogue(n_tasks=1), annotators=[ann], n_items=1)
    pairwise_campaign(Catalogue(n_tasks=1), n_items=1)  # not open to ann
    body = login(client, ann).get("/annotate/").content.decode()
    assert mine.name in body and body.count("/annotate/c/") == 1


def test_the_queue_offers_to_continue_a_campaign_the_annotator_has_labelled_in(client):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=2), annotators=[ann], n_items=3)
    login(client, ann)
    assert ">Start</a>" in client.get("/annotate/").content.decode()
    assignment = services.assignment_next(campaign=campaign, annotator=ann)
    services.label_submit(token=assignment.token, annotator=ann, idempotency_key=uuid.uuid4(), answer={"choice": "A"})
    body = client.get("/annotate/").content.decode()  # one label given, none held
    assert ">Continue</a>" in body and ">Start</a>" not in body


def test_the_labelling_page_carries_the_api_addresses_and_the_keys(client):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[ann], n_items=1, instructions="Judge **one** dimension.")
    body = login(client, ann).get(f"/annotate/c/{campaign.pk}/").content.decode()
    assert f"/annotate/api/campaigns/{campaign.pk}/next" in body
    assert "<strong>one</strong>" in body and "<kbd>T</kbd>" in body and "annotate.js" in body


def test_the_labelling_page_has_one_heading_naming_the_campaign(client):
    # The page had no <h1> (its headings were the hidden overlays' <h2>s): a screen reader listing headings
    # found none for the page itself.
    (ann,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[ann], n_items=1)
    body = login(client, ann).get(f"/annotate/c/{campaign.pk}/").content.decode()
    assert body.count("<h1") == 1 and f'<h1 class="work-title"><strong>{campaign.name}</strong>' in body


def test_the_keys_overlay_gives_each_key_its_own_cap(client):
    (ann,) = annotators(1)
    campaign = tig_campaign(Catalogue(n_tasks=1), annotators=[ann])
    body = login(client, ann).get(f"/annotate/c/{campaign.pk}/").content.decode()
    assert "<kbd>1</kbd> <kbd>2</kbd> <kbd>3</kbd>" in body and "<kbd>(action" not in body


def test_the_keys_overlay_says_that_a_mark_moves_on_to_the_next_row(client):
    # annotate.js moves the focus to the next criterion (TIG audit) or component (U-O-S) after a mark; the
    # overlay did not say so, and following it literally (U-O-S: 3, Tab, 2, Tab, 1) left Originality unscored
    # and overwrote Surprise.
    (ann,) = annotators(1)
    campaign = tig_campaign(Catalogue(n_tasks=1), annotators=[ann])
    body = login(client, ann).get(f"/annotate/c/{campaign.pk}/").content.decode()
    assert "marking one, 1–4, moves on to the next by itself" in body
    assert dict(kind_for(CampaignKind.UOS_RATING).keys)["0–5"].endswith("the focus then moves on to the next")


def test_the_labelling_page_of_a_campaign_not_open_to_me_is_forbidden(client):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    assert login(client, ann).get(f"/annotate/c/{campaign.pk}/").status_code == 403


def test_a_closed_campaign_sends_the_annotator_back_to_the_queue(client):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[ann], n_items=1, status=Campaign.Status.CLOSED)
    response = login(client, ann).get(f"/annotate/c/{campaign.pk}/")
    assert response.status_code == 302 and response["Location"] == "/annotate/"


@pytest.mark.parametrize("url", ["/annotate/campaigns/", "/annotate/campaigns/{pk}/", "/annotate/campaigns/{pk}/labels.csv"])
def test_annotators_are_kept_out_of_researcher_pages(client, alice, url):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    assert login(client, alice).get(url.format(pk=campaign.pk)).status_code == 403


def test_researchers_cannot_take_items(client, rita):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1, open_to_all_annotators=True)
    assert login(client, rita).get("/annotate/").status_code == 403
    assert login(client, rita).post(f"/annotate/api/campaigns/{campaign.pk}/next").status_code == 403


def test_campaign_list_shows_completion(client, rita):
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, n_items=2)
    fill(campaign, users[:1], lambda u, a: {"choice": "A"})
    body = login(client, rita).get("/annotate/campaigns/").content.decode()
    assert campaign.name in body and "2 / 6" in body


@pytest.fixture
def every_kind(media_root):
    users = annotators(3)
    catalogue = Catalogue(n_tasks=2)
    faith, renders = faithfulness_campaign(catalogue, annotators=users)
    campaigns = [
        pairwise_campaign(catalogue, annotators=users),
        tig_campaign(catalogue, annotators=users),
        faith,
        image_campaign(catalogue, renders, annotators=users),
        strategy_campaign(catalogue, annotators=users),
    ]
    answers = {
        "text_pairwise": lambda u, a: {"choice": ["A", "B", "tie"][(a.item.position + len(u.username)) % 3]},
        "image_preference": lambda u, a: {"choice": ["A", "B"][(a.item.position + int(u.username[-1])) % 2]},
        "faithfulness": lambda u, a: {"score": 1 + (a.item.position + int(u.username[-1])) % 5},
        "tig_audit": lambda u, a: {"criteria": {c: "pass" for c in ("cluster_validity", "visual_specificity", "faithfulness",
                                                                    "non_leakage", "usefulness_for_judging")},
                                   "overall_action": "revise" if u.username == "ann1" else "accept",
                                   "revision_note": "sharpen the wording"},
        "strategy": lambda u, a: {"strategies": {"style_transfer": "incidental"} if int(u.username[-1]) % 2 else {}},
    }
    for campaign in campaigns:
        fill(campaign, users, answers[campaign.kind])
    return campaigns


def test_every_kinds_dashboard_renders_its_numbers(client, rita, every_kind):
    login(client, rita)
    for campaign in every_kind:
        response = client.get(f"/annotate/campaigns/{campaign.pk}/")
        assert response.status_code == 200, campaign.kind
        body = response.content.decode()
        assert "Fleiss κ" in body and "Per-annotator quality" in body
    faith_body = client.get(f"/annotate/campaigns/{every_kind[2].pk}/").content.decode()
    assert "ICC(A,1)" in faith_body or "ICC(1,1)" in faith_body
    assert "Pass rate by model" in faith_body


def test_the_dashboard_says_there_is_no_judge_run_when_the_leaderboard_has_none(client, rita):
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users)
    fill(campaign, users, lambda u, a: {"choice": "A"})
    body = login(client, rita).get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    assert "No judge run yet" in body


def test_the_dashboard_joins_judge_outcomes_supplied_by_the_leaderboard(client, rita, monkeypatch):
    from leaderboard.ekphrasis.selectors import JudgePairOutcome

    users = annotators(3)
    catalogue = Catalogue(n_tasks=1)
    campaign = pairwise_campaign(catalogue, annotators=users)
    fill(campaign, users, lambda u, a: {"choice": "A" if not a.swapped else "B"})  # canonical A unanimously
    # the leaderboard's own record type, responses in its (x, y) order
    outcomes = [JudgePairOutcome(i.task.external_id, i.dimension, max(i.response_a_id, i.response_b_id),
                                 min(i.response_a_id, i.response_b_id), i.response_a_id)
                for i in campaign.items.all()]
    scores = {m.pk: float(-i) for i, m in enumerate(catalogue.models)}
    # the leaderboard's reads as each annotation module holds them (the dashboard's cache reads outcomes itself)
    monkeypatch.setattr(selectors, "judge_pair_outcomes", lambda task_set, dimension: outcomes)
    monkeypatch.setattr(dashboard_cache, "judge_pair_outcomes", lambda task_set, dimension: outcomes)
    monkeypatch.setattr(selectors, "judge_model_scores", lambda task_set, dimension: scores)
    body = login(client, rita).get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    assert "No judge run yet" not in body
    assert "100.0%</strong> = 3 / 3 pairs" in body


def test_the_dashboard_query_count_does_not_grow_with_labels(client, rita):
    def queries(n_tasks):
        users = annotators(3, prefix=f"q{n_tasks}-")
        campaign = pairwise_campaign(Catalogue(n_tasks=n_tasks), annotators=users)
        fill(campaign, users, lambda u, a: {"choice": "B"})
        login(client, rita)
        # A new session's first request reads its user apart (then one statement with the session, PostgreSQL).
        assert client.get(f"/annotate/campaigns/{campaign.pk}/").status_code == 200
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"/annotate/campaigns/{campaign.pk}/").status_code == 200
        return len(ctx.captured_queries)

    assert queries(1) == queries(3)


def test_labels_export_downloads_jsonl_and_csv(client, rita):
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, n_items=1)
    fill(campaign, users, lambda u, a: {"choice": "tie"})
    login(client, rita)
    jsonl = client.get(f"/annotate/campaigns/{campaign.pk}/labels.jsonl")
    csv_ = client.get(f"/annotate/campaigns/{campaign.pk}/labels.csv")
    assert jsonl["Content-Type"].startswith("application/x-ndjson") and len(jsonl.content.decode().splitlines()) == 3
    assert csv_["Content-Type"].startswith("text/csv") and len(csv_.content.decode().splitlines()) == 4


def test_a_researcher_sends_an_item_to_adjudication_and_resolves_it(client, rita):
    users = annotators(3)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, n_items=1)
    wanted = iter(["A", "B", "tie"])
    for user in users:
        assignment = services.assignment_next(campaign=campaign, annotator=user)
        choice = next(wanted)
        shown = choice if not assignment.swapped or choice == "tie" else {"A": "B", "B": "A"}[choice]
        services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(), answer={"choice": shown})
    item = campaign.items.get()
    login(client, rita)
    assert "Send to adjudication" in client.get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    client.post(f"/annotate/campaigns/{campaign.pk}/adjudication/request", {"item": item.pk, "note": "split"})
    client.post(f"/annotate/campaigns/{campaign.pk}/adjudication/resolve", {"item": item.pk, "outcome": "tie", "note": "both weak"})
    assert Adjudication.objects.get(item=item).outcome == "tie"


def test_a_strategy_item_is_resolved_with_every_strategy_it_shows(client, rita):
    """A strategy outcome is its codes joined by "+" (all seven: 140 characters), typed in the dashboard's
    box. The column held 40: PostgreSQL refused a longer outcome (a DataError, the resolve form a 500);
    SQLite stored it."""
    users = annotators(3)
    campaign = strategy_campaign(Catalogue(n_tasks=1), annotators=users)
    answers = dict(zip(users, [{}, {"style_transfer": "central"}, {"medium_adaptation": "incidental"}], strict=True))
    fill(campaign, users, lambda user, assignment: {"strategies": answers[user]})  # three outcomes: no majority
    item = campaign.items.first()
    login(client, rita)
    client.post(f"/annotate/campaigns/{campaign.pk}/adjudication/request", {"item": item.pk})
    response = client.post(f"/annotate/campaigns/{campaign.pk}/adjudication/resolve",
                           {"item": item.pk, "outcome": "+".join(STRATEGIES), "note": ""})
    assert response.status_code == 302
    outcome = Adjudication.objects.get(item=item).outcome
    assert outcome == "+".join(sorted(STRATEGIES))
    assert len(outcome) <= Adjudication._meta.get_field("outcome").max_length


@pytest.mark.parametrize("action", ["request", "resolve"])
@pytest.mark.parametrize("item", ["9" * 30, "-1", "abc", ""])
def test_an_adjudication_form_naming_no_possible_item_says_so_and_is_never_a_500(client, rita, action, item):
    # An id past 64 bits reached the lookup: SQLite's OverflowError was a 500. An invalid form said nothing.
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    login(client, rita)
    response = client.post(f"/annotate/campaigns/{campaign.pk}/adjudication/{action}", {"item": item, "outcome": "tie"})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert ("Not sent to adjudication: Item — " if action == "request" else "Not resolved: Item — ") in page
    assert not Adjudication.objects.exists()


def _split_pairwise_item(users, flag_note=""):
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=users, n_items=1)
    wanted = iter(["A", "B", "tie"])
    for k, user in enumerate(users):
        assignment = services.assignment_next(campaign=campaign, annotator=user)
        choice = next(wanted)
        shown = choice if not assignment.swapped or choice == "tie" else {"A": "B", "B": "A"}[choice]
        answer = {"choice": shown}
        if flag_note and k == 0:
            answer["flag"] = {"reason": "field_dimension_mismatch", "note": flag_note}
        services.label_submit(token=assignment.token, annotator=user, idempotency_key=uuid.uuid4(), answer=answer)
    return campaign, campaign.items.get()


def test_adjudication_lists_items_as_task_and_dimension_with_no_outcome_preselected(client, rita):
    users = annotators(3, prefix="adj")
    campaign, item = _split_pairwise_item(users)
    login(client, rita)
    client.post(f"/annotate/campaigns/{campaign.pk}/adjudication/request", {"item": item.pk, "note": "split"})
    body = client.get(f"/annotate/campaigns/{campaign.pk}/").content.decode()
    assert item.key not in body
    assert f"{item.task.external_id} · {item.get_dimension_display()}" in body
    assert f"/annotate/campaigns/{campaign.pk}/items/{item.pk}/" in body
    assert '<option value="" selected disabled>— choose the outcome —</option>' in body
    assert body.count(" selected") == body.count("selected disabled")


def test_the_item_page_shows_what_annotators_saw_with_labels_flags_and_notes_but_no_model(client, rita):
    users = annotators(3, prefix="seen")
    campaign, item = _split_pairwise_item(users, flag_note="visual field truncated")
    login(client, rita)
    body = client.get(f"/annotate/campaigns/{campaign.pk}/items/{item.pk}/").content.decode()
    assert item.response_a.core_idea in body or item.response_a.visual_description in body
    assert "visual field truncated" in body
    for user in users:
        assert user.username in body
    for model in (item.response_a.subject_model.display_name, item.response_b.subject_model.display_name):
        assert model not in body
    assert client.get(f"/annotate/campaigns/{campaign.pk}/items/999999/").status_code == 404


def test_an_annotator_cannot_open_the_item_page(client):
    users = annotators(3, prefix="peek")
    campaign, item = _split_pairwise_item(users)
    login(client, users[0])
    assert client.get(f"/annotate/campaigns/{campaign.pk}/items/{item.pk}/").status_code == 403


def test_strategy_outcomes_read_as_strategy_names():
    from annotation.templatetags.annotation_format import outcome_label

    assert outcome_label("constraint_literalization+style_transfer") == "Constraint literalization + Style transfer"
    assert outcome_label("none") == "no strategy"
    assert outcome_label("tie") == "tie"


def test_the_labelling_page_is_never_stored_for_back_after_logout(client):
    # The page holds the item and the answer being chosen: stored (no Cache-Control), Back after a logout
    # showed them to the next user of the browser.
    (ann,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[ann], n_items=1)
    page = login(client, ann).get(f"/annotate/c/{campaign.pk}/")
    assert page.status_code == 200
    assert "no-store" in page["Cache-Control"]

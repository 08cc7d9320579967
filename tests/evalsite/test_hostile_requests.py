"""Hostile requests the outside probe sent get a 400 or 404 with a JSON or HTML error, and nothing is
written or handed out: NUL in tokens, deep and non-object JSON bodies, a NUL in a flag note, and
non-integer ids in the comparison page's query string."""

from __future__ import annotations

import json
import re
import uuid
from urllib.parse import urlencode

import pytest

from annotation.label_models import Label
from annotation.models import Assignment
from evalsite.json_body import MAX_BODY_BYTES
from evalsite.request_checks import MAX_ADDRESS_CHARS
from leaderboard.api_contract import MAX_SEED
from tests.annotation.factories import Catalogue, pairwise_campaign
from tests.annotation.helpers import annotators
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def login(client, user):
    assert client.login(username=user.username, password=PASSWORD)
    return client


@pytest.fixture
def annotator_client(client):
    (ann,) = annotators(1)
    campaign = pairwise_campaign(Catalogue(n_tasks=1), annotators=[ann], n_items=2)
    return login(client, ann), campaign


def written() -> tuple[int, int]:
    return Assignment.objects.count(), sum(model.objects.count() for model in Label.__subclasses__())


def post_json(client, url, text: str):
    return client.post(url, text, content_type="application/json")


@pytest.mark.parametrize("url", [
    "/annotate/media/%00/A", "/annotate/media/abc%00def/A",
    "/annotate/api/assignments/%00/submit", "/annotate/api/assignments/tok%00en/skip",
])
def test_a_nul_in_a_token_is_refused_without_a_server_error(annotator_client, url):
    client, _ = annotator_client
    before = written()
    response = client.post(url, "{}", content_type="application/json") if "/api/" in url else client.get(url)
    assert response.status_code in (400, 404)
    assert written() == before


def test_a_token_that_is_not_token_shaped_is_a_json_404_on_api_paths(annotator_client):
    client, _ = annotator_client
    response = post_json(client, "/annotate/api/assignments/" + "x" * 300 + "/submit", "{}")
    assert response.status_code == 404 and response.json()["error"] == "not_found"


def test_a_submit_body_nested_5000_deep_is_a_400(annotator_client):
    client, campaign = annotator_client
    token = post_json(client, f"/annotate/api/campaigns/{campaign.pk}/next", "{}").json()["assignment"]["token"]
    before = written()
    body = '{"idempotency_key": "%s", "answer": %s}' % (uuid.uuid4(), "[" * 5000 + "]" * 5000)
    response = post_json(client, f"/annotate/api/assignments/{token}/submit", body)
    assert response.status_code == 400 and "deeper than" in response.json()["detail"]
    assert written() == before


@pytest.mark.parametrize("body", ["[]", '[{"progress": false}]', '"text"', "1", '{"progress": "maybe"}'])
def test_a_next_body_that_is_not_a_valid_object_hands_out_nothing(annotator_client, body):
    client, campaign = annotator_client
    response = post_json(client, f"/annotate/api/campaigns/{campaign.pk}/next", body)
    assert response.status_code == 400
    assert written() == (0, 0)


@pytest.mark.parametrize("content_type", ["multipart", "urlencoded"])
def test_a_form_body_sent_to_a_json_endpoint_is_a_415_and_hands_out_nothing(annotator_client, content_type):
    client, campaign = annotator_client
    url = f"/annotate/api/campaigns/{campaign.pk}/next"
    response = (client.post(url, {"progress": "true"}) if content_type == "multipart"
                else client.post(url, "progress=true", content_type="application/x-www-form-urlencoded"))
    assert response.status_code == 415
    assert written() == (0, 0)


def test_a_nul_in_a_flag_note_is_a_400_and_stores_no_label(annotator_client):
    client, campaign = annotator_client
    token = post_json(client, f"/annotate/api/campaigns/{campaign.pk}/next", "{}").json()["assignment"]["token"]
    before = written()
    body = json.dumps({"idempotency_key": str(uuid.uuid4()),
                       "answer": {"choice": "A", "flag": {"reason": "other", "note": "bad\x00note"}}})
    response = post_json(client, f"/annotate/api/assignments/{token}/submit", body)
    assert response.status_code == 400 and "NUL" in response.json()["detail"]
    assert written() == before


@pytest.mark.parametrize("text", ['{"a": NaN}', '{"a": 1, "a": 2}', '{"a": "\\ud800"}', "{nope"])
def test_an_api_body_that_is_not_strict_json_is_a_400(annotator_client, text):
    client, campaign = annotator_client
    response = post_json(client, f"/annotate/api/campaigns/{campaign.pk}/next", text)
    assert response.status_code == 400
    assert written() == (0, 0)


def test_an_api_body_over_the_size_limit_is_a_400(annotator_client):
    client, campaign = annotator_client
    response = post_json(client, f"/annotate/api/campaigns/{campaign.pk}/next",
                         json.dumps({"progress": True, "pad": "x" * MAX_BODY_BYTES}))
    assert response.status_code == 400 and written() == (0, 0)


# the bare address (no query at all) goes to the picker on the leaderboard list (test_results_pages)
@pytest.mark.parametrize("query", ["?a=abc&b=1", "?a=1.5&b=1", "?a=1", "?a=&b=", "?a=99999999999999999999999&b=1"])
def test_compare_with_ids_that_are_not_integers_is_an_html_400(client, rita, query):
    response = login(client, rita).get(f"/leaderboards/compare/{query}")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html") and "Bad request" in response.content.decode()


def test_a_nul_in_a_query_string_is_a_400_before_any_view(client, adam):
    response = login(client, adam).get("/admin/leaderboard/task/?q=%00")
    assert response.status_code == 400


@pytest.mark.parametrize("query", ["?run=99999999999999999999", "?id__in=1,99999999999999999999",
                                   "?run=-9223372036854775809", f"?run={'9' * 4400}", "?e=1&run=99999999999999999999"])
def test_an_admin_change_list_lookup_past_every_id_is_the_admins_incorrect_lookup_redirect(client, adam, query):
    # SQLite raised OverflowError (a 500) on a foreign key's or an __in list's out-of-range integer.
    response = login(client, adam).get(f"/admin/c2/c2sample/{query}")
    assert response.status_code == 302 and response["Location"] == "/admin/c2/c2sample/?e=1"
    assert client.get(response["Location"]).status_code == 200


@pytest.mark.parametrize("query", ["?run=7", "?id__in=1,9223372036854775807", "?q=99999999999999999999"])
def test_an_admin_change_list_lookup_within_the_id_range_answers_the_list_not_a_redirect(client, adam, query):
    response = login(client, adam).get(f"/admin/c2/c2sample/{query}")
    assert response.status_code == 200 and 'id="changelist"' in response.content.decode()


def test_a_missing_page_is_an_html_404_and_a_missing_api_object_a_json_404(client, rita):
    login(client, rita)
    page = client.get("/no/such/page/")
    api = client.get("/annotate/api/campaigns/999999/progress")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
    assert api.status_code in (403, 404) and api["Content-Type"] == "application/json"


@pytest.mark.parametrize("selected", ["abc", "99999999999999999999999", "1.5", "²"])
def test_an_admin_action_on_a_selected_row_that_is_no_id_is_a_400_and_changes_nothing(client, adam, selected):
    # Django filtered pk__in with it: ValueError ("abc") or SQLite's OverflowError, a 500.
    from annotation.models import Campaign

    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    response = login(client, adam).post("/admin/annotation/campaign/", {
        "action": "close_campaigns", "_selected_action": [str(campaign.pk), selected]})
    assert response.status_code == 400 and "Bad request" in response.content.decode()
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.Status.OPEN


def test_an_admin_action_on_selected_ids_still_runs(client, adam):
    from annotation.models import Campaign

    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    response = login(client, adam).post("/admin/annotation/campaign/", {
        "action": "resume_texts", "_selected_action": [str(campaign.pk), "999999"]}, follow=True)
    assert response.status_code == 200
    assert [str(m) for m in response.context["messages"]] == [f"{campaign}: not paused for review; nothing to resume."]
    assert Campaign.objects.get(pk=campaign.pk).status == Campaign.Status.OPEN


def _seeded_form(kind: str) -> tuple[str, dict, type]:
    """A start form of the pages, valid but for its seed: its URL, its fields, and the model it creates."""
    from leaderboard.c2.models import C2Run
    from leaderboard.c2.services.imports import c2_tasks_import
    from leaderboard.ekphrasis.models import JudgeRun
    from tests.leaderboard.judging_factories import population

    if kind == "judge run":
        task_set, _ = population(n_models=2, n_tasks=1)
        return "/runs/new/", {"task_set": task_set.pk, "judge": "simulated", "dimensions": "U",
                              "budget_per_task": 1, "novelty_anchor": "tig"}, JudgeRun
    if kind == "C² run":
        task_set, _ = c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] A door in the sea.\n",
                                      task_set_name="c2-seeds", version="1")
        return "/c2/runs/new/", {"task_set": task_set.pk, "models": "simulated-one", "samples": 1, "template": "standard",
                                 "rater": "simulated", "surprise_policy": "zero"}, C2Run
    if kind == "EASEL run":
        from leaderboard.easel import services as easel_services
        from leaderboard.easel.models import EaselRun

        suite, _ = easel_services.easel_suite_create(seed=0, per_category={"programmatic": 1}, name="easel-seeds")
        return "/easel/runs/new/", {"task_set": suite.pk, "agent": "blank_fill", "budget": "aligned"}, EaselRun
    campaign = pairwise_campaign(Catalogue(n_tasks=1), n_items=1)
    return f"/annotate/campaigns/{campaign.pk}/novelty-ablation", {"judge": "simulated"}, JudgeRun


@pytest.mark.parametrize("kind", ["judge run", "C² run", "EASEL run", "Novelty ablation"])
@pytest.mark.parametrize("seed", ["9" * 30, "-1", str(MAX_SEED + 1)])
def test_a_start_form_with_a_seed_out_of_range_says_so_and_starts_nothing(client, rita, kind, seed):
    # The pages' seed fields had no bounds (the API's are 0..2**31-1): 30 nines was a 500 (SQLite's
    # OverflowError on the insert). EASEL's form then took seeds up to 2**62, which its API refuses.
    url, fields, model = _seeded_form(kind)
    response = login(client, rita).post(url, {**fields, "seed": seed})
    assert response.status_code == 302 and not model.objects.exists()
    assert re.search(rf"(Run|Ablation) not started: [^<]*Seed — A seed is a whole number from 0 to {MAX_SEED:,}\.",
                     client.get(response["Location"]).content.decode())


@pytest.mark.parametrize("kind", ["judge run", "C² run", "EASEL run", "Novelty ablation"])
def test_a_refused_start_form_names_each_field_by_its_label_not_in_raw_bullets(client, rita, kind):
    # The message was form.errors.as_text(): "Run not started: * task_set * This field is required. * judge …".
    url, fields, _ = _seeded_form(kind)
    response = login(client, rita).post(url, {"seed": "x"})
    page = client.get(response["Location"]).content.decode()
    assert re.search(r"(Run|Ablation) not started: [^<]*Seed — Enter a whole number\.", page)
    required = {"C² run": "Rater", "EASEL run": "Agent"}.get(kind, "Judge")
    assert "* seed" not in page and f"* {required.lower()}" not in page and f"{required} — This field is required." in page


def test_a_bad_drill_down_filter_is_a_400_naming_the_filter_by_its_label(client, rita):
    from leaderboard.ekphrasis import judge_runs
    from tests.leaderboard.judging_factories import population, simulated_run

    task_set, models = population(n_models=2, n_tasks=1)
    snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=2))
    response = login(client, rita).get(f"/leaderboards/{snapshot.pk}/tasks/{task_set.tasks.get().pk}/?page=0")
    body = response.content.decode()
    assert response.status_code == 400 and "Bad drill-down filter: Page — Ensure this value is greater than or equal to 1." in body


#: A query string that takes the whole address length the site accepts, percent-encoded at its most in a login
#: redirect's ``next`` ("=" is "%3D" there: three characters for one).
def _address(path: str, length: int) -> str:
    return f"{path}?q=" + "=" * (length - len(path) - 3)


@pytest.mark.parametrize("length", [MAX_ADDRESS_CHARS + 1, 16_001])
@pytest.mark.parametrize("signed_in", [False, True])
@pytest.mark.parametrize("path, shape", [("/leaderboards/", "text/html"), ("/api/v1/leaderboards/", "application/json")])
def test_an_address_over_the_limit_is_a_414_for_everyone(client, rita, signed_in, path, shape, length):
    # Anonymous, it was a 400: the login redirect carrying it as ``next`` passed Django's redirect limit
    # (16,000 characters); signed in, the page answered.
    if signed_in:
        login(client, rita)
    response = client.get(_address(path, length))
    assert response.status_code == 414 and response["Content-Type"].startswith(shape)
    assert f"{MAX_ADDRESS_CHARS:,} characters" in response.content.decode()


def test_an_address_at_the_limit_is_the_login_redirect_back_to_it_for_an_anonymous_visitor(client):
    address = _address("/leaderboards/", MAX_ADDRESS_CHARS)
    response = client.get(address)
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?" + urlencode({"next": address}, safe="/")


def test_an_address_at_the_limit_answers_a_signed_in_visitor(client, rita):
    assert login(client, rita).get(_address("/leaderboards/", MAX_ADDRESS_CHARS)).status_code == 200


@pytest.mark.parametrize("signed_in", [False, True])
@pytest.mark.parametrize("address", [_address("/leaderboards/", MAX_ADDRESS_CHARS + 1), "/leaderboards/%00"],
                         ids=["too-long", "nul"])
def test_a_page_refused_before_authentication_names_no_account(client, rita, signed_in, address,
                                                               django_assert_num_queries):
    # The 414 (and the other early refusals) answer before the session is read: who is asking is not known.
    # The page showed an anonymous visitor's "Log in" to a signed-in researcher; it shows no account menu
    # at all, for anyone, and looks nothing up to draw one.
    if signed_in:
        login(client, rita)
    with django_assert_num_queries(0):
        response = client.get(address)
    body = response.content.decode()
    assert response.status_code in (400, 414) and response["Content-Type"].startswith("text/html")
    assert "Start page" in body
    assert "Log in" not in body and "Log out" not in body and "rita" not in body
    assert "/annotate/campaigns/" not in body and "/accounts/login/" not in body

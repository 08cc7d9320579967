"""The researcher's view (leaderboard/overview.py and its pages): the overview home with one block per
registered protocol, search, model profiles on every protocol, two-model comparison, and their API; roles,
bad ids and bounded queries."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from leaderboard import overview
from leaderboard.protocols import protocols
from tests.leaderboard.researcher_world import three_protocol_world, world_delete

pytestmark = pytest.mark.django_db

#: Queries of the overview home for a researcher, whatever the number of models, runs and snapshots: session
#: and user (2), roles (1), demo flag (1), Ekphrasis (1), EASEL (2 on a cached board, 5 on a miss), C² (2 + 1
#: on a miss). Counted on this world; the bound is what the test enforces.
HOME_QUERY_BOUND = 14


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """Built once for the module (a judge run, two C² runs and an EASEL suite take seconds) and removed after it."""
    with django_db_blocker.unblock():
        built = three_protocol_world()
    yield built
    with django_db_blocker.unblock():
        world_delete(built)


@pytest.fixture
def researcher(client, rita):
    client.force_login(rita)
    return client


def test_the_home_page_shows_one_block_per_registered_protocol_with_its_best_model_and_interval(researcher, world):
    body = researcher.get("/").content.decode()
    for protocol in protocols():
        assert f'id="board-{protocol.kind}"' in body
    assert body.count('class="headline">Best:') == len(protocols())
    assert "margin" in body and 'class="ci">[' in body
    assert f'href="/models/{world.models[0].pk}/"' in body
    assert "simulated" in body and "Latest leaderboards" in body


def test_each_blocks_compare_link_lands_on_a_compare_page_or_its_section(researcher, world):
    # Ekphrasis's compare starts from the picker on the leaderboard list (/leaderboards/#compare): the link's
    # fragment must name an element of that page, or it opens at the top of the list
    body = researcher.get("/").content.decode()
    links = {href for href in re.findall(r'href="([^"]+)"', body) if "compare" in href}
    assert len(links) == len(protocols())
    for href in links:
        path, _, fragment = href.partition("#")
        page = researcher.get(path)
        assert page.status_code == 200, href
        if fragment:
            assert f'id="{fragment}"' in page.content.decode(), href


def test_the_home_page_makes_a_bounded_number_of_queries(researcher, world):
    researcher.get("/")  # the first visit computes and caches the EASEL and C² summaries
    with CaptureQueriesContext(connection) as captured:
        assert researcher.get("/").status_code == 200
    print(f"home page: {len(captured)} queries")
    assert len(captured) <= HOME_QUERY_BOUND


def test_an_annotator_sees_no_board_and_no_model_name_on_the_home_page(client, alice, world):
    client.force_login(alice)
    body = client.get("/").content.decode()
    assert "My work" in body
    assert "board-ekphrasis" not in body and world.models[0].display_name not in body


def test_search_finds_models_and_task_sets_by_part_of_their_name(researcher, world):
    body = researcher.get("/search/?q=simulated-m").content.decode()
    for m in world.models:
        assert f'href="/models/{m.pk}/"' in body
    body = researcher.get("/search/?q=easel-world").content.decode()
    assert f'href="/task-sets/{world.easel_suite.pk}/"' in body
    assert "No subject model matches" in researcher.get("/search/?q=zzzz").content.decode()


def test_a_model_profile_lists_the_model_on_every_protocol_with_interval_rank_and_runs(researcher, world):
    model = world.models[0]
    profile = overview.model_profile(model)
    assert {r.protocol for r in profile["results"]} == {"Ekphrasis", "EASEL", "C²"}
    for result in profile["results"]:
        assert result.low <= result.value <= result.high
        assert 1 <= result.rank <= result.of and result.runs
    body = researcher.get(f"/models/{model.pk}/").content.decode()
    assert body.count('class="card model-result"') == len(profile["results"])
    assert f"/easel/runs/{world.easel_runs[0].pk}/" in body and f"/c2/runs/{world.c2_standard.pk}/" in body



def test_a_profile_breakdown_has_an_n_column_only_where_its_rows_give_n(researcher, world):
    """C² gives each task type's prompts; Ekphrasis and EASEL give no n per row, and their tables had an
    n column with every cell empty."""
    body = researcher.get(f"/models/{world.models[0].pk}/").content.decode()
    cards = {m.group(1): m.group(2) for m in re.finditer(
        r'<section class="card model-result" data-protocol="([^"]+)">(.*?)</section>', body, re.S)}
    assert set(cards) == {"Ekphrasis", "EASEL", "C²"}
    n_header = '<th class="num">n</th>'
    assert n_header in cards["C²"] and '<td class="num"></td>' not in cards["C²"]
    for protocol in ("Ekphrasis", "EASEL"):
        assert "breakdown" in cards[protocol] and n_header not in cards[protocol]
        assert '<td class="num"></td>' not in cards[protocol]

def test_the_profile_rank_is_the_boards_rank(world):
    results = {r.protocol: r for r in overview.model_profile(world.models[0])["results"] if "text" in r.measure or r.protocol != "C²"}
    snapshot = world.snapshot.payload
    assert results["Ekphrasis"].rank == snapshot["order"].index(snapshot["model_ids"].index(world.models[0].pk)) + 1
    assert results["EASEL"].rank == 1  # m0 paints every reference best


def test_two_models_are_compared_on_every_board_both_are_ranked_on(researcher, world):
    a, b = world.models[0], world.models[1]
    pair = overview.model_pair(a, b)
    assert {p.left.protocol for p in pair["shared"]} == {"Ekphrasis", "EASEL", "C²"}
    for p in pair["shared"]:
        assert p.difference == pytest.approx(p.left.value - p.right.value)
    body = researcher.get(f"/models/{a.pk}/compare/{b.pk}/").content.decode()
    assert body.count("<tr data-protocol=") == len(pair["shared"])
    assert researcher.get(f"/models/{a.pk}/compare/?other={b.pk}").url == f"/models/{a.pk}/compare/{b.pk}/"


def test_the_profile_api_gives_the_pages_numbers(researcher, world):
    data = researcher.get(f"/api/v1/models/{world.models[0].pk}/profile").json()
    assert {r["protocol"] for r in data["results"]} == {"Ekphrasis", "EASEL", "C²"}
    assert all(r["low"] <= r["value"] <= r["high"] for r in data["results"])
    pair = researcher.get(f"/api/v1/models/{world.models[0].pk}/compare?other={world.models[1].pk}").json()
    assert len(pair["shared"]) >= 3 and {"a", "b", "difference", "apart"} <= set(pair["shared"][0])


@pytest.mark.parametrize("url", ["/models/999999/", "/models/999999/compare/1/", "/api/v1/models/999999/profile",
                                 "/api/v1/models/1/compare?other=999999"])
def test_an_unknown_model_is_a_404(researcher, world, url):
    assert researcher.get(url).status_code == 404


def test_the_bare_compare_url_is_a_page_to_pick_the_other_model(researcher, world):
    a, b = world.models[0], world.models[1]
    response = researcher.get(f"/models/{a.pk}/compare/")
    body = response.content.decode()
    assert response.status_code == 200 and 'id="compare-other"' in body
    assert f'<option value="{b.pk}">' in body and f'<option value="{a.pk}">' not in body


@pytest.mark.parametrize("other", ["x", "999999", "self"])
def test_a_compare_choice_that_is_no_other_model_is_the_pick_page_saying_why(researcher, world, other):
    a = world.models[0]
    response = researcher.get(f"/models/{a.pk}/compare/?other={a.pk if other == 'self' else other}")
    assert response.status_code == 400
    assert 'id="compare-problem"' in response.content.decode() and 'id="compare-other"' in response.content.decode()


def test_a_non_numeric_compare_choice_is_a_400(researcher, world):
    assert researcher.get(f"/models/{world.models[0].pk}/compare/?other=x").status_code == 400
    assert researcher.get(f"/api/v1/models/{world.models[0].pk}/compare?other=x").status_code == 400


@pytest.mark.parametrize("url", ["/search/?q=simulated", "/models/{pk}/", "/models/{pk}/compare/{other}/",
                                 "/api/v1/models/{pk}/profile"])
def test_an_annotator_is_refused_every_researcher_view_page(client, alice, world, url):
    client.force_login(alice)
    path = url.format(pk=world.models[0].pk, other=world.models[1].pk)
    assert client.get(path).status_code == 403


def test_rank_set_is_the_central_range_of_the_rank_distribution():
    assert overview.rank_set_of([0.97, 0.03, 0.0]) == (1, 1)
    assert overview.rank_set_of([0.5, 0.45, 0.05]) == (1, 2)
    assert overview.rank_set_of([0.04, 0.5, 0.46]) == (2, 3)
    assert overview.rank_set_of([]) is None

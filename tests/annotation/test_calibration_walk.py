"""The human-calibrated boards walked with real objects behind them: a snapshot whose text-pairwise campaign's
labels join its judge's verdicts, a C² run with a U-O-S campaign on its samples and an EASEL canvas-similarity
campaign (tests/annotation/calibration_world.py), their models named by an attacker.

The site-wide walk (tests/evalsite/test_url_walk.py) reaches these addresses only at ids that answer 404, so the
code behind them never met a hostile input there. Here every page, export and API operation of the calibrated
boards and judge cards is sent hostile ids, every query field its view reads (``campaign``, ``style``) at hostile
values, odd ``Accept``/``Range`` headers and other methods, as anonymous, an annotator of the calibrated campaign,
a crowd participant and an admin. No answer may be a 5xx; a refusal names the problem and shows no traceback,
SQL or file path; an annotator or participant is refused every calibrated board, and nothing they are answered
names a model or carries a score; the exports keep the hostile names inert (CSV: no formula cell; LaTeX: no
command)."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.conf import settings
from django.test import Client

from leaderboard.easel.models import EaselRun
from leaderboard.models import SubjectModel
from tests.annotation.calibration_world import HOSTILE_MODELS, calibrated_world
from tests.annotation.helpers import signed_in_participant
from tests.conftest import kept_for_the_module
from tests.evalsite.test_url_walk import send_walked

pytestmark = pytest.mark.django_db

#: What no answer may show: a traceback, an exception's class, SQL, a driver's name or a path of this machine.
INTERNALS = re.compile(r"Traceback|File \"|\b(?:[A-Z]\w*Error|Exception)\b|\bSELECT\b|\bINSERT\b|\bFROM \"|psycopg|"
                       r"sqlite3|django\.db|/usr/|/site-packages/|" + re.escape(str(settings.BASE_DIR)))
#: Values of every query field the views read: not a number, empty, NUL, negative, zero, past 64 bits, not finite,
#: non-ASCII digits ("١٢", "１"), invalid UTF-8, a list, very long.
HOSTILE_VALUES = ["abc", "", "%00", "-1", "0", "99999999999999999999", "1e309", "NaN", "%D9%A1%D9%A2", "%EF%BC%91",
                  "%ff", "1,2", "%20%201", "x" * 5000]
#: Ids in a path: zero, past 64 bits, just past 63, non-ASCII digits (the int converter takes none of the last).
HOSTILE_IDS = ["0", "99999999999999999999", "9223372036854775808", "%D9%A1", "-1", "%00"]
ODD_HEADERS = [
    {"HTTP_RANGE": "bytes=99999999999999999999-,5-1,-0"}, {"HTTP_RANGE": "bytes=-0"},
    {"HTTP_IF_NONE_MATCH": 'W/"x", *, "'}, {"HTTP_IF_MODIFIED_SINCE": "Mon, 99 Foo 99999 99:99:99 GMT"},
    {"HTTP_ACCEPT": "text/csv;q=NaN, application/json;q=0, */*;q=abc"}, {"HTTP_ACCEPT": "application/xml"},
    {"HTTP_ACCEPT": "application/json"}, {"HTTP_ACCEPT_LANGUAGE": "zz;q=NaN"},
]
OTHER_METHODS = ["POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]


def board_urls(world) -> dict[str, list[str]]:
    """Each calibrated address (``{pk}`` where its id goes) with the ids that answer it."""
    s, r = world.snapshot.pk, world.c2_run.pk
    u, v = world.uos_campaign.pk, world.canvas_campaign.pk
    out = {"/annotate/calibration/judges/": [""], "/api/v1/judges/cards": [""],
           "/annotate/calibration/snapshots/{pk}/": [s], "/annotate/calibration/c2/runs/{pk}/": [r],
           "/api/v1/leaderboards/{pk}/calibrated": [s], "/api/v1/c2/runs/{pk}/calibrated": [r],
           "/api/v1/campaigns/{pk}/calibrated": [u, v]}
    for fmt in ("csv", "json", "tex"):
        out["/annotate/calibration/snapshots/{pk}/export." + fmt] = [s]
        out["/annotate/calibration/c2/runs/{pk}/export." + fmt] = [r]
    for fmt in ("csv", "json"):
        out["/annotate/campaigns/{pk}/calibrated." + fmt] = [u, v]
    return out


def hostile_requests(world) -> list[tuple[str, str, dict]]:
    """(method, url, headers): hostile ids and query values, odd headers and other methods at every address."""
    # the campaign of another board (a U-O-S campaign on a snapshot's page; the text campaign on a C² run's)
    wrong_campaign = {"snapshots": world.uos_campaign.pk, "c2": world.text_campaign.pk}
    sent = []
    for template, ids in board_urls(world).items():
        url, *others = [template.format(pk=pk) for pk in ids]  # the whole set at the first id, a GET at the others
        sent += [("GET", other, {}) for other in others]
        sent.append(("GET", url, {}))
        names = ["campaign", "style"] if "/snapshots/" in template else ["campaign"] if "/runs/" in template else []
        for name in names:
            sent += [("GET", f"{url}?{name}={value}", {}) for value in HOSTILE_VALUES]
            sent.append(("GET", f"{url}?{name}=1&{name}=2&{name}%5B%5D=1", {}))
        if not names:  # a query no view there reads
            sent.append(("GET", f"{url}?campaign=abc&style=%ff&page=-1", {}))
        sent += [("GET", f"{url}?campaign={pk}", {}) for key, pk in wrong_campaign.items() if f"/{key}/" in template]
        sent += [("GET", url, headers) for headers in ODD_HEADERS]
        sent += [(method, url, {}) for method in OTHER_METHODS]
        if "{pk}" in template:
            sent += [("GET", template.format(pk=value), {}) for value in HOSTILE_IDS]
            # an id of another kind of object (the text campaign's where a run's or a snapshot's goes), an unused one
            sent += [("GET", template.format(pk=pk), {}) for pk in (world.text_campaign.pk, world.c2_run.pk + 1000)]
    return sent


def refusal_requests(world) -> list[tuple[str, str, dict]]:
    """(method, url, headers) a reader without the researcher's role sends: every address at each of its ids, by
    each method, with a query naming another board's campaign and the style toggle, and asking for JSON."""
    sent = []
    for template, ids in board_urls(world).items():
        for url in (template.format(pk=pk) for pk in ids):
            sent += [(method, url, {}) for method in ["GET", *OTHER_METHODS]]
            sent += [("GET", f"{url}?campaign={world.text_campaign.pk}&style=1", {}),
                     ("GET", url, {"HTTP_ACCEPT": "application/json"}), ("GET", url, {"HTTP_RANGE": "bytes=0-100"})]
    return sent


def model_names() -> list[str]:
    """Every name a model or an EASEL agent goes by in the world (what a blinded reader must never see)."""
    names = [*SubjectModel.objects.values_list("display_name", flat=True),
             *EaselRun.objects.values_list("agent_name", flat=True)]
    # as a page, a JSON body or an export writes them: whole, HTML-escaped, and by a distinctive fragment
    # ("/C calc", not "calc": a random token on a refusal page, a CSRF or entry token, may hold those four letters)
    fragments = ["HYPERLINK", "onerror", "/C calc", "模型", "SUM(1+1)"]
    return sorted({n for n in names if n} | set(fragments))


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, tmp_path_factory):
    with kept_for_the_module(django_db_blocker, tmp_path_factory.mktemp("calibration-walk"), calibrated_world) as built:
        yield built


@pytest.fixture
def participant_client():
    return signed_in_participant()


def test_every_url_pattern_of_the_calibrated_boards_is_walked(world):
    """A calibrated address added later (read from the resolver) fails here until board_urls walks it."""
    from tests.evalsite.test_url_walk import site_routes

    patterns = set()
    for route in site_routes():
        if "calibrat" in route.template or "/judges/" in route.template:
            formats = next((p.regex.split("|") for p in route.parameters if p.name == "fmt"), [""])
            patterns |= {route.template.replace("{fmt}", fmt) for fmt in formats}
    assert len(patterns) >= 15 and patterns <= set(board_urls(world)), sorted(patterns - set(board_urls(world)))


@pytest.mark.parametrize("walker", ["anonymous", "annotator", "participant", "admin"])
def test_no_calibrated_board_answers_a_hostile_request_with_a_server_error_or_internals(
        world, adam, participant_client, walker):
    client = {"anonymous": Client(), "participant": participant_client}.get(walker) or Client()
    if walker in ("annotator", "admin"):
        client.force_login({"annotator": world.annotator, "admin": adam}[walker])
    problems = []
    requests = hostile_requests(world)
    for method, url, headers in requests:
        response, body = send_walked(client, method, url, headers, text=True)
        if response is None:
            problems.append(body)
            continue
        where = f"{method} {url[:160]} {headers} as {walker}: {response.status_code}"
        if response.status_code >= 500:
            problems.append(where)
        elif response.status_code >= 400 and INTERNALS.search(body):
            problems.append(f"{where} shows {INTERNALS.search(body)[0]!r}: {body[:300]}")
    assert len(requests) > 400
    assert not problems, f"{len(problems)} of {len(requests)}:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize("walker", ["annotator", "participant"])
def test_an_annotator_or_crowd_participant_is_refused_every_calibrated_board_and_sees_no_model(
        world, participant_client, walker):
    client = participant_client if walker == "participant" else Client()
    if walker == "annotator":
        client.force_login(world.annotator)
    names = model_names()
    problems = []
    for method, url, headers in refusal_requests(world):
        response, body = send_walked(client, method, url, headers, text=True)
        if response is None:
            problems.append(body)
            continue
        where = f"{method} {url[:120]} {headers} as {walker}: {response.status_code}"
        # refused (or, for a participant without an account, sent to sign in): never a board
        if response.status_code not in (302, 400, 401, 403, 404, 405, 406):
            problems.append(f"{where}: not refused")
        if response.status_code == 302 and not response["Location"].startswith("/accounts/login/"):
            problems.append(f"{where}: sent to {response['Location']}")
        problems += [f"{where}: shows {name!r}" for name in names if name in body or name in response.get(
            "Content-Disposition", "")]
        if re.search(r'"(?:score|calibrated|lam|rank_set|people|rater_only)"', body):
            problems.append(f"{where}: carries scores: {body[:200]}")
    assert not problems, "\n".join(problems[:40])


def test_a_researcher_loads_every_calibrated_board_of_the_world(world, rita):
    """The walk's ids are boards that answer: the hostile values above met the code behind them."""
    client = Client()
    client.force_login(rita)
    for template, ids in board_urls(world).items():
        for pk in ids:
            response = client.get(template.format(pk=pk))
            assert response.status_code == 200, (template, pk, response.content[:300])
    body = client.get(f"/api/v1/leaderboards/{world.snapshot.pk}/calibrated").json()
    novelty = body["dimensions"]["novelty"]["calibrated"]
    assert novelty["n_human"] > 0 and novelty["n_judge_unpaired"] >= 0  # labels joined to the judge's verdicts


def test_a_calibrated_api_answers_a_malformed_campaign_with_a_400_naming_the_field(world, rita):
    client = Client()
    client.force_login(rita)
    for url in (f"/api/v1/leaderboards/{world.snapshot.pk}/calibrated", f"/api/v1/c2/runs/{world.c2_run.pk}/calibrated"):
        for value in ("abc", "-1", "0", "99999999999999999999", "1e309", "NaN", "1.5"):
            response = client.get(f"{url}?campaign={value}")
            assert response.status_code == 400, (url, value, response.content[:300])
            assert "campaign" in response.json()["details"], (value, response.json())


def test_a_calibrated_page_or_export_answers_a_campaign_not_on_its_board_with_a_404_naming_the_campaign_parameter(
        world, rita):
    # the exports said the board had no campaign at all ("the snapshot has no text-pairwise campaign on its task
    # set"), when the id given in ?campaign= was the problem
    client = Client()
    client.force_login(rita)
    s, r = world.snapshot.pk, world.c2_run.pk
    for url, other in ((f"/annotate/calibration/snapshots/{s}/", world.uos_campaign.pk),
                       *[(f"/annotate/calibration/snapshots/{s}/export.{fmt}", "abc") for fmt in ("csv", "json", "tex")],
                       (f"/annotate/calibration/c2/runs/{r}/", world.text_campaign.pk),
                       *[(f"/annotate/calibration/c2/runs/{r}/export.{fmt}", "abc") for fmt in ("csv", "json", "tex")]):
        response = client.get(f"{url}?campaign={other}")
        assert response.status_code == 404, (url, response.content[:300])
        assert b"the id given in campaign" in response.content, (url, response.content[:300])


def test_calibrated_pages_show_hostile_model_names_as_inert_text(world, rita):
    from tests.leaderboard.test_hostile_names import event_handlers

    client = Client()
    client.force_login(rita)
    for url in ("/annotate/calibration/judges/", f"/annotate/calibration/snapshots/{world.snapshot.pk}/",
                f"/annotate/calibration/snapshots/{world.snapshot.pk}/?style=1",
                f"/annotate/calibration/c2/runs/{world.c2_run.pk}/"):
        page = client.get(url).content.decode()
        assert not event_handlers(page), (url, event_handlers(page))
        assert "<img src=x" not in page, url
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # the C² run's page names its models


def _formula_cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row
            if re.match(r"\s*[=+\-@\t\r]", cell) and not re.fullmatch(r"\s*[-+]?[0-9.eE+-]+", cell)]


def test_calibrated_csv_exports_hold_no_formula_cell(world, rita):
    client = Client()
    client.force_login(rita)
    for url, campaign, hostile in (
            (f"/annotate/calibration/snapshots/{world.snapshot.pk}/export.csv", world.text_campaign, True),
            (f"/annotate/calibration/c2/runs/{world.c2_run.pk}/export.csv", world.uos_campaign, True),
            (f"/annotate/campaigns/{world.uos_campaign.pk}/calibrated.csv", world.uos_campaign, True),
            (f"/annotate/campaigns/{world.canvas_campaign.pk}/calibrated.csv", world.canvas_campaign, False)):
        text = client.get(url).content.decode()
        cells = {cell for row in csv.reader(io.StringIO(text)) for cell in row}
        assert ("onerror" in text) == hostile, url  # the hostile model names are in it (the EASEL agents' are plain)
        assert "'" + campaign.name in cells, url  # and the campaign's hostile name, neutralised
        assert not _formula_cells(text), (url, _formula_cells(text))


def test_calibrated_latex_exports_escape_every_special_character_of_a_model_name(world, rita):
    from engine.latex import tex_escape

    client = Client()
    client.force_login(rita)
    for url, suffix in ((f"/annotate/calibration/snapshots/{world.snapshot.pk}/export.tex", ""),
                        (f"/annotate/calibration/c2/runs/{world.c2_run.pk}/export.tex", " c2")):
        text = client.get(url).content.decode()
        for bad in ("\\input{", "\\write18{", "^^5c", "<img", " $x$", "%#"):
            assert bad not in text, (url, bad)
        for name in HOSTILE_MODELS[1:]:
            assert tex_escape(name + suffix) in text, (url, name)


def test_calibrated_latex_exports_of_hostile_names_compile_with_pdflatex(world, rita, tmp_path):
    from tests.conftest import require_service
    from tests.leaderboard.test_exports import pdflatex_errors

    require_service("pdflatex")
    client = Client()
    client.force_login(rita)
    for name, url in (("snapshot", f"/annotate/calibration/snapshots/{world.snapshot.pk}/export.tex"),
                      ("c2", f"/annotate/calibration/c2/runs/{world.c2_run.pk}/export.tex")):
        table = tmp_path / f"{name}.tex"
        table.write_bytes(client.get(url).content)
        assert not pdflatex_errors(table), (name, pdflatex_errors(table))

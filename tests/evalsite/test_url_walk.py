"""Every URL pattern of the site, walked as anonymous, annotator, researcher and admin, with existing ids
and hostile values in its path parameters, hostile query strings, and hostile JSON and form bodies.

No answer may be a 5xx (or an exception), a refused request (4xx) may write nothing, and no hostile
body may write anything at all: not a label, not an assignment handed out, not a catalogue row. The
patterns are read from the resolver, so URL patterns added later (the EASEL and C² sub-apps) are
walked without a change here. The counts are printed (run with ``-s``) and recorded as properties.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from dataclasses import dataclass
from urllib.parse import urlencode

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RegexPattern, RoutePattern

from annotation import services
from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import TIGBuild
from tests.annotation.factories import Catalogue, faithfulness_campaign, pairwise_campaign
from tests.leaderboard.judging_factories import population, simulated_run

pytestmark = pytest.mark.django_db

HOSTILE_SEGMENTS = ["%00", "x" * 300, "..%2F%27%22%3Cscript%3E%ED%A0%80"]
PAST_EVERY_ID = "99999999999999999999"  # 10**20 - 1 > 2**63
HOSTILE_INTEGERS = ["0", PAST_EVERY_ID, "%00"]
HOSTILE_QUERIES = [
    "?a=abc&b=1.5&q=%27%22%3C&o=99&p=99999999999999999999&page=-1&pair=1,x&build=abc&renderer=%E2%80%8B&all=",
    "?a=%00&q=%00",
]
HOSTILE_JSON_BODIES = [
    b'{"k":' * 5000 + b"1" + b"}" * 5000,
    b'[{"progress": false}]',
    json.dumps({"idempotency_key": ["x"], "answer": "A", "time_on_item_ms": -5, "reason": {"x": 1},
                "progress": "maybe"}).encode(),
    json.dumps({"idempotency_key": "00000000-0000-0000-0000-000000000000",
                "answer": {"choice": "A", "flag": {"reason": "other", "note": "a\x00b"}}}).encode(),
    b'{"a": "\xff", "a": NaN}',
]
_FORM = {"item": "abc", "note": "x" * 5000, "seed": "1.5", "judge": "'; DROP TABLE x; --",
         "task_set": "99999999999999999999", "dimensions": "ZZZZ", "budget_per_task": "-1", "kind": "tasks",
         "outcome": "<script>", "_save": "Save", "username": "x" * 300, "password": "x"}
_NUL_FORM = {"note": "a\x00b", "q": "\x00", "item": "1\x00", "username": "adam\x00", "password": "p\x00"}
URLENCODED = "application/x-www-form-urlencoded"
#: (body, content type): None is the test client's multipart encoding.
HOSTILE_FORMS = [(_FORM, None), (_NUL_FORM, None), (urlencode(_NUL_FORM), URLENCODED), (urlencode(_FORM), URLENCODED)]
_ROUTE_PARAMETER = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")
_REGEX_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?P<body>(?:[^()\\]|\\.|\((?:[^()\\]|\\.)*\))*)\)")
_LITERAL_ALTERNATION = re.compile(r"[\w-]+(?:\|[\w-]+)*")


@dataclass(frozen=True)
class Parameter:
    name: str
    regex: str


@dataclass(frozen=True)
class Route:
    template: str  # the full path with {name} where each parameter goes
    parameters: tuple[Parameter, ...]
    callback: object


def _route_parts(pattern) -> tuple[str, list[Parameter]]:
    if isinstance(pattern, RoutePattern):
        route = str(pattern)
        parameters = [Parameter(m["name"], pattern.converters[m["name"]].regex) for m in _ROUTE_PARAMETER.finditer(route)]
        return _ROUTE_PARAMETER.sub(lambda m: "{" + m["name"] + "}", route.replace("{", "{{").replace("}", "}}")), parameters
    assert isinstance(pattern, RegexPattern)
    regex = pattern._regex
    parameters = [Parameter(m["name"], m["body"]) for m in _REGEX_GROUP.finditer(regex)]
    literal = _REGEX_GROUP.sub(lambda m: "\x01" + m["name"] + "\x02", regex).removeprefix("^").removesuffix("$")
    assert not re.search(r"(?<!\\)[*+?\[\](){}|]", literal), f"cannot build a path for the pattern {regex!r}"
    literal = re.sub(r"\\(.)", r"\1", literal).replace("{", "{{").replace("}", "}}")
    return literal.replace("\x01", "{").replace("\x02", "}"), parameters


def site_routes(patterns=None, prefix: str = "", inherited: tuple[Parameter, ...] = ()) -> list[Route]:
    routes = []
    for entry in get_resolver().url_patterns if patterns is None else patterns:
        template, parameters = _route_parts(entry.pattern)
        if isinstance(entry, URLResolver):
            routes += site_routes(entry.url_patterns, prefix + template, inherited + tuple(parameters))
        else:
            assert isinstance(entry, URLPattern)
            routes.append(Route("/" + prefix + template, inherited + tuple(parameters), entry.callback))
    return routes


class World:
    """A little of everything: a catalogue, a text and an image campaign (one item held by the
    annotator), a judge run with its snapshot and a TIG build."""

    def __init__(self, annotator):
        catalogue = Catalogue(n_tasks=1)
        self.campaign = pairwise_campaign(catalogue, annotators=[annotator], n_items=2)
        self.faithfulness, renders = faithfulness_campaign(catalogue, annotators=[annotator])
        self.assignment = services.assignment_next(campaign=self.campaign, annotator=annotator)
        task_set, models = population(n_models=3, n_tasks=2, name="walk")
        self.snapshot = judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=6))
        self.build = TIGBuild.objects.create(task_set=catalogue.task_set, status=TIGBuild.Status.DONE)
        task = catalogue.tasks[0]
        self.hints = {"task_pk": [task.pk, self.snapshot.run.task_set.tasks.first().pk],
                      "render_pk": [renders[0].pk], "build_pk": [self.build.pk]}
        self.ids = sorted({self.campaign.pk, self.faithfulness.pk, catalogue.task_set.pk, task_set.pk,
                           self.snapshot.pk, self.snapshot.run.pk})
        self.strings = [self.assignment.token, "A", "B", "TOKEN", "ekphrasis", "walk", "1"]

    def valid_values(self, route: Route, parameter: Parameter) -> list[str]:
        if _LITERAL_ALTERNATION.fullmatch(parameter.regex) and "|" in parameter.regex:
            return parameter.regex.split("|")
        model_admin = getattr(route.callback, "model_admin", None)
        if model_admin is not None and parameter.name == "object_id":
            return [str(pk) for pk in model_admin.model._default_manager.values_list("pk", flat=True)[:1]] or ["1"]
        if parameter.name in self.hints:
            return [str(pk) for pk in self.hints[parameter.name]]
        candidates = [str(pk) for pk in self.ids] + self.strings
        fitting = [value for value in candidates if re.fullmatch(parameter.regex, value)]
        return fitting[: len(self.ids)] or ["x"]

    def urls(self, route: Route) -> tuple[list[str], list[str]]:
        """(paths with existing values, paths with one hostile value each)."""
        choices = [self.valid_values(route, p) for p in route.parameters]
        valid = [route.template.format(**dict(zip((p.name for p in route.parameters), combo)))
                 for combo in itertools.islice(itertools.product(*choices), 8)]
        hostile = []
        first = {p.name: c[0] for p, c in zip(route.parameters, choices)}
        for parameter in route.parameters:
            numeric = re.fullmatch(parameter.regex, "7") is not None and re.fullmatch(parameter.regex, "x") is None
            for value in HOSTILE_INTEGERS if numeric else HOSTILE_SEGMENTS:
                hostile.append(route.template.format(**{**first, parameter.name: value}))
        return valid, hostile


def _row_counter():
    """One query counting the rows of every table of ours and of the users and groups."""
    ours = [m for m in apps.get_models() if m.__module__.split(".")[0] in ("leaderboard", "annotation")]
    tables = [m._meta.db_table for m in ours + [get_user_model(), Group]]
    sql = "SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {connection.ops.quote_name(t)})" for t in tables)

    def counts() -> tuple[int, ...]:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return tuple(cursor.fetchone())

    return counts


@dataclass
class Tally:
    sent: int = 0
    server_errors: int = 0


def admin_lookup_queries(route: Route) -> list[str]:
    """An admin change list filters by any field of its model named in the query string: each foreign key,
    and the primary key's ``__in`` list, given an integer past every id column (SQLite raised
    OverflowError on both, a 500, until evalsite/request_checks.py answered them)."""
    model_admin = getattr(route.callback, "model_admin", None)
    if model_admin is None or getattr(route.callback, "__name__", "") != "changelist_view":
        return []
    meta = model_admin.model._meta
    keys = [field.name for field in meta.concrete_fields if field.is_relation] + [f"{meta.pk.name}__in"]
    return [f"?{key}=1,{PAST_EVERY_ID}" if key.endswith("__in") else f"?{key}={PAST_EVERY_ID}" for key in keys]


# One test per role, so that a parallel run (make test: pytest -n) spreads the roles over its workers.
@pytest.mark.parametrize("walker", ["anonymous", "annotator", "researcher", "admin"])
def test_no_url_answers_a_hostile_request_with_a_server_error_or_a_write(alice, rita, adam, settings_media, settings,
                                                                        record_property, walker):
    settings.AXES_ENABLED = True  # login throttling as in production: failed logins are recorded
    world = World(alice)
    counts = _row_counter()
    routes = site_routes()
    users = {"anonymous": None, "annotator": alice, "researcher": rita, "admin": adam}
    problems: list[str] = []
    tally = Tally()
    started = time.monotonic()

    def send(client, user, method, url, *, body=None, content_type=None, hostile_body=False):
        before = counts()
        try:
            if method == "GET":
                response = client.get(url)
            elif content_type is None:
                response = client.post(url, body)
            else:
                response = client.post(url, body, content_type=content_type)
            status = response.status_code
        except Exception as exc:  # the test client re-raises what a view raised: a 500 in production
            status, response = 500, None
            problems.append(f"{method} {url[:120]} as {user}: {type(exc).__name__}: {str(exc)[:200]}")
        tally.sent += 1
        if status >= 500:
            tally.server_errors += 1
            if response is not None:
                problems.append(f"{method} {url[:120]} as {user}: {status}")
        elif (status >= 400 or hostile_body) and counts() != before:
            problems.append(f"{method} {url[:120]} as {user}: answered {status} but wrote rows")
        if response is not None and user is not None and response.cookies.get(settings.SESSION_COOKIE_NAME) is not None \
                and not response.cookies[settings.SESSION_COOKIE_NAME].value:
            client.force_login(users[user])  # a logout URL ended the session: log in again

    clients = {}
    for role, user in users.items():
        if role != walker:
            continue
        clients[role] = Client()
        if user is not None:
            clients[role].force_login(user)
    n_urls = 0
    for route in routes:
        valid, hostile = world.urls(route)
        n_urls += len(valid) + len(hostile)
        # Django's admin deletes on any POST to its confirmation page (CSRF is what guards it there).
        posts = getattr(route.callback, "__name__", "") != "delete_view"
        # Views that parse JSON (DRF's) get every hostile JSON body; form views get the first two.
        api = hasattr(route.callback, "cls")
        for role, client in clients.items():
            if role == "anonymous":  # refused before routing (login required): a GET per path, a POST per pattern
                for url in valid + hostile:
                    send(client, role, "GET", url + HOSTILE_QUERIES[0])
                if posts:
                    send(client, role, "POST", valid[0], body=HOSTILE_JSON_BODIES[0], content_type="application/json",
                         hostile_body=True)
                continue
            for url in valid[1:]:  # the other existing ids
                send(client, role, "GET", url)
            url = valid[0]  # the whole hostile set, once per pattern and role
            send(client, role, "GET", url)
            for query in HOSTILE_QUERIES + admin_lookup_queries(route):
                send(client, role, "GET", url + query)
            for body in (HOSTILE_JSON_BODIES if api else HOSTILE_JSON_BODIES[:2]) if posts else ():
                send(client, role, "POST", url, body=body, content_type="application/json", hostile_body=True)
            for form, form_type in HOSTILE_FORMS if posts else ():
                send(client, role, "POST", url, body=form, content_type=form_type, hostile_body=True)
            for k, url in enumerate(hostile):  # a hostile path: a GET, and a JSON or a form POST in turn
                send(client, role, "GET", url)
                if posts and k % 2:
                    send(client, role, "POST", url, body=HOSTILE_JSON_BODIES[2], content_type="application/json",
                         hostile_body=True)
                elif posts:
                    send(client, role, "POST", url, body=_FORM, hostile_body=True)
    elapsed = time.monotonic() - started
    summary = (f"URL walk as {walker}: {len(routes)} patterns, {n_urls} paths, {tally.sent} requests, "
               f"{tally.server_errors} answered 5xx, {len(problems)} problems, {elapsed:.1f} s")
    print(summary)
    record_property("requests_sent", tally.sent)
    record_property("server_errors", tally.server_errors)
    assert not problems, summary + "\n" + "\n".join(problems[:40])
    assert tally.sent > 0 and any("/annotate/api/" in r.template for r in routes)


@pytest.fixture
def settings_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"

"""Every URL pattern of the site, walked as anonymous, annotator, researcher and admin, with existing ids
and hostile values in its path parameters, hostile query strings, and hostile JSON and form bodies.

No answer may be a 5xx (or an exception), a refused request (4xx) may write nothing, and no hostile
body may write anything at all: not a label, not an assignment handed out, not a catalogue row. The
patterns are read from the resolver, so URL patterns added later (the EASEL and C² sub-apps) are
walked without a change here. The counts are printed (run with ``-s``) and recorded as properties.

A second walk (below) sends what the first does not — other methods, malformed encodings, odd headers,
malformed upload files — at ids that answer, as anonymous, an annotator, a crowd participant and an admin.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from dataclasses import dataclass
from urllib.parse import unquote, urlencode

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RegexPattern, RoutePattern

from annotation import services
from evalsite.request_checks import MAX_ADDRESS_CHARS
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


def send_walked(client, method: str, url: str, headers: dict, *, text: bool = False):
    """One request of a walk: (response, body), the body decoded when ``text``; (None, what was raised) when the
    view raised, which the test client re-raises and production answers with a 500."""
    try:
        response = client.generic(method, url, **headers)
    except Exception as exc:
        return None, f"{method} {url[:160]} {headers}: {type(exc).__name__}: {str(exc)[:300]}"
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response, body.decode("utf-8", "replace") if text else body


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


# ---------------------------------------------------------------------------------------------------------
# The second walk: what the walk above does not send. Each URL pattern, at a path that answers (probed as an
# admin among the ids that exist), as anonymous, an annotator, a crowd participant and an admin (staff):
# other methods; query strings holding invalid UTF-8, repeated and array-style keys, empty, long, non-ASCII
# digits, numbers past 64 bits or not finite, under every name a form, serializer or list filter of the site
# has; odd Range / If-None-Match / If-Modified-Since / Accept headers; path integers in non-ASCII digits; JSON
# bodies the strict reader must refuse or take; forms under a charset other than UTF-8 and a query under one
# through the WSGI entry (a 500 before evalsite/request_charset.py); a Content-Length that is no number (a 500
# before evalsite/upload_limits.py refused it); a form without its CSRF token; and, as the admin, every upload
# field with malformed CSV/JSONL files. No answer may be a 5xx or an exception.
# ---------------------------------------------------------------------------------------------------------

#: Django's own admin views of each registered model.
ADMIN_MODEL_VIEWS = {"changelist_view", "add_view", "change_view", "delete_view", "history_view", "autocomplete_view",
                     "changeform_view", "view_on_site"}
#: Query parameter names views read that no form, serializer or filter declares (DRF's own, the panels').
READ_DIRECTLY = ["cursor", "page_size", "format", "page", "q", "a", "b", "pair", "build", "campaign", "style", "next",
                 "all", "o", "p", "e", "PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId", "hitId",
                 "turkSubmitTo", "pid"]
#: Values for every name, in turn ("١٢" and "１"; past 64 bits; …): request k gives name i value (i + k) mod 8.
SWEEP_VALUES = ["%D9%A1%D9%A2", "%EF%BC%91", "99999999999999999999", "-1", "1e309", "NaN", "1,99999999999999999999",
                "x" * 1000]
SWEEP_QUERIES = 3
#: Room left for how Django writes the path back (percent-encoded) under the site's address limit.
ADDRESS_MARGIN = 200


def _queries_within_limit(path: str, fields: list[str]) -> list[str]:
    """The fields (``name=value``) as few query strings as keep each address within the site's limit, over which
    every request is the same 414 before any view reads its query (evalsite/request_checks.py)."""
    room = MAX_ADDRESS_CHARS - ADDRESS_MARGIN - len(path) - 1
    queries, current = [], []
    for field in fields:
        if current and len("&".join([*current, field])) > room:
            queries.append("&".join(current))
            current = []
        current.append(field)
    return [*queries, "&".join(current)] if current else queries
#: "١" and "𝟗"×25 (a regex's \d takes both), just past 64 bits, invalid UTF-8, an overlong "/", an emoji.
PATH_VALUES = ["%D9%A1", "%F0%9D%9F%97" * 25, "9223372036854775808", "%ff", "%C0%AF", "%F0%9F%98%80"]
ODD_HEADERS = {"HTTP_RANGE": "bytes=99999999999999999999-,5-1,-0", "HTTP_IF_NONE_MATCH": 'W/"x", *, "',
               "HTTP_IF_RANGE": "garbage", "HTTP_IF_MODIFIED_SINCE": "Mon, 99 Foo 99999 99:99:99 GMT",
               "HTTP_ACCEPT": "text/csv;q=NaN, application/json;q=0, */*;q=abc", "HTTP_ACCEPT_LANGUAGE": "zz;q=NaN"}
ODD_JSON = [b'\xef\xbb\xbf{"progress": true}', '{"progress": true}'.encode("utf-16"),
            b'{"progress": true, "seed": ' + b"9" * 4300 + b"}", b'{"progress": true, "seed": -1e308}']
UNREADABLE_CHARSETS = ["hex", "ascii"]  # no text encoding; no U+FFFD to encode back
MALFORMED_FILES = [
    b"\xff\xfe\xfa not UTF-8\n", b"\xef\xbb\xbfexternal_id,brief\nt1,A brief.\n", "external_id,brief\nt1,b\n".encode("utf-16"),
    b"external_id,brief\nt1,\x00\n", b"external_id,brief,family\nt1\nt2,b,c,d,e\n", b"external_id,brief\nt1," + b"x" * 200_000 + b"\n",
    b"external_id,brief\r t1,b\r", b'external_id,brief\n"t1,unterminated\n', b"[" * 3000 + b"]" * 3000 + b"\n",
    b'{"external_id": "t1", "external_id": "t2", "brief": NaN}\n[1, 2]\n', b"",
]


def _declared_query_names() -> list[str]:
    """Every field name of the site's forms, serializers and list filters (a new view's are among them)."""
    import django_filters
    from django import forms
    from rest_framework import serializers

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    names = set(READ_DIRECTLY)
    for base, fields in ((forms.BaseForm, "base_fields"), (serializers.Serializer, "_declared_fields"),
                         (django_filters.FilterSet, "base_filters")):
        for cls in subclasses(base):
            if cls.__module__.split(".")[0] in ("annotation", "leaderboard", "evalsite"):
                names |= set(getattr(cls, fields, {}) or {})
    return sorted(names)


class SweepWorld(World):
    """The walk's world, with an EASEL suite and runs, a C² run, and a crowd study with a participant who
    holds an item; :meth:`live_values` probes, as an admin, which ids of these answer each pattern."""

    def __init__(self, annotator, admin):
        from annotation import participants
        from annotation.panel_models import Participant
        from leaderboard.c2.services import runs as c2_runs
        from leaderboard.c2.services.imports import c2_tasks_import
        from tests.annotation.validation_factories import C2World, EaselWorld

        super().__init__(annotator)
        easel, c2 = EaselWorld(), C2World()  # EASEL episodes and steps; a C² task with an image
        c2_set, _ = c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=b"[ WP ] A door in the sea.\n",
                                    task_set_name="c2-sweep", version="1")
        c2_run = c2_runs.c2_run_execute_inline(run=c2_runs.c2_run_create(
            task_set=c2_set, model_names=["simulated-a", "simulated-b"], n_samples=1, rater_name="simulated"))
        self.study = participants.panel_study_open(campaign=pairwise_campaign(Catalogue(n_tasks=1), k=2, n_items=2),
                                                   panel="prolific", consent_text="You agree.")
        self.participant_client = Client()
        self.participant_client.get(f"/annotate/p/{self.study.entry_token}/",
                                    {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "S", "SESSION_ID": "X"})
        participant = participants.participant_consent(participant=Participant.objects.get())
        participant = participants.participant_instructions_read(participant=participant)
        self.tokens = {"participant": participants.participant_next(participant=participant).assignment.token}
        self.pool = sorted({*self.ids, easel.runs[0].pk, easel.runs[0].episodes.first().pk, c2_run.pk, c2.visual.pk,
                            self.snapshot.run.task_set.tasks.first().pk, 1, 2})[:8]
        self.admin = Client()
        self.admin.force_login(admin)

    def live_values(self, route: Route) -> dict[str, str]:
        """The route's parameters at the first ids that answer an admin's GET (else the first ids), with
        ``{token}`` and ``{entry}`` for an assignment token (each role's own) and the study's entry token. Kept
        per id pool: each role's test builds the same world, at the same ids on SQLite (a rolled-back test
        resets the sequences)."""
        key = (route.template, tuple(self.pool))
        if key not in _LIVE_VALUES:
            _LIVE_VALUES[key] = self._probe(route)
        return _LIVE_VALUES[key]

    def _probe(self, route: Route) -> dict[str, str]:
        special = {"entry": ["{entry}"], "token": ["{token}"], "slot": ["A"], "index": ["1"],
                   "kind": ["ekphrasis", "easel", "c2"]}
        choices = [special.get(p.name) or (p.regex.split("|") if _LITERAL_ALTERNATION.fullmatch(p.regex) else
                   [str(pk) for pk in self.pool]) for p in route.parameters]
        combos = [dict(zip((p.name for p in route.parameters), combo))
                  for combo in itertools.islice(itertools.product(*choices), 12)]
        for values in combos:
            if "token" in values or "entry" in values:  # the participant's and annotator's own pages
                return values
            status = self.admin.get(route.template.format(**values)).status_code
            if status == 200:
                return values
            if status == 405:  # a POST-only address: no id answers a GET
                break
        return combos[0]


#: live_values of each (route, id pool, study): probed once per pytest process and world.
_LIVE_VALUES: dict[tuple, dict[str, str]] = {}


def _upload_baseline(route: Route) -> list[tuple[str, dict]]:
    """(file field, other fields) of each way a DRF view takes an upload: its input serializer's fields, a
    ChoiceField at each of its choices."""
    from rest_framework import serializers

    view = getattr(getattr(route.callback, "cls", None), "post", None)
    inputs = [value for value in vars(getattr(route.callback, "cls", object)).values()
              if isinstance(value, type) and issubclass(value, serializers.Serializer)]
    found = []
    for serializer in inputs if view else ():
        fields = serializer().fields
        files = [name for name, field in fields.items() if isinstance(field, serializers.FileField)]
        if not files:
            continue
        plain = {name: "sweep" if isinstance(field, serializers.CharField) else "false"
                 for name, field in fields.items() if name not in files and not isinstance(field, serializers.ChoiceField)}
        choices = [[(name, choice) for choice in field.choices] for name, field in fields.items()
                   if isinstance(field, serializers.ChoiceField)]
        for combo in itertools.product(*choices):
            found.append((files[0], {**plain, **dict(combo)}))
    return found


def _page_upload_forms(client, path: str) -> list[tuple[str, str, dict]]:
    """(action, file field, other fields) of each form with a file input on the page at ``path``."""
    from html.parser import HTMLParser

    class Forms(HTMLParser):
        def __init__(self):
            super().__init__()
            self.forms: list[dict] = []

            self.select: str | None = None

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            if tag == "form":
                self.forms.append({"action": attrs.get("action") or path, "fields": {}, "file": None})
            elif not self.forms:
                return
            elif tag == "select" and attrs.get("name"):
                self.select = attrs["name"]
            elif tag == "option" and self.select and attrs.get("value"):  # a select's first real choice
                self.forms[-1]["fields"].setdefault(self.select, attrs["value"])
            elif tag in ("input", "textarea") and attrs.get("name"):
                form = self.forms[-1]
                if attrs.get("type") == "file":
                    form["file"] = attrs["name"]
                elif attrs.get("type") not in ("checkbox", "radio", "submit") or "checked" in attrs:
                    form["fields"].setdefault(attrs["name"], attrs.get("value") or "sweep")

        def handle_endtag(self, tag):
            if tag == "select":
                self.select = None

    response = client.get(path)
    if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
        return []
    parser = Forms()
    parser.feed(response.content.decode())
    return [(form["action"], form["file"], form["fields"]) for form in parser.forms if form["file"]]


# The admin is the staff member and a researcher: it reaches every page a researcher does, and the imports.
@pytest.mark.parametrize("walker", ["anonymous", "annotator", "participant", "admin"])
def test_no_url_answers_a_malformed_encoding_header_method_or_upload_with_a_server_error(
        alice, adam, settings_media, wsgi_request, record_property, walker):
    from django.core.files.uploadedfile import SimpleUploadedFile

    world = SweepWorld(alice, adam)
    # Django's own admin pages of each model are the walk above's; the admin's custom pages (imports) are here.
    routes = [route for route in site_routes() if getattr(route.callback, "model_admin", None) is None
              or route.callback.__name__ not in ADMIN_MODEL_VIEWS]
    names = _declared_query_names()
    client, csrf_client = Client(), Client(enforce_csrf_checks=True)
    if walker == "participant":
        client = world.participant_client
        csrf_client.cookies = client.cookies
    elif walker != "anonymous":
        for each in (client, csrf_client):
            each.force_login({"annotator": alice, "admin": adam}[walker])
    token = world.tokens.get(walker, world.assignment.token)
    problems: list[str] = []
    sent = [0]
    uploaded: set[str] = set()
    started = time.monotonic()

    def send(method: str, url: str, by=None, **options):
        sent[0] += 1
        try:
            status = (by or client).generic(method, url, **options).status_code
        except Exception as exc:  # the test client re-raises what a view raised: a 500 in production
            problems.append(f"{method} {url[:140]} as {walker}: {type(exc).__name__}: {str(exc)[:200]}")
            return None
        if status >= 500:
            problems.append(f"{method} {url[:140]} as {walker}: {status}")
        return status

    own = {"{token}": token, "{entry}": world.study.entry_token}
    for route in routes:
        values = {name: own.get(value, value) for name, value in world.live_values(route).items()}
        path = route.template.format(**values)
        for charset in UNREADABLE_CHARSETS:  # refused before any view: every pattern, every role
            try:  # through the WSGI entry: Django decoded such a query while it built the request
                status, _ = wsgi_request("GET", path, query="page=%ff", content_type=f"text/plain; charset={charset}")
            except Exception as exc:  # out of the application itself: the server's bare 500
                status = f"{type(exc).__name__}: {str(exc)[:120]}"
            if not isinstance(status, int) or status >= 500:
                problems.append(f"GET {path}?page=%ff under charset={charset} (WSGI) as {walker}: {status}")
            send("POST", path, data=b"name=x", content_type=f"application/x-www-form-urlencoded; charset={charset}")
        send("POST", path, data=b"name=x", content_type=URLENCODED, CONTENT_LENGTH="abc")
        send("POST", path, by=csrf_client, data=b"name=x", content_type=URLENCODED)
        for method in ("PUT", "DELETE", "OPTIONS", "HEAD"):
            send(method, path, data=b"{}", content_type="application/json")
        for parameter in route.parameters:  # the values its pattern takes (any other is the resolver's 404)
            for value in PATH_VALUES:
                if re.fullmatch(parameter.regex, unquote(value)):
                    send("GET", route.template.format(**{**values, parameter.name: value}))
        if hasattr(route.callback, "cls") and send("POST", path, data=b"{}", content_type="application/json") not in (
                None, 403, 404, 405):
            for body in ODD_JSON:
                send("POST", path, data=body, content_type="application/json")
        if walker == "admin":  # the imports are the admins': an API operation's, and the forms of a page
            uploads = [(path, field, fields) for field, fields in _upload_baseline(route)]
            for action, field, fields in uploads + _page_upload_forms(client, path):
                for k, raw in enumerate(MALFORMED_FILES):
                    upload = SimpleUploadedFile(("sweep.csv", "sweep.jsonl")[k % 2], raw)
                    send("POST", action, data=encode_multipart(BOUNDARY, {**fields, field: upload}),
                         content_type=MULTIPART_CONTENT)
                    uploaded.add(action)
        if send("GET", path) != 200:
            continue  # refused or moved: a query is not read there
        for k in range(SWEEP_QUERIES):
            for query in _queries_within_limit(path, [f"{name}={SWEEP_VALUES[(i + k) % len(SWEEP_VALUES)]}"
                                                      for i, name in enumerate(names)]):
                send("GET", f"{path}?{query}")
        for query in _queries_within_limit(path, [f"{name}=%ff&{name}=&{name}%5B%5D=1" for name in names]):
            send("GET", f"{path}?{query}")
        send("GET", path, **ODD_HEADERS)
    elapsed = time.monotonic() - started
    summary = (f"Malformed-input walk as {walker}: {len(routes)} patterns, {sent[0]} requests, "
               f"{len(uploaded)} upload addresses, {len(problems)} problems, {elapsed:.1f} s")
    print(summary)
    record_property("requests_sent", sent[0])
    assert not problems, summary + "\n" + "\n".join(problems[:40])
    assert walker != "admin" or {"/api/v1/task-sets/import", "/task-sets/pools/import/"} <= uploaded, sorted(uploaded)
    # no request ended the session (a logout address): every pattern was walked as the role named
    assert walker == "anonymous" or "_auth_user_id" in client.session

"""Attacker-controlled names (subject models, task sets, task ids) reach every page and export of the three
protocols as inert text: no spreadsheet formula in a CSV cell, no LaTeX command in a .tex, no markup in HTML."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from leaderboard.easel import services as easel_services
from leaderboard.easel.models import EaselRun
from leaderboard.models import SubjectModel, TaskSet
from tests.conftest import require_service
from tests.leaderboard.easel.test_selectors import reference_ids
from tests.leaderboard.judging_factories import population
from tests.leaderboard.researcher_world import EASEL_SUITE, _easel_model_run
from tests.leaderboard.test_exports import pdflatex_errors

pytestmark = pytest.mark.django_db

HOSTILE = [
    '=HYPERLINK("http://evil.invalid","<script>alert(1)</script>")',
    ' @SUM(1+1) \\input{/etc/passwd} </script><img src=x onerror=alert(2)>',
    '[1] %#~^^5c\\write18{id}& $x$ {un" onmouseover="alert(3) 模型😀',
]


@dataclass
class HostileWorld:
    models: list[SubjectModel]
    task_set: TaskSet
    easel_suite: TaskSet
    easel_run: EaselRun


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """Models, a task set (its name and task ids) and an EASEL suite named by an attacker, with one EASEL
    model run: no judge or C² run (they call a model; their exports share engine.latex and engine.csv_cells
    with the EASEL ones, which tests/leaderboard/test_exports.py drives with the same names)."""
    with django_db_blocker.unblock():
        task_set, models = population(n_models=3, n_tasks=2, name=HOSTILE[0])
        for model, name in zip(models, HOSTILE):
            SubjectModel.objects.filter(pk=model.pk).update(display_name=name)
            model.refresh_from_db()
        suite, _ = easel_services.easel_suite_create(seed=0, per_category=EASEL_SUITE, name=HOSTILE[1][:60])
        easel_run = _easel_model_run(suite, models[0], {t: 0.6 for t in reference_ids(suite)})
        _easel_model_run(suite, models[2], {t: 0.5 for t in reference_ids(suite)})  # '[1] …' opens a row
        built = HostileWorld(models, task_set, suite, easel_run)
    yield built
    with django_db_blocker.unblock():
        EaselRun.objects.filter(task_set=suite).delete()
        TaskSet.objects.filter(pk__in=[task_set.pk, suite.pk]).delete()
        SubjectModel.objects.filter(display_name__in=HOSTILE).delete()


class _Handlers(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.found += [f"<{tag} {name}>" for name, _ in attrs if name.startswith("on")]


def event_handlers(page: str) -> list[str]:
    """The on* attributes of the page's tags, as a browser parses them (the site's templates set none: CSP)."""
    parser = _Handlers()
    parser.feed(page)
    return parser.found


def urls(world) -> list[str]:
    t, e = world.task_set.pk, world.easel_suite.pk
    m0, m1 = world.models[0].pk, world.models[1].pk
    return [
        "/", "/search/?q=HYPERLINK", f"/models/{m0}/", f"/models/{m0}/compare/{m1}/", "/task-sets/",
        f"/task-sets/{t}/", f"/task-sets/{t}/export/tasks.csv", f"/task-sets/{t}/export/responses.csv",
        f"/api/v1/task-sets/{t}/export?what=responses&fmt=csv", f"/api/v1/task-sets/{t}/export?what=tasks&fmt=csv",
        f"/easel/?task_set={e}", f"/easel/export.csv?task_set={e}", f"/easel/export.tex?task_set={e}",
        f"/easel/export.json?task_set={e}", f"/easel/runs/{world.easel_run.pk}/",
        f"/api/v1/models/{m0}/profile",
    ]


def test_every_page_and_export_shows_hostile_names_as_inert_text(client, rita, world, tmp_path):
    client.force_login(rita)
    problems = []
    for url in urls(world):
        response = client.get(url, HTTP_ACCEPT="*/*")
        ctype = response.get("Content-Type", "")
        body = b"".join(response.streaming_content) if response.streaming else response.content
        text = body.decode("utf-8", "replace")
        info = f"{url} {response.status_code} {ctype} {response.get('Content-Disposition')} nosniff={response.get('X-Content-Type-Options')}"
        if response.status_code != 200:
            problems.append(info)
            continue
        if ctype.startswith("text/html"):
            if handlers := event_handlers(text):  # a name's quote ended an attribute, or its tag was parsed
                problems.append(f"{url}: event handler attributes {handlers}")
            for bad in ("<script>alert", "<img src=x"):
                if bad in text:
                    k = text.index(bad)
                    problems.append(f"{url}: raw {bad!r} in …{text[k - 300:k + 80]}…")
        if ctype.startswith("text/csv"):
            for row in csv.reader(io.StringIO(text)):
                for cell in row:
                    if re.match(r"\s*[=+\-@\t\r]", cell) and not re.fullmatch(r"\s*[-+]?[0-9.eE+-]+", cell):
                        problems.append(f"{url}: formula cell {cell!r}")
        if ctype.startswith("application/x-tex"):
            for bad in ("\\input{", "\\write18{", "^^5c"):
                if bad in text:
                    problems.append(f"{url}: raw {bad!r}")
            require_service("pdflatex")
            table = Path(tmp_path) / (re.sub(r"[^a-z0-9]", "_", url) + ".tex")
            table.write_text(text, encoding="utf-8")
            if errors := pdflatex_errors(table):
                problems.append(f"{url}: pdflatex: {errors}")
    assert not problems, "\n".join(problems)

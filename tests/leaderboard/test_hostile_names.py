"""Attacker-controlled names (subject models, task sets, task ids, a C² rater, briefs and answers) reach every
page and export of the three protocols as inert text: no spreadsheet formula in a CSV cell, no LaTeX command in a
.tex, no markup in HTML. The pages are walked from a list of entry points by following every link a page
gives, so a page reached only from a snapshot's or a C² run's page (a drill-down, a prompt, a compare, a
bundle) is walked too; a bundle's board.csv, board.tex and viewer are checked as the site's exports are."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tarfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from django.test import override_settings

from leaderboard.c2.models import C2Run
from leaderboard.c2.services import runs as c2_runs
from leaderboard.c2.services.imports import c2_tasks_import
from leaderboard.easel import services as easel_services
from leaderboard.easel.models import EaselRun
from leaderboard.ekphrasis import judge_runs
from leaderboard.ekphrasis.models import JudgeRun, LeaderboardSnapshot
from leaderboard.models import SubjectModel, TaskSet
from tests.conftest import require_service
from tests.fakes.c2_model import C2FakeModel
from tests.fakes.openai_server import FakeOpenAIServer
from tests.leaderboard.easel.test_selectors import reference_ids
from tests.leaderboard.judging_factories import population, simulated_run
from tests.leaderboard.researcher_world import EASEL_SUITE, _easel_model_run
from tests.leaderboard.test_exports import pdflatex_errors

pytestmark = pytest.mark.django_db

HOSTILE = [
    '=HYPERLINK("http://evil.invalid","<script>alert(1)</script>")',
    ' @SUM(1+1) \\input{/etc/passwd} </script><img src=x onerror=alert(2)>',
    '[1] %#~^^5c\\write18{id}& $x$ {un" onmouseover="alert(3) 模型😀',
]
#: The C² rater (a judge-role model), named by an attacker too: it is shown on the run's pages and exports.
HOSTILE_RATER = '+cmd|"/C calc"!A0 <svg onload=alert(4)> \\def\\x{} rater'
#: What the C² subjects answer (a model's output is as hostile as its name) and the C² prompts' texts.
HOSTILE_ANSWER = '-2+3 <img src=x onerror=alert(5)> \\input{/etc/passwd}'
KEY_ENV = "FAKE_HOSTILE_C2_API_KEY"
#: Pages the walk follows links to at most (the world is small: it reaches about a hundred).
MAX_PAGES = 400


@dataclass
class HostileWorld:
    models: list[SubjectModel]
    task_set: TaskSet
    easel_suite: TaskSet
    easel_run: EaselRun
    snapshots: list[LeaderboardSnapshot]  # two simulated judge runs' boards of task_set (a compare needs two)
    c2_task_set: TaskSet
    c2_runs: list[C2Run]  # a standard and a creative run of models 0 and 2 (the creative one is its ablation)


def _c2_world(models: list[SubjectModel], tmp: Path) -> tuple[TaskSet, list[C2Run]]:
    """A C² task set named by an attacker (its name, prompt ids and texts), run by two of the hostile models and
    rated by a hostile rater against the fake OpenAI server: the real provider path, as a researcher's run is.
    The model named ' @SUM…' is not in it: no run can name a model whose name begins with a space (the catalogue
    refuses such a name when a model is made: leaderboard.services.catalogue.subject_model_name_check)."""
    trivia = {"Data": [{"Question": f"Which planet is red? {HOSTILE_ANSWER} {k}", "QuestionId": f"=q{k}<u id=hostile>",
                        "Answer": {"Value": "Mars", "NormalizedAliases": ["mars"]}} for k in range(2)]}
    name = HOSTILE[2][:60]
    task_set, _ = c2_tasks_import(fmt="triviaqa", name="qa.json", raw=json.dumps(trivia).encode(),
                                  task_set_name=name, version="1")
    c2_tasks_import(fmt="writingprompts", name="wp.txt", raw=f"[ WP ] A door in the sea. {HOSTILE_ANSWER}\n".encode(),
                    task_set_name=name, version="1")
    fake = C2FakeModel(qa_answers={"planet is red": [HOSTILE_ANSWER, "Mars"]})
    previous_key = os.environ.get(KEY_ENV)
    os.environ[KEY_ENV] = "sk-test"
    try:
        with FakeOpenAIServer(handler=fake) as server, override_settings(
                ATELIER_PROVIDER_CACHE_DIR=tmp / "provider-cache", ATELIER_EMBED_CACHE_DIR=tmp / "embed-cache"):
            subjects = [models[0], models[2]]
            SubjectModel.objects.filter(pk__in=[m.pk for m in subjects]).update(
                base_url=server.base_url, api_key_env=KEY_ENV, accepts_images=True)
            SubjectModel.objects.create(display_name=HOSTILE_RATER, role=SubjectModel.Role.JUDGE,
                                        provider_id="provider/rater", base_url=server.base_url, api_key_env=KEY_ENV)
            runs = [c2_runs.c2_run_execute_inline(run=c2_runs.c2_run_create(
                task_set=task_set, model_names=[m.display_name for m in subjects], n_samples=2, template=template,
                rater_name=HOSTILE_RATER, rerate_share=0.5)) for template in ("standard", "creative")]
    finally:
        if previous_key is None:
            os.environ.pop(KEY_ENV, None)
        else:
            os.environ[KEY_ENV] = previous_key
    assert [run.status for run in runs] == [C2Run.Status.DONE] * 2, [run.error for run in runs]
    return task_set, runs


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, tmp_path_factory):
    """Models, a task set (its name and task ids) and an EASEL suite named by an attacker, with EASEL model runs,
    two Ekphrasis snapshots of the task set (a simulated judge's: the names are the models', not the judge's) and
    a standard and a creative C² run of a hostile C² task set by hostile models and rater."""
    with django_db_blocker.unblock():
        task_set, models = population(n_models=3, n_tasks=2, name=HOSTILE[0])
        for model, name in zip(models, HOSTILE):
            SubjectModel.objects.filter(pk=model.pk).update(display_name=name)
            model.refresh_from_db()
        suite, _ = easel_services.easel_suite_create(seed=0, per_category=EASEL_SUITE, name=HOSTILE[1][:60])
        easel_run = _easel_model_run(suite, models[0], {t: 0.6 for t in reference_ids(suite)})
        _easel_model_run(suite, models[2], {t: 0.5 for t in reference_ids(suite)})  # '[1] …' opens a row
        snapshots = [judge_runs.judge_run_execute_inline(run=simulated_run(task_set, models, budget=6, seed=seed,
                                                                            dimensions="UEN"))
                     for seed in (7, 8)]
        c2_task_set, c2_made = _c2_world(models, tmp_path_factory.mktemp("hostile-c2"))
        built = HostileWorld(models, task_set, suite, easel_run, snapshots, c2_task_set, c2_made)
    yield built
    with django_db_blocker.unblock():
        EaselRun.objects.filter(task_set=suite).delete()
        C2Run.objects.filter(task_set=c2_task_set).delete()
        JudgeRun.objects.filter(task_set=task_set).delete()
        TaskSet.objects.filter(pk__in=[task_set.pk, suite.pk, c2_task_set.pk]).delete()
        SubjectModel.objects.filter(display_name__in=[*HOSTILE, HOSTILE_RATER]).delete()


class _Tags(HTMLParser):
    """A page's on* attributes and the site addresses its links and images name, as a browser parses them."""

    def __init__(self):
        super().__init__()
        self.handlers: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.handlers += [f"<{tag} {name}>" for name, _ in attrs if name.startswith("on")]
        self.links += [value for name, value in attrs if name in ("href", "src") and value]


def page_tags(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


def event_handlers(page: str) -> list[str]:
    """The on* attributes of the page's tags, as a browser parses them (the site's templates set none: CSP)."""
    return page_tags(page).handlers


#: Addresses the walk does not follow: files, pages a researcher cannot use (the admin, the annotator's queue,
#: signing in and out) and the API's schema and docs (no name in them).
NOT_WALKED = ("/static/", "/admin/", "/annotate/", "/accounts/", "/api/v1/schema/", "/api/v1/docs/",
              "/api/v1/redoc/", "/metrics", "/healthz", "/readyz")


def site_address(link: str, page: str) -> str | None:
    """The path and query ``link`` on ``page`` names, or None when it leaves the site or is not walked."""
    parts = urlsplit(urljoin(f"http://testserver{page}", link))
    if parts.scheme not in ("http", "https") or parts.netloc != "testserver" or parts.path.startswith(NOT_WALKED):
        return None
    return parts.path + (f"?{parts.query}" if parts.query else "")


def urls(world) -> list[str]:
    """Where the walk starts: the pages the site links from its menus, and what no page links to (the API,
    a compare of two given runs or snapshots, a search)."""
    t, e = world.task_set.pk, world.easel_suite.pk
    m0, m1, m2 = (m.pk for m in world.models)
    s0, s1 = (s.pk for s in world.snapshots)
    c0, c1 = (r.pk for r in world.c2_runs)
    c2_task = world.c2_task_set.tasks.order_by("pk").first().pk
    return [
        "/", "/search/?q=HYPERLINK", f"/models/{m0}/", f"/models/{m0}/compare/{m1}/", f"/models/{m2}/compare/{m0}/",
        "/task-sets/", f"/task-sets/{t}/", f"/task-sets/{t}/export/tasks.csv", f"/task-sets/{t}/export/responses.csv",
        f"/api/v1/task-sets/{t}/export?what=responses&fmt=csv", f"/api/v1/task-sets/{t}/export?what=tasks&fmt=csv",
        f"/easel/?task_set={e}", f"/easel/export.csv?task_set={e}", f"/easel/export.tex?task_set={e}",
        f"/easel/export.json?task_set={e}", f"/easel/runs/{world.easel_run.pk}/",
        f"/api/v1/models/{m0}/profile", f"/api/v1/models/{m0}/compare?other={m2}",
        # Ekphrasis: the snapshots, their exports and drill-downs (linked from their pages) and the API's views
        "/leaderboards/", f"/leaderboards/{s0}/", f"/leaderboards/compare/?a={s0}&b={s1}",
        f"/leaderboards/{s0}/export.csv", f"/leaderboards/{s0}/export.tex", f"/leaderboards/{s0}/export.json",
        "/api/v1/leaderboards/", f"/api/v1/leaderboards/{s0}/", f"/api/v1/leaderboards/compare?a={s0}&b={s1}",
        f"/api/v1/leaderboards/{s0}/export?fmt=csv", f"/api/v1/leaderboards/{s0}/export?fmt=tex",
        f"/api/v1/leaderboards/{s0}/slices", "/api/v1/judge-runs/", f"/runs/{world.snapshots[0].run_id}/status.json",
        f"/api/v1/judge-runs/{world.snapshots[0].run_id}/", f"/api/v1/judge-runs/{world.snapshots[0].run_id}/comparisons/",
        # C²: the runs, their prompts and exports (linked from their pages), the compare and the API's views
        "/c2/", f"/c2/?run={c0}", f"/c2/compare/?a={c0}&b={c1}", f"/c2/runs/{c0}/", f"/c2/runs/{c0}/prompts/{c2_task}/",
        f"/c2/runs/{c0}/export.csv", f"/c2/runs/{c0}/export.tex", f"/c2/runs/{c0}/export.json",
        f"/task-sets/{world.c2_task_set.pk}/", "/api/v1/c2/runs/", f"/api/v1/c2/runs/{c0}/",
        f"/api/v1/c2/runs/{c0}/samples/", f"/api/v1/c2/runs/{c0}/results", f"/c2/runs/{c0}/status.json",
    ]


def _cells_problems(where: str, text: str) -> list[str]:
    return [f"{where}: formula cell {cell!r}"
            for row in csv.reader(io.StringIO(text)) for cell in row
            if re.match(r"\s*[=+\-@\t\r]", cell) and not re.fullmatch(r"\s*[-+]?[0-9.eE+-]+", cell)]


def _tex_problems(where: str, text: str, tmp_path: Path) -> list[str]:
    problems = [f"{where}: raw {bad!r}" for bad in ("\\input{", "\\write18{", "^^5c", "\\def\\x") if bad in text]
    require_service("pdflatex")
    table = Path(tmp_path) / (re.sub(r"[^a-z0-9]", "_", where) + ".tex")
    table.write_text(text, encoding="utf-8")
    if errors := pdflatex_errors(table):
        problems.append(f"{where}: pdflatex: {errors}")
    return problems


def _html_problems(where: str, text: str) -> list[str]:
    problems = []
    if handlers := event_handlers(text):  # a name's quote ended an attribute, or its tag was parsed
        problems.append(f"{where}: event handler attributes {handlers}")
    for bad in ("<script>alert", "<img src=x", "<svg onload", "<u id=hostile"):
        if bad in text:
            k = text.index(bad)
            problems.append(f"{where}: raw {bad!r} in …{text[k - 300:k + 80]}…")
    return problems


def _bundle_problems(where: str, body: bytes, tmp_path: Path) -> list[str]:
    """A bundle's own exports (board.csv, board.tex) and its viewer page, checked as the site's are."""
    problems = []
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as archive:
        for member in archive.getmembers():
            if not member.isfile() or not member.name.endswith((".csv", ".tex", ".html")):
                continue
            text = archive.extractfile(member).read().decode("utf-8", "replace")
            inside = f"{where}!{member.name}"
            if member.name.endswith(".csv"):
                problems += _cells_problems(inside, text)
            elif member.name.endswith(".tex"):
                problems += _tex_problems(inside, text, tmp_path)
            else:
                problems += _html_problems(inside, text)
    return problems


def test_every_page_and_export_shows_hostile_names_as_inert_text(client, rita, world, tmp_path):
    client.force_login(rita)
    problems, queue, seen = [], list(urls(world)), set()
    while queue and len(seen) < MAX_PAGES:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url, HTTP_ACCEPT="*/*")
        ctype = response.get("Content-Type", "")
        body = b"".join(response.streaming_content) if response.streaming else response.content
        text = body.decode("utf-8", "replace")
        info = f"{url} {response.status_code} {ctype} {response.get('Content-Disposition')} nosniff={response.get('X-Content-Type-Options')}"
        if response.status_code in (301, 302, 303, 307, 308):
            if (target := site_address(response["Location"], url)) is not None:
                queue.append(target)
            continue
        if response.status_code != 200:
            problems.append(info)
            continue
        if ctype.startswith("text/html"):
            problems += _html_problems(url, text)
            queue += [a for link in page_tags(text).links if (a := site_address(link, url)) is not None]
        if ctype.startswith("text/csv"):
            problems += _cells_problems(url, text)
        if ctype.startswith("application/x-tex"):
            problems += _tex_problems(url, text, tmp_path)
        if ctype.startswith(("application/gzip", "application/x-gzip", "application/x-tar")):
            problems += _bundle_problems(url, body, tmp_path)
    assert not set(queue) - seen, f"the walk stopped at {MAX_PAGES} pages: raise MAX_PAGES"
    walked = {re.sub(r"/\d+(?=[/.]|$)", "/N", url.split("?")[0]) for url in seen}
    for page in ("/leaderboards/N/tasks/N/", "/c2/runs/N/prompts/N/", "/bundles/ekphrasis/N.tar.gz",
                 "/bundles/c2/N.tar.gz", "/runs/N/"):
        assert page in walked, f"the walk never reached {page}: {sorted(walked)}"
    assert not problems, "\n".join(problems)

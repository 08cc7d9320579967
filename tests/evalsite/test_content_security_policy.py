"""The Content-Security-Policy (django-csp, evalsite/settings.py) allows scripts, styles and images
from our own origin only, and no page relies on what it forbids: inline <script>, event-handler
attributes, style attributes or <style> blocks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from leaderboard import charts
from leaderboard.ekphrasis.tig import tig_build_create
from tests.factories import ResponseFactory, SubjectModelFactory, TaskFactory, TaskSetFactory, UserFactory

ROOT = Path(__file__).resolve().parents[2]


def _project_templates() -> list[Path]:
    """The templates Django renders from that belong to this project: the TEMPLATES dirs and the template
    folders of the project's own apps (not a virtualenv's, nor a benchmark's peer tool under var/)."""
    from django.apps import apps
    from django.conf import settings

    folders = [Path(d) for config in settings.TEMPLATES for d in config.get("DIRS", [])]
    folders += [Path(app.path) / "templates" for app in apps.get_app_configs()]
    own = [f for f in folders if f.is_dir() and f.resolve().is_relative_to(ROOT)
           and not {".venv", "var", "site-packages"} & set(f.resolve().relative_to(ROOT).parts)]
    return sorted({p for folder in own for p in folder.glob("**/*.html")})


TEMPLATES = _project_templates()
#: <script> without a src: inline code (json_script output is written by Django, not in templates).
INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.IGNORECASE)
EVENT_HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"<[^>]*\sstyle\s*=", re.IGNORECASE)
STYLE_BLOCK = re.compile(r"<style\b", re.IGNORECASE)


def policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


@pytest.mark.django_db
def test_every_page_carries_a_policy_of_own_origin_scripts_and_styles(client):
    directives = policy(client.get("/accounts/login/"))
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"] == ["'self'"]
    assert directives["style-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"] and directives["frame-ancestors"] == ["'none'"]
    assert not any("unsafe" in source for sources in directives.values() for source in sources)


def test_the_templates_were_found():
    assert len(TEMPLATES) > 10


@pytest.mark.parametrize("pattern", [INLINE_SCRIPT, EVENT_HANDLER, STYLE_ATTRIBUTE, STYLE_BLOCK],
                         ids=["inline script", "event handler", "style attribute", "style block"])
def test_no_template_uses_what_the_policy_forbids(pattern):
    offenders = [f"{path.relative_to(ROOT)}: {match.group(0)[:80]}" for path in TEMPLATES
                 for match in pattern.finditer(path.read_text())]
    assert not offenders, "\n".join(offenders)


def test_charts_carry_no_style_attribute():
    svg = charts.interval_plot([charts.Interval(label="m", estimate=0.1, low=0.0, high=0.2)], title="t")
    assert STYLE_ATTRIBUTE.search(svg) is None and 'class="chart"' in svg


@pytest.mark.django_db
def test_the_tig_build_page_passes_its_data_by_data_attributes_to_a_static_script(client):
    task_set = TaskSetFactory()
    ResponseFactory(task=TaskFactory(task_set=task_set), subject_model=SubjectModelFactory(display_name="csp-a"))
    build = tig_build_create(task_set=task_set)
    client.force_login(UserFactory(username="rita", role="researcher"))
    page = client.get(f"/task-sets/{task_set.pk}/tig-builds/{build.pk}/").content.decode()
    assert INLINE_SCRIPT.search(page) is None and STYLE_ATTRIBUTE.search(page) is None
    assert 'data-run-status="/task-sets/' in page and "js/run_status.js" in page


@pytest.mark.django_db
def test_the_policy_header_is_django_csps_built_once_and_rebuilt_when_the_setting_changes(client, settings, monkeypatch):
    """Issue 30: django-csp built both headers from the settings on every response (~55 µs an annotator
    request); the site's middleware (evalsite/content_security_policy.py) builds them once, the same text."""
    import csp.middleware
    import csp.utils

    from evalsite import content_security_policy

    expected = csp.utils.build_policy()
    client.get("/accounts/login/")  # built (if not already) here
    built = []
    for module in (csp.middleware, content_security_policy):
        monkeypatch.setattr(module, "build_policy", lambda *a, **k: built.append(1) or csp.utils.build_policy(*a, **k))
    first, second = client.get("/accounts/login/"), client.get("/healthz")
    assert first["Content-Security-Policy"] == second["Content-Security-Policy"] == expected
    assert "Content-Security-Policy-Report-Only" not in first
    assert built == []
    settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {**settings.CONTENT_SECURITY_POLICY["DIRECTIVES"],
                                                       "img-src": ["'self'"]}}
    changed = client.get("/accounts/login/")["Content-Security-Policy"]
    assert policy_text(changed)["img-src"] == ["'self'"] and changed == csp.utils.build_policy()
    settings.CONTENT_SECURITY_POLICY_REPORT_ONLY = {"DIRECTIVES": {"default-src": ["'none'"]}}
    assert client.get("/accounts/login/")["Content-Security-Policy-Report-Only"] == csp.utils.build_policy(
        report_only=True)


def policy_text(header: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def test_a_response_with_its_own_policy_or_a_nonce_is_built_by_django_csp():
    from django.http import HttpResponse
    from django.test import RequestFactory

    from evalsite.content_security_policy import SitePolicyCSPMiddleware

    def with_update(request):
        response = HttpResponse("x")
        response._csp_update = {"img-src": ["https://example.org"]}
        return response

    def with_nonce(request):
        str(request.csp_nonce)
        return HttpResponse("x")

    updated = SitePolicyCSPMiddleware(with_update)(RequestFactory().get("/"))
    assert "https://example.org" in policy_text(updated["Content-Security-Policy"])["img-src"]
    request = RequestFactory().get("/")
    nonced = SitePolicyCSPMiddleware(with_nonce)(request)
    assert nonced["Content-Security-Policy"]
    assert str(request.csp_nonce) == request._csp_nonce  # django-csp's path: the nonce the page used stays readable

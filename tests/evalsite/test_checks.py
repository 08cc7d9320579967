"""`check --deploy` flags the repository's development SECRET_KEY (evalsite/checks.py)."""

from django.core.checks import run_checks
from django.test import override_settings

from evalsite.checks import development_secret_key_check


def test_the_development_key_is_an_error_of_the_deploy_checks(settings):
    with override_settings(SECRET_KEY=settings.DEVELOPMENT_SECRET_KEY):
        assert [e.id for e in development_secret_key_check(None)] == ["atelier.E001"]
        assert "atelier.E001" in {e.id for e in run_checks(include_deployment_checks=True)}


def test_a_real_key_passes_the_check():
    with override_settings(SECRET_KEY="z" * 64):
        assert development_secret_key_check(None) == []


def test_the_check_runs_only_with_deploy(settings):
    with override_settings(SECRET_KEY=settings.DEVELOPMENT_SECRET_KEY):
        assert "atelier.E001" not in {e.id for e in run_checks()}

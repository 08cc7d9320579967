"""Settings come from the environment; production settings pass `check --deploy`."""

import pytest

from tests.manage_command import run_manage


def test_production_settings_pass_check_deploy():
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING",
        SECRET_KEY="x" * 30 + "-production-secret-key-for-the-check-0123456789",
        ATELIER_DEV="false", ALLOWED_HOSTS="atelier.example.org",
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_settings_refuse_to_start_without_a_secret_key():
    result = run_manage("check", ATELIER_DEV="false")
    assert result.returncode != 0 and "SECRET_KEY is not set" in result.stderr


def test_with_neither_debug_nor_atelier_dev_set_the_site_refuses_to_start_without_a_secret_key():
    result = run_manage("check")
    assert result.returncode != 0 and "SECRET_KEY is not set" in result.stderr


def test_debug_false_alone_does_not_allow_the_development_key():
    result = run_manage("check", DEBUG="false")
    assert result.returncode != 0 and "SECRET_KEY is not set" in result.stderr


def print_settings(*names, **env):
    code = "from django.conf import settings; " + "; ".join(f"print('setting:', repr(settings.{n}))" for n in names)
    result = run_manage("shell", "--no-imports", "-c", code, **env)
    assert result.returncode == 0, result.stderr
    return [line.removeprefix("setting: ") for line in result.stdout.splitlines() if line.startswith("setting: ")]


def test_the_development_key_is_used_with_debug_or_an_explicit_atelier_dev():
    (development,) = print_settings("DEVELOPMENT_SECRET_KEY", DEBUG="true")
    assert "development" in development
    assert print_settings("SECRET_KEY", DEBUG="true") == [development]
    assert print_settings("SECRET_KEY", ATELIER_DEV="true") == [development]


def test_check_deploy_flags_the_development_key():
    result = run_manage("check", "--deploy", ATELIER_DEV="true", ALLOWED_HOSTS="atelier.example.org")
    assert result.returncode != 0
    assert "atelier.E001" in result.stderr + result.stdout


def test_x_forwarded_proto_is_trusted_only_when_a_proxy_is_said_to_be_in_front():
    secret = {"SECRET_KEY": "y" * 60, "ATELIER_DEV": "false"}
    assert print_settings("SECURE_PROXY_SSL_HEADER", **secret) == ["None"]
    assert print_settings("SECURE_PROXY_SSL_HEADER", "AXES_CLIENT_IP_CALLABLE", ATELIER_BEHIND_PROXY="true", **secret) == [
        "('HTTP_X_FORWARDED_PROTO', 'https')", "'evalsite.proxy.client_address'"]


def test_unparseable_boolean_fails_loudly():
    result = run_manage("check", DEBUG="maybe")
    assert result.returncode != 0 and "DEBUG='maybe' is not a boolean" in result.stderr


def test_a_retry_count_or_redelivery_sweep_below_its_minimum_fails_loudly_at_start():
    result = run_manage("check", ATELIER_DEV="true", ATELIER_PROVIDER_MAX_RETRIES="-1")
    assert result.returncode != 0 and "ATELIER_PROVIDER_MAX_RETRIES='-1' is below its minimum 0" in result.stderr
    result = run_manage("check", ATELIER_DEV="true", CELERY_UNACKED_RESTORE_THROTTLE="0")
    assert result.returncode != 0 and "CELERY_UNACKED_RESTORE_THROTTLE='0' is below its minimum 1" in result.stderr


@pytest.mark.parametrize(("name", "value", "minimum"), [
    ("ATELIER_PROVIDER_CONCURRENCY", "0", 1),  # no call could ever start: every run failed at its first call
    ("ATELIER_ASSIGNMENT_TTL_SECONDS", "-5", 1),  # every assignment expired as it was handed out
    ("ATELIER_ASSIGNMENT_SWEEP_SECONDS", "0", 1),  # Celery beat in a busy loop
    ("CELERY_VISIBILITY_TIMEOUT", "0", 1),  # a running task redelivered to a second worker at once
    ("ATELIER_LOGIN_FAILURE_LIMIT", "0", 1),
    ("ATELIER_LOGIN_COOLOFF_MINUTES", "-1", 1),
    ("SESSION_COOKIE_AGE", "-1", 60),
    ("DATABASE_CONN_MAX_AGE", "-3", 0),
    ("SECURE_HSTS_SECONDS", "-1", 0),
])
def test_a_count_or_duration_below_its_minimum_fails_loudly_at_start(name, value, minimum):
    result = run_manage("check", ATELIER_DEV="true", **{name: value})
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == f"manage.py: {name}={value!r} is below its minimum {minimum}"


def test_an_unparseable_database_url_fails_in_one_line_without_repeating_its_password():
    result = run_manage("check", ATELIER_DEV="true", DATABASE_URL="postgres://atelier:s3cret-pw@db:notaport/atelier")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("manage.py: DATABASE_URL is not a database URL (e.g. postgres://")
    assert "Traceback" not in result.stderr and "s3cret-pw" not in result.stderr


@pytest.mark.parametrize("value", ["127.0.0.1:6379", "redsi://:s3cret-pw@127.0.0.1:6379/0"])
def test_a_broker_url_without_a_known_transport_fails_loudly_without_repeating_its_password(value):
    # kombu would read the first as an AMQP host named "127.0.0.1:6379": runs queued, no worker ever receiving them
    result = run_manage("check", ATELIER_DEV="true", CELERY_BROKER_URL=value)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("manage.py: CELERY_BROKER_URL does not name a broker transport")
    assert "s3cret-pw" not in result.stderr


def test_an_api_write_rate_drf_cannot_read_fails_loudly_at_start():
    # before: accepted here; DRF's parse_rate raises ValueError on the first write with an API token
    result = run_manage("check", ATELIER_DEV="true", ATELIER_API_TOKEN_WRITE_RATE="lots")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "ATELIER_API_TOKEN_WRITE_RATE='lots' is not a rate" in result.stderr


def test_an_unknown_log_level_fails_in_one_line_at_start():
    result = run_manage("check", ATELIER_DEV="true", LOG_LEVEL="LOUD")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().startswith("manage.py: LOG_LEVEL='LOUD' is not a logging level")


def test_valid_rates_levels_and_broker_urls_start():
    result = run_manage("check", ATELIER_DEV="true", ATELIER_API_TOKEN_WRITE_RATE="120/minute", LOG_LEVEL="info",
                        CELERY_BROKER_URL="redis://127.0.0.1:6379/7;rediss://127.0.0.1:6380/7")
    assert result.returncode == 0, result.stdout + result.stderr

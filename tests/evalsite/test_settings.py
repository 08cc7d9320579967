"""Settings come from the environment; production settings pass `check --deploy`."""

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

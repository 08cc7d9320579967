"""Settings come from the environment; production settings pass `check --deploy`."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_manage(*args, **env):
    # The browser tests set DJANGO_ALLOW_ASYNC_UNSAFE in this process; a deployment never has it.
    dropped = {"DEBUG", "SECRET_KEY", "ATELIER_DEV", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    environment = {k: v for k, v in os.environ.items() if k not in dropped}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )


def test_production_settings_pass_check_deploy():
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING",
        SECRET_KEY="x" * 30 + "-production-secret-key-for-the-check-0123456789",
        ATELIER_DEV="false", ALLOWED_HOSTS="atelier.example.org",
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_settings_refuse_to_start_without_a_secret_key():
    result = run_manage("check", ATELIER_DEV="false")
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_unparseable_boolean_fails_loudly():
    result = run_manage("check", DEBUG="maybe")
    assert result.returncode != 0 and "DEBUG='maybe' is not a boolean" in result.stderr

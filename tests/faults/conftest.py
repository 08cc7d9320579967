"""Fault tests run each scenario in a process of its own (its Django is configured for its own throwaway
servers, not the test database) and read the one JSON line it prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.faults.servers import ROOT, postgres_binaries


@pytest.fixture
def run_scenario():
    if postgres_binaries() is None:
        if os.environ.get("ATELIER_REQUIRE_SERVICES") == "1":
            pytest.fail("PostgreSQL server binaries are not installed (ATELIER_REQUIRE_SERVICES=1)")
        pytest.skip("PostgreSQL server binaries are not installed")

    def run(module: str, *args: str, timeout: float = 300) -> dict:
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
        try:
            done = subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, env=env, capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:  # say how far it got: its steps are on stderr
            stderr = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
            pytest.fail(f"{module} did not finish in {timeout:.0f} s; its stderr ends:\n{stderr[-3000:]}")
        assert done.returncode == 0, done.stderr[-3000:]
        sys.stderr.write(done.stderr[-3000:])  # its steps: pytest shows them if the test's assertions fail
        return json.loads(done.stdout.strip().splitlines()[-1])

    return run

"""manage.py in a subprocess, with the environment of a deployment unless told otherwise."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The browser tests set DJANGO_ALLOW_ASYNC_UNSAFE in this process; a deployment never has it.
DEVELOPMENT_VARIABLES = {"DEBUG", "SECRET_KEY", "ATELIER_DEV", "DJANGO_ALLOW_ASYNC_UNSAFE"}


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in DEVELOPMENT_VARIABLES}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )

"""What every bundle's manifest says whatever the protocol: the code and engine versions, the machine's
libraries, a model's public description (never its key), the task set with its content hash, and the
redactor that keeps every secret value out of the files."""

from __future__ import annotations

import hashlib
import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone

from engine.bundle.secrets import looks_secret, redactor
from leaderboard.models import SubjectModel, TaskSet
from leaderboard.providers import code_version

#: Libraries whose versions decide the numbers (fits, bootstrap draws, image metrics, PNG bytes).
LIBRARIES = ("numpy", "scipy", "scikit-image", "pillow", "sentence-transformers", "django")
ENGINE_DIR = Path(__file__).resolve().parents[2] / "engine"


def engine_sources() -> dict:
    """SHA-256 of the engine's source (every ``engine/**/*.py`` in path order) and of each package, so a
    reviewer can tell whether the engine that verifies is the one that computed."""
    whole = hashlib.sha256()
    packages: dict[str, hashlib._Hash] = {}
    for path in sorted(ENGINE_DIR.rglob("*.py")):
        data = path.read_bytes()
        name = path.relative_to(ENGINE_DIR).as_posix()
        whole.update(name.encode() + b"\0" + data)
        package = name.split("/")[0] if "/" in name else "(top level)"
        packages.setdefault(package, hashlib.sha256()).update(name.encode() + b"\0" + data)
    return {"engine": whole.hexdigest(), "packages": {k: v.hexdigest() for k, v in sorted(packages.items())}}


def engine_file_sha256(*names: str) -> dict[str, str]:
    """SHA-256 of named engine source files (``easel/render.py`` …): the version of a component that has
    no version constant is its source."""
    return {name: hashlib.sha256((ENGINE_DIR / name).read_bytes()).hexdigest() for name in names}


def environment() -> dict:
    libraries = {}
    for name in LIBRARIES:
        try:
            libraries[name] = version(name)
        except PackageNotFoundError:
            libraries[name] = None
    return {"python": platform.python_version(), "platform": platform.platform(), "libraries": libraries,
            "engine_source_sha256": engine_sources()}


def model_description(model: SubjectModel) -> dict:
    """A model as a reviewer needs it: provider id, role, endpoint host, sampling settings, prices, flags.
    The API key is never read; only the *name* of its environment variable is recorded."""
    host = urlsplit(model.base_url).hostname if model.base_url else None
    return {
        "display_name": model.display_name, "provider_id": model.provider_id, "role": model.role,
        "family": model.family, "endpoint_host": host, "api_key_env": model.api_key_env or None,
        "temperature": model.temperature, "max_tokens": model.max_tokens, "reasoning": model.reasoning,
        "price_input_per_mtok": model.price_input_per_mtok, "price_output_per_mtok": model.price_output_per_mtok,
        "is_simulated": model.is_simulated, "is_demo": model.is_demo, "accepts_images": model.accepts_images,
    }


def task_set_description(task_set: TaskSet, tasks_file_sha256: str) -> dict:
    return {"id": task_set.pk, "name": task_set.name, "version": task_set.version, "frozen": task_set.frozen,
            "is_demo": task_set.is_demo, "benchmark": task_set.benchmark.kind,
            "content_sha256": tasks_file_sha256, "content_hashed": "records/tasks.jsonl"}


def secret_values() -> list[str]:
    """Values no bundle may contain: every model's API key variable, and every environment variable
    whose name looks like a credential (SECRET_KEY, *_TOKEN, *_PASSWORD, DATABASE_URL's password...)."""
    names = set(SubjectModel.objects.exclude(api_key_env="").values_list("api_key_env", flat=True))
    names |= {n for n in os.environ if looks_secret(n)}
    values = [os.environ.get(n, "") for n in names]
    values.append(str(getattr(settings, "SECRET_KEY", "")))
    database = settings.DATABASES["default"].get("PASSWORD")
    if database:
        values.append(str(database))
    return [v for v in values if v]


def bundle_redactor():
    return redactor(secret_values())


def common_manifest(*, kind: str, protocol: str, title: str, board_code_version: str) -> dict:
    return {
        "kind": kind, "protocol": protocol, "title": title, "created_at": timezone.now().isoformat(),
        "board_code_version": board_code_version, "exporter_code_version": code_version(),
        "environment": environment(), "board": "board/board.json",
    }

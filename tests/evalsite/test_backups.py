"""evalsite/backups.py: backup_site then restore_site into a fresh database gives byte-identical label
exports and identical leaderboard snapshots, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import pytest

from tests.conftest import require_service

ROOT = Path(__file__).resolve().parents[2]


def site(database_url: str, var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "MEDIA_ROOT", "ATELIER_VAR_DIR")}
    return {**env, "DATABASE_URL": database_url, "ATELIER_VAR_DIR": str(var_dir), "ATELIER_DEV": "true",
            "DJANGO_SETTINGS_MODULE": "evalsite.settings", "LOG_LEVEL": "ERROR"}


def run(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture
def postgres_databases():
    """Two empty databases of this test's own on the PostgreSQL of DATABASE_URL, dropped afterwards."""
    require_service("postgres")
    import psycopg

    admin = os.environ["DATABASE_URL"]
    names = [f"atelier_backup_{role}_{os.getpid()}_{uuid.uuid4().hex[:6]}" for role in ("source", "restored")]
    with psycopg.connect(urlunparse(urlparse(admin)._replace(path="/postgres")), autocommit=True) as conn:
        for name in names:
            conn.execute(f'CREATE DATABASE "{name}"')
    yield [urlunparse(urlparse(admin)._replace(path=f"/{name}")) for name in names]
    with psycopg.connect(urlunparse(urlparse(admin)._replace(path="/postgres")), autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def backup_and_restore(source_url: str, restored_url: str, tmp_path: Path) -> tuple[dict, dict]:
    source = site(source_url, tmp_path / "source-var")
    before = json.loads(run(source, "-m", "tests.evalsite.backup_scenario", "seed").splitlines()[-1])
    run(source, "manage.py", "backup_site", "-o", str(tmp_path / "backup"))
    restored = site(restored_url, tmp_path / "restored-var")
    run(restored, "manage.py", "restore_site", str(tmp_path / "backup"))
    after = json.loads(run(restored, "-m", "tests.evalsite.backup_scenario", "digests").splitlines()[-1])
    return before, after


def test_a_sqlite_site_restored_into_a_fresh_database_exports_the_same_bytes(tmp_path):
    before, after = backup_and_restore(f"sqlite:///{tmp_path / 'source-var' / 'site.sqlite3'}",
                                       f"sqlite:///{tmp_path / 'restored-var' / 'site.sqlite3'}", tmp_path)
    assert before["labels"] == 15 and len(before["snapshots"]) == 1
    assert after == before


@pytest.mark.postgres
def test_a_postgres_site_restored_into_a_fresh_database_exports_the_same_bytes(tmp_path, postgres_databases):
    before, after = backup_and_restore(*postgres_databases, tmp_path)
    assert before["labels"] == 15 and len(before["snapshots"]) == 1
    assert after == before


def test_restore_refuses_a_damaged_backup_and_a_database_that_has_tables(tmp_path):
    source = site(f"sqlite:///{tmp_path / 'source-var' / 'site.sqlite3'}", tmp_path / "source-var")
    run(source, "manage.py", "migrate", "--no-input", "-v", "0")
    run(source, "manage.py", "backup_site", "-o", str(tmp_path / "backup"))
    refused = subprocess.run([sys.executable, "manage.py", "restore_site", str(tmp_path / "backup")], cwd=ROOT,
                             env=source, capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "already has tables" in refused.stderr
    with (tmp_path / "backup" / "media.tar").open("ab") as damaged:
        damaged.write(b"x")
    fresh = site(f"sqlite:///{tmp_path / 'fresh' / 'site.sqlite3'}", tmp_path / "fresh")
    refused = subprocess.run([sys.executable, "manage.py", "restore_site", str(tmp_path / "backup")], cwd=ROOT,
                             env=fresh, capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "damaged" in refused.stderr


@pytest.mark.parametrize("make, expected", [
    (lambda path: path.write_bytes(b"\x00\xff not a folder"), "is not a folder"),
    (lambda path: (path.mkdir(), (path / "manifest.json").write_text("[1, 2]")), "not a backup manifest"),
    (lambda path: (path.mkdir(), (path / "manifest.json").write_text('{"format": 1}')), "not a backup manifest"),
    (lambda path: (path.mkdir(), (path / "manifest.json").write_text('{"format": 1, "files": {"a": 3}}')),
     "not a backup manifest"),
], ids=["a-file", "a-list", "no-files", "a-file-entry-not-an-object"])
def test_restore_names_a_source_that_is_not_a_backup_folder_instead_of_a_traceback(tmp_path, make, expected):
    from evalsite.backups import BackupError, restore_site

    source = tmp_path / "backup"
    make(source)
    with pytest.raises(BackupError, match=expected) as refused:
        restore_site(source)
    assert str(source) in str(refused.value)

"""Backing the site up and restoring it: the database, the media folder and the var folder (issue 28).

A backup is a folder::

    manifest.json        what is in it: engine, time, each file's size and SHA-256
    database.pgdump      PostgreSQL: ``pg_dump --format=custom`` (restored by ``pg_restore``)
    database.sqlite3     SQLite: a copy made with SQLite's online backup API (consistent while the site runs)
    media.tar            MEDIA_ROOT (uploaded and generated images)
    var.tar              VAR_DIR without the database file and media: provider and embedding caches, …

``pg_dump`` must be of the server's major version or newer (it refuses an older one's dump otherwise);
:func:`backup_site` checks it and says so. :func:`restore_site` checks the manifest's checksums before it
writes anything, and by default refuses a database that already has tables (``force=True`` replaces it).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import tarfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.db import connection, connections

__all__ = ["BackupError", "backup_site", "restore_site"]

MANIFEST = "manifest.json"
FORMAT = 1


class BackupError(Exception):
    """A backup or restore that cannot be done; the message says why and what to do."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _is_postgres() -> bool:
    return connection.vendor == "postgresql"


def _pg_args(binary: str) -> tuple[list[str], dict[str, str]]:
    db = settings.DATABASES["default"]
    args = [binary, "--no-password"]
    for flag, key in (("--host", "HOST"), ("--port", "PORT"), ("--username", "USER")):
        if db.get(key):
            args += [flag, str(db[key])]
    env = {**os.environ}
    if db.get("PASSWORD"):
        env["PGPASSWORD"] = str(db["PASSWORD"])
    return args, env


def _major(version_text: str) -> int:
    # "pg_dump (PostgreSQL) 15.20 (Debian …)" -> 15
    return int(version_text.split(")")[1].strip().split(".")[0])


def _check_pg_dump_version() -> None:
    binary = shutil.which("pg_dump")
    if binary is None:
        raise BackupError("pg_dump is not installed: install the PostgreSQL client of the server's version")
    client = _major(subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout)
    server = connection.pg_version // 10000
    if client < server:
        raise BackupError(f"pg_dump {client} is older than the PostgreSQL {server} server: install the "
                          f"postgresql-client-{server} package")


def _sqlite_path() -> Path:
    return Path(settings.DATABASES["default"]["NAME"])


def _tar(folder: Path, out: Path, skip: Callable[[Path], bool]) -> None:
    """``folder``'s files into ``out`` in name order (so two backups of the same files are the same bytes)."""
    with tarfile.open(out, "w") as tar:
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file() and not skip(path):
                    tar.add(path, arcname=str(path.relative_to(folder)), recursive=False)


def _var_skip(path: Path) -> bool:
    """What var.tar leaves out: the database (backed up on its own), media (media.tar), test databases,
    readiness probes' files."""
    media, var = Path(settings.MEDIA_ROOT).resolve(), Path(settings.VAR_DIR).resolve()
    resolved = path.resolve()
    if resolved == media or media in resolved.parents:
        return True
    if not _is_postgres() and resolved.name.startswith(_sqlite_path().resolve().name):
        return True  # the database file and its -wal/-shm/-journal
    name = resolved.relative_to(var).parts[0]
    return name.startswith(("test-", ".readyz-")) or resolved.suffix in {".sqlite3-journal"}


def backup_site(out: Path, *, progress: Callable[[str], None] = lambda message: None) -> dict:
    """Write a backup of the site into the new or empty folder ``out``; returns the manifest."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BackupError(f"{out} is a file: give a new or empty folder")
    if out.exists() and any(out.iterdir()):
        raise BackupError(f"{out} is not empty: give a new or empty folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BackupError(f"{out} cannot be created ({exc.strerror}): give a new or empty folder") from exc
    if _is_postgres():
        _check_pg_dump_version()
        args, env = _pg_args("pg_dump")
        progress("database: pg_dump")
        done = subprocess.run([*args, "--format=custom", "--no-owner", "--file", str(out / "database.pgdump"),
                               settings.DATABASES["default"]["NAME"]], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise BackupError(f"pg_dump failed: {done.stderr.strip()[-500:]}")
        database = "database.pgdump"
    else:
        progress("database: SQLite online backup")
        source = sqlite3.connect(_sqlite_path())
        target = sqlite3.connect(out / "database.sqlite3")
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
        database = "database.sqlite3"
    progress("media folder")
    _tar(Path(settings.MEDIA_ROOT), out / "media.tar", lambda path: path.name.startswith(".readyz-"))
    progress("var folder")
    _tar(Path(settings.VAR_DIR), out / "var.tar", _var_skip)
    files = {name: {"bytes": (out / name).stat().st_size, "sha256": _sha256(out / name)}
             for name in (database, "media.tar", "var.tar")}
    manifest = {"format": FORMAT, "created_at": datetime.now(UTC).isoformat(), "engine": connection.vendor,
                "database": database, "files": files}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def _read_manifest(source: Path) -> dict:
    if source.exists() and not source.is_dir():
        raise BackupError(f"{source} is not a folder: give the folder backup_site wrote (it holds {MANIFEST})")
    try:
        manifest = json.loads((source / MANIFEST).read_text())
    except FileNotFoundError as exc:
        raise BackupError(f"{source / MANIFEST} is missing: not a backup folder") from exc
    except OSError as exc:
        raise BackupError(f"{source / MANIFEST} cannot be read ({exc.strerror})") from exc
    except ValueError as exc:
        raise BackupError(f"{source / MANIFEST}: not valid JSON ({exc})") from exc
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not all(isinstance(facts, dict) for facts in files.values()) \
            or manifest.get("database") not in files or not isinstance(manifest.get("engine"), str):
        raise BackupError(f"{source / MANIFEST}: not a backup manifest (an object naming the database engine and "
                          "file, and mapping each file to its size and SHA-256, as backup_site writes it)")
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{source / MANIFEST}: format {manifest.get('format')!r}, this site reads {FORMAT}")
    for name, facts in files.items():
        path = source / name
        if not path.is_file() or _sha256(path) != facts.get("sha256"):
            raise BackupError(f"{path} is missing or damaged (its SHA-256 differs from the manifest's)")
    return manifest


def _database_has_tables() -> bool:
    return bool(connection.introspection.table_names())


def _extract(archive: Path, folder: Path, *, force: bool) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        if not force:
            existing = [m.name for m in members if (folder / m.name).exists()]
            if existing:
                raise BackupError(f"{folder / existing[0]} already exists: restore into empty folders, or use --force")
        tar.extractall(folder, filter="data")  # "data": no absolute paths, links out or device files


def restore_site(source: Path, *, force: bool = False, progress: Callable[[str], None] = lambda message: None) -> dict:
    """Restore the backup in ``source`` into the configured database, MEDIA_ROOT and VAR_DIR."""
    source = Path(source)
    manifest = _read_manifest(source)
    if manifest["engine"] != connection.vendor:
        raise BackupError(f"the backup is of a {manifest['engine']} database; this site uses {connection.vendor}")
    if _database_has_tables() and not force:
        raise BackupError("the database already has tables: restore into a fresh database, or use --force to replace it")
    if _is_postgres():
        progress("database: pg_restore")
        args, env = _pg_args("pg_restore")
        clean = ["--clean", "--if-exists"] if force else []
        done = subprocess.run([*args, *clean, "--no-owner", "--single-transaction", "--exit-on-error",
                               "--dbname", settings.DATABASES["default"]["NAME"], str(source / manifest["database"])],
                              capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise BackupError(f"pg_restore failed: {done.stderr.strip()[-500:]}")
    else:
        progress("database: SQLite online backup, into the site's file")
        connections.close_all()
        backup = sqlite3.connect(source / manifest["database"])
        target = sqlite3.connect(_sqlite_path())
        try:
            backup.backup(target)
        finally:
            target.close()
            backup.close()
    progress("media folder")
    _extract(source / "media.tar", Path(settings.MEDIA_ROOT), force=force)
    progress("var folder")
    _extract(source / "var.tar", Path(settings.VAR_DIR), force=force)
    return manifest

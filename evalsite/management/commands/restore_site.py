"""manage.py restore_site DIR: restore a backup_site folder into the configured database and folders."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from evalsite.backups import BackupError, restore_site
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Restore a backup made by backup_site into the configured database (pg_restore, or SQLite's "
            "online backup), MEDIA_ROOT and VAR_DIR. The checksums are verified first; a database with tables "
            "or existing files are refused unless --force (which replaces them).")

    def add_arguments(self, parser):
        parser.add_argument("source", type=Path, help="the backup folder")
        parser.add_argument("--force", action="store_true", help="replace a database and files that are already there")

    def handle(self, *args, source: Path, force: bool, **options):
        try:
            manifest = restore_site(source, force=force, progress=lambda step: self.stdout.write(f"… {step}"))
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(f"Restored the {manifest['engine']} backup of {manifest['created_at']}"))

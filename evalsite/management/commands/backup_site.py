"""manage.py backup_site -o DIR: the database (pg_dump, or SQLite's online backup), media and var folders."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError

from evalsite.backups import BackupError, backup_site
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Back the site up into a new or empty folder: the database (pg_dump --format=custom on PostgreSQL, "
            "SQLite's online backup otherwise; safe while the site runs), MEDIA_ROOT and VAR_DIR, with a "
            "manifest of checksums. Restore with restore_site.")

    def add_arguments(self, parser):
        parser.add_argument("-o", "--output", required=True, type=Path, help="folder to write (new or empty)")

    def handle(self, *args, output: Path, **options):
        try:
            manifest = backup_site(output, progress=lambda step: self.stdout.write(f"… {step}"))
        except BackupError as exc:
            raise CommandError(str(exc)) from exc
        sizes = ", ".join(f"{name} {facts['bytes']:,} bytes" for name, facts in sorted(manifest["files"].items()))
        self.stdout.write(self.style.SUCCESS(f"Backed up to {output}: {sizes}"))

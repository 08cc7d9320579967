"""verify_bundle works from the bundle alone: it imports engine code only and never opens a database
connection (no system checks either, since some touch the database)."""

import sys
import time

from django.core.management.base import CommandError

from engine.bundle.verify import BundleError, verify_bundle
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Check every file of a bundle against its manifest and recompute every number of its board, offline "
            "and without the database; exit 1 on any difference or hash mismatch.")
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("path", metavar="PATH", help="a bundle directory or .tar.gz")
        parser.add_argument("--show-identical", action="store_true", help="list every identical number too")

    def handle(self, *args, **opts):
        started = time.monotonic()
        self.stderr.write(f"verifying {opts['path']} (hashes, then every number) …")
        try:
            report = verify_bundle(opts["path"], progress=lambda message: self.stderr.write(
                f"[{time.monotonic() - started:6.1f} s] {message} …"))
        except BundleError as exc:
            raise CommandError(str(exc)) from exc
        for line in report.lines(show_identical=opts["show_identical"]):
            self.stdout.write(line)
        self.stderr.write(f"verified in {time.monotonic() - started:.1f} s")
        if not report.ok:
            sys.exit(1)

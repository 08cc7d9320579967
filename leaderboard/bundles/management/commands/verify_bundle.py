"""verify_bundle works from the bundle alone: it imports engine code only and never opens a database
connection (no system checks either, since some touch the database)."""

import sys
import time

from django.core.management.base import CommandError

from engine.bundle.signature import SigningKeyError, read_public_keys
from engine.bundle.verify import BundleError, verify_bundle
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Check a bundle's signature and every file against its manifest, and recompute every number of its "
            "board, offline and without the database; exit 1 on any difference, hash mismatch or failing "
            "signature (with --public-key: any bundle that key did not sign).")
    requires_system_checks: list = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("path", metavar="PATH", help="a bundle directory or .tar.gz")
        parser.add_argument("--show-identical", action="store_true", help="list every identical number too")
        parser.add_argument("--public-key", action="append", default=[], metavar="FILE",
                            help="a PEM public key you trust (the exporting site publishes its key at "
                                 "/bundles/signing-key.pem); the bundle verifies only if one of them signed it. "
                                 "Repeatable.")

    def handle(self, *args, **opts):
        started = time.monotonic()
        trusted = []
        for name in opts["public_key"]:
            try:
                with open(name, "rb") as handle:
                    trusted += read_public_keys(handle.read(64 * 1024), source=name)
            except OSError as exc:
                raise CommandError(f"--public-key {name}: {exc.strerror or exc}") from exc
            except SigningKeyError as exc:
                raise CommandError(f"--public-key {exc}") from exc
        self.stderr.write(f"verifying {opts['path']} (hashes, then every number) …")
        try:
            report = verify_bundle(opts["path"], progress=lambda message: self.stderr.write(
                f"[{time.monotonic() - started:6.1f} s] {message} …"), trusted_keys=trusted or None)
        except BundleError as exc:
            raise CommandError(str(exc)) from exc
        for line in report.lines(show_identical=opts["show_identical"]):
            self.stdout.write(line)
        self.stderr.write(f"verified in {time.monotonic() - started:.1f} s")
        if not report.ok:
            sys.exit(1)

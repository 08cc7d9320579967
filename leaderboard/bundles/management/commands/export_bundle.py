import time

from django.core.management.base import CommandError

from leaderboard.bundles.export import KINDS, BundleExportError, bundle_export
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Export one leaderboard as a reproducibility bundle (manifest, records, media, board in JSON/CSV/LaTeX, "
            "static viewer): KIND ekphrasis (ID: a snapshot), easel (ID: a task set) or c2 (ID: a finished run).")

    def add_arguments(self, parser):
        parser.add_argument("kind", metavar="KIND", choices=KINDS, help="ekphrasis, easel or c2")
        parser.add_argument("id", metavar="ID", help="snapshot id (ekphrasis), task set id (easel), run id (c2)")
        parser.add_argument("-o", "--output", required=True, metavar="PATH",
                            help="a new directory, or a file ending in .tar.gz")

    def handle(self, *args, **opts):
        started = time.monotonic()
        self.stderr.write(f"exporting {opts['kind']} {opts['id']} …")
        try:
            result = bundle_export(opts["kind"], opts["id"], opts["output"], progress=lambda message: self.stderr.write(
                f"[{time.monotonic() - started:6.1f} s] {message} …"))
        except BundleExportError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{result.title}: {result.files} files, {result.bytes} bytes → {result.path} "
                          f"({time.monotonic() - started:.1f} s)")

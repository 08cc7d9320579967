from django.core.management.base import CommandError

from engine.bundle.verify import BundleError
from leaderboard.bundles.imports import BundleImportError, bundle_import
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Load a bundle into this site as a read-only imported board (labelled imported, and simulated/demo "
            "as the bundle says); the bundle is verified first and refused if any file or number differs.")

    def add_arguments(self, parser):
        parser.add_argument("path", metavar="PATH", help="a bundle directory or .tar.gz")
        parser.add_argument("--allow-unverified", action="store_true",
                            help="import even when verification fails (the board is then labelled NOT VERIFIED)")

    def handle(self, *args, **opts):
        try:
            board, created = bundle_import(opts["path"], allow_unverified=opts["allow_unverified"])
        except (BundleError, BundleImportError) as exc:
            raise CommandError(str(exc)) from exc
        state = "imported" if created else "already imported"
        self.stdout.write(f"{state}: {board.title} (imported board {board.pk}, "
                          f"{'verified' if board.verified else 'NOT VERIFIED'}) — /bundles/imported/{board.pk}/")

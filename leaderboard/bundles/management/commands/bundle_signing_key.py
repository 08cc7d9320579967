"""Print this site's bundle-signing public key (PEM) and its key id, making the key on first use."""

from django.core.management.base import CommandError

from engine.bundle.signature import SigningKeyError
from leaderboard.bundles.signing import site_public_key_pem, site_signing_key_id
from leaderboard.run_command import AtelierCommand


class Command(AtelierCommand):
    help = ("Print the public key this site signs bundles with (PEM, as served at /bundles/signing-key.pem) for "
            "reviewers' `verify_bundle --public-key`; the key id goes to stderr.")
    requires_migrations_checks = False

    def handle(self, *args, **opts):
        try:
            pem, kid = site_public_key_pem(), site_signing_key_id()
        except (SigningKeyError, OSError) as exc:
            raise CommandError(f"the bundle-signing key (ATELIER_BUNDLE_SIGNING_KEY): {exc}") from exc
        self.stdout.write(pem, ending="")
        self.stderr.write(f"key id {kid}")

"""The site's bundle-signing key: every exported bundle's manifest is signed with it, and its public half is
what a reviewer passes to ``verify_bundle --public-key`` (:mod:`engine.bundle.signature`)."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.conf import settings

from engine.bundle.signature import key_id, load_or_create_signing_key, public_key_pem

__all__ = ["site_public_key_pem", "site_signing_key", "site_signing_key_id"]


def site_signing_key() -> Ed25519PrivateKey:
    """The private key at ``settings.ATELIER_BUNDLE_SIGNING_KEY``, made on first use."""
    return load_or_create_signing_key(settings.ATELIER_BUNDLE_SIGNING_KEY)


def site_public_key_pem() -> str:
    """The public key a reviewer checks this site's bundles with (PEM)."""
    return public_key_pem(site_signing_key().public_key())


def site_signing_key_id() -> str:
    return key_id(site_signing_key().public_key())

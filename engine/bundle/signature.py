"""Who made a bundle: an Ed25519 signature of its manifest by the exporting site's key.

The manifest lists every file's SHA-256, so one signature over the manifest's bytes covers the whole bundle.
Recomputation alone cannot tell a forged bundle from a real one when the forger is consistent (two models'
names swapped in every record recompute to the swapped board); a signature can, when the reviewer checks it
against the key the site publishes (``/bundles/signing-key.pem``), not against the key the bundle carries.

``signature.json`` (beside ``manifest.json``, not listed in it)::

    {"algorithm": "ed25519", "signed_file": "manifest.json", "manifest_sha256": "<hex>",
     "key_id": "<16 hex>", "public_key_pem": "-----BEGIN PUBLIC KEY-----...", "signature": "<base64>"}

Ed25519 is RFC 8032's (through the ``cryptography`` library), so ``openssl pkeyutl -verify -rawin`` checks
the same signature with the same public key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from engine.bundle.manifest import MANIFEST, SIGNATURE, sha256_bytes
from engine.strict_json import json_decode

__all__ = ["SIGNATURE", "SIGNATURE_ALGORITHM", "SignatureCheck", "SigningKeyError", "check_signature", "key_id",
           "load_or_create_signing_key", "public_key_pem", "read_public_keys", "sign_manifest", "write_signature"]

SIGNATURE_ALGORITHM = "ed25519"
#: A signature file is a few hundred bytes; anything far larger is not one (and is not read whole).
MAX_SIGNATURE_BYTES = 64 * 1024


class SigningKeyError(ValueError):
    """A key file that cannot be read as an Ed25519 key (the message names the file)."""


def key_id(public_key: Ed25519PublicKey) -> str:
    """The first 16 hex digits of SHA-256 over the raw 32-byte public key (how reports name a key)."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def public_key_pem(public_key: Ed25519PublicKey) -> str:
    """The public key as PEM (SubjectPublicKeyInfo), the form ``openssl`` reads."""
    return public_key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def load_or_create_signing_key(path: str | Path) -> Ed25519PrivateKey:
    """The site's private key at ``path`` (PEM, PKCS#8, unencrypted), made on first use.

    Made with ``O_EXCL`` and mode 0600 into a temporary name and linked into place, so two processes that
    export at once end with one key (the loser reads the winner's) and nobody sees a half-written file.
    """
    path = Path(path)
    if not path.exists():
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(pem)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(partial, path)  # fails if another process linked its key first: keep that one
            except FileExistsError:
                pass
        finally:
            partial.unlink(missing_ok=True)
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (ValueError, TypeError, OSError) as exc:
        raise SigningKeyError(f"{path}: not a readable unencrypted PEM private key ({exc})") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{path}: a {type(key).__name__}, not an Ed25519 private key")
    return key


def read_public_keys(text: str | bytes, *, source: str = "public key") -> list[Ed25519PublicKey]:
    """Every Ed25519 public key in a PEM text (one or more ``BEGIN PUBLIC KEY`` blocks)."""
    data = text.encode() if isinstance(text, str) else text
    marker = b"-----BEGIN PUBLIC KEY-----"
    blocks = [marker + part for part in data.split(marker)[1:]]
    if not blocks:
        raise SigningKeyError(f"{source}: no '-----BEGIN PUBLIC KEY-----' block (expected the PEM the site "
                              f"publishes at /bundles/signing-key.pem)")
    keys = []
    for n, block in enumerate(blocks, start=1):
        try:
            key = serialization.load_pem_public_key(block)
        except (ValueError, TypeError) as exc:
            raise SigningKeyError(f"{source}, key {n}: not a readable PEM public key ({exc})") from exc
        if not isinstance(key, Ed25519PublicKey):
            raise SigningKeyError(f"{source}, key {n}: a {type(key).__name__}, not an Ed25519 public key")
        keys.append(key)
    return keys


def sign_manifest(manifest_bytes: bytes, private_key: Ed25519PrivateKey) -> dict:
    """The ``signature.json`` record of ``manifest_bytes`` (Ed25519, RFC 8032)."""
    public = private_key.public_key()
    return {
        "algorithm": SIGNATURE_ALGORITHM,
        "signed_file": MANIFEST,
        "manifest_sha256": sha256_bytes(manifest_bytes),
        "key_id": key_id(public),
        "public_key_pem": public_key_pem(public),
        "signature": base64.b64encode(private_key.sign(manifest_bytes)).decode(),
    }


def write_signature(root: str | Path, private_key: Ed25519PrivateKey) -> dict:
    """Sign ``root/manifest.json`` and write ``root/signature.json``; returns the record."""
    root = Path(root)
    record = sign_manifest((root / MANIFEST).read_bytes(), private_key)
    (root / SIGNATURE).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return record


@dataclass(frozen=True)
class SignatureCheck:
    """What the signature says about who made the bundle.

    ``status``: ``"trusted"`` (valid, by one of the keys the reviewer trusts), ``"valid"`` (valid under the
    key the bundle carries; no trusted key was given, so it says only that the bundle is unchanged since
    someone holding that key signed it), ``"other-key"`` (valid, by a key the reviewer does not trust),
    ``"invalid"`` (does not match the manifest, or cannot be read), ``"unsigned"`` (no ``signature.json``).
    """

    status: str
    key_id: str = ""
    detail: str = ""
    trusted_keys_given: bool = False

    @property
    def refuses(self) -> bool:
        """Whether this result alone makes the bundle NOT VERIFIED (given whether keys were trusted)."""
        return self.status in ("invalid", "other-key") or (self.status == "unsigned" and self.trusted_keys_given)

    def line(self) -> str:
        return {
            "trusted": f"SIGNED by trusted key {self.key_id}",
            "valid": f"signed by key {self.key_id}, not checked against a trusted key (pass --public-key with the "
                     f"site's /bundles/signing-key.pem to know who made it)",
            "other-key": f"SIGNED BY AN UNTRUSTED KEY {self.key_id}: {self.detail}",
            "invalid": f"SIGNATURE INVALID: {self.detail}",
            "unsigned": f"unsigned: {self.detail}",
        }[self.status]


def _invalid(detail: str, kid: str = "") -> SignatureCheck:
    return SignatureCheck("invalid", kid, f"{SIGNATURE}: {detail}")


def check_signature(root: str | Path, trusted: Iterable[Ed25519PublicKey] | None = None) -> SignatureCheck:
    """Check ``root/signature.json`` against ``root/manifest.json``; with ``trusted`` keys, also that one of
    them made it (a valid signature by any other key is ``"other-key"``, no signature is refused)."""
    root = Path(root)
    trusted = list(trusted or [])
    path = root / SIGNATURE
    if not path.is_file():
        if trusted:
            return SignatureCheck("unsigned", "", "no signature.json, but a trusted key was given: nothing says who made it",
                                  trusted_keys_given=True)
        return SignatureCheck("unsigned", "", "no signature.json; the numbers below are consistent, but nothing says who made them")
    if path.stat().st_size > MAX_SIGNATURE_BYTES:
        return _invalid(f"{path.stat().st_size} bytes; a signature record is under {MAX_SIGNATURE_BYTES}")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return _invalid("not UTF-8")
    # strictly: a duplicated "signature" key would leave which one was checked to the reader
    record, problems = json_decode(text, max_depth=4)
    if problems:
        return _invalid(f"line {problems[0].line}, field {problems[0].field or '(record)'}: {problems[0].message}")
    if not isinstance(record, dict):
        return _invalid("not a JSON object")
    for name in ("algorithm", "public_key_pem", "signature"):
        if not isinstance(record.get(name), str):
            return _invalid(f"field {name}: missing or not a string")
    if record["algorithm"] != SIGNATURE_ALGORITHM:
        return _invalid(f"field algorithm: {record['algorithm']!r}; this verifier checks {SIGNATURE_ALGORITHM!r}")
    try:
        (carried,) = read_public_keys(record["public_key_pem"], source=f"{SIGNATURE}, field public_key_pem")
    except (SigningKeyError, ValueError) as exc:
        return _invalid(f"field public_key_pem: {exc}")
    kid = key_id(carried)
    try:
        signature = base64.b64decode(record["signature"], validate=True)
    except (binascii.Error, ValueError):
        return _invalid("field signature: not base64", kid)
    manifest = (root / MANIFEST).read_bytes()
    try:
        carried.verify(signature, manifest)
    except InvalidSignature:
        return _invalid(f"does not match {MANIFEST} (the manifest changed after key {kid} signed it, "
                        f"or the signature is not this key's)", kid)
    if not trusted:
        return SignatureCheck("valid", kid)
    trusted_ids = {key_id(k) for k in trusted}
    if kid in trusted_ids:
        return SignatureCheck("trusted", kid, trusted_keys_given=True)
    return SignatureCheck("other-key", kid, f"the trusted key(s) are {', '.join(sorted(trusted_ids))}; "
                                            f"whoever holds key {kid} made this bundle", trusted_keys_given=True)

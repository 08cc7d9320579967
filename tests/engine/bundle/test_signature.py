"""engine/bundle/signature.py: the manifest's Ed25519 signature, checked against the key a reviewer trusts."""

from __future__ import annotations

import base64
import json
import multiprocessing
import shutil
import stat
import subprocess

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from engine.bundle.manifest import MANIFEST, SIGNATURE
from engine.bundle.signature import (
    SigningKeyError,
    check_signature,
    key_id,
    load_or_create_signing_key,
    public_key_pem,
    read_public_keys,
    write_signature,
)

MANIFEST_TEXT = '{"kind": "ekphrasis", "files": {"records/comparisons.jsonl": {"sha256": "' + "a" * 64 + '"}}}\n'


@pytest.fixture
def site_key():
    return Ed25519PrivateKey.generate()


@pytest.fixture
def bundle(tmp_path, site_key):
    root = tmp_path / "bundle"
    root.mkdir()
    (root / MANIFEST).write_text(MANIFEST_TEXT)
    write_signature(root, site_key)
    return root


def test_a_signed_manifest_is_trusted_under_the_signing_sites_public_key(bundle, site_key):
    check = check_signature(bundle, [site_key.public_key()])
    assert check.status == "trusted" and check.key_id == key_id(site_key.public_key())
    assert not check.refuses


def test_a_signed_manifest_without_a_trusted_key_is_valid_and_named_by_its_key(bundle, site_key):
    check = check_signature(bundle)
    assert check.status == "valid" and not check.refuses
    assert key_id(site_key.public_key()) in check.line() and "--public-key" in check.line()


def test_a_manifest_changed_after_signing_is_invalid_with_or_without_a_trusted_key(bundle, site_key):
    (bundle / MANIFEST).write_text(MANIFEST_TEXT.replace("a" * 64, "b" * 64))
    for trusted in (None, [site_key.public_key()]):
        check = check_signature(bundle, trusted)
        assert check.status == "invalid" and check.refuses
        assert "does not match manifest.json" in check.detail


def test_a_bundle_re_signed_by_a_forger_is_refused_under_the_sites_key(bundle, site_key):
    # the consistent forger: rewrites the manifest (every hash in line) and signs it with a key of its own
    (bundle / MANIFEST).write_text(MANIFEST_TEXT.replace("a" * 64, "b" * 64))
    forger = Ed25519PrivateKey.generate()
    write_signature(bundle, forger)
    assert check_signature(bundle).status == "valid"  # valid under the key it carries, and says which
    check = check_signature(bundle, [site_key.public_key()])
    assert check.status == "other-key" and check.refuses
    assert key_id(forger.public_key()) in check.line() and key_id(site_key.public_key()) in check.detail


def test_a_forger_who_keeps_the_sites_public_key_in_the_record_is_invalid(bundle, site_key):
    (bundle / MANIFEST).write_text(MANIFEST_TEXT.replace("a" * 64, "b" * 64))
    forged = json.loads((bundle / SIGNATURE).read_text())
    forged["signature"] = base64.b64encode(Ed25519PrivateKey.generate().sign((bundle / MANIFEST).read_bytes())).decode()
    (bundle / SIGNATURE).write_text(json.dumps(forged))
    assert check_signature(bundle, [site_key.public_key()]).status == "invalid"


def test_an_unsigned_bundle_is_refused_only_when_a_key_is_trusted(bundle, site_key):
    (bundle / SIGNATURE).unlink()
    assert check_signature(bundle).status == "unsigned" and not check_signature(bundle).refuses
    check = check_signature(bundle, [site_key.public_key()])
    assert check.status == "unsigned" and check.refuses


@pytest.mark.parametrize(("mutate", "named"), [
    (lambda text: "not json", "not valid JSON"),
    (lambda text: "[]", "not a JSON object"),
    (lambda text: text[:-2] + ', "signature": "AAAA"}', "duplicate"),
    (lambda text: text.replace('"ed25519"', '"rsa"'), "field algorithm"),
    (lambda text: text.replace('"signature": "', '"signature": "!!'), "field signature: not base64"),
    (lambda text: text.replace("BEGIN PUBLIC KEY", "BEGIN NOTHING"), "field public_key_pem"),
    (lambda text: json.dumps({k: v for k, v in json.loads(text).items() if k != "signature"}), "field signature"),
])
def test_an_unreadable_signature_record_is_invalid_naming_what(bundle, mutate, named):
    path = bundle / SIGNATURE
    path.write_text(mutate(path.read_text().strip()))
    check = check_signature(bundle)
    assert check.status == "invalid" and check.refuses
    assert named in check.detail and SIGNATURE in check.detail


def test_a_huge_signature_file_is_invalid_without_being_read(bundle):
    (bundle / SIGNATURE).write_bytes(b" " * (1 << 20))
    assert "bytes" in check_signature(bundle).detail


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_openssl_checks_the_same_signature_with_the_published_key(bundle, site_key, tmp_path):
    # an independent implementation of RFC 8032: what a reviewer without Python can run
    record = json.loads((bundle / SIGNATURE).read_text())
    (tmp_path / "sig.bin").write_bytes(base64.b64decode(record["signature"]))
    (tmp_path / "key.pem").write_text(public_key_pem(site_key.public_key()))
    command = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(tmp_path / "key.pem"), "-rawin",
               "-in", str(bundle / MANIFEST), "-sigfile", str(tmp_path / "sig.bin")]
    assert subprocess.run(command, capture_output=True).returncode == 0
    (bundle / MANIFEST).write_text(MANIFEST_TEXT + " ")
    assert subprocess.run(command, capture_output=True).returncode != 0


def test_the_signing_key_is_made_once_private_to_its_owner_and_read_back(tmp_path):
    path = tmp_path / "keys" / "bundle-signing-key.pem"
    first = load_or_create_signing_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert key_id(load_or_create_signing_key(path).public_key()) == key_id(first.public_key())
    assert list(path.parent.iterdir()) == [path]  # no partial file left behind


def _key_id_of(path: str) -> str:
    return key_id(load_or_create_signing_key(path).public_key())


def test_processes_making_the_key_at_once_end_with_one_key(tmp_path):
    path = str(tmp_path / "bundle-signing-key.pem")
    with multiprocessing.get_context("fork").Pool(4) as pool:
        ids = pool.map(_key_id_of, [path] * 8)
    assert len(set(ids)) == 1 and ids[0] == _key_id_of(path)


def test_a_key_file_that_is_not_an_ed25519_private_key_is_refused_naming_it(tmp_path):
    path = tmp_path / "key.pem"
    path.write_text("garbage")
    with pytest.raises(SigningKeyError, match="key.pem"):
        load_or_create_signing_key(path)
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(rsa_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    with pytest.raises(SigningKeyError, match="not an Ed25519 private key"):
        load_or_create_signing_key(path)


def test_public_keys_are_read_from_a_pem_with_several_and_other_kinds_are_refused(site_key):
    other = Ed25519PrivateKey.generate()
    text = public_key_pem(site_key.public_key()) + public_key_pem(other.public_key())
    assert [key_id(k) for k in read_public_keys(text)] == [key_id(site_key.public_key()), key_id(other.public_key())]
    rsa_pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    with pytest.raises(SigningKeyError, match="not an Ed25519 public key"):
        read_public_keys(rsa_pem, source="reviewer.pem")
    with pytest.raises(SigningKeyError, match="no '-----BEGIN PUBLIC KEY-----'"):
        read_public_keys("hello", source="reviewer.pem")

import json
import tarfile

import pytest

from engine.bundle.manifest import MANIFEST, BundleWriter
from engine.bundle.verify import BundleError, verify_bundle


def _archive(tmp_path):
    writer = BundleWriter(tmp_path / "b")
    writer.jsonl("records/r.jsonl", [{"id": k, "text": "x" * 2000} for k in range(50)])
    writer.manifest({"kind": "c2"})
    path = tmp_path / "b.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        tar.add(writer.root, arcname="b")
    return path


def test_a_truncated_archive_is_a_bundle_error_not_a_traceback(tmp_path):
    path = _archive(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(BundleError, match="not a readable .tar.gz"):
        verify_bundle(path)


def test_a_bundle_of_another_format_is_refused_naming_its_format_not_reported_as_forged(tmp_path):
    # format 1 bundles have no board_facts: their board files cannot be rebuilt, which would read as forgery
    writer = BundleWriter(tmp_path / "old")
    writer.jsonl("records/r.jsonl", [{"id": 1}])
    writer.manifest({"kind": "c2"})
    manifest = json.loads((writer.root / MANIFEST).read_text())
    (writer.root / MANIFEST).write_text(json.dumps({**manifest, "bundle_format": 1}))
    with pytest.raises(BundleError, match="bundle_format 1; this verifier reads format 2"):
        verify_bundle(writer.root)

import tarfile

import pytest

from engine.bundle.manifest import BundleWriter
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

import io
import json
import lzma
import tarfile

import pytest

from engine.bundle import verify
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


def test_an_archive_truncated_before_its_first_header_is_a_bundle_error_not_a_traceback(tmp_path):
    # the gzip stream ends inside the first 512-byte header: tarfile.open itself raised EOFError
    path = _archive(tmp_path)
    path.write_bytes(path.read_bytes()[:12])
    with pytest.raises(BundleError, match="not a readable .tar.gz"):
        verify_bundle(path)


def test_an_xz_archive_corrupted_past_its_first_header_is_a_bundle_error_not_a_traceback(tmp_path, monkeypatch):
    # tarfile.open("r:*") reads .tar.xz too, and a corrupt xz stream found while extracting raises
    # lzma.LZMAError, which is not an OSError. (Corrupting real bytes proved flaky: whether tarfile reads the
    # corrupt block's check depends on where the archive's end falls, which moves with the files' mtimes.)
    source = _small_bundle(tmp_path)
    path = tmp_path / "b.tar.xz"
    with tarfile.open(path, "w:xz") as tar:
        tar.add(source, arcname="b")

    def corrupt(self, *args, **kwargs):
        raise lzma.LZMAError("Corrupt input data")

    monkeypatch.setattr(tarfile.TarFile, "extractall", corrupt)
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


def _small_bundle(tmp_path, name="b"):
    writer = BundleWriter(tmp_path / name)
    writer.jsonl("records/r.jsonl", [{"id": 1}])
    writer.manifest({"kind": "c2"})
    return writer.root


def _manifest_with(root, **fields):
    manifest = json.loads((root / MANIFEST).read_text())
    (root / MANIFEST).write_text(json.dumps({**manifest, **fields}))


@pytest.mark.parametrize("board", ["/etc/hostname", "../outside/board.json", "board/../../outside.json"])
def test_a_manifest_naming_a_board_outside_the_bundle_is_refused_naming_the_field(tmp_path, board):
    root = _small_bundle(tmp_path)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "board.json").write_text("{}")
    _manifest_with(root, board=board)
    with pytest.raises(BundleError, match=r"manifest.json, field board: .* not a relative path inside the bundle"):
        verify_bundle(root)


def test_a_listed_file_name_outside_the_bundle_is_refused_naming_it(tmp_path):
    root = _small_bundle(tmp_path)
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["files"]["../secret.txt"] = {"sha256": "0" * 64, "bytes": 1}
    (root / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match=r"field files\['../secret.txt'\]"):
        verify_bundle(root)


def test_a_symbolic_link_in_a_bundle_folder_is_refused(tmp_path):
    root = _small_bundle(tmp_path)
    (tmp_path / "elsewhere.jsonl").write_text('{"id": 1}\n')
    (root / "records" / "r.jsonl").unlink()
    (root / "records" / "r.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(BundleError, match="records/r.jsonl is a symbolic link"):
        verify_bundle(root)


def _tar_of(tmp_path, members: list[tuple[str, bytes]]):
    path = tmp_path / "odd.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_an_archive_holding_one_name_twice_is_refused_naming_it(tmp_path):
    root = _small_bundle(tmp_path)
    manifest = (root / MANIFEST).read_bytes()
    record = (root / "records" / "r.jsonl").read_bytes()
    path = _tar_of(tmp_path, [("b/manifest.json", manifest), ("b/records/r.jsonl", record),
                              ("b/records/r.jsonl", b'{"id": 2}\n')])
    with pytest.raises(BundleError, match="'b/records/r.jsonl' appears twice"):
        verify_bundle(path)


def test_an_archive_unpacking_past_the_limit_is_refused_before_it_is_unpacked(tmp_path, monkeypatch):
    # a real bomb is gigabytes of zeros; the limit is lowered so that a small archive stands for one
    path = _tar_of(tmp_path, [("b/manifest.json", b"{}"), ("b/zeros.bin", bytes(5000))])
    monkeypatch.setattr(verify, "MAX_EXTRACTED_BYTES", 4096)
    with pytest.raises(BundleError, match="unpacks to more than 4096 bytes"):
        verify_bundle(path)


def test_an_archive_member_past_the_per_file_cap_is_refused_from_its_size_before_anything_is_unpacked(tmp_path, monkeypatch):
    # a real one is gigabytes of "[[[[…" that gzip shrinks a thousandfold, parsed whole once unpacked; the cap
    # is lowered so that a small archive stands for one
    path = _tar_of(tmp_path, [("b/manifest.json", b"{}"), ("b/records/big.jsonl", b"[" * 5000)])
    monkeypatch.setattr(verify, "MAX_FILE_BYTES", 4096)

    def unpacked(*args, **kwargs):
        raise AssertionError("unpacked before the refusal")

    monkeypatch.setattr(tarfile.TarFile, "extractall", unpacked)
    with pytest.raises(BundleError, match=r"archive member 'b/records/big.jsonl' is 5000 bytes; no file of a "
                                          r"bundle is read past 4096 bytes"):
        verify_bundle(path)


def test_a_bundle_folder_holding_a_file_past_the_per_file_cap_is_refused_naming_it_before_it_is_read(tmp_path, monkeypatch):
    root = _small_bundle(tmp_path)
    (root / "records" / "r.jsonl").write_bytes(b"[" * 5000)
    monkeypatch.setattr(verify, "MAX_FILE_BYTES", 4096)
    with pytest.raises(BundleError, match=r"records/r.jsonl is 5000 bytes; no file of a bundle is read past 4096 bytes"):
        verify_bundle(root)


@pytest.mark.parametrize("name", ["../evil.json", "/tmp/evil.json"])
def test_an_archive_member_outside_the_bundle_is_refused(tmp_path, name):
    path = _tar_of(tmp_path, [("b/manifest.json", b"{}"), (name, b"{}")])
    with pytest.raises(BundleError, match="is not a plain file inside the bundle"):
        verify_bundle(path)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("files", [], "manifest.json, field files: expected a JSON object, got list"),
    ("files", {"records/r.jsonl": "abc"}, "manifest.json, field files\\['records/r.jsonl'\\]: expected"),
    ("configuration", [], "manifest.json, field configuration: expected a JSON object, got list"),
])
def test_a_manifest_field_of_the_wrong_shape_is_refused_naming_it_not_a_traceback(tmp_path, field, value, message):
    root = _small_bundle(tmp_path)
    _manifest_with(root, **{field: value})
    with pytest.raises(BundleError, match=message):
        verify_bundle(root)


def test_the_verdict_counts_the_reported_values_no_record_recomputes():
    # "VERIFIED" covered values copied from the site (model ids, usage) as if they had been recomputed
    report = verify.VerifyReport(kind="ekphrasis", title="t", bundle_sha256="0", not_recomputed=["usage (copied)"])
    lines = report.lines()
    assert "reported, not recomputed: usage (copied)" in lines
    assert lines[-1].endswith("— 1 reported value(s) not recomputed (listed above) — VERIFIED")

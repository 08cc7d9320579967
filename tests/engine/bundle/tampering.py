"""How the bundle tests tamper with a bundle: a number changed in a file, the manifest brought in line with
an edited file, the derived files rewritten from edited records (the consistent tamperer that the
recomputation and the rebuild must still catch)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from engine.bundle.board_files import board_files
from engine.bundle.manifest import json_text, sha256_bytes


def forge_a_number(path: Path) -> int:
    """Change the first decimal digit of the file's first number with a fraction; returns its line (1-based)."""
    data = path.read_bytes()  # bytes: a CSV's CRLF stays as it is
    at = re.search(rb"(?<=\d\.)\d", data).start()
    path.write_bytes(data[:at] + (b"1" if data[at:at + 1] != b"1" else b"2") + data[at + 1:])
    return data.count(b"\n", 0, at) + 1


def manifest_hash_updated(root: Path, name: str) -> None:
    """The manifest's hash, size (and line digests) of ``name`` brought in line with the file as it now is."""
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    data = (root / name).read_bytes()
    entry = manifest["files"][name]
    entry["sha256"], entry["bytes"] = sha256_bytes(data), len(data)
    if "lines" in entry:
        entry["lines"] = [sha256_bytes(line)[:16] for line in data.splitlines()]
    (root / "manifest.json").write_text(json_text(manifest), encoding="utf-8")


def derived_files_rebuilt(root: Path) -> None:
    """The board's CSV, LaTeX and viewer rewritten from the files as they now are, with their hashes: the
    viewer's drill-down shows records (a verdict, a grade, a cluster), so a consistent tamperer rewrites it."""
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    for name, text in board_files(root, manifest).items():
        if (root / name).read_bytes() != text.encode("utf-8"):
            (root / name).write_bytes(text.encode("utf-8"))
            manifest_hash_updated(root, name)

"""A bundle's files and their hashes: JSON and JSON-lines writers, the manifest, and its check.

Every file of a bundle is listed in ``manifest.json`` with its size and SHA-256 (FIPS 180-4). A
JSON-lines file also lists one digest per line (the first 16 hex digits of the line's SHA-256), so a
check can say which record of the file changed, not only that the file did. Media are stored once under
``media/<sha256>.<ext>``: the name is the content's hash, and the check compares the two as well.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.strict_json import MAX_JSON_DEPTH, json_decode

__all__ = ["BOARD_CSV", "BOARD_TEX", "BUNDLE_FORMAT", "MANIFEST", "FileProblem", "BundleWriter", "FieldTypeError", "MissingField",
           "check_files", "json_type",
           "manifest_names", "name_problem", "numbered_records", "read_json", "read_jsonl", "records_read_once", "sha256_bytes",
           "symlinks"]

#: Version of the bundle layout (bumped when a file's meaning changes).
# 2: the manifest records board_facts, so board.csv, board.tex and the viewer can be rebuilt (2026-12-04)
BUNDLE_FORMAT = 2
MANIFEST = "manifest.json"
SIGNATURE = "signature.json"
#: The board as a spreadsheet and as a paper's table, written from ``board/board.json`` (engine.bundle.board_files).
BOARD_CSV = "board/board.csv"
BOARD_TEX = "board/board.tex"
#: Hex digits kept of each line's SHA-256: 64 bits name a changed record without doubling the manifest.
LINE_DIGEST_HEX = 16
#: Deepest nesting read from a bundle's JSON: a record wraps values that were themselves read under the
#: import limit (a request's messages and schema, a task's data), so the bundle allows that much again.
BUNDLE_JSON_DEPTH = 2 * MAX_JSON_DEPTH


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _line_digest(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()[:LINE_DIGEST_HEX]


def json_text(value: Any) -> str:
    """Stable JSON: sorted keys, two-space indent, no NaN (a bundle is read by other languages too)."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def record_line(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class BundleWriter:
    """Writes a bundle's files under ``root`` and remembers each file's hash for the manifest.

    ``redact(text) -> text`` is applied to every text file before it is hashed and written (the
    exporter's last guard against a secret value in any record)."""

    def __init__(self, root: Path, redact=None) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.files: dict[str, dict] = {}
        self._redact = redact or (lambda text: text)

    def _write(self, name: str, data: bytes, lines: list[str] | None = None) -> str:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        entry: dict[str, Any] = {"sha256": sha256_bytes(data), "bytes": len(data)}
        if lines is not None:
            entry["lines"] = lines
        self.files[name] = entry
        return name

    def text(self, name: str, text: str) -> str:
        return self._write(name, self._redact(text).encode("utf-8"))

    def json(self, name: str, value: Any) -> str:
        return self.text(name, json_text(value))

    def jsonl(self, name: str, records: Iterable[Any]) -> str:
        lines = [self._redact(record_line(r)) for r in records]
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        return self._write(name, data, [_line_digest(line.encode("utf-8")) for line in lines])

    def media(self, data: bytes, ext: str = "png") -> str:
        """Store ``data`` once under its hash; returns the hash (what records cite)."""
        digest = sha256_bytes(data)
        name = f"media/{digest}.{ext}"
        if name not in self.files:
            self._write(name, bytes(data))
        return digest

    def as_read(self, value: Any) -> Any:
        """``value`` as a reader of the bundle will find it once written: through the redactor and JSON."""
        return json.loads(self._redact(json_text(value)))

    def manifest(self, fields: Mapping[str, Any]) -> dict:
        manifest = {**fields, "bundle_format": BUNDLE_FORMAT, "files": dict(sorted(self.files.items()))}
        (self.root / MANIFEST).write_text(self._redact(json_text(manifest)), encoding="utf-8")
        return manifest


@dataclass(frozen=True)
class FileProblem:
    """A file whose bytes do not match the manifest: ``what`` is missing, changed, unlisted or misnamed;
    ``lines`` the 1-based lines of a JSON-lines file whose records changed (or were added or removed).
    The verifier adds its own: a derived file "not as rebuilt" (or "not rebuilt") from the board
    (:mod:`engine.bundle.board_files`), with its first differing line."""

    path: str
    what: str
    detail: str = ""
    lines: tuple[int, ...] = ()
    records: tuple[str, ...] = ()  # what each changed line now holds (its identifying fields)


#: Changed lines of one file described in a report (all are counted).
MAX_LINES_NAMED = 50
#: Fields that identify a record, in the order a report names them.
IDENTIFYING = ("id", "run", "episode", "index", "campaign", "item", "task", "dimension", "kind", "model_x", "model_y",
               "model", "sample", "key", "rater", "annotator", "repeat")


def describe_record(line: bytes) -> str:
    """A record's identifying fields (``id=54 task=t3 dimension=U``), or why the line is not a record."""
    try:
        row = json.loads(line)
    except ValueError:
        return "not JSON"
    if not isinstance(row, dict):
        return "not a JSON object"
    return " ".join(f"{k}={row[k]}" for k in IDENTIFYING if k in row) or "(no identifying fields)"


def check_files(root: Path, manifest: Mapping[str, Any]) -> list[FileProblem]:
    """Every listed file against its size and SHA-256; changed JSON-lines files line by line; media
    names against their content; files present but not listed."""
    root = Path(root)
    problems: list[FileProblem] = []
    listed = manifest.get("files", {})
    for name, entry in listed.items():
        path = root / name
        if not path.is_file():
            problems.append(FileProblem(name, "missing"))
            continue
        data = path.read_bytes()
        digest = sha256_bytes(data)
        if digest != entry.get("sha256"):
            lines: tuple[int, ...] = ()
            if "lines" in entry:
                now = [_line_digest(line) for line in data.splitlines()]
                was = entry["lines"]
                lines = tuple(k + 1 for k in range(max(len(now), len(was)))
                              if k >= len(now) or k >= len(was) or now[k] != was[k])
            split = data.splitlines()
            records = tuple(f"line {k}: " + (describe_record(split[k - 1]) if k <= len(split) else "(removed)")
                            for k in lines[:MAX_LINES_NAMED])
            problems.append(FileProblem(name, "changed", f"SHA-256 {digest[:12]}… (manifest {entry.get('sha256', '')[:12]}…)",
                                        lines, records))
        if name.startswith("media/") and Path(name).stem != digest:
            problems.append(FileProblem(name, "misnamed", f"content hash {digest[:12]}… is not its name"))
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        # signature.json signs the manifest, so the manifest cannot list it (engine.bundle.signature)
        if path.is_file() and name not in (MANIFEST, SIGNATURE) and name not in listed:
            problems.append(FileProblem(name, "unlisted"))
    return problems


def name_problem(name: Any) -> str:
    """Why ``name`` cannot name a file of a bundle ("" when it can): it must be a relative POSIX path
    below the bundle's root. ``root / "/etc/passwd"`` is ``/etc/passwd`` and ``root / "../x"`` leaves
    the root, so a manifest naming such a file would have verify (and import, which stores the board it
    reads) read a file of the reviewer's machine instead of the bundle's."""
    if not isinstance(name, str) or not name:
        return "is not a file name"
    if "\0" in name or "\\" in name:
        return "holds a NUL or a backslash"
    parts = name.split("/")
    if name.startswith("/") or any(part in ("", ".", "..") for part in parts):
        return "is not a relative path inside the bundle (absolute, '..', '.' or an empty part)"
    return ""


def manifest_names(manifest: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(field, name) of every file name the manifest gives: its file list, the board, and the human labels
    and calibrated boards of ``human_labels``."""
    files = manifest.get("files")
    out: list[tuple[str, Any]] = [(f"files[{name!r}]", name) for name in (files if isinstance(files, Mapping) else ())]
    out.append(("board", manifest.get("board", "board/board.json")))
    spec = manifest.get("human_labels")
    if isinstance(spec, Mapping) and spec.get("used"):
        out.append(("human_labels.labels", spec.get("labels")))
        for k, campaign in enumerate(spec.get("campaigns") or []):
            if isinstance(campaign, Mapping) and "board" in campaign:
                out.append((f"human_labels.campaigns[{k}].board", campaign["board"]))
    return out


def symlinks(root: Path) -> list[str]:
    """Symbolic links under ``root`` (relative names): a bundle holds plain files only, and a link would
    have the checks read a file outside the bundle as if it were in it."""
    root = Path(root)
    out = []
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(folder) / name
            if path.is_symlink():
                out.append(path.relative_to(root).as_posix())
    return sorted(out)


def _text(data: bytes) -> tuple[str, bool]:
    """``data`` as text, and whether it was not UTF-8 (then decoded with ``surrogateescape``, so that the
    strict reader names the field holding the bad byte instead of the whole file failing unnamed)."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="surrogateescape"), True


def _decoded(data: bytes, name: str, record: int = 0) -> Any:
    """The value of one JSON text of the bundle, read by the project's strict reader
    (:func:`engine.strict_json.json_decode`), or ValueError naming the file ``name``, the line (the
    ``record`` line of a JSON-lines file, else the line where decoding stopped) and the field. Python's
    ``json`` keeps the last of two equal keys and other readers the first, and reads ``NaN`` and ``1e400``,
    which no other language's reader agrees on: a forged value beside the true one would verify while
    another reader showed it."""
    text, undecodable = _text(data)
    value, problems = json_decode(text, max_depth=BUNDLE_JSON_DEPTH, undecodable=undecodable)
    if not problems:
        return value
    first = problems[0]
    line = record or first.line
    place = name + (f", line {line}" if line else "") + (f", field {first.field}" if first.field else "")
    more = f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''})" if len(problems) > 1 else ""
    raise ValueError(f"{place}: {first.message}{more}")


class MissingField(KeyError):
    """A field a check reads is absent from a bundle's record: the message names the file, its line (of a
    JSON-lines file) and the field's path, as a JSON error does."""

    def __str__(self) -> str:
        return str(self.args[0])


class FieldTypeError(TypeError):
    """A field of a bundle's record holds a value of another JSON type than its checks read (a string where a
    number is, a list where an object is): the message names the file, its line (of a JSON-lines file) and
    the field's path, as :class:`MissingField` does, instead of the bare TypeError or ValueError the
    recomputation would end in."""

    def __str__(self) -> str:
        return str(self.args[0])


def json_type(value: Any) -> str:
    """The JSON name of ``value``'s type (``number``, ``string``, ``array``, ``object``, ``boolean``, ``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else type(value).__name__


class Record(dict):
    """A JSON object read from a bundle that knows where it was read from, so that a field the checks need
    and the record lacks is named (``records/comparisons.jsonl, line 12, field fit.len_a: absent``)
    instead of a bare ``KeyError: 'len_a'`` with no file or line."""

    __slots__ = ("_where", "_path")

    def __missing__(self, key: Any) -> Any:
        field = f"{self._path}.{key}" if self._path else str(key)
        raise MissingField(f"{self._where}, field {field}: absent")


def _located(value: Any, where: str, path: str = "") -> Any:
    if isinstance(value, dict):
        record = Record((k, _located(v, where, f"{path}.{k}" if path else str(k))) for k, v in value.items())
        record._where, record._path = where, path
        return record
    if isinstance(value, list):
        return [_located(v, where, f"{path}[{k}]") for k, v in enumerate(value)]
    return value


def read_json(root: Path, name: str) -> Any:
    return _located(_decoded((Path(root) / name).read_bytes(), name), name)


#: The records already parsed inside :func:`records_read_once`, by (file, size, modification time).
_PARSED: ContextVar[dict[tuple[str, int, int], list[tuple[int, Any]]] | None] = ContextVar("bundle_records_parsed",
                                                                                           default=None)


@contextmanager
def records_read_once() -> Iterator[None]:
    """Inside this block each JSON-lines file is parsed once and its records handed to every later reader:
    a verify reads a record file in the type check, the duplicate check, the rebuild of the board's files,
    the recomputation and the label checks, and parsing (the strict reader, the located records) was most of
    a paper-scale verify's time. The records are read, never changed, by every check."""
    token = _PARSED.set({})
    try:
        yield
    finally:
        _PARSED.reset(token)


def numbered_records(root: Path, name: str) -> list[tuple[int, Any]]:
    """(line number, record) of each record of the JSON-lines file ``name`` (blank lines skipped); parsed once
    per :func:`records_read_once` block."""
    path = Path(root) / name
    parsed = _PARSED.get()
    if parsed is not None:
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
        if key not in parsed:
            parsed[key] = _parsed_records(path, name)
        return list(parsed[key])
    return _parsed_records(path, name)


def _parsed_records(path: Path, name: str) -> list[tuple[int, Any]]:
    out = []
    # only "\n" ends a record (as the writer and the per-line hashes have it): str.splitlines also splits
    # at U+2028 and the like, which a record's text carries raw (ensure_ascii=False)
    for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
        if line.strip():
            out.append((number, _located(_decoded(line, name, number), f"{name}, line {number}")))
    return out


def read_jsonl(root: Path, name: str) -> list[Any]:
    return [record for _, record in numbered_records(root, name)]

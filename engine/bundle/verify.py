"""Verify a bundle from its files alone: every file against the manifest, the board's CSV, LaTeX and
viewer against their rebuild from the board, then every number of the board against its recomputation
(offline; no database, no network).

All checks always run: a file whose hash does not match is named (with the changed lines of a
JSON-lines file), a file the protocol requires is named as missing even when its manifest entry went
with it, a file under ``board/`` that no check reads is named as not accounted for
(:mod:`engine.bundle.layout`), a derived file that is not its rebuild is named with its first differing line
(:mod:`engine.bundle.board_files`), and the recomputation still runs on the files as they are, so the
report also names the numbers the change moved. A reviewer who edits a record *and* its hash in the
manifest passes the first check and fails the last: the recomputed board differs from the stored one,
number by number; one who edits a number of ``board.csv``, ``board.tex`` or ``data.js`` and its hash
fails the rebuild. A consistent forger (two models' names swapped in every record) passes all of that,
so the manifest is signed by the exporting site (:mod:`engine.bundle.signature`): a signature that no longer
matches the manifest fails, and given the site's published key, so does a bundle that key did not sign. The
bundle passes only when no file problem, no differing number and no failing signature is found. The one
check that stops the others: a record field of another JSON type than the exporter writes
(:mod:`engine.bundle.record_types`) is named, and nothing is rebuilt or recomputed from such records.
"""

from __future__ import annotations

import lzma
import os
import re
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from engine.bundle import c2, easel, ekphrasis
from engine.bundle.board_files import rebuild_problems
from engine.bundle.exchanges import request_checks
from engine.bundle.labels import label_checks
from engine.bundle.layout import layout_problems
from engine.bundle.manifest import (
    BUNDLE_FORMAT,
    MANIFEST,
    FileProblem,
    check_files,
    manifest_names,
    name_problem,
    read_json,
    records_read_once,
    sha256_bytes,
    symlinks,
)
from engine.bundle.numbers import NumberCheck
from engine.bundle.record_keys import duplicate_record_problems
from engine.bundle.record_types import record_type_problems
from engine.bundle.recorded import not_recomputed
from engine.bundle.restatements import restatement_checks
from engine.bundle.signature import SignatureCheck, check_signature

__all__ = ["BundleError", "Progress", "VerifyReport", "opened_bundle", "verify_bundle"]

RECOMPUTE: dict[str, Callable] = {"ekphrasis": ekphrasis.recompute, "easel": easel.recompute, "c2": c2.recompute}


class BundleError(ValueError):
    """The path is not a bundle (no manifest, unknown kind, unreadable archive)."""


@dataclass
class VerifyReport:
    kind: str
    title: str
    bundle_sha256: str
    file_problems: list[FileProblem] = field(default_factory=list)
    checks: list[NumberCheck] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str = ""
    signature: SignatureCheck | None = None
    #: Reported values that no record recomputes, each with why (engine.bundle.recorded)
    not_recomputed: list[str] = field(default_factory=list)

    @property
    def differing(self) -> list[NumberCheck]:
        return [c for c in self.checks if not c.identical]

    @property
    def ok(self) -> bool:
        return (not self.file_problems and not self.differing and not self.error
                and not (self.signature is not None and self.signature.refuses))

    def lines(self, *, show_identical: bool = False) -> list[str]:
        out = [f"bundle {self.title} ({self.kind}), manifest SHA-256 {self.bundle_sha256}"]
        for problem in self.file_problems:
            where = f" (lines {', '.join(map(str, problem.lines))})" if problem.lines else ""
            out.append(f"FILE {problem.what.upper()}: {problem.path}{where}{': ' + problem.detail if problem.detail else ''}")
            out += [f"  changed record {r}" for r in problem.records]
        if self.error:
            out.append(f"RECOMPUTATION FAILED: {self.error}")
        for check in self.checks:
            if show_identical or not check.identical:
                out.append(("identical " if check.identical else "DIFFERS   ") + check.describe())
        out += [f"note: {n}" for n in self.notes]
        out += [f"reported, not recomputed: {n}" for n in self.not_recomputed]
        if self.signature is not None:  # last but one, beside the verdict it can decide
            out.append(self.signature.line())
        identical = len(self.checks) - len(self.differing)
        signed = ""
        if self.signature is not None and self.signature.refuses:
            signed = f"signature {self.signature.status} — "
        out.append(f"{identical} of {len(self.checks)} numbers identical, {len(self.differing)} differing; "
                   f"{len(self.file_problems)} file problem(s) — {signed}" + (
                       f"{len(self.not_recomputed)} reported value(s) not recomputed (listed above) — "
                       if self.not_recomputed else "") + ("VERIFIED" if self.ok else "NOT VERIFIED"))
        return out


#: Most bytes and members an archive may unpack to. A bundle is unpacked into a temporary folder before
#: any check, and a small .tar.gz of zeros (a "tar bomb") would otherwise fill that folder's disk. 4 GiB is
#: about 20 times the largest bundle measured, the paper-scale Ekphrasis one (400 tasks, 14 models × 3
#: samples, budget 50: 8.3 MB as .tar.gz, 210 MB unpacked; the demo's EASEL bundle unpacks to 24 MB). It was
#: 16 GiB: the members are read through once to be checked (2 GiB of gzip in 1.9 s here, so some 15 s) and
#: once more to be written, so a bomb just under that bound cost half a minute or more and 16 GiB of disk
#: before the first check of a file.
MAX_EXTRACTED_BYTES = 4 * 2**30
#: Largest file of a bundle: every file is read whole into memory (hashed, and a JSON one parsed), so a
#: highly compressible one (gigabytes of "[[[[" in a small .tar.gz) exhausted memory before any refusal.
#: 512 MiB is 3 times the largest file measured, the paper-scale Ekphrasis bundle's records/comparisons.jsonl
#: (174 MB; its responses.jsonl 19 MB, data.js 12 MB; the demo's largest, EASEL's steps.jsonl, 2.8 MB), and
#: verifying that bundle peaked at 1.3 GB of memory (about 6 bytes per byte read), so a file at the cap asks
#: for some 3 GB. Checked from the archive member's size before anything is unpacked (a folder's: on disk).
MAX_FILE_BYTES = 512 * 2**20
MAX_MEMBERS = 1_000_000


def _refuse_large_files(root: Path) -> None:
    """BundleError naming the first file of a bundle folder past :data:`MAX_FILE_BYTES` (from its size on disk,
    before any file is read)."""
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            file = Path(folder) / name
            size = file.lstat().st_size
            if size > MAX_FILE_BYTES:
                raise BundleError(f"{root}: {file.relative_to(root).as_posix()} is {size} bytes; no file of a bundle "
                                  f"is read past {MAX_FILE_BYTES} bytes (each is read whole to be hashed and parsed)")


def _safe_members(archive: tarfile.TarFile, path: Path, folder: str) -> list[tarfile.TarInfo]:
    """The archive's members, refused (BundleError naming the member) when one is not a plain file or
    folder inside the bundle, when two have the same name (extraction keeps the last, another tool may
    show the first, so the verified bytes need not be the ones a reviewer reads), or when together they
    unpack to more than the limits or the temporary folder's free space."""
    members: list[tarfile.TarInfo] = []
    seen: set[str] = set()
    total = 0
    for member in archive:  # lazily: a bomb is refused at the limit, not after reading all of it
        name = Path(member.name)
        if name.is_absolute() or ".." in name.parts or not (member.isfile() or member.isdir()):
            raise BundleError(f"{path}: archive member {member.name!r} is not a plain file inside the bundle")
        key = name.as_posix()
        if key in seen and not member.isdir():
            raise BundleError(f"{path}: archive member {member.name!r} appears twice (which copy is the bundle's?)")
        seen.add(key)
        if member.isfile() and member.size > MAX_FILE_BYTES:
            raise BundleError(f"{path}: archive member {member.name!r} is {member.size} bytes; no file of a bundle is "
                              f"read past {MAX_FILE_BYTES} bytes (each is read whole to be hashed and parsed)")
        total += member.size
        members.append(member)
        if total > MAX_EXTRACTED_BYTES or len(members) > MAX_MEMBERS:
            raise BundleError(f"{path}: the archive unpacks to more than {MAX_EXTRACTED_BYTES} bytes or "
                              f"{MAX_MEMBERS} members (at member {member.name!r}); no bundle is that large")
    free = shutil.disk_usage(folder).free
    if total > free:
        raise BundleError(f"{path}: the archive unpacks to {total} bytes; the temporary folder has {free} free")
    return members


Progress = Callable[[str], None]

#: What reading an archive that is not a whole, sound .tar.gz raises: tarfile's own errors; a stream that ends
#: early (EOFError, from tarfile.open itself when it ends inside the first header); a corrupt gzip or bzip2 stream
#: (zlib.error, OSError) or xz one (lzma.LZMAError, no OSError): tarfile.open("r:*") reads all three.
_UNREADABLE_ARCHIVE = (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError)


def _no_progress(message: str) -> None:
    return None


@contextmanager
def opened_bundle(path: str | Path, progress: Progress = _no_progress):
    """The bundle's root directory: ``path`` itself, or a temporary extraction of a ``.tar.gz``."""
    path = Path(path)
    if path.is_dir():
        _refuse_large_files(path)
        yield path
        return
    if not path.is_file():
        raise BundleError(f"{path}: no such bundle (a directory or a .tar.gz)")
    progress(f"unpacking {path.name} ({path.stat().st_size} bytes)")
    try:
        archive = tarfile.open(path, "r:*")
    except _UNREADABLE_ARCHIVE as exc:
        raise BundleError(f"{path}: not a readable .tar.gz ({type(exc).__name__}: {exc})") from exc
    with archive, tempfile.TemporaryDirectory(prefix="bundle-") as folder:
        # members are read lazily: a truncated or corrupt stream fails here, past tarfile.open (gzip
        # raises EOFError or zlib.error, xz lzma.LZMAError, not a TarError), so it is named as an unreadable archive too
        try:
            archive.extractall(folder, members=_safe_members(archive, path, folder), filter="data")
        except _UNREADABLE_ARCHIVE as exc:
            raise BundleError(f"{path}: not a readable .tar.gz ({type(exc).__name__}: {exc})") from exc
        roots = [p for p in Path(folder).iterdir()]
        yield roots[0] if len(roots) == 1 and roots[0].is_dir() else Path(folder)


#: The type of each manifest field the checks read (a field of another type broke them with a bare
#: AttributeError or TypeError naming no field).
MANIFEST_TYPES: dict[str, type | tuple[type, ...]] = {
    "kind": str, "title": str, "protocol": str, "board": str, "files": dict, "configuration": dict,
    "board_facts": dict, "task_set": dict, "components": list, "human_labels": dict, "source": dict,
}
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _manifest_problem(manifest: Any) -> str:
    """The first field of the manifest whose shape the checks cannot read ("" when none)."""
    if not isinstance(manifest, dict):
        return "is not a JSON object"
    for name, kind in MANIFEST_TYPES.items():
        if name in manifest and not isinstance(manifest[name], kind):
            return f"field {name}: expected a JSON {_JSON_TYPE[kind]}, got {type(manifest[name]).__name__}"
    for name, entry in (manifest.get("files") or {}).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str) \
                or not _SHA256.fullmatch(entry["sha256"]) or not isinstance(entry.get("bytes"), int):
            return f"field files[{name!r}]: expected {{\"sha256\": 64 hex digits, \"bytes\": an integer}}"
        if "lines" in entry and not (isinstance(entry["lines"], list) and all(isinstance(x, str) for x in entry["lines"])):
            return f"field files[{name!r}].lines: expected a list of line digests"
    return ""


_JSON_TYPE = {str: "string", dict: "object", list: "array"}


def _refuse_unsafe_names(path: str | Path, root: Path, manifest) -> None:
    """BundleError when the manifest's shape cannot be read, a name of it leaves the bundle or a file of
    it is a symbolic link: every later check reads ``root / name``, which must be a file of the bundle
    and nothing else."""
    problem = _manifest_problem(manifest)
    if problem:
        raise BundleError(f"{path}: {MANIFEST}, {problem}" if problem.startswith("field") else f"{path}: {MANIFEST} {problem}")
    for where, name in manifest_names(manifest):
        problem = name_problem(name)
        if problem:
            raise BundleError(f"{path}: {MANIFEST}, field {where}: {name!r} {problem}")
    links = symlinks(root)
    if links:
        raise BundleError(f"{path}: {links[0]} is a symbolic link ({len(links)} in all); a bundle holds plain files only")


#: Fields of the wrong type named in a report (all are counted).
MAX_TYPE_PROBLEMS_NAMED = 20


def _record_type_problems(root: Path, manifest: dict) -> list[str]:
    try:
        return record_type_problems(root, manifest)
    except ValueError:  # a record that is not JSON: the recomputation's reader names its file, line and field
        return []


def _nothing_recomputed(problems: list[str], what: str) -> str:
    """The verdict of a bundle whose records every check below would misread: how many ``what``, the first
    :data:`MAX_TYPE_PROBLEMS_NAMED` of them named, and how many more."""
    shown = "; ".join(problems[:MAX_TYPE_PROBLEMS_NAMED])
    more = len(problems) - MAX_TYPE_PROBLEMS_NAMED
    return (f"{len(problems)} {what}, so nothing was rebuilt or recomputed: {shown}"
            + (f"; and {more} more" if more > 0 else ""))


def _records_refusal(root: Path, manifest: dict) -> str:
    """Why no check can read the records ("" when they can): a field of the wrong type (every check reads these
    fields and would end in a TypeError naming none of them), or a record held twice (every check reads it
    once, the last copy)."""
    wrong_types = _record_type_problems(root, manifest)
    if wrong_types:
        return _nothing_recomputed(wrong_types, "record field(s) of the wrong type")
    try:
        duplicates = duplicate_record_problems(root, manifest)
    except ValueError:  # not JSON: named by the recomputation's reader
        return ""
    return _nothing_recomputed(duplicates, "record(s) held twice") if duplicates else ""


def verify_bundle(path: str | Path, progress: Progress = _no_progress,
                  trusted_keys: Iterable[Ed25519PublicKey] | None = None) -> VerifyReport:
    """Check the signature and every file, rebuild the board's derived files and recompute every number of the
    bundle at ``path``; ``progress(message)`` is told each stage as it starts (the recomputation is most of the
    time). With ``trusted_keys`` (the exporting site's published public key), the bundle verifies only when
    one of them signed its manifest (:mod:`engine.bundle.signature`); without, a signature that does not match
    the manifest still fails, and a valid one is reported by its key id."""
    with opened_bundle(path, progress) as root, records_read_once():
        manifest_path = root / MANIFEST
        if not manifest_path.is_file():
            raise BundleError(f"{path}: no {MANIFEST}")
        try:
            manifest = read_json(root, MANIFEST)
        except ValueError as exc:
            raise BundleError(f"{path}: {exc}") from exc
        _refuse_unsafe_names(path, root, manifest)
        kind = manifest.get("kind")
        if manifest.get("bundle_format") != BUNDLE_FORMAT:
            # a format-1 bundle has no board_facts: its CSV, LaTeX and viewer cannot be rebuilt, and every one
            # would be named as forged; say what it is instead
            raise BundleError(f"{path}: {MANIFEST} says bundle_format {manifest.get('bundle_format')!r}; this "
                              f"verifier reads format {BUNDLE_FORMAT} (format 2 records board_facts, so board.csv, "
                              f"board.tex and the viewer are rebuilt and checked): export the bundle again")
        if kind not in RECOMPUTE:
            raise BundleError(f"{path}: {MANIFEST} names kind {kind!r}; expected one of {', '.join(RECOMPUTE)}")
        report = VerifyReport(kind=kind, title=str(manifest.get("title", "")),
                              bundle_sha256=sha256_bytes(manifest_path.read_bytes()),
                              not_recomputed=not_recomputed(manifest))
        progress("checking the signature of the manifest")
        report.signature = check_signature(root, trusted_keys)
        progress(f"checking {len(manifest.get('files') or {})} files against the manifest's SHA-256")
        report.file_problems = check_files(root, manifest) + layout_problems(root, manifest)
        progress("checking the JSON type of every field of the records")
        report.error = _records_refusal(root, manifest)
        if report.error:
            return report
        progress("rebuilding board.csv, board.tex and the viewer from the board and the records")
        report.file_problems += rebuild_problems(root, manifest)
        progress(f"recomputing every number of the {kind} board from the records")
        try:
            report.checks = RECOMPUTE[kind](root, manifest, report.notes)
            progress("checking the provider requests and the manifest's labels")
            report.checks += request_checks(root) + label_checks(root, manifest) + restatement_checks(root, manifest)
        except Exception as exc:  # a damaged bundle can break any step (a PNG decoder raises SyntaxError): report it
            report.error = f"{type(exc).__name__}: {exc}"
        return report

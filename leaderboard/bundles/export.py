"""Export a leaderboard as a reproducibility bundle: a directory, or a ``.tar.gz`` of one.

The bundle is written into a temporary directory beside the target and moved into place only when
complete, so a failed export leaves nothing half-written. Every text file passes the secret redactor
(:func:`leaderboard.bundles.common.bundle_redactor`) before it is hashed.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.bundle.board_files import board_files
from engine.bundle.manifest import MANIFEST, SIGNATURE, BundleWriter
from engine.bundle.signature import SigningKeyError, write_signature
from engine.bundle.verify import Progress
from evalsite.request_checks import id_of
from leaderboard.bundles import c2, easel, ekphrasis
from leaderboard.bundles.common import bundle_redactor, common_manifest
from leaderboard.bundles.exchanges import provider_exchanges
from leaderboard.bundles.extensions import extension_fields
from leaderboard.bundles.signing import site_signing_key

KINDS = ("ekphrasis", "easel", "c2")
WRITERS = {"ekphrasis": ekphrasis.bundle_contents, "easel": easel.bundle_contents, "c2": c2.bundle_contents}


class BundleExportError(ValueError):
    pass


class BundleSigningUnavailable(BundleExportError):
    """The site's bundle-signing key cannot be read or made: no bundle leaves unsigned."""


def _signing_key():
    try:
        return site_signing_key()
    except (SigningKeyError, OSError) as exc:
        raise BundleSigningUnavailable(f"this site's bundle-signing key (ATELIER_BUNDLE_SIGNING_KEY) cannot be used, so "
                                       f"no bundle is exported: {exc}") from exc


@dataclass(frozen=True)
class ExportResult:
    path: Path
    files: int
    bytes: int
    title: str


def board_object(kind: str, ident: int | str):
    """The object a bundle of ``kind`` is made from: a snapshot, an EASEL task set, a finished C² run."""
    if kind not in KINDS:
        raise BundleExportError(f"KIND must be one of {', '.join(KINDS)}; got {kind!r}")
    pk = id_of(str(ident))
    if pk is None:
        raise BundleExportError(f"ID must be a number; got {ident!r}")
    if kind == "ekphrasis":
        from leaderboard.ekphrasis.models import LeaderboardSnapshot

        obj = LeaderboardSnapshot.objects.select_related("run__task_set__benchmark", "run__judge_model").filter(pk=pk).first()
        if obj is None:
            raise BundleExportError(f"no Ekphrasis leaderboard snapshot with id {pk}")
        return obj
    if kind == "easel":
        from leaderboard.easel.selectors import easel_task_set_get, latest_done_runs

        obj = easel_task_set_get(pk)
        if obj is None:
            raise BundleExportError(f"no EASEL task set with id {pk}")
        if not latest_done_runs(obj):
            raise BundleExportError(f"EASEL task set {pk} has no finished run: its leaderboard is empty")
        return obj
    from leaderboard.c2.models import C2Run

    obj = C2Run.objects.select_related("task_set__benchmark").filter(pk=pk).first()
    if obj is None:
        raise BundleExportError(f"no C² run with id {pk}")
    if obj.status != C2Run.Status.DONE or not obj.results:
        raise BundleExportError(f"C² run {pk} is {obj.status}: only a finished run has a leaderboard")
    return obj


def _code_version_of(kind: str, obj) -> str:
    if kind == "ekphrasis":
        return obj.code_version
    if kind == "c2":
        return obj.code_version
    return ""


def _no_progress(message: str) -> None:
    return None


def bundle_write(kind: str, obj, root: Path, progress: Progress = _no_progress) -> dict:
    """Write the bundle of ``obj`` into the empty directory ``root``; returns the manifest. ``progress(message)``
    is told each stage as it starts."""
    key = _signing_key()  # before anything is written
    writer = BundleWriter(root, redact=bundle_redactor())
    progress(f"writing the {kind} records, media and board")
    fields = WRITERS[kind](obj, writer)
    progress(f"{len(writer.files)} files written; adding what other apps record (human labels)")
    fields = {**fields, **extension_fields(kind, obj, writer)}
    progress("copying the provider requests as sent from the caches")
    fields["provider_exchanges"] = {**fields.get("provider_exchanges", {}), **provider_exchanges(writer, kind, fields)}
    # the SIMULATED label covers every component (a snapshot's own flag is its judge's alone), as the
    # verifier derives it (engine.bundle.labels)
    fields["simulated"] = bool(fields.get("simulated")) or any(bool(c.get("simulated")) for c in fields.get("components", []))
    manifest = {**common_manifest(kind=kind, protocol=fields["protocol"], title=fields["title"],
                                  board_code_version=_code_version_of(kind, obj)), **fields}
    # the CSV, LaTeX and viewer from the files just written, as the verifier will rebuild them
    progress("writing board.csv, board.tex and the viewer from the files written")
    for name, text in board_files(writer.root, writer.as_read(manifest)).items():
        writer.text(name, text)
    written = writer.manifest(manifest)
    # the manifest lists every file's SHA-256, so signing it signs the bundle (engine.bundle.signature)
    signed = write_signature(writer.root, key)
    progress(f"signed the manifest with this site's key {signed['key_id']} (its public key: /bundles/signing-key.pem)")
    return written


def bundle_export(kind: str, ident: int | str, out: str | Path, progress: Progress = _no_progress) -> ExportResult:
    """Export the board ``kind``/``ident`` to ``out``: a new directory, or a file ending in ``.tar.gz``."""
    obj = board_object(kind, ident)
    out = Path(out)
    archive = out.name.endswith(".tar.gz") or out.name.endswith(".tgz")
    if out.exists() and not (out.is_dir() and not any(out.iterdir())):
        raise BundleExportError(f"{out} already exists; give a new path (a directory or a .tar.gz)")
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        scratch_dir = tempfile.TemporaryDirectory(prefix=".bundle-", dir=parent)
    except OSError as exc:
        raise BundleExportError(f"{out} cannot be written: {parent} cannot be made or written ({exc.strerror}); "
                                "give a path in a folder you can write") from exc
    with scratch_dir as scratch:
        stem = out.name[: -len(".tar.gz")] if out.name.endswith(".tar.gz") else out.stem if archive else out.name
        root = Path(scratch) / stem
        manifest = bundle_write(kind, obj, root, progress)
        size = sum(entry["bytes"] for entry in manifest["files"].values()) + sum(
            (root / name).stat().st_size for name in (MANIFEST, SIGNATURE))
        if archive:
            progress(f"packing {len(manifest['files']) + 2} files into {out.name}")
            partial = Path(scratch) / "bundle.tar.gz"
            with tarfile.open(partial, "w:gz") as tar:
                tar.add(root, arcname=stem)
            partial.replace(out)
            size = out.stat().st_size
        else:
            if out.exists():
                out.rmdir()
            shutil.move(str(root), str(out))
    return ExportResult(path=out, files=len(manifest["files"]) + 2, bytes=size, title=manifest["title"])

"""Import a bundle as a read-only, labelled board of this site (:class:`ImportedBoard`).

The bundle is verified first (:func:`engine.bundle.verify.verify_bundle`); a bundle with a changed file
or a differing number is refused unless the caller allows it, and is then stored labelled NOT VERIFIED
with the differences. Importing the same bundle twice (same manifest hash) returns the first import.
"""

from __future__ import annotations

from pathlib import Path

from django.db import IntegrityError, transaction

from engine.bundle.manifest import BUNDLE_JSON_DEPTH, MANIFEST, read_json
from engine.bundle.verify import opened_bundle, verify_bundle
from engine.bundle.viewer import VIEWER_DATA
from engine.strict_json import json_decode
from leaderboard.bundles.models import ImportedBoard

#: Differences kept on an unverified import (the count is always kept).
DIFFERENCES_KEPT = 200


class BundleImportError(ValueError):
    pass


def _table_problem(table, field: str) -> str:
    """The first field of a viewer table (``{"caption", "columns", "rows"}``) that the imported board's page cannot
    draw ("" when none): its columns a list, its rows a list of lists."""
    if not isinstance(table, dict):
        return f"field {field}: expected a table (a JSON object), got {type(table).__name__}"
    if not isinstance(table.get("columns", []), list):
        return f"field {field}.columns: expected a list, got {type(table['columns']).__name__}"
    rows = table.get("rows", [])
    if not isinstance(rows, list):
        return f"field {field}.rows: expected a list of rows, got {type(rows).__name__}"
    for k, row in enumerate(rows):
        if not isinstance(row, list):
            return f"field {field}.rows[{k}]: expected a list of cells, got {type(row).__name__}"
    return ""


def viewer_problem(value) -> str:
    """The first field of the viewer's data (engine.bundle.viewer: ``{"board": Table, "instances": [{"label",
    "table": Table}]}``) that the imported board's page cannot draw ("" when none). A forged data.js of another
    shape (a number where the columns go) was stored by an unverified import, and its page was a 500 ever after."""
    if not isinstance(value, dict):
        return f"field (data): expected a JSON object, got {type(value).__name__}"
    if "board" in value and (problem := _table_problem(value["board"], "board")):
        return problem
    instances = value.get("instances", [])
    if not isinstance(instances, list):
        return f"field instances: expected a list, got {type(instances).__name__}"
    for k, instance in enumerate(instances):
        if not isinstance(instance, dict):
            return f"field instances[{k}]: expected a JSON object, got {type(instance).__name__}"
        if "table" in instance and (problem := _table_problem(instance["table"], f"instances[{k}].table")):
            return problem
    return ""


def _viewer_data(root: Path) -> dict:
    path = root / VIEWER_DATA
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8").strip()
    prefix = "window.BUNDLE = "
    if not text.startswith(prefix) or not text.endswith(";"):
        raise BundleImportError(f"{VIEWER_DATA}: not the viewer's data script")
    value, problems = json_decode(text[len(prefix):-1], max_depth=BUNDLE_JSON_DEPTH)
    if problems:
        raise BundleImportError(f"{VIEWER_DATA}, field {problems[0].field or '(data)'}: {problems[0].message}")
    if problem := viewer_problem(value):
        raise BundleImportError(f"{VIEWER_DATA}, {problem}")
    return value


def bundle_import(path: str | Path, *, allow_unverified: bool = False) -> tuple[ImportedBoard, bool]:
    report = verify_bundle(path)
    if not report.ok and not allow_unverified:
        first = report.lines()[1:6]
        raise BundleImportError(f"{path}: the bundle does not verify, so it is not imported "
                                f"(--allow-unverified imports it labelled NOT VERIFIED): " + "; ".join(first))
    existing = ImportedBoard.objects.filter(bundle_sha256=report.bundle_sha256).first()
    if existing is not None:
        return existing, False
    with opened_bundle(path) as root:
        # an unverified bundle may hold a board or viewer no reader accepts (NaN, a duplicated key, bad
        # UTF-8): refused naming the file and field, as verify named it, not a traceback
        try:
            manifest = read_json(root, MANIFEST)
            board = read_json(root, manifest["board"])
            viewer = _viewer_data(root)
        except (ValueError, KeyError) as exc:  # KeyError: engine.bundle.manifest.MissingField names the field
            raise BundleImportError(f"{path}: cannot be shown: {exc}") from exc
    verification = {
        "numbers": len(report.checks), "differing": len(report.differing), "file_problems": len(report.file_problems),
        "differences": [c.describe() for c in report.differing[:DIFFERENCES_KEPT]]
        + [f"{p.path}: {p.what}" for p in report.file_problems[:DIFFERENCES_KEPT]],
        "notes": report.notes, "error": report.error,
        "signature": report.signature.line() if report.signature is not None else "",
    }
    try:
        with transaction.atomic():
            imported = ImportedBoard.objects.create(
                kind=report.kind, title=report.title[:300], bundle_sha256=report.bundle_sha256, manifest=manifest,
                board=board, viewer=viewer, is_simulated=bool(manifest.get("simulated")),
                is_demo=bool(manifest.get("demo")), verified=report.ok, verification=verification,
                source=str(path)[:500],
            )
    except IntegrityError:
        # Race: the same bundle imported twice at once. Both verified it (seconds) before either stored it,
        # and the second's insert broke the unique manifest hash (a traceback); it returns the first import.
        return ImportedBoard.objects.get(bundle_sha256=report.bundle_sha256), False
    return imported, True

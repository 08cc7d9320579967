"""The board's derived files — ``board/board.csv``, ``board/board.tex`` and the viewer (``index.html``,
``data.js``) — written from the bundle's own files, and rebuilt and compared byte for byte by the verifier.

Each protocol's ``board_files(root, manifest)`` (:func:`engine.bundle.ekphrasis.board_files`,
:func:`engine.bundle.easel.board_files`, :func:`engine.bundle.c2.board_files`) makes them from
``board/board.json``, the records and the manifest (its header fields and ``board_facts``, the few facts
the CSV and LaTeX print that the board does not hold). The exporter writes exactly what that function
returns on the files it has just written, and the verifier calls it again: a number edited in the CSV,
the LaTeX or ``data.js`` (which is also what an imported site shows) — even with its manifest hash
updated — is named with the file's first differing line, since board.json itself is recomputed from the
records.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from itertools import zip_longest
from pathlib import Path
from typing import Any

from engine.bundle import c2, easel, ekphrasis
from engine.bundle.manifest import BOARD_CSV, BOARD_TEX, FileProblem
from engine.bundle.numbers import compare
from engine.bundle.viewer import VIEWER_DATA, VIEWER_PAGE

__all__ = ["BOARD_FILES", "REBUILT", "board_files", "rebuild_problems"]

BOARD_FILES: dict[str, Callable[[Path, Mapping[str, Any]], dict[str, str]]] = {
    "ekphrasis": ekphrasis.board_files, "easel": easel.board_files, "c2": c2.board_files}
#: The files every bundle's verifier rebuilds.
REBUILT = (BOARD_CSV, BOARD_TEX, VIEWER_PAGE, VIEWER_DATA)
#: Characters of a differing line shown before and after its first differing character.
CONTEXT_BEFORE, CONTEXT_AFTER = 30, 50
#: Characters of JSON shown of each side of the viewer data's first differing value.
VALUE_SHOWN = 80


def board_files(root: Path, manifest: Mapping[str, Any]) -> dict[str, str]:
    """The derived files of the bundle at ``root`` (name → text) as its board, records and manifest give them."""
    return BOARD_FILES[manifest["kind"]](Path(root), manifest)


def _excerpt(line: str | None, column: int) -> str:
    if line is None:
        return "(no such line: the file ends before it)"
    start = max(0, column - CONTEXT_BEFORE)
    text = "".join(repr(c)[1:-1] if not c.isprintable() else c for c in line[start:column + CONTEXT_AFTER])
    return "`" + ("…" if start else "") + text + ("…" if column + CONTEXT_AFTER < len(line) else "") + "`"


def _data_script(text: str) -> Any:
    prefix = "window.BUNDLE = "
    body = text.strip()
    if not body.startswith(prefix) or not body.endswith(";"):
        raise ValueError("not the viewer's data script")
    return json.loads(body[len(prefix):-1])


def first_difference(name: str, stored: bytes, rebuilt: str, source: str) -> FileProblem:
    """The file ``name`` whose bytes are not ``rebuilt``: its first differing line, both versions of it
    around the first differing character, and for ``data.js`` the first differing value of the data."""
    text = stored.decode("utf-8", errors="replace")
    for number, (mine, theirs) in enumerate(zip_longest(text.split("\n"), rebuilt.split("\n")), start=1):
        if mine != theirs:
            break
    column = next((k for k, (a, b) in enumerate(zip(mine or "", theirs or "")) if a != b),
                  min(len(mine or ""), len(theirs or "")))
    detail = (f"line {number} is {_excerpt(mine, column)} where the rebuild from {source} has {_excerpt(theirs, column)}"
              + (f" (column {column + 1})" if mine is not None and theirs is not None else ""))
    if name == VIEWER_DATA:
        # the data's leaves walked as the board's numbers are (engine.bundle.numbers), in path order
        try:
            checks = compare(_data_script(text), _data_script(rebuilt), prefix="BUNDLE.")
        except ValueError:
            checks = []
        differing = next((c for c in checks if not c.identical), None)
        if differing is not None:
            detail += f"; first differing value {differing.describe(recomputed_as='rebuilt', max_chars=VALUE_SHOWN)}"
    return FileProblem(name, "not as rebuilt", detail, (number,))


def rebuild_problems(root: Path, manifest: Mapping[str, Any]) -> list[FileProblem]:
    """Each derived file of the bundle whose bytes are not its rebuild (a missing one is the manifest
    check's, :func:`engine.bundle.manifest.check_files`, or the layout check's to name)."""
    root = Path(root)
    source = f"{manifest.get('board', 'board/board.json')} and the records"
    try:
        expected = board_files(root, manifest)
    except Exception as exc:  # a damaged board or record breaks the rebuild: every derived file is unproven
        return [FileProblem(name, "not rebuilt", f"could not be rebuilt from {source} ({type(exc).__name__}: {exc})")
                for name in REBUILT if (root / name).is_file()]
    problems = []
    for name in REBUILT:
        path = root / name
        if not path.is_file():
            continue
        stored = path.read_bytes()
        if stored != expected[name].encode("utf-8"):
            problems.append(first_difference(name, stored, expected[name], source))
    return problems

"""What a bundle of each protocol holds, so that verify names what is missing or not accounted for
instead of skipping it.

The manifest check (:func:`engine.bundle.manifest.check_files`) compares the files with the manifest's
list; a file removed *together with* its manifest entry passes it. So every file the protocol's layout
requires (README, "What is inside") is named as missing when it is absent and unlisted — among them
``records/per_instance.jsonl`` (every protocol) and ``records/requests.jsonl``, which the exporter always
writes, empty when no provider request was recorded (a simulated board), so its absence is never a
legitimate state. And every file under ``board/`` must be one verify recomputes or rebuilds: the board,
its CSV and LaTeX, and the calibrated boards the manifest's ``human_labels`` names; any other — a
``board/calibration-<campaign>.json`` no campaign of ``human_labels`` names, say — is named as not
accounted for, because none of its numbers would be checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.bundle import c2, easel, ekphrasis
from engine.bundle.exchanges import REQUESTS
from engine.bundle.manifest import BOARD_CSV, BOARD_TEX, FileProblem
from engine.bundle.viewer import VIEWER_DATA, VIEWER_PAGE

__all__ = ["BOARD_DIR", "REQUIRED", "layout_problems", "required_files"]

TASKS = "records/tasks.jsonl"
COSTS = "costs.json"
BOARD_DIR = "board/"
#: Files every bundle of a protocol holds (the board itself is the manifest's ``board``).
REQUIRED = {
    "ekphrasis": (TASKS, ekphrasis.RESPONSES, ekphrasis.COMPARISONS, ekphrasis.PER_INSTANCE),
    "easel": (easel.TASKS, easel.RUNS, easel.EPISODES, easel.STEPS, easel.PER_INSTANCE),
    "c2": (c2.TASKS, c2.SAMPLES, c2.RATINGS, c2.PER_INSTANCE),
}
COMMON = (REQUESTS, COSTS, BOARD_CSV, BOARD_TEX, VIEWER_PAGE, VIEWER_DATA)


def _calibrated_boards(manifest: Mapping[str, Any]) -> list[str]:
    spec = manifest.get("human_labels") or {}
    if not spec.get("used"):
        return []
    return [str(c["board"]) for c in spec.get("campaigns", []) if c.get("board")]


def required_files(manifest: Mapping[str, Any]) -> list[str]:
    """Every file a bundle with this manifest must hold: its protocol's records, the common files, the
    board, and the human labels and calibrated boards its ``human_labels`` names."""
    spec = manifest.get("human_labels") or {}
    labels = [str(spec["labels"])] if spec.get("used") and spec.get("labels") else []
    names = [*REQUIRED[manifest["kind"]], *COMMON, str(manifest.get("board", "board/board.json")), *labels,
             *_calibrated_boards(manifest)]
    return list(dict.fromkeys(names))


def layout_problems(root: Path, manifest: Mapping[str, Any]) -> list[FileProblem]:
    """Required files absent and not listed in the manifest (a listed one is the manifest check's to
    name), and files under ``board/`` that verify neither recomputes nor rebuilds."""
    root = Path(root)
    listed = set(manifest.get("files", {}))
    problems = [FileProblem(name, "missing", f"every {manifest['kind']} bundle holds it, and the manifest does not list "
                                             "it either (removed with its entry?)")
                for name in required_files(manifest) if name not in listed and not (root / name).is_file()]
    accounted = {str(manifest.get("board", "board/board.json")), BOARD_CSV, BOARD_TEX, *_calibrated_boards(manifest)}
    on_disk = {p.relative_to(root).as_posix() for p in (root / BOARD_DIR).rglob("*") if p.is_file()} \
        if (root / BOARD_DIR).is_dir() else set()
    for name in sorted((on_disk | {n for n in listed if n.startswith(BOARD_DIR)}) - accounted):
        problems.append(FileProblem(name, "not accounted for", "verify neither recomputes nor rebuilds it: "
                                    "a calibrated board is recomputed only when the manifest's human_labels names it"))
    return problems

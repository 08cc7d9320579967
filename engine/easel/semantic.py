"""The five EASEL semantic tasks and their scores (EASEL §3.2, §3.3, Table 4).

* ``circle_outline`` and ``horse_outline`` (our stand-in for the paper's apple: scikit-image's horse
  silhouette gives an exact mask): Dice 2|A∩M|/(|A|+|M|) between the region A the drawn strokes
  enclose and the target mask M. A = the holes of the ink (coverage ≥ ½) filled, then eroded by the
  brush radius — so a stroke whose centre line runs along the mask's boundary encloses the mask.
* ``handwriting_hello``: letter-position match rate of the recognised text, #{i < 5: text[i] = "hello"[i]}/5,
  after lower-casing and dropping non-letters. The recogniser (Tesseract offline, or a multimodal
  model callable as in the paper) is named on every score.
* ``simple_maze`` and ``maze``: normalised progress along the reference route — the longest prefix of
  route cells (from the start) whose centres lie in the ink component that contains the start's
  centre, divided by the route's length. A stroke whose coverage exceeds ½ on any wall pixel is a
  collision: rejected as a no-op that costs a step (episode.py).
"""

from __future__ import annotations

import base64
import math
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from scipy import ndimage as ndi
from skimage.data import horse
from skimage.draw import disk
from skimage.morphology import disk as disk_footprint
from skimage.transform import resize

from engine.easel.render import MAX_RADIUS_FRACTION, SEMANTIC_BRUSH_RADIUS, Box
from engine.easel.task import KIND_SEMANTIC, EaselTask, png_bytes, quantise_image

__all__ = [
    "CIRCLE_OUTLINE",
    "HANDWRITING_HELLO",
    "HORSE_OUTLINE",
    "MAZE",
    "MAZE_TASKS",
    "MultimodalRecogniser",
    "Recogniser",
    "SIMPLE_MAZE",
    "SemanticScore",
    "TesseractRecogniser",
    "dice",
    "letter_match_rate",
    "maze_layout",
    "route_progress",
    "score_semantic",
    "semantic_tasks",
    "stroke_collides",
    "target_mask",
    "wall_mask",
]

CIRCLE_OUTLINE, HORSE_OUTLINE, HANDWRITING_HELLO = "circle_outline", "horse_outline", "handwriting_hello"
SIMPLE_MAZE, MAZE = "simple_maze", "maze"
MAZE_TASKS = (SIMPLE_MAZE, MAZE)
HELLO = "hello"

# Sizes and budgets within Table 1's semantic range (64–512 px, 64–128 steps).
SEMANTIC_LAYOUT = {
    CIRCLE_OUTLINE: (128, 64),
    HORSE_OUTLINE: (128, 96),
    HANDWRITING_HELLO: (128, 64),
    SIMPLE_MAZE: (128, 64),  # 4×4 cells
    MAZE: (256, 128),  # 8×8 cells
}
MAZE_CELLS = {SIMPLE_MAZE: 4, MAZE: 8}
MAZE_WALL_PX = 3
INK_THRESHOLD = 0.5  # a pixel is drawn (or a wall is hit) where the stroke's coverage exceeds ½

_TASK_GREY = 0.75  # the target shape's fill in annotation task images
_WALL_GREY = 0.15


@dataclass(frozen=True)
class SemanticScore:
    """A semantic task's score in [0, 1], how it was reached, and which recogniser scored it."""

    value: float
    detail: dict[str, Any] = field(default_factory=dict)
    recogniser: str = ""


@runtime_checkable
class Recogniser(Protocol):
    """Reads handwritten text from a canvas; ``name`` is stored with every score."""

    name: str

    def recognise(self, image: np.ndarray) -> str: ...


class TesseractRecogniser:
    """Tesseract OCR run offline through the ``tesseract`` binary (one text line, English)."""

    def __init__(self, binary: str = "tesseract", *, upscale: int = 2, timeout_s: float = 30.0) -> None:
        path = shutil.which(binary)
        if path is None:
            raise RuntimeError(f"the {binary!r} binary is not installed (Debian: tesseract-ocr)")
        self.binary = path
        self.upscale = upscale
        self.timeout_s = timeout_s
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=timeout_s)
        first = (version.stdout or version.stderr).splitlines()[:1]
        self.name = first[0].strip() if first else "tesseract"

    def recognise(self, image: np.ndarray) -> str:
        big = np.kron(image, np.ones((self.upscale, self.upscale, 1))) if self.upscale > 1 else image
        done = subprocess.run([self.binary, "stdin", "stdout", "--psm", "7", "-l", "eng"], input=png_bytes(big),
                              capture_output=True, timeout=self.timeout_s, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"tesseract failed: {done.stderr.decode(errors='replace').strip()}")
        return done.stdout.decode(errors="replace").strip()


class MultimodalRecogniser:
    """A multimodal model as the recogniser (EASEL §3.3): ``chat(messages) -> text`` with the canvas as PNG."""

    PROMPT = ("This image shows handwriting drawn with brush strokes. Reply with the word that is written, "
              "letters only, nothing else.")
    #: names :attr:`PROMPT`'s wording (a run records it, and is not finished with another)
    PROMPT_VERSION = "easel-recogniser-v1"

    def __init__(self, chat: Callable[[list[dict[str, Any]]], str], *, label: str) -> None:
        self.chat = chat
        self.name = f"multimodal:{label}"

    def recognise(self, image: np.ndarray) -> str:
        url = "data:image/png;base64," + base64.b64encode(png_bytes(image)).decode("ascii")
        messages = [{"role": "user", "content": [{"type": "text", "text": self.PROMPT},
                                                  {"type": "image_url", "image_url": {"url": url}}]}]
        return self.chat(messages)


# --- scores --------------------------------------------------------------------------------------

def dice(region: np.ndarray, mask: np.ndarray) -> float:
    """Dice = 2|A ∩ M| / (|A| + |M|) (the outline tasks' score, EASEL §3.3)."""
    total = int(region.sum()) + int(mask.sum())
    return 1.0 if total == 0 else 2.0 * int(np.count_nonzero(region & mask)) / total


def enclosed_region(ink: np.ndarray, size: int) -> np.ndarray:
    """The region the strokes enclose: ink holes filled, eroded by the brush radius (module docstring)."""
    drawn = ink >= INK_THRESHOLD
    filled = ndi.binary_fill_holes(drawn)
    radius = int(round(SEMANTIC_BRUSH_RADIUS * MAX_RADIUS_FRACTION * size))
    return ndi.binary_erosion(filled, disk_footprint(radius)) if radius > 0 else filled


def letter_match_rate(text: str, target: str = HELLO) -> float:
    """#{i: text[i] = target[i]} / len(target), on lower-cased letters only (positional match)."""
    letters = [c for c in text.lower() if c.isalpha()]
    return sum(1 for i, c in enumerate(target) if i < len(letters) and letters[i] == c) / len(target)


def route_progress(ink: np.ndarray, task: EaselTask) -> tuple[float, int]:
    """(progress, cells reached): the start-connected prefix of the route that the ink covers."""
    layout = maze_layout(task)
    drawn = ink >= INK_THRESHOLD
    labels, _ = ndi.label(drawn, np.ones((3, 3), bool))
    centres = [_cell_centre(cell, layout["cells"], task.size) for cell in layout["route"]]
    start_label = labels[centres[0]]
    reached = 0
    if start_label:
        for centre in centres:
            if labels[centre] != start_label:
                break
            reached += 1
    return reached / len(centres), reached


def score_semantic(task: EaselTask, ink: np.ndarray, canvas: np.ndarray, *,
                   recogniser: Recogniser | None = None) -> SemanticScore:
    """The task-specific score in [0, 1] of a semantic drawing (EASEL §3.3)."""
    name = task.spec.get("task")
    if name in (CIRCLE_OUTLINE, HORSE_OUTLINE):
        region = enclosed_region(ink, task.size)
        mask = target_mask(task)
        return SemanticScore(dice(region, mask), {"region_px": int(region.sum()), "mask_px": int(mask.sum())},
                             recogniser="mask-dice")
    if name == HANDWRITING_HELLO:
        reader = recogniser if recogniser is not None else TesseractRecogniser()
        text = reader.recognise(canvas)
        return SemanticScore(letter_match_rate(text, HELLO), {"recognised": text, "target": HELLO},
                             recogniser=reader.name)
    if name in MAZE_TASKS:
        progress, reached = route_progress(ink, task)
        return SemanticScore(progress, {"cells_reached": reached, "route_cells": len(task.spec["route"])},
                             recogniser="route-progress")
    raise ValueError(f"task {task.id}: unknown semantic task {name!r}")


# --- geometry -----------------------------------------------------------------------------------

def _horse_mask(size: int, margin: int) -> np.ndarray:
    silhouette = ~horse()  # skimage's horse is False on the animal
    h, w = silhouette.shape
    side = max(h, w)
    square = np.zeros((side, side), bool)
    square[(side - h) // 2:(side - h) // 2 + h, (side - w) // 2:(side - w) // 2 + w] = silhouette
    inner = size - 2 * margin
    small = resize(square.astype(float), (inner, inner), order=1, anti_aliasing=True) >= 0.5
    mask = np.zeros((size, size), bool)
    mask[margin:margin + inner, margin:margin + inner] = small
    return mask


def target_mask(task: EaselTask) -> np.ndarray:
    """The outline task's target mask, rebuilt from its spec."""
    spec, size = task.spec, task.size
    if spec.get("task") == CIRCLE_OUTLINE:
        mask = np.zeros((size, size), bool)
        # A pixel belongs to the circle when its centre lies inside it.
        rr, cc = disk((spec["cy"] * size - 0.5, spec["cx"] * size - 0.5), spec["radius"] * size, shape=(size, size))
        mask[rr, cc] = True
        return mask
    if spec.get("task") == HORSE_OUTLINE:
        return _horse_mask(size, int(spec["margin_px"]))
    raise ValueError(f"task {task.id} has no target mask")


def _cell_centre(cell: Sequence[int], cells: int, size: int) -> tuple[int, int]:
    pitch = size / cells
    return int((cell[0] + 0.5) * pitch), int((cell[1] + 0.5) * pitch)


def maze_layout(task: EaselTask) -> dict[str, Any]:
    return {"cells": int(task.spec["cells"]), "passages": task.spec["passages"], "route": task.spec["route"]}


def wall_mask(task: EaselTask) -> np.ndarray | None:
    """Wall pixels of a maze task (None for other tasks): the grid lines minus the open passages."""
    if task.spec.get("task") not in MAZE_TASKS:
        return None
    size, cells = task.size, int(task.spec["cells"])
    pitch = size / cells
    half = MAZE_WALL_PX / 2
    walls = np.zeros((size, size), bool)
    lines = [int(round(k * pitch)) for k in range(cells + 1)]

    def band(position: int) -> slice:
        return slice(max(0, int(round(position - half))), min(size, int(round(position + half))))

    for pos in lines:
        walls[band(pos), :] = True  # horizontal line between rows k-1 and k
        walls[:, band(pos)] = True
    open_edges = {tuple(sorted((tuple(a), tuple(b)))) for a, b in task.spec["passages"]}
    for (r0, c0), (r1, c1) in open_edges:
        if r0 == r1:  # horizontal neighbours: open the vertical wall between columns
            col = lines[max(c0, c1)]
            walls[lines[r0]:lines[r0 + 1], band(col)] = False
        else:
            row = lines[max(r0, r1)]
            walls[band(row), lines[c0]:lines[c0 + 1]] = False
    # Re-close the lattice corners so that passages never merge into open areas.
    for rpos in lines:
        for cpos in lines:
            walls[band(rpos), band(cpos)] = True
    return walls


def stroke_collides(mask: np.ndarray, box: Box, walls: np.ndarray) -> bool:
    """True when the stroke's coverage exceeds ½ on a wall pixel (EASEL §3.1: wall-colliding actions)."""
    return bool(np.any((mask > INK_THRESHOLD) & walls[box.slices]))


def _generate_maze(cells: int, rng: np.random.Generator) -> tuple[list[list[list[int]]], list[list[int]]]:
    """A perfect maze by randomised depth-first search, and its start→goal route (top-left → bottom-right)."""
    visited = np.zeros((cells, cells), bool)
    passages: list[list[list[int]]] = []
    parent: dict[tuple[int, int], tuple[int, int] | None] = {(0, 0): None}
    stack = [(0, 0)]
    visited[0, 0] = True
    while stack:
        r, c = stack[-1]
        options = [(r + dr, c + dc) for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
                   if 0 <= r + dr < cells and 0 <= c + dc < cells and not visited[r + dr, c + dc]]
        if not options:
            stack.pop()
            continue
        nxt = options[int(rng.integers(len(options)))]
        visited[nxt] = True
        parent[nxt] = (r, c)
        passages.append([[r, c], [nxt[0], nxt[1]]])
        stack.append(nxt)
    route = []
    node: tuple[int, int] | None = (cells - 1, cells - 1)
    while node is not None:
        route.append([node[0], node[1]])
        node = parent[node]
    return passages, route[::-1]


def _maze_task(name: str, rng: np.random.Generator) -> EaselTask:
    size, budget = SEMANTIC_LAYOUT[name]
    cells = MAZE_CELLS[name]
    passages, route = _generate_maze(cells, rng)
    spec = {"task": name, "initial": "reference", "cells": cells, "passages": passages, "route": route,
            "instruction": ("Draw a path with brush strokes from the green start square (top left) to the red "
                            "goal square (bottom right) without crossing any wall. Strokes that touch a wall are "
                            "rejected. Use submit when the path is complete.")}
    task = EaselTask(id=name, kind=KIND_SEMANTIC, category=name, size=size, budget=budget,
                     reference=np.ones((size, size, 3), np.float32), spec=spec)
    image = np.ones((size, size, 3))
    image[wall_mask(task)] = _WALL_GREY
    marker = max(2, int(size / cells / 6))
    for cell, colour in ((route[0], (0.2, 0.75, 0.3)), (route[-1], (0.85, 0.2, 0.2))):
        cy, cx = _cell_centre(cell, cells, size)
        image[cy - marker:cy + marker + 1, cx - marker:cx + marker + 1] = colour
    return EaselTask(id=name, kind=KIND_SEMANTIC, category=name, size=size, budget=budget,
                     reference=quantise_image(image), spec=spec)


def semantic_tasks(seed: int) -> list[EaselTask]:
    """The five semantic tasks (Table 1 / Table 4), procedurally placed from ``seed``."""
    rng = np.random.default_rng([seed, 11])
    tasks: list[EaselTask] = []

    size, budget = SEMANTIC_LAYOUT[CIRCLE_OUTLINE]
    radius = float(rng.uniform(0.22, 0.32))
    cx, cy = (float(rng.uniform(radius + 0.08, 1 - radius - 0.08)) for _ in range(2))
    spec = {"task": CIRCLE_OUTLINE, "initial": "reference", "cx": round(cx, 4), "cy": round(cy, 4),
            "radius": round(radius, 4),
            "instruction": "Outline the grey circle: draw brush strokes along its boundary so that they enclose it "
                           "exactly. Use submit when you are done."}
    blank = np.ones((size, size, 3), np.float32)
    circle = EaselTask(id=CIRCLE_OUTLINE, kind=KIND_SEMANTIC, category=CIRCLE_OUTLINE, size=size, budget=budget,
                       reference=blank, spec=spec)
    image = np.ones((size, size, 3))
    image[target_mask(circle)] = _TASK_GREY
    tasks.append(EaselTask(id=CIRCLE_OUTLINE, kind=KIND_SEMANTIC, category=CIRCLE_OUTLINE, size=size,
                           budget=budget, reference=quantise_image(image), spec=spec))

    size, budget = SEMANTIC_LAYOUT[HORSE_OUTLINE]
    spec = {"task": HORSE_OUTLINE, "initial": "reference", "source": "skimage.data.horse", "margin_px": 8,
            "instruction": "Outline the grey horse: draw brush strokes along its boundary so that they enclose it. "
                           "Use submit when you are done."}
    image = np.ones((size, size, 3))
    image[_horse_mask(size, 8)] = _TASK_GREY
    tasks.append(EaselTask(id=HORSE_OUTLINE, kind=KIND_SEMANTIC, category=HORSE_OUTLINE, size=size, budget=budget,
                           reference=quantise_image(image), spec=spec))

    size, budget = SEMANTIC_LAYOUT[HANDWRITING_HELLO]
    spec = {"task": HANDWRITING_HELLO, "initial": "blank", "target": HELLO,
            "instruction": 'Write the word "hello" in lower-case handwriting across the canvas with brush strokes. '
                           "Use submit when you are done."}
    tasks.append(EaselTask(id=HANDWRITING_HELLO, kind=KIND_SEMANTIC, category=HANDWRITING_HELLO, size=size,
                           budget=budget, reference=np.ones((size, size, 3), np.float32), spec=spec))

    tasks.append(_maze_task(SIMPLE_MAZE, rng))
    tasks.append(_maze_task(MAZE, rng))
    return tasks


def semantic_episode_summary(task: EaselTask, kinds: Sequence[str], valid: Sequence[bool],
                             submitted_at: int | None) -> dict[str, float]:
    """Per-episode semantic diagnostics (Table 4): invalid rate, undo count, submit percentile.

    Submit percentile = submit step ÷ budget × 100; an episode that exhausts its budget counts 100.
    """
    steps = len(kinds)
    return {
        "invalid_rate": (sum(1 for ok in valid if not ok) / steps) if steps else 0.0,
        "undo_count": float(sum(1 for k in kinds if k == "undo")),
        "submit_percentile": 100.0 if submitted_at is None else 100.0 * submitted_at / task.budget,
        "is_maze": float(task.spec.get("task") in MAZE_TASKS),
    }


def semantic_diagnostics(summaries: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Table 4's trajectory columns over one agent's semantic episodes: each summary is
    :func:`semantic_episode_summary`'s plus the episode's number of actions under ``"steps"``.

    The maze invalid rate is pooled over actions, not averaged over episodes: EASEL §5.2, Table 4's
    caption, "Maze Inv.: fraction of invalid actions on maze tasks" (the same caption says "mean of
    per-episode" where it means one, for Avg. Submit%). So a maze episode weighs by its actions: 1
    invalid of 4 actions and 0 of 12 is 1/16, not the mean of 1/4 and 0. NaN without a maze action.
    """
    maze = [s for s in summaries if s["is_maze"]]
    other = [s for s in summaries if not s["is_maze"]]
    maze_actions = sum(int(s["steps"]) for s in maze)
    # the summary stores each episode's rate; its count of invalid actions is rate × actions (an integer)
    maze_invalid = sum(round(s["invalid_rate"] * int(s["steps"])) for s in maze)
    return {
        "maze_invalid_rate": maze_invalid / maze_actions if maze_actions else math.nan,
        "maze_undo": float(sum(s["undo_count"] for s in maze)),
        "non_maze_undo": float(sum(s["undo_count"] for s in other)),
        "avg_submit_percentile": float(np.mean([s["submit_percentile"] for s in summaries])) if summaries else math.nan,
    }

"""An EASEL task: one reference (or task image), its size, step budget and a JSON spec (EASEL §3.2, Table 1).

A task travels to the site as a record plus a PNG (:func:`task_to_record`) and comes back exactly
(:func:`task_from_record`): references are generated on the 8-bit grid (k/255), so the PNG round
trip is lossless.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

__all__ = ["KIND_RECONSTRUCTION", "KIND_SEMANTIC", "EaselTask", "image_from_png", "png_bytes", "quantise_image",
           "task_from_record", "task_to_record"]

KIND_RECONSTRUCTION = "reconstruction"
KIND_SEMANTIC = "semantic"


@dataclass(frozen=True, eq=False)
class EaselTask:
    """One EASEL task.

    ``reference``: float32 H×W×3 in [0, 1] on the 8-bit grid — the image to reconstruct, or for
    semantic tasks the task image shown to the agent (blank for handwriting). ``budget`` is the
    budget-aligned step count (Table 1). ``spec`` is JSON-serialisable: the instruction and, for
    semantic tasks, the recipe of the target (circle geometry, horse placement, maze walls and route)
    and ``initial`` ("reference" or "blank"), the canvas the agent starts from.
    """

    id: str
    kind: str
    category: str
    size: int
    budget: int
    reference: np.ndarray
    spec: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in (KIND_RECONSTRUCTION, KIND_SEMANTIC):
            raise ValueError(f"task {self.id}: kind must be reconstruction or semantic, not {self.kind!r}")
        if self.reference.shape != (self.size, self.size, 3) or self.reference.dtype != np.float32:
            raise ValueError(f"task {self.id}: reference must be float32 {self.size}×{self.size}×3")
        if self.budget < 1:
            raise ValueError(f"task {self.id}: budget must be positive")

    @property
    def instruction(self) -> str:
        return str(self.spec.get("instruction", ""))

    def initial_canvas(self) -> np.ndarray:
        """C_0: white, or the task image itself for annotation and maze tasks (EASEL §3.2)."""
        if self.spec.get("initial") == "reference":
            return self.reference.copy()
        return np.ones_like(self.reference)


def quantise_image(image: np.ndarray) -> np.ndarray:
    """An image in [0, 1] snapped to the 8-bit grid k/255, as float32 (so PNG storage is exact)."""
    return (np.round(np.clip(image, 0.0, 1.0) * 255.0) / 255.0).astype(np.float32)


def png_bytes(image: np.ndarray) -> bytes:
    """8-bit RGB PNG of a float image in [0, 1] (rounded to the nearest level)."""
    data = np.round(np.clip(image, 0.0, 1.0) * 255.0).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(data, "RGB").save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def image_from_png(data: bytes) -> np.ndarray:
    """float32 H×W×3 in [0, 1] from PNG bytes."""
    with Image.open(io.BytesIO(data)) as img:
        return (np.asarray(img.convert("RGB"), dtype=np.float32) / np.float32(255.0)).astype(np.float32)


def task_to_record(task: EaselTask) -> tuple[dict[str, Any], bytes]:
    """(record, PNG): the JSON fields of a task and its reference image."""
    record = {"id": task.id, "kind": task.kind, "category": task.category, "size": task.size,
              "budget": task.budget, "spec": json.loads(json.dumps(task.spec))}
    return record, png_bytes(task.reference)


def task_from_record(record: dict[str, Any], png: bytes) -> EaselTask:
    """The task :func:`task_to_record` stored, rebuilt exactly."""
    missing = [key for key in ("id", "kind", "category", "size", "budget") if key not in record]
    if missing:
        raise ValueError(f"EASEL task record lacks {', '.join(missing)}")
    reference = image_from_png(png)
    return EaselTask(id=str(record["id"]), kind=str(record["kind"]), category=str(record["category"]),
                     size=int(record["size"]), budget=int(record["budget"]), reference=reference,
                     spec=dict(record.get("spec") or {}))

"""Reconstruction references and the EASEL suite (EASEL §3.2, Table 1).

Four categories with Table 1's sizes and budgets. The first three are drawn procedurally from a seed
(the paper synthesises Programmatic itself and generates the rest with an image model, which we do
not have): Programmatic — one or two flat shapes on a plain ground; Spatial Geometry — multi-object
layouts of 3–7 overlapping shapes; Abstract/Cartoon — flat-colour compositions (cartoon scenes with
outlines, or abstract block-and-blob pictures). Natural Images are square crops of the colour
photographs shipped inside scikit-image's wheel (:data:`NATURAL_SOURCES`; nothing is downloaded),
resized with anti-aliasing. Shapes are drawn at 4× and area-averaged (anti-aliased edges). Every
image is snapped to the 8-bit grid; the same seed gives byte-identical references.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping

import numpy as np
import skimage.data
from skimage.draw import disk, ellipse, polygon
from skimage.transform import resize

from engine.easel.task import KIND_RECONSTRUCTION, EaselTask, quantise_image

__all__ = [
    "NATURAL_SOURCES",
    "PAPER_SUITE_SIZES",
    "ReconstructionCategory",
    "generate_reference",
    "generate_suite",
    "reconstruction_task_from_image",
]


class ReconstructionCategory(enum.Enum):
    """(value, size in px, budget-aligned steps) per Table 1."""

    PROGRAMMATIC = ("programmatic", 64, 32)
    SPATIAL_GEOMETRY = ("spatial_geometry", 128, 96)
    ABSTRACT_CARTOON = ("abstract_cartoon", 128, 96)
    NATURAL = ("natural", 128, 128)

    def __init__(self, label: str, size: int, budget: int) -> None:
        self.label = label
        self.size = size
        self.budget = budget

    @classmethod
    def from_label(cls, label: str) -> ReconstructionCategory:
        for category in cls:
            if category.label == label:
                return category
        raise ValueError(f"unknown EASEL category {label!r}; expected one of {[c.label for c in cls]}")


PAPER_SUITE_SIZES = {"programmatic": 15, "spatial_geometry": 40, "abstract_cartoon": 15, "natural": 40}  # Table 1

# Colour photographs bundled in scikit-image's wheel (verified to load offline with 0.26).
NATURAL_SOURCES: dict[str, Callable[[], np.ndarray]] = {
    "astronaut": skimage.data.astronaut,
    "chelsea": skimage.data.chelsea,
    "coffee": skimage.data.coffee,
    "rocket": skimage.data.rocket,
    "hubble_deep_field": skimage.data.hubble_deep_field,
    "immunohistochemistry": skimage.data.immunohistochemistry,
    "retina": skimage.data.retina,
    "motorcycle_left": lambda: skimage.data.stereo_motorcycle()[0],
}

_SUPERSAMPLE = 4

_PALETTE = np.array([
    [0.86, 0.16, 0.16], [0.95, 0.55, 0.10], [0.98, 0.85, 0.20], [0.25, 0.65, 0.25], [0.10, 0.45, 0.80],
    [0.45, 0.25, 0.70], [0.95, 0.45, 0.65], [0.35, 0.22, 0.12], [0.10, 0.10, 0.12], [0.55, 0.80, 0.90],
    [0.20, 0.70, 0.65], [0.60, 0.60, 0.62],
])
_GROUNDS = np.array([[1.0, 1.0, 1.0], [0.96, 0.94, 0.88], [0.90, 0.93, 0.97], [0.15, 0.17, 0.22], [0.98, 0.96, 0.92]])


class _Painter:
    """Flat shapes on a supersampled canvas, area-averaged down to ``size``."""

    def __init__(self, size: int, ground: np.ndarray) -> None:
        self.size = size
        self.big = size * _SUPERSAMPLE
        self.image = np.empty((self.big, self.big, 3))
        self.image[:] = ground

    def _scale(self, v: float) -> float:
        return v * self.big

    def disc(self, cx: float, cy: float, r: float, colour: np.ndarray) -> None:
        rr, cc = disk((self._scale(cy), self._scale(cx)), self._scale(r), shape=self.image.shape[:2])
        self.image[rr, cc] = colour

    def ellipse(self, cx: float, cy: float, ry: float, rx: float, angle: float, colour: np.ndarray) -> None:
        rr, cc = ellipse(self._scale(cy), self._scale(cx), self._scale(ry), self._scale(rx),
                         shape=self.image.shape[:2], rotation=angle)
        self.image[rr, cc] = colour

    def poly(self, xs: list[float], ys: list[float], colour: np.ndarray) -> None:
        rr, cc = polygon([self._scale(y) for y in ys], [self._scale(x) for x in xs], shape=self.image.shape[:2])
        self.image[rr, cc] = colour

    def rect(self, x0: float, y0: float, x1: float, y1: float, colour: np.ndarray) -> None:
        self.poly([x0, x1, x1, x0], [y0, y0, y1, y1], colour)

    def ring(self, cx: float, cy: float, r: float, width: float, colour: np.ndarray, inside: np.ndarray) -> None:
        self.disc(cx, cy, r, colour)
        self.disc(cx, cy, max(r - width, 0.0), inside)

    def outline_poly(self, xs: list[float], ys: list[float], colour: np.ndarray, width: float) -> None:
        for i in range(len(xs)):
            x0, y0, x1, y1 = xs[i], ys[i], xs[(i + 1) % len(xs)], ys[(i + 1) % len(xs)]
            self.line(x0, y0, x1, y1, width, colour)

    def line(self, x0: float, y0: float, x1: float, y1: float, width: float, colour: np.ndarray) -> None:
        dx, dy = x1 - x0, y1 - y0
        length = max(np.hypot(dx, dy), 1e-9)
        nx, ny = -dy / length * width / 2, dx / length * width / 2
        self.poly([x0 + nx, x1 + nx, x1 - nx, x0 - nx], [y0 + ny, y1 + ny, y1 - ny, y0 - ny], colour)

    def finish(self) -> np.ndarray:
        s, k = self.size, _SUPERSAMPLE
        return quantise_image(self.image.reshape(s, k, s, k, 3).mean(axis=(1, 3)))


def _colour(rng: np.random.Generator, avoid: np.ndarray | None = None) -> np.ndarray:
    while True:
        c = _PALETTE[int(rng.integers(len(_PALETTE)))]
        if avoid is None or np.abs(c - avoid).sum() > 0.3:
            return c


def _shape(p: _Painter, rng: np.random.Generator, scale: tuple[float, float], colour: np.ndarray,
           ground: np.ndarray) -> None:
    kind = int(rng.integers(5))
    size = float(rng.uniform(*scale))
    cx, cy = (float(rng.uniform(size * 0.6, 1 - size * 0.6)) for _ in range(2))
    if kind == 0:
        p.disc(cx, cy, size / 2, colour)
    elif kind == 1:
        w, h = size, float(rng.uniform(0.4, 1.0)) * size
        p.rect(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, colour)
    elif kind == 2:
        angles = float(rng.uniform(0, 2 * np.pi)) + np.array([0, 2 * np.pi / 3, 4 * np.pi / 3])
        p.poly(list(cx + size / 2 * np.cos(angles)), list(cy + size / 2 * np.sin(angles)), colour)
    elif kind == 3:
        p.ring(cx, cy, size / 2, size / 6, colour, ground)
    else:
        p.ellipse(cx, cy, size / 2, size / 4, float(rng.uniform(0, np.pi)), colour)


def _programmatic(rng: np.random.Generator, size: int) -> np.ndarray:
    ground = _GROUNDS[int(rng.integers(len(_GROUNDS)))]
    p = _Painter(size, ground)
    for _ in range(int(rng.integers(1, 3))):
        _shape(p, rng, (0.3, 0.6), _colour(rng, ground), ground)
    return p.finish()


def _spatial_geometry(rng: np.random.Generator, size: int) -> np.ndarray:
    ground = _GROUNDS[int(rng.integers(len(_GROUNDS)))]
    p = _Painter(size, ground)
    for _ in range(int(rng.integers(3, 8))):
        _shape(p, rng, (0.12, 0.4), _colour(rng, ground), ground)
    return p.finish()


def _cartoon_scene(rng: np.random.Generator, size: int) -> np.ndarray:
    sky = np.array([0.55, 0.80, 0.95]) if rng.random() < 0.7 else np.array([0.15, 0.15, 0.35])
    p = _Painter(size, sky)
    outline = np.array([0.08, 0.08, 0.1])
    horizon = float(rng.uniform(0.55, 0.75))
    p.rect(0, horizon, 1, 1, np.array([0.30, 0.65, 0.25]) if rng.random() < 0.7 else np.array([0.85, 0.75, 0.45]))
    p.disc(float(rng.uniform(0.1, 0.9)), float(rng.uniform(0.1, 0.3)), float(rng.uniform(0.06, 0.11)),
           np.array([0.98, 0.85, 0.2]))
    for _ in range(int(rng.integers(1, 3))):
        cx, cy = float(rng.uniform(0.15, 0.85)), float(rng.uniform(0.1, 0.35))
        for dx in (-0.06, 0.0, 0.06):
            p.disc(cx + dx, cy + (0.0 if dx else -0.03), 0.05, np.array([1.0, 1.0, 1.0]))
    x0 = float(rng.uniform(0.1, 0.5))
    w, h = float(rng.uniform(0.25, 0.4)), float(rng.uniform(0.2, 0.3))
    wall, roof = _colour(rng), _colour(rng)
    base = horizon + 0.08
    p.rect(x0, base - h, x0 + w, base, wall)
    p.outline_poly([x0, x0 + w, x0 + w, x0], [base - h, base - h, base, base], outline, 0.012)
    p.poly([x0 - 0.03, x0 + w / 2, x0 + w + 0.03], [base - h, base - h - 0.15, base - h], roof)
    p.outline_poly([x0 - 0.03, x0 + w / 2, x0 + w + 0.03], [base - h, base - h - 0.15, base - h], outline, 0.012)
    p.rect(x0 + w * 0.4, base - h * 0.55, x0 + w * 0.6, base, np.array([0.4, 0.25, 0.1]))
    tx = float(rng.uniform(0.65, 0.9))
    p.rect(tx - 0.02, horizon - 0.05, tx + 0.02, horizon + 0.12, np.array([0.4, 0.25, 0.1]))
    p.disc(tx, horizon - 0.1, float(rng.uniform(0.07, 0.11)), np.array([0.15, 0.5, 0.2]))
    return p.finish()


def _abstract(rng: np.random.Generator, size: int) -> np.ndarray:
    p = _Painter(size, np.array([0.97, 0.96, 0.92]))
    black = np.array([0.06, 0.06, 0.08])
    xs = sorted(float(v) for v in rng.uniform(0.15, 0.85, int(rng.integers(1, 4))))
    ys = sorted(float(v) for v in rng.uniform(0.15, 0.85, int(rng.integers(1, 4))))
    grid_x, grid_y = [0.0, *xs, 1.0], [0.0, *ys, 1.0]
    for i in range(len(grid_x) - 1):
        for j in range(len(grid_y) - 1):
            if rng.random() < 0.45:
                p.rect(grid_x[i], grid_y[j], grid_x[i + 1], grid_y[j + 1], _colour(rng))
    for x in xs:
        p.rect(x - 0.012, 0, x + 0.012, 1, black)
    for y in ys:
        p.rect(0, y - 0.012, 1, y + 0.012, black)
    for _ in range(int(rng.integers(0, 3))):
        p.ellipse(float(rng.uniform(0.2, 0.8)), float(rng.uniform(0.2, 0.8)), float(rng.uniform(0.06, 0.15)),
                  float(rng.uniform(0.06, 0.15)), float(rng.uniform(0, np.pi)), _colour(rng))
    return p.finish()


def _abstract_cartoon(rng: np.random.Generator, size: int) -> np.ndarray:
    return _cartoon_scene(rng, size) if rng.random() < 0.5 else _abstract(rng, size)


def _square_crop(photo: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
    image = photo[..., :3].astype(np.float64) / 255.0
    h, w = image.shape[:2]
    side = int(min(h, w) * float(rng.uniform(0.35, 0.9)))
    top, left = int(rng.integers(0, h - side + 1)), int(rng.integers(0, w - side + 1))
    crop = image[top:top + side, left:left + side]
    return quantise_image(resize(crop, (size, size), order=1, anti_aliasing=True, preserve_range=True))


def _natural(rng: np.random.Generator, size: int, photos: Mapping[str, np.ndarray]) -> tuple[np.ndarray, str]:
    names = sorted(photos)
    name = names[int(rng.integers(len(names)))]
    return _square_crop(photos[name], rng, size), name


_GENERATORS = {
    ReconstructionCategory.PROGRAMMATIC: _programmatic,
    ReconstructionCategory.SPATIAL_GEOMETRY: _spatial_geometry,
    ReconstructionCategory.ABSTRACT_CARTOON: _abstract_cartoon,
}


def generate_reference(category: ReconstructionCategory, seed: int, index: int,
                       photos: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, dict]:
    """(reference, provenance) of reference ``index`` of ``category`` for ``seed``."""
    rng = np.random.default_rng([seed, list(ReconstructionCategory).index(category), index])
    if category is ReconstructionCategory.NATURAL:
        pool = photos if photos is not None else {name: load() for name, load in NATURAL_SOURCES.items()}
        image, name = _natural(rng, category.size, pool)
        return image, {"source": f"skimage.data.{name}", "seed": seed, "index": index}
    return _GENERATORS[category](rng, category.size), {"source": "procedural", "seed": seed, "index": index}


def generate_suite(seed: int, *, per_category: Mapping[str, int] | None = None) -> list[EaselTask]:
    """The reconstruction suite for ``seed``: Table 1's 15/40/15/40 by default, or ``per_category`` counts."""
    counts = dict(PAPER_SUITE_SIZES if per_category is None else per_category)
    unknown = set(counts) - set(PAPER_SUITE_SIZES)
    if unknown:
        raise ValueError(f"unknown EASEL categories {sorted(unknown)}")
    negative = sorted(name for name, n in counts.items() if int(n) < 0)
    if negative:
        raise ValueError(f"a reference count cannot be negative ({', '.join(negative)})")
    photos = ({name: load() for name, load in NATURAL_SOURCES.items()} if counts.get("natural") else {})
    tasks = []
    for category in ReconstructionCategory:
        for index in range(int(counts.get(category.label, 0))):
            image, provenance = generate_reference(category, seed, index, photos)
            tasks.append(EaselTask(id=f"{category.label}-{index:03d}", kind=KIND_RECONSTRUCTION,
                                   category=category.label, size=category.size, budget=category.budget,
                                   reference=image, spec={"provenance": provenance,
                                                          "instruction": "Reconstruct the reference image."}))
    return tasks


def reconstruction_task_from_image(image: np.ndarray, *, task_id: str,
                                   category: ReconstructionCategory = ReconstructionCategory.NATURAL,
                                   source: str = "imported") -> EaselTask:
    """A user-imported image as a task: centre square crop resized to the category size.

    The image is RGB or RGBA, 8-bit (``uint8``, /255), 16-bit (``uint16``, /65535) or float in [0, 1].
    Transparency is composited over white, the blank canvas's colour (what a viewer shows; the hidden
    colour of a transparent pixel is no part of the picture). Anything else — another shape or integer
    type, an empty image, NaN or floats outside [0, 1] (0..255 as floats) — is a ValueError naming the task.
    """
    data = np.asarray(image)
    if data.ndim != 3 or data.shape[2] not in (3, 4):
        raise ValueError(f"{task_id}: an EASEL reference must be an RGB image, got shape {data.shape}")
    if data.size == 0:
        raise ValueError(f"{task_id}: the image is empty ({data.shape[1]}x{data.shape[0]} pixels)")
    if data.dtype == np.uint8:
        values = data.astype(np.float64) / 255.0
    elif data.dtype == np.uint16:
        values = data.astype(np.float64) / 65535.0
    elif data.dtype.kind == "f":
        values = data.astype(np.float64)
        low, high = float(values.min()), float(values.max())
        if not (0.0 <= low and high <= 1.0):  # NaN fails both tests
            raise ValueError(f"{task_id}: a float image must hold values in [0, 1], got values from {low} to {high}")
    else:
        raise ValueError(f"{task_id}: an EASEL reference is 8-bit, 16-bit or float in [0, 1], got dtype {data.dtype}")
    rgb = values[..., :3]
    if values.shape[2] == 4:
        alpha = values[..., 3:]
        rgb = rgb * alpha + (1.0 - alpha)  # over the white canvas
    h, w = rgb.shape[:2]
    side = min(h, w)
    crop = rgb[(h - side) // 2:(h - side) // 2 + side, (w - side) // 2:(w - side) // 2 + side]
    ref = quantise_image(resize(crop, (category.size, category.size), order=1, anti_aliasing=True,
                                preserve_range=True))
    return EaselTask(id=task_id, kind=KIND_RECONSTRUCTION, category=category.label, size=category.size,
                     budget=category.budget, reference=ref,
                     spec={"provenance": {"source": source}, "instruction": "Reconstruct the reference image."})

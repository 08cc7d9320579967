"""Score anchors and the search painter (EASEL Table 2).

Anchors (a canvas computed from the reference alone, scored with S like any final canvas):

* ``blank_fill`` — the white canvas C_0;
* ``mean_colour_fill`` — every pixel the reference's mean RGB;
* ``dominant_colour_fill`` — every pixel the dominant colour: the reference's pixels are binned in a
  colour histogram of 8 levels per channel (bin ⌊8v⌋, v = 1 in the top bin); the most populous of the
  512 cells (ties: the lowest cell index r·64 + g·8 + b) is the dominant cell, and its colour is the
  mean RGB of the pixels in it.

The search painter stands in for the paper's data policy, a trained Learning-to-Paint agent
(Huang et al. 2019) whose weights we do not have. It is not a learned policy: at every step it draws
random candidate strokes (start points sampled in proportion to the per-pixel error |C_t − R|,
sizes shrinking from coarse to fine over the budget, each stroke's colour the least-squares best
colour under its mask), scores the exact S of the ``shortlist`` that most reduce the squared error
(all of them by default), refines the best by shrinking random perturbations, and emits the stroke
that most increases S (or an α = 0 no-op when none does). Candidate gains come from
:class:`IncrementalSimilarity`, so each costs the stroke's neighbourhood, not the canvas. The random
stream is seeded by (seed, task id, step): the same seed gives the same episode, also when resumed.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass

import numpy as np

from engine.easel.metrics import IncrementalSimilarity
from engine.easel.policy import Observation
from engine.easel.render import ACTION_BRUSH_STROKE, Stroke, composite, stroke_coverage

__all__ = [
    "ANCHORS",
    "ANCHOR_LABELS",
    "DOMINANT_LEVELS",
    "SearchPainter",
    "blank_fill",
    "dominant_colour",
    "dominant_colour_fill",
    "mean_colour_fill",
    "stroke_action",
]

DOMINANT_LEVELS = 8  # histogram levels per channel for the dominant colour


def blank_fill(reference: np.ndarray) -> np.ndarray:
    """The blank white canvas (Table 2, first anchor)."""
    return np.ones_like(reference, dtype=np.float32)


def mean_colour_fill(reference: np.ndarray) -> np.ndarray:
    """Every pixel the reference's mean RGB (Table 2)."""
    mean = reference.reshape(-1, 3).astype(np.float64).mean(axis=0)
    return np.broadcast_to(mean.astype(np.float32), reference.shape).copy()


def dominant_colour(reference: np.ndarray) -> np.ndarray:
    """Mean RGB of the most populous cell of the 8-level-per-channel colour histogram (module docstring)."""
    pixels = reference.reshape(-1, 3).astype(np.float64)
    bins = np.minimum((pixels * DOMINANT_LEVELS).astype(int), DOMINANT_LEVELS - 1)
    cell = (bins[:, 0] * DOMINANT_LEVELS + bins[:, 1]) * DOMINANT_LEVELS + bins[:, 2]
    counts = np.bincount(cell, minlength=DOMINANT_LEVELS**3)
    top = int(np.argmax(counts))  # argmax returns the lowest index among ties
    return pixels[cell == top].mean(axis=0)


def dominant_colour_fill(reference: np.ndarray) -> np.ndarray:
    """Every pixel the dominant colour (Table 2)."""
    return np.broadcast_to(dominant_colour(reference).astype(np.float32), reference.shape).copy()


ANCHORS = {"blank": blank_fill, "mean_colour": mean_colour_fill, "dominant_colour": dominant_colour_fill}
#: The name a board shows for an anchor run, by the function that paints it (the site names every anchor
#: run so, and a bundle's verifier checks that a run's name is its anchor's).
ANCHOR_LABELS = {
    "blank_fill": "Blank-white canvas",
    "mean_colour_fill": "Reference mean-colour fill",
    "dominant_colour_fill": "Reference dominant-colour fill",
}


def stroke_action(stroke: Stroke) -> str:
    """The JSON text of a reconstruction action for ``stroke`` (floats round-trip exactly)."""
    return json.dumps({"action": ACTION_BRUSH_STROKE, **stroke.as_dict()})


_NO_OP = Stroke(0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # α = 0: changes nothing


@dataclass
class _Candidate:
    params: np.ndarray  # 13 values; colour filled in by the least-squares fit
    s: float
    box: object = None
    patch: np.ndarray | None = None
    proxy: float = 0.0  # change of the squared error under the stroke (lower is better)


class SearchPainter:
    """Greedy stroke search on S; a stand-in for Learning-to-Paint, not a learned policy (module docstring)."""

    is_simulated = False
    label = "search painter (stand-in for the paper's Learning-to-Paint data policy)"

    def __init__(self, seed: int = 0, *, candidates: int = 24, shortlist: int | None = None, refinements: int = 16,
                 name: str = "search-painter"):
        self.seed = seed
        self.candidates = candidates
        self.shortlist = candidates if shortlist is None else shortlist
        self.refinements = refinements
        self.name = name
        self._scorer: IncrementalSimilarity | None = None
        self._task_id: str | None = None

    # -- scorer kept in step with the observed canvas

    def _scorer_for(self, observation: Observation) -> IncrementalSimilarity:
        canvas = observation.canvas
        if (self._scorer is None or self._task_id != observation.task.id
                or not np.array_equal(self._scorer.canvas, canvas)):
            self._scorer = IncrementalSimilarity(observation.task.reference, canvas)
            self._task_id = observation.task.id
        return self._scorer

    # -- candidates

    @staticmethod
    def _fit_colour(mask: np.ndarray, region: np.ndarray, target: np.ndarray) -> np.ndarray:
        """argmin_c Σ (m·c + (1 − m)·x − r)²  ⇒  c = Σ m(r − (1 − m)x) / Σ m², clipped to [0, 1]."""
        m = mask[..., None]
        num = np.sum(m * (target - (1.0 - m) * region), axis=(0, 1))
        den = float(np.sum(mask * mask))
        return np.clip(num / den, 0.0, 1.0) if den > 0 else np.zeros(3)

    def _prepare(self, params: np.ndarray, canvas: np.ndarray, scorer: IncrementalSimilarity) -> _Candidate | None:
        """A candidate with its least-squares colour, its patch, and its squared-error change (the shortlist key)."""
        size = canvas.shape[0]
        covered = stroke_coverage(Stroke(*(float(v) for v in params)), size, canvas.shape[1])
        if covered is None:
            return None
        mask, box = covered
        rows, cols = box.slices
        region = canvas[rows, cols]
        target = scorer.reference[rows, cols]
        params = params.copy()
        params[10:13] = self._fit_colour(mask, region.astype(np.float64), target)
        patch = composite(region, mask, params[10:13])
        proxy = float(np.sum((patch - target) ** 2) - np.sum((region - target) ** 2))
        return _Candidate(params, -np.inf, box, patch, proxy)

    def _evaluate(self, params: np.ndarray, canvas: np.ndarray, scorer: IncrementalSimilarity) -> _Candidate | None:
        candidate = self._prepare(params, canvas, scorer)
        if candidate is not None:
            candidate.s = scorer.gain(candidate.box, candidate.patch).s
        return candidate

    @staticmethod
    def propose_stroke(rng: np.random.Generator, error_cdf: np.ndarray, size: int, progress: float) -> np.ndarray:
        """A random opaque stroke: start drawn ∝ error (``error_cdf``), length and radius shrinking with progress."""
        pixel = int(np.searchsorted(error_cdf, rng.random() * error_cdf[-1]))
        pixel = min(pixel, size * size - 1)
        y0 = (pixel // size + rng.random()) / size
        x0 = (pixel % size + rng.random()) / size
        coarse = 1.0 - progress
        length = rng.uniform(0.15, 1.0) * (1.1 * coarse + 0.06)
        angle = rng.uniform(0.0, 2 * np.pi)
        x1 = x0 + length * np.cos(angle)
        y1 = y0 + length * np.sin(angle)
        bend = rng.uniform(-0.4, 0.4) * length
        xc = (x0 + x1) / 2 - bend * np.sin(angle)
        yc = (y0 + y1) / 2 + bend * np.cos(angle)
        radius_top = 0.6 * coarse**1.5 + 0.04
        rs, re = rng.uniform(0.25, 1.0, 2) * radius_top
        params = np.array([x0, y0, xc, yc, x1, y1, rs, 1.0, re, 1.0, 0.0, 0.0, 0.0])
        return np.clip(params, 0.0, 1.0)

    def _refine(self, best: _Candidate, rng: np.random.Generator, canvas: np.ndarray,
                scorer: IncrementalSimilarity) -> _Candidate:
        for j in range(self.refinements):
            sigma = 0.04 * 0.8 ** (j // 4)
            params = best.params.copy()
            params[:6] += rng.normal(0.0, sigma, 6)
            params[[6, 8]] *= np.exp(rng.normal(0.0, 0.25, 2))
            params = np.clip(params, 0.0, 1.0)
            trial = self._evaluate(params, canvas, scorer)
            if trial is not None and trial.s > best.s:
                best = trial
        return best

    def act(self, observation: Observation) -> str:
        """The stroke that most increases S among this step's candidates, as action JSON."""
        scorer = self._scorer_for(observation)
        canvas = observation.canvas
        size = canvas.shape[0]
        rng = np.random.default_rng([self.seed, zlib.crc32(observation.task.id.encode()), observation.step])
        error = np.abs(canvas.astype(np.float64) - scorer.reference).sum(axis=2).ravel() + 1e-6
        cdf = np.cumsum(error)
        progress = min(1.0, observation.step / max(1, observation.budget))
        current = scorer.score.s
        best: _Candidate | None = None
        pool = [self._prepare(self.propose_stroke(rng, cdf, size, progress), canvas, scorer)
                for _ in range(self.candidates)]
        pool = [c for c in pool if c is not None]
        # Exact S gains for the shortlist of candidates that most reduce the squared error (stable order).
        for candidate in sorted(pool, key=lambda c: c.proxy)[: self.shortlist]:
            candidate.s = scorer.gain(candidate.box, candidate.patch).s
            if best is None or candidate.s > best.s:
                best = candidate
        if best is not None:
            best = self._refine(best, rng, canvas, scorer)
        if best is None or best.s <= current:
            return stroke_action(_NO_OP)
        stroke = Stroke(*(float(v) for v in best.params))
        scorer.apply(best.box, best.patch)  # what the environment will do with this action
        return stroke_action(stroke)

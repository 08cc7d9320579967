"""Reconstruction similarity S = 0.5·SSIM + 0.3·(1 − L1) + 0.2·EdgeIoU (EASEL Eq. 1, §3.3).

* SSIM: ``skimage.metrics.structural_similarity(canvas, reference, channel_axis=2, data_range=1.0)``
  with its defaults (7×7 uniform window, sample covariance, K1 = 0.01, K2 = 0.03, the 3-pixel border
  cropped before the mean), on float64 copies of the float32 images.
* L1: mean absolute difference over pixels and channels, in [0, 1].
* EdgeIoU: IoU of ``skimage.feature.canny`` edge maps of the grey images (σ and thresholds below;
  grey = BT.709 luma 0.2125 R + 0.7154 G + 0.0721 B, the ``rgb2gray`` weights, computed elementwise).
  Both edge maps empty → 1.0 (the two images agree that there is no edge); one empty → 0.0.

Both images are float H×W×3 arrays in [0, 1] of one size, at least 7×7 (the SSIM window): the domain
those constants assume. An integer image, an alpha or a missing colour channel, NaN or a value outside
[0, 1] is a ValueError naming it, not a number.

:class:`IncrementalSimilarity` prepares a reference once (its grey image, edge map, window
statistics, Canny bleed-over) and, when a stroke changes a box B of the canvas, recomputes only
B + 3 px of the SSIM map (window half-width), B + 6 px of the Canny pre-hysteresis maps (Gaussian
radius 4 + Sobel 1 + non-maximum suppression 1, from inputs on B + 12 px) and the hysteresis
(non-local by nature) on the edge chains that reach B, as far as they go; a candidate's score
(``gain``) narrows B to the box of the pixels the stroke actually changed and builds none of the
patches a commit writes. The box work is one compiled kernel (engine/easel/score_kernels.py: a
numba pass instead of some sixty numpy and scipy calls on small boxes). Its S equals :func:`similarity` to 1e-12 (tests/engine/easel/test_metrics.py):
the kernel's Canny steps are scikit-image's and scipy's operations in their order, so the edge maps
are identical, not just close.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage as ndi
from scipy.ndimage import _nd_image
from scipy.ndimage._filters import _gaussian_kernel1d
from scipy.ndimage._ni_support import _extend_mode_to_code
from skimage.feature import canny
from skimage.feature._canny_cy import _nonmaximum_suppression_bilinear
from skimage.metrics import structural_similarity

from engine.easel.render import Box
from engine.easel.score_kernels import CANNY_LOW_THRESHOLD_F32, box_change, box_gain

__all__ = [
    "CANNY_HIGH_THRESHOLD",
    "CANNY_LOW_THRESHOLD",
    "CANNY_SIGMA",
    "IncrementalSimilarity",
    "SSIM_WEIGHT",
    "L1_WEIGHT",
    "EDGE_WEIGHT",
    "Similarity",
    "edge_map",
    "grey",
    "similarity",
]

SSIM_WEIGHT, L1_WEIGHT, EDGE_WEIGHT = 0.5, 0.3, 0.2  # EASEL Eq. 1

# Canny parameters: scikit-image's defaults for float images (σ = 1; hysteresis thresholds 0.1
# and 0.2 of the gradient magnitude of a [0, 1] image).
CANNY_SIGMA = 1.0
CANNY_LOW_THRESHOLD = 0.1
CANNY_HIGH_THRESHOLD = 0.2

_SSIM_WIN = 7  # structural_similarity's default window
_SSIM_PAD = (_SSIM_WIN - 1) // 2
_SSIM_COV_NORM = _SSIM_WIN**2 / (_SSIM_WIN**2 - 1.0)  # sample covariance (skimage default)
_SSIM_C1 = (0.01 * 1.0) ** 2  # (K1·data_range)², skimage default K1
_SSIM_C2 = (0.03 * 1.0) ** 2  # (K2·data_range)², skimage default K2
_GAUSS_RADIUS = int(4.0 * CANNY_SIGMA + 0.5)  # scipy gaussian_filter truncate=4.0
_GAUSS_WEIGHTS = _gaussian_kernel1d(CANNY_SIGMA, 0, _GAUSS_RADIUS)[::-1].copy()
_CANNY_REACH = _GAUSS_RADIUS + 2  # a grey pixel reaches low_masked this far (Gaussian + Sobel + NMS)
_STREL = np.ones((3, 3), bool)  # 8-connectivity of skimage's hysteresis
_GENERATION_LIMIT = np.iinfo(np.int32).max  # the flood fill's visited stamps are int32
# Patches the kernel reads as they are (composite gives float32: no float64 copy per candidate).
_KERNEL_PATCH_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

_LUMA = (0.2125, 0.7154, 0.0721)
_MODE_CONSTANT = _extend_mode_to_code("constant")
_MODE_REFLECT = _extend_mode_to_code("reflect")
_SOBEL_DIFF = np.array([-1.0, 0.0, 1.0])
_SOBEL_SMOOTH = np.array([1.0, 2.0, 1.0])


def _correlate1d(x: np.ndarray, weights: np.ndarray, axis: int, mode: int) -> np.ndarray:
    """scipy.ndimage.correlate1d's C pass without its per-call argument checks (run many times a step)."""
    out = np.empty(x.shape)
    _nd_image.correlate1d(x, weights, axis, out, mode, 0.0, 0)
    return out


@dataclass(frozen=True)
class Similarity:
    """S and its three terms for one canvas against one reference (EASEL Eq. 1)."""

    s: float
    ssim: float
    l1: float
    edge_iou: float

    def as_dict(self) -> dict[str, float]:
        return {"s": self.s, "ssim": self.ssim, "l1": self.l1, "edge_iou": self.edge_iou}


def combine(ssim: float, l1: float, edge_iou: float) -> Similarity:
    """S = 0.5·SSIM + 0.3·(1 − L1) + 0.2·EdgeIoU (EASEL Eq. 1)."""
    s = SSIM_WEIGHT * ssim + L1_WEIGHT * (1.0 - l1) + EDGE_WEIGHT * edge_iou
    return Similarity(s=float(s), ssim=float(ssim), l1=float(l1), edge_iou=float(edge_iou))


def grey(image: np.ndarray) -> np.ndarray:
    """Luma 0.2125 R + 0.7154 G + 0.0721 B (rgb2gray's BT.709 weights), float64, elementwise."""
    rgb = image.astype(np.float64, copy=False)
    return _LUMA[0] * rgb[..., 0] + _LUMA[1] * rgb[..., 1] + _LUMA[2] * rgb[..., 2]


def edge_map(image: np.ndarray) -> np.ndarray:
    """Canny edges of the grey image (σ = CANNY_SIGMA, thresholds CANNY_LOW/HIGH_THRESHOLD)."""
    return canny(grey(image), sigma=CANNY_SIGMA, low_threshold=CANNY_LOW_THRESHOLD,
                 high_threshold=CANNY_HIGH_THRESHOLD)


def edge_iou(edges_a: np.ndarray, edges_b: np.ndarray) -> float:
    """|A ∩ B| / |A ∪ B|; both empty → 1.0 (EASEL §3.3 leaves it open; agreement on no edges)."""
    union = int(np.count_nonzero(edges_a | edges_b))
    if union == 0:
        return 1.0
    return int(np.count_nonzero(edges_a & edges_b)) / union


def _checked_image(image: np.ndarray, what: str) -> np.ndarray:
    """``image`` as S reads it: a float H×W×3 array in [0, 1], at least the SSIM window on each side; else a
    ValueError saying what it is instead.

    S has one domain: SSIM's constants assume ``data_range = 1``, L1 is "in [0, 1]" and Canny's thresholds
    are fractions of a [0, 1] gradient. An 8- or 16-bit image (S = −24.6 and −6427 for two random images:
    L1 in grey levels), an alpha channel (scored as a fourth colour by SSIM and L1 but not by the edges),
    NaN or values outside [0, 1] were scored without a word; they are refused, not converted by a guess.
    """
    array = np.asarray(image)
    if array.ndim != 3 or array.shape[2] != 3:
        raise ValueError(f"{what} must be an H×W×3 RGB image, got shape {array.shape}")
    height, width = array.shape[:2]
    if min(height, width) < _SSIM_WIN:
        # As structural_similarity itself; the kernel's reflected indices also assume this.
        raise ValueError(f"a canvas must be at least {_SSIM_WIN}x{_SSIM_WIN} pixels (the SSIM window); "
                         f"{what} is {height}x{width}")
    if array.dtype.kind != "f":
        raise ValueError(f"{what} must be a float image in [0, 1], got dtype {array.dtype} "
                         "(an 8-bit image is divided by 255, a 16-bit one by 65535, before it is scored)")
    low, high = float(array.min()), float(array.max())
    if not (0.0 <= low and high <= 1.0):  # NaN fails both tests
        raise ValueError(f"{what} must hold finite values in [0, 1], got values from {low} to {high}")
    return array


def _same_size(canvas: np.ndarray, reference: np.ndarray) -> None:
    if canvas.shape != reference.shape:
        raise ValueError(f"the canvas and the reference must be the same size, got {canvas.shape[1]}x"
                         f"{canvas.shape[0]} and {reference.shape[1]}x{reference.shape[0]}")


def similarity(canvas: np.ndarray, reference: np.ndarray) -> Similarity:
    """S of ``canvas`` against ``reference`` by the straightforward full recompute (EASEL Eq. 1).

    Both are float H×W×3 images in [0, 1] of one size (anything else is a ValueError, :func:`_checked_image`)."""
    canvas, reference = _checked_image(canvas, "the canvas"), _checked_image(reference, "the reference")
    _same_size(canvas, reference)
    a = canvas.astype(np.float64)
    b = reference.astype(np.float64)
    ssim = structural_similarity(a, b, channel_axis=2, data_range=1.0)
    l1 = float(np.mean(np.abs(a - b)))
    return combine(float(ssim), l1, edge_iou(edge_map(a), edge_map(b)))


# --- incremental scoring -----------------------------------------------------------------------

def _ssim_from_means(ux: np.ndarray, uxx: np.ndarray, uxy: np.ndarray, uy: np.ndarray,
                     uyy: np.ndarray) -> np.ndarray:
    """skimage's SSIM map from the window means (Wang et al. 2004, Eq. 13, sample covariance)."""
    vx = _SSIM_COV_NORM * (uxx - ux * ux)
    vy = _SSIM_COV_NORM * (uyy - uy * uy)
    vxy = _SSIM_COV_NORM * (uxy - ux * uy)
    a1, a2 = 2 * ux * uy + _SSIM_C1, 2 * vxy + _SSIM_C2
    b1, b2 = ux**2 + uy**2 + _SSIM_C1, vx + vy + _SSIM_C2
    return (a1 * a2) / (b1 * b2)


def _ssim_map(x: np.ndarray, y: np.ndarray, uy: np.ndarray, uyy: np.ndarray) -> np.ndarray:
    """skimage's SSIM map (uniform 7×7 window, per channel), given the reference's window means."""
    means = ndi.uniform_filter(np.concatenate([x, x * x, x * y], axis=2), size=(_SSIM_WIN, _SSIM_WIN, 1))
    return _ssim_from_means(means[..., 0:3], means[..., 3:6], means[..., 6:9], uy, uyy)


@dataclass
class _State:
    canvas: np.ndarray  # float64 H×W×3
    ssim_map: np.ndarray  # H×W×3
    ssim_total: float  # sum of the SSIM map inside the 3-px border skimage crops
    abs_diff_sum: float
    grey: np.ndarray  # the canvas's grey image
    low_masked: np.ndarray  # non-maximum-suppressed gradient magnitude (0 below the low threshold)
    edges: np.ndarray  # bool H×W
    edge_count: int  # |E|
    edge_overlap: int  # |E ∩ E_ref|


@dataclass
class _Change:
    """A stroke's effect on every term, computed on its neighbourhood only."""

    box: Box
    patch: np.ndarray
    grey_patch: np.ndarray
    ssim_box: Box
    ssim_patch: np.ndarray
    ssim_total: float
    abs_diff_sum: float
    canny_box: Box
    low_patch: np.ndarray
    edge_count: int
    edge_overlap: int


class IncrementalSimilarity:
    """S of a canvas that changes one stroke box at a time, against one prepared reference.

    ``score`` gives the current Similarity; ``apply(box, patch)`` commits a change of
    ``canvas[box]`` to ``patch``; ``gain(box, patch)`` scores that change without committing it
    (the painter's candidate evaluation); ``reset(canvas)`` restarts from any canvas.

    Hysteresis is redone on the changed neighbourhood: a component of the new low mask that does not
    come within one pixel of the changed Canny box consists of unchanged pixels with unchanged
    neighbours, so it is a whole old component with its old status; the components that do are
    flood-filled as far as they reach (engine/easel/score_kernels.py) and take their new status.
    """

    def __init__(self, reference: np.ndarray, canvas: np.ndarray | None = None) -> None:
        self.reference = _checked_image(reference, "the reference").astype(np.float64)
        self.height, self.width = reference.shape[:2]
        ref = self.reference
        size = (_SSIM_WIN, _SSIM_WIN, 1)
        self._uy = ndi.uniform_filter(ref, size=size)
        self._uyy = ndi.uniform_filter(ref * ref, size=size)
        self._uy2_c1 = self._uy * self._uy + _SSIM_C1
        self._vy_c2 = _SSIM_COV_NORM * (self._uyy - self._uy * self._uy) + _SSIM_C2
        self.reference_edges = edge_map(ref)
        self._reference_edge_count = int(np.count_nonzero(self.reference_edges))
        # Canny's constant-mode bleed-over correction and the eroded border mask (skimage _preprocess).
        ones = np.ones((self.height, self.width))
        self._bleed = ndi.gaussian_filter(ones, CANNY_SIGMA, mode="constant", cval=0.0, truncate=4.0) + np.finfo(
            np.float64).eps
        self._eroded = np.ones((self.height, self.width), bool)
        self._eroded[[0, -1], :] = False
        self._eroded[:, [0, -1]] = False
        # The hysteresis flood fill's visited stamps (one generation per change) and its queue.
        self._stamp = np.zeros((self.height, self.width), np.int32)
        self._queue = np.empty((self.height * self.width, 2), np.int64)  # (row, column) of visited pixels
        self._generation = 0
        self._interior = Box(_SSIM_PAD, self.height - _SSIM_PAD, _SSIM_PAD, self.width - _SSIM_PAD)
        self._ssim_count = self._interior.area * 3
        self._l1_count = self.height * self.width * 3
        self.reset(np.ones_like(ref) if canvas is None else canvas)

    # -- full preparation

    def reset(self, canvas: np.ndarray) -> Similarity:
        canvas = _checked_image(canvas, "the canvas")
        _same_size(canvas, self.reference)
        x = canvas.astype(np.float64)
        full = Box(0, self.height, 0, self.width)
        grey_canvas = grey(x)
        low_masked = self._low_masked(grey_canvas, full, full)
        ssim_map = _ssim_map(x, self.reference, self._uy, self._uyy)
        edges = self._hysteresis(low_masked)
        self._state = _State(
            canvas=x,
            ssim_map=ssim_map,
            ssim_total=float(np.sum(ssim_map[self._interior.slices])),
            abs_diff_sum=float(np.sum(np.abs(x - self.reference))),
            grey=grey_canvas,
            low_masked=low_masked,
            edges=edges,
            edge_count=int(np.count_nonzero(edges)),
            edge_overlap=int(np.count_nonzero(edges & self.reference_edges)),
        )
        return self.score

    @property
    def canvas(self) -> np.ndarray:
        return self._state.canvas

    @property
    def score(self) -> Similarity:
        st = self._state
        return self._similarity(st.ssim_total, st.abs_diff_sum, st.edge_count, st.edge_overlap)

    def _similarity(self, ssim_total: float, abs_diff_sum: float, edge_count: int, edge_overlap: int) -> Similarity:
        union = edge_count + self._reference_edge_count - edge_overlap
        iou = 1.0 if union == 0 else edge_overlap / union  # both maps empty → 1.0
        return combine(ssim_total / self._ssim_count, abs_diff_sum / self._l1_count, iou)

    # -- Canny pieces (skimage.feature.canny, split so a box can be redone)

    def _low_masked(self, grey_crop: np.ndarray, inner: Box, crop: Box) -> np.ndarray:
        """low_masked on ``inner`` from the grey image on ``crop`` ⊇ inner + 6 px (clipped to the canvas)."""
        rows, cols = crop.slices
        # scipy's gaussian_filter and sobel, pass for pass (same kernels, same order, same modes).
        smoothed = _correlate1d(grey_crop, _GAUSS_WEIGHTS, 0, _MODE_CONSTANT)
        smoothed = _correlate1d(smoothed, _GAUSS_WEIGHTS, 1, _MODE_CONSTANT)
        smoothed /= self._bleed[rows, cols]
        jsobel = _correlate1d(_correlate1d(smoothed, _SOBEL_DIFF, 1, _MODE_REFLECT), _SOBEL_SMOOTH, 0, _MODE_REFLECT)
        isobel = _correlate1d(_correlate1d(smoothed, _SOBEL_DIFF, 0, _MODE_REFLECT), _SOBEL_SMOOTH, 1, _MODE_REFLECT)
        magnitude = isobel * isobel
        magnitude += jsobel * jsobel
        np.sqrt(magnitude, out=magnitude)
        mask = self._eroded[rows, cols].copy()
        # Crop edges inside the canvas are margin; keep the suppression from reading past them.
        if crop.r0 > 0:
            mask[0, :] = False
        if crop.r1 < self.height:
            mask[-1, :] = False
        if crop.c0 > 0:
            mask[:, 0] = False
        if crop.c1 < self.width:
            mask[:, -1] = False
        low = np.asarray(_nonmaximum_suppression_bilinear(isobel, jsobel, magnitude, mask, CANNY_LOW_THRESHOLD))
        return low[inner.r0 - crop.r0:inner.r1 - crop.r0, inner.c0 - crop.c0:inner.c1 - crop.c0]

    @staticmethod
    def _hysteresis(low_masked: np.ndarray) -> np.ndarray:
        """skimage's hysteresis: 8-connected components of the low mask that hold a high pixel."""
        low_mask = low_masked > 0
        labels, count = ndi.label(low_mask, _STREL)
        if count == 0:
            return low_mask
        high_mask = low_mask & (low_masked >= CANNY_HIGH_THRESHOLD)
        good = np.zeros(count + 1, bool)
        good[labels[high_mask]] = True
        good[0] = False
        return good[labels]

    def _kernel_inputs(self, box: Box, patch: np.ndarray) -> tuple:
        """What box_change and box_gain (engine/easel/score_kernels.py) read, in their argument order
        (box_change's without ``commit``), for the next flood-fill generation; the patch as they read it
        (float32 or float64, C order).

        The compiled kernel indexes without bounds checks, so what it would read wrongly is refused here,
        before it reads or writes anything: a box not inside the canvas (it read past the canvas's arrays:
        S = nan from stray memory; apply then failed on a numpy broadcast after the kernel had written edge
        statuses), a patch not of the box's size × 3, or values not in [0, 1] (NaN made S nan)."""
        height, width = self.height, self.width
        if not (0 <= box.r0 <= box.r1 <= height and 0 <= box.c0 <= box.c1 <= width):
            raise ValueError(f"box rows [{box.r0}, {box.r1}) × columns [{box.c0}, {box.c1}) is not inside the "
                             f"{width}x{height} canvas")
        shape = np.shape(patch)
        if shape != (box.r1 - box.r0, box.c1 - box.c0, 3):
            raise ValueError(f"a patch of shape {shape} does not fit box rows [{box.r0}, {box.r1}) × columns "
                             f"[{box.c0}, {box.c1}) (expected {(box.r1 - box.r0, box.c1 - box.c0, 3)})")
        if not (isinstance(patch, np.ndarray) and patch.dtype in _KERNEL_PATCH_DTYPES and patch.flags.c_contiguous):
            patch = np.ascontiguousarray(patch, dtype=np.float64)
        if patch.size:
            low, high = float(patch.min()), float(patch.max())
            if not (0.0 <= low and high <= 1.0):  # NaN fails both tests
                raise ValueError(f"a patch must hold finite values in [0, 1], got values from {low} to {high}")
        self._generation += 1
        if self._generation >= _GENERATION_LIMIT:  # the flood fill's visited stamps wrap: clear them
            self._stamp[:] = 0
            self._generation = 1
        st, inner = self._state, self._interior
        return (st.canvas, st.grey, self.reference, patch, box.r0, box.r1, box.c0, box.c1, self._uy, self._uy2_c1,
                self._vy_c2, st.ssim_map, inner.r0, inner.r1, inner.c0, inner.c1, _SSIM_COV_NORM, _SSIM_C1, _SSIM_C2,
                _GAUSS_WEIGHTS, self._bleed, st.low_masked, st.edges, self.reference_edges, self._stamp, self._queue,
                self._generation, CANNY_HIGH_THRESHOLD, CANNY_LOW_THRESHOLD_F32)

    def _kernel(self, box: Box, patch: np.ndarray, commit: bool) -> tuple:
        """box_change on this scorer's state; with ``commit`` the kernel writes the new edge statuses into
        the state's edge map, the caller writes the rest."""
        return box_change(*self._kernel_inputs(box, patch), commit)

    def _change(self, box: Box, patch: np.ndarray, commit: bool = False) -> _Change:
        """The stroke's effect on every term, from the compiled kernel (see ``_kernel``)."""
        st = self._state
        h, w = self.height, self.width
        ssim_patch, ssim_delta, abs_delta, grey_patch, low_patch, d_count, d_overlap = self._kernel(box, patch, commit)
        return _Change(box, np.asarray(patch, dtype=np.float64), grey_patch, box.grow(_SSIM_PAD, h, w), ssim_patch,
                       st.ssim_total + ssim_delta, st.abs_diff_sum + abs_delta, box.grow(_CANNY_REACH, h, w),
                       low_patch, st.edge_count + d_count, st.edge_overlap + d_overlap)

    def gain(self, box: Box, patch: np.ndarray) -> Similarity:
        """The Similarity the canvas would have with ``canvas[box] = patch`` (nothing committed): box_gain,
        box_change's changes without the patches a commit writes (engine/easel/score_kernels.py)."""
        st = self._state
        ssim_delta, abs_delta, d_count, d_overlap = box_gain(*self._kernel_inputs(box, patch))
        return self._similarity(st.ssim_total + ssim_delta, st.abs_diff_sum + abs_delta, st.edge_count + d_count,
                                st.edge_overlap + d_overlap)

    def apply(self, box: Box | None, patch: np.ndarray | None) -> Similarity:
        """Commit ``canvas[box] = patch`` and return the new Similarity."""
        if box is None or patch is None:
            return self.score
        change = self._change(box, patch, commit=True)  # the kernel writes the new edge statuses
        st = self._state
        st.canvas[box.slices] = change.patch
        st.grey[box.slices] = change.grey_patch
        st.ssim_map[change.ssim_box.slices] = change.ssim_patch
        # The running total is re-summed on commit, so rounding never accumulates across steps.
        st.ssim_total = float(np.sum(st.ssim_map[self._interior.slices]))
        st.abs_diff_sum = change.abs_diff_sum
        st.low_masked[change.canny_box.slices] = change.low_patch
        st.edge_count = change.edge_count
        st.edge_overlap = change.edge_overlap
        return self.score

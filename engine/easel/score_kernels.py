"""Compiled (numba) kernel of one stroke's change to S = 0.5·SSIM + 0.3·(1 − L1) + 0.2·EdgeIoU (EASEL Eq. 1).

:func:`box_change` computes, in one pass over a stroke's neighbourhood, everything
:class:`engine.easel.metrics.IncrementalSimilarity` needs to score or commit the stroke:

* L1: the change of Σ|C − R| on the box.
* SSIM: the SSIM map (7×7 uniform window, reflect mode, sample covariance, scikit-image's defaults;
  Wang et al. 2004, Eq. 13) on the box + 3 px from the canvas on the box + 6 px, and the change of its
  sum inside the 3-px border scikit-image crops; only windows that hold a changed pixel are recomputed
  (the rest of the patch is the old map). The window sums are running sums down the columns and direct
  7-column sums across, in another order than scipy's, so a value can differ from scipy's in the last
  bits (S agrees to ~1e-14); sums are kept per column and added up once, so no loop carries a
  dependency and each vectorises.
* Canny (``skimage.feature.canny``, σ = 1, constant mode, float thresholds): the grey image (BT.709
  luma), the Gaussian (scipy's ``correlate1d`` loop, operation for operation: centre tap first, then the
  symmetric pairs from the outermost in), the bleed-over division, the two Sobel passes (reflect mode)
  and scikit-image's bilinear non-maximum suppression, on the box + 6 px from the grey image on the
  box + 12 px. Every operation is the same IEEE operation in the same order as in scipy's C and
  scikit-image's Cython (neither is built with fused multiply-add on x86-64 and numba does not
  contract without fastmath), so the pre-hysteresis map is bit-identical, not just close —
  tests/engine/easel/test_score_kernels.py checks that against ``canny``'s own steps.
* Hysteresis: the 8-connected components of the new low mask that come within one pixel of a pixel
  of the Canny box whose class (not low / low / high) changed are found by a flood fill seeded from
  those pixels' neighbours, over the whole canvas (as far as the component goes),
  and take the status "holds a pixel ≥ the high threshold"; every other component is an old one with
  its old status (see ``IncrementalSimilarity``). The changes of |E| and |E ∩ E_ref| are counted on
  the visited pixels only.

With ``commit`` the new edge statuses are written into ``edges``; nothing else is written.
:func:`box_gain` is the same computation without the patches a commit needs (a candidate's score). The patch may be
float32 (composite's output, read as float64 value by value: no converted copy per candidate) or float64.
"""

from __future__ import annotations

import numpy as np

from engine.compiled import compiled_kernel

__all__ = ["CANNY_LOW_THRESHOLD_F32", "box_change", "box_gain"]

# scikit-image's _nonmaximum_suppression_bilinear takes the low threshold as a C float: 0.1 becomes
# float32(0.1) before the comparison with the float64 magnitude.
CANNY_LOW_THRESHOLD_F32 = float(np.float32(0.1))

_SSIM_RADIUS = 3  # 7×7 window
_INV_SSIM_AREA = 1.0 / 49.0  # window mean = window sum / 49
_GAUSS_RADIUS = 4  # scipy gaussian_filter truncate=4.0 at σ = 1
_CANNY_REACH = 6  # Gaussian 4 + Sobel 1 + non-maximum suppression 1


@compiled_kernel(inline="always")
def _reflect(i: int, n: int) -> int:
    """scipy's 'reflect' (half-sample symmetric) index for an overshoot smaller than n."""
    if i < 0:
        return -i - 1
    if i >= n:
        return 2 * n - 1 - i
    return i


@compiled_kernel(inline="always")
def _ssim_value(sx, sxx, sxy, my, my2_c1, vy_c2, cov_norm, c1_const, c2_const):
    """One SSIM map value from the canvas's window sums and the reference's prepared terms
    (Wang et al. 2004, Eq. 13, sample covariance; uy² + C1 and vy + C2 precomputed)."""
    ux = sx * _INV_SSIM_AREA
    uxx = sxx * _INV_SSIM_AREA
    uxy = sxy * _INV_SSIM_AREA
    ux2 = ux * ux
    a1 = 2 * ux * my + c1_const
    a2 = 2 * cov_norm * (uxy - ux * my) + c2_const
    b2 = cov_norm * (uxx - ux2) + vy_c2
    return (a1 * a2) / ((ux2 + my2_c1) * b2)


@compiled_kernel(inline="always")
def _window_row(canvas, reference, patch, canvas_flat, reference_flat, patch_flat, r0, r1, c0, c1, i, wc0, cols,
                plain, x, xy):
    """x and x·y (x from the patch on the box, else the canvas) on canvas row ``i`` at the window columns
    wc0, wc0 + 1, … (``cols``: their reflected indices; ``plain``: none is reflected), channels inner.
    The ``_flat`` arrays are the same images as (rows, columns·channels)."""
    n = x.shape[0]
    if plain:
        canvas_row = canvas_flat[i, 3 * wc0:3 * wc0 + n]
        for t in range(n):
            x[t] = canvas_row[t]
        if r0 <= i < r1:
            j0, j1 = max(c0, wc0), min(c1, wc0 + n // 3)
            if j1 > j0:
                patch_row = patch_flat[i - r0, 3 * (j0 - c0):3 * (j1 - c0)]
                u = 3 * (j0 - wc0)
                for t in range(3 * (j1 - j0)):
                    x[u + t] = np.float64(patch_row[t])
        reference_row = reference_flat[i, 3 * wc0:3 * wc0 + n]
        for t in range(n):
            xy[t] = x[t] * reference_row[t]
    else:
        inside_r = r0 <= i < r1
        for b in range(n // 3):
            j = cols[b]
            from_patch = inside_r and c0 <= j < c1
            for c in range(3):
                value = np.float64(patch[i - r0, j - c0, c]) if from_patch else canvas[i, j, c]
                x[3 * b + c] = value
                xy[3 * b + c] = value * reference[i, j, c]


# No zero-division branch (every denominator holds C1 or C2 > 0): the value loop vectorises.
@compiled_kernel(error_model="numpy")
def _ssim_change(canvas, reference, patch, r0, r1, c0, c1, uy, uy2_c1, vy_c2, ssim_map, ir0, ir1, ic0, ic1,
                 cov_norm, c1_const, c2_const, want_patch):
    """(ssim patch on box + 3, or an empty one without ``want_patch``; change of the counted SSIM sum;
    change of Σ|C − R|; the box of the changed pixels, empty if none changed)."""
    h, w = canvas.shape[0], canvas.shape[1]
    # Every image as (rows, columns·channels), reshaped once (a reshape per row costs a call).
    canvas_flat, reference_flat = canvas.reshape(h, 3 * w), reference.reshape(h, 3 * w)
    patch_flat = patch.reshape(r1 - r0, 3 * (c1 - c0))
    uy_flat, uy2_flat, vy_flat = uy.reshape(h, 3 * w), uy2_c1.reshape(h, 3 * w), vy_c2.reshape(h, 3 * w)
    ssim_flat = ssim_map.reshape(h, 3 * w)
    # L1 on the box, and each box row's span of changed pixels (a stroke's box is partly untouched: an
    # unchanged pixel of the patch equals the canvas exactly, composite's m = 0). Sums are kept per
    # column and added up at the end, so that the loops carry no dependency and vectorise.
    nb = 3 * (c1 - c0)
    column_abs = np.zeros(nb)
    first = np.empty(r1 - r0, np.int64)
    last = np.empty(r1 - r0, np.int64)
    fr0, fr1, fc0, fc1 = r1, r0, c1, c0  # the box of the changed pixels
    for i in range(r1 - r0):
        new_row = patch_flat[i]
        old_row = canvas_flat[r0 + i, 3 * c0:3 * c1]
        reference_row = reference_flat[r0 + i, 3 * c0:3 * c1]
        for t in range(nb):
            ref = reference_row[t]
            column_abs[t] += abs(np.float64(new_row[t]) - ref) - abs(old_row[t] - ref)
        lo = 0
        while lo < nb and np.float64(new_row[lo]) == old_row[lo]:
            lo += 1
        if lo == nb:
            first[i], last[i] = c1, c0
            continue
        hi = nb
        while np.float64(new_row[hi - 1]) == old_row[hi - 1]:
            hi -= 1
        first[i], last[i] = c0 + lo // 3, c0 + (hi - 1) // 3 + 1
        fr0, fr1 = min(fr0, r0 + i), r0 + i + 1
        fc0, fc1 = min(fc0, first[i]), max(fc1, last[i])
    abs_delta = 0.0
    for t in range(nb):
        abs_delta += column_abs[t]
    sr0, sr1 = max(0, r0 - _SSIM_RADIUS), min(h, r1 + _SSIM_RADIUS)
    sc0, sc1 = max(0, c0 - _SSIM_RADIUS), min(w, c1 + _SSIM_RADIUS)
    if want_patch:
        out = np.empty((sr1 - sr0, sc1 - sc0, 3))
        out_flat = out.reshape(sr1 - sr0, 3 * (sc1 - sc0))
        for i in range(sr0, sr1):
            old = ssim_flat[i, 3 * sc0:3 * sc1]
            target = out_flat[i - sr0]
            for t in range(3 * (sc1 - sc0)):
                target[t] = old[t]
    else:
        out = np.empty((0, 0, 3))
        out_flat = out.reshape(0, 0)
    if fr1 <= fr0:
        return out, 0.0, abs_delta, fr0, fr1, fc0, fc1
    # Only windows that hold a changed pixel change: the SSIM map on the changed pixels' box + 3, from the
    # window rows and columns of that box + 6 (reflected at the canvas edges).
    or0, or1 = max(0, fr0 - _SSIM_RADIUS), min(h, fr1 + _SSIM_RADIUS)
    oc0, oc1 = max(0, fc0 - _SSIM_RADIUS), min(w, fc1 + _SSIM_RADIUS)
    nr, nc = or1 - or0, oc1 - oc0
    span = 2 * _SSIM_RADIUS + 1
    wc0 = oc0 - _SSIM_RADIUS
    bl = 3 * (nc + span - 1)  # window columns × channels
    cols = np.empty(nc + span - 1, np.int64)
    for b in range(nc + span - 1):
        cols[b] = _reflect(wc0 + b, w)
    plain = wc0 >= 0 and oc1 + _SSIM_RADIUS <= w
    # The last 7 window rows of x and x·y (a ring: window row a in slot a mod 7), and their sums down the
    # columns, kept as running sums (add the entering row, subtract the leaving one, as scipy's
    # uniform_filter1d does); x² is formed where it is summed.
    ring_x = np.empty((span, bl))
    ring_xy = np.empty((span, bl))
    vx = np.zeros(bl)
    vxx = np.zeros(bl)
    vxy = np.zeros(bl)
    for d in range(span):
        _window_row(canvas, reference, patch, canvas_flat, reference_flat, patch_flat, r0, r1, c0, c1,
                    _reflect(or0 - _SSIM_RADIUS + d, h), wc0, cols, plain, ring_x[d], ring_xy[d])
        x_d, xy_d = ring_x[d], ring_xy[d]
        for t in range(bl):
            x = x_d[t]
            vx[t] += x
            vxx[t] += x * x
            vxy[t] += xy_d[t]
    entering_x = np.empty(bl)
    entering_xy = np.empty(bl)
    values = np.empty(3 * nc)
    column_delta = np.zeros(3 * nc)
    for a in range(nr):
        i = or0 + a
        if a > 0:
            _window_row(canvas, reference, patch, canvas_flat, reference_flat, patch_flat, r0, r1, c0, c1,
                        _reflect(i + _SSIM_RADIUS, h), wc0, cols, plain, entering_x, entering_xy)
            slot = (a - 1) % span
            leaving_x, leaving_xy = ring_x[slot], ring_xy[slot]
            for t in range(bl):
                x_in, x_out = entering_x[t], leaving_x[t]
                vx[t] = vx[t] + (x_in - x_out)
                vxx[t] = vxx[t] + (x_in * x_in - x_out * x_out)
                vxy[t] = vxy[t] + (entering_xy[t] - leaving_xy[t])
                leaving_x[t] = x_in
                leaving_xy[t] = entering_xy[t]
        # A window value changes only if its 7×7 window holds a changed pixel (reflected window rows and
        # columns near the canvas edge stay within 3 px too): elsewhere the old map value stands.
        lo, hi = oc1, oc0
        for rr in range(max(r0, i - _SSIM_RADIUS), min(r1, i + _SSIM_RADIUS + 1)):
            if last[rr - r0] > first[rr - r0]:
                lo = min(lo, first[rr - r0] - _SSIM_RADIUS)
                hi = max(hi, last[rr - r0] + _SSIM_RADIUS)
        lo, hi = max(lo, oc0) - oc0, min(hi, oc1) - oc0  # output columns, relative to oc0
        if hi <= lo:
            continue
        n = 3 * (hi - lo)
        g = 3 * (oc0 + lo)
        my = uy_flat[i, g:g + n]
        my2 = uy2_flat[i, g:g + n]
        vy = vy_flat[i, g:g + n]
        # The 7 window columns' sums (columns are 3 entries apart), then the SSIM value.
        row_x, row_xx, row_xy = vx[3 * lo:3 * hi + 18], vxx[3 * lo:3 * hi + 18], vxy[3 * lo:3 * hi + 18]
        for t in range(n):
            sx = (((((row_x[t] + row_x[t + 3]) + row_x[t + 6]) + row_x[t + 9]) + row_x[t + 12])
                  + row_x[t + 15]) + row_x[t + 18]
            sxx = (((((row_xx[t] + row_xx[t + 3]) + row_xx[t + 6]) + row_xx[t + 9]) + row_xx[t + 12])
                   + row_xx[t + 15]) + row_xx[t + 18]
            sxy = (((((row_xy[t] + row_xy[t + 3]) + row_xy[t + 6]) + row_xy[t + 9]) + row_xy[t + 12])
                   + row_xy[t + 15]) + row_xy[t + 18]
            values[t] = _ssim_value(sx, sxx, sxy, my[t], my2[t], vy[t], cov_norm, c1_const, c2_const)
        old = ssim_flat[i, g:g + n]
        if ir0 <= i < ir1:  # the columns inside the 3-px border scikit-image crops
            t0 = 3 * (max(oc0 + lo, ic0) - (oc0 + lo))
            t1 = 3 * (min(oc0 + hi, ic1) - (oc0 + lo))
            counted = column_delta[3 * lo:3 * hi]
            for t in range(t0, t1):
                counted[t] += values[t] - old[t]
        if want_patch:
            target = out_flat[i - sr0]
            u = 3 * (oc0 + lo - sc0)
            for t in range(n):
                target[u + t] = values[t]
    delta = 0.0
    for t in range(3 * nc):
        delta += column_delta[t]
    return out, delta, abs_delta, fr0, fr1, fc0, fc1


# No zero-division branch (bleed > 0; the suppression divides by a non-zero |gradient| component): vectorised.
@compiled_kernel(error_model="numpy")
def _low_masked(grey, patch, r0, r1, c0, c1, weights, bleed, low_threshold):
    """(grey patch on the box, low_masked on box + 6): canny's steps before hysteresis (module docstring)."""
    h, w = grey.shape
    grey_patch = np.empty((r1 - r0, c1 - c0))
    for i in range(r1 - r0):
        for j in range(c1 - c0):
            # rgb2gray's BT.709 weights, in grey()'s order: (0.2125 R + 0.7154 G) + 0.0721 B.
            red, green, blue = np.float64(patch[i, j, 0]), np.float64(patch[i, j, 1]), np.float64(patch[i, j, 2])
            grey_patch[i, j] = 0.2125 * red + 0.7154 * green + 0.0721 * blue
    # The Gaussian's output is needed on box + 8 (R8 × C8); its input, zero outside the canvas
    # (constant mode), on R8 × C8 widened by the radius: a padded buffer, so the passes have no branches.
    ar0, ar1 = max(0, r0 - 8), min(h, r1 + 8)
    ac0, ac1 = max(0, c0 - 8), min(w, c1 + 8)
    pad = _GAUSS_RADIUS
    nr8, nc8 = ar1 - ar0, ac1 - ac0
    g = np.zeros((nr8 + 2 * pad, nc8 + 2 * pad))
    # Each row: the canvas's grey image on its columns inside the canvas, then the box's new grey values
    # over it (contiguous copies, which vectorise).
    j0, j1 = max(0, ac0 - pad), min(w, ac1 + pad)
    for a in range(nr8 + 2 * pad):
        i = ar0 - pad + a
        if i < 0 or i >= h:
            continue
        g_row = g[a, j0 - (ac0 - pad):j1 - (ac0 - pad)]
        grey_row = grey[i, j0:j1]
        for t in range(j1 - j0):
            g_row[t] = grey_row[t]
        if r0 <= i < r1:
            g_box = g[a, c0 - (ac0 - pad):c1 - (ac0 - pad)]
            patch_row = grey_patch[i - r0]
            for t in range(c1 - c0):
                g_box[t] = patch_row[t]
    w_centre = weights[_GAUSS_RADIUS]
    # scipy's symmetric correlate1d: centre tap, then the pairs from the outermost in.
    along0 = np.empty((nr8, nc8 + 2 * pad))  # along rows (axis 0)
    for a in range(nr8):
        for t in range(nc8 + 2 * pad):
            along0[a, t] = g[a + pad, t] * w_centre
        for k in range(_GAUSS_RADIUS, 0, -1):
            wk = weights[_GAUSS_RADIUS - k]
            for t in range(nc8 + 2 * pad):
                along0[a, t] += (g[a + pad - k, t] + g[a + pad + k, t]) * wk
    smooth = np.empty((nr8, nc8))  # along columns (axis 1), then the bleed-over division
    for a in range(nr8):
        for t in range(nc8):
            smooth[a, t] = along0[a, t + pad] * w_centre
        for k in range(_GAUSS_RADIUS, 0, -1):
            wk = weights[_GAUSS_RADIUS - k]
            for t in range(nc8):
                smooth[a, t] += (along0[a, t + pad - k] + along0[a, t + pad + k]) * wk
        for t in range(nc8):
            smooth[a, t] /= bleed[ar0 + a, ac0 + t]
    # Sobel (scipy.ndimage.sobel: the [-1, 0, 1] pass along its axis, then [1, 2, 1] across; reflect
    # mode at the canvas edges) on box + 7.
    mr0, mr1 = max(0, r0 - 7), min(h, r1 + 7)
    mc0, mc1 = max(0, c0 - 7), min(w, c1 + 7)
    nr7, nc7 = mr1 - mr0, mc1 - mc0
    # The smoothed image on rows and columns box + 7 ± 1, each index reflected at the canvas edges as
    # the Sobel passes read it: every pass below is then a plain shifted loop (it vectorises), with the
    # same operations in the same order.
    padded = np.empty((nr7 + 2, nc7 + 2))
    y0, y1 = max(0, 1 - mc0), min(nc7 + 2, w + 1 - mc0)  # the columns that need no reflection
    for x in range(nr7 + 2):
        si_row = _reflect(mr0 - 1 + x, h) - ar0
        for y in range(y0):
            padded[x, y] = smooth[si_row, _reflect(mc0 - 1 + y, w) - ac0]
        padded_row = padded[x, y0:y1]
        smooth_row = smooth[si_row, mc0 - 1 + y0 - ac0:mc0 - 1 + y1 - ac0]
        for t in range(y1 - y0):
            padded_row[t] = smooth_row[t]
        for y in range(y1, nc7 + 2):
            padded[x, y] = smooth[si_row, _reflect(mc0 - 1 + y, w) - ac0]
    diff0 = np.empty((nr7, nc7 + 2))  # d/d row on rows box + 7, columns box + 7 ± 1
    for a in range(nr7):
        for y in range(nc7 + 2):
            diff0[a, y] = padded[a + 1, y] * 0.0
            diff0[a, y] += (padded[a, y] - padded[a + 2, y]) * -1.0
    diff1 = np.empty((nr7 + 2, nc7))  # d/d column on rows box + 7 ± 1, columns box + 7
    for x in range(nr7 + 2):
        for t in range(nc7):
            diff1[x, t] = padded[x, t + 1] * 0.0
            diff1[x, t] += (padded[x, t] - padded[x, t + 2]) * -1.0
    isobel = np.empty((nr7, nc7))
    jsobel = np.empty((nr7, nc7))
    magnitude = np.empty((nr7, nc7))
    for a in range(nr7):
        for t in range(nc7):
            si = diff0[a, t + 1] * 2.0
            si += (diff0[a, t] + diff0[a, t + 2]) * 1.0
            sj = diff1[a + 1, t] * 2.0
            sj += (diff1[a, t] + diff1[a + 2, t]) * 1.0
            isobel[a, t] = si
            jsobel[a, t] = sj
            m = si * si
            m += sj * sj
            magnitude[a, t] = np.sqrt(m)
    # scikit-image's _nonmaximum_suppression_bilinear on box + 6 (eroded mask: not the canvas's outer ring).
    cr0, cr1 = max(0, r0 - _CANNY_REACH), min(h, r1 + _CANNY_REACH)
    cc0, cc1 = max(0, c0 - _CANNY_REACH), min(w, c1 + _CANNY_REACH)
    low = np.zeros((cr1 - cr0, cc1 - cc0))
    for gx in range(cr0, cr1):
        if gx == 0 or gx == h - 1:
            continue
        x = gx - mr0
        for gy in range(cc0, cc1):
            if gy == 0 or gy == w - 1:
                continue
            y = gy - mc0
            m = magnitude[x, y]
            if not m >= low_threshold:
                continue
            is_down = isobel[x, y] <= 0
            is_up = not is_down
            is_left = jsobel[x, y] <= 0
            is_right = not is_left
            cond1 = (is_up and is_right) or (is_down and is_left)
            abs_i = abs(isobel[x, y])
            abs_j = abs(jsobel[x, y])
            if cond1:
                if abs_i > abs_j:
                    wt = abs_j / abs_i
                    n11, n12 = magnitude[x + 1, y], magnitude[x + 1, y + 1]
                    n21, n22 = magnitude[x - 1, y], magnitude[x - 1, y - 1]
                else:
                    wt = abs_i / abs_j
                    n11, n12 = magnitude[x, y + 1], magnitude[x + 1, y + 1]
                    n21, n22 = magnitude[x, y - 1], magnitude[x - 1, y - 1]
            else:
                if abs_i < abs_j:
                    wt = abs_i / abs_j
                    n11, n12 = magnitude[x, y + 1], magnitude[x - 1, y + 1]
                    n21, n22 = magnitude[x, y - 1], magnitude[x + 1, y - 1]
                else:
                    wt = abs_j / abs_i
                    n11, n12 = magnitude[x - 1, y], magnitude[x - 1, y + 1]
                    n21, n22 = magnitude[x + 1, y], magnitude[x + 1, y - 1]
            if (n12 * wt + n11 * (1.0 - wt)) <= m:
                if (n22 * wt + n21 * (1.0 - wt)) <= m:
                    low[gx - cr0, gy - cc0] = m
    return grey_patch, low


@compiled_kernel()
def _hysteresis_change(low_masked, low, cr0, cr1, cc0, cc1, edges, ref_edges, stamp, queue, generation,
                       high_threshold, commit):
    """(change of |E|, change of |E ∩ E_ref|) with ``low`` replacing ``low_masked`` on the Canny box."""
    h, w = low_masked.shape
    d_count = 0
    d_overlap = 0
    # Hysteresis sees a pixel only through its class: not low, low, or high. Pixels whose class did not
    # change, with no changed pixel among their neighbours, keep their component and its status; so the
    # work after this one pass over the box is proportional to the changed pixels and their components,
    # not to the box.
    nr, nc = cr1 - cr0, cc1 - cc0
    changed = np.empty(nr * nc, np.int64)  # flat canvas indices i·w + j of the pixels whose class changed
    n_changed = 0
    moved = np.empty(nc, np.bool_)
    for a in range(nr):
        # The row's class changes as a branch-free loop (it vectorises), then the few changed pixels.
        old_row, new_row = low_masked[cr0 + a, cc0:cc1], low[a]
        any_moved = False
        for b in range(nc):
            old, new = old_row[b], new_row[b]
            m = ((old > 0) != (new > 0)) | ((old >= high_threshold) != (new >= high_threshold))
            moved[b] = m
            any_moved |= m
        if any_moved:
            for b in range(nc):
                if moved[b]:
                    changed[n_changed] = (cr0 + a) * w + cc0 + b
                    n_changed += 1
    if n_changed == 0:
        return 0, 0
    # Every component of the new low mask with a pixel within one pixel of a changed pixel is flood-filled
    # once (the stamps), whichever changed pixel reaches it first: the same components, the same statuses.
    for k in range(n_changed):
        ci, cj = changed[k] // w, changed[k] % w
        for si in range(max(0, ci - 1), min(h, ci + 2)):
            for sj in range(max(0, cj - 1), min(w, cj + 2)):
                if stamp[si, sj] == generation:
                    continue
                inside = cr0 <= si < cr1 and cc0 <= sj < cc1
                value = low[si - cr0, sj - cc0] if inside else low_masked[si, sj]
                if not value > 0:
                    continue
                # Flood fill this component of the new low mask (8-connected, skimage's strel).
                stamp[si, sj] = generation
                queue[0, 0] = si
                queue[0, 1] = sj
                head, tail = 0, 1
                good = False
                while head < tail:
                    pi, pj = queue[head, 0], queue[head, 1]
                    head += 1
                    inside = cr0 <= pi < cr1 and cc0 <= pj < cc1
                    value = low[pi - cr0, pj - cc0] if inside else low_masked[pi, pj]
                    if value >= high_threshold:
                        good = True
                    for ni in range(max(0, pi - 1), min(h, pi + 2)):
                        for nj in range(max(0, pj - 1), min(w, pj + 2)):
                            if stamp[ni, nj] == generation:
                                continue
                            inside = cr0 <= ni < cr1 and cc0 <= nj < cc1
                            nv = low[ni - cr0, nj - cc0] if inside else low_masked[ni, nj]
                            if nv > 0:
                                stamp[ni, nj] = generation
                                queue[tail, 0] = ni
                                queue[tail, 1] = nj
                                tail += 1
                for t in range(tail):
                    pi, pj = queue[t, 0], queue[t, 1]
                    if edges[pi, pj] != good:
                        step = 1 if good else -1
                        d_count += step
                        if ref_edges[pi, pj]:
                            d_overlap += step
                        if commit:
                            edges[pi, pj] = good
    # Pixels that left the low mask are no edge any more. An edge pixel was low, so one that is not low
    # now changed class: the changed pixels hold them all (and the fills above wrote only low pixels).
    for k in range(n_changed):
        i, j = changed[k] // w, changed[k] % w
        if not low[i - cr0, j - cc0] > 0 and edges[i, j]:
            d_count -= 1
            if ref_edges[i, j]:
                d_overlap -= 1
            if commit:
                edges[i, j] = False
    return d_count, d_overlap


@compiled_kernel()
def box_change(canvas, grey, reference, patch, r0, r1, c0, c1, uy, uy2_c1, vy_c2, ssim_map, ir0, ir1, ic0, ic1,
               cov_norm, c1_const, c2_const, weights, bleed, low_masked, edges, ref_edges, stamp, queue,
               generation, high_threshold, low_threshold, commit):
    """One stroke's change on the box [r0, r1) × [c0, c1) (module docstring).

    Returns (ssim patch on box + 3, Δ counted SSIM sum, Δ Σ|C − R|, grey patch on the box,
    low_masked on box + 6, Δ|E|, Δ|E ∩ E_ref|).
    """
    ssim_patch, ssim_delta, abs_delta, _, _, _, _ = _ssim_change(canvas, reference, patch, r0, r1, c0, c1, uy,
                                                                 uy2_c1, vy_c2, ssim_map, ir0, ir1, ic0, ic1,
                                                                 cov_norm, c1_const, c2_const, True)
    grey_patch, low = _low_masked(grey, patch, r0, r1, c0, c1, weights, bleed, low_threshold)
    h, w = grey.shape
    cr0, cr1 = max(0, r0 - _CANNY_REACH), min(h, r1 + _CANNY_REACH)
    cc0, cc1 = max(0, c0 - _CANNY_REACH), min(w, c1 + _CANNY_REACH)
    d_count, d_overlap = _hysteresis_change(low_masked, low, cr0, cr1, cc0, cc1, edges, ref_edges, stamp, queue,
                                            generation, high_threshold, commit)
    return ssim_patch, ssim_delta, abs_delta, grey_patch, low, d_count, d_overlap


@compiled_kernel()
def box_gain(canvas, grey, reference, patch, r0, r1, c0, c1, uy, uy2_c1, vy_c2, ssim_map, ir0, ir1, ic0, ic1,
             cov_norm, c1_const, c2_const, weights, bleed, low_masked, edges, ref_edges, stamp, queue,
             generation, high_threshold, low_threshold):
    """box_change's (Δ counted SSIM sum, Δ Σ|C − R|, Δ|E|, Δ|E ∩ E_ref|) without committing anything and
    without building the patches a commit writes (a candidate's score needs only the changes).

    The Canny steps run on the box of the pixels that changed, not the whole stroke box: the grey image
    is the old one elsewhere, so low_masked can change only within 6 px of that box.
    """
    _, ssim_delta, abs_delta, fr0, fr1, fc0, fc1 = _ssim_change(canvas, reference, patch, r0, r1, c0, c1, uy,
                                                                uy2_c1, vy_c2, ssim_map, ir0, ir1, ic0, ic1,
                                                                cov_norm, c1_const, c2_const, False)
    if fr1 <= fr0:
        return ssim_delta, abs_delta, 0, 0
    _, low = _low_masked(grey, patch[fr0 - r0:fr1 - r0, fc0 - c0:fc1 - c0], fr0, fr1, fc0, fc1, weights, bleed,
                         low_threshold)
    h, w = grey.shape
    cr0, cr1 = max(0, fr0 - _CANNY_REACH), min(h, fr1 + _CANNY_REACH)
    cc0, cc1 = max(0, fc0 - _CANNY_REACH), min(w, fc1 + _CANNY_REACH)
    d_count, d_overlap = _hysteresis_change(low_masked, low, cr0, cr1, cc0, cc1, edges, ref_edges, stamp, queue,
                                            generation, high_threshold, False)
    return ssim_delta, abs_delta, d_count, d_overlap

#!/usr/bin/env python3
"""Digitise the HPCC authors' published FCT-slowdown figures into numbers.

Source figures: the HPCC project page (GitHub repository
``hpcc-group/hpcc-group.github.io``, page ``results.md``, images
``figs/fct_<workload><load>_<pct>pct.png``, e.g. ``fct_fb30_99pct.png``).
Each 2500x1500 PNG plots the 50th/95th/99th-percentile FCT slowdown (log y
axis) of five schemes against flow size on a categorical x axis: 100 points,
one per 1 % bucket of flows sorted by size, as produced by
``analysis/fct_analysis.py`` of ``alibaba-edu/High-Precision-Congestion-Control``
(the x tick at position 10k is labelled with the largest flow size of the
first 10k % of flows).  The legend reads "label, then line sample":

    HPCC-PINT  purple solid        HPCC-INT  green dashed
    DCQCN+w    light-blue dotted   TIMELY+w  orange dash-dot
    DCTCP      yellow dash-dot-dot

The curves are drawn in that order, so later curves cover earlier ones.

Method (pixels only, no knowledge of the data):

1. Frame: the y axis is the column band with the longest run of axis-grey
   pixels, the x axis the row band with the longest run.  The legend lies
   above the top of the y axis line and is excluded.
2. y calibration: tick marks are the grey runs just right of the y axis (the
   x axis itself is the bottom tick).  A tick is "labelled" when grey label
   ink sits left of the axis at its row; the values given with ``--yticks``
   are assigned to the labelled ticks from bottom to top and ln(value) is
   fitted linearly against the row (least squares; the residual is reported).
3. x calibration: the grey tick marks standing on the x axis sit at category
   positions 0, 10, ..., 100 (the y axis is the one at 0).  Data point
   ``bucket`` b (0..99) is drawn at position b + 1: the first data column is
   one category right of the y axis and the last is on the last tick, which
   the script checks against the extent of the coloured pixels.
4. Curves: every pixel is classified to the best-fitting curve colour (the
   five curve colours blended with white, see ``classify``); pixels within
   ``--tol`` of a curve colour's blend line with coverage >= ``--amin``
   count.  Per image column the curve row is the median of its matched rows.
   Per bucket the value is the median over the columns within +-``--core``
   px of the point ("direct"); if that window is empty (dash gap, or hidden
   under a later curve) the straight segments on either side (each up to the
   neighbouring point) are fitted and extrapolated to the point ("side");
   failing that the value is interpolated in log space between the nearest
   buckets within +-2 that
   have a value ("interp"); otherwise it is left empty.

Output: CSV on stdout (or ``--out``): bucket, x pixel, then for each curve
its slowdown, the number of columns of the bucket span in which the curve was
seen, and how the value was obtained (direct/side/interp).  Diagnostics go to
stderr.  ``--overlay PNG`` writes the figure with the digitised points marked
for checking by eye.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys

import numpy as np
from PIL import Image, ImageDraw

CURVES = [
    ("HPCC-PINT", (148, 0, 211)),
    ("HPCC-INT", (0, 158, 115)),
    ("DCQCN+w", (86, 180, 233)),
    ("TIMELY+w", (230, 159, 0)),
    ("DCTCP", (240, 228, 66)),
]


def log(msg: str) -> None:
    print(msg, file=sys.stderr)


def runs(idx: np.ndarray) -> list[tuple[int, int]]:
    """Group sorted integer indices into (first, last) runs of consecutive values."""
    if idx.size == 0:
        return []
    cuts = np.where(np.diff(idx) > 1)[0] + 1
    return [(int(g[0]), int(g[-1])) for g in np.split(idx, cuts)]


def grey_mask(rgb: np.ndarray) -> np.ndarray:
    """Axis/tick/label grey: neutral pixels close to (128,128,128)."""
    near = np.abs(rgb - 128).max(axis=2) <= 30
    neutral = np.ptp(rgb, axis=2) <= 8
    return near & neutral


def find_frame(grey: np.ndarray) -> dict:
    col_count = grey.sum(axis=0)
    row_count = grey.sum(axis=1)
    ycols = np.where(col_count >= 0.9 * col_count.max())[0]
    xrows = np.where(row_count >= 0.9 * row_count.max())[0]
    yax = max(runs(ycols), key=lambda r: r[1] - r[0])
    xax = max(runs(xrows), key=lambda r: r[1] - r[0])
    # top of the y axis line: first row of the grey run in its centre column
    ccol = (yax[0] + yax[1]) // 2
    vruns = runs(np.where(grey[:, ccol])[0])
    top = min(r[0] for r in vruns if r[1] >= xax[0])
    return {"yax": yax, "xax": xax, "top": top}


def y_ticks(grey: np.ndarray, frame: dict) -> tuple[list[float], list[bool]]:
    """Centre rows of the y tick marks (bottom first) and whether each is labelled."""
    yax = frame["yax"]
    probe = yax[1] + 6
    tick_runs = [r for r in runs(np.where(grey[frame["top"] :, probe])[0] + frame["top"])]
    centres = sorted(((a + b) / 2 for a, b in tick_runs), reverse=True)
    band = grey[:, max(0, yax[0] - 160) : yax[0] - 8]
    labelled = []
    for c in centres:
        r = int(round(c))
        labelled.append(bool(band[r - 3 : r + 4].any()))
    return centres, labelled


def x_ticks(grey: np.ndarray, frame: dict) -> list[float]:
    """Centre columns of the x tick marks standing on the x axis.

    A column is a tick column when it is grey in at least a third of the band
    5..35 px above the axis; curves lying on the axis cover part of a tick but
    are coloured, so they cannot create one.
    """
    band = grey[frame["xax"][0] - 35 : frame["xax"][0] - 5]
    cols = np.where(band.sum(axis=0) >= band.shape[0] / 3)[0]
    first = frame["yax"][0]  # the y axis is the tick at 0; skip label ink left of it
    return [(a + b) / 2 for a, b in runs(cols) if a >= first]


def classify(rgb: np.ndarray, tol: float, amin: float) -> np.ndarray:
    """Index of the curve each pixel belongs to, or -1.

    Anti-aliased line edges are blends of the line colour with the white
    background, so a pixel p is modelled as a*C + (1-a)*white for each curve
    colour C: a is the least-squares coverage and the residual the RGB distance
    from that blend line.  A pixel belongs to the curve with the smallest
    residual if the residual is <= tol and the coverage a >= amin.  (A plain
    nearest-colour test would take the pale edges of the orange line for
    yellow.)
    """
    white = np.array([255.0, 255.0, 255.0])
    q = rgb - white
    best_res = np.full(rgb.shape[:2], np.inf)
    best_k = np.full(rgb.shape[:2], -1)
    best_a = np.zeros(rgb.shape[:2])
    for k, (_, col) in enumerate(CURVES):
        d = np.array(col, dtype=float) - white
        a = np.clip((q @ d) / (d @ d), 0.0, 1.0)
        res = np.sqrt(((q - a[..., None] * d) ** 2).sum(axis=2))
        better = res < best_res
        best_res = np.where(better, res, best_res)
        best_k = np.where(better, k, best_k)
        best_a = np.where(better, a, best_a)
    ok = (best_res <= tol) & (best_a >= amin)
    return np.where(ok, best_k, -1)


def column_rows(cls: np.ndarray, k: int, top: int, bottom: int, x0: int, x1: int) -> dict:
    """Median matched row of curve k in each column x0..x1 (only columns where seen)."""
    out = {}
    sub = cls[top:bottom, :]
    for x in range(x0, x1 + 1):
        rows = np.where(sub[:, x] == k)[0]
        if rows.size:
            out[x] = float(np.median(rows)) + top
    return out


def bucket_value(colrows: dict, xc: float, step: float, core: float):
    """Row of the curve at the point drawn at column xc.

    Returns ('direct'|'side', row, ncols) or (None, None, ncols); ncols counts
    the columns within half a bucket of xc in which the curve was seen.
    Between two points the curve is one straight segment, so a side fit may
    use the columns up to the neighbouring point (minus the core window there).
    Sides are fitted separately (a straight line each) and extrapolated to xc;
    the estimates are averaged weighted by their column counts.
    """
    ncols = sum(1 for x in colrows if abs(x - xc) <= step / 2)
    near = [colrows[x] for x in colrows if abs(x - xc) <= core]
    if near:
        return "direct", float(np.median(near)), ncols
    fits, weights = [], []
    for side in (-1, 1):
        xs = [x for x in colrows if 0 < (x - xc) * side <= step - core]
        # A short run (e.g. the visible edge of a dot peeking out from under a
        # later curve) gives an unreliable slope: demand a run spanning a third
        # of a bucket that starts within half a bucket of the point.
        if (
            len(xs) >= 3
            and max(xs) - min(xs) >= step / 3
            and min(abs(x - xc) for x in xs) <= step / 2
        ):
            ys = [colrows[x] for x in xs]
            slope, icpt = np.polyfit(xs, ys, 1)
            fits.append(slope * xc + icpt)
            weights.append(len(xs))
    if fits:
        return "side", float(np.average(fits, weights=weights)), ncols
    return None, None, ncols


def interpolate(vals: list, srcs: list, reach: int = 2) -> None:
    """Fill empty buckets in log space from the nearest valued buckets within +-reach."""
    n = len(vals)
    orig = list(vals)
    for b in range(n):
        if orig[b] is not None:
            continue
        lo = next(
            (j for j in range(b - 1, max(-1, b - reach - 1), -1) if orig[j] is not None), None
        )
        hi = next((j for j in range(b + 1, min(n, b + reach + 1)) if orig[j] is not None), None)
        if lo is None or hi is None:
            continue
        f = (b - lo) / (hi - lo)
        vals[b] = math.exp((1 - f) * math.log(orig[lo]) + f * math.log(orig[hi]))
        srcs[b] = "interp"


def check_legend(cls: np.ndarray, top: int) -> None:
    """Report the left-to-right order of the curve colours in the legend strip."""
    order = []
    for k, (name, _) in enumerate(CURVES):
        xs = np.where((cls[:top] == k).any(axis=0))[0]
        if xs.size:
            order.append((int(xs.min()), name))
    order.sort()
    log("legend colour order (left to right): " + ", ".join(n for _, n in order))
    if [n for _, n in order] != [n for n, _ in CURVES]:
        log("WARNING: legend colour order differs from the expected mapping")


def digitise(path: str, yvals: list[float], tol: float, amin: float, core: float):
    rgb = np.asarray(Image.open(path).convert("RGB"), dtype=float)
    grey = grey_mask(rgb)
    frame = find_frame(grey)
    log(f"frame: y axis cols {frame['yax']}, x axis rows {frame['xax']}, top row {frame['top']}")

    centres, labelled = y_ticks(grey, frame)
    lab_rows = [c for c, lab in zip(centres, labelled, strict=True) if lab]
    log(f"y ticks (rows, bottom first): {centres}; labelled: {lab_rows}")
    if len(lab_rows) != len(yvals):
        raise SystemExit(f"found {len(lab_rows)} labelled y ticks but {len(yvals)} values given")
    slope, icpt = np.polyfit(lab_rows, np.log(yvals), 1)
    resid = [
        100 * (math.exp(slope * r + icpt) / v - 1) for r, v in zip(lab_rows, yvals, strict=True)
    ]
    log(
        f"y fit: ln(v) = {icpt:.5f} + {slope:.7f}*row; "
        f"label residuals % {np.round(resid, 3).tolist()}"
    )
    unl = [
        round(math.exp(slope * c + icpt), 3)
        for c, lab in zip(centres, labelled, strict=True)
        if not lab
    ]
    log(f"unlabelled ticks read as: {unl}")

    xt = x_ticks(grey, frame)
    if len(xt) != 11:
        raise SystemExit(f"expected 11 x ticks (0,10,..,100), found {len(xt)}: {xt}")
    xs_fit = np.polyfit(np.arange(0, 101, 10), xt, 1)
    xres = np.array(xt) - np.polyval(xs_fit, np.arange(0, 101, 10))
    log(f"x ticks: {xt}; px per category {xs_fit[0]:.3f}; max residual {np.abs(xres).max():.2f} px")
    step = xs_fit[0]

    cls = classify(rgb, tol, amin)
    check_legend(cls, frame["top"])
    top, bottom = frame["top"], frame["xax"][1] + 1
    x0, x1 = frame["yax"][1] + 1, int(xt[-1] + step)
    curve_seen = cls[top:bottom, x0 : x1 + 1]
    for k, (name, _) in enumerate(CURVES):
        cols = np.where((curve_seen == k).any(axis=0))[0] + x0
        if cols.size:
            log(
                f"{name}: coloured columns {cols.min()}..{cols.max()} "
                f"(point 0 at {np.polyval(xs_fit, 1):.1f}, "
                f"point 99 at {np.polyval(xs_fit, 100):.1f})"
            )

    xcs = [float(np.polyval(xs_fit, b + 1)) for b in range(100)]
    result = {}
    for k, (name, _) in enumerate(CURVES):
        colrows = column_rows(cls, k, top, bottom, x0, x1)
        vals, srcs, ncols = [], [], []
        for xc in xcs:
            src, row, n = bucket_value(colrows, xc, step, core)
            vals.append(None if row is None else math.exp(slope * row + icpt))
            srcs.append(src or "")
            ncols.append(n)
        interpolate(vals, srcs)
        result[name] = (vals, srcs, ncols)
    return xcs, result, (slope, icpt)


def write_overlay(path: str, out: str, xcs, result, fit) -> None:
    im = Image.open(path).convert("RGB")
    dr = ImageDraw.Draw(im)
    slope, icpt = fit
    for name, _col in CURVES:
        vals, srcs, _ = result[name]
        for xc, v, s in zip(xcs, vals, srcs, strict=True):
            if v is None:
                continue
            row = (math.log(v) - icpt) / slope
            r = 4 if s == "direct" else 6
            dr.ellipse(
                (xc - r, row - r, xc + r, row + r),
                outline=(0, 0, 0) if s == "direct" else (255, 0, 0),
            )
    im.save(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("png")
    ap.add_argument(
        "--yticks", required=True, help="labelled y tick values, bottom to top, e.g. 1,2,3,4,5,6,8"
    )
    ap.add_argument(
        "--tol",
        type=float,
        default=20.0,
        help="max RGB distance from the colour-white blend line (default 20)",
    )
    ap.add_argument(
        "--amin", type=float, default=0.6, help="min line coverage of a pixel (default 0.6)"
    )
    ap.add_argument(
        "--core", type=float, default=3.0, help="half-width in px of the direct window (default 3)"
    )
    ap.add_argument("--out", help="CSV path (default stdout)")
    ap.add_argument("--overlay", help="write a PNG with the digitised points marked")
    args = ap.parse_args()
    yvals = [float(v) for v in args.yticks.split(",")]
    xcs, result, fit = digitise(args.png, yvals, args.tol, args.amin, args.core)

    fh = open(args.out, "w", newline="") if args.out else sys.stdout
    w = csv.writer(fh)
    head = ["bucket", "x_px"]
    for name, _ in CURVES:
        head += [name, f"{name}_ncols", f"{name}_src"]
    w.writerow(head)
    for b, xc in enumerate(xcs):
        row = [b, f"{xc:.1f}"]
        for name, _ in CURVES:
            vals, srcs, ncols = result[name]
            row += ["" if vals[b] is None else f"{vals[b]:.4f}", ncols[b], srcs[b]]
        w.writerow(row)
    if args.out:
        fh.close()
    for name, _ in CURVES:
        _, srcs, _ = result[name]
        counts = {s or "empty": srcs.count(s) for s in set(srcs)}
        log(f"{name}: {counts}")
    if args.overlay:
        write_overlay(args.png, args.overlay, xcs, result, fit)


if __name__ == "__main__":
    main()

"""The ``slowdown`` report: FCT slowdown by message size, the figure of the RDMA
congestion-control papers (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM
2019, Fig. 11): one panel per percentile, message-size bins along x, one line per sweep
point (e.g. per congestion control), and the same numbers printed.

The slowdown of a finished transfer is ``completions.slowdown`` (its FCT over its FCT
alone in the network, docs/models.md §9); transports that do not state how they packetise
(TCP, UDP) have none, and their rows are left out.

Scenario configuration::

    [report]
    kind = "slowdown"
    tables = ["completions"]                  # must keep the completions table
    bins = [0, 10e3, 100e3, 1e6, 1e9]         # size bin edges in bytes (default these)
    percentiles = [50, 95, 99]                # one panel each (default these)
    x = "bins"                                # or "size-quantile" (below)
    step = 5                                  # size-quantile: bucket width, % of messages

``x = "size-quantile"`` draws the x axis of the HPCC paper's Fig. 11 and of its authors'
published results page: the messages sorted by size and cut into buckets of ``step`` % of
them (equal counts), each bucket's percentiles plotted at its position and labelled with
its largest size, as the authors' ``analysis/fct_analysis.py`` computes them (slowdowns
below 1 counted as 1; a bucket's q-th percentile is the value at index ⌊n·q⌋ of its n
sorted slowdowns). ``results-quantiles.csv`` holds every bucket of every point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._tables import format_table, human, write_csv
from ..scenario import Scenario
from ._base import (
    Columns,
    ReportContext,
    ReportKind,
    SourceSeries,
    comparison_of,
    is_number,
    point_tables,
    pyplot,
    save_figure,
)
from .generic import write_generic

DEFAULT_BINS = (0.0, 10e3, 100e3, 1e6, 1e9)
DEFAULT_PERCENTILES = (50.0, 95.0, 99.0)


X_MODES = ("bins", "size-quantile")
QUANTILE_FILE = "results-quantiles.csv"


@dataclass(frozen=True)
class SlowdownConfig:
    bins: tuple[float, ...]
    percentiles: tuple[float, ...]
    x: str = "bins"
    step: int = 5


def _numbers(scn: Scenario, key: str, default: tuple[float, ...], lo: float,
             hi: float) -> tuple[float, ...]:
    raw = scn.report.get(key, list(default))
    if (not isinstance(raw, list) or len(raw) < 1
            or not all(is_number(v) and lo <= float(v) <= hi for v in raw)):
        raise scn.error("report", key, f"expected a list of numbers from {human(lo)} to "
                        f"{human(hi)}")
    return tuple(float(v) for v in raw)


def parse(scn: Scenario) -> SlowdownConfig:
    tables = scn.report.get("tables", [])
    if not isinstance(tables, list) or "completions" not in tables:
        raise scn.error("report", "tables", 'a slowdown report needs "completions" in '
                        "report.tables")
    bins = _numbers(scn, "bins", DEFAULT_BINS, 0.0, 1e15)
    if len(bins) < 2 or any(b <= a for a, b in zip(bins, bins[1:], strict=False)):
        raise scn.error("report", "bins", "expected at least two increasing bin edges")
    percentiles = _numbers(scn, "percentiles", DEFAULT_PERCENTILES, 1.0, 100.0)
    x = scn.report.get("x", "bins")
    if x not in X_MODES:
        raise scn.error("report", "x", f"expected one of {', '.join(map(repr, X_MODES))}, "
                        f"got {x!r}")
    step = scn.report.get("step", 5)
    if (not isinstance(step, int) or isinstance(step, bool) or not 1 <= step <= 100
            or 100 % step):
        raise scn.error("report", "step", f"expected a whole percentage that divides 100 "
                        f"(1, 2, 4, 5, 10, ...), got {step!r}")
    return SlowdownConfig(bins=bins, percentiles=percentiles, x=x, step=step)


def bin_labels(bins: tuple[float, ...]) -> list[str]:
    """``(a, b]`` of each bin, in bytes with SI prefixes."""
    def size(v: float) -> str:
        for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
            if v >= scale:
                return f"{v / scale:g}{unit}"
        return f"{v:g}B"
    return [f"{size(a)}-{size(b)}" for a, b in zip(bins, bins[1:], strict=False)]


def percentile(values: list[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q % of the values at or below it."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def by_bin(cols: Columns, cfg: SlowdownConfig) -> list[list[float]]:
    """The slowdowns of each size bin ``(edge_i, edge_i+1]`` (NaN rows left out)."""
    out: list[list[float]] = [[] for _ in cfg.bins[1:]]
    for size, slow in zip(cols.get("bytes", []), cols.get("slowdown", []), strict=False):
        if not isinstance(slow, float) or math.isnan(slow) or not is_number(size):
            continue
        for i, (a, b) in enumerate(zip(cfg.bins, cfg.bins[1:], strict=False)):
            if a < float(size) <= b:
                out[i].append(slow)
                break
    return out


@dataclass(frozen=True)
class Bucket:
    """One size-quantile bucket: the first message's rank in % (``start``), the largest size
    in it and its slowdowns, sorted."""

    start: int
    largest: float
    slowdowns: tuple[float, ...]

    def percentile(self, q: float) -> float:
        """The authors' analysis script's rule: the value at index ⌊n·q/100⌋."""
        if not self.slowdowns:
            return math.nan
        return self.slowdowns[min(len(self.slowdowns) - 1, int(len(self.slowdowns) * q / 100))]


def by_quantile(cols: Columns, step: int) -> list[Bucket]:
    """The messages sorted by size (then slowdown) and cut into 100/step buckets of equal
    count, bucket i holding ranks ⌊i·n/100⌋ up to ⌊(i + step)·n/100⌋; slowdowns below 1
    count as 1 (module doc). Rows without a slowdown are left out."""
    pairs = sorted((float(size), max(1.0, slow))
                   for size, slow in zip(cols.get("bytes", []), cols.get("slowdown", []),
                                         strict=False)
                   if isinstance(slow, float) and not math.isnan(slow) and is_number(size))
    n = len(pairs)
    out = []
    for i in range(0, 100, step):
        chunk = pairs[i * n // 100:(i + step) * n // 100]
        out.append(Bucket(i, chunk[-1][0] if chunk else math.nan,
                          tuple(sorted(s for _, s in chunk))))
    return out


def size_label(v: float) -> str:
    """A size in bytes as the authors' figures label their x axis (324, 1K, 46K, 10M)."""
    if math.isnan(v):
        return "-"
    for unit, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if v >= scale:
            return f"{v / scale:.3g}{unit}"
    return f"{v:g}"


def write_slowdown(ctx: ReportContext, cfg: SlowdownConfig) -> list[Path]:
    if cfg.x == "size-quantile":
        return _write_quantiles(ctx, cfg)
    written = write_generic(ctx)
    data = point_tables(ctx, ("completions",))
    labels = [p.label() for p in ctx.plan.points]
    binned = [by_bin(d.get("completions", {}), cfg) for d in data]
    names = bin_labels(cfg.bins)
    rows = []
    for q in cfg.percentiles:
        for i, name in enumerate(names):
            rows.append([f"p{q:g} {name}"] + [human(percentile(b[i], q)) for b in binned])
    rows.append(["messages with a slowdown"] + [str(sum(len(x) for x in b)) for b in binned])
    ctx.print()
    ctx.print(format_table(["slowdown"] + labels, rows, align_left=1))
    written.append(_figure(ctx, cfg, names, labels, binned))
    return written


def _figure(ctx: ReportContext, cfg: SlowdownConfig, names: list[str], labels: list[str],
            binned: list[list[list[float]]]) -> Path:
    plt = pyplot()
    from matplotlib.ticker import FuncFormatter  # after pyplot(): the backend is chosen

    plain = FuncFormatter(lambda v, _pos: f"{v:g}")
    n = len(cfg.percentiles)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.4), squeeze=False)
    for k, q in enumerate(cfg.percentiles):
        ax = axes[0][k]
        for label, b in zip(labels, binned, strict=True):
            ys = [percentile(v, q) for v in b]
            ax.plot(names, ys, marker="o", lw=1.2, label=label or ctx.scenario.id)
        ax.tick_params(axis="x", labelsize=7, rotation=30)
        _style_panel(ax, q, k == 0, "message size", plain)
    fig.suptitle(ctx.title, fontsize=10)
    return save_figure(ctx, fig, dpi=110)


def _style_panel(ax: Any, q: float, first: bool, xlabel: str, plain: Any) -> None:
    """A percentile panel: log y with plain numbers, its title and x label, a grid; the
    first panel carries the y label and the legend."""
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="both", labelsize=7)
    ax.set_title(f"p{q:g} FCT slowdown", fontsize=9)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.grid(True, alpha=0.3, which="both")
    if first:
        ax.set_ylabel("FCT / ideal FCT", fontsize=8)
        ax.legend(fontsize=7, loc="best")


def _write_quantiles(ctx: ReportContext, cfg: SlowdownConfig) -> list[Path]:
    written = write_generic(ctx)
    data = point_tables(ctx, ("completions",))
    labels = [p.label() for p in ctx.plan.points]
    buckets = [by_quantile(d.get("completions", {}), cfg.step) for d in data]
    rows = []
    for q in cfg.percentiles:
        for k, b in enumerate(buckets[0] if buckets else []):
            if b.start % 10 == 0 or k == len(buckets[0]) - 1:
                rows.append([f"p{q:g} {b.start}% <={size_label(b.largest)}"]
                            + [human(pb[k].percentile(q)) for pb in buckets])
    rows.append(["messages with a slowdown"]
                + [str(sum(len(b.slowdowns) for b in pb)) for pb in buckets])
    ctx.print()
    ctx.print(format_table(["slowdown"] + labels, rows, align_left=1))
    head = ["point", "bucket_start_pct", "largest_bytes", "messages"] + [
        f"p{q:g}" for q in cfg.percentiles]
    csv_rows = [dict(zip(head, [label, b.start, f"{b.largest:g}", len(b.slowdowns)]
                         + [f"{b.percentile(q):.6g}" for q in cfg.percentiles], strict=True))
                for label, pb in zip(labels, buckets, strict=True) for b in pb]
    path = ctx.out_dir / QUANTILE_FILE
    write_csv(path, head, csv_rows)
    written.append(path)
    _print_beside_source(ctx, cfg, labels, buckets)
    written.append(_quantile_figure(ctx, cfg, labels, buckets))
    return written


WITHIN = 0.25  # the agreement the summary line counts (the HPCC cross-check's bound)
SMOOTH = 2  # the source is compared with the median of dcnsim's buckets x-2 .. x+2


def beside_source(series: SourceSeries, q: float, pb: list[Bucket]) -> list[tuple[float, float,
                                                                                float]]:
    """(x, the source's y, dcnsim's) at each point of a source series drawn on the panel of
    percentile ``q``: dcnsim's value is the median of that percentile over the buckets
    within ``SMOOTH`` of x (a bucket of 1 % of the messages is a few hundred of them here,
    against the source's thousands: one bucket alone is noisy)."""
    out = []
    step = pb[1].start - pb[0].start if len(pb) > 1 else 100
    for x, y in zip(series.x, series.y, strict=True):
        if isinstance(x, str):
            continue
        k = min(len(pb) - 1, max(0, int(float(x)) // step))
        near = sorted(v for b in pb[max(0, k - SMOOTH):k + SMOOTH + 1]
                      if not math.isnan(v := b.percentile(q)))
        ours = near[len(near) // 2] if near else math.nan
        out.append((float(x), y, ours))
    return out


def _print_beside_source(ctx: ReportContext, cfg: SlowdownConfig, labels: list[str],
                         buckets: list[list[Bucket]]) -> None:
    """For each source series whose label starts with a point's label (e.g. "hpcc (the
    page's HPCC-INT)"), its values beside that point's, panel by panel."""
    rows = []
    ratios: dict[str, list[float]] = {}
    for s in comparison_of(ctx.scenario).series:
        name = s.label.split()[0] if s.label.split() else ""
        if name not in labels or s.panel >= len(cfg.percentiles):
            continue
        q = cfg.percentiles[s.panel]
        for x, src, ours in beside_source(s, q, buckets[labels.index(name)]):
            if src > 0 and not math.isnan(ours):
                ratios.setdefault(f"p{q:g}", []).append(ours / src)
            rows.append([name, f"p{q:g}", f"{x:g}%", human(src), human(ours),
                         f"{ours / src:.2f}" if src > 0 and not math.isnan(ours) else "-"])
    if rows:
        ctx.print()
        ctx.print(f"the source beside dcnsim (dcnsim: median of the buckets within "
                  f"{SMOOTH} of the source's)")
        ctx.print(format_table(["point", "panel", "bucket", "source", "dcnsim", "ratio"],
                               rows, align_left=1))
        for panel, rs in ratios.items():
            near = sum(1 for r in rs if abs(r - 1) <= WITHIN)
            ctx.print(f"{panel}: {near} of {len(rs)} points within {WITHIN * 100:g} % of the "
                      f"source (ratios {min(rs):.2f} to {max(rs):.2f})")


def _quantile_figure(ctx: ReportContext, cfg: SlowdownConfig, labels: list[str],
                     buckets: list[list[Bucket]]) -> Path:
    plt = pyplot()
    from matplotlib.ticker import FuncFormatter  # after pyplot(): the backend is chosen

    plain = FuncFormatter(lambda v, _pos: f"{v:g}")
    n = len(cfg.percentiles)
    # Tall: the source curves add legend entries and a caption line each.
    fig, axes = plt.subplots(1, n, figsize=(5.2 * n, 6.4), squeeze=False)
    first = buckets[0] if buckets else []
    ticks = [b for b in first if b.start % 10 == 0] + first[-1:]
    for k, q in enumerate(cfg.percentiles):
        ax = axes[0][k]
        for label, pb in zip(labels, buckets, strict=True):
            ax.plot([b.start for b in pb], [b.percentile(q) for b in pb], lw=1.2,
                    label=label or ctx.scenario.id)
        ax.set_xticks([b.start for b in ticks], [size_label(b.largest) for b in ticks])
        ax.tick_params(axis="x", labelsize=7, rotation=45)
        _style_panel(ax, q, k == 0,
                     f"message size (buckets of {cfg.step} % of the messages)", plain)
    fig.suptitle(ctx.title, fontsize=10)
    return save_figure(ctx, fig, dpi=110)


KINDS: tuple[ReportKind[Any], ...] = (
    ReportKind("slowdown", "FCT slowdown percentiles by message size, one line per point",
               parse, write_slowdown),
)

"""QCN reports (Devkota 2010).

``qcn-incast``: the incast-goodput report (figure, goodput grid, silent-period table)
plus, at one buffer size (``table_buffer``, default 128 KB), the thesis's Table III
columns -- average minimum RP rate ("avg minrate"), that times n, goodput and timeouts
per flow -- and the CNMs sent (Table VI), each beside the source's numbers when the
scenario gives them::

    [report]
    kind = "qcn-incast"
    table_buffer = 131072
    source_table3 = { 2 = [512.19, 1024.37, 966.61, 0], ... }   # minrate, x n, goodput, TO/flow
    source_cnms = { 2 = 4740, ... }                               # Table VI row
    source_timeouts_per_flow = { 16 = 0.12, ... }                 # Table VII row
    source_mean_queue_below_pkts = 1    # Fig. 20: "mean queue < 1 packet"
    goodput_column = "sync_goodput_mbps"  # optional: plot this summary column as goodput

When the engine reports ``mean_queue_pkts`` (``[measure] mean_queue_port``), the mean
queue of that port is printed per buffer and n, and checked against the source's bound.

``variant-table``: results.csv and the generic table, then one metric laid out with a row
per value of one sweep axis and a column per ``[[sweep.variants]]`` label, each cell
"ours (source)" when the source's number is given::

    [report]
    kind = "variant-table"
    rows = "topology.servers"        # optional; without it one row
    metric = "cnm_sent"              # summary column (or a derived metric, see DERIVED)
    metrics = ["cnm_sent", "drops"]  # optional: a table for each; the source is `metric`'s
    source = { unmodified = { 2 = 4740, 4 = 5535 }, ... }   # or { unmodified = 1196, ... }
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from .. import _toml
from .._tables import format_table
from ..scenario import VARIANTS_AXIS, Scenario, variant_of
from . import incast
from ._base import ReportContext, ReportKind, SourceSeries, draw_source, is_number, save_figure
from .generic import write_generic

DEFAULT_TABLE_BUFFER = 131072

# ------------------------------------------------------------------------- qcn-incast


@dataclass(frozen=True)
class QcnIncastConfig:
    incast: incast.IncastConfig
    goodput_column: str | None = None
    mean_queue_bound_pkts: float | None = None  # source_mean_queue_below_pkts
    table_buffer: int = DEFAULT_TABLE_BUFFER  # bytes
    # Flows -> the source's numbers: Table III (4 columns), CNMs, timeouts per flow.
    source_table3: Mapping[int, Sequence[float]] = field(default_factory=dict)
    source_cnms: Mapping[int, float] = field(default_factory=dict)
    source_timeouts_per_flow: Mapping[int, float] = field(default_factory=dict)


def parse_qcn_incast(scn: Scenario) -> QcnIncastConfig:
    base = incast.parse(scn)
    cfg = scn.report
    col = cfg.get("goodput_column")
    if col is not None and not isinstance(col, str):
        raise scn.error("report", "goodput_column", f"expected a summary column name, got {col!r}")
    bound = cfg.get("source_mean_queue_below_pkts")
    if bound is not None and (not is_number(bound) or bound <= 0):
        raise scn.error("report", "source_mean_queue_below_pkts",
                        f"expected a positive number of packets, got {bound!r}")
    buf = cfg.get("table_buffer", DEFAULT_TABLE_BUFFER)
    if not is_number(buf) or buf <= 0:
        raise scn.error("report", "table_buffer", f"expected a buffer size in bytes, got {buf!r}")
    sources = {key: _by_flows(scn, key, width) for key, width in
               (("source_table3", 4), ("source_cnms", 0), ("source_timeouts_per_flow", 0))}
    return QcnIncastConfig(incast=base, goodput_column=col, mean_queue_bound_pkts=bound,
                           table_buffer=int(buf), source_table3=sources["source_table3"],
                           source_cnms=sources["source_cnms"],
                           source_timeouts_per_flow=sources["source_timeouts_per_flow"])


def _by_flows(scn: Scenario, key: str, width: int) -> dict[int, Any]:
    """A ``flows = value`` table: arrays of ``width`` numbers, or numbers (``width`` 0)."""
    table = scn.report.get(key)
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise scn.error("report", key, "expected a table keyed by the number of flows")
    for flows, values in table.items():
        if not str(flows).isdigit():
            raise scn.error("report", key, f"key {flows!r} is not a number of flows")
        ok = (isinstance(values, list) and len(values) == width
              and all(is_number(v) for v in values)) if width else is_number(values)
        if not ok:
            want = f"an array of {width} numbers" if width else "a number"
            raise scn.error("report", key, f"entry {flows}: expected {want}, got {values!r}")
    return {int(k): v for k, v in table.items()}


def _print_mean_queue(ctx: ReportContext, bound: float | None) -> None:
    """Mean queue (packets) per buffer (columns) and n (rows), when measured."""
    sums = [s for s in ctx.summaries() if is_number(s.get("mean_queue_pkts"))
            and s.get("switch_buffer_bytes") is not None]  # None: an unlimited buffer
    if not sums:
        return
    cells: dict[tuple[int, int], list[float]] = {}
    for s in sums:
        key = (int(s["switch_buffer_bytes"]), int(s["servers"]))
        cells.setdefault(key, []).append(float(s["mean_queue_pkts"]))
    buffers = sorted({b for b, _ in cells})
    flows = sorted({n for _, n in cells})
    rows = []
    above = 0
    for n in flows:
        line = [str(n)]
        for b in buffers:
            vals = cells.get((b, n))
            if not vals:
                line.append("")
                continue
            v = sum(vals) / len(vals)
            above += int(bound is not None and v >= float(bound))
            line.append(f"{v:.3f}")
        rows.append(line)
    port = ctx.scenario.data.get("measure", {}).get("mean_queue_port", "the measured port")
    ctx.print()
    ctx.print(f"Mean queue at {port} (packets, time average over the run)"
              + (f"; source: < {bound:g} packet; {above} cell(s) at or above"
                 if bound is not None else ""))
    ctx.print(format_table(["flows"] + [incast.kb(b) for b in buffers], rows))


def _f(v: float | None, spec: str = "{:.2f}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return spec.format(v)


def _with_goodput_column(ctx: ReportContext, column: str) -> ReportContext:
    """Plot and tabulate another goodput (e.g. the synchronized reads alone in the mixed
    set-up); the total stays in results.csv as total_goodput_mbps."""
    records = []
    for rec in ctx.records:
        s = dict(rec["summary"])
        s["total_goodput_mbps"] = s.get("goodput_mbps")
        s["goodput_mbps"] = s.get(column, float("nan"))
        records.append({**rec, "summary": s})
    return replace(ctx, records=records)


def _mean(items: list[dict[str, Any]], key: str) -> float | None:
    vals = [float(x[key]) for x in items if is_number(x.get(key))]
    return sum(vals) / len(vals) if vals else None


def write_qcn_incast(ctx: ReportContext, cfg: QcnIncastConfig) -> list[Path]:
    if cfg.goodput_column:
        ctx = _with_goodput_column(ctx, cfg.goodput_column)
    written = incast.write_incast(ctx, cfg.incast)
    _print_mean_queue(ctx, cfg.mean_queue_bound_pkts)
    buf = cfg.table_buffer
    rows: dict[int, list[dict[str, Any]]] = {}
    for s in ctx.summaries():
        if s.get("switch_buffer_bytes") == buf:  # None: an unlimited buffer
            rows.setdefault(int(s["servers"]), []).append(s)
    if not rows:
        ctx.print(f"(no point with a {buf}-byte buffer: Table III not printed)")
        return written

    t3, cn, t7 = cfg.source_table3, cfg.source_cnms, cfg.source_timeouts_per_flow
    header = ["n", "avg minrate", "x n", "goodput", "timeouts/flow", "CNMs sent"]
    table = []
    for n in sorted(rows):
        items = rows[n]
        mr = _mean(items, "avg_minrate_mbps")
        gp = _mean(items, "goodput_mbps")
        to = _mean(items, "timeouts")
        cnm = _mean(items, "cnm_sent")
        src = t3.get(n)

        def pair(ours: str, theirs: Any) -> str:
            return ours if theirs is None else f"{ours} ({theirs:g})"

        table.append([
            str(n),
            pair(_f(mr), src[0] if src else None),
            pair(_f(None if mr is None else mr * n), src[1] if src else None),
            pair(_f(gp), src[2] if src else None),
            pair(_f(None if to is None else to / n), t7.get(n, src[3] if src else None)),
            pair(_f(cnm, "{:.0f}"), cn.get(n)),
        ])
    ctx.print()
    per_s = _f(_mean(rows[min(rows)], "duration_s"), "{:g}")
    ctx.print(f"At {buf / 1024:g} KiB (Table III; Mb/s; per {per_s} s)"
              + ("; ours (source)" if (t3 or cn or t7) else ""))
    ctx.print(format_table(header, table))
    return written


# ----------------------------------------------------------------------- variant-table


@dataclass(frozen=True)
class VariantTableConfig:
    metrics: tuple[str, ...]  # a table for each
    source_metric: str  # the metric shown beside the source's numbers
    rows: str | None = None  # the sweep axis of the rows (None: one row)
    # Variant label -> the source's number, or (with ``rows``) row value -> number.
    source: Mapping[str, Any] = field(default_factory=dict)


def parse_variant_table(scn: Scenario) -> VariantTableConfig:
    cfg = scn.report
    if not scn.variants:
        raise scn.error("report", "kind", "variant-table needs [[sweep.variants]]")
    rows = cfg.get("rows")
    if rows is not None and (not isinstance(rows, str) or rows not in dict(scn.sweep)
                             or rows == VARIANTS_AXIS):
        raise scn.error("report", "rows", f"expected the name of a sweep axis, got {rows!r}")
    metric = cfg.get("metric")
    metrics = cfg.get("metrics", [metric])
    if not isinstance(metrics, list) or not metrics or not all(isinstance(m, str)
                                                               for m in metrics) \
            or (metric is not None and not isinstance(metric, str)):
        raise scn.error("report", "metric", "expected a summary column name (metric = \"...\")")
    source = cfg.get("source", {})
    if not isinstance(source, dict):
        raise scn.error("report", "source", "expected a table keyed by variant label")
    for label, values in source.items():
        if label not in scn.variants:
            raise scn.error("report", "source", f"no [[sweep.variants]] labelled {label!r}")
        ok = is_number(values) if rows is None else (
            isinstance(values, dict) and all(is_number(v) for v in values.values()))
        if not ok:
            want = "a number" if rows is None else "a table of row value = number"
            raise scn.error("report", "source", f"entry {label!r}: expected {want}")
    return VariantTableConfig(metrics=tuple(metrics),
                              source_metric=metric if metric is not None else metrics[0],
                              rows=rows, source=source)


# Metrics computed from summary columns (Table VII reports timeouts per flow).
DERIVED = {"timeouts_per_flow": ("timeouts", "servers")}


def derived_metric(summary: dict[str, Any], name: str) -> Any:
    """A summary column, or a derived metric (``DERIVED``: numerator / denominator)."""
    if name in summary or name not in DERIVED:
        return summary.get(name)
    num, den = (summary.get(k) for k in DERIVED[name])
    if isinstance(num, (int, float)) and isinstance(den, (int, float)) and den:
        return float(num) / float(den)
    return None


def _cell_text(v: float) -> str:
    """Whole numbers as integers; small fractional values (per-flow rates) with 2 decimals."""
    return f"{v:.2f}" if abs(v) < 1000 and v != int(v) else f"{v:.0f}"


def write_variant_table(ctx: ReportContext, cfg: VariantTableConfig) -> list[Path]:
    paths = write_generic(ctx)
    scn = ctx.scenario
    labels = [v for v in scn.variants if any(
        variant_of(scn, r["overrides"]) == v for r in ctx.records)]
    row_values: list[str] = []
    cells: dict[tuple[str, str, str], Any] = {}
    for rec in ctx.records:
        row = _toml.display(rec["overrides"].get(cfg.rows)) if cfg.rows else "all"
        if row not in row_values:
            row_values.append(row)
        label = variant_of(scn, rec["overrides"])
        for m in cfg.metrics:
            cells[(m, row, str(label))] = derived_metric(rec["summary"], m)
    for m in cfg.metrics:
        body = []
        for row in row_values:
            line = [row]
            for label in labels:
                ours = cells.get((m, row, label))
                src = cfg.source.get(label)
                theirs = src if cfg.rows is None else (src or {}).get(row)
                text = "" if ours is None else (_cell_text(ours) if is_number(ours) else str(ours))
                if m == cfg.source_metric and is_number(theirs):
                    text += f" ({theirs:g})"
                line.append(text)
            body.append(line)
        ctx.print(f"\n{m}, ours (source), by {cfg.rows or 'variant'}:")
        ctx.print(format_table([cfg.rows or "", *labels], body, align_left=1))
    return paths


def write_variant_report(ctx: ReportContext, cfg: VariantTableConfig) -> list[Path]:
    """The tables of ``write_variant_table`` and a figure of the source metric."""
    paths = write_variant_table(ctx, cfg)
    paths.append(variant_figure(ctx, cfg))
    return paths


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def variant_figure(ctx: ReportContext, cfg: VariantTableConfig, *,
                   name: str | None = None, series: bool = True) -> Path:
    """``source_metric`` against the rows axis (log scale when its values are numbers,
    else one tick per value; one tick per variant without rows), a line per variant, the
    source's numbers ([report] source) in grey with the same marker."""
    from matplotlib.figure import Figure

    scn = ctx.scenario
    m = cfg.source_metric
    labels = [v for v in scn.variants if any(
        variant_of(scn, r["overrides"]) == v for r in ctx.records)]
    rows: list[str] = []  # row values as the source keys spell them (display form)
    for rec in ctx.records:
        row = _toml.display(rec["overrides"].get(cfg.rows)) if cfg.rows else ""
        if row not in rows:
            rows.append(row)
    numeric = cfg.rows is not None and all(_number(r) is not None for r in rows)

    def x_of(row: str, label: str) -> float:
        if cfg.rows is None:
            return float(labels.index(label))
        return cast(float, _number(row)) if numeric else float(rows.index(row))

    fig = Figure(figsize=(8.0, 5.0), layout="constrained")
    ax = fig.add_subplot()
    markers = "osD^v<>p*h"
    for i, label in enumerate(labels):
        points = sorted(
            (x_of(_toml.display(rec["overrides"].get(cfg.rows)) if cfg.rows else "", label),
             cast(float, derived_metric(rec["summary"], m)))
            for rec in ctx.records if variant_of(scn, rec["overrides"]) == label
            and is_number(derived_metric(rec["summary"], m)))
        marker = markers[i % len(markers)]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker,
                color=f"C{i % 10}", label=label)
        src = cfg.source.get(label)
        if cfg.rows is None:
            given = [(float(i), float(cast(float, src)))] if is_number(src) else []
        else:
            given = sorted((x_of(k, label), float(v)) for k, v in (src or {}).items()
                           if k in rows or numeric and _number(k) is not None)
        if given:
            draw_source(ax, SourceSeries(label=label, provenance="[report] source",
                                         x=tuple(g[0] for g in given),
                                         y=tuple(g[1] for g in given)), marker=marker)
    if numeric:
        ax.set_xscale("log", base=2)
    elif cfg.rows is not None:
        ax.set_xticks(range(len(rows)), rows)
    else:
        ax.set_xticks(range(len(labels)), labels, rotation=20, fontsize=7)
    ax.set_xlabel(cfg.rows or "variant")
    ax.set_ylabel(m)
    ax.set_yscale("symlog", linthresh=1.0)  # counts from 0 to 10^5
    ax.set_ylim(bottom=0)
    ax.set_title(ctx.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6, ncol=2, loc="best")
    return save_figure(ctx, fig, dpi=110, name=name, series=series)


KINDS: tuple[ReportKind[Any], ...] = (
    ReportKind("qcn-incast", "incast goodput plus Table III (avg minrate, CNMs) at one buffer",
               parse_qcn_incast, write_qcn_incast, source_keys=("source_silent_table",)),
    ReportKind("variant-table", "one metric, a row per axis value, a column per variant, "
               "and its figure with the source's numbers", parse_variant_table,
               write_variant_report, source_keys=("source",)),
)

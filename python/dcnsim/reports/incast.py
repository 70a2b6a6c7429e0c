"""The ``incast-goodput`` report (Devkota Figs. 8/9 style): goodput against the number of
flows, a line per buffer size, and the silent-period table (Table I), each value beside
the source's when the scenario gives it::

    [report]
    kind = "incast-goodput"
    ceiling_mbps = 973.0                                  # dashed line in the figure
    source_silent_table = { 2 = [0, 0, 0, 0], ... }       # flows = [s per buffer size]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from .._tables import format_table, human, write_csv
from ..errors import UserError
from ..scenario import Scenario
from ._base import (
    RESULTS_FILE,
    ReportContext,
    ReportKind,
    SourceSeries,
    draw_source,
    is_number,
    save_figure,
)
from .generic import summary_columns

# Summary column -> results.csv column, in results.csv order.
_NEEDS = {"switch_buffer_bytes": "buffer_bytes", "servers": "flows",
          "goodput_mbps": "goodput_mbps", "timeouts": "timeouts", "drops": "drops",
          "silent_s": "silent_s", "rounds": "rounds"}
DEFAULT_CEILING_MBPS = 973.0  # 1460 B of payload per 1500 B packet at 1 Gb/s


@dataclass(frozen=True)
class IncastConfig:
    ceiling_mbps: float = DEFAULT_CEILING_MBPS
    # Flows -> the source's silent seconds per buffer size (one width for all rows).
    source_silent: Mapping[int, Sequence[float]] = field(default_factory=dict)


def parse(scn: Scenario) -> IncastConfig:
    cfg = scn.report
    ceiling = cfg.get("ceiling_mbps", DEFAULT_CEILING_MBPS)
    if not is_number(ceiling) or ceiling <= 0:
        raise scn.error("report", "ceiling_mbps", f"expected a positive number, got {ceiling!r}")
    return IncastConfig(ceiling_mbps=float(ceiling),
                        source_silent=_source_silent(scn, cfg.get("source_silent_table")))


def _source_silent(scn: Scenario, table: Any) -> dict[int, list[float]]:
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise scn.error("report", "source_silent_table",
                        "expected a table of flows = [seconds per buffer size]")
    width = None
    for flows, values in table.items():
        if not flows.isdigit() or int(flows) < 1:
            raise scn.error("report", "source_silent_table",
                            f"key {flows!r} is not a number of flows")
        if not isinstance(values, list) or not values or not all(is_number(v) for v in values):
            raise scn.error("report", "source_silent_table",
                            f"entry {flows}: expected an array of numbers, got {values!r}")
        if width is not None and len(values) != width:
            raise scn.error("report", "source_silent_table",
                            f"entry {flows} has {len(values)} values, others have {width}")
        width = len(values)
    return {int(k): list(v) for k, v in table.items()}


def kb(buffer_bytes: float) -> str:
    """Label a buffer size: 1024-based sizes as KiB, others as (1000-based) KB."""
    kib = buffer_bytes / 1024
    return f"{kib:g}KiB" if kib == int(kib) else f"{buffer_bytes / 1000:g}KB"


def _round(value: float) -> str:
    return "nan" if math.isnan(value) else str(math.floor(value + 0.5))


def _fmt(value: float | None, spec: str) -> str:
    return "" if value is None else spec.format(value)


def write_incast(ctx: ReportContext, cfg: IncastConfig) -> list[Path]:
    """results.csv, the figure, the goodput grid and the silent-period table."""
    summaries = ctx.summaries()
    for need in _NEEDS:
        if any(need not in s for s in summaries):
            raise UserError(f"report incast-goodput needs the summary column {need!r}, "
                            f"which the engine did not produce for {ctx.scenario.path}")
    extra = summary_columns(summaries, exclude=[*_NEEDS, "id", "flows"])
    rows = []
    for summary in summaries:
        row = {new: summary[old] for old, new in _NEEDS.items()}
        row.update({k: summary[k] for k in extra if k in summary})
        rows.append(row)
    written = [ctx.out_dir / RESULTS_FILE]
    write_csv(written[0], list(_NEEDS.values()) + extra, rows)

    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(_NEEDS.values()))
    # Several rows per (buffer, flows) (e.g. a seed axis) are averaged.
    grid = frame.groupby(["buffer_bytes", "flows"], sort=True).mean(numeric_only=True)
    buffers = sorted({int(b) for b, _ in grid.index})
    flows = sorted({int(f) for _, f in grid.index})
    same_width = {len(v) for v in cfg.source_silent.values()} == {len(buffers)}
    written.append(_plot(ctx, grid, buffers, flows, cfg.ceiling_mbps,
                         cfg.source_silent if same_width else {}))

    def cell(buffer: int, n: int, column: str) -> float | None:
        key = (buffer, n)
        return float(cast(float, grid.loc[key, column])) if key in grid.index else None

    header = ["flows"] + [kb(b) for b in buffers]
    ctx.print(ctx.title)
    ctx.print()
    ctx.print("Goodput (Mb/s)")
    ctx.print(format_table(header, [
        [str(n)] + [_fmt(cell(b, n, "goodput_mbps"), "{:.0f}") for b in buffers] for n in flows]))

    source = _source_columns(ctx, cfg, buffers)
    duration = summaries[0].get("duration_s")
    of = f" of {human(duration)} s" if is_number(duration) else ""
    ctx.print()
    ctx.print(f"Silent periods (s{of} with no traffic to the client)"
              + ("; ours (source)" if source else ""))
    silent_rows = []
    for n in flows:
        cells = [str(n)]
        for i, b in enumerate(buffers):
            value = cell(b, n, "silent_s")
            text = "" if value is None else _round(value)
            src = source.get(n)
            if src is not None and value is not None:
                text += f" ({_fmt(float(src[i]), '{:g}')})"
            cells.append(text)
        silent_rows.append(cells)
    ctx.print(format_table(header, silent_rows))
    return written


def _source_columns(ctx: ReportContext, cfg: IncastConfig,
                    buffers: list[int]) -> Mapping[int, Sequence[float]]:
    table = cfg.source_silent
    if not table:
        return {}
    widths = {len(v) for v in table.values()}
    if widths != {len(buffers)}:
        ctx.print(f"(source silent-period table has {widths.pop()} buffer columns, these "
                  f"results have {len(buffers)}: source values not shown)")
        return {}
    return table


def _plot(ctx: ReportContext, grid: Any, buffers: list[int], flows: list[int],
          ceiling: float, source: Mapping[int, Sequence[float]]) -> Path:
    """Goodput against flows, a line per buffer; with the source's silent-period table, a
    second panel of silent seconds with the source's in grey (panel 1)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullLocator

    fig = Figure(figsize=(7.0, 7.6 if source else 4.6), layout="constrained")
    axes = fig.subplots(2 if source else 1, 1, squeeze=False)[:, 0]
    markers = "osD^v<>p*h"
    lo = min(0, math.floor(math.log2(max(min(flows), 1))))
    hi = max(6, math.ceil(math.log2(max(flows))))
    ticks = [2**k for k in range(lo, hi + 1)]
    columns = [("goodput_mbps", "goodput (Mb/s)")]
    if source:
        columns.append(("silent_s", "silent seconds"))
    for ax, (column, ylabel) in zip(axes, columns, strict=True):
        for i, buffer in enumerate(buffers):
            sub = grid.xs(buffer, level="buffer_bytes")
            ax.plot(sub.index.to_numpy(), sub[column].to_numpy(),
                    marker=markers[i % len(markers)], color=f"C{i}",
                    label=f"{kb(buffer)} buffer")
        ax.set_xscale("log", base=2)
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(t) for t in ticks])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlim(ticks[0] / 1.15, ticks[-1] * 1.15)
        ax.set_xlabel("number of flows (servers)")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    ax = axes[0]
    ax.axhline(ceiling, linestyle="--", color="0.4", linewidth=1,
               label=f"payload share of 1 Gb/s ({ceiling:g} Mb/s)")
    ax.set_ylim(0, max(1000.0, ceiling * 1.05))
    ax.set_title(ctx.title, fontsize=10)
    ax.legend(loc="best", fontsize=8)
    if source:
        rows = sorted(source)
        for i, buffer in enumerate(buffers):
            draw_source(axes[1], SourceSeries(
                label=f"{kb(buffer)}", provenance="[report] source_silent_table",
                x=tuple(float(n) for n in rows), y=tuple(float(source[n][i]) for n in rows),
                style="points"), marker=markers[i % len(markers)])
        axes[1].set_title("silent periods; source: the thesis's table ([report] "
                          "source_silent_table)", fontsize=8)
    return save_figure(ctx, fig, dpi=120)


KINDS: tuple[ReportKind[Any], ...] = (
    ReportKind("incast-goodput", "goodput vs flows per buffer, silent-period table",
               parse, write_incast, source_keys=("source_silent_table",)),
)

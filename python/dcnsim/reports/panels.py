"""The ``panels`` report: time series of chosen result tables drawn as stacked panels,
one column per sweep point (e.g. the time-sequence, cwnd, SRTT and queue panels of the
ODCTCP thesis), and chosen numbers printed.

Scenario configuration::

    [report]
    kind = "panels"
    tables = ["cwnd", "queue"]          # kept from every point under DIR/<id>/points/NNNN/
    [[report.panels]]
    table = "cwnd"                      # a kept table
    x = "time_s"
    y = ["cwnd_bytes", "ssthresh_bytes"]
    where = { flow = 0 }                # optional row filter (column = value)
    ylabel = "bytes"
    [[report.numbers]]                  # printed per point
    label = "mean cwnd after 2 s (segments)"
    table = "cwnd"
    column = "cwnd_bytes"
    stat = "mean"                       # mean | max | min | last | p99 | sum
    after_s = 2.0                       # optional: only rows with x >= after_s (x column "time_s")
    scale = 0.000684931506849315        # optional multiplier (here 1/1460)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._tables import format_table, human
from ..scenario import Scenario
from ._base import Columns, ReportContext, ReportKind, is_number, point_tables, pyplot, save_figure
from .generic import write_generic

STATS = ("mean", "max", "min", "last", "p99", "sum")
MAX_COLUMNS = 4  # points per row of the figure


@dataclass(frozen=True)
class Panel:
    """One ``[[report.panels]]`` entry: columns ``y`` of a kept table against ``x``."""

    table: str
    y: tuple[str, ...]
    x: str = "time_s"
    where: Mapping[str, Any] | None = None
    ylabel: str = ""
    xlabel: str = "time (s)"
    scale: float = 1.0
    style: str = "line"  # line | steps | points


@dataclass(frozen=True)
class Number:
    """One ``[[report.numbers]]`` entry: a statistic of a column, printed per point."""

    label: str
    table: str
    column: str
    stat: str = "mean"
    where: Mapping[str, Any] | None = None
    after_s: float | None = None
    before_s: float | None = None
    scale: float = 1.0


@dataclass(frozen=True)
class PanelsConfig:
    tables: tuple[str, ...]
    panels: tuple[Panel, ...]
    numbers: tuple[Number, ...]


def parse(scn: Scenario) -> PanelsConfig:
    rep = scn.report
    tables = rep.get("tables", [])
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables) or not tables:
        raise scn.error("report", "tables", "expected a non-empty list of table names")
    entries = {kind: _entries(scn, kind, tables) for kind in ("panels", "numbers")}
    if not entries["panels"] and not entries["numbers"]:
        raise scn.error("report", None, "a panels report needs [[report.panels]] or "
                        "[[report.numbers]]")
    return PanelsConfig(tables=tuple(tables),
                        panels=tuple(_panel(item) for item in entries["panels"]),
                        numbers=tuple(_number(item) for item in entries["numbers"]))


def _entries(scn: Scenario, kind: str, tables: list[str]) -> list[dict[str, Any]]:
    """The checked ``[[report.<kind>]]`` tables (kind: panels or numbers)."""
    items = scn.report.get(kind, [])
    if not isinstance(items, list):
        raise scn.error("report", kind, f"expected an array of tables ([[report.{kind}]])")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise scn.error("report", kind, f"entry {i}: expected a table")
        table = item.get("table")
        if table not in tables:
            raise scn.error("report", kind,
                            f"entry {i}: table {table!r} is not in report.tables {tables}")
        if not isinstance(item.get("where", {}), dict):
            raise scn.error("report", kind, f"entry {i}: `where` must be a table")
        if kind == "panels":
            y = item.get("y")
            if not isinstance(y, list) or not y or not all(isinstance(c, str) for c in y):
                raise scn.error("report", kind, f"entry {i}: `y` must list column names")
        else:
            if not isinstance(item.get("column"), str):
                raise scn.error("report", kind, f"entry {i}: `column` must be a name")
            if item.get("stat", "mean") not in STATS:
                raise scn.error("report", kind,
                                f"entry {i}: `stat` must be one of {', '.join(STATS)}")
        for key in ("scale", "after_s", "before_s"):
            if key in item and not is_number(item[key]):
                raise scn.error("report", kind, f"entry {i}: `{key}` must be a number")
    return items


def _panel(item: dict[str, Any]) -> Panel:
    y = tuple(item["y"])
    return Panel(table=item["table"], y=y, x=str(item.get("x", "time_s")),
                 where=item.get("where"), ylabel=str(item.get("ylabel", ",".join(y))),
                 xlabel=str(item.get("xlabel", "time (s)")),
                 scale=float(item.get("scale", 1.0)), style=str(item.get("style", "line")))


def _number(item: dict[str, Any]) -> Number:
    after, before = item.get("after_s"), item.get("before_s")
    return Number(label=str(item.get("label", item["column"])), table=item["table"],
                  column=item["column"], stat=item.get("stat", "mean"), where=item.get("where"),
                  after_s=None if after is None else float(after),
                  before_s=None if before is None else float(before),
                  scale=float(item.get("scale", 1.0)))


def _filter(cols: Columns, where: Mapping[str, Any] | None) -> Columns:
    if not where or not cols:
        return cols
    n = len(next(iter(cols.values())))

    def same(cell: Any, wanted: Any) -> bool:
        if isinstance(cell, float) and isinstance(wanted, (int, float)):
            return cell == float(wanted)
        return str(cell) == str(wanted)

    keep = [i for i in range(n)
            if all(k in cols and same(cols[k][i], v) for k, v in where.items())]
    return {k: [v[i] for i in keep] for k, v in cols.items()}


def _stat(values: list[float], stat: str) -> float:
    if not values:
        return math.nan
    if stat == "mean":
        return sum(values) / len(values)
    if stat == "max":
        return max(values)
    if stat == "min":
        return min(values)
    if stat == "last":
        return values[-1]
    if stat == "sum":
        return sum(values)
    ordered = sorted(values)  # p99, nearest rank
    return ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]


def _number_value(item: Number, tables: dict[str, Columns]) -> float:
    cols = _filter(tables.get(item.table, {}), item.where)
    vals = cols.get(item.column, [])
    if (item.after_s is not None or item.before_s is not None) and "time_s" in cols:
        # One pass over (time, value) pairs: filtering twice would misalign them.
        lo = -math.inf if item.after_s is None else item.after_s
        hi = math.inf if item.before_s is None else item.before_s
        vals = [v for t, v in zip(cols["time_s"], vals, strict=False) if lo <= t < hi]
    nums = [float(v) for v in vals if isinstance(v, float)]
    return _stat(nums, item.stat) * item.scale


def write_panels(ctx: ReportContext, cfg: PanelsConfig) -> list[Path]:
    written = write_generic(ctx)
    data = point_tables(ctx, cfg.tables)
    if cfg.numbers:
        labels = [p.label() for p in ctx.plan.points]
        rows = [[item.label] + [human(_number_value(item, d)) for d in data]
                for item in cfg.numbers]
        ctx.print()
        ctx.print(format_table(["number"] + labels, rows, align_left=1))
    if cfg.panels:
        written.append(_figure(ctx, cfg.panels, data))
    return written


def _figure(ctx: ReportContext, panels: tuple[Panel, ...], data: list[dict[str, Columns]]) -> Path:
    plt = pyplot()
    points = ctx.plan.points
    npts = len(points)
    ncol = min(npts, MAX_COLUMNS)
    blocks = -(-npts // ncol)  # rows of points, each `len(panels)` panels tall
    nrow = blocks * len(panels)
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 2.0 * nrow + 0.9), squeeze=False)
    for c, d in enumerate(data):
        block, col = divmod(c, ncol)
        for r, item in enumerate(panels):
            ax = axes[block * len(panels) + r][col]
            _draw_panel(ax, item, _filter(d.get(item.table, {}), item.where))
            if r == 0:
                ax.set_title(points[c].label() if npts > 1 else ctx.title, fontsize=8)
            if r == len(panels) - 1:
                ax.set_xlabel(panels[-1].xlabel, fontsize=8)
    # The same panel of every point on one y scale: a reader compares them side by side (a
    # drop from 4000 to 500 Mb/s must not look like a wiggle on its own autoscaled axis).
    for r in range(len(panels)):
        row = [axes[(c // ncol) * len(panels) + r][c % ncol] for c in range(npts)]
        lows, highs = zip(*(ax.get_ylim() for ax in row), strict=True)
        for ax in row:
            ax.set_ylim(min(lows), max(highs))
    for c in range(npts, blocks * ncol):  # empty cells of the last row of points
        block, col = divmod(c, ncol)
        for r in range(len(panels)):
            axes[block * len(panels) + r][col].set_visible(False)
    if npts > 1:
        fig.suptitle(ctx.title, fontsize=10)
    return save_figure(ctx, fig, dpi=110)


def _draw_panel(ax: Any, item: Panel, cols: Columns) -> None:
    x = cols.get(item.x, [])
    for y in item.y:
        # Missing cells (an unlimited initial ssthresh is an empty cell) are not drawn.
        ys = [v if isinstance(v, float) else math.nan
              for v in cols.get(y, [])]
        scaled = [v * item.scale for v in ys]
        if item.style == "points":
            ax.plot(x, scaled, ".", ms=2, label=y)
        else:
            ax.plot(x, scaled, lw=1, label=y,
                    drawstyle="steps-post" if item.style == "steps" else "default")
    ax.set_ylabel(item.ylabel, fontsize=8)
    ax.grid(True, alpha=0.3)
    if len(item.y) > 1:
        ax.legend(fontsize=7, loc="best")


KINDS: tuple[ReportKind[Any], ...] = (
    ReportKind("panels", "time-series panels per point and printed numbers",
               parse, write_panels),
)

"""The ``panels`` report: time series of chosen result tables drawn as stacked panels,
one column per sweep point (e.g. the time-sequence, cwnd, SRTT and queue panels of the
seed-001 thesis), and chosen numbers printed.

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
    stat = "mean"                       # mean | max | min | last | p99
    after_s = 2.0                       # optional: only rows with x >= after_s (x column "time_s")
    scale = 0.000684931506849315        # optional multiplier (here 1/1460)
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._tables import format_table, human

if TYPE_CHECKING:
    from .report import ReportContext
    from .scenario import Scenario

STATS = ("mean", "max", "min", "last", "p99", "sum")
MAX_COLUMNS = 4  # points per row of the figure
UNLIMITED = 1e15  # values at or above this stand for "unlimited" (u64::MAX clamped to i64)


def check_panels(scn: Scenario) -> None:
    rep = scn.report
    tables = rep.get("tables", [])
    if not isinstance(tables, list) or not all(isinstance(t, str) for t in tables) or not tables:
        raise scn.error("report", "tables", "expected a non-empty list of table names")
    for kind in ("panels", "numbers"):
        items = rep.get(kind, [])
        if not isinstance(items, list):
            raise scn.error("report", kind, f"expected an array of tables ([[report.{kind}]])")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise scn.error("report", kind, f"entry {i}: expected a table")
            table = item.get("table")
            if table not in tables:
                raise scn.error("report", kind,
                                f"entry {i}: table {table!r} is not in report.tables {tables}")
            where = item.get("where", {})
            if not isinstance(where, dict):
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
    if not rep.get("panels") and not rep.get("numbers"):
        raise scn.error("report", None, "a panels report needs [[report.panels]] or "
                        "[[report.numbers]]")


def _load(path: Path) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {}
    if not path.exists():
        return cols
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        for name in header:
            cols[name] = []
        for row in reader:
            for name, cell in zip(header, row, strict=False):
                try:
                    value: Any = float(cell)
                except ValueError:
                    value = cell
                cols[name].append(value)
    return cols


def _filter(cols: dict[str, list[Any]], where: dict[str, Any]) -> dict[str, list[Any]]:
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


def _short_label(point: Any) -> str:
    """A sweep point's axis values, one per line, keys shortened to their last two parts."""
    from . import _toml

    parts = []
    for key, value in point.axis_values.items():
        short = ".".join(str(key).split(".")[-2:])
        parts.append(f"{short}={_toml.display(value)}")
    return "\n".join(parts) if parts else "base point"


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


def write_panels(ctx: ReportContext) -> list[Path]:
    from .report import write_generic
    from .sweep import POINTS_DIR, point_dirname

    written = write_generic(ctx)
    rep = ctx.config
    points = ctx.plan.points
    data = [
        {t: _load(ctx.out_dir / POINTS_DIR / point_dirname(p.index) / f"{t}.csv")
         for t in rep["tables"]}
        for p in points
    ]
    labels = [p.label() for p in points]

    numbers = rep.get("numbers", [])
    if numbers:
        rows = []
        for item in numbers:
            row = [str(item.get("label", item["column"]))]
            for d in data:
                cols = _filter(d.get(item["table"], {}), item.get("where", {}))
                vals = cols.get(item["column"], [])
                if ("after_s" in item or "before_s" in item) and "time_s" in cols:
                    # One pass over (time, value) pairs: filtering twice would misalign them.
                    lo = float(item.get("after_s", -math.inf))
                    hi = float(item.get("before_s", math.inf))
                    vals = [v for t, v in zip(cols["time_s"], vals, strict=False)
                            if lo <= t < hi]
                nums = [float(v) for v in vals if isinstance(v, float)]
                value = _stat(nums, item.get("stat", "mean")) * float(item.get("scale", 1.0))
                row.append(human(value))
            rows.append(row)
        ctx.print()
        ctx.print(format_table(["number"] + labels, rows, align_left=1))

    panels = rep.get("panels", [])
    if panels:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        npts = len(points)
        ncol = min(npts, MAX_COLUMNS)
        blocks = -(-npts // ncol)  # rows of points, each `len(panels)` panels tall
        nrow = blocks * len(panels)
        fig, axes = plt.subplots(nrow, ncol, figsize=(4.6 * ncol, 2.0 * nrow + 0.9),
                                 squeeze=False)
        for c, d in enumerate(data):
            block, col = divmod(c, ncol)
            for r, item in enumerate(panels):
                ax = axes[block * len(panels) + r][col]
                cols = _filter(d.get(item["table"], {}), item.get("where", {}))
                x = cols.get(item.get("x", "time_s"), [])
                for y in item["y"]:
                    # "Unlimited" values (an initial ssthresh of 2^63) are not drawn.
                    ys = [v if isinstance(v, float) and abs(v) < UNLIMITED else math.nan
                          for v in cols.get(y, [])]
                    scale = float(item.get("scale", 1.0))
                    style = item.get("style", "line")
                    if style == "points":
                        ax.plot(x, [v * scale for v in ys], ".", ms=2, label=y)
                    else:
                        ax.plot(x, [v * scale for v in ys], lw=1, label=y,
                                drawstyle="steps-post" if style == "steps" else "default")
                ax.set_ylabel(str(item.get("ylabel", ",".join(item["y"]))), fontsize=8)
                ax.grid(True, alpha=0.3)
                if len(item["y"]) > 1:
                    ax.legend(fontsize=7, loc="best")
                if r == 0:
                    ax.set_title(_short_label(points[c]) if npts > 1 else ctx.title, fontsize=8)
                if r == len(panels) - 1:
                    ax.set_xlabel(str(panels[-1].get("xlabel", "time (s)")), fontsize=8)
        for c in range(npts, blocks * ncol):  # empty cells of the last row of points
            block, col = divmod(c, ncol)
            for r in range(len(panels)):
                axes[block * len(panels) + r][col].set_visible(False)
        if npts > 1:
            fig.suptitle(ctx.title, fontsize=10)
        fig.tight_layout()
        path = ctx.out_dir / f"{ctx.scenario.id}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written

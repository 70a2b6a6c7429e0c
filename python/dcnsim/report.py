"""Reports: turn the records of a finished sweep into ``results.csv``, a figure and
printed tables. The scenario's ``[report].kind`` picks the function.

``results.csv`` is written from the records in grid order with a fixed spelling of
numbers and without the wall-clock columns, so the same scenario and seed give a
byte-identical file whether the sweep ran at once or was resumed.
"""

from __future__ import annotations

import difflib
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from . import _toml
from . import report_odctcp as _odctcp
from . import report_panels as _panels
from . import report_qcn as _qcn
from . import report_qcn_baseline as _qcn_baseline
from . import report_tcn as _tcn
from ._tables import format_table, human, write_csv
from .errors import UserError

if TYPE_CHECKING:
    from .scenario import Plan, Scenario

RESULTS_FILE = "results.csv"
# Columns that differ from run to run (wall clock) and so stay out of results.csv.
NONDETERMINISTIC = ("wall_s", "events")
GENERIC = "generic"


@dataclass
class ReportContext:
    plan: Plan
    records: list[dict[str, Any]]  # one per point, grid order: overrides + summary
    out_dir: Path
    out: IO[str] = field(default_factory=lambda: sys.stdout)

    @property
    def scenario(self) -> Scenario:
        return self.plan.scenario

    @property
    def config(self) -> dict[str, Any]:
        return self.plan.scenario.report

    @property
    def title(self) -> str:
        return self.plan.scenario.title + (" [quick]" if self.plan.quick else "")

    def print(self, text: str = "") -> None:
        print(text, file=self.out)


@dataclass(frozen=True)
class ReportKind:
    name: str
    description: str
    check: Callable[[Scenario], None]
    write: Callable[[ReportContext], list[Path]]


def _no_check(scn: Scenario) -> None:
    return None


# --------------------------------------------------------------------------- generic


def _summaries(ctx: ReportContext) -> list[dict[str, Any]]:
    return [rec["summary"] for rec in ctx.records]


def _summary_columns(summaries: Sequence[dict[str, Any]], exclude: Sequence[str] = ()) -> list[str]:
    cols: list[str] = []
    for summary in summaries:
        cols.extend(c for c in summary if c not in cols and c not in exclude
                    and c not in NONDETERMINISTIC)
    return cols


def _cell(value: Any) -> Any:
    if isinstance(value, (list, tuple, dict)):
        return _toml.display(value)
    return value


def write_generic(ctx: ReportContext) -> list[Path]:
    """results.csv: one row per point, the sweep axes then the summary columns."""
    from .scenario import VARIANTS_AXIS, variant_of  # late: scenario imports this module

    axes = [key for key, _ in ctx.plan.axes]
    summaries = _summaries(ctx)
    metrics = _summary_columns(summaries, exclude=axes)
    rows = []
    for rec in ctx.records:
        row = {key: _cell(rec["overrides"].get(key)) for key in axes}
        if VARIANTS_AXIS in row:
            row[VARIANTS_AXIS] = variant_of(ctx.scenario, rec["overrides"])
        row.update({k: v for k, v in rec["summary"].items() if k in metrics})
        rows.append(row)
    path = ctx.out_dir / RESULTS_FILE
    write_csv(path, axes + metrics, rows)

    wanted = ["goodput_mbps", "timeouts", "drops", "retransmits", "silent_s"]
    shown = [c for c in wanted if c in metrics] or metrics[:6]
    ctx.print(ctx.title)
    ctx.print(format_table(axes + shown,
                           [[human(row.get(c)) for c in axes + shown] for row in rows],
                           align_left=len(axes)))
    return [path]


# --------------------------------------------------------------------- incast-goodput

_INCAST_NEEDS = {"switch_buffer_bytes": "buffer_bytes", "servers": "flows",
                 "goodput_mbps": "goodput_mbps", "timeouts": "timeouts", "drops": "drops",
                 "silent_s": "silent_s", "rounds": "rounds"}
_DEFAULT_CEILING_MBPS = 973.0  # 1460 B of payload per 1500 B packet at 1 Gb/s


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_incast(scn: Scenario) -> None:
    cfg = scn.report
    ceiling = cfg.get("ceiling_mbps", _DEFAULT_CEILING_MBPS)
    if not _number(ceiling) or ceiling <= 0:
        raise scn.error("report", "ceiling_mbps", f"expected a positive number, got {ceiling!r}")
    table = cfg.get("source_silent_table")
    if table is None:
        return
    if not isinstance(table, dict):
        raise scn.error("report", "source_silent_table",
                        "expected a table of flows = [seconds per buffer size]")
    width = None
    for flows, values in table.items():
        if not flows.isdigit() or int(flows) < 1:
            raise scn.error("report", "source_silent_table",
                            f"key {flows!r} is not a number of flows")
        if not isinstance(values, list) or not values or not all(_number(v) for v in values):
            raise scn.error("report", "source_silent_table",
                            f"entry {flows}: expected an array of numbers, got {values!r}")
        if width is not None and len(values) != width:
            raise scn.error("report", "source_silent_table",
                            f"entry {flows} has {len(values)} values, others have {width}")
        width = len(values)


def _kb(buffer_bytes: float) -> str:
    """Label a buffer size: 1024-based sizes as KiB, others as (1000-based) KB."""
    kib = buffer_bytes / 1024
    return f"{kib:g}KiB" if kib == int(kib) else f"{buffer_bytes / 1000:g}KB"


def _round(value: float) -> str:
    return "nan" if math.isnan(value) else str(math.floor(value + 0.5))


def write_incast(ctx: ReportContext) -> list[Path]:
    """Goodput vs number of flows per buffer size (Devkota Fig. 8/9 style) + Table I."""
    summaries = _summaries(ctx)
    for need in _INCAST_NEEDS:
        if any(need not in s for s in summaries):
            raise UserError(f"report incast-goodput needs the summary column {need!r}, "
                            f"which the engine did not produce for {ctx.scenario.path}")
    extra = _summary_columns(summaries, exclude=[*_INCAST_NEEDS, "id", "flows"])
    rows = []
    for summary in summaries:
        row = {new: summary[old] for old, new in _INCAST_NEEDS.items()}
        row.update({k: summary[k] for k in extra if k in summary})
        rows.append(row)
    written = [ctx.out_dir / RESULTS_FILE]
    write_csv(written[0], list(_INCAST_NEEDS.values()) + extra, rows)

    import pandas as pd

    frame = pd.DataFrame(rows, columns=list(_INCAST_NEEDS.values()))
    # Several rows per (buffer, flows) (e.g. a seed axis) are averaged.
    grid = frame.groupby(["buffer_bytes", "flows"], sort=True).mean(numeric_only=True)
    buffers = sorted({int(b) for b, _ in grid.index})
    flows = sorted({int(f) for _, f in grid.index})
    ceiling = float(ctx.config.get("ceiling_mbps", _DEFAULT_CEILING_MBPS))

    png = ctx.out_dir / f"{ctx.scenario.id}.png"
    _plot_incast(png, grid, buffers, flows, ceiling, ctx.title)
    written.append(png)

    def cell(buffer: int, n: int, column: str) -> float | None:
        key = (buffer, n)
        return float(cast(float, grid.loc[key, column])) if key in grid.index else None

    header = ["flows"] + [_kb(b) for b in buffers]
    ctx.print(ctx.title)
    ctx.print()
    ctx.print("Goodput (Mb/s)")
    ctx.print(format_table(header, [
        [str(n)] + [_fmt(cell(b, n, "goodput_mbps"), "{:.0f}") for b in buffers] for n in flows]))

    source = _source_columns(ctx, buffers)
    duration = summaries[0].get("duration_s")
    of = f" of {human(duration)} s" if _number(duration) else ""
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


def _fmt(value: float | None, spec: str) -> str:
    return "" if value is None else spec.format(value)


def _source_columns(ctx: ReportContext, buffers: list[int]) -> dict[int, list[float]]:
    table = ctx.config.get("source_silent_table")
    if not table:
        return {}
    widths = {len(v) for v in table.values()}
    if widths != {len(buffers)}:
        ctx.print(f"(source silent-period table has {widths.pop()} buffer columns, these "
                  f"results have {len(buffers)}: source values not shown)")
        return {}
    return {int(k): list(v) for k, v in table.items()}


def _plot_incast(path: Path, grid: Any, buffers: list[int], flows: list[int], ceiling: float,
                 title: str) -> None:
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullLocator

    fig = Figure(figsize=(7.0, 4.6), layout="constrained")
    ax = fig.add_subplot()
    markers = "osD^v<>p*h"
    for i, buffer in enumerate(buffers):
        sub = grid.xs(buffer, level="buffer_bytes")
        ax.plot(sub.index.to_numpy(), sub["goodput_mbps"].to_numpy(),
                marker=markers[i % len(markers)], label=f"{_kb(buffer)} buffer")
    ax.axhline(ceiling, linestyle="--", color="0.4", linewidth=1,
               label=f"payload share of 1 Gb/s ({ceiling:g} Mb/s)")
    lo = min(0, math.floor(math.log2(max(min(flows), 1))))
    hi = max(6, math.ceil(math.log2(max(flows))))
    ticks = [2**k for k in range(lo, hi + 1)]
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(ticks[0] / 1.15, ticks[-1] * 1.15)
    ax.set_ylim(0, max(1000.0, ceiling * 1.05))
    ax.set_xlabel("number of flows (servers)")
    ax.set_ylabel("goodput (Mb/s)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.savefig(path, dpi=120)


# ------------------------------------------------------------------------- registry

REPORTS: dict[str, ReportKind] = {
    kind.name: kind
    for kind in (
        ReportKind(GENERIC, "results.csv and a printed table", _no_check, write_generic),
        ReportKind("incast-goodput", "goodput vs flows per buffer, silent-period table",
                   check_incast, write_incast),
        ReportKind("panels", "time-series panels per point and printed numbers",
                   _panels.check_panels, _panels.write_panels),
        *(ReportKind(*k) for k in _odctcp.kinds()),
        ReportKind("tcn", "seed-002 TCN figures", _tcn.check_tcn, _tcn.write_tcn),
        ReportKind("qcn-incast", "incast goodput plus Table III (avg minrate, CNMs) at one buffer",
                   _qcn.check_qcn_incast, _qcn.write_qcn_incast),
        ReportKind("variant-table", "one metric, a row per axis value, a column per variant",
                   _qcn.check_variant_table, _qcn.write_variant_table),
        ReportKind("qcn-baseline", "variant table plus per-flow rates, RP rates and queue over "
                   "time, group means and rate spread during congestion",
                   _qcn_baseline.check_qcn_baseline, _qcn_baseline.write_qcn_baseline),
    )
}


def resolve(scn: Scenario) -> tuple[ReportKind, str | None]:
    """The report kind of a scenario, and a note when falling back to the generic one.

    A kind close to a known one is taken as a typo (``ScenarioError``); any other
    unknown kind falls back to the generic report (for scenarios whose report
    function does not exist yet).
    """
    name = scn.report.get("kind", GENERIC)
    if name in REPORTS:
        return REPORTS[name], None
    close = difflib.get_close_matches(name, list(REPORTS), n=1, cutoff=0.8)
    if close:
        raise scn.error("report", "kind",
                        f"unknown report kind {name!r}; did you mean {close[0]!r}? "
                        f"(known: {', '.join(REPORTS)})")
    return REPORTS[GENERIC], (f"no report kind {name!r} yet (known: {', '.join(REPORTS)}); "
                              "using the generic report")


def check_config(scn: Scenario) -> None:
    """Check ``[report]`` (called when a scenario file is loaded)."""
    kind, _ = resolve(scn)
    kind.check(scn)


def write_report(ctx: ReportContext) -> list[Path]:
    kind, _ = resolve(ctx.scenario)
    return kind.write(ctx)

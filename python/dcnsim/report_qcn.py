"""QCN reports (seed 000, Devkota thesis).

``qcn-incast``: the incast-goodput report (figure, goodput grid, silent-period table)
plus, at one buffer size (``table_buffer``, default 128 KB), the thesis's Table III
columns -- average minimum RP rate ("avg minrate"), that times n, goodput and timeouts
per flow -- and the CNMs sent (Table VI), each beside the source's numbers when the
scenario gives them:

    [report]
    kind = "qcn-incast"
    table_buffer = 131072
    source_table3 = { 2 = [512.19, 1024.37, 966.61, 0], ... }   # minrate, x n, goodput, TO/flow
    source_cnms = { 2 = 4740, ... }                               # Table VI row
    source_timeouts_per_flow = { 16 = 0.12, ... }                 # Table VII row
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._tables import format_table

if TYPE_CHECKING:
    from .report import ReportContext
    from .scenario import Scenario


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_qcn_incast(scn: Scenario) -> None:
    from .report import check_incast

    check_incast(scn)
    cfg = scn.report
    col = cfg.get("goodput_column")
    if col is not None and not isinstance(col, str):
        raise scn.error("report", "goodput_column", f"expected a summary column name, got {col!r}")
    buf = cfg.get("table_buffer", 131072)
    if not _num(buf) or buf <= 0:
        raise scn.error("report", "table_buffer", f"expected a buffer size in bytes, got {buf!r}")
    for key, width in (("source_table3", 4), ("source_cnms", 0),
                       ("source_timeouts_per_flow", 0)):
        table = cfg.get(key)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise scn.error("report", key, "expected a table keyed by the number of flows")
        for flows, values in table.items():
            if not str(flows).isdigit():
                raise scn.error("report", key, f"key {flows!r} is not a number of flows")
            ok = (isinstance(values, list) and len(values) == width
                  and all(_num(v) for v in values)) if width else _num(values)
            if not ok:
                want = f"an array of {width} numbers" if width else "a number"
                raise scn.error("report", key, f"entry {flows}: expected {want}, got {values!r}")


def _f(v: float | None, spec: str = "{:.2f}") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return spec.format(v)


def write_qcn_incast(ctx: ReportContext) -> list[Path]:
    from .report import _summaries, write_incast

    cfg = ctx.config
    column = cfg.get("goodput_column")
    if column:
        # Plot and tabulate another goodput (e.g. the synchronized reads alone in the mixed
        # set-up); the total stays in results.csv as total_goodput_mbps.
        from dataclasses import replace

        records = []
        for rec in ctx.records:
            s = dict(rec["summary"])
            s["total_goodput_mbps"] = s.get("goodput_mbps")
            s["goodput_mbps"] = s.get(column, float("nan"))
            records.append({**rec, "summary": s})
        ctx = replace(ctx, records=records)
    written = write_incast(ctx)
    buf = int(cfg.get("table_buffer", 131072))
    rows: dict[int, list[dict[str, Any]]] = {}
    for s in _summaries(ctx):
        if int(s.get("switch_buffer_bytes", -1)) == buf:
            rows.setdefault(int(s["servers"]), []).append(s)
    if not rows:
        ctx.print(f"(no point with a {buf}-byte buffer: Table III not printed)")
        return written

    def mean(items: list[dict[str, Any]], key: str) -> float | None:
        vals = [float(x[key]) for x in items if _num(x.get(key))]
        return sum(vals) / len(vals) if vals else None

    t3 = {int(k): v for k, v in (cfg.get("source_table3") or {}).items()}
    cn = {int(k): v for k, v in (cfg.get("source_cnms") or {}).items()}
    t7 = {int(k): v for k, v in (cfg.get("source_timeouts_per_flow") or {}).items()}
    header = ["n", "avg minrate", "x n", "goodput", "timeouts/flow", "CNMs sent"]
    table = []
    for n in sorted(rows):
        items = rows[n]
        mr = mean(items, "avg_minrate_mbps")
        gp = mean(items, "goodput_mbps")
        to = mean(items, "timeouts")
        cnm = mean(items, "cnm_sent")
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
    per_s = _f(mean(rows[min(rows)], "duration_s"), "{:g}")
    ctx.print(f"At {buf / 1024:g} KiB (Table III; Mb/s; per {per_s} s)"
              + ("; ours (source)" if (t3 or cn or t7) else ""))
    ctx.print(format_table(header, table))
    return written

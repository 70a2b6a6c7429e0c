"""Reports of the ODCTCP thesis reproductions.

``odctcp-after-cwr`` (Figs 5.5, 5.6, 5.8)
    From the sender-side ``seq`` trace: for every data segment carrying CWR, the number of
    data segments sent after it until the first ACK that covers it has arrived (segments
    sent in response to that ACK included) — the thesis's "segments transmitted for
    roughly one RTT" after CWR (8 with a DCTCP receiver, 12 with a standard one). Only CWR
    segments after ``after_s`` (default 1 s) count.

``odctcp-fct`` (Figs 7.1–7.9, 7.11–7.14, 7.16)
    Transfer (completion) times from the ``completions`` table, grouped by the sweep axis
    ``[report] group`` (e.g. ``tcp.cc``) and either by the sweep axis ``x`` (e.g. the flow
    size) or by size bins ``bins`` (bytes, for the benchmark; runs of different seeds are
    pooled, the error bar is the standard deviation of the per-run means). Only flows of
    the app ``app`` (index) when given. Also the mean final SRTT of those flows.

``odctcp-fairness`` (Figs 7.10, 7.15)
    Jain's index and mean per-flow throughput (engine summary, sampled every
    ``measure.throughput_interval``) against the sweep axis ``x``, one line per ``group``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._tables import format_table, human
from ..scenario import Scenario
from ._base import Columns, ReportContext, ReportKind, is_number, point_tables, pyplot, save_figure
from .generic import write_generic


def _need_tables(scn: Scenario, names: list[str]) -> None:
    tables = scn.report.get("tables", [])
    if not isinstance(tables, list) or any(n not in tables for n in names):
        raise scn.error("report", "tables", f"this report needs tables = {names!r}")


def _mean_std(xs: list[float]) -> tuple[float, float]:
    if not xs:
        return math.nan, math.nan
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, 0.0
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


# ------------------------------------------------------------------ after CWR


@dataclass(frozen=True)
class AfterCwrConfig:
    after_s: float = 1.0  # CWR segments before this time are not counted


def parse_after_cwr(scn: Scenario) -> AfterCwrConfig:
    _need_tables(scn, ["seq"])
    after = scn.report.get("after_s", 1.0)
    if not is_number(after):
        raise scn.error("report", "after_s", f"expected a time in seconds, got {after!r}")
    return AfterCwrConfig(after_s=float(after))


def cwr_events(seq: Columns, after_s: float = 0.0) -> list[tuple[float, int]]:
    """(time, count) of every CWR segment sent at or after ``after_s`` whose covering ACK
    arrived: the data segments sent after it until (and at) that ACK."""
    n = len(seq.get("time_s", []))
    rows = [(float(seq["time_s"][i]), str(seq["what"][i]), int(seq["seq"][i]),
             int(seq["cwr"][i])) for i in range(n)]
    events = []
    for i, (t, what, s, cwr) in enumerate(rows):
        if what != "data" or not cwr or t < after_s:
            continue
        # The ACK that covers the CWR segment.
        t_ack = None
        for t2, w2, s2, _ in rows[i + 1:]:
            if w2 == "ack" and s2 > s:
                t_ack = t2
                break
        if t_ack is None:
            continue
        events.append((t, sum(1 for t2, w2, _, _ in rows[i + 1:]
                              if w2 == "data" and t2 <= t_ack)))
    return events


def segments_after_cwr(seq: Columns, after_s: float = 0.0) -> list[int]:
    """Data segments sent after each CWR segment until (and at) the first ACK covering it."""
    return [count for _, count in cwr_events(seq, after_s)]


def write_after_cwr(ctx: ReportContext, cfg: AfterCwrConfig) -> list[Path]:
    written = write_generic(ctx)
    data = point_tables(ctx, ["seq"])
    after = cfg.after_s
    rows = []
    per_point = []
    for p, d in zip(ctx.plan.points, data, strict=True):
        counts = segments_after_cwr(d["seq"], after)
        per_point.append(counts)
        m, s = _mean_std([float(x) for x in counts])
        med = sorted(counts)[len(counts) // 2] if counts else math.nan
        rows.append([p.label(), str(len(counts)), human(m), human(s), human(med)])
    ctx.print()
    ctx.print(f"segments sent in the RTT after a CWR segment (CWR segments after {after} s)")
    ctx.print(format_table(["point", "CWR segs", "mean", "std", "median"], rows, align_left=1))

    # Row 0: the zoom of each point; row 1: the count after every CWR segment over time
    # (the source's count goes on these panels).
    fig, axes = pyplot().subplots(2, len(data), figsize=(6 * len(data), 6.5), squeeze=False,
                                  height_ratios=[3, 2])
    for c, (p, d) in enumerate(zip(ctx.plan.points, data, strict=True)):
        ax = axes[0][c]
        _draw_cwr_zoom(ax, d["seq"], after)
        m, _ = _mean_std([float(x) for x in per_point[c]])
        ax.set_title(f"{ctx.title}\n{p.label()}: {human(m)} segments after CWR", fontsize=9)
        events = cwr_events(d["seq"], after)
        ax = axes[1][c]
        ax.plot([e[0] for e in events], [e[1] for e in events], "o", ms=3, color="C0",
                label="dcnsim")
        ax.set_xlabel("time of the CWR segment (s)")
        ax.set_ylabel("segments after CWR")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    written.append(save_figure(ctx, fig, dpi=110))
    return written


def _draw_cwr_zoom(ax: Any, seq: Columns, after: float) -> None:
    """Data and ACK numbers over the 0.25 s from just before the first counted CWR."""
    ts = [float(t) for t in seq.get("time_s", [])]
    cwr_t = [t for t, w, f in zip(ts, seq.get("what", []), seq.get("cwr", []), strict=False)
             if w == "data" and f and t >= after]
    t0 = cwr_t[0] - 0.05 if cwr_t else after
    t1 = t0 + 0.25
    for what, mark, colour in (("data", "s", "C0"), ("ack", "_", "C2")):
        xs = [t for t, w in zip(ts, seq["what"], strict=False) if w == what and t0 <= t <= t1]
        ys = [float(v) for t, w, v in zip(ts, seq["what"], seq["seq"], strict=False)
              if w == what and t0 <= t <= t1]
        ax.plot(xs, ys, mark, ms=4, color=colour, label=what)
    for flag, colour in (("cwr", "red"), ("ece", "orange")):
        xs = [t for t, v in zip(ts, seq.get(flag, []), strict=False) if v and t0 <= t <= t1]
        ys = [float(v) for t, f, v in zip(ts, seq.get(flag, []), seq["seq"], strict=False)
              if f and t0 <= t <= t1]
        ax.plot(xs, ys, "o", mfc="none", ms=8, color=colour, label=flag.upper())
    ax.set_xlabel("time (s)")
    ax.set_ylabel("sequence / ACK number (bytes)")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)


# ------------------------------------------------------------------ transfer times


@dataclass(frozen=True)
class FctConfig:
    group: tuple[str, ...]  # the sweep axes whose values name a line
    x: str | None = None  # the sweep axis on the x axis, or
    bins: tuple[int, ...] | None = None  # byte edges of the size bins
    app: int | None = None  # only flows of this app


def parse_fct(scn: Scenario) -> FctConfig:
    _need_tables(scn, ["completions", "flows"])
    rep = scn.report
    g = rep.get("group")
    names_ok = isinstance(g, list) and g and all(isinstance(x, str) for x in g)
    if not (isinstance(g, str) or names_ok):
        raise scn.error("report", "group", "expected the sweep axis (or axes) naming the lines")
    if ("x" in rep) == ("bins" in rep):
        raise scn.error("report", "x", "give either `x` (a sweep axis) or `bins` (bytes)")
    bins = rep.get("bins")
    if bins is not None and (not isinstance(bins, list) or len(bins) < 2
                             or any(not isinstance(b, int) for b in bins)
                             or bins != sorted(bins)):
        raise scn.error("report", "bins", "expected increasing integer byte edges")
    app = rep.get("app")
    if app is not None and (not isinstance(app, int) or isinstance(app, bool)):
        raise scn.error("report", "app", f"expected an app index, got {app!r}")
    return FctConfig(group=tuple(g) if isinstance(g, list) else (str(g),),
                     x=str(rep["x"]) if "x" in rep else None,
                     bins=tuple(bins) if bins is not None else None, app=app)


def _kb(size: float) -> str:
    """Bytes as KB (1000 B) without an exponent: 1000 -> "1", 10000001 -> "10000"."""
    text = f"{size / 1e3:.4f}".rstrip("0").rstrip(".")
    return text if "." not in text or size < 1e4 else f"{size / 1e3:.0f}"


def _bin_labels(bins: tuple[int, ...]) -> list[str]:
    """The labels of the size bins in size order, e.g. ``1-10 KB``, ``1000-10000 KB``."""
    return [f"{_kb(bins[k])}-{_kb(bins[k + 1])} KB" for k in range(len(bins) - 1)]


def _bin_label(bins: tuple[int, ...], size: float) -> str | None:
    k = next((i for i in range(len(bins) - 1) if bins[i] <= size < bins[i + 1]), None)
    return None if k is None else _bin_labels(bins)[k]


# (group, x or bin label) -> per-run (mean transfer time s, mean final SRTT s)
FctRows = dict[tuple[str, str], list[tuple[float, float]]]


def fct_rows(ctx: ReportContext, cfg: FctConfig) -> FctRows:
    """(group, x or bin label) -> per-run (mean transfer time s, mean final SRTT s)."""
    data = point_tables(ctx, ["completions", "flows"])
    out: FctRows = {}
    for p, d in zip(ctx.plan.points, data, strict=True):
        group = " ".join(str(p.overrides.get(k, "")) for k in cfg.group)
        fl = d["flows"]
        app_of = {int(f): int(a) for f, a in zip(fl.get("flow", []), fl.get("app", []),
                                                 strict=False)}
        srtt_of = {int(f): float(s) for f, s in zip(fl.get("flow", []), fl.get("srtt_s", []),
                                                    strict=False)}
        comp = d["completions"]
        by_key: dict[str, list[tuple[float, float]]] = {}
        for f, b, s, e in zip(comp.get("flow", []), comp.get("bytes", []),
                              comp.get("start_s", []), comp.get("end_s", []), strict=False):
            if cfg.app is not None and app_of.get(int(f)) != cfg.app:
                continue
            if cfg.bins is not None:
                label = _bin_label(cfg.bins, b)
                if label is None:
                    continue
                key = label
            else:
                key = str(p.overrides.get(cfg.x or "", ""))
            by_key.setdefault(key, []).append((float(e) - float(s), srtt_of.get(int(f), 0.0)))
        for key, vals in by_key.items():
            out.setdefault((group, key), []).append(
                (sum(v[0] for v in vals) / len(vals), sum(v[1] for v in vals) / len(vals)))
    return out


def write_fct(ctx: ReportContext, cfg: FctConfig) -> list[Path]:
    written = write_generic(ctx)
    rows = fct_rows(ctx, cfg)
    groups: list[str] = []
    keys: list[str] = []
    for g, k in rows:
        if g not in groups:
            groups.append(g)
        if k not in keys:
            keys.append(k)
    if cfg.bins is not None:  # size order, not the order in which the bins were first seen
        order = _bin_labels(cfg.bins)
        keys.sort(key=order.index)
    table = []
    for k in keys:
        line = [k]
        for g in groups:
            m, s = _mean_std([v[0] * 1e3 for v in rows.get((g, k), [])])
            r, _ = _mean_std([v[1] * 1e3 for v in rows.get((g, k), [])])
            line += [f"{human(m)} ± {human(s)}", human(r)]
        if len(groups) >= 2:
            a, _ = _mean_std([v[0] for v in rows.get((groups[0], k), [])])
            b, _ = _mean_std([v[0] for v in rows.get((groups[1], k), [])])
            line.append(human(a / b) if b else "-")
        table.append(line)
    head = [cfg.x if cfg.x is not None else "size bin"]
    for g in groups:
        head += [f"{g} time ms", f"{g} srtt ms"]
    if len(groups) >= 2:
        head.append(f"{groups[0]}/{groups[1]}")
    ctx.print()
    ctx.print("mean transfer time (± std across runs or flows' runs) and mean final SRTT")
    ctx.print(format_table(head, table, align_left=1))
    written.append(_fct_figure(ctx, rows, groups, keys))
    return written


def _fct_figure(ctx: ReportContext, rows: FctRows, groups: list[str], keys: list[str]) -> Path:
    """Transfer time and SRTT per x value or size bin (in ``keys`` order), a line per group;
    with exactly two groups a third panel of the first's mean time over the second's."""
    ratio = len(groups) == 2
    fig, axes = pyplot().subplots(1, 3 if ratio else 2, figsize=(15 if ratio else 11, 4))
    ax1, ax2 = axes[0], axes[1]
    xs = list(range(len(keys)))
    for gi, g in enumerate(groups):
        ms = [_mean_std([v[0] * 1e3 for v in rows.get((g, k), [])]) for k in keys]
        rs = [_mean_std([v[1] * 1e3 for v in rows.get((g, k), [])]) for k in keys]
        off = (gi - (len(groups) - 1) / 2) * 0.08
        ax1.errorbar([x + off for x in xs], [m for m, _ in ms], yerr=[s for _, s in ms],
                     marker="o", capsize=3, label=g)
        ax2.errorbar([x + off for x in xs], [m for m, _ in rs], yerr=[s for _, s in rs],
                     marker="s", capsize=3, label=g)
    for ax, yl in ((ax1, "transfer time (ms)"), (ax2, "SRTT (ms)")):
        ax.set_xticks(xs)
        ax.set_xticklabels(keys, rotation=30, fontsize=7)
        ax.set_ylabel(yl)
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    if ratio:
        ax3 = axes[2]
        means = [[_mean_std([v[0] for v in rows.get((g, k), [])])[0] for k in keys]
                 for g in groups]
        ax3.plot(xs, [a / b if b else math.nan for a, b in zip(*means, strict=True)], "o-",
                 color="C2", label=f"dcnsim {groups[0]}/{groups[1]}")
        ax3.axhline(1.0, color="0.8", linewidth=1)
        ax3.set_xticks(xs)
        ax3.set_xticklabels(keys, rotation=30, fontsize=7)
        ax3.set_ylabel(f"mean transfer time, {groups[0]} / {groups[1]}")
        ax3.grid(True, alpha=0.3)
        ax3.legend(fontsize=8)
    fig.suptitle(ctx.title, fontsize=10)
    return save_figure(ctx, fig, dpi=110)


# ------------------------------------------------------------------ fairness


@dataclass(frozen=True)
class FairnessConfig:
    x: str  # the sweep axis on the x axis
    group: str  # the sweep axis whose values name a line


def parse_fairness(scn: Scenario) -> FairnessConfig:
    rep = scn.report
    for k in ("x", "group"):
        if not isinstance(rep.get(k), str):
            raise scn.error("report", k, "expected the name of a sweep axis")
    return FairnessConfig(x=rep["x"], group=rep["group"])


def write_fairness(ctx: ReportContext, cfg: FairnessConfig) -> list[Path]:
    written = write_generic(ctx)
    series: dict[str, list[tuple[float, float, float, float]]] = {}
    for rec in ctx.records:
        g = str(rec["overrides"].get(cfg.group, ""))
        x = float(rec["overrides"].get(cfg.x, math.nan))
        s = rec["summary"]
        series.setdefault(g, []).append((x, float(s.get("jain_index", math.nan)),
                                         float(s.get("flow_tput_mean_mbps", math.nan)),
                                         float(s.get("flow_tput_std_mbps", math.nan))))
    rows = [[g, human(x), human(j), human(m), human(sd)]
            for g, pts in series.items() for x, j, m, sd in pts]
    ctx.print()
    ctx.print(format_table([cfg.group, cfg.x, "Jain (mean of 50 ms)", "mean Mb/s",
                            "std Mb/s"], rows, align_left=1))

    fig, (ax1, ax2) = pyplot().subplots(1, 2, figsize=(11, 4))
    for g, pts in series.items():
        pts = sorted(pts)
        ax1.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=g)
        ax2.errorbar([p[0] for p in pts], [p[2] for p in pts], yerr=[p[3] for p in pts],
                     marker="s", capsize=3, label=g)
    ax1.set_ylabel("Jain's fairness index")
    ax1.set_ylim(0, 1.05)
    ax2.set_ylabel("mean throughput per flow (Mb/s)")
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xlabel(cfg.x)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(ctx.title, fontsize=10)
    written.append(save_figure(ctx, fig, dpi=110))
    return written


KINDS: tuple[ReportKind[Any], ...] = (
    ReportKind("odctcp-after-cwr", "segments sent in the RTT after CWR, time-sequence zoom",
               parse_after_cwr, write_after_cwr),
    ReportKind("odctcp-fct", "transfer time vs size (or size bin) per group, with SRTT",
               parse_fct, write_fct),
    ReportKind("odctcp-fairness", "Jain's index and mean throughput vs flows per group",
               parse_fairness, write_fairness),
)

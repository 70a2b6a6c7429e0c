"""The ``qcn-baseline`` report (Devkota 2010 ch. VI, Figs. 34-49).

The thesis shows, per QCN variant, the throughput of every source into the hotspot and the
hotspot queue over time, with the drops in the caption. This report prints the drops (and
any other summary metric) per variant beside the thesis's, as ``variant-table`` does, and
adds from the kept per-point tables:

- a figure with one column per chosen point and three panels: delivered rate of each flow
  into the hotspot (table ``app_rate``) and their total, the QCN RP rate allocated to each
  of those flows (table ``rp_rate``, limiter ``app<i>``), and the bottleneck queue in
  1500-B packets (table ``queue``);
- per point, during the congestion window: the mean rate of each named group of flows
  beside the source's (baseline 3's "culprits 0.5 Gb/s, victims 7 Gb/s"), the spread of
  per-flow rates into the hotspot (baseline 4's "300-1100 Mb/s"), and the mean queue.

::

    [report]
    kind = "qcn-baseline"
    metric = "drops"; metrics = [...]; source = {...}; rows = "axis"   # as variant-table
    tables = ["app_rate", "rp_rate", "queue"]     # kept from every point
    hotspot = "n7"                 # flows whose dst is this node are plotted
    bottleneck = "es3->n7"         # queue port (default: the first port of the queue table)
    figure_variants = ["unmodified", "ar+ds"]     # default: every variant
    window = [0.1, 0.9]            # seconds; default: from the first to the last
                                   # topology.rate_changes[].at of the point, else the whole run
    groups = { culprits = { dst = "n7" }, victims = { apps = [4, 5, 6] } }
    source_groups = { culprits = 500, victims = 7000 }        # Mb/s
    source_spread = { unmodified = [300, 1100] }              # Mb/s, per variant

Rates are the ``app_rate`` samples (Mb/s received per ``measure.flow_rate_interval``) whose
interval lies inside the window. "Per-flow mean" is a flow's mean over the window; the
"sample" spread is the 5th-95th percentile of all samples of the hotspot flows (the
thesis's figures show 10-ms-scale rates, so both are printed).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _toml
from .._tables import format_table
from ..scenario import Point, Scenario, overrides_key, variant_of
from ._base import Columns, ReportContext, ReportKind, is_number, point_tables, save_figure
from .qcn import VariantTableConfig, parse_variant_table, variant_figure, write_variant_table

NEEDED_TABLES = ("app_rate", "queue")
PACKET_BYTES = 1500.0  # the baselines' frames (ch. VI: 1500-B CBR)
_UNITS = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


@dataclass(frozen=True)
class Group:
    """A named group of flows: those into node ``dst``, or the apps ``apps``."""

    dst: str | None = None
    apps: tuple[int, ...] | None = None


@dataclass(frozen=True)
class QcnBaselineConfig:
    table: VariantTableConfig
    tables: tuple[str, ...]  # kept from every point
    hotspot: str
    bottleneck: str | None
    figure_variants: tuple[str, ...]
    window: tuple[float, float] | None  # seconds; None: from the point's rate changes
    groups: Mapping[str, Group]
    source_groups: Mapping[str, float]  # group -> Mb/s
    source_spread: Mapping[str, tuple[float, float]]  # variant -> (low, high) Mb/s


def parse(scn: Scenario) -> QcnBaselineConfig:
    table = parse_variant_table(scn)
    rep = scn.report
    tables = rep.get("tables")
    if not isinstance(tables, list) or not all(t in tables for t in NEEDED_TABLES):
        raise scn.error("report", "tables",
                        f"a qcn-baseline report keeps at least {list(NEEDED_TABLES)} "
                        "(and rp_rate for the RP panel)")
    for key in ("hotspot", "bottleneck"):
        if key in rep and not isinstance(rep[key], str):
            raise scn.error("report", key, f"expected a node/port name, got {rep[key]!r}")
    if "hotspot" not in rep:
        raise scn.error("report", "hotspot", "name the hotspot node (flows into it are plotted)")
    fv = rep.get("figure_variants", list(scn.variants))
    if not isinstance(fv, list) or any(not isinstance(v, str) or v not in scn.variants
                                       for v in fv):
        raise scn.error("report", "figure_variants",
                        f"expected a list of [[sweep.variants]] labels, got {fv!r}")
    window = rep.get("window")
    if window is not None and not (isinstance(window, list) and len(window) == 2
                                   and all(is_number(x) for x in window)
                                   and window[0] < window[1]):
        raise scn.error("report", "window", f"expected [start_s, end_s], got {window!r}")
    groups = _groups(scn)
    sg = rep.get("source_groups", {})
    if not isinstance(sg, dict) or any(k not in groups or not is_number(v) for k, v in sg.items()):
        raise scn.error("report", "source_groups", "expected group name = Mb/s for named groups")
    ss = rep.get("source_spread", {})
    if not isinstance(ss, dict) or any(
            k not in scn.variants or not (isinstance(v, list) and len(v) == 2
                                          and all(is_number(x) for x in v)) for k, v in ss.items()):
        raise scn.error("report", "source_spread", "expected variant label = [low, high] (Mb/s)")
    return QcnBaselineConfig(
        table=table, tables=tuple(str(t) for t in tables), hotspot=rep["hotspot"],
        bottleneck=rep.get("bottleneck"), figure_variants=tuple(fv),
        window=None if window is None else (float(window[0]), float(window[1])),
        groups=groups, source_groups=sg, source_spread={k: (v[0], v[1]) for k, v in ss.items()})


def _groups(scn: Scenario) -> dict[str, Group]:
    groups = scn.report.get("groups", {})
    if not isinstance(groups, dict):
        raise scn.error("report", "groups",
                        "expected a table of name = { dst = ... | apps = [...] }")
    out = {}
    for name, sel in groups.items():
        ok = isinstance(sel, dict) and len(sel) == 1 and (
            (isinstance(sel.get("dst"), str))
            or (isinstance(sel.get("apps"), list) and all(isinstance(a, int) for a in sel["apps"])))
        if not ok:
            raise scn.error("report", "groups", f"group {name!r}: expected "
                            "{ dst = \"node\" } or { apps = [i, ...] }")
        out[name] = Group(apps=tuple(sel["apps"])) if "apps" in sel else Group(dst=sel["dst"])
    return out


def _seconds(text: Any) -> float | None:
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ps|ns|us|ms|s)\s*", str(text))
    return float(m.group(1)) * _UNITS[m.group(2)] if m else None


def _window(cfg: QcnBaselineConfig, scn: Scenario, point: Point,
            duration: float | None) -> tuple[float, float]:
    if cfg.window is not None:
        lo, hi = cfg.window
        return lo, hi if duration is None else min(hi, float(duration))
    changes = scn.data.get("topology", {}).get("rate_changes", [])
    times = []
    for i, ch in enumerate(changes):
        at = point.overrides.get(f"topology.rate_changes.{i}.at", ch.get("at"))
        t = _seconds(at)
        if t is not None:
            times.append(t)
    if len(times) >= 2:
        return min(times), max(times)
    end = duration if duration is not None else math.inf
    return (times[0] if times else 0.0), end


def _select(cols: Columns, sel: Group) -> set[int]:
    apps = cols.get("app", [])
    if sel.apps is not None:
        return {int(a) for a in sel.apps}
    return {int(a) for a, d in zip(apps, cols.get("dst", []), strict=False) if d == sel.dst}


def _per_app(cols: Columns, lo: float, hi: float, dt: float) -> dict[int, list[float]]:
    """app -> rate samples whose interval (t - dt, t] lies in [lo, hi]."""
    out: dict[int, list[float]] = {}
    eps = 1e-12
    for t, a, r in zip(cols.get("time_s", []), cols.get("app", []), cols.get("rate_mbps", []),
                       strict=False):
        if t - dt >= lo - eps and t <= hi + eps:
            out.setdefault(int(a), []).append(float(r))
    return out


def _interval(cols: Columns) -> float:
    times = sorted(set(cols.get("time_s", [])))
    return times[1] - times[0] if len(times) > 1 else (times[0] if times else 0.0)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return math.nan
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _g(v: float, spec: str = "{:.0f}") -> str:
    return "" if v is None or math.isnan(v) else spec.format(v)


def _bottleneck(cfg: QcnBaselineConfig, queue: Columns) -> Any:
    """The queue port shown: ``bottleneck``, else the first port of the queue table."""
    return cfg.bottleneck or (queue.get("port") or [None])[0]


def point_numbers(cfg: QcnBaselineConfig, scn: Scenario, point: Point,
                  data: dict[str, Columns], duration: float | None) -> dict[str, Any]:
    """The printed numbers of one point (also used by tests)."""
    rates = data.get("app_rate", {})
    lo, hi = _window(cfg, scn, point, duration)
    dt = _interval(rates)
    per_app = _per_app(rates, lo, hi, dt)
    means = {a: _mean(v) for a, v in per_app.items()}
    out: dict[str, Any] = {"window": (lo, hi)}
    for name, sel in cfg.groups.items():
        chosen = _select(rates, sel)
        out[f"group:{name}"] = _mean([means[a] for a in sorted(chosen) if a in means])
    hot = _select(rates, Group(dst=cfg.hotspot))
    flow_means = [means[a] for a in sorted(hot) if a in means]
    samples = [r for a in sorted(hot) for r in per_app.get(a, [])]
    out["flow_mean_min"] = min(flow_means) if flow_means else math.nan
    out["flow_mean_max"] = max(flow_means) if flow_means else math.nan
    out["sample_p5"] = _pct(samples, 0.05)
    out["sample_p95"] = _pct(samples, 0.95)
    totals: dict[float, float] = {}
    for t, a, r in zip(rates.get("time_s", []), rates.get("app", []), rates.get("rate_mbps", []),
                       strict=False):
        if int(a) in hot and t - dt >= lo - 1e-12 and t <= hi + 1e-12:
            totals[t] = totals.get(t, 0.0) + float(r)
    out["hotspot_total"] = _mean(list(totals.values()))
    q = data.get("queue", {})
    port = _bottleneck(cfg, q)
    qs = [float(b) / PACKET_BYTES for t, p, b in zip(q.get("time_s", []), q.get("port", []),
                                                      q.get("bytes", []), strict=False)
          if p == port and lo <= t <= hi]
    out["queue_mean_pkts"] = _mean(qs)
    out["queue_max_pkts"] = max(qs) if qs else math.nan
    return out


# A point shown in the report: (point, label, its kept tables, point_numbers).
Shown = tuple[Point, str, dict[str, Columns], dict[str, Any]]


def write_qcn_baseline(ctx: ReportContext, cfg: QcnBaselineConfig) -> list[Path]:
    written = write_variant_table(ctx, cfg.table)
    scn = ctx.scenario
    by_key = {overrides_key(r["overrides"]): r for r in ctx.records}
    rows_axis = cfg.table.rows
    loaded: list[Shown] = []
    for p, data in zip(ctx.plan.points, point_tables(ctx, cfg.tables), strict=True):
        rec = by_key.get(overrides_key(p.overrides))
        dur = rec["summary"].get("duration_s") if rec else None
        label = variant_of(scn, p.overrides) or p.label()
        if rows_axis:
            label = f"{label} {_toml.display(p.overrides.get(rows_axis))}"
        loaded.append((p, label, data, point_numbers(cfg, scn, p, data, dur)))
    _print_numbers(ctx, cfg, loaded)
    shown = [x for x in loaded if variant_of(scn, x[0].overrides) in cfg.figure_variants]
    if shown:
        written.append(_figure(ctx, cfg, shown))
    # The table's metric per variant beside the source's numbers ([report] source).
    written.append(variant_figure(ctx, cfg.table, name=f"{scn.id}-{cfg.table.source_metric}",
                                  series=False))
    return written


def _print_numbers(ctx: ReportContext, cfg: QcnBaselineConfig, loaded: list[Shown]) -> None:
    groups = list(cfg.groups)
    src_groups, src_spread = cfg.source_groups, cfg.source_spread
    header = ["point", "window (s)"]
    header += [f"{g} Mb/s" + (f" (src {src_groups[g]:g})" if g in src_groups else "")
               for g in groups]
    header += ["per-flow mean min-max", "samples p5-p95", "hotspot total", "queue mean/max pkts"]
    body = []
    for p, label, _, nums in loaded:
        lo, hi = nums["window"]
        line = [label, f"{lo:g}-{hi:g}"]
        line += [_g(nums[f"group:{g}"]) for g in groups]
        spread = f"{_g(nums['flow_mean_min'])}-{_g(nums['flow_mean_max'])}"
        variant = variant_of(ctx.scenario, p.overrides)
        if variant is not None and variant in src_spread:
            a, b = src_spread[variant]
            spread += f" (src {a:g}-{b:g})"
        line += [spread, f"{_g(nums['sample_p5'])}-{_g(nums['sample_p95'])}",
                 _g(nums["hotspot_total"]),
                 f"{_g(nums['queue_mean_pkts'], '{:.1f}')}/{_g(nums['queue_max_pkts'], '{:.0f}')}"]
        body.append(line)
    has_source = bool(src_groups) or any(variant_of(ctx.scenario, p.overrides) in src_spread
                                         for p, *_ in loaded)
    note = "; the source's value in brackets" if has_source else "; no source values given"
    ctx.print(f"\nDuring congestion, flows into {cfg.hotspot} (Mb/s{note}):")
    ctx.print(format_table(header, body, align_left=1))


def _figure(ctx: ReportContext, cfg: QcnBaselineConfig, shown: list[Shown]) -> Path:
    from matplotlib.figure import Figure

    ncol = len(shown)
    fig = Figure(figsize=(4.4 * ncol, 7.2), layout="constrained")
    axes = fig.subplots(3, ncol, squeeze=False)
    for c, (_, label, data, nums) in enumerate(shown):
        apps, src_of = _rate_panel(axes[0][c], data.get("app_rate", {}), cfg.hotspot)
        axes[0][c].set_title(label, fontsize=9)
        _rp_panel(axes[1][c], data.get("rp_rate", {}), apps, src_of)
        _queue_panel(axes[2][c], data.get("queue", {}), _bottleneck(cfg, data.get("queue", {})))
        lo, hi = nums["window"]
        for r in range(3):
            axes[r][c].grid(True, alpha=0.3)
            if math.isfinite(hi):
                axes[r][c].axvspan(lo, hi, color="0.9", zorder=0)
    fig.suptitle(ctx.title, fontsize=10)
    return save_figure(ctx, fig, dpi=110)


def _rate_panel(ax: Any, rates: Columns, hot: str) -> tuple[list[int], dict[int, str]]:
    """Delivered rate of each flow into ``hot`` and their total; returns those apps and
    the source node of each."""
    apps = sorted(_select(rates, Group(dst=hot)))
    series: dict[int, tuple[list[float], list[float]]] = {a: ([], []) for a in apps}
    total: dict[float, float] = {}
    src_of: dict[int, str] = {}
    for t, a, s, r in zip(rates.get("time_s", []), rates.get("app", []),
                          rates.get("src", []), rates.get("rate_mbps", []), strict=False):
        a = int(a)
        if a in series:
            series[a][0].append(t)
            series[a][1].append(r)
            total[t] = total.get(t, 0.0) + r
            src_of[a] = str(s)
    for a in apps:
        ax.plot(*series[a], lw=0.8, label=f"{src_of.get(a, a)}-{hot}")
    if total:
        ts = sorted(total)
        ax.plot(ts, [total[t] for t in ts], "k", lw=1.2, label="total")
    ax.set_ylabel("delivered (Mb/s)", fontsize=8)
    if len(apps) <= 9:
        ax.legend(fontsize=6, loc="best")
    return apps, src_of


def _rp_panel(ax: Any, rp: Columns, apps: list[int], src_of: dict[int, str]) -> None:
    """The QCN RP rate of each limiter ``app<i>`` of the plotted flows (log scale)."""
    names = {f"app{a}": a for a in apps}
    rp_series: dict[str, tuple[list[float], list[float]]] = {}
    for t, name, r in zip(rp.get("time_s", []), rp.get("limiter", []), rp.get("rate_mbps", []),
                          strict=False):
        if name in names:
            rp_series.setdefault(name, ([], []))
            rp_series[name][0].append(t)
            rp_series[name][1].append(r)
    for name, (ts, rs) in sorted(rp_series.items()):
        ax.plot(ts, rs, lw=0.8, label=f"{src_of.get(names[name], name)}")
    ax.set_ylabel("RP rate (Mb/s)", fontsize=8)
    ax.set_yscale("log")


def _queue_panel(ax: Any, q: Columns, port: Any) -> None:
    qt = [t for t, p in zip(q.get("time_s", []), q.get("port", []), strict=False) if p == port]
    qb = [float(b) / PACKET_BYTES for p, b in zip(q.get("port", []), q.get("bytes", []),
                                                  strict=False) if p == port]
    ax.plot(qt, qb, lw=0.8, color="C3")
    ax.set_ylabel(f"{port} queue (pkts)", fontsize=8)
    ax.set_xlabel("time (s)", fontsize=8)


KINDS: tuple[ReportKind[Any], ...] = (
    ReportKind("qcn-baseline", "variant table plus per-flow rates, RP rates and queue over "
               "time, group means and rate spread during congestion, and the table's metric "
               "per variant beside the source's", parse, write_qcn_baseline,
               source_keys=("source",)),
)

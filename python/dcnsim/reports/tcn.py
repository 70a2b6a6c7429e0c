"""Reports of the TCN paper (Bai et al., CoNEXT 2016) reproductions.

Scenario configuration::

    [report]
    kind = "tcn"
    figure = "fig1" | "fig2" | "fig3" | "fig5" | "fct"
    tables = ["apps"]                  # per-point tables the figure needs (see below)
    scheme_axis = "topology.queues"    # the sweep axis whose values are the schemes
    scheme_names = ["per-port RED", "TCN"]   # one label per value of that axis, in order
    port = "sw->client"                # the port fig2, fig3 and fig5 look at
    source = "..."                     # published numbers, printed for comparison

- fig1: service-2 goodput (apps 1..) and service-1 goodput (app 0) vs the number of
  service-2 flows; needs ``apps``.
- fig3: peak and steady buffer occupancy of ``port`` per scheme from the ``queue`` samples
  (steady = max after ``steady_after_s``, default 0.02); needs ``queue``.
- fct: FCT vs load per scheme (Bai et al. 2016 Figs. 6-13) from the workload app's summary
  columns: small-flow mean and p99, medium and large mean (µs), each also normalised to the
  first scheme at the same load (``norm_*``); ``load_axis`` names the load sweep key
  (default ``apps.0.load``). Needs no per-point tables.
- fig2: capacity estimates of queue 0 of ``port`` over time (``estimates`` table): samples
  in the 2 ms after ``change_s``, the estimate 2 ms after it, the time until the estimate
  stays within 10 % of ``target_bps``, the time until it first comes within 10 %, the
  share of the time from 1 ms after the change on that it is within 10 % (``within10_pct``)
  and the sample range after the change.
- fig5: per-queue goodput of ``port`` (``queues`` table) and mean / p99 ping RTT; needs
  ``queues`` and ``pings``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._tables import format_table, write_csv
from ..runs import Record, point_dir, point_table
from ..scenario import Scenario
from ._base import RESULTS_FILE, ReportContext, ReportKind, is_number, load_csv, pyplot, save_figure

FIGURES = {"fig1": ["apps"], "fig3": ["queue"], "fig5": ["queues", "pings"], "fct": [],
           "fig2": ["estimates"]}

# FCT summary columns of the engine's summary table (workload apps, by the TCN size bins:
# small (0, 100 KB], medium, large (10 MB, inf)) and the report's names for them.
FCT_COLUMNS = [("fct_small_mean_s", "small_mean_us"), ("fct_small_p99_s", "small_p99_us"),
               ("fct_medium_mean_s", "medium_mean_us"), ("fct_large_mean_s", "large_mean_us"),
               ("fct_mean_s", "all_mean_us")]
# Numeric options and their defaults.
_NUMBERS = {"steady_after_s": 0.02, "change_s": 0.010, "target_bps": 5e9}


@dataclass(frozen=True)
class TcnConfig:
    figure: str  # a key of FIGURES
    scheme_axis: str
    scheme_names: tuple[str, ...]
    port: str = "sw->client"
    steady_after_s: float = 0.02  # fig3
    change_s: float = 0.010  # fig2: when queue 1's share changes
    target_bps: float = 5e9  # fig2: the share after the change
    load_axis: str = "apps.0.load"  # fct
    source: str | None = None


def parse(scn: Scenario) -> TcnConfig:
    rep = scn.report
    fig = rep.get("figure")
    if not isinstance(fig, str) or fig not in FIGURES:
        raise scn.error("report", "figure", f"expected one of {', '.join(FIGURES)}")
    tables = rep.get("tables", [])
    if not isinstance(tables, list):
        raise scn.error("report", "tables", f"expected a list of table names, got {tables!r}")
    for t in FIGURES[fig]:
        if t not in tables:
            raise scn.error("report", "tables", f"{fig} needs the {t!r} table in report.tables")
    names = rep.get("scheme_names")
    axis = rep.get("scheme_axis")
    if not isinstance(axis, str) or not isinstance(names, list):
        raise scn.error("report", "scheme_axis", "expected scheme_axis (a sweep key) and "
                        "scheme_names (a list of labels)")
    values = dict(scn.sweep).get(axis)
    if values is not None and len(values) != len(names):
        raise scn.error("report", "scheme_names",
                        f"{len(names)} names for {len(values)} values of {axis}")
    for key in ("port", "load_axis"):
        if key in rep and not isinstance(rep[key], str):
            raise scn.error("report", key, f"expected a name, got {rep[key]!r}")
    for key in _NUMBERS:
        if key in rep and not is_number(rep[key]):
            raise scn.error("report", key, f"expected a number, got {rep[key]!r}")
    number = {key: float(rep.get(key, default)) for key, default in _NUMBERS.items()}
    source = rep.get("source")
    return TcnConfig(figure=fig, scheme_axis=axis, scheme_names=tuple(str(n) for n in names),
                     port=rep.get("port", "sw->client"),
                     steady_after_s=number["steady_after_s"], change_s=number["change_s"],
                     target_bps=number["target_bps"],
                     load_axis=rep.get("load_axis", "apps.0.load"),
                     source=str(source) if source else None)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); nan for no values."""
    if not values:
        return math.nan
    v = sorted(values)
    k = max(0, min(len(v) - 1, math.ceil(q / 100.0 * len(v)) - 1))
    return v[k]


def _scheme(ctx: ReportContext, cfg: TcnConfig, overrides: dict[str, Any]) -> str:
    full = dict(ctx.scenario.sweep).get(cfg.scheme_axis, [])
    value = overrides.get(cfg.scheme_axis)
    for i, v in enumerate(full):
        if v == value and i < len(cfg.scheme_names):
            return cfg.scheme_names[i]
    return str(value)


def collect(ctx: ReportContext, cfg: TcnConfig) -> list[dict[str, Any]]:
    """One row per sweep point with the figure's numbers (also used by the tests)."""
    rows = []
    for n, point in enumerate(ctx.plan.points):
        row: dict[str, Any] = {"scheme": _scheme(ctx, cfg, point.overrides)}
        row.update({k: v for k, v in point.overrides.items() if k != cfg.scheme_axis})
        rec = ctx.records[n] if n < len(ctx.records) else {}
        d = point_dir(ctx.out_dir, point.index)
        if cfg.figure == "fig1":
            row.update(_fig1_row(d / "apps.csv"))
        elif cfg.figure == "fig3":
            row.update(_fig3_row(cfg, d / "queue.csv"))
        elif cfg.figure == "fig5":
            row.update(_fig5_row(cfg, d / "queues.csv", d / "pings.csv", rec))
        elif cfg.figure == "fig2":
            row.update(_fig2_row(cfg, d / "estimates.csv"))
        elif cfg.figure == "fct":
            row.update(_fct_row(rec))
        rows.append(row)
    if cfg.figure == "fct":
        _normalise(cfg, rows)
    return rows


def _fig1_row(apps_csv: Path) -> dict[str, Any]:
    g = load_csv(apps_csv).get("goodput_mbps", [])
    return {"service1_mbps": g[0] if g else math.nan,
            "service2_mbps": sum(g[1:]) if g else math.nan,
            "flows": len(g) - 1}


def _fig3_row(cfg: TcnConfig, queue_csv: Path) -> dict[str, Any]:
    q = load_csv(queue_csv)
    b = [x for x, p in zip(q.get("bytes", []), q.get("port", []), strict=False) if p == cfg.port]
    t = [x for x, p in zip(q.get("time_s", []), q.get("port", []), strict=False) if p == cfg.port]
    steady = [x for x, s in zip(b, t, strict=False) if s >= cfg.steady_after_s]
    return {"peak_kb": max(b) / 1e3 if b else math.nan,
            "steady_max_kb": max(steady) / 1e3 if steady else math.nan,
            "steady_mean_kb": sum(steady) / len(steady) / 1e3 if steady else math.nan}


def _fig5_row(cfg: TcnConfig, queues_csv: Path, pings_csv: Path,
              rec: Record) -> dict[str, Any]:
    row: dict[str, Any] = {}
    qs = load_csv(queues_csv)
    dur = float(rec.get("summary", {}).get("duration_s") or 1.0)
    for i, (p, qi) in enumerate(zip(qs.get("port", []), qs.get("queue", []), strict=False)):
        if p == cfg.port:
            row[f"q{int(qi) + 1}_mbps"] = qs["tx_payload_bytes"][i] * 8 / dur / 1e6
    rtt = [x * 1e6 for x in load_csv(pings_csv).get("rtt_s", [])]
    row["rtt_mean_us"] = sum(rtt) / len(rtt) if rtt else math.nan
    row["rtt_p99_us"] = percentile(rtt, 99)
    row["pings"] = len(rtt)
    return row


def _fct_row(rec: Record) -> dict[str, Any]:
    summ = rec.get("summary", {})
    row: dict[str, Any] = {}
    for src, name in FCT_COLUMNS:
        v = summ.get(src)
        row[name] = float(v) * 1e6 if v is not None else math.nan
    row["messages_done"] = summ.get("messages_done", math.nan)
    row["timeouts"] = summ.get("timeouts", math.nan)
    # The paper's timeout counts are of small flows (Bai et al. 2016 §6.2: "589 TCP
    # timeouts for small flows"): RTOs during messages of at most 100 KB.
    row["timeouts_small"] = summ.get("timeouts_small", math.nan)
    return row


def _fig2_series(path: Path, port: str) -> tuple[list[float], list[float], list[float]]:
    e = load_csv(path)
    t, smp, avg = [], [], []
    for i, (p, q) in enumerate(zip(e.get("port", []), e.get("queue", []), strict=False)):
        if p == port and int(q) == 0:
            t.append(e["time_s"][i])
            smp.append(e["sample_bps"][i])
            avg.append(e["avg_bps"][i])
    return t, smp, avg


def _fig2_row(cfg: TcnConfig, path: Path) -> dict[str, Any]:
    change, target = cfg.change_s, cfg.target_bps
    t, smp, avg = _fig2_series(path, cfg.port)
    after = [i for i, x in enumerate(t) if x >= change]
    in2 = [i for i in after if t[i] < change + 0.002]
    row: dict[str, Any] = {"samples_2ms": len(in2)}
    before2 = [avg[i] for i in after if t[i] <= change + 0.002]
    row["estimate_at_2ms_gbps"] = before2[-1] / 1e9 if before2 else math.nan
    # Convergence: first time after which every estimate stays within 10 % of the target.
    conv = math.nan
    for i in reversed(after):
        if abs(avg[i] - target) > 0.1 * target:
            nxt = [j for j in after if j > i]
            conv = (t[nxt[0]] - change) * 1e6 if nxt else math.nan
            break
    else:
        if after:
            conv = (t[after[0]] - change) * 1e6
    row["converge_us"] = conv
    # First time the estimate comes within 10 % of the target, and the share of the time
    # from change + 1 ms to the last estimate that it stays there (each estimate holds
    # until the next): an estimator that tracks real changes of the round time (a queue
    # that empties) leaves the band for a while without being unsettled.
    first = [i for i in after if abs(avg[i] - target) <= 0.1 * target]
    row["first_within_us"] = (t[first[0]] - change) * 1e6 if first else math.nan
    row["within10_pct"] = _time_within(t, avg, change + 0.001, target)
    s_after = [smp[i] / 1e9 for i in after if t[i] >= change + 0.0005]
    row["sample_min_gbps"] = min(s_after) if s_after else math.nan
    row["sample_max_gbps"] = max(s_after) if s_after else math.nan
    return row


def _time_within(t: list[float], v: list[float], start: float, target: float) -> float:
    """Percentage of [start, t[-1]] during which the step function v (each value held
    until the next time) is within 10 % of target; nan without data after start."""
    if not t or t[-1] <= start:
        return math.nan
    inside = 0.0
    for i in range(len(t) - 1):
        a, b = max(t[i], start), t[i + 1]
        if b > a and abs(v[i] - target) <= 0.1 * target:
            inside += b - a
    return 100.0 * inside / (t[-1] - start)


def _normalise(cfg: TcnConfig, rows: list[dict[str, Any]]) -> None:
    """norm_<col> = col / the first scheme's col at the same load."""
    load_axis = cfg.load_axis
    base_name = cfg.scheme_names[0]
    base = {r.get(load_axis): r for r in rows if r["scheme"] == base_name}
    for r in rows:
        b = base.get(r.get(load_axis))
        for _, name in FCT_COLUMNS:
            bv = b.get(name, math.nan) if b else math.nan
            v = r.get(name, math.nan)
            ok = isinstance(bv, float) and bv > 0 and not math.isnan(bv)
            r[f"norm_{name.removesuffix('_us')}"] = v / bv if ok else math.nan


def _fmt(v: Any) -> str:
    """Table spelling: one decimal from 100 up, else three significant digits (a ratio of
    0.048 must not print as 0.0)."""
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.1f}" if abs(v) >= 100 else f"{v:.3g}"
    return str(v)


def write_tcn(ctx: ReportContext, cfg: TcnConfig) -> list[Path]:
    rows = collect(ctx, cfg)
    cols: list[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    out = []
    csv_path = ctx.out_dir / RESULTS_FILE
    write_csv(csv_path, cols, rows)
    out.append(csv_path)
    ctx.print(ctx.title)
    ctx.print(format_table(cols, [[_fmt(r.get(c, "")) for c in cols] for r in rows],
                           align_left=1))
    if cfg.source:
        ctx.print("")
        ctx.print(f"source: {cfg.source}")
    try:
        out.append(_plot(ctx, cfg, rows))
    except ImportError:
        ctx.print("(matplotlib not installed: no figure)")
    return out


def _plot(ctx: ReportContext, cfg: TcnConfig, rows: list[dict[str, Any]]) -> Path:
    plt = pyplot()
    if cfg.figure == "fct":
        return _plot_fct(ctx, cfg, rows, plt)
    if cfg.figure == "fig2":
        return _plot_fig2(ctx, cfg, rows, plt)
    f, ax = plt.subplots(figsize=(6, 4))
    if cfg.figure == "fig1":
        for s in dict.fromkeys(r["scheme"] for r in rows):
            rs = [r for r in rows if r["scheme"] == s]
            ax.plot([r["flows"] for r in rs], [r["service2_mbps"] for r in rs], "o-",
                    label=f"{s}: service 2")
            ax.plot([r["flows"] for r in rs], [r["service1_mbps"] for r in rs], "s--",
                    label=f"{s}: service 1")
        ax.set_xlabel("flows of service 2")
        ax.set_ylabel("goodput (Mb/s)")
    elif cfg.figure == "fig3":
        _bars(ax, rows, ("peak_kb", "peak"), ("steady_max_kb", "max after start-up"))
        ax.set_ylabel("buffer occupancy (KB)")
    else:
        _bars(ax, rows, ("rtt_mean_us", "mean"), ("rtt_p99_us", "p99"))
        ax.set_ylabel("queue-3 RTT (µs)")
    ax.set_title(ctx.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(ctx, f, dpi=120)


def _bars(ax: Any, rows: list[dict[str, Any]], left: tuple[str, str],
          right: tuple[str, str]) -> None:
    """Two bars per scheme: columns ``left`` and ``right`` as (column, legend label)."""
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], [r[left[0]] for r in rows], 0.4, label=left[1])
    ax.bar([i + 0.2 for i in x], [r[right[0]] for r in rows], 0.4, label=right[1])
    ax.set_xticks(list(x), [r["scheme"] for r in rows])


def _plot_fct(ctx: ReportContext, cfg: TcnConfig, rows: list[dict[str, Any]],
              plt: Any) -> Path:
    """Panels like the paper's: small-flow mean, small-flow p99, large-flow mean vs load,
    normalised to the first scheme."""
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    panels = [("norm_small_mean", "(0, 100KB]: mean"), ("norm_small_p99", "(0, 100KB]: 99th"),
              ("norm_large_mean", "(10MB, inf): mean")]
    f, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for ax, (col, label) in zip(axes, panels, strict=False):
        for s in schemes:
            rs = [r for r in rows if r["scheme"] == s]
            ax.plot([float(r[cfg.load_axis]) * 100 for r in rs], [r[col] for r in rs], "o-",
                    label=s)
        ax.set_xlabel("load (%)")
        ax.set_ylabel("normalised FCT")
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)  # no "+1" offset
        ax.set_title(label, fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    f.suptitle(ctx.title, fontsize=10)
    return save_figure(ctx, f, dpi=120)


def _plot_fig2(ctx: ReportContext, cfg: TcnConfig, rows: list[dict[str, Any]],
               plt: Any) -> Path:
    """Estimated capacity of queue 0 over time, one line per estimator."""
    f, ax = plt.subplots(figsize=(7, 4))
    for n, point in enumerate(ctx.plan.points):
        t, _, avg = _fig2_series(point_table(ctx.out_dir, point.index, "estimates"), cfg.port)
        ax.plot([x * 1e3 for x in t], [a / 1e9 for a in avg], "-", lw=1,
                label=rows[n]["scheme"] if n < len(rows) else str(n))
    ax.axvline(cfg.change_s * 1e3, color="grey", ls=":")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("estimated capacity of queue 1 (Gb/s)")
    ax.set_title(ctx.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(ctx, f, dpi=120)


KINDS: tuple[ReportKind[Any], ...] = (
    ReportKind("tcn", "TCN paper figures (Bai et al. 2016)", parse, write_tcn),
)

"""Reports of the seed-002 (TCN, Bai et al., CoNEXT'16) reproductions.

Scenario configuration::

    [report]
    kind = "tcn"
    figure = "fig1" | "fig3" | "fig5"
    tables = ["apps"]                  # per-point tables the figure needs (see below)
    scheme_axis = "topology.queues"    # the sweep axis whose values are the schemes
    scheme_names = ["per-port RED", "TCN"]   # one label per value of that axis, in order

- fig1: service-2 goodput (apps 1..) and service-1 goodput (app 0) vs the number of
  service-2 flows (axis ``flows_axis``, default ``apps.1.count``); needs ``apps``.
- fig3: peak and steady buffer occupancy of ``port`` per scheme from the ``queue`` samples
  (steady = max after ``steady_after_s``); needs ``queue``.
- fct: FCT vs load per scheme (seed 002 Figs. 6-13) from the workload app's summary
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
Published numbers for the printed comparison come from ``[report] source``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._tables import format_table
from .report_panels import _load

if TYPE_CHECKING:
    from .report import ReportContext
    from .scenario import Scenario

FIGURES = {"fig1": ["apps"], "fig3": ["queue"], "fig5": ["queues", "pings"], "fct": [],
           "fig2": ["estimates"]}

# FCT summary columns of the engine's summary table (workload apps, by the TCN size bins:
# small (0, 100 KB], medium, large (10 MB, inf)) and the report's names for them.
FCT_COLUMNS = [("fct_small_mean_s", "small_mean_us"), ("fct_small_p99_s", "small_p99_us"),
               ("fct_medium_mean_s", "medium_mean_us"), ("fct_large_mean_s", "large_mean_us"),
               ("fct_mean_s", "all_mean_us")]


def check_tcn(scn: Scenario) -> None:
    rep = scn.report
    fig = rep.get("figure")
    if fig not in FIGURES:
        raise scn.error("report", "figure", f"expected one of {', '.join(FIGURES)}")
    tables = rep.get("tables", [])
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


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); nan for no values."""
    if not values:
        return math.nan
    v = sorted(values)
    k = max(0, min(len(v) - 1, math.ceil(q / 100.0 * len(v)) - 1))
    return v[k]


def _scheme(ctx: ReportContext, overrides: dict[str, Any]) -> str:
    rep = ctx.config
    axis = rep["scheme_axis"]
    names = rep["scheme_names"]
    full = dict(ctx.scenario.sweep).get(axis, [])
    value = overrides.get(axis)
    for i, v in enumerate(full):
        if v == value and i < len(names):
            return str(names[i])
    return str(value)


def collect(ctx: ReportContext) -> list[dict[str, Any]]:
    """One row per sweep point with the figure's numbers (also used by the tests)."""
    from .sweep import POINTS_DIR, point_dirname

    fig = ctx.config["figure"]
    port = ctx.config.get("port", "sw->client")
    rows = []
    for n, point in enumerate(ctx.plan.points):
        d = ctx.out_dir / POINTS_DIR / point_dirname(point.index)
        row: dict[str, Any] = {"scheme": _scheme(ctx, point.overrides)}
        row.update({k: v for k, v in point.overrides.items()
                    if k != ctx.config["scheme_axis"]})
        if fig == "fig1":
            apps = _load(d / "apps.csv")
            g = apps.get("goodput_mbps", [])
            row["service1_mbps"] = g[0] if g else math.nan
            row["service2_mbps"] = sum(g[1:]) if g else math.nan
            row["flows"] = len(g) - 1
        elif fig == "fig3":
            q = _load(d / "queue.csv")
            after = float(ctx.config.get("steady_after_s", 0.02))
            b = [x for x, p in zip(q.get("bytes", []), q.get("port", []), strict=False)
                 if p == port]
            t = [x for x, p in zip(q.get("time_s", []), q.get("port", []), strict=False)
                 if p == port]
            row["peak_kb"] = max(b) / 1e3 if b else math.nan
            steady = [x for x, s in zip(b, t, strict=False) if s >= after]
            row["steady_max_kb"] = max(steady) / 1e3 if steady else math.nan
            row["steady_mean_kb"] = sum(steady) / len(steady) / 1e3 if steady else math.nan
        elif fig == "fig5":
            qs = _load(d / "queues.csv")
            rec = ctx.records[n] if n < len(ctx.records) else {}
            dur = float(rec.get("summary", {}).get("duration_s") or 1.0)
            for i, (p, qi) in enumerate(zip(qs.get("port", []), qs.get("queue", []),
                                            strict=False)):
                if p == port:
                    row[f"q{int(qi) + 1}_mbps"] = qs["tx_payload_bytes"][i] * 8 / dur / 1e6
            rtt = [x * 1e6 for x in _load(d / "pings.csv").get("rtt_s", [])]
            row["rtt_mean_us"] = sum(rtt) / len(rtt) if rtt else math.nan
            row["rtt_p99_us"] = percentile(rtt, 99)
            row["pings"] = len(rtt)
        elif fig == "fig2":
            row.update(_fig2_row(ctx, d / "estimates.csv", port))
        elif fig == "fct":
            rec = ctx.records[n] if n < len(ctx.records) else {}
            summ = rec.get("summary", {})
            for src, name in FCT_COLUMNS:
                v = summ.get(src)
                row[name] = float(v) * 1e6 if v is not None else math.nan
            row["messages_done"] = summ.get("messages_done", math.nan)
            row["timeouts"] = summ.get("timeouts", math.nan)
            # The paper's timeout counts are of small flows (seed 002 §6.2: "589 TCP
            # timeouts for small flows"): RTOs during messages of at most 100 KB.
            row["timeouts_small"] = summ.get("timeouts_small", math.nan)
        rows.append(row)
    if fig == "fct":
        _normalise(ctx, rows)
    return rows


def _fig2_series(path: Path, port: str) -> tuple[list[float], list[float], list[float]]:
    e = _load(path)
    t, smp, avg = [], [], []
    for i, (p, q) in enumerate(zip(e.get("port", []), e.get("queue", []), strict=False)):
        if p == port and int(q) == 0:
            t.append(e["time_s"][i])
            smp.append(e["sample_bps"][i])
            avg.append(e["avg_bps"][i])
    return t, smp, avg


def _fig2_row(ctx: ReportContext, path: Path, port: str) -> dict[str, Any]:
    change = float(ctx.config.get("change_s", 0.010))
    target = float(ctx.config.get("target_bps", 5e9))
    t, smp, avg = _fig2_series(path, port)
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


def _normalise(ctx: ReportContext, rows: list[dict[str, Any]]) -> None:
    """norm_<col> = col / the first scheme's col at the same load."""
    load_axis = ctx.config.get("load_axis", "apps.0.load")
    base_name = str(ctx.config["scheme_names"][0])
    base = {r.get(load_axis): r for r in rows if r["scheme"] == base_name}
    for r in rows:
        b = base.get(r.get(load_axis))
        for _, name in FCT_COLUMNS:
            bv = b.get(name, math.nan) if b else math.nan
            v = r.get(name, math.nan)
            ok = isinstance(bv, float) and bv > 0 and not math.isnan(bv)
            r[f"norm_{name.removesuffix('_us')}"] = v / bv if ok else math.nan


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.1f}"
    return str(v)


def write_tcn(ctx: ReportContext) -> list[Path]:
    from ._tables import write_csv

    rows = collect(ctx)
    cols: list[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    out = []
    csv_path = ctx.out_dir / "results.csv"
    write_csv(csv_path, cols, rows)
    out.append(csv_path)
    ctx.print(ctx.title)
    ctx.print(format_table(cols, [[_fmt(r.get(c, "")) for c in cols] for r in rows],
                           align_left=1))
    source = ctx.config.get("source")
    if source:
        ctx.print("")
        ctx.print(f"source: {source}")
    try:
        out.append(_plot(ctx, rows))
    except ImportError:
        ctx.print("(matplotlib not installed: no figure)")
    return out


def _plot(ctx: ReportContext, rows: list[dict[str, Any]]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = ctx.config["figure"]
    if fig == "fct":
        return _plot_fct(ctx, rows, plt)
    if fig == "fig2":
        return _plot_fig2(ctx, rows, plt)
    f, ax = plt.subplots(figsize=(6, 4))
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    if fig == "fig1":
        for s in schemes:
            rs = [r for r in rows if r["scheme"] == s]
            ax.plot([r["flows"] for r in rs], [r["service2_mbps"] for r in rs], "o-",
                    label=f"{s}: service 2")
            ax.plot([r["flows"] for r in rs], [r["service1_mbps"] for r in rs], "s--",
                    label=f"{s}: service 1")
        ax.set_xlabel("flows of service 2")
        ax.set_ylabel("goodput (Mb/s)")
    elif fig == "fig3":
        x = range(len(rows))
        ax.bar([i - 0.2 for i in x], [r["peak_kb"] for r in rows], 0.4, label="peak")
        ax.bar([i + 0.2 for i in x], [r["steady_max_kb"] for r in rows], 0.4,
               label="max after start-up")
        ax.set_xticks(list(x), [r["scheme"] for r in rows])
        ax.set_ylabel("buffer occupancy (KB)")
    else:
        x = range(len(rows))
        ax.bar([i - 0.2 for i in x], [r["rtt_mean_us"] for r in rows], 0.4, label="mean")
        ax.bar([i + 0.2 for i in x], [r["rtt_p99_us"] for r in rows], 0.4, label="p99")
        ax.set_xticks(list(x), [r["scheme"] for r in rows])
        ax.set_ylabel("queue-3 RTT (µs)")
    ax.set_title(ctx.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    path = ctx.out_dir / f"{ctx.scenario.id}.png"
    f.tight_layout()
    f.savefig(path, dpi=120)
    plt.close(f)
    return path


def _plot_fct(ctx: ReportContext, rows: list[dict[str, Any]], plt: Any) -> Path:
    """Panels like the paper's: small-flow mean, small-flow p99, large-flow mean vs load,
    normalised to the first scheme."""
    load_axis = ctx.config.get("load_axis", "apps.0.load")
    schemes = list(dict.fromkeys(r["scheme"] for r in rows))
    panels = [("norm_small_mean", "(0, 100KB]: mean"), ("norm_small_p99", "(0, 100KB]: 99th"),
              ("norm_large_mean", "(10MB, inf): mean")]
    f, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for ax, (col, label) in zip(axes, panels, strict=False):
        for s in schemes:
            rs = [r for r in rows if r["scheme"] == s]
            ax.plot([float(r[load_axis]) * 100 for r in rs], [r[col] for r in rs], "o-",
                    label=s)
        ax.set_xlabel("load (%)")
        ax.set_ylabel("normalised FCT")
        ax.set_title(label, fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    f.suptitle(ctx.title, fontsize=10)
    path = ctx.out_dir / f"{ctx.scenario.id}.png"
    f.tight_layout()
    f.savefig(path, dpi=120)
    plt.close(f)
    return path


def _plot_fig2(ctx: ReportContext, rows: list[dict[str, Any]], plt: Any) -> Path:
    """Estimated capacity of queue 0 over time, one line per estimator."""
    from .sweep import POINTS_DIR, point_dirname

    port = ctx.config.get("port", "sw->client")
    f, ax = plt.subplots(figsize=(7, 4))
    for n, point in enumerate(ctx.plan.points):
        d = ctx.out_dir / POINTS_DIR / point_dirname(point.index)
        t, _, avg = _fig2_series(d / "estimates.csv", port)
        ax.plot([x * 1e3 for x in t], [a / 1e9 for a in avg], "-", lw=1,
                label=rows[n]["scheme"] if n < len(rows) else str(n))
    ax.axvline(float(ctx.config.get("change_s", 0.010)) * 1e3, color="grey", ls=":")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("estimated capacity of queue 1 (Gb/s)")
    ax.set_title(ctx.title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    path = ctx.out_dir / f"{ctx.scenario.id}.png"
    f.tight_layout()
    f.savefig(path, dpi=120)
    plt.close(f)
    return path

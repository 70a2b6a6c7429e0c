#!/usr/bin/env python3
"""Run the HPCC authors' ns-3 simulator and dcnsim on one flow file and print them side by side.

    python3 benches/hpcc_ns3/compare.py --flows-file F --cc hp [--cc dcqcn ...] [--out DIR]

Per congestion control (`hp` = HPCC, `dcqcn`, `timely`, `dctcp`, the simulator's run.py
names; dcnsim runs `hpcc-fork`, `dcqcn-fork`, `timely-fork`, `dctcp-fork`): the simulator
through `run.py` next to this file, dcnsim as `dcnsim run SCENARIO --set
apps.0.flows_file=F --set roce.cc=...` (default scenario `scenarios/hpcc-fattree.toml`, the
same 320-server fabric, hosts numbered as in the simulator's `mix/fat.txt`) plus the keys of
the scenario's `[[sweep.variants]]` entry named after that controller (`dcnsim run` runs the
base point only; not with `--only-cc`), and, when `--engine` names a `dcnsim-engine`
program, that program once more on the same overrides for the speed figure (it writes no
tables).

Printed: p50/p95/p99 FCT slowdown per size bin (the bins of dcnsim's `slowdown` report,
(0, 10 KB], (10 KB, 100 KB], (100 KB, 1 MB], (1 MB, 1 GB]; nearest-rank percentiles as that
report computes them), FCT totals, PFC pauses and paused time (the simulator's PFC file,
dcnsim's `pfc_buffer`, `pfc_ports` and `summary` tables), CPU seconds per simulated
millisecond and peak RSS.
The simulator's slowdowns are clamped at 1 as its `analysis/fct_analysis.py` does (its ideal
FCT counts a full 1000-byte packet per hop, so small flows come out slightly below 1);
dcnsim's are its `completions.slowdown`. Each result is also written as JSON under `--out`.
See README.md in this folder.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import run as fork  # noqa: E402  (run.py next to this file)

# dcnsim's slowdown report defaults (python/dcnsim/reports/slowdown.py DEFAULT_BINS).
BINS = (0.0, 10e3, 100e3, 1e6, 1e9)
PERCENTILES = (50.0, 95.0, 99.0)
DCNSIM_CC = {"hp": "hpcc-fork", "dcqcn": "dcqcn-fork", "timely": "timely-fork",
             "dctcp": "dctcp-fork"}


# The fabric of the simulator's mix/fat.txt and scenarios/hpcc-fattree.toml, for the
# simulator's ideal FCT of a dcnsim flow (`fork_ideal_ns`).
HOSTS_PER_TOR, TORS_PER_POD = 16, 4
LINK_DELAY_NS, HOST_GBPS, FABRIC_GBPS = 1000, 100, 400
PAYLOAD, FORK_HEADER = 1000, 48   # CustomHeader's whole header without INT: 14+20+8+2+4


def links(src: int, dst: int) -> int:
    """Links on a shortest path between two servers of the fabric."""
    if src // HOSTS_PER_TOR == dst // HOSTS_PER_TOR:
        return 2
    pod = HOSTS_PER_TOR * TORS_PER_POD
    return 4 if src // pod == dst // pod else 6


def fork_ideal_ns(src: int, dst: int, size: int) -> float:
    """The simulator's standalone FCT (`qp_finish` in scratch/third.cc): the pair's base RTT
    (propagation both ways, one 1000-byte packet's serialisation per hop) plus the bytes
    with their headers (INT excluded) at the host rate."""
    n = links(src, dst)
    tx = 2 * PAYLOAD * 8 / HOST_GBPS + (n - 2) * PAYLOAD * 8 / FABRIC_GBPS
    total = size + ((size - 1) // PAYLOAD + 1) * FORK_HEADER
    return 2 * n * LINK_DELAY_NS + tx + total * 8 / HOST_GBPS


def fork_def_slowdown(src: int, dst: int, size: int, fct_s: float, last_ack: bool) -> float:
    """A dcnsim flow's slowdown as the simulator defines it: its FCT (plus the last ACK's trip
    back, the propagation of the path, unless the FCT already ends at the last ACK) over the
    simulator's ideal, clamped at 1."""
    end = fct_s * 1e9 + (0 if last_ack else links(src, dst) * LINK_DELAY_NS)
    return max(1.0, end / fork_ideal_ns(src, dst, size))


def percentile(values: list[float], q: float) -> float:
    """Nearest rank, as dcnsim's slowdown report."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def by_bin(rows: list[tuple[float, float]]) -> list[list[float]]:
    """Slowdowns of (size, slowdown) rows per bin (a, b]."""
    out: list[list[float]] = [[] for _ in BINS[1:]]
    for size, slow in rows:
        if math.isnan(slow):
            continue
        for i, (a, b) in enumerate(zip(BINS, BINS[1:], strict=False)):
            if a < size <= b:
                out[i].append(slow)
                break
    return out


def bin_label(a: float, b: float) -> str:
    def size(v: float) -> str:
        for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
            if v >= scale:
                return f"{v / scale:g}{unit}"
        return f"{v:g}B"
    return f"{size(a)}-{size(b)}"


def fork_rows(result: dict) -> list[tuple[float, float, float]]:
    """(size, slowdown clamped at 1, fct s) of the simulator's flows."""
    return [(r["bytes"], max(1.0, r["slowdown"]), r["fct_ns"] * 1e-9) for r in result["rows"]]


def read_completions(path: Path) -> list[tuple[float, float, float, float, float, int, int]]:
    """(size, slowdown, fct s, start s, end s, src, dst) of dcnsim's completions table, the
    hosts (0-based, as in the flow file) from the flows table."""
    hosts = {}
    with open(path.parent / "flows.csv", newline="") as f:
        for r in csv.DictReader(f):
            hosts[r["flow"]] = (int(r["src"].removeprefix("host")) - 1,
                                int(r["dst"].removeprefix("host")) - 1)
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            start, end = float(r["start_s"]), float(r["end_s"])
            slow = float(r["slowdown"]) if r["slowdown"] not in ("", "nan", "NaN") else math.nan
            src, dst = hosts.get(r["flow"], (-1, -1))
            out.append((float(r["bytes"]), slow, end - start, start, end, src, dst))
    return out


def _csv_rows(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_pfc(out: Path) -> dict[str, float]:
    """dcnsim's PFC counters of a run's tables, named as `run.pfc_summary` names the
    simulator's: `pfc_buffer.pauses` (pauses an ingress port × priority triggered, without
    refreshes and resumes; its port is "switch->peer", the peer the device paused),
    `pfc_ports` (frames sent, paused time per port × priority) and the summary's
    `pause_sent` (every PFC frame: pauses, refreshes at half the pause time, resumes)."""
    buf = _csv_rows(out / "pfc_buffer.csv")
    ports = _csv_rows(out / "pfc_ports.csv")
    summary = _csv_rows(out / "summary.csv")

    def to_host(r: dict[str, str]) -> bool:
        return r["port"].split("->", 1)[-1].startswith("host")

    pauses = [(to_host(r), int(r["pauses"])) for r in buf]
    return dict(pause_frames=sum(n for _, n in pauses),
                pauses_to_hosts=sum(n for h, n in pauses if h),
                pauses_to_switches=sum(n for h, n in pauses if not h),
                paused_devices=sum(1 for r in ports if float(r["paused_s"]) > 0),
                paused_s=sum(float(r["paused_s"]) for r in ports),
                frames_sent=int(summary[0]["pause_sent"]) if summary else 0)


def toml_value(v: object) -> str:
    """A TOML literal of a value read from a scenario (strings, numbers, booleans, arrays,
    inline tables), for `--set KEY=VALUE`."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)            # a TOML basic string for the ASCII keys used here
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise SystemExit(f"hpcc_ns3: cannot write {v!r} as a TOML value")


def scenario_variant(scenario: Path, label: str) -> dict[str, object]:
    """The keys of the scenario's `[[sweep.variants]]` entry `label` (none: {}); `dcnsim run`
    runs the base point, so compare.py passes them as overrides."""
    with open(scenario, "rb") as f:
        doc = tomllib.load(f)
    for v in doc.get("sweep", {}).get("variants", []):
        if v.get("label") == label:
            return {k: x for k, x in v.items() if k != "label"}
    return {}


def dcnsim_overrides(cc: str, flows_file: Path,
                     scenario: Path | None = None) -> list[tuple[str, str]]:
    """The flow file, then the scenario's variant for the controller (in
    scenarios/hpcc-fattree.toml: the window, the marking and the controller as the
    simulator's run.py sets them per cc), or only `roce.cc` when the scenario has none or
    `scenario` is None."""
    sets = [("apps.0.flows_file", str(flows_file))]
    variant = scenario_variant(scenario, DCNSIM_CC[cc]) if scenario else {}
    variant.setdefault("roce.cc", DCNSIM_CC[cc])
    sets += [(k, v if isinstance(v, str) else toml_value(v)) for k, v in variant.items()]
    return sets


def run_dcnsim(a: argparse.Namespace, cc: str, flows_file: Path) -> dict:
    sets = dcnsim_overrides(cc, flows_file, None if a.only_cc else Path(a.scenario))
    sets += [tuple(kv.split("=", 1)) for kv in a.set or []]
    work = Path(tempfile.mkdtemp(prefix=f"hpcc-ns3-dcnsim-{cc}-"))
    try:
        cmd = ["nice", "-n", str(a.nice), *a.dcnsim.split(), "run", str(a.scenario)]
        for k, v in sets:
            cmd += ["--set", f"{k}={v}"]
        cmd += ["--out", str(work / "out")]
        code, cpu, rss, wall = fork.run_measured(cmd, REPO, dict(os.environ), work / "log.txt",
                                                 None)
        comp = work / "out" / "completions.csv"
        rows = read_completions(comp) if comp.exists() else []
        pfc = read_pfc(work / "out")
        log_tail = (work / "log.txt").read_text(errors="replace").splitlines()[-5:]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    span = (max(r[4] for r in rows) - min(r[3] for r in rows)) * 1e3 if rows else 0.0
    res = dict(simulator="dcnsim", cc=DCNSIM_CC[cc], flows_file=str(flows_file),
               overrides=[f"{k}={v}" for k, v in sets],
               last_ack=a.last_ack,
               finished=len(rows), exit=code, cpu_s=round(cpu, 3), wall_s=round(wall, 3),
               peak_rss_mb=round(rss / 2**20, 1), sim_span_ms=round(span, 4),
               cpu_s_per_sim_ms=round(cpu / span, 4) if span else None,
               command=" ".join(cmd), pfc=pfc,
               rows=[dict(bytes=r[0], slowdown=r[1], fct_s=r[2], start_s=r[3], src=r[5],
                          dst=r[6]) for r in rows])
    if code != 0:
        res["log_tail"] = log_tail
    if a.engine:
        ecmd = ["nice", "-n", str(a.nice), a.engine, str(a.scenario)]
        ecmd += [f"{k}={v}" for k, v in sets]
        code, cpu, rss, wall = fork.run_measured(ecmd, REPO, dict(os.environ),
                                                 Path(os.devnull), None)
        res["engine"] = dict(command=" ".join(ecmd), exit=code, cpu_s=round(cpu, 3),
                             wall_s=round(wall, 3), peak_rss_mb=round(rss / 2**20, 1),
                             cpu_s_per_sim_ms=round(cpu / span, 4) if span else None)
    return res


def run_fork(a: argparse.Namespace, cc: str, flows_file: Path, out: Path) -> dict:
    path = out / f"fork-{cc}.json"
    if a.reuse and path.exists():
        return json.loads(path.read_text())
    argv = ["run", "--cc", cc, "--flows-file", str(flows_file), "--build-dir", a.build_dir,
            "--nice", str(a.nice), "--json-out", str(path)]
    if fork.main(argv) not in (0, 1):
        raise SystemExit(f"hpcc_ns3: the simulator did not run for {cc}")
    return json.loads(path.read_text())


def per_flow(f: dict, d: dict) -> dict[str, float]:
    """The same flows in both: those whose (source, destination, size) is unique in the
    simulator's rows. Ratio of dcnsim's FCT plus the path's propagation (the last ACK's way
    back) to the simulator's FCT, and the Pearson correlation of the two."""
    seen: dict[tuple[int, int, int], list[dict]] = {}
    for r in f["rows"]:
        seen.setdefault((r["src"], r["dst"], r["bytes"]), []).append(r)
    pairs = []
    for r in d["rows"]:
        m = seen.get((r.get("src", -1), r.get("dst", -1), int(r["bytes"])), [])
        if len(m) == 1:
            back = 0 if d.get("last_ack") else links(r["src"], r["dst"]) * LINK_DELAY_NS
            pairs.append((m[0]["fct_ns"], r["fct_s"] * 1e9 + back))
    if len(pairs) < 2:
        return dict(matched=len(pairs))
    ratios = [b / a for a, b in pairs]
    xs, ys = zip(*pairs, strict=True)
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    cov = sum((x - mx) * (y - my) for x, y in pairs)
    r = cov / math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))
    return dict(matched=len(pairs), ratio_p5=percentile(ratios, 5),
                ratio_p50=percentile(ratios, 50), ratio_p95=percentile(ratios, 95), pearson=r)


def summarize(rows: list[tuple[float, float, float]]) -> dict[str, float]:
    fcts = [r[2] for r in rows]
    slows = [r[1] for r in rows if not math.isnan(r[1])]
    return dict(flows=len(rows), fct_mean_us=sum(fcts) / len(fcts) * 1e6 if fcts else math.nan,
                fct_p99_us=percentile(fcts, 99) * 1e6,
                slowdown_mean=sum(slows) / len(slows) if slows else math.nan,
                slowdown_p50=percentile(slows, 50), slowdown_p99=percentile(slows, 99))


def pfc_lines(fp: dict | None, dp: dict | None) -> list[str]:
    """PFC side by side: pause frames (each starts a pause; the simulator sends one per
    pause, dcnsim refreshes a long pause at half its quanta, not counted here), to whom,
    the devices paused and the paused time summed over them; then every PFC frame (the
    simulator's pauses and resumes, dcnsim's pauses, refreshes and resumes)."""
    if not fp and not dp:
        return []
    fp, dp = fp or {}, dp or {}
    lines = [f"{'PFC':<22}{'ns-3 fork':>12}{'dcnsim':>12}"]
    for k in ("pause_frames", "pauses_to_hosts", "pauses_to_switches", "paused_devices"):
        lines.append(f"{k:<22}{fp.get(k, math.nan):>12}{dp.get(k, math.nan):>12}")
    lines.append(f"{'paused_us (sum)':<22}{fp.get('paused_s', math.nan) * 1e6:>12.1f}"
                 f"{dp.get('paused_s', math.nan) * 1e6:>12.1f}")
    frames = fp.get("pause_frames", 0) + fp.get("resume_frames", 0) if fp else math.nan
    lines.append(f"{'all PFC frames':<22}{frames:>12}{dp.get('frames_sent', math.nan):>12}")
    return lines


def table(cc: str, f: dict, d: dict) -> str:
    frows = fork_rows(f)
    drows = [(r["bytes"], r["slowdown"], r["fct_s"]) for r in d["rows"]]
    fb, db = by_bin([(s, x) for s, x, _ in frows]), by_bin([(s, x) for s, x, _ in drows])
    last_ack = bool(d.get("last_ack"))
    xb = by_bin([(r["bytes"], fork_def_slowdown(r["src"], r["dst"], int(r["bytes"]), r["fct_s"],
                                                last_ack))
                 for r in d["rows"] if r.get("src", -1) >= 0])
    lines = [f"== {cc}: the simulator (CC_MODE of run.py --cc {cc}) | dcnsim {DCNSIM_CC[cc]}",
             "   dcnsim --set " + " ".join(o for o in d.get("overrides", [])[1:]),
             "   (last column: dcnsim's FCT" + ("" if last_ack else " + the path's propagation")
             + " over the simulator's ideal)",
             f"{'slowdown':<22}{'ns-3 fork':>12}{'dcnsim':>12}{'dcnsim/fork-def':>16}"]
    for i, (a, b) in enumerate(zip(BINS, BINS[1:], strict=False)):
        for q in PERCENTILES:
            lines.append(f"p{q:g} {bin_label(a, b):<18}{percentile(fb[i], q):>12.3f}"
                         f"{percentile(db[i], q):>12.3f}{percentile(xb[i], q):>16.3f}")
        lines.append(f"   flows in bin{'':<8}{len(fb[i]):>12}{len(db[i]):>12}")
    ff = by_bin([(s, t * 1e6) for s, _, t in frows])
    df = by_bin([(s, t * 1e6) for s, _, t in drows])
    lines.append(f"{'FCT (us)':<22}{'ns-3 fork':>12}{'dcnsim':>12}")
    for i, (a, b) in enumerate(zip(BINS, BINS[1:], strict=False)):
        for q in PERCENTILES:
            lines.append(f"p{q:g} {bin_label(a, b):<18}{percentile(ff[i], q):>12.1f}"
                         f"{percentile(df[i], q):>12.1f}")
    fs, ds = summarize(frows), summarize(drows)
    for k in ("flows", "fct_mean_us", "fct_p99_us", "slowdown_mean", "slowdown_p50",
              "slowdown_p99"):
        lines.append(f"{k:<22}{fs[k]:>12.3f}{ds[k]:>12.3f}")
    lines += pfc_lines(f.get("pfc"), d.get("pfc"))
    pf = per_flow(f, d)
    if "pearson" in pf:
        what = "dcnsim FCT" if last_ack else "(dcnsim FCT + propagation)"
        lines.append(f"per flow: {pf['matched']} matched; {what} / fork FCT "
                     f"p5 {pf['ratio_p5']:.3f} p50 {pf['ratio_p50']:.3f} "
                     f"p95 {pf['ratio_p95']:.3f}; Pearson r {pf['pearson']:.4f}")
    eng = d.get("engine", {})
    for k in ("sim_span_ms", "cpu_s", "cpu_s_per_sim_ms", "peak_rss_mb"):
        lines.append(f"{k:<22}{f.get(k) or math.nan:>12.3f}{d.get(k) or math.nan:>12.3f}")
    if eng:
        lines.append(f"{'engine cpu_s':<22}{'':>12}{eng['cpu_s']:>12.3f}")
        per_ms = eng["cpu_s_per_sim_ms"] or math.nan
        lines.append(f"{'engine cpu_s/sim_ms':<22}{'':>12}{per_ms:>12.3f}")
        lines.append(f"{'engine peak_rss_mb':<22}{'':>12}{eng['peak_rss_mb']:>12.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--flows-file", required=True)
    ap.add_argument("--cc", action="append", choices=sorted(DCNSIM_CC), help="repeatable")
    ap.add_argument("--scenario", default=str(REPO / "scenarios" / "hpcc-fattree.toml"))
    ap.add_argument("--dcnsim", default="dcnsim", help="the dcnsim command (may have words)")
    ap.add_argument("--engine", help="a dcnsim-engine program for the speed figure")
    ap.add_argument("--build-dir", default=str(fork.DEFAULT_OUT))
    ap.add_argument("--out", default="out/hpcc-ns3", help="JSON results go here")
    ap.add_argument("--reuse", action="store_true", help="reuse fork-<cc>.json found in --out")
    ap.add_argument("--reprint", action="store_true",
                    help="only print the tables of fork-<cc>.json and dcnsim-<cc>.json in --out")
    ap.add_argument("--nice", type=int, default=10)
    ap.add_argument("--only-cc", action="store_true",
                    help="set only roce.cc, not the scenario's variant of that name")
    ap.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="one more dcnsim override, after the variant's (repeatable)")
    ap.add_argument("--delivery-fct", dest="last_ack", action="store_false",
                    help="the scenario's FCT ends at delivery (not [measure] fct = last-ack)")
    a = ap.parse_args(argv)
    flows_file = Path(a.flows_file).resolve()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for cc in a.cc or ["hp", "dcqcn", "timely"]:
        if a.reprint:
            f = json.loads((out / f"fork-{cc}.json").read_text())
            d = json.loads((out / f"dcnsim-{cc}.json").read_text())
            print(table(cc, f, d), flush=True)
            continue
        f = run_fork(a, cc, flows_file, out)
        d = run_dcnsim(a, cc, flows_file)
        (out / f"dcnsim-{cc}.json").write_text(json.dumps(d) + "\n")
        print(table(cc, f, d), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

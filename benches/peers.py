#!/usr/bin/env python3
"""dcnsim against ns-2.35 and htsim on the same star incast, in rotation, in one run.

    python benches/peers.py [--repeat 3] [--htsim 'CMD {servers} {rate_gbps} {workload} {duration}']

Eight cases: 1 and 10 Gb/s links (25 us each), 256 KiB DropTail at the switch's port to the
client, TCP NewReno (min RTO 200 ms, initial window 2, 20-segment window), n = 8 and 64
servers, and two workloads: `long` (every server one long-lived flow from t = 0) and `sru`
(barrier-synchronised 256 KB SRUs, [speed] issue's cases). Every simulator runs as its own
process and is measured by the kernel's account of that process (`os.wait4`: user + system
CPU seconds, peak RSS), start-up included. The speed compared is bottleneck packets (the
packets that left the switch's port to the client) per CPU second; each case's ratio is
taken between medians over --repeat runs, and the order of the simulators rotates from one
run to the next so that none always runs first (this machine's speed drifts). Each run is
paired with a run of the same case for 1 ms of simulated time, whose CPU time is the
simulator's start-up (loading, building the topology, routes); the table gives both the
whole-process rate and the simulation's own rate, packets / (CPU s − start-up CPU s).

- dcnsim: `dcnsim-engine` (the engine without Python), `scenarios/bench-incast.toml` with
  overrides; the long-lived case is an SRU no run can finish (1000 GB).
- ns-2.35: `ns benches/ns2/incast.tcl` (Debian package `ns2`); the SRU case uses the sender
  barrier (the one-way TCP's `done` callback) so that ns-2 pays no per-packet Tcl callback.
- htsim: our star-incast driver over htsim's library, `benches/htsim/htsim_star_incast.cpp`,
  built with htsim by `benches/htsim/build.sh` (used when built), or any command given with
  --htsim, formatted with the case's values, that prints a line `bottleneck_pkts N`.

A simulator that is not installed is left out with one line. Never run by CI.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCENARIO = ROOT / "scenarios" / "bench-incast.toml"
TCL = HERE / "ns2" / "incast.tcl"
HTSIM = HERE / "htsim" / "build" / "htsim_star_incast"
PKTS = re.compile(r"bottleneck_pkts\W+(\d+)")


def cases(d1: float, d10: float) -> list[dict]:
    return [
        {"rate_gbps": r, "workload": w, "servers": n, "duration": d1 if r == 1 else d10}
        for r in (1, 10)
        for w in ("long", "sru")
        for n in (8, 64)
    ]


def timed(cmd: list[str], cwd: str | None = None) -> tuple[int, str, str, float, float, int]:
    """Run `cmd`; return (exit code, stdout, stderr, CPU s, wall s, peak RSS KiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (
            p.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            ru.ru_utime + ru.ru_stime,
            wall,
            ru.ru_maxrss,
        )


def dcnsim_cmd(engine: str, c: dict, tmp: str) -> list[str]:
    sru = '"256KB"' if c["workload"] == "sru" else '"1000GB"'
    return [
        engine,
        str(SCENARIO),
        f"topology.servers={c['servers']}",
        f'topology.link_rate="{c["rate_gbps"]}Gbps"',
        f'sim.duration="{c["duration"]}s"',
        f"apps.0.sru={sru}",
    ]


def ns2_cmd(ns: str, c: dict, tmp: str) -> list[str]:
    return [
        ns,
        str(TCL),
        str(c["servers"]),
        "262144",
        "0.2",
        repr(float(c["duration"])),
        os.path.join(tmp, "events.tr"),
        "sender",
        "0",
        f"{c['rate_gbps']}Gb",
        c["workload"],
    ]


def default_htsim(driver: Path = HTSIM) -> str | None:
    """The --htsim template of the driver `benches/htsim/build.sh` builds, if it is built."""
    if not os.access(driver, os.X_OK):
        return None
    args = "-n {servers} -rate_gbps {rate_gbps} -time_s {duration} -workload {workload}"
    return f"{shlex.quote(str(driver))} {args}"


def htsim_cmd(template: str, c: dict, tmp: str) -> list[str]:
    return shlex.split(template.format(**c))


def machine() -> str:
    """The CPU model and the CPUs this process may use, e.g. "Intel(R) Xeon(R) Processor,
    2 CPUs" (ratios measured on one model need not hold on another)."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            model = next(line.split(":", 1)[1].strip() for line in fh
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{model}, {len(os.sched_getaffinity(0))} CPUs"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--duration-1g", type=float, default=10.0, help="simulated s at 1 Gb/s")
    ap.add_argument("--duration-10g", type=float, default=2.0, help="simulated s at 10 Gb/s")
    ap.add_argument("--engine", default=str(ROOT / "target" / "release" / "dcnsim-engine"))
    ap.add_argument(
        "--base-engine",
        help="an earlier build's dcnsim-engine, run in the same rotation as `dcnsim@base`",
    )
    ap.add_argument("--ns", default="ns", help="ns-2 binary (default: ns on PATH)")
    ap.add_argument(
        "--htsim",
        default=os.environ.get("HTSIM_CMD") or default_htsim(),
        help="htsim command template (or HTSIM_CMD; default: the driver benches/htsim/build.sh "
        "builds, when built)",
    )
    ap.add_argument("--only", nargs="*", help="case names to run, e.g. 1g-long-8")
    ap.add_argument("--out", help="append every run as a JSON line to this file")
    a = ap.parse_args()

    sims: list[tuple[str, object]] = []
    # Every simulator runs in its own temporary directory: engine paths must not be
    # relative to this one.
    a.engine = os.path.abspath(a.engine)
    if not os.access(a.engine, os.X_OK):
        print(f"peers: --engine {a.engine}: not built (cargo build --release)", file=sys.stderr)
        return 2
    sims.append(("dcnsim", lambda c, t: dcnsim_cmd(a.engine, c, t)))
    if a.base_engine:
        a.base_engine = os.path.abspath(a.base_engine)
        if not os.access(a.base_engine, os.X_OK):
            print(f"peers: --base-engine {a.base_engine}: no such program", file=sys.stderr)
            return 2
        sims.append(("dcnsim@base", lambda c, t: dcnsim_cmd(a.base_engine, c, t)))
    ns = shutil.which(a.ns)
    if ns:
        sims.append(("ns-2", lambda c, t: ns2_cmd(ns, c, t)))
    else:
        print("peers: ns-2 left out (no `ns` on PATH; apt-get install ns2)", file=sys.stderr)
    if a.htsim:
        sims.append(("htsim", lambda c, t: htsim_cmd(a.htsim, c, t)))
    else:
        print(
            "peers: htsim left out (no --htsim command; benches/htsim/build.sh builds one)",
            file=sys.stderr,
        )

    todo = cases(a.duration_1g, a.duration_10g)
    for c in todo:
        c["name"] = f"{c['rate_gbps']}g-{c['workload']}-{c['servers']}"
    if a.only:
        todo = [c for c in todo if c["name"] in a.only]
    runs: dict[tuple[str, str], list[dict]] = {}
    cpu_model = machine()
    out = open(a.out, "a") if a.out else None
    k = 0
    for r in range(a.repeat):
        for c in todo:
            order = sims[k % len(sims) :] + sims[: k % len(sims)]
            k += 1
            for name, make in order:
                got = []
                for case in ({**c, "duration": 0.001}, c):
                    with tempfile.TemporaryDirectory(prefix="peers_") as tmp:
                        code, so, se, cpu, wall, rss = timed(make(case, tmp), cwd=tmp)
                    m = PKTS.search(so)
                    if code != 0 or not m:
                        print(
                            f"peers: {name} {c['name']} failed (exit {code}): "
                            f"{(se or so).strip()[-300:]}",
                            file=sys.stderr,
                        )
                        break
                    got.append(cpu)
                if len(got) < 2:
                    continue
                rec = {
                    "sim": name,
                    "case": c["name"],
                    "repeat": r,
                    "cpu_s": round(cpu, 4),
                    "startup_cpu_s": round(got[0], 4),
                    "wall_s": round(wall, 4),
                    "rss_kib": rss,
                    "bottleneck_pkts": int(m.group(1)),
                    **{key: c[key] for key in ("rate_gbps", "workload", "servers", "duration")},
                    "machine": cpu_model,
                }
                runs.setdefault((name, c["name"]), []).append(rec)
                if out:
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
            print(f"  round {r + 1}/{a.repeat} {c['name']} done", file=sys.stderr)

    names = [n for n, _ in sims]
    names = [n for n in names if any(k[0] == n for k in runs)]
    print(f"Machine: {cpu_model}.")
    print("Median over runs: bottleneck packets; CPU s of the whole process (start-up CPU s);")
    print("packets per CPU s whole / of the simulation alone.\n")
    print(
        "| case | "
        + " | ".join(names)
        + " | "
        + " | ".join(f"dcnsim / {n} (whole, sim)" for n in names[1:])
        + " |"
    )
    print("|---" * (1 + 2 * len(names) - 1) + "|")
    ratios: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in names[1:]}
    for c in todo:
        whole: dict[str, float] = {}
        sim: dict[str, float] = {}
        cells = []
        for n in names:
            rs = runs.get((n, c["name"]), [])
            if not rs:
                cells.append("—")
                continue
            cpu = statistics.median(x["cpu_s"] for x in rs)
            st = statistics.median(x["startup_cpu_s"] for x in rs)
            pk = statistics.median(x["bottleneck_pkts"] for x in rs)
            whole[n] = pk / max(cpu, 1e-3)
            sim[n] = pk / max(cpu - st, 1e-3)
            cells.append(
                f"{pk:,.0f}; {cpu:.3f} s ({st:.3f}); {whole[n] / 1e6:.2f} / {sim[n] / 1e6:.2f} M"
            )
        rc = []
        for n in names[1:]:
            if "dcnsim" in whole and n in whole:
                w, s = whole["dcnsim"] / whole[n], sim["dcnsim"] / sim[n]
                ratios[n][0].append(w)
                ratios[n][1].append(s)
                rc.append(f"**{w:.2f}×**, {s:.2f}×")
            else:
                rc.append("—")
        print(f"| {c['name']} | " + " | ".join(cells) + " | " + " | ".join(rc) + " |")
    print()
    for n, (w, s) in ratios.items():
        if w:
            print(
                f"median over the cases, dcnsim / {n}: whole process {statistics.median(w):.2f}× "
                f"(range {min(w):.2f}–{max(w):.2f}×), simulation alone "
                f"{statistics.median(s):.2f}× (range {min(s):.2f}–{max(s):.2f}×), "
                f"{len(w)} cases"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

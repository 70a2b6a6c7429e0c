#!/usr/bin/env python3
"""Run one point of the TCN paper's leaf-spine experiment in the authors' own ns-2 code.

    python3 benches/tcn_ns2/run.py --fig 10 --load 0.9 --scheme tcn [--flows 5000] [--seed 0]

Runs TCN-NS2's `spine_empirical_pias_diffserv.tcl` (with its `tcp-common-opt-raw.tcl` and
`CDF_*.tcl`) with the `ns` that `build.sh` (next to this file) built, and prints one JSON
line of flow-completion-time statistics from its `flow.tr`.  The scripts are copied into a
temporary directory first; only that copy is edited (for `--seed`).  The arguments are the
ones the authors' `run_pias_diffserv.py` passes, except the flow count (`--flows`).
See README.md in this folder.  Exit codes: 0 ok, 1 ns failed, 3 ns or scripts not found.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_OUT = Path(os.environ.get("HOME", "/root")) / ".cache" / "dcnsim" / "tcn-ns2"
MAIN_TCL = "spine_empirical_pias_diffserv.tcl"
COMMON_TCL = "tcp-common-opt-raw.tcl"

# Per figure: sender algorithm and the marking threshold K in packets. The same K is the
# per-queue threshold (ECN_scheme 0: mark when the queue holds > K * 1500 bytes) and,
# for TCN (ECN_scheme 2), the sojourn-time threshold K * 1500 * 8 / link rate
# (prio_dwrr.cc): 65 -> 78 us, 84 -> 100.8 us at 10 Gb/s.
FIGS = {10: ("DCTCP-Sack", 65), 12: ("Sack", 84)}
SCHEMES = {"perqueue": 0, "tcn": 2}

# run_pias_diffserv.py's fixed settings, in the order the Tcl script reads its argv.
SERVICE_NUM = 7
LINK_RATE_GBPS = 10
LINK_DELAY_S = 0.0000002
HOST_DELAY_S = 0.000020
QUEUE_PKTS = 200
CONNECTIONS_PER_PAIR = 1
ENABLE_MULTIPATH = 1
PER_FLOW_MP = 1
ACK_RATIO = 1
SLOW_START_RESTART = "true"
DCTCP_G = 0.0625
MIN_RTO_S = 0.005
PIAS_THRESH_BYTES = 100000
SWITCH_ALG = "PrioDwrr"
SERVERS_PER_TOR, TORS, SPINES, OVERSUB = 12, 12, 12, 1

# Seed offsets per --seed step: larger than any of the script's own per-pair seeds
# (33 * 143 + 4369 * 143 = 629 486), below ns-2's bound MAXINT for K < 2000.
SEED_STEP = 1_000_003

SMALL_BYTES = 100 * 1024
LARGE_BYTES = 10 * 1024 * 1024
PAYLOAD = 1460


def ns_args(fig: int, load: float, scheme: str, flows: int, k: float) -> list[str]:
    source_alg, _ = FIGS[fig]
    return [str(v) for v in (
        SERVICE_NUM, flows, LINK_RATE_GBPS, LINK_DELAY_S, HOST_DELAY_S, QUEUE_PKTS, load,
        CONNECTIONS_PER_PAIR, ENABLE_MULTIPATH, PER_FLOW_MP, source_alg, ACK_RATIO,
        SLOW_START_RESTART, DCTCP_G, MIN_RTO_S, SCHEMES[scheme], PIAS_THRESH_BYTES, k,
        SWITCH_ALG, SERVERS_PER_TOR, TORS, SPINES, OVERSUB, "flow.tr",
    )]


def replace_once(text: str, old: str, new: str, name: str) -> str:
    if text.count(old) != 1:
        raise SystemExit(f"tcn_ns2: expected one '{old}' in {name}; the script changed?")
    return text.replace(old, new)


def reseed(work: Path, seed: int) -> None:
    """Offset the script's fixed seeds by `seed` (no change for seed 0)."""
    if seed == 0:
        return
    off = seed * SEED_STEP
    main = work / MAIN_TCL
    text = main.read_text()
    text = replace_once(text, "[expr 17 * $i + 1244 * $j]",
                        f"[expr 17 * $i + 1244 * $j + {off}]", MAIN_TCL)
    text = replace_once(text, "[expr 33 * $i + 4369 * $j]",
                        f"[expr 33 * $i + 4369 * $j + {off}]", MAIN_TCL)
    main.write_text(text)
    common = work / COMMON_TCL
    common.write_text(replace_once(common.read_text(), "$warmupRNG seed 5251",
                                   f"$warmupRNG seed {5251 + seed}", COMMON_TCL))


def log_finish_time(work: Path) -> None:
    """Append the finish time to each `flow.tr` line (start = finish - FCT), so a run's
    arrivals can be replayed in dcnsim as a flow file (`--flows-out`)."""
    common = work / COMMON_TCL
    line = 'puts $logfile "$tmp_pkts $fldur $rttimes $group_id $sid'
    common.write_text(replace_once(common.read_text(), f'{line}"', f'{line} [$ns now]"',
                                   COMMON_TCL))


def p99(values: list[float]) -> float:
    """The authors' result.py percentile: sorted[99 * n // 100]."""
    if not values:
        return 0.0
    s = sorted(values)
    return s[99 * len(s) // 100]


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def parse_flows(path: Path) -> list[tuple[int, float, int, int]]:
    """flow.tr lines: packets, FCT (s), timeouts (nrexmit_ delta), src, dst, service id.

    Returned in file order, which is the order in which flows finished.
    """
    rows = []
    with path.open() as f:
        for line in f:
            fields = line.split()
            if len(fields) < 6:
                continue
            pkts = int(float(fields[0]))
            rows.append((pkts * PAYLOAD, float(fields[1]) * 1e6, int(fields[2]), int(fields[5])))
    return rows


def summarise(rows: list[tuple[int, float, int, int]]) -> dict:
    small = [r for r in rows if r[0] < SMALL_BYTES]
    medium = [r for r in rows if SMALL_BYTES <= r[0] <= LARGE_BYTES]
    large = [r for r in rows if r[0] > LARGE_BYTES]
    timeouts = sum(r[2] for r in rows)
    first = rows[: len(rows) // 5]
    small_fct = [r[1] for r in small]
    return {
        "flows": len(rows),
        "small_count": len(small),
        "small_mean_us": round(mean(small_fct), 3),
        "small_p99_us": round(p99(small_fct), 3),
        "medium_count": len(medium),
        "medium_mean_us": round(mean([r[1] for r in medium]), 3),
        "large_count": len(large),
        "large_mean_us": round(mean([r[1] for r in large]), 3),
        "all_mean_us": round(mean([r[1] for r in rows]), 3),
        "timeouts": timeouts,
        "timeouts_small": sum(r[2] for r in small),
        "flows_with_timeouts": sum(1 for r in rows if r[2] > 0),
        "timeouts_first20pct_fraction": round(sum(r[2] for r in first) / timeouts, 4)
        if timeouts else 0.0,
    }


def find_inputs(args: argparse.Namespace) -> tuple[str, Path]:
    ns = args.ns or str(DEFAULT_OUT / "ns")
    if shutil.which(ns) is None:
        print(f"tcn_ns2: ns not found at {ns} (run benches/tcn_ns2/build.sh)", file=sys.stderr)
        raise SystemExit(3)
    scripts = Path(args.scripts) if args.scripts else DEFAULT_OUT / "scripts"
    if not (scripts / MAIN_TCL).is_file():
        print(f"tcn_ns2: {MAIN_TCL} not found in {scripts}", file=sys.stderr)
        raise SystemExit(3)
    return ns, scripts


def run(args: argparse.Namespace) -> dict:
    ns, scripts = find_inputs(args)
    source_alg, k_default = FIGS[args.fig]
    k = args.k if args.k is not None else k_default
    with tempfile.TemporaryDirectory(prefix="tcn_ns2.") as tmp:
        work = Path(tmp)
        for f in scripts.glob("*.tcl"):
            shutil.copy(f, work / f.name)
        reseed(work, args.seed)
        log_finish_time(work)
        cmd = [ns, MAIN_TCL, *ns_args(args.fig, args.load, args.scheme, args.flows, k)]
        t0 = time.monotonic()
        with (work / "log.txt").open("w") as log:
            proc = subprocess.run(cmd, cwd=work, stdout=log, stderr=subprocess.STDOUT)
        wall = time.monotonic() - t0
        log_text = (work / "log.txt").read_text(errors="replace")
        if args.keep:
            keep = Path(args.keep)
            keep.mkdir(parents=True, exist_ok=True)
            for name in ("flow.tr", "log.txt"):
                if (work / name).exists():
                    shutil.copy(work / name, keep / name)
            (keep / "cmd.txt").write_text(" ".join(cmd) + "\n")
        finished = "Simulation Finished!" in log_text
        if proc.returncode != 0 or not finished:
            sys.stderr.write(log_text[-4000:])
            print(f"tcn_ns2: ns exited with {proc.returncode}, finished={finished}",
                  file=sys.stderr)
            raise SystemExit(1)
        rows = parse_flows(work / "flow.tr")
    out = {
        "simulator": "TCN-NS2 (ns-2.35)",
        "fig": args.fig,
        "source_alg": source_alg,
        "scheme": args.scheme,
        "ecn_scheme": SCHEMES[args.scheme],
        "k_pkts": k,
        "tcn_threshold_us": round(k * (PAYLOAD + 40) * 8 / (LINK_RATE_GBPS * 1e3), 3),
        "load": args.load,
        "sim_end_flows": args.flows,
        "seed": args.seed,
    }
    out.update(summarise(rows))
    out["extra_connections"] = log_text.count("creating new connection")
    out["wall_seconds"] = round(wall, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fig", type=int, choices=sorted(FIGS), required=True)
    ap.add_argument("--load", type=float, required=True, help="e.g. 0.9")
    ap.add_argument("--scheme", choices=sorted(SCHEMES), required=True)
    ap.add_argument("--flows", type=int, default=5000, help="the script's sim_end")
    ap.add_argument("--seed", type=int, default=0,
                    help="0 = the authors' seeds; K > 0 offsets every seed")
    ap.add_argument("--k", type=float, default=None,
                    help="override the threshold K in packets (default 65 fig 10, 84 fig 12)")
    ap.add_argument("--ns", default=None, help=f"ns binary (default {DEFAULT_OUT}/ns)")
    ap.add_argument("--scripts", default=None,
                    help=f"TCN-NS2 scripts folder (default {DEFAULT_OUT}/scripts)")
    ap.add_argument("--keep", default=None, help="copy flow.tr, log.txt and cmd.txt here")
    args = ap.parse_args()
    if not 0 <= args.seed < 2000:
        ap.error("--seed must be in 0..1999")
    print(json.dumps(run(args)))


if __name__ == "__main__":
    main()

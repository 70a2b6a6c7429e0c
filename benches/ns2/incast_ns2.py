#!/usr/bin/env python3
"""Run dcnsim's devkota-fig08/fig09 TCP incast in ns-2.35 and print one JSON line.

    python benches/ns2/incast_ns2.py --servers 16 --buffer-bytes 65536 --min-rto-ms 200 \
        --duration 20

The simulation itself is incast.tcl (next to this file), run with the `ns` binary
(Debian/Ubuntu package `ns2`).  Its event file goes to a temporary directory that is
removed afterwards.  See README.md in this folder for what is simulated and counted.
Exit codes: 0 ok, 1 ns failed, 3 ns not installed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TCL = Path(__file__).resolve().with_name("incast.tcl")


def count_events(path: Path, servers: int) -> dict[str, int]:
    """Classify the retransmission-timer expiries in the event file.

    Lines: "E t src dst TCP EVENT fid seqno cwnd" (ns-2 event trace), "S t" (round
    start: every sender gets a new SRU) and "D t i" (sender i has everything it was
    given acked: nothing outstanding until the next S).
    """
    idle = [False] * servers
    timeouts = idle_expiries = fast_retx = 0
    with path.open() as f:
        for line in f:
            fields = line.split()
            if not fields:
                continue
            kind = fields[0]
            if kind == "S":
                idle = [False] * servers
            elif kind == "D":
                idle[int(fields[2])] = True
            elif kind == "E" and len(fields) >= 7:
                event, flow = fields[5], int(fields[6])
                if event == "TIMEOUT":
                    if idle[flow]:
                        idle_expiries += 1
                    else:
                        timeouts += 1
                elif event.endswith("FAST_RETX"):
                    fast_retx += 1
    return {
        "timeouts": timeouts,
        "idle_rto_expiries": idle_expiries,
        "fast_retransmits": fast_retx,
    }


def number(x: float) -> int | float:
    return int(x) if float(x).is_integer() else x


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--servers", type=int, default=8)
    ap.add_argument(
        "--buffer-bytes",
        type=int,
        default=262144,
        help="switch->client DropTail buffer, bytes of waiting packets",
    )
    ap.add_argument("--min-rto-ms", type=float, default=200.0, help="Agent/TCP minrto_")
    ap.add_argument("--duration", type=float, default=20.0, help="simulated seconds")
    ap.add_argument(
        "--barrier",
        choices=("receiver", "sender"),
        default="receiver",
        help="SRU complete when the client has it all in order (default, as "
        "dcnsim) or when the server has it all acked (TCP 'done')",
    )
    ap.add_argument(
        "--link-step-ns",
        type=float,
        default=0.0,
        help="server i's link delay is 25 us + i * STEP ns (default 0: all equal; see "
        "incast.tcl on simultaneous arrivals)",
    )
    ap.add_argument("--ns", default="ns", help="ns-2 binary (default: ns on PATH)")
    args = ap.parse_args()
    if args.servers < 1 or args.buffer_bytes < 1 or args.min_rto_ms <= 0 or args.duration <= 0:
        ap.error("servers, buffer, min RTO and duration must be positive")

    ns = shutil.which(args.ns)
    if ns is None:
        print(
            f"incast_ns2: ns-2 binary '{args.ns}' not found "
            "(install the Debian/Ubuntu package ns2)",
            file=sys.stderr,
        )
        return 3

    with tempfile.TemporaryDirectory(prefix="incast_ns2_") as tmp:
        events = Path(tmp) / "events.tr"
        cmd = [
            ns,
            str(TCL),
            str(args.servers),
            str(args.buffer_bytes),
            repr(args.min_rto_ms / 1000.0),
            repr(args.duration),
            str(events),
            args.barrier,
            repr(args.link_step_ns * 1e-9),
        ]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        res = {}
        for line in proc.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == "R":
                res[parts[1]] = parts[2]
        if proc.returncode != 0 or "sim_seconds" not in res:
            sys.stderr.write(proc.stdout + proc.stderr)
            print(f"incast_ns2: ns exited with code {proc.returncode}", file=sys.stderr)
            return 1
        ev = count_events(events, args.servers)

    sim_seconds = float(res["sim_seconds"])
    delivered = int(res["delivered_bytes"])
    out = {
        "simulator": "ns-2",
        "ns2_version": res["ns2_version"],
        "servers": args.servers,
        "buffer_bytes": args.buffer_bytes,
        "min_rto_ms": number(args.min_rto_ms),
        "sim_seconds": number(sim_seconds),
        "goodput_mbps": round(delivered * 8 / sim_seconds / 1e6, 3),
        "rounds": int(res["rounds"]),
        "timeouts": ev["timeouts"],
        "nrexmit": int(res["nrexmit"]),
        "drops": int(res["drops"]),
        "wall_seconds": round(wall, 3),
        "barrier": args.barrier,
        "link_step_ns": number(args.link_step_ns),
        "delivered_bytes": delivered,
        "idle_rto_expiries": ev["idle_rto_expiries"],
        "fast_retransmits": ev["fast_retransmits"],
        "bottleneck_pkts": int(res["bottleneck_pkts"]),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

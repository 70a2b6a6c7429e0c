#!/usr/bin/env python3
"""Speed of dcnsim against ns-3 on the same TCP incast, measured side by side in one run.

    python benches/compare_ns3.py [--duration 2] [--servers 8 64] [--repeat 3]

For each server count it runs dcnsim (the `bench-incast` scenario, one thread) and the ns-3
version in benches/ns3/incast_ns3.py (same topology, rates, buffer, TCP settings) for the same
simulated time, alternating the two, and prints wall time, bottleneck data packets per wall
second and their ratio (best of --repeat for each). Needs `pip install ns3`; never run by CI.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE.parent / "python" / "dcnsim" / "scenarios" / "bench-incast.toml"


def run_dcnsim(servers: int, buffer_bytes: int, duration: float, rwnd: int) -> dict:
    from dcnsim import _core

    text = SCENARIO.read_text()
    overrides = [
        ("topology.servers", str(servers)),
        ("topology.switch_buffer", str(buffer_bytes)),
        ("sim.duration", f'"{duration}s"'),
        ("tcp.rwnd", str(rwnd)),
    ]
    t0 = time.perf_counter()
    res = _core.run(text, str(SCENARIO), overrides)
    wall = time.perf_counter() - t0
    s = {k: v[0] for k, v in res["summary"].items()}
    return {
        "wall_seconds": wall,
        "engine_seconds": wall,  # the tables carry no wall time; timed around the call
        "bottleneck_pkts": s["bottleneck_pkts"],
        "goodput_mbps": s["goodput_mbps"],
        "events": s["events"],
        "rounds": s["rounds"],
    }


def run_ns3(servers: int, buffer_bytes: int, duration: float, rwnd: int) -> dict | None:
    cmd = [
        sys.executable, str(HERE / "ns3" / "incast_ns3.py"), "--servers", str(servers),
        "--buffer-bytes", str(buffer_bytes), "--duration", str(duration), "--rcv-buf", str(rwnd),
    ]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"ns-3 run failed ({p.returncode}): {p.stderr.strip()[:300]}", file=sys.stderr)
        return None
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("{")][-1]
    return json.loads(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--servers", type=int, nargs="+", default=[8, 64])
    ap.add_argument("--buffer-bytes", type=int, default=262144)
    ap.add_argument("--rwnd", type=int, default=29200)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rows = []
    for n in a.servers:
        best_d: dict | None = None
        best_n: dict | None = None
        for _ in range(a.repeat):
            d = run_dcnsim(n, a.buffer_bytes, a.duration, a.rwnd)
            if best_d is None or d["engine_seconds"] < best_d["engine_seconds"]:
                best_d = d
            r = run_ns3(n, a.buffer_bytes, a.duration, a.rwnd)
            if r is not None and (best_n is None or r["wall_seconds"] < best_n["wall_seconds"]):
                best_n = r
        assert best_d is not None
        row = {"servers": n, "dcnsim": best_d, "ns3": best_n}
        rows.append(row)
        dp = best_d["bottleneck_pkts"] / best_d["engine_seconds"]
        line = (
            f"n={n:3d}  dcnsim {best_d['engine_seconds']:.3f} s wall, {dp / 1e6:.2f} M pkt/s, "
            f"{best_d['events'] / best_d['engine_seconds'] / 1e6:.1f} M events/s, "
            f"goodput {best_d['goodput_mbps']:.0f} Mb/s"
        )
        if best_n is not None:
            npps = best_n["bottleneck_pkts"] / best_n["wall_seconds"]
            line += (
                f" | ns-3 {best_n['wall_seconds']:.3f} s wall, {npps / 1e3:.1f} k pkt/s, "
                f"goodput {best_n['goodput_mbps']:.0f} Mb/s | wall-time ratio "
                f"{best_n['wall_seconds'] / best_d['engine_seconds']:.0f}x, "
                f"pkt/s ratio {dp / npps:.0f}x"
            )
        print(line, flush=True)
    print(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

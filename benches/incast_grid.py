#!/usr/bin/env python3
"""The Devkota 2010 TCP incast grid in dcnsim and a reference simulator, side by side.

    python benches/incast_grid.py ns2 --out benches/results/ns2.jsonl
    python benches/incast_grid.py dcnsim --profile ns2 --out benches/results/dcnsim-ns2.jsonl
    python benches/incast_grid.py compare benches/results/ns2.jsonl \
        benches/results/dcnsim-ns2.jsonl [--markdown table.md]

The grid: star, 1 Gb/s, 25 us links, 256000-byte SRUs, barrier-synchronised rounds over
persistent connections, NewReno, window 20 segments (ns-2's default), DropTail at the
switch->client port of 32/64/128/256 KiB, 1..64 servers, min RTO 200 ms and 10 ms, 20 s
simulated (the `devkota-fig08` / `-fig09` scenarios). `ns2` runs benches/ns2/incast_ns2.py
per cell, `ns3` benches/ns3/incast_ns3.py (via benches/ns3/grid.py, see its README),
`dcnsim` the scenario with `--set`-style overrides. Every cell is appended to the output
as one JSON line as soon as it finishes; cells already there are skipped (resumable).

`compare` prints, per min RTO, the agreement figures dcnsim is held to against ns-2 and ns-3:
collapsed (< 50 % of the 1 Gb/s link) vs not in the same cells; where both are healthy the
mean |goodput difference|; where both collapse the median goodput ratio; RTOs within 2x
at n <= 16. Never run by CI (the references are not dependencies of dcnsim).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BUFFERS = [32768, 65536, 131072, 262144]
SERVERS = [1, 2, 4, 8, 16, 32, 64]
MIN_RTOS = [200, 10]
LINK_MBPS = 1000.0
COLLAPSE = 0.5 * LINK_MBPS


def key(c: dict) -> tuple[int, int, int]:
    return (int(c["min_rto_ms"]), int(c["buffer_bytes"]), int(c["servers"]))


def load(path: Path) -> dict[tuple[int, int, int], dict]:
    cells: dict[tuple[int, int, int], dict] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                c = json.loads(line)
                cells[key(c)] = c
    return cells


def grid(args) -> list[tuple[int, int, int]]:
    return [
        (r, b, n)
        for r in (args.min_rto_ms or MIN_RTOS)
        for b in (args.buffers or BUFFERS)
        for n in (args.servers or SERVERS)
    ]


FIG08 = ROOT / "scenarios" / "devkota-fig08.toml"


def stepped_star(n: int, buf: int, step_ns: float) -> str:
    """devkota-fig08 with its star written out as an explicit topology in which server i's
    link has the delay 25 us + i * step_ns (the same layout as benches/ns2/incast.tcl's
    STEP_S): with a step, packets of different servers never reach the switch at the same
    instant, so neither simulator has to break ties between simultaneous arrivals."""
    keep, out = False, []
    for line in FIG08.read_text().splitlines():
        if line.startswith("["):
            head = line.split("#")[0].strip().strip("[]")
            keep = head in ("meta", "sim", "tcp", "apps", "measure")
        if keep:
            out.append(line)
    out += ["[topology]", 'kind = "explicit"', f'switch_buffer = "{buf}B"',
            '[[topology.nodes]]', 'name = "sw"', 'kind = "switch"',
            '[[topology.nodes]]', 'name = "client"', 'kind = "host"']
    for i in range(n):
        out += ["[[topology.nodes]]", f'name = "server{i + 1}"', 'kind = "host"']
    out += ["[[topology.links]]", 'a = "sw"', 'b = "client"', 'rate = "1Gbps"',
            'delay = "25us"']
    for i in range(n):
        ps = 25_000_000 + round(i * step_ns * 1000)
        out += ["[[topology.links]]", f'a = "server{i + 1}"', 'b = "sw"', 'rate = "1Gbps"',
                f'delay = "{ps}ps"']
    return "\n".join(out) + "\n"


def run_dcnsim_cell(profile: str | None, rto: int, buf: int, n: int, duration: float,
                    extra: list[str], step_ns: float = 0.0) -> dict:
    import tempfile

    import dcnsim

    # Both min RTOs from the fig08 file: it sets no rtt_tick, so the profile's stays in force.
    scen = FIG08
    over: dict[str, object] = {
        "topology.servers": n,
        "topology.switch_buffer": f"{buf}B",
        "tcp.min_rto": f"{rto}ms",
        "sim.duration": f"{duration}s",
    }
    tmp = None
    if step_ns:
        tmp = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
        tmp.write(stepped_star(n, buf, step_ns))
        tmp.close()
        scen = Path(tmp.name)
        del over["topology.servers"], over["topology.switch_buffer"]
    if profile:
        over["tcp.profile"] = profile
    for kv in extra:
        k, v = kv.split("=", 1)
        try:
            over[k] = json.loads(v)  # numbers and true/false as TOML values
        except json.JSONDecodeError:
            over[k] = v
    t0 = time.perf_counter()
    try:
        res = dcnsim.run(str(scen), over)
    finally:
        if tmp is not None:
            Path(tmp.name).unlink()
    wall = time.perf_counter() - t0
    s = res.summary.iloc[0]
    return {
        "simulator": "dcnsim",
        "profile": profile or "dcnsim",
        "overrides": extra,
        "link_step_ns": step_ns,
        "servers": n,
        "buffer_bytes": buf,
        "min_rto_ms": rto,
        "sim_seconds": duration,
        "goodput_mbps": float(s["goodput_mbps"]),
        "rounds": int(s["rounds"]),
        "timeouts": int(s["timeouts"]),
        "drops": int(s["drops"]),
        "wall_seconds": wall,
    }


def run_ns2_cell(rto: int, buf: int, n: int, duration: float, step_ns: float = 0.0) -> dict:
    cmd = [sys.executable, str(HERE / "ns2" / "incast_ns2.py"), "--servers", str(n),
           "--buffer-bytes", str(buf), "--min-rto-ms", str(rto), "--duration", str(duration),
           "--link-step-ns", repr(step_ns)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def cmd_run(args) -> int:
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = load(out)
    todo = [c for c in grid(args) if c not in done]
    for i, (rto, buf, n) in enumerate(todo, 1):
        if args.sim == "ns2":
            cell = run_ns2_cell(rto, buf, n, args.duration, args.link_step_ns)
        else:
            cell = run_dcnsim_cell(args.profile, rto, buf, n, args.duration, args.set or [],
                                   args.link_step_ns)
        with out.open("a") as f:
            f.write(json.dumps(cell) + "\n")
        print(f"[{i}/{len(todo)}] {args.sim} rto={rto}ms buffer={buf} n={n}: "
              f"{cell['goodput_mbps']:.1f} Mb/s, {cell['timeouts']} RTOs", file=sys.stderr)
    return 0


def compare(ref: dict, ours: dict, rto: int) -> dict:
    cells = [k for k in ref if k in ours and k[0] == rto]
    agree = [(ref[k]["goodput_mbps"] < COLLAPSE) == (ours[k]["goodput_mbps"] < COLLAPSE)
             for k in cells]
    healthy = [abs(ours[k]["goodput_mbps"] - ref[k]["goodput_mbps"]) / ref[k]["goodput_mbps"]
               for k in cells
               if ref[k]["goodput_mbps"] >= COLLAPSE and ours[k]["goodput_mbps"] >= COLLAPSE]
    both = [ours[k]["goodput_mbps"] / max(ref[k]["goodput_mbps"], 1e-9)
            for k in cells
            if ref[k]["goodput_mbps"] < COLLAPSE and ours[k]["goodput_mbps"] < COLLAPSE]
    rto_cells = [k for k in cells if k[2] <= 16
                 and (ref[k]["timeouts"] > 0 or ours[k]["timeouts"] > 0)]
    # Within 2x; counts below 10 are compared as "few" (both < 10).
    rto_ok = [
        (ref[k]["timeouts"] < 10 and ours[k]["timeouts"] < 10)
        or (0.5 <= (ours[k]["timeouts"] + 1) / (ref[k]["timeouts"] + 1) <= 2.0)
        for k in rto_cells
    ]
    return {
        "cells": len(cells),
        "collapse_agree": sum(agree) / len(agree) if agree else float("nan"),
        "healthy_n": len(healthy),
        "healthy_mean_abs_diff": statistics.mean(healthy) if healthy else float("nan"),
        "both_collapsed_n": len(both),
        "both_collapsed_median_ratio": statistics.median(both) if both else float("nan"),
        "rto_cells": len(rto_cells),
        "rto_within_2x": sum(rto_ok) / len(rto_ok) if rto_ok else float("nan"),
    }


def cmd_compare(args) -> int:
    ref, ours = load(Path(args.ref)), load(Path(args.ours))
    rname = next(iter(ref.values()))["simulator"] if ref else "ref"
    lines = []
    for rto in MIN_RTOS:
        lines.append(f"\nmin RTO {rto} ms: goodput Mb/s (RTOs), {rname} | dcnsim\n")
        bufs = sorted({k[1] for k in ref if k[0] == rto})
        lines.append("| n | " + " | ".join(f"{b // 1024} KiB" for b in bufs) + " |")
        lines.append("|---" * (len(bufs) + 1) + "|")
        for n in sorted({k[2] for k in ref if k[0] == rto}):
            row = [str(n)]
            for b in bufs:
                r, o = ref.get((rto, b, n)), ours.get((rto, b, n))
                if r is None or o is None:
                    row.append("–")
                    continue
                row.append(f"{r['goodput_mbps']:.0f} ({r['timeouts']}) | "
                           f"{o['goodput_mbps']:.0f} ({o['timeouts']})".replace("|", "/"))
            lines.append("| " + " | ".join(row) + " |")
        m = compare(ref, ours, rto)
        lines.append(
            f"\nagreement at {rto} ms over {m['cells']} cells: collapsed-vs-not "
            f"{100 * m['collapse_agree']:.0f} % (>= 90 %); both healthy ({m['healthy_n']}): "
            f"mean |diff| {100 * m['healthy_mean_abs_diff']:.1f} % (<= 10 %); both collapsed "
            f"({m['both_collapsed_n']}): median ratio {m['both_collapsed_median_ratio']:.2f} "
            f"(0.5-2); RTOs within 2x at n <= 16: {100 * m['rto_within_2x']:.0f} % of "
            f"{m['rto_cells']} cells")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text.lstrip() + "\n")
    if args.plot:
        plot(ref, ours, rname, Path(args.plot))
    return 0


def plot(ref: dict, ours: dict, rname: str, path: Path) -> None:
    """Goodput against n, one panel per min RTO: the reference dashed, dcnsim solid."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, rto in zip(axes, MIN_RTOS, strict=True):
        for i, b in enumerate(sorted({k[1] for k in ref if k[0] == rto})):
            ns = sorted(k[2] for k in ref if k[0] == rto and k[1] == b and k in ours)
            color = f"C{i}"
            ax.plot(ns, [ref[(rto, b, n)]["goodput_mbps"] for n in ns], "--", color=color,
                    alpha=0.6, label=f"{rname} {b // 1024} KiB")
            ax.plot(ns, [ours[(rto, b, n)]["goodput_mbps"] for n in ns], "o-", color=color,
                    label=f"dcnsim {b // 1024} KiB")
        ax.set_xscale("log", base=2)
        ax.set_title(f"min RTO {rto} ms")
        ax.set_xlabel("servers")
        ax.axhline(COLLAPSE, color="grey", lw=0.8, ls=":")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("goodput (Mb/s)")
    axes[0].set_ylim(0, 1000)
    axes[1].legend(fontsize=7, ncol=2, loc="lower left")
    fig.suptitle(f"Devkota 2010 incast grid: {rname} (dashed) and dcnsim (solid)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("ns2", "dcnsim"):
        q = sub.add_parser(name)
        q.add_argument("--out", required=True)
        q.add_argument("--duration", type=float, default=20.0)
        q.add_argument("--servers", type=int, nargs="*")
        q.add_argument("--buffers", type=int, nargs="*")
        q.add_argument("--min-rto-ms", type=int, nargs="*")
        q.add_argument("--link-step-ns", type=float, default=0.0,
                       help="server i's link delay is 25 us + i * STEP ns (default 0)")
        if name == "dcnsim":
            q.add_argument("--profile", default=None)
            q.add_argument("--set", action="append", help="extra KEY=VALUE override")
        q.set_defaults(sim=name)
    c = sub.add_parser("compare")
    c.add_argument("ref")
    c.add_argument("ours")
    c.add_argument("--markdown")
    c.add_argument("--plot", help="write a PNG of goodput against n beside the reference")
    args = p.parse_args(argv)
    if args.cmd == "compare":
        return cmd_compare(args)
    return cmd_run(args)


if __name__ == "__main__":
    sys.exit(main())

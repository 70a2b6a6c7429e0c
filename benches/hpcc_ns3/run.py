#!/usr/bin/env python3
"""Make a flow file, or run the HPCC authors' ns-3 simulator on one and print one JSON line.

    python3 benches/hpcc_ns3/run.py gen --flows 3000 --out /tmp/fb30.txt [--seed 1]
    python3 benches/hpcc_ns3/run.py run --cc hp --flows-file /tmp/fb30.txt [--json-out F]

`gen` draws flows as the simulator's traffic generator does (Li et al., "HPCC: High
Precision Congestion Control", SIGCOMM 2019; its `traffic_gen/traffic_gen.py`): every host
starts flows in a Poisson process whose rate gives `--load` of its `--bw` link for the
mean flow size, to a destination drawn uniformly among the other hosts, with a size drawn
from a piecewise-linear CDF (default: the simulator's FB_Hadoop table,
`traffic_gen/FbHdp_distribution.txt`, read from the checkout `build.sh` made). It stops
after `--flows` flows (the generator stops at a time instead). The file format is the
simulator's `mix/flow.txt` one, which dcnsim's `flows_file` reads too.

`run` writes a configuration with the values the simulator's own `run.py` writes for
`--cc` (`hp` = HPCC, `dcqcn`, `timely`, `dctcp`) and the link rate `--bw` (Gb/s), runs
`scratch/third` on it in a temporary directory under `nice`, and reads its FCT file.
Per flow: source and destination host, size, start, FCT, the simulator's own ideal FCT
and the slowdown FCT / ideal (not clamped at 1); PFC: pause and resume frames and the
paused time from its PFC file. `gen --incast N` writes an incast instead: N senders, one
flow of `--size` bytes each to `--dst`, all at one instant. Measured: CPU seconds (user + sys, from
`os.wait4`) and peak RSS of the simulator's process, and the simulated span from the first
flow's start to the last flow's end. See README.md in this folder. Exit codes: 0 ok,
1 the simulator failed or finished no flow, 3 the build was not found.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_OUT = Path(os.environ.get("HPCC_NS3_DIR", Path.home() / ".cache" / "dcnsim" / "hpcc-ns3"))
CCS = ("hp", "dcqcn", "timely", "dctcp")


# ---- flow file ------------------------------------------------------------------------

def read_cdf(path: Path) -> list[tuple[float, float]]:
    """The generator's CDF format: one `size percent` pair per line, 0 % first, 100 % last."""
    pts = []
    for line in path.read_text().splitlines():
        if line.strip():
            x, y = line.split()
            pts.append((float(x), float(y)))
    if not pts or pts[0][1] != 0 or pts[-1][1] != 100:
        raise SystemExit(f"hpcc_ns3: {path} is not a CDF from 0 to 100 %")
    if any(b[0] <= a[0] or b[1] <= a[1] for a, b in zip(pts, pts[1:], strict=False)):
        raise SystemExit(f"hpcc_ns3: {path} is not strictly increasing")
    return pts


def cdf_mean(pts: list[tuple[float, float]]) -> float:
    """Mean of the piecewise-linear distribution (trapezoids, as the generator computes)."""
    pairs = zip(pts, pts[1:], strict=False)
    return sum((x0 + x1) / 2 * (y1 - y0) for (x0, y0), (x1, y1) in pairs) / 100


def cdf_draw(pts: list[tuple[float, float]], rng: random.Random) -> int:
    """Inverse of the CDF at a uniform percentile, interpolated linearly; at least 1 byte."""
    p = rng.random() * 100
    for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
        if p <= y1:
            return max(1, int(x0 + (x1 - x0) * (p - y0) / (y1 - y0)))
    return max(1, int(pts[-1][0]))


def make_flows(hosts: int, load: float, bw_gbps: float, count: int, cdf: list[tuple[float, float]],
               seed: int, base_s: float = 0.0) -> list[tuple[int, int, int, float]]:
    """(src, dst, size bytes, start s) of `count` flows in start order.

    Each host's arrivals are a Poisson process with mean gap mean_size·8 / (load·bw); a heap
    keyed by each host's next arrival gives the merged order. Times are whole nanoseconds,
    as the generator keeps them."""
    if hosts < 2 or count < 1 or not 0 < load:
        raise SystemExit("hpcc_ns3: need at least 2 hosts, 1 flow and a positive load")
    rng = random.Random(seed)
    gap_ns = cdf_mean(cdf) * 8 / (load * bw_gbps * 1e9) * 1e9

    def gap() -> int:
        return int(-math.log(1 - rng.random()) * gap_ns)

    heap = [(gap(), h) for h in range(hosts)]
    heapq.heapify(heap)
    flows = []
    while len(flows) < count:
        t, src = heap[0]
        dst = rng.randrange(hosts - 1)
        dst += dst >= src
        flows.append((src, dst, cdf_draw(cdf, rng), base_s + t * 1e-9))
        heapq.heapreplace(heap, (t + gap(), src))
    return flows


def make_incast(hosts: int, senders: int, size: int, dst: int = 0,
                start_s: float = 0.0) -> list[tuple[int, int, int, float]]:
    """An incast: `senders` flows of `size` bytes to host `dst`, all starting at `start_s`.
    The senders are spread evenly over the other hosts in host order from dst + 1 (sender i
    is host dst + 1 + ⌊i·(hosts − 1)/senders⌋, modulo hosts), so on the fat-tree of
    mix/fat.txt they sit under many ToRs and pods, a few under the receiver's own ToR."""
    if not 1 <= senders <= hosts - 1 or size < 1 or not 0 <= dst < hosts:
        raise SystemExit("hpcc_ns3: an incast needs 1..hosts-1 senders, a size and a "
                         "receiver among the hosts")
    return [((dst + 1 + i * (hosts - 1) // senders) % hosts, dst, size, start_s)
            for i in range(senders)]


def flow_file_text(flows: list[tuple[int, int, int, float]], pg: int = 3, dport: int = 100) -> str:
    lines = [str(len(flows))]
    lines += [f"{s} {d} {pg} {dport} {size} {t:.9f}" for s, d, size, t in flows]
    return "\n".join(lines) + "\n"


def read_flow_file(path: Path) -> list[tuple[int, int, int, float]]:
    rows = path.read_text().split("\n")
    n = int(rows[0].split()[0])
    out = []
    for line in rows[1:n + 1]:
        s, d, _pg, _dport, size, t = line.split()
        out.append((int(s), int(d), int(size), float(t)))
    return out


# ---- the simulator's configuration --------------------------------------------------------

def cc_values(cc: str, bw: int) -> dict[str, object]:
    """The per-cc values of the simulator's run.py (integer arithmetic as it does it in
    Python 2), for a NIC rate of `bw` Gb/s; ECN maps for the NIC rate and 4× it."""
    kmax = (400 * bw // 25, 400 * bw * 4 // 25)
    kmin = (100 * bw // 25, 100 * bw * 4 // 25)
    pmax = 0.2
    common = dict(t_alpha=1, t_dec=4, t_inc=300, g=0.00390625, dctcp_ai=1000, int_multi=1,
                  mi=0, u_tgt=0.95)
    if cc == "dcqcn":
        v = dict(mode=1, ai=5 * bw // 25, hai=50 * bw // 25, has_win=0, vwin=0, us=0, ack_prio=1)
    elif cc == "hp":
        ai = 10 * bw // 25
        v = dict(mode=3, ai=ai, hai=ai, has_win=1, vwin=1, us=1, ack_prio=0,
                 int_multi=bw // 25)
    elif cc == "timely":
        v = dict(mode=7, ai=10 * bw // 10, hai=50 * bw // 10, has_win=0, vwin=0, us=0, ack_prio=1)
    elif cc == "dctcp":
        v = dict(mode=8, ai=10, hai=10, dctcp_ai=615, g=0.0625, has_win=1, vwin=1, us=0,
                 ack_prio=0)
        kmax = kmin = (30 * bw // 10, 30 * bw * 4 // 10)
        pmax = 1.0
    else:
        raise SystemExit(f"hpcc_ns3: unknown cc {cc!r}: expected one of {', '.join(CCS)}")
    out = {**common, **v}
    r = (bw * 1_000_000_000, bw * 4 * 1_000_000_000)
    out["kmax_map"] = f"2 {r[0]} {kmax[0]} {r[1]} {kmax[1]}"
    out["kmin_map"] = f"2 {r[0]} {kmin[0]} {r[1]} {kmin[1]}"
    out["pmax_map"] = f"2 {r[0]} {pmax:.2f} {r[1]} {pmax:.2f}"
    out["buffer_mb"] = 16 * bw // 50
    return out


def config_text(cc: str, bw: int, topo: str, flows: str, work: str, stop_s: float) -> str:
    """A configuration for `scratch/third` with every key its run.py writes. Differences from
    that run.py, none of which changes the simulated network: file names; the stop time;
    no packet trace (an empty trace node list, ENABLE_TRACE 0); the queue-length monitor
    (every 100 ns over all switch ports from QLEN_MON_START) starts after the stop time."""
    v = cc_values(cc, bw)
    keys = [
        ("ENABLE_QCN", 1), ("USE_DYNAMIC_PFC_THRESHOLD", 1), ("PACKET_PAYLOAD_SIZE", 1000),
        ("TOPOLOGY_FILE", topo), ("FLOW_FILE", flows), ("TRACE_FILE", f"{work}/trace.txt"),
        ("TRACE_OUTPUT_FILE", f"{work}/mix.tr"), ("FCT_OUTPUT_FILE", f"{work}/fct.txt"),
        ("PFC_OUTPUT_FILE", f"{work}/pfc.txt"), ("SIMULATOR_STOP_TIME", f"{stop_s:.6f}"),
        ("CC_MODE", v["mode"]), ("ALPHA_RESUME_INTERVAL", v["t_alpha"]),
        ("RATE_DECREASE_INTERVAL", v["t_dec"]), ("CLAMP_TARGET_RATE", 0),
        ("RP_TIMER", v["t_inc"]), ("EWMA_GAIN", v["g"]), ("FAST_RECOVERY_TIMES", 1),
        ("RATE_AI", f"{v['ai']}Mb/s"), ("RATE_HAI", f"{v['hai']}Mb/s"),
        ("MIN_RATE", "1000Mb/s"), ("DCTCP_RATE_AI", f"{v['dctcp_ai']}Mb/s"),
        ("ERROR_RATE_PER_LINK", "0.0000"), ("L2_CHUNK_SIZE", 4000), ("L2_ACK_INTERVAL", 1),
        ("L2_BACK_TO_ZERO", 0), ("HAS_WIN", v["has_win"]), ("GLOBAL_T", 1),
        ("VAR_WIN", v["vwin"]), ("FAST_REACT", v["us"]), ("U_TARGET", v["u_tgt"]),
        ("MI_THRESH", v["mi"]), ("INT_MULTI", v["int_multi"]), ("MULTI_RATE", 0),
        ("SAMPLE_FEEDBACK", 0), ("PINT_LOG_BASE", 1.01), ("PINT_PROB", 1.0),
        ("RATE_BOUND", 1), ("ACK_HIGH_PRIO", v["ack_prio"]), ("LINK_DOWN", "0 0 0"),
        ("ENABLE_TRACE", 0), ("KMAX_MAP", v["kmax_map"]), ("KMIN_MAP", v["kmin_map"]),
        ("PMAX_MAP", v["pmax_map"]), ("BUFFER_SIZE", v["buffer_mb"]),
        ("QLEN_MON_FILE", f"{work}/qlen.txt"),
        ("QLEN_MON_START", int((stop_s + 1) * 1e9)), ("QLEN_MON_END", int((stop_s + 2) * 1e9)),
    ]
    return "".join(f"{k} {val}\n" for k, val in keys)


# ---- the simulator's output -------------------------------------------------------------

def ip_to_host(hex_ip: str) -> int:
    """The simulator's node_id_to_ip is 11.0.0.1 + (id / 256)·2^16 + (id % 256)·2^8."""
    return (int(hex_ip, 16) >> 8) & 0xFFFF


def parse_fct(text: str) -> list[dict[str, float]]:
    """FCT file rows: sip dip sport dport size start_ns fct_ns standalone_fct_ns (hex IPs);
    the FCT ends at the sender's last ACK, the standalone FCT is the pair's base RTT plus
    the bytes (headers without INT) at the path's bottleneck rate."""
    rows = []
    for line in text.splitlines():
        f = line.split()
        if len(f) != 8:
            continue
        fct, ideal = int(f[6]), int(f[7])
        rows.append(dict(src=ip_to_host(f[0]), dst=ip_to_host(f[1]), sport=int(f[2]),
                         bytes=int(f[4]), start_ns=int(f[5]), fct_ns=fct, ideal_ns=ideal,
                         slowdown=fct / ideal if ideal > 0 else math.nan))
    return rows


def parse_pfc(text: str) -> list[tuple[int, int, int, int, int]]:
    """PFC file rows (`get_pfc` in the simulator's scratch/third.cc, bound to every
    QbbNetDevice's `QbbPfc` trace): time_ns node node_type if_index type. One line is one
    PFC frame as the device at the receiving end of the link got it (`QbbNetDevice::Receive`):
    node_type 0 a host NIC, 1 a switch; type 1 a pause (the frame's pause time > 0), 0 a
    resume. The priority is not written. Only switches send PFC (`SwitchNode::CheckAndSendPfc`
    once when an ingress queue crosses its threshold, `CheckAndSendResume` once when it falls
    back): no refresh frames."""
    rows = []
    for line in text.splitlines():
        f = line.split()
        if len(f) != 5 or not all(x.isdigit() for x in f):
            continue
        rows.append((int(f[0]), int(f[1]), int(f[2]), int(f[3]), int(f[4])))
    return rows


def pfc_summary(events: list[tuple[int, int, int, int, int]], end_ns: int) -> dict[str, float]:
    """Pause and resume frames, the devices paused, and the paused time summed over them
    (each device's pause to its next resume; a pause still on at the end counts to `end_ns`).
    The file does not say which priority a frame pauses: with every flow in one priority
    group, as the flow files here have, a device has one priority that can be paused, so
    its frames alternate pause / resume. A second pause before the resume (another priority)
    is counted as a frame and leaves the running interval as it is."""
    since: dict[tuple[int, int], int] = {}
    paused_ns = 0
    out = dict(pause_frames=0, resume_frames=0, pauses_to_hosts=0, pauses_to_switches=0)
    devices = set()
    for t, node, ntype, dev, kind in sorted(events):
        key = (node, dev)
        if kind == 1:
            out["pause_frames"] += 1
            out["pauses_to_hosts" if ntype == 0 else "pauses_to_switches"] += 1
            devices.add(key)
            since.setdefault(key, t)
        else:
            out["resume_frames"] += 1
            if key in since:
                paused_ns += t - since.pop(key)
    paused_ns += sum(max(0, end_ns - t) for t in since.values())
    return dict(out, paused_devices=len(devices), paused_s=paused_ns * 1e-9,
                unresumed=len(since))


def span_ms(rows: list[dict[str, float]]) -> float:
    """Simulated time from the first flow's start to the last flow's end."""
    if not rows:
        return 0.0
    first = min(r["start_ns"] for r in rows)
    last = max(r["start_ns"] + r["fct_ns"] for r in rows)
    return (last - first) / 1e6


def run_measured(cmd: list[str], cwd: Path, env: dict[str, str], log: Path,
                 timeout_s: float | None) -> tuple[int, float, int, float]:
    """Run `cmd`; (exit status, CPU s user+sys, peak RSS bytes, wall s) of that process."""
    t0 = time.monotonic()
    with open(log, "wb") as out:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            if timeout_s is not None:
                p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
        _, status, ru = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, time.monotonic() - t0


def find_build(root: Path) -> tuple[Path, Path, Path]:
    """(the scratch/third program, its library folder, the simulation/ folder)."""
    sim = root / "src" / "simulation"
    build = sim / "build"
    for name in ("scratch/third", "scratch/third-optimized"):
        prog = build / name
        if prog.is_file() and os.access(prog, os.X_OK):
            return prog, build, sim
    raise SystemExit(3)


# ---- commands ---------------------------------------------------------------------------

def cmd_gen(a: argparse.Namespace) -> int:
    if a.incast:
        flows = make_incast(a.hosts, a.incast, a.size, a.dst, a.base)
        # dport 200: the simulator's analysis/fct_analysis.py tells incast flows by it
        Path(a.out).write_text(flow_file_text(flows, dport=200))
        print(json.dumps(dict(flow_file=str(a.out), flows=len(flows), hosts=a.hosts,
                              incast=a.incast, size=a.size, dst=a.dst,
                              srcs=[f[0] for f in flows])))
        return 0
    default_cdf = DEFAULT_OUT / "src" / "traffic_gen" / "FbHdp_distribution.txt"
    cdf_path = Path(a.cdf) if a.cdf else default_cdf
    flows = make_flows(a.hosts, a.load, a.bw, a.flows, read_cdf(cdf_path), a.seed, a.base)
    Path(a.out).write_text(flow_file_text(flows))
    last = flows[-1][3] - a.base
    print(json.dumps(dict(flow_file=str(a.out), flows=len(flows), hosts=a.hosts, load=a.load,
                          bw_gbps=a.bw, seed=a.seed, cdf=str(cdf_path),
                          mean_bytes=round(cdf_mean(read_cdf(cdf_path)), 1),
                          arrivals_ms=round(last * 1e3, 3))))
    return 0


def cmd_run(a: argparse.Namespace) -> int:
    root = Path(a.build_dir)
    try:
        prog, libdir, sim = find_build(root)
    except SystemExit:
        print(f"hpcc_ns3: no scratch/third under {root}/src/simulation/build; run build.sh",
              file=sys.stderr)
        return 3
    flows_path = Path(a.flows_file).resolve()
    flows = read_flow_file(flows_path)
    topo = Path(a.topo).resolve() if a.topo else sim / "mix" / "fat.txt"
    stop_s = max(t for *_, t in flows) + a.tail
    work = Path(tempfile.mkdtemp(prefix=f"hpcc-ns3-{a.cc}-"))
    try:
        (work / "trace.txt").write_text("0\n")
        (work / "config.txt").write_text(
            config_text(a.cc, a.bw, str(topo), str(flows_path), str(work), stop_s))
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = f"{libdir}:{libdir / 'lib'}:" + env.get("LD_LIBRARY_PATH", "")
        cmd = ["nice", "-n", str(a.nice), str(prog), str(work / "config.txt")]
        code, cpu, rss, wall = run_measured(cmd, work, env, work / "stdout.txt", a.timeout)
        rows = parse_fct((work / "fct.txt").read_text()) if (work / "fct.txt").exists() else []
        pfc = parse_pfc((work / "pfc.txt").read_text()) if (work / "pfc.txt").exists() else []
        if a.keep:
            shutil.copytree(work, a.keep, dirs_exist_ok=True)
        tail = (work / "stdout.txt").read_text(errors="replace").splitlines()[-5:]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    span = span_ms(rows)
    end_ns = max([r["start_ns"] + r["fct_ns"] for r in rows] + [e[0] for e in pfc] + [0])
    result = dict(
        simulator="hpcc-ns3", cc=a.cc, bw_gbps=a.bw, topology=str(topo),
        flows_file=str(flows_path), flows=len(flows), finished=len(rows), exit=code,
        cpu_s=round(cpu, 3), wall_s=round(wall, 3), peak_rss_mb=round(rss / 2**20, 1),
        sim_span_ms=round(span, 4),
        cpu_s_per_sim_ms=round(cpu / span, 4) if span > 0 else None,
        pfc=pfc_summary(pfc, end_ns), stop_s=stop_s, command=" ".join(cmd), rows=rows)
    if code != 0 or not rows:
        result["stdout_tail"] = tail
    text = json.dumps(result)
    if a.json_out:
        Path(a.json_out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json_out).write_text(text + "\n")
        summary = {k: v for k, v in result.items() if k != "rows"}
        print(json.dumps(summary))
    else:
        print(text)
    return 0 if code == 0 and rows else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="write a flow file")
    g.add_argument("--hosts", type=int, default=320)
    g.add_argument("--load", type=float, default=0.3)
    g.add_argument("--bw", type=float, default=100.0, help="host link rate, Gb/s")
    g.add_argument("--flows", type=int, default=3000)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--base", type=float, default=0.0, help="start of the first gap, s")
    g.add_argument("--cdf", help="size CDF (default: the fork's FbHdp_distribution.txt)")
    g.add_argument("--incast", type=int, metavar="N",
                   help="instead: N senders to --dst, one flow of --size each, all at --base")
    g.add_argument("--size", type=int, default=1_000_000, help="incast flow size, bytes")
    g.add_argument("--dst", type=int, default=0, help="incast receiver (host index)")
    g.add_argument("--out", required=True)
    r = sub.add_parser("run", help="run scratch/third on a flow file")
    r.add_argument("--cc", choices=CCS, default="hp")
    r.add_argument("--bw", type=int, default=100, help="NIC rate, Gb/s (run.py's --bw)")
    r.add_argument("--flows-file", required=True)
    r.add_argument("--topo", help="topology file (default: the fork's mix/fat.txt)")
    r.add_argument("--build-dir", default=str(DEFAULT_OUT))
    r.add_argument("--tail", type=float, default=1.0,
                   help="stop time after the last start, s (the run ends earlier when idle)")
    r.add_argument("--timeout", type=float, help="wall-clock limit, s")
    r.add_argument("--nice", type=int, default=10)
    r.add_argument("--keep", help="copy the run's directory (config, fct.txt, pfc.txt) here")
    r.add_argument("--json-out", help="write the full JSON here and print it without rows")
    a = ap.parse_args(argv)
    return cmd_gen(a) if a.cmd == "gen" else cmd_run(a)


if __name__ == "__main__":
    sys.exit(main())

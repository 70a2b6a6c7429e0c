"""dcnsim's side of one point of the TCN authors' leaf-spine runs (`run.py` here runs theirs).

    python benches/tcn_ns2/dcnsim_point.py --fig 10 --load 0.9 --scheme tcn --seed 1 \
        [--flows 5000] [--set key=value ...]

Runs `scenarios/tcn-fig10.toml` (or `-fig12`) through the Python API with the point's scheme,
load, seed and message count, and the delays of the authors' script (`run_pias_diffserv.py`:
host links 20 us + 0.2 us, fabric links 0.2 us, i.e. `base_rtt = 81.6us` with 80 us in the
hosts), and prints one JSON line with the keys of `run.py`'s, computed the same way (sizes in
bytes, small < 100 KiB, medium up to 10 MiB, the authors' `result.py` percentile).

FCT as ns-2 measures it: the authors' `TCP_pair` stops the clock when the sender's agent has
every byte acknowledged (`done_data`), dcnsim's `messages.end_s` when the receiver has every
byte. Each message's FCT here adds the one-way latency of a 40-byte ACK along its path
(propagation plus serialisation over 2 links within a leaf, 4 across the spines), the part of
the difference that does not depend on queues; the reverse-path queueing of that last ACK is
not added.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAYLOAD = 1460
SMALL_BYTES = 100 * 1024
LARGE_BYTES = 10 * 1024 * 1024
# The authors' script: host links host_delay + mean_link_delay, fabric links mean_link_delay.
HOST_LINK_S = 20.2e-6
FABRIC_LINK_S = 0.2e-6
ACK_BYTES = 40
RATE_BPS = 10e9
MARKING = {
    10: {"perqueue": '{ kind = "step", k = "65pkts" }',
         "tcn": '{ kind = "tcn", threshold = "78us" }'},
    12: {"perqueue": '{ kind = "step", k = "84pkts" }',
         "tcn": '{ kind = "tcn", threshold = "101us" }'},
}


def p99(values: list[float]) -> float:
    """The authors' result.py percentile: sorted[99 * n // 100]."""
    s = sorted(values)
    return s[99 * len(s) // 100] if s else 0.0


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def ack_latency_s(src: int, dst: int, per_leaf: int) -> float:
    hops = 2 if src // per_leaf == dst // per_leaf else 4
    fabric = hops - 2
    return 2 * HOST_LINK_S + fabric * FABRIC_LINK_S + hops * ACK_BYTES * 8 / RATE_BPS


def timeouts_after_delivery(flow_timeouts: dict[int, int], msg_flows: list[int],
                            msg_timeouts: list[int]) -> int:
    """RTOs of the connections that fall in no message's count. A message counts the RTOs of
    its connection from its write until the receiver has its last byte; an RTO after that
    (the sender's last ACKs lost, the message already delivered) is in the connection's
    total only. ns-2's per-flow count runs until the sender has the last ACK (`done_data`),
    so it includes these."""
    per_conn = dict.fromkeys(flow_timeouts, 0)
    for f, t in zip(msg_flows, msg_timeouts, strict=True):
        per_conn[f] = per_conn.get(f, 0) + t
    return sum(flow_timeouts[f] - per_conn[f] for f in flow_timeouts)


def flow_file_from_ns2(flow_tr: Path) -> str:
    """A dcnsim flow file (the HPCC simulator's `flow.txt` form: `src dst pg dport size
    start`) of the flows of an authors' run kept by `run.py --keep`: `flow.tr` lines are
    `packets FCT timeouts src dst service finish`, the start is finish - FCT, measured from
    the script's `init_schedule` at 1 s; the service is the class (queues 1..7)."""
    lines = []
    for line in flow_tr.read_text().splitlines():
        f = line.split()
        if len(f) < 7:
            raise SystemExit(f"{flow_tr}: no finish time on a line (a run of run.py before "
                             "it logged them?)")
        start = max(0.0, float(f[6]) - float(f[1]) - 1.0)
        lines.append(f"{f[3]} {f[4]} {f[5]} 100 {int(float(f[0])) * PAYLOAD} {start:.9f}")
    return f"{len(lines)}\n" + "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> dict:
    try:
        from dcnsim import api
    except ImportError:  # a source checkout with the extension built in place
        sys.path.insert(0, str(REPO / "python"))
        from dcnsim import api

    scenario = REPO / "scenarios" / f"tcn-fig{args.fig}.toml"
    queues = ('{ count = 8, scheduler = "sp_dwrr", strict = 1, quantum = 1500, limit = "300KB", '
              f'hosts = true, marking = {MARKING[args.fig][args.scheme]} }}')
    overrides = {
        "topology.queues": queues,
        "topology.base_rtt": '"81.6us"',
        "apps.0.load": str(args.load),
        "apps.0.count": str(args.flows),
        "sim.seed": str(args.seed),
    }
    if args.ns2_flows:
        # Replay the authors' run's own flows (arrival, pair, service, size) instead of
        # drawing them: the load and count then come from the file.
        del overrides["apps.0.load"], overrides["apps.0.count"]
        out = Path(args.ns2_flows).with_suffix(".flows.txt")
        out.write_text(flow_file_from_ns2(Path(args.ns2_flows)))
        overrides["apps.0.flows_file"] = json.dumps(str(out.resolve()))
    for kv in args.set:
        k, _, v = kv.partition("=")
        overrides[k] = v
    # Values are TOML literals (as on dcnsim's command line); the API takes Python values.
    values = {k: tomllib.loads(f"v = {v}")["v"] for k, v in overrides.items()}
    res = api.run(str(scenario), values)
    m, fl = res.messages, res.flows
    host = {f: int(str(n).removeprefix("host")) for f, n in zip(fl["flow"], fl["src"], strict=True)}
    peer = {f: int(str(n).removeprefix("host")) for f, n in zip(fl["flow"], fl["dst"], strict=True)}
    rows = []
    cols = (m["flow"], m["bytes"], m["start_s"], m["end_s"], m["timeouts"])
    for flow, b, s, e, to in zip(*cols, strict=True):
        fct = (e - s + ack_latency_s(host[flow], peer[flow], 12)) * 1e6
        rows.append((int(b), fct, int(to), host[flow] - 1, peer[flow] - 1, s))
    if args.dump:
        Path(args.dump).write_text("".join(
            f"{r[0]} {r[1]:.3f} {r[2]} {r[3]} {r[4]} {r[5]:.9f}\n" for r in rows))
    small = [r for r in rows if r[0] < SMALL_BYTES]
    medium = [r for r in rows if SMALL_BYTES <= r[0] <= LARGE_BYTES]
    large = [r for r in rows if r[0] > LARGE_BYTES]
    return {
        "simulator": "dcnsim",
        "fig": args.fig, "load": args.load, "scheme": args.scheme, "seed": args.seed,
        "flows": len(rows),
        "small_count": len(small),
        "small_mean_us": round(mean([r[1] for r in small]), 3),
        "small_p99_us": round(p99([r[1] for r in small]), 3),
        "medium_count": len(medium),
        "medium_mean_us": round(mean([r[1] for r in medium]), 3),
        "large_count": len(large),
        "large_mean_us": round(mean([r[1] for r in large]), 3),
        "all_mean_us": round(mean([r[1] for r in rows]), 3),
        "timeouts": sum(r[2] for r in rows),
        "timeouts_small": sum(r[2] for r in small),
        "flows_with_timeouts": sum(1 for r in rows if r[2] > 0),
        "timeouts_after_delivery": timeouts_after_delivery(
            dict(zip(fl["flow"], fl["timeouts"], strict=True)), list(m["flow"]),
            list(m["timeouts"])),
        "overrides": args.set,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fig", type=int, choices=(10, 12), default=10)
    ap.add_argument("--load", type=float, required=True)
    ap.add_argument("--scheme", choices=("perqueue", "tcn"), required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--flows", type=int, default=5000)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="one more scenario override (repeatable)")
    ap.add_argument("--dump", default=None, metavar="FILE",
                    help="also write one line per message: bytes, FCT (us), timeouts, "
                         "source and destination host index, arrival (s)")
    ap.add_argument("--ns2-flows", default=None, metavar="FLOW_TR",
                    help="replay the flows of an authors' run (its flow.tr, kept by "
                         "run.py --keep) instead of drawing them")
    print(json.dumps(run(ap.parse_args())))


if __name__ == "__main__":
    main()

"""The fat-tree reference point (docs/performance.md): `benches/scenarios/fattree-k16.toml`
(k = 16, 1 024 hosts, 10/40 Gb/s, web search at 50 % load, 100 000 flows) run by
`dcnsim run` as a user runs it, whole process, one thread.

Prints one JSON line: wall time of the simulation (run.json) and of the whole process,
events, events per wall second, flows, messages finished, peak RSS of the process and per
flow. `--set KEY=VALUE` cuts it (e.g. `--set topology.k=4 --set apps.0.count=2000`, the
test suite's size).

    PYTHONPATH=python python benches/fattree.py                 # the reference point
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "benches" / "scenarios" / "fattree-k16.toml"


def run(sets: list[str], scenario: Path = SCENARIO) -> dict[str, object]:
    """Run the scenario in a child process; its figures as a dict."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "dcnsim", "run", str(scenario), "--out", str(out)]
        for s in sets:
            cmd += ["--set", s]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                              env={**os.environ, "CI": "true"})
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"fattree: dcnsim run failed ({proc.returncode}): "
                             f"{proc.stderr.strip()}")
        meta = json.loads((out / "run.json").read_text())
        with open(out / "summary.csv", newline="") as f:
            summary = next(csv.DictReader(f))
    flows = int(summary["flows"])
    # ru_maxrss of the children is the largest child's peak (KiB on Linux): this child's,
    # as it is the first and only one of this process.
    rss_kib = after.ru_maxrss
    return {
        "sets": sets,
        "sim_wall_s": meta["wall_s"],
        "process_wall_s": round(wall, 3),
        "cpu_s": round((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), 3),
        "events": meta["events"],
        "events_per_wall_s": round(meta["events"] / meta["wall_s"]),
        "simulated_s": float(summary["duration_s"]),
        "flows": flows,
        "messages": int(summary["messages"]),
        "messages_done": int(summary["messages_done"]),
        "peak_rss_mib": round(rss_kib / 1024, 1),
        "peak_rss_per_flow_kib": round(rss_kib / flows, 2) if flows else None,
        "timeouts": int(summary["timeouts"]),
        "drops": int(summary["drops"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args()
    print(json.dumps(run(args.set)))


if __name__ == "__main__":
    main()

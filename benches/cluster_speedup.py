#!/usr/bin/env python3
"""Speed-up of a 16-point sweep on a Dask LocalCluster of 1 and of 2 worker processes.

    python benches/cluster_speedup.py [--rounds 2] [--duration 4s]

The sweep is devkota-fig08's quick grid (4 buffers x 4 server counts = 16 points), each
point `--duration` simulated. The two cluster sizes run alternately, `--rounds` times each,
each into a fresh folder; prints the wall time of every sweep and the ratio of the medians.
Never run by CI (it takes minutes and needs the machine to itself).
"""

from __future__ import annotations

import argparse
import io
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sweep_once(workers: int, duration: str) -> float:
    import dcnsim
    from distributed import Client, LocalCluster

    with LocalCluster(processes=True, n_workers=workers, threads_per_worker=1,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client, tempfile.TemporaryDirectory() as tmp:
        client.wait_for_workers(workers)
        start = time.perf_counter()
        out = dcnsim.run_sweep(ROOT / "scenarios" / "devkota-fig08.toml", Path(tmp) / "s",
                               {"sim.duration": duration}, quick=True,
                               executor=client.get_executor(pure=False), stream=io.StringIO())
        wall = time.perf_counter() - start
        assert len(out.records) == 16, len(out.records)
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--duration", default="4s", help="simulated time per point")
    args = ap.parse_args()
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.rounds):
        for workers in (1, 2):
            t = sweep_once(workers, args.duration)
            times[workers].append(t)
            print(f"{workers} worker(s): {t:.1f} s", file=sys.stderr)
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"16 points, {args.duration} each: 1 worker {one:.1f} s, 2 workers {two:.1f} s, "
          f"speed-up {one / two:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

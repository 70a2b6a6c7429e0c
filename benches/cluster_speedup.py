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
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sweep_once(workers: int, duration: str) -> tuple[float, float, float]:
    """(wall time of the sweep, sum of its points' engine wall times, CPU time of this
    process (client, scheduler and nannies) during the sweep)."""
    import dcnsim
    from distributed import Client, LocalCluster

    with LocalCluster(processes=True, n_workers=workers, threads_per_worker=1,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client, tempfile.TemporaryDirectory() as tmp:
        client.wait_for_workers(workers)
        start, cpu = time.perf_counter(), time.process_time()
        out = dcnsim.run_sweep(ROOT / "scenarios" / "devkota-fig08.toml", Path(tmp) / "s",
                               {"sim.duration": duration}, quick=True,
                               executor=client.get_executor(pure=False), stream=io.StringIO())
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        assert len(out.records) == 16, len(out.records)
        import json
        busy = sum(json.loads(f.read_text())["wall_s"]
                   for f in (Path(tmp) / "s").rglob("run.json") if f.parent != Path(tmp) / "s")
    return wall, busy, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--duration", default="4s", help="simulated time per point")
    ap.add_argument("--dask-profiler", action="store_true",
                    help="keep Dask's statistical profiler on in the workers (its default; "
                         "the README recommends turning it off for dcnsim)")
    args = ap.parse_args()
    if not args.dask_profiler:
        # Dask samples every running task's Python stack every 10 ms; dcnsim's tasks are
        # one native call, so the samples say nothing and cost each worker CPU
        # (docs/performance.md). The spawned workers read this from the environment.
        os.environ["DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"] = "False"
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.rounds):
        for workers in (1, 2):
            t, busy, cpu = sweep_once(workers, args.duration)
            times[workers].append(t)
            # busy: the points' own wall times (engine runs on the workers); the rest of
            # workers x wall is time a worker was idle or not running the engine.
            print(f"{workers} worker(s): {t:.1f} s; points' own wall times {busy:.1f} s, "
                  f"{busy / (workers * t):.1%} of workers x wall; client process CPU "
                  f"{cpu:.1f} s", file=sys.stderr)
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"16 points, {args.duration} each, Dask profiler "
          f"{'on' if args.dask_profiler else 'off'}: 1 worker {one:.1f} s, 2 workers {two:.1f} s, "
          f"speed-up {one / two:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Soak test (docs/robustness.md; not part of CI): one long `dcnsim run` to about 10⁹ events
while its resident memory (VmRSS of /proc/PID/status) is sampled, to show that memory
stays flat once the run is under way (no leak per event, per packet or per round).

    PYTHONPATH=python python scripts/soak.py             # bench-incast, 64 servers, 1e9 events
    PYTHONPATH=python python scripts/soak.py --events 2e8

The run is the engine's ``run_captured`` (what ``dcnsim run`` calls) with ``max_events`` N
and a simulated duration far beyond what N events reach, so ``max_events`` ends it. The
engine calls back about every million events; each call samples the RSS of this process,
so the samples cover the simulation only (not the result tables made after it). It prints
every ``--every``-th sample and a summary: events, wall time, events per second, the RSS
after the first tenth of the run (warm-up: the event calendar and packet pools reach their
working size) and at the end, the growth between them, and the rows of the result tables
that grow with the run (e.g. ``completions``, one row per finished transfer, which is
memory the engine keeps on purpose). Exit status 1 when the RSS grew by more than
``--max-growth`` (default 10 %) after warm-up.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return None
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default=str(ROOT / "scenarios" / "bench-incast.toml"))
    ap.add_argument("--set", action="append", default=None, metavar="KEY=VALUE",
                    help="overrides (default: topology.servers=64, sim.duration=\"1000000s\")")
    ap.add_argument("--events", type=float, default=1e9)
    ap.add_argument("--every", type=int, default=50,
                    help="print every N-th sample (a sample about every million events)")
    ap.add_argument("--max-growth", type=float, default=0.10)
    args = ap.parse_args()
    from dcnsim import _toml
    from dcnsim._native import core

    sets = args.set if args.set is not None else ["topology.servers=64",
                                                   'sim.duration="1000000s"']
    pairs = _toml.literal_pairs(_toml.parse_sets(sets))
    text = Path(args.scenario).read_text(encoding="utf-8")
    print(f"soak: {args.scenario} {' '.join(sets)}, max_events {args.events:.0e}", flush=True)
    samples: list[tuple[float, float]] = []
    start = time.monotonic()

    def progress(fraction: float) -> bool:
        rss = rss_mb(os.getpid())
        if rss is not None:
            samples.append((time.monotonic() - start, rss))
            if len(samples) % args.every == 1:
                print(f"{samples[-1][0]:8.1f} s  ~{len(samples)} M events  {rss:8.1f} MB",
                      flush=True)
        return True

    tables, _, info = core().run_captured(text, args.scenario, pairs, progress,
                                          max_events=int(args.events))
    wall = time.monotonic() - start
    after = rss_mb(os.getpid())
    events = int(tables["summary"]["events"][0])
    if len(samples) < 10:
        print("soak: too short to judge (fewer than 10 samples)")
        return 0
    warm = [rss for t, rss in samples if t >= wall / 10] or [samples[-1][1]]
    first, last, peak = warm[0], samples[-1][1], max(rss for _, rss in samples)
    growth = (last - first) / first
    print(f"soak: {events:.3e} events in {wall:.0f} s ({events / wall / 1e6:.2f} M events/s), "
          f"simulated {tables['summary']['simulated_s'][0]:.1f} s ({info.get('stopped')}); "
          f"RSS while simulating: after warm-up {first:.1f} MB, at the end {last:.1f} MB, "
          f"peak {peak:.1f} MB, growth {100 * growth:+.1f} %; with the result tables "
          f"{after:.1f} MB")
    rows = {name: len(next(iter(cols.values()), [])) for name, cols in tables.items()}
    print("soak: result rows: " + ", ".join(f"{k} {v}" for k, v in rows.items() if v > 1))
    return 1 if growth > args.max_growth else 0


if __name__ == "__main__":
    sys.exit(main())

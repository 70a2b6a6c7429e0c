"""How much two engines at once get from this machine: the ceiling of any 2-worker speed-up.

    python benches/parallel_scaling.py [--rounds 5] [--scenario scenarios/bench-incast.toml]

Runs the `dcnsim-engine` binary (target/release, built by `cargo build --release`) on one
scenario, alone and as two copies started together, alternately, `--rounds` times each.
Prints the wall times and the scaling 2 x t(alone) / t(two at once): 2.0 if two cores are
really two cores, less where they share a physical core, caches, memory bandwidth or a
power budget. A sweep on 2 workers cannot beat it, whatever runs the points. Never run by
CI (it needs the machine to itself).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "target" / "release" / "dcnsim-engine"


def run(copies: int, scenario: Path, sets: list[str]) -> float:
    """Wall time until all `copies` engines started together have finished."""
    start = time.perf_counter()
    procs = [subprocess.Popen([str(ENGINE), str(scenario), *sets], stdout=subprocess.DEVNULL)
             for _ in range(copies)]
    for p in procs:
        if p.wait() != 0:
            raise SystemExit(f"{ENGINE} failed on {scenario}")
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--scenario", default=str(ROOT / "scenarios" / "bench-incast.toml"))
    ap.add_argument("--set", action="append", default=[], help="engine override key=value")
    args = ap.parse_args()
    if not ENGINE.exists():
        raise SystemExit(f"build the engine first: cargo build --release ({ENGINE} is missing)")
    times: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(args.rounds):
        for copies in (1, 2):
            times[copies].append(run(copies, Path(args.scenario), args.set))
    for copies, ts in times.items():
        print(f"{copies} at once: " + ", ".join(f"{t:.3f}" for t in ts) + " s")
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"scaling 2 x t1 / t2 = {2 * one / two:.2f} (medians {one:.3f} s, {two:.3f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

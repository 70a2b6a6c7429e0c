#!/usr/bin/env python3
"""Time two engine builds side by side: parallel pairs with the cores swapped.

    scripts/ab-pairs.py [--pairs N] [--reps R] [--json] [--per-event] [--new-args ARGS]
                        [--serial] BASE NEW [ARG ...]

Each pair runs BASE and NEW at the same time, each pinned to its own CPU (the first two CPUs
this process may use), each running its command R times in a row with the same ARGs, and
reads each side's CPU time (user + system, from the kernel's accounting of the finished
processes). The next pair swaps the CPUs. A pair's ratio is NEW / BASE; two consecutive
pairs (one each way round) combine into their geometric mean, which cancels a difference
between the two CPUs; the result is the geometric mean of those and its standard error.

Why this way (docs/performance.md, "How the figures are measured"): on a shared machine,
runs one after another drift by more than the effects measured (the same binary 5.8-8.3 s
on one cut); two runs at the same time see the same drift. They also share the last-level cache and
memory bandwidth, so a memory-bound cut runs slower than alone: compare ratios, never
absolute times. With one CPU the pairs run one after the other, order alternating.

`--serial` runs them that way on a machine with more CPUs too: in each pair one side, then
the other (base first in odd pairs, new first in even ones), both pinned to the same CPU
with the others left idle. That is the measure "run alternately" asks for, and the one
where each run has the last-level cache to itself: a memory-bound cut gives a different
ratio alone than beside another run (docs/performance.md, "The 144-host fabric against
aa8081f"), so say which.

`--per-event` divides each side's CPU time by the events its runs report (the engine's
`summary.events = [N]` line), for two runs of different event counts: two engines whose
models differ, or two scenarios. `--new-args` gives NEW its own arguments (one string, split
as a shell would) in place of the ARGs: the same build on two scenarios, for example the
fabric with multi-queue ports against the same fabric with one FIFO per port
(docs/performance.md, "Why the fabric is bound by cache misses").

Prints one line per pair, then the summary; with --json, one JSON object instead.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import subprocess
import sys
import threading


def cpus() -> list[int]:
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return []


EVENTS = re.compile(r"^summary\.events = \[(\d+)", re.M)


def run_side(cmd: list[str], reps: int, cpu: int | None, out: dict, key: str,
             events: bool = False) -> None:
    """Run `cmd` `reps` times on `cpu` (None: anywhere); store its CPU seconds in out[key]
    and, with `events`, the events its runs reported in out[key + "_events"]."""
    total = 0.0
    counted = 0
    for _ in range(reps):
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE if events else subprocess.DEVNULL)
        if cpu is not None:
            # Pinned once started (a `preexec_fn` is not safe with two threads starting
            # processes); the moment before is the start of its `exec`, not its work.
            try:
                os.sched_setaffinity(p.pid, {cpu})
            except ProcessLookupError:  # already finished
                pass
        text = p.stdout.read().decode(errors="replace") if events else ""
        _, status, use = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            out[key] = RuntimeError(f"{cmd[0]} exited with status {p.returncode}")
            return
        total += use.ru_utime + use.ru_stime
        if events:
            m = EVENTS.search(text)
            if m is None or int(m.group(1)) == 0:
                out[key] = RuntimeError(f"{cmd[0]} printed no 'summary.events = [N]' line "
                                        "(--per-event needs dcnsim-engine's output)")
                return
            counted += int(m.group(1))
    out[key] = total
    if events:
        out[key + "_events"] = counted


def one_pair(base: list[str], new: list[str], reps: int, i: int, where: list[int],
             events: bool = False, serial: bool = False) -> dict:
    """Pair `i`: both sides at once on two CPUs (swapped on odd i), or, with `serial` or
    one CPU, one after the other on the first CPU (order swapped on odd i). With `events`
    the ratio is of CPU time per event."""
    out: dict = {}
    if len(where) >= 2 and not serial:
        ca, cb = (where[0], where[1]) if i % 2 == 0 else (where[1], where[0])
        ts = [threading.Thread(target=run_side, args=(base, reps, ca, out, "base", events)),
              threading.Thread(target=run_side, args=(new, reps, cb, out, "new", events))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        out["cpus"] = [ca, cb]
    else:
        order = [("base", base), ("new", new)] if i % 2 == 0 else [("new", new), ("base", base)]
        for key, cmd in order:
            run_side(cmd, reps, where[0] if where else None, out, key, events)
        out["cpus"] = None
        out["order"] = [key for key, _ in order]
    for key in ("base", "new"):
        if isinstance(out[key], Exception):
            raise out[key]
    if out["base"] <= 0 or out["new"] <= 0:
        raise RuntimeError("a side used no measurable CPU time: give it more --reps")
    out["ratio"] = out["new"] / out["base"]
    if events:
        for key in ("base", "new"):
            out[key + "_ns_per_event"] = out[key] / out[key + "_events"] * 1e9
        out["ratio"] = out["new_ns_per_event"] / out["base_ns_per_event"]
    return out


def summarise(ratios: list[float]) -> dict:
    """Geometric mean of the swapped pairs' geometric means, and its standard error."""
    pairs = [math.sqrt(ratios[k] * ratios[k + 1]) for k in range(0, len(ratios) - 1, 2)]
    if not pairs:
        pairs = ratios[:]
    logs = [math.log(x) for x in pairs]
    mean = sum(logs) / len(logs)
    se = (math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1) / len(logs))
          if len(logs) > 1 else None)
    return {"geomean": math.exp(mean), "se": se, "swapped_pairs": [round(x, 4) for x in pairs]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=8, help="pairs to run (default 8; even)")
    ap.add_argument("--reps", type=int, default=1, help="runs per side in a pair (default 1)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--per-event", action="store_true",
                    help="compare CPU time per event (from the engine's summary.events)")
    ap.add_argument("--new-args", metavar="ARGS",
                    help="NEW's arguments instead of the ARGs (one string, shell syntax)")
    ap.add_argument("--serial", action="store_true",
                    help="run the two sides one after the other on one CPU, not at once")
    ap.add_argument("base", help="the base build's executable")
    ap.add_argument("new", help="the new build's executable")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="arguments for both")
    a = ap.parse_args(argv)
    if a.pairs < 1 or a.reps < 1:
        print("ab-pairs: --pairs and --reps must be at least 1", file=sys.stderr)
        return 2
    for exe in (a.base, a.new):
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            print(f"ab-pairs: {exe}: not an executable file", file=sys.stderr)
            return 2
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    try:
        new_args = args if a.new_args is None else shlex.split(a.new_args)
    except ValueError as e:
        print(f"ab-pairs: --new-args: {e}", file=sys.stderr)
        return 2
    base, new = [os.path.abspath(a.base), *args], [os.path.abspath(a.new), *new_args]
    where = cpus()
    runs = []
    for i in range(a.pairs):
        try:
            r = one_pair(base, new, a.reps, i, where, a.per_event, a.serial)
        except (RuntimeError, OSError) as e:
            print(f"ab-pairs: {e}", file=sys.stderr)
            return 1
        runs.append(r)
        if not a.json:
            on = (f"cpus {r['cpus'][0]}/{r['cpus'][1]}" if r["cpus"]
                  else f"one after the other, {r['order'][0]} first")
            per = (f"base {r['base_ns_per_event']:.1f} ns/event, "
                   f"new {r['new_ns_per_event']:.1f} ns/event, " if a.per_event else "")
            print(f"pair {i + 1} ({on}): base {r['base']:.3f} s, new {r['new']:.3f} s, "
                  f"{per}new/base {r['ratio']:.4f}", flush=True)
    s = summarise([r["ratio"] for r in runs])
    if a.json:
        print(json.dumps({"pairs": runs, **s}))
    else:
        se = (f"± {s['se']:.4f} (standard error)" if s["se"] is not None
              else "(no standard error from one swapped pair)")
        what = "new/base per event" if a.per_event else "new/base"
        print(f"{what}: geometric mean {s['geomean']:.4f} {se} "
              f"over {len(s['swapped_pairs'])} swapped pairs {s['swapped_pairs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

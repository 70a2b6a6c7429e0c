#!/usr/bin/env python3
"""Run the ns-3 incast grid (buffers x servers x min RTO), one cell at a time.

Every cell is one simulation of incast_ns3.py.  Its JSON line is appended to
--out as soon as the cell finishes, and cells already in --out are skipped,
so an interrupted grid resumes where it stopped.  One progress line per cell
goes to stderr.

By default the cells run in a worker process (`incast_ns3.py --batch`) that
is reused from cell to cell, to pay the ~15-20 s ns-3 import once.  Each cell
still starts from a fresh ns-3 state (Simulator::Destroy, Config::Reset).  If
the worker dies, only the cell it was running is lost: the failure is
reported, and a new worker takes the next cell.  Such a cell is not written to
--out, so the next run of the grid tries it again.  --fresh-process starts one
process per cell instead.

See README.md in this folder.
"""

import argparse
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "incast_ns3.py"

SERVERS = (1, 2, 4, 8, 16, 32, 64)
BUFFERS = (32768, 65536, 131072, 262144)
MIN_RTOS_MS = (200.0, 10.0)
DURATION = 20.0
RWND = 29200  # 20 segments of 1460 B, ns-2's default window

# Stop after this many failed cells in a row: something is wrong for all.
MAX_CONSECUTIVE_FAILURES = 3


def cell_key(tcp_defaults, servers, buffer_bytes, min_rto_ms, rwnd_bytes, duration):
    return (tcp_defaults, int(servers), int(buffer_bytes), float(min_rto_ms),
            int(rwnd_bytes), float(duration))


def result_key(rec):
    return cell_key(rec["tcp_defaults"], rec["servers"], rec["buffer_bytes"],
                    rec["min_rto_ms"], rec["rwnd_bytes"], rec["sim_seconds"])


def done_cells(path):
    """Keys of the cells already in the output file."""
    done = set()
    if not path.exists():
        return done
    with path.open() as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                done.add(result_key(json.loads(line)))
            except (ValueError, KeyError, TypeError):
                print(f"grid: {path}:{lineno}: not a result line, ignored", file=sys.stderr)
    return done


def cell_argv(key):
    tcp_defaults, servers, buffer_bytes, min_rto_ms, rwnd_bytes, duration = key
    return ["--servers", str(servers), "--buffer-bytes", str(buffer_bytes),
            "--duration", f"{duration:g}", "--min-rto-ms", f"{min_rto_ms:g}",
            "--rwnd-bytes", str(rwnd_bytes), "--tcp-defaults", tcp_defaults]


class Worker:
    """An `incast_ns3.py --batch` process: one JSON list in, one JSON line out."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, str(RUNNER), "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None)
        self._buf = b""

    def run(self, argv, timeout):
        """Result line of one cell, or None if the worker died or timed out."""
        try:
            self.proc.stdin.write((json.dumps(argv) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return None
        fd = self.proc.stdout.fileno()
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buf:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                self.kill()
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def returncode(self):
        return self.proc.poll()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()


def run_fresh(argv, timeout):
    """One cell in its own process; (result line or None, exit code)."""
    try:
        p = subprocess.run([sys.executable, str(RUNNER), *argv], stdout=subprocess.PIPE,
                           stderr=None, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    lines = p.stdout.decode().strip().splitlines()
    return (lines[-1] if p.returncode == 0 and lines else None), p.returncode


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tcp-defaults", choices=("matched", "matched-lt", "ns3"), required=True,
                    help="TCP settings of incast_ns3.py (see README.md)")
    ap.add_argument("--out", type=Path,
                    help="JSON-lines output, appended to "
                         "(default benches/ns3/results/grid-<tcp-defaults>.jsonl)")
    ap.add_argument("--servers", type=int, nargs="+", default=list(SERVERS),
                    help=f"server counts (default {' '.join(map(str, SERVERS))})")
    ap.add_argument("--buffers", type=int, nargs="+", default=list(BUFFERS),
                    help=f"switch buffers, bytes (default {' '.join(map(str, BUFFERS))})")
    ap.add_argument("--min-rto-ms", type=float, nargs="+", default=list(MIN_RTOS_MS),
                    help="minimum RTOs, ms (default 200 10)")
    ap.add_argument("--duration", type=float, default=DURATION,
                    help=f"simulated seconds per cell (default {DURATION:g})")
    ap.add_argument("--rwnd-bytes", type=int, default=RWND,
                    help=f"receive window, bytes (default {RWND})")
    ap.add_argument("--cell-timeout", type=float, default=4 * 3600,
                    help="wall seconds after which a cell is abandoned (default 14400)")
    ap.add_argument("--fresh-process", action="store_true",
                    help="one incast_ns3.py process per cell (pays the import every time)")
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = HERE / "results" / f"grid-{args.tcp_defaults}.jsonl"
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cells = [cell_key(args.tcp_defaults, n, b, rto, args.rwnd_bytes, args.duration)
             for rto in args.min_rto_ms for b in args.buffers for n in args.servers]
    done = done_cells(args.out)
    todo = [c for c in cells if c not in done]
    print(f"grid: {args.tcp_defaults}: {len(cells)} cells, {len(cells) - len(todo)} already in "
          f"{args.out}, {len(todo)} to run", file=sys.stderr, flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)

    worker = None
    failures = consecutive = 0
    t_grid = time.monotonic()
    try:
        for i, key in enumerate(todo, 1):
            _, n, b, rto, _, _ = key
            label = (f"[{i}/{len(todo)}] {args.tcp_defaults} servers={n} buffer={b} "
                     f"min_rto={rto:g}ms")
            t0 = time.monotonic()
            argv = cell_argv(key)
            if args.fresh_process:
                line, code = run_fresh(argv, args.cell_timeout)
            else:
                if worker is None:
                    worker = Worker()
                line = worker.run(argv, args.cell_timeout)
                code = None
                if line is None:
                    worker.kill()
                    code = worker.returncode()
                    worker = None
            rec = None
            if line is not None:
                try:
                    rec = json.loads(line)
                except ValueError:
                    rec = {"error": f"unparsable output: {line[:200]}"}
            if rec is None or "error" in rec or result_key(rec) != key:
                why = (f"runner died (exit {code})" if rec is None
                       else rec.get("error", "result does not match the cell"))
                print(f"grid: {label}: FAILED: {why}", file=sys.stderr, flush=True)
                failures += 1
                consecutive += 1
                if consecutive >= MAX_CONSECUTIVE_FAILURES:
                    print(f"grid: {consecutive} failures in a row, stopping",
                          file=sys.stderr, flush=True)
                    break
                continue
            consecutive = 0
            with args.out.open("a") as f:
                f.write(json.dumps(rec) + "\n")
            print(f"grid: {label}: goodput {rec['goodput_mbps']:.1f} Mb/s, "
                  f"rounds {rec['rounds']}, timeouts {rec['timeouts']}, "
                  f"drops {rec['bottleneck_drops']}, run {rec['wall_seconds']:.1f} s, "
                  f"cell {time.monotonic() - t0:.1f} s", file=sys.stderr, flush=True)
    finally:
        if worker is not None:
            worker.close()
    print(f"grid: {args.tcp_defaults}: finished in {time.monotonic() - t_grid:.0f} s, "
          f"{failures} failed cell(s)", file=sys.stderr, flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Mutation fuzzer over the shipped scenarios (docs/robustness.md).

Each mutant is a shipped scenario with one mutation (kinds: ``KINDS``) and is checked the
way ``dcnsim validate`` checks a file: ``dcnsim.api.validate`` (the engine's schema and
ranges, the Python-owned tables, the report's config, every sweep point full and quick).
A valid mutant is then built and run for ``BUILD_EVENTS`` events at its quick cut (what
``dcnsim run`` checks after parsing: the memory estimate, routes, flows, samplers), with
``--max-memory 512MiB``. The outcome is classified:

``error``       a clean error: one line, at most 200 characters besides the file's path,
                naming a field (``field ...``) or a place in the file (``line ...``, a
                file-level problem such as "not UTF-8 text")
``long``        as ``error`` but longer than 200 characters (the engine's messages that
                list every allowed spelling, or quote a long value and the sweep point)
``unclear``     an error that is not clean (several lines, or names nothing)
``accepted``    the mutant is valid
``warning``     valid, with the engine's warnings
``traceback``   any other Python exception (a bug)
``panic``       the engine's ``EngineError`` (a Rust panic, caught)
``abort``       the checking process died (exit status >= 128, e.g. a Rust abort)
``hang``        no answer within ``--timeout`` seconds (default 10)

The mutants are checked in long-lived worker processes (``--workers``, default 1; not a
process per mutant); a worker that dies or hangs is counted and replaced. The inputs of
the bad outcomes (traceback, panic, abort, hang, unclear) are written to ``--out`` for
minimising into ``tests/fuzz_corpus/``.

    PYTHONPATH=python python scripts/fuzz-scenarios.py --count 100000 --seed 1 --out /tmp/fuzz

prints a JSON summary (mutants, per outcome, per kind, rate) at the end and every
``--report-every`` mutants. With ``--out``, every accepted mutant of the kinds that put a
value in place (``AUDITED``) is logged to ``accepted.jsonl`` with the change made
("path = value"), to check that no out-of-range value is accepted silently.
"""

from __future__ import annotations

import argparse
import base64
import collections
import copy
import json
import os
import random
import select
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
PYTHON_TABLES = ("report", "sweep", "quick")
CLEAN_MAX = 200

KINDS = ("wrong_type", "absurd_number", "absurd_unit", "missing_key", "unknown_key",
         "duplicate_key", "unicode", "huge_string", "deep_nesting", "broken_file",
         "binary_file", "dangling_ref", "huge_topology")

ABSURD_NUMBERS: list[Any] = [0, -1, -(2**63), 2**63 - 1, 2**64, 10**30, 1e308, -1e308, 5e-324,
                             float("nan"), float("inf"), float("-inf"), 0.5, -0.0]
ABSURD_UNITS = ["1e30Gbps", "-5ms", "NaNs", "infms", "1 parsec", "0x10ms", "", " ", "10",
                "99999999999999999999999KB", "1e-30s", "-1KiB", "5 Gbps", "5gbps", "5Gbps5",
                "1.5.5ms", "∞s", "1e308s", "0s", "0Gbps", "18446744073709551616B"]
UNICODE = ["é", "\u202e", "日本語", "\U0001f600", "\u0000", "\x7f", "a\nb", "\ufeff", "Ω" * 50,
           "\ud7ff", "a\u0301"]
DANGLING = ["nosuch", "apps.99.sru", "topology.nosuch", "sw->nowhere", "h999", "", "points"]


# ------------------------------------------------------------------ writing TOML

def _toml_value(value: Any) -> str:
    # dcnsim from PYTHONPATH, else this checkout's python/ (put on sys.path once: once per
    # value made sys.path grow by a million entries in a long campaign, slowing it down)
    if str(ROOT / "python") not in sys.path:
        sys.path.append(str(ROOT / "python"))
    from dcnsim import _toml

    return _toml.to_toml(value)


def _key(key: str) -> str:
    import re

    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _is_aot(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def dump(doc: dict[str, Any]) -> str:
    """A document as TOML: top-level tables as ``[name]``, arrays of tables as
    ``[[name]]``, anything deeper as inline values."""
    lines = []
    for k, v in doc.items():
        if not isinstance(v, dict) and not _is_aot(v):
            lines.append(f"{_key(k)} = {_toml_value(v)}")
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append(f"\n[{_key(k)}]")
            lines += [f"{_key(kk)} = {_toml_value(vv)}" for kk, vv in v.items()]
        elif _is_aot(v):
            for item in v:
                lines.append(f"\n[[{_key(k)}]]")
                lines += [f"{_key(kk)} = {_toml_value(vv)}" for kk, vv in item.items()]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ mutations

def _leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into the document (tables, arrays and their items)."""
    out = [path] if path else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _leaves(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _leaves(v, path + (i,))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(doc, path[:-1])[path[-1]] = value


def _has(doc: Any, path: tuple[Any, ...]) -> bool:
    try:
        _get(doc, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _pick_path(rng: random.Random, doc: dict[str, Any]) -> tuple[Any, ...] | None:
    paths = _leaves(doc)
    if not paths:
        return None
    # Half of the mutations go to the Python-owned tables.
    owned = [p for p in paths if p[0] in PYTHON_TABLES]
    if owned and rng.random() < 0.5:
        return rng.choice(owned)
    return rng.choice(paths)


def _wrong_type(rng: random.Random, value: Any) -> Any:
    options: list[Any] = [1, -3, 2.5, True, "text", [1, 2], [], {}, {"a": 1}, [[1]], ["a", 1],
                          [{"x": 1}]]
    import datetime as dt
    options.append(dt.datetime(2020, 1, 1, 0, 0))
    options = [o for o in options if type(o) is not type(value)]
    return copy.deepcopy(rng.choice(options))


def _nest(rng: random.Random) -> Any:
    depth = rng.choice([20, 60, 200, 1200])
    value: Any = 1
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"a": value}
    return value


# What the last structural mutation did ("path = value"), kept with accepted mutants so
# that accepted absurd values can be audited (docs/robustness.md: no silently accepted
# out-of-range value).
LAST_CHANGE: list[str] = [""]


def _describe(path: tuple[Any, ...], value: Any) -> str:
    try:
        shown = repr(value)
    except RecursionError:
        shown = "<deeply nested>"
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return ".".join(str(p) for p in path) + " = " + shown


def structural(rng: random.Random, kind: str, doc: dict[str, Any]) -> str | None:
    doc = copy.deepcopy(doc)
    path = _pick_path(rng, doc)
    if path is None:
        return None
    value = _get(doc, path)
    parent = _get(doc, path[:-1])
    if kind == "wrong_type":
        _set(doc, path, _wrong_type(rng, value))
    elif kind == "absurd_number":
        _set(doc, path, rng.choice(ABSURD_NUMBERS))
    elif kind == "absurd_unit":
        _set(doc, path, rng.choice(ABSURD_UNITS))
    elif kind == "missing_key":
        del parent[path[-1]]
    elif kind == "unknown_key":
        target = value if isinstance(value, dict) else parent
        if not isinstance(target, dict):
            return None
        name = rng.choice(["nosuch", "kind2", "Kind", "tables ", "x.y", "servers", "sweep",
                           "report", "é"])
        target[name] = rng.choice([1, "x", [1], {"a": 1}])
    elif kind == "unicode":
        u = rng.choice(UNICODE)
        _set(doc, path, (value + u) if isinstance(value, str) else u)
    elif kind == "huge_string":
        _set(doc, path, rng.choice(["x", "é", "1"]) * rng.choice([300, 20_000, 2_000_000]))
    elif kind == "deep_nesting":
        _set(doc, path, _nest(rng))
    elif kind == "dangling_ref":
        if isinstance(parent, dict) and path[0] in ("sweep", "quick") and rng.random() < 0.5:
            # an axis or override naming a field that does not exist
            parent[rng.choice(DANGLING[1:3])] = parent.pop(path[-1])
        else:
            _set(doc, path, rng.choice(DANGLING))
    elif kind == "huge_topology":
        topo = doc.get("topology")
        if not isinstance(topo, dict):
            return None
        key = rng.choice(["servers", "k", "leaves", "spines", "hosts", "senders", "count",
                          "switch_buffer", "queues"])
        topo[key] = rng.choice([10**5, 10**6, 2**31, 2**32 + 1, 5000, 100_000_000])
        if rng.random() < 0.3:
            doc.setdefault("sim", {})["duration"] = rng.choice(["1000000s", "1e9s", "86400s"])
    else:
        raise ValueError(kind)
    if kind == "huge_topology":
        LAST_CHANGE[0] = _describe(("topology", key), topo[key])
    elif kind in ("missing_key", "unknown_key", "dangling_ref") or not _has(doc, path):
        LAST_CHANGE[0] = kind + " at " + ".".join(str(p) for p in path)
    else:
        LAST_CHANGE[0] = _describe(path, _get(doc, path))
    try:
        return dump(doc)
    except (TypeError, ValueError, RecursionError):
        return None


def textual(rng: random.Random, kind: str, text: str) -> bytes | None:
    lines = text.splitlines(keepends=True)
    if kind == "duplicate_key":
        kv = [i for i, line in enumerate(lines)
              if "=" in line and not line.lstrip().startswith("#")]
        if not kv:
            return None
        i = rng.choice(kv)
        lines.insert(i + 1, lines[i])
        return "".join(lines).encode()
    if kind == "broken_file":
        how = rng.randrange(5)
        data = text.encode()
        if how == 0:
            return data[: rng.randrange(len(data))]
        if how == 1 and lines:
            del lines[rng.randrange(len(lines))]
            return "".join(lines).encode()
        if how == 2:
            pos = rng.randrange(len(text))
            return (text[:pos] + rng.choice(["[", "]", '"', "=", "{", "'''", "\\", "[[", "\n["])
                    + text[pos:]).encode()
        if how == 3:
            pos = rng.randrange(len(text))
            return (text[:pos] + text[pos + rng.randrange(1, 40):]).encode()
        return b""
    if kind == "binary_file":
        how = rng.randrange(4)
        data = bytearray(text.encode())
        if how == 0:
            return bytes(rng.randrange(256) for _ in range(rng.choice([10, 1000, 100_000])))
        if how == 1:
            data.insert(rng.randrange(len(data)), 0)
            return bytes(data)
        if how == 2:
            data.insert(rng.randrange(len(data)), rng.choice([0xFF, 0xC3, 0x80, 0xFE]))
            return bytes(data)
        return b"\xef\xbb\xbf" + bytes(data)  # a UTF-8 byte-order mark
    raise ValueError(kind)


def mutate(rng: random.Random, kind: str, text: str, doc: dict[str, Any]) -> bytes | None:
    if kind in ("duplicate_key", "broken_file", "binary_file"):
        return textual(rng, kind, text)
    out = structural(rng, kind, doc)
    return out.encode() if out is not None else None


# ------------------------------------------------------------------ the worker

BUILD_EVENTS = 2000


def classify(path: str, build: bool = True) -> tuple[str, str]:
    """Check the scenario file ``path`` as ``dcnsim validate`` does and, when it is valid and
    ``build``, build it and run ``BUILD_EVENTS`` events; (outcome, message)."""
    from dcnsim import api
    from dcnsim._messages import shorten
    from dcnsim._native import core, is_scenario_error
    from dcnsim.errors import UserError

    try:
        warnings = api.validate(path)
        if build:
            # A valid mutant is also built and run for a few events at its quick cut (the
            # checks of the build: memory estimate, routes, flows), within 512 MiB.
            from dcnsim import _toml
            from dcnsim.scenario import load, make_plan

            text = Path(path).read_text(encoding="utf-8")
            plan = make_plan(load(path, text), quick=True)
            pairs = _toml.literal_pairs(plan.points[0].overrides)
            _, _, info = core().run_captured(text, path, pairs, max_events=BUILD_EVENTS,
                                             max_wall=5.0, max_memory=512 * 2**20)
            warnings = [*warnings, *info.get("warnings", [])]
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 -- classified
        if isinstance(exc, core().EngineError):
            return "panic", str(exc)[:500]
        if is_scenario_error(exc) or isinstance(exc, UserError):
            msg = shorten(str(exc))
            lines = msg.strip().splitlines()
            named = any(w in msg for w in ("field ", "line ", "--set ", "at end of file",
                                           "not UTF-8", "TOML syntax error",
                                           "not a regular file"))
            if len(lines) == 1 and named:
                return ("error" if len(msg) - len(path) <= CLEAN_MAX else "long"), msg[:2000]
            return "unclear", msg[:2000]
        import traceback

        tb = traceback.extract_tb(exc.__traceback__)
        where = f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else "?"
        return "traceback", f"{type(exc).__name__} at {where}: {str(exc)[:300]}"
    return ("warning" if warnings else "accepted"), "; ".join(warnings)[:300]


def worker() -> int:
    """Read ``{"id", "name", "data"}`` lines on stdin; answer ``{"id", "outcome", "msg"}``."""
    sys.setrecursionlimit(10_000)
    tmp = Path(tempfile.mkdtemp(prefix="dcnsim-fuzz-"))
    for line in sys.stdin:
        req = json.loads(line)
        path = tmp / req["name"]
        path.write_bytes(base64.b64decode(req["data"]))
        outcome, msg = classify(str(path))
        print(json.dumps({"id": req["id"], "outcome": outcome, "msg": msg}), flush=True)
    return 0


class Worker:
    def __init__(self, pythonpath: str) -> None:
        env = {**os.environ, "PYTHONPATH": pythonpath}
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker"], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)

    def send(self, req: dict[str, Any]) -> bool:
        """Hand the worker a mutant; False when it is gone."""
        assert self.proc.stdin
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return False
        return True

    def receive(self) -> tuple[str, str]:
        """The answer to the mutant sent (call when its stdout is readable)."""
        assert self.proc.stdout
        line = self.proc.stdout.readline()
        if not line:
            return self._died()
        ans = json.loads(line)
        return ans["outcome"], ans["msg"]

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def _died(self) -> tuple[str, str]:
        code = self.proc.wait()
        err = self.proc.stderr.read()[-2000:] if self.proc.stderr else ""
        status = 128 - code if code < 0 else code  # killed by a signal: 128 + signal
        return "abort", f"worker exit {status}: {err.strip().splitlines()[-1:] or ''}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait(timeout=10)


BAD = ("traceback", "panic", "abort", "hang", "unclear")


AUDITED = ("absurd_number", "absurd_unit", "huge_topology", "wrong_type", "unicode",
           "huge_string")


def campaign(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    files = sorted(SCENARIOS.glob("*.toml"))
    sources = [(p.name, p.read_text(encoding="utf-8")) for p in files]
    docs = [tomllib.loads(t) for _, t in sources]
    out = Path(args.out) if args.out else None
    accepted_log = None
    if out:
        out.mkdir(parents=True, exist_ok=True)
        accepted_log = (out / "accepted.jsonl").open("a", encoding="utf-8")
    counts: collections.Counter[str] = collections.Counter()
    per_kind: dict[str, collections.Counter[str]] = {k: collections.Counter() for k in KINDS}
    seen_bad: dict[str, int] = {}
    seen_long: dict[str, int] = {}
    workers = [Worker(args.pythonpath) for _ in range(args.workers)]
    # worker index -> (mutant number, kind, scenario, data, change, deadline)
    busy: dict[int, tuple[int, str, str, bytes, str, float]] = {}
    start = time.monotonic()
    n = 0  # mutants handed out
    done = 0  # mutants classified

    def summary() -> dict[str, Any]:
        wall = time.monotonic() - start
        return {"mutants": done, "seed": args.seed, "workers": args.workers,
                "wall_s": round(wall, 1), "rate_per_s": round(done / wall, 1) if wall else 0.0,
                "outcomes": dict(counts.most_common()),
                "per_kind": {k: dict(c.most_common()) for k, c in per_kind.items()},
                "distinct_bad": len(seen_bad), "distinct_long": len(seen_long)}

    def more() -> bool:
        return n < args.count and (args.time is None or time.monotonic() - start < args.time)

    def record(num: int, kind: str, name: str, data: bytes, change: str, outcome: str,
               msg: str) -> None:
        nonlocal done
        done += 1
        counts[outcome] += 1
        per_kind[kind][outcome] += 1
        if outcome in ("accepted", "warning") and accepted_log and kind in AUDITED:
            accepted_log.write(json.dumps({"n": num, "scenario": name, "kind": kind,
                                           "change": change, "outcome": outcome}) + "\n")
        if outcome == "long":
            # one example of each long message (by its start), for shortening them
            sig = f"long: {msg[:60]}"
            seen_long[sig] = seen_long.get(sig, 0) + 1
            if seen_long[sig] == 1 and out:
                (out / f"{num:07d}-long-{kind}.txt").write_text(msg + "\n")
        if outcome in BAD:
            # every hang and abort is kept (their messages do not tell them apart)
            sig = f"{outcome}: {msg[:120]}" + (f" #{num}" if outcome in ("hang", "abort")
                                               else "")
            seen_bad[sig] = seen_bad.get(sig, 0) + 1
            if seen_bad[sig] == 1:
                print(f"[{num}] {kind} {name}: {sig}", file=sys.stderr, flush=True)
                if out:
                    (out / f"{num:07d}-{outcome}-{kind}.toml").write_bytes(data)
                    (out / f"{num:07d}-{outcome}-{kind}.txt").write_text(msg + "\n")
        if args.report_every and done % args.report_every == 0:
            print(json.dumps(summary()), file=sys.stderr, flush=True)

    try:
        while True:
            # Hand a mutant to every idle worker.
            for w in range(len(workers)):
                while w not in busy and more():
                    i = rng.randrange(len(sources))
                    kind = rng.choice(KINDS)
                    LAST_CHANGE[0] = kind
                    data = mutate(rng, kind, sources[i][1], docs[i])
                    if data is None:
                        continue
                    n += 1
                    if not workers[w].alive():
                        workers[w] = Worker(args.pythonpath)
                    req = {"id": n, "name": sources[i][0],
                           "data": base64.b64encode(data).decode()}
                    item = (n, kind, sources[i][0], data, LAST_CHANGE[0])
                    if workers[w].send(req):
                        busy[w] = (*item, time.monotonic() + args.timeout)
                    else:
                        record(*item, *workers[w]._died())
                        workers[w] = Worker(args.pythonpath)
            if not busy:
                break
            wait = max(0.0, min(b[5] for b in busy.values()) - time.monotonic())
            pipes = {workers[w].proc.stdout: w for w in busy}
            ready, _, _ = select.select(list(pipes), [], [], wait)
            for pipe in ready:
                w = pipes[pipe]
                outcome, msg = workers[w].receive()
                item = busy.pop(w)
                record(*item[:5], outcome, msg)
                if outcome == "abort":
                    workers[w] = Worker(args.pythonpath)
            now = time.monotonic()
            for w in [w for w, b in busy.items() if b[5] <= now]:
                item = busy.pop(w)
                workers[w].kill()
                workers[w] = Worker(args.pythonpath)
                record(*item[:5], "hang", f"no answer in {args.timeout} s")
    finally:
        for w in workers:
            w.close()
        if accepted_log:
            accepted_log.close()
    return summary()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--count", type=int, default=1000, help="mutants to check (default 1000)")
    ap.add_argument("--time", type=float, help="stop after this many seconds")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds before a hang")
    ap.add_argument("--out", help="write the bad mutants (and their messages) here")
    ap.add_argument("--report-every", type=int, default=5000)
    ap.add_argument("--workers", type=int, default=1,
                    help="checking processes run at once (default 1)")
    ap.add_argument("--pythonpath", default=str(ROOT / "python"),
                    help="where the worker imports dcnsim from (default: this checkout's "
                         "python/; give a copy to rebuild the extension during a campaign)")
    args = ap.parse_args()
    if args.worker:
        return worker()
    result = campaign(args)
    print(json.dumps(result, indent=1))
    return 1 if any(result["outcomes"].get(o) for o in BAD) else 0


if __name__ == "__main__":
    sys.exit(main())

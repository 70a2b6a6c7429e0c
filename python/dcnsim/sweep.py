"""Running the points of a sweep on a thread pool, with resume.

Each finished point is appended at once to ``<dir>/runs.jsonl`` (one JSON object:
the overrides and the summary row), so an interrupted sweep loses nothing. A rerun
skips points already recorded with the same overrides and the same scenario-file
hash; ``fresh`` reruns them all (the old lines stay; the newest line wins).

The engine releases the GIL while simulating, so threads run points in parallel. The
files of a sweep directory are described in ``runs``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from . import _toml
from ._messages import shortens_scenario_errors
from ._native import core, is_scenario_error, scenario_error
from ._tables import write_text_atomic
from .errors import UserError
from .executors import Pool, client_of
from .live import LiveRuns, reporter, subscribed
from .provenance import RUN_JSON, dcnsim_version, git_commit, machine, now, run_metadata
from .runs import RUNS_FILE, Record, RunStore, Tables, make_record, point_dir, point_id, save_tables
from .scenario import VARIANTS_AXIS, Plan, Point
from .store import NO_PYARROW, params, write_run

PROGRESS_EVERY_S = 2.0
#: Without a terminal, the points running now are listed this often (long runs only).
LIVE_EVERY_S = 30.0
#: How often the sweep looks at the running points between results.
LIVE_TICK_S = 1.0


class SweepInterrupted(Exception):
    """The user pressed Ctrl-C; finished points are saved."""

    def __init__(self, done: int, total: int, runs_path: Path, abandoned: int) -> None:
        super().__init__(f"interrupted with {done} of {total} points saved")
        self.done = done
        self.total = total
        self.runs_path = runs_path
        self.abandoned = abandoned


class PointFailed(Exception):
    """A point raised an unexpected exception (a bug); finished points are saved."""

    def __init__(self, point: Point, exc: BaseException) -> None:
        super().__init__(f"sweep point {point.where()} failed: {type(exc).__name__}: {exc}")
        self.point = point
        self.original = exc


@dataclass
class SweepOutcome:
    records: list[Record]  # one per point, grid order
    ran: int
    reused: int
    runs_path: Path


@dataclass
class PointResult:
    """What running one point returns to the sweep (from a thread, a process or a cluster
    worker): the engine's tables and where and how long it ran."""

    tables: Tables
    wall_s: float
    engine: str  # the engine version that ran it
    where: dict[str, str]  # provenance.machine() of the process that ran it
    #: The engine's warnings about the point's legal but suspicious settings.
    warnings: list[str] = field(default_factory=list)


def run_point(text: str, path: str, overrides: list[tuple[str, str]], index: int = 0,
              live: str | None = None) -> PointResult:
    """Run one point: the task an executor runs. It takes only plain data (the scenario
    text and the overrides as TOML literals), so it can run in another process or on
    another machine that has dcnsim installed. ``live`` (a sweep's token) asks for its
    progress to be sent back to that sweep as point ``index`` (``live.py``)."""
    engine = core()
    start = time.perf_counter()
    tables, _, info = engine.run_captured(text, path, overrides, reporter(live, index))
    return PointResult(tables=tables, wall_s=time.perf_counter() - start,
                       engine=str(engine.version()), where=machine(),
                       warnings=list(info.get("warnings", [])))


def summary_row(tables: Tables) -> dict[str, Any]:
    """The single row of the engine's ``summary`` table as a dict."""
    summary = tables.get("summary")
    if not isinstance(summary, dict):
        raise TypeError("the engine returned no summary table")
    row = {}
    for name, column in summary.items():
        if len(column) != 1:
            raise RuntimeError(f"summary column {name!r} has {len(column)} rows, expected 1")
        row[name] = column[0]
    return row


def _interactive(stream: IO[str]) -> bool:
    ci = os.environ.get("CI", "").strip().lower()
    if ci and ci not in ("0", "false", "no"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """One progress bar per sweep, advanced as results arrive from whatever executor runs
    the points: a tqdm bar with ETA on a terminal; otherwise (a log, CI) a short line per
    point with the ETA, at most every ~2 s."""

    def __init__(self, total: int, initial: int, desc: str, stream: IO[str]) -> None:
        self.total = total
        self.count = initial
        self.initial = initial
        self.stream = stream
        self._start = time.monotonic()
        self._last = -math.inf
        self._bar: Any = None
        if _interactive(stream):
            from tqdm import tqdm

            try:
                known_width = os.get_terminal_size(stream.fileno()).columns > 0
            except (OSError, ValueError):
                known_width = False
            size: dict[str, Any] = ({"dynamic_ncols": True} if known_width
                                     else {"ncols": 80, "nrows": 24})  # tqdm hides bars at nrows=0
            # the ETA is from the points run now (tqdm's rate leaves out ``initial``)
            self._bar = tqdm(total=total, initial=initial, desc=desc, unit="run",
                             file=stream, leave=True, **size)

    def advance(self, point: Point, summary: dict[str, Any], wall_s: float) -> None:
        self.count += 1
        if self._bar is not None:
            self._bar.update(1)
            return
        now = time.monotonic()
        if now - self._last < PROGRESS_EVERY_S and self.count < self.total:
            return
        self._last = now
        goodput = summary.get("goodput_mbps")
        result = f": {goodput:.1f} Mb/s" if isinstance(goodput, (int, float)) else ""
        self.say(f"[{self.count}/{self.total}] {point.label()}{result} ({wall_s:.1f} s)"
                 f"{self.eta(now)}")

    def eta(self, now: float) -> str:
        """``; eta 1:05`` from the rate of the points finished so far in this run."""
        done, left = self.count - self.initial, self.total - self.count
        if done <= 0 or left <= 0:
            return ""
        seconds = round((now - self._start) / done * left)
        hours, rest = divmod(seconds, 3600)
        clock = f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else \
            f"{rest // 60}:{rest % 60:02d}"
        return f"; eta {clock}"

    def running(self, text: str) -> None:
        """Show the points running now (``LiveRuns.text``): beside the bar on a terminal;
        otherwise a line at most every ``LIVE_EVERY_S``."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=True)
            return
        now = time.monotonic()
        if not text or now - max(self._last, self._start) < LIVE_EVERY_S:
            return
        self._last = now
        self.say(f"  running: {text}")

    def say(self, text: str) -> None:
        if self._bar is not None:
            self._bar.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


@shortens_scenario_errors
def run_sweep(plan: Plan, out_dir: Path, *, jobs: int, keep: Sequence[str] = (),
              fresh: bool = False, stream: IO[str] | None = None,
              executor: Executor | None = None, where: str | None = None) -> SweepOutcome:
    """Run the points of ``plan`` not yet in ``out_dir/runs.jsonl``; return all records.

    ``keep`` names the result tables saved from every point (``runs.point_dir``) for the
    report; a recorded point whose tables are missing is run again. The points run on
    ``executor`` (named ``where`` in messages; it is left running), else on a pool of
    ``jobs`` threads (see ``executors``); each result is written as it arrives.

    Raises ``SweepInterrupted`` on Ctrl-C and ``PointFailed`` (or the engine's
    ``ScenarioError``) when a point fails; finished points are always saved first.
    """
    stream = sys.stderr if stream is None else stream
    scn = plan.scenario
    store = RunStore(out_dir / RUNS_FILE, scn.sha256)
    store.lock()
    pool = Pool(executor, where or (type(executor).__name__ if executor else None),
                client_of(executor))
    log = SweepLog(plan, pool.description or _plural(jobs, "thread"))
    try:
        outcome = _run_locked(plan, out_dir, store, jobs, pool, keep, fresh, stream, log)
        log.status = "complete"
        return outcome
    finally:
        try:
            log.write(out_dir / RUN_JSON)
        finally:
            store.close()


@dataclass
class SweepLog:
    """The sweep's own ``run.json``: what ran, where, for how long (written at its end,
    also when it is interrupted or fails)."""

    plan: Plan
    executor: str
    status: str = "failed"
    ran: int = 0
    reused: int = 0
    events: int = 0
    warned: bool = False  # the note that the store cannot be written is printed
    started_at: str = ""
    start: float = 0.0

    def __post_init__(self) -> None:
        self.started_at = now()
        self.start = time.perf_counter()

    def add(self, result: PointResult, summary: dict[str, Any]) -> None:
        self.ran += 1
        events = summary.get("events")
        if isinstance(events, int) and not isinstance(events, bool):
            self.events += events

    def write(self, path: Path) -> None:
        scn = self.plan.scenario
        sim = scn.data.get("sim")
        seed = self.plan.fixed.get("sim.seed", sim.get("seed") if isinstance(sim, dict) else None)
        meta = {"dcnsim": dcnsim_version(), "git_commit": git_commit(),
                "engine": str(core().version()), "scenario": str(scn.path),
                "scenario_sha256": scn.sha256, "quick": self.plan.quick,
                "overrides": self.plan.fixed, "axes": dict(self.plan.axes),
                "seed": seed if isinstance(seed, int) else None, "status": self.status,
                "points": len(self.plan.points), "ran": self.ran, "reused": self.reused,
                "events": self.events, "executor": self.executor,
                "wall_s": round(time.perf_counter() - self.start, 6),
                **machine(), "started_at": self.started_at, "finished_at": now()}
        write_text_atomic(path, json.dumps(meta, indent=1, default=str) + "\n")


def _run_locked(plan: Plan, out_dir: Path, store: RunStore, jobs: int, pool: Pool,
                keep: Sequence[str], fresh: bool, stream: IO[str], log: SweepLog
                ) -> SweepOutcome:
    scn = plan.scenario
    known = {} if fresh else store.load()
    records: list[Record | None] = [known.get(p.key()) for p in plan.points]
    if keep:  # a point whose kept tables are missing is run again
        for i, p in enumerate(plan.points):
            if records[i] is not None and not point_dir(out_dir, p.index).is_dir():
                records[i] = None
    pending = [p for p, rec in zip(plan.points, records, strict=True) if rec is None]
    reused = len(plan.points) - len(pending)
    log.reused = reused
    store.open()
    try:
        if store.unreadable:
            print(f"dcnsim: warning: ignored {_plural(store.unreadable, 'unreadable line')} "
                  f"in {store.path}", file=stream)
        mode = " (quick)" if plan.quick else ""
        note = f", {reused} already done in {store.path}" if reused else ""
        workers = max(1, min(jobs, len(pending)))
        where = pool.description or _plural(workers, "thread")
        print(f"dcnsim: {scn.id}{mode}: {_plural(len(plan.points), 'point')}{note}; "
              f"running {len(pending)} on {where}", file=stream, flush=True)
        if pending:
            owned = pool.executor is None
            executor = (ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dcnsim")
                        if pool.executor is None else pool.executor)
            _execute(plan, pending, records, store, executor, owned, keep, stream, log,
                     client=pool.client)
    finally:
        store.close()
    complete = [rec for rec in records if rec is not None]
    assert len(complete) == len(records)
    return SweepOutcome(records=complete, ran=len(pending), reused=reused,
                        runs_path=store.path)


def _execute(plan: Plan, pending: list[Point], records: list[Record | None], store: RunStore,
             executor: Executor, owned: bool, keep: Sequence[str], stream: IO[str],
             log: SweepLog, client: Any = None) -> None:
    live = LiveRuns()
    with live.registered(), subscribed(client, live):
        _execute_live(plan, pending, records, store, executor, owned, keep, stream, log, live)


def _execute_live(plan: Plan, pending: list[Point], records: list[Record | None],
                  store: RunStore, executor: Executor, owned: bool, keep: Sequence[str],
                  stream: IO[str], log: SweepLog, live: LiveRuns) -> None:
    scn = plan.scenario
    version = str(core().version())
    text, path = scn.text, str(scn.path)
    out_dir = store.path.parent
    # A shard's plan holds some points of the grid: records follow the plan's order, while
    # point.index (folder names, records) is the point's place in the whole grid.
    position = {p.index: i for i, p in enumerate(plan.points)}

    def save(point: Point, result: PointResult) -> dict[str, Any]:
        """Write a finished point's files (before its record: a recorded point has them)."""
        if result.engine != version:
            raise UserError(f"point {point.where()} ran on engine {result.engine} (on "
                            f"{result.where.get('host')}) but this sweep uses {version}: "
                            "install the same dcnsim everywhere")
        summary = summary_row(result.tables)
        if keep:
            save_tables(point_dir(out_dir, point.index), result.tables, keep)
        meta = run_metadata(scenario=path, scenario_sha256=scn.sha256, engine=result.engine,
                            overrides=point.overrides, summary=summary, wall_s=result.wall_s,
                            point_id=point_id(scn, version, point), where=result.where,
                            warnings=result.warnings)
        folder = point_dir(out_dir, point.index)
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(folder / RUN_JSON, json.dumps(meta, indent=1, default=str) + "\n")
        label = point.axis_values.get(VARIANTS_AXIS)
        columns = params(meta["point_id"], point.index, plan.quick, meta["seed"], scn.sha256,
                         {**point.overrides, **({VARIANTS_AXIS: label} if label else {})})
        if write_run(out_dir, scn.id, point.index, meta["point_id"], columns,
                     result.tables) is None and not log.warned:
            log.warned = True
            progress.say(f"dcnsim: note: {NO_PYARROW}")
        log.add(result, summary)
        return summary

    progress = Progress(len(plan.points), len(plan.points) - len(pending), scn.id, stream)
    futures: dict[Future[PointResult], Point] = {
        executor.submit(run_point, text, path, _toml.literal_pairs(point.overrides),
                        point.index, live.token): point
        for point in pending}
    labels = {p.index: f"#{p.index}" for p in pending}
    failures: list[tuple[Point, BaseException]] = []
    handled: set[Future[PointResult]] = set()

    def completed(waiting: Iterable[Future[PointResult]]) -> Iterable[Future[PointResult]]:
        """The futures as they finish; between them, the running points' progress."""
        left = set(waiting)
        while left:
            done, left = wait(left, timeout=LIVE_TICK_S, return_when=FIRST_COMPLETED)
            yield from done
            progress.running(live.text(labels.__getitem__))

    def collect(waiting: Iterable[Future[PointResult]]) -> None:
        for fut in completed(waiting):
            if fut.cancelled() or fut in handled:
                continue
            point = futures[fut]
            live.finish(point.index)
            exc = fut.exception()
            if exc is not None:
                if not failures:  # stop starting new points; let running ones finish
                    for other in futures:
                        other.cancel()
                failures.append((point, exc))
                handled.add(fut)
                continue
            result = fut.result()
            summary = save(point, result)  # OSError, UserError: the sweep stops here
            record = make_record(scn, version, plan.quick, point, summary)
            store.append(record)
            records[position[point.index]] = record
            handled.add(fut)  # only now: a Ctrl-C before this line saves the point again
            progress.advance(point, summary, result.wall_s)

    try:
        try:
            collect(futures)
        except KeyboardInterrupt:
            for fut in futures:
                fut.cancel()
            # finished but not yet saved, or still running: save them all
            unsaved = [f for f in futures if not f.cancelled() and f not in handled]
            running = sum(1 for f in unsaved if not f.done())
            if running:
                progress.say(f"dcnsim: interrupted; waiting for {_plural(running, 'running point')}"
                             " to finish (press Ctrl-C again to abandon them)")
            try:
                collect(unsaved)
            except KeyboardInterrupt:
                abandoned = sum(1 for f in unsaved if not f.done())
                raise _interrupted(records, store, abandoned) from None
            raise _interrupted(records, store, 0) from None
    finally:
        progress.close()
        if owned:
            executor.shutdown(wait=False, cancel_futures=True)
        else:  # the caller's executor goes on: take back what this sweep left in it
            for fut in futures:
                fut.cancel()
    if failures:
        point, exc = failures[0]
        if isinstance(exc, ImportError):  # e.g. a cluster worker without dcnsim
            raise UserError(f"sweep point {point.where()} could not run: {exc} (install the "
                            "same dcnsim where the points run)") from None
        if is_scenario_error(exc):
            raise scenario_error(f"{exc} (in sweep point {point.where()})") from None
        raise PointFailed(point, exc) from exc


def _interrupted(records: list[Record | None], store: RunStore, abandoned: int) -> SweepInterrupted:
    done = sum(1 for rec in records if rec is not None)
    return SweepInterrupted(done, len(records), store.path, abandoned)

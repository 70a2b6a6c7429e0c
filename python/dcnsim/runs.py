"""The on-disk layout of a sweep's output directory.

::

    <dir>/runs.jsonl               one JSON record per finished point (append-only)
    <dir>/points/0007/<table>.csv  the result tables a report keeps from point 7
    <dir>/points/0007/run.json     provenance of point 7 (``provenance``)
    <dir>/run.json                 provenance of the sweep's last run
    <dir>/store/<table>/...        every point's tables as Parquet (``store``)
    <dir>/.dcnsim.lock             the pid of the sweep writing here (an flock while it runs)

A record holds the point's overrides and the engine's summary row, with the scenario
file's hash so a resumed sweep reuses only points of the same scenario version. The
sweep executor (``sweep``) writes this layout; reports (``reports``) read it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ._tables import write_csv
from .errors import UserError
from .scenario import Point, Scenario, overrides_key
from .store import copy_missing

RUNS_FILE = "runs.jsonl"
LOCK_FILE = ".dcnsim.lock"
POINTS_DIR = "points"

Record = dict[str, Any]
Tables = dict[str, dict[str, list[Any]]]  # the engine's result: table -> column -> values


def point_dirname(index: int) -> str:
    """The folder name of sweep point ``index`` under ``POINTS_DIR``."""
    return f"{index:04d}"


def point_dir(out_dir: Path, index: int) -> Path:
    """Where the kept tables of sweep point ``index`` live."""
    return out_dir / POINTS_DIR / point_dirname(index)


def point_table(out_dir: Path, index: int, table: str) -> Path:
    """The CSV file of one kept table of sweep point ``index``."""
    return point_dir(out_dir, index) / f"{table}.csv"


def save_tables(directory: Path, tables: Tables, names: Sequence[str]) -> None:
    """Write the named tables of one point as CSV files (before the point is recorded, so a
    recorded point always has its tables)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        table = tables.get(name)
        if table is None:
            continue
        columns = list(table)
        n = len(table[columns[0]]) if columns else 0
        rows = ({c: table[c][i] for c in columns} for i in range(n))
        write_csv(directory / f"{name}.csv", columns, rows)


def point_id(scn: Scenario, engine_version: str, point: Point) -> str:
    """A stable name of a sweep point: a hash of the scenario text, the point's overrides
    (seed included) and the engine version, so shards and reruns agree on it."""
    return run_id(scn.sha256, engine_version, point.overrides)


def run_id(scenario_sha256: str, engine_version: str, overrides: Mapping[str, Any]) -> str:
    """``point_id`` from its parts (also names a single ``dcnsim run``)."""
    key = json.dumps([scenario_sha256, engine_version, overrides_key(overrides)])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def make_record(scn: Scenario, engine_version: str, quick: bool, point: Point,
                summary: dict[str, Any]) -> Record:
    """The ``runs.jsonl`` record of one finished point."""
    return {"scenario": scn.id, "scenario_sha256": scn.sha256, "engine": engine_version,
            "quick": quick, "index": point.index,
            "point_id": point_id(scn, engine_version, point), "overrides": point.overrides,
            "summary": summary}


def merge_dirs(target: Path, sources: Sequence[Path]) -> tuple[int, int]:
    """Join the sweep folders ``sources`` (shards of one sweep, e.g. from ``--shard``) into
    ``target``: their ``runs.jsonl`` records (a record already in ``target`` is not added
    twice), their point folders (kept tables, run.json) and their store files. Returns
    (records added, point folders copied)."""
    target.mkdir(parents=True, exist_ok=True)
    store = RunStore(target / RUNS_FILE, "")
    store.lock()
    try:
        seen = {line.strip() for line in _lines(target / RUNS_FILE)}
        added = copied = 0
        store.open()
        for src in sources:
            if not (src / RUNS_FILE).is_file():
                raise UserError(f"{src} has no {RUNS_FILE}: not a sweep folder")
            for line in _lines(src / RUNS_FILE):
                if line.strip() and line.strip() not in seen:
                    seen.add(line.strip())
                    store.append(json.loads(line))
                    added += 1
            points = src / POINTS_DIR
            for folder in sorted(points.iterdir()) if points.is_dir() else []:
                dest = target / POINTS_DIR / folder.name
                if not folder.name.startswith(".") and not dest.exists():
                    # Copied beside it, then renamed: a killed merge leaves no half folder
                    # (which a rerun would take as copied).
                    tmp = dest.with_name(f".{dest.name}.tmp")
                    shutil.rmtree(tmp, ignore_errors=True)
                    shutil.copytree(folder, tmp)
                    os.replace(tmp, dest)
                    copied += 1
            copy_missing(src, target)
    finally:
        store.close()
    return added, copied


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return []


class RunStore:
    """The append-only ``runs.jsonl`` of one sweep directory."""

    def __init__(self, path: Path, sha256: str) -> None:
        self.path = path
        self.sha256 = sha256
        self.unreadable = 0
        self._fh: IO[str] | None = None
        self._lock: IO[str] | None = None

    def load(self) -> dict[tuple[tuple[str, str], ...], Record]:
        """Recorded points of this scenario version, by override key (newest wins)."""
        found: dict[tuple[tuple[str, str], ...], Record] = {}
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return found
        for line in lines:
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                overrides, summary = rec["overrides"], rec["summary"]
                if not isinstance(overrides, dict) or not isinstance(summary, dict):
                    raise TypeError
                key = overrides_key(overrides)
            except (ValueError, KeyError, TypeError):
                self.unreadable += 1
                continue
            if rec.get("scenario_sha256") == self.sha256:
                found[key] = rec
        return found

    def lock(self) -> None:
        """Take the sweep directory's lock (``.dcnsim.lock``, holding the owner's pid), so a
        second sweep into the same directory is refused instead of running every point
        twice. The lock is an ``flock``: it goes with the process, also when it is killed."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.parent / LOCK_FILE
        fh = lock_path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            fh.close()
            raise UserError(
                f"another dcnsim sweep (pid {holder}) is writing to {self.path.parent}; "
                "wait for it to finish or give another --out") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        self._lock = fh

    def open(self) -> None:
        """Open for appending (fails early, with ``OSError``, if the directory is not writable)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = self.path.open("a+", encoding="utf-8")
        fh.seek(0, os.SEEK_END)
        if fh.tell() > 0:  # a killed writer may have left half a line: end it
            fh.seek(fh.tell() - 1)
            last = fh.read(1)
            fh.seek(0, os.SEEK_END)
            if last != "\n":
                fh.write("\n")
        self._fh = fh

    def append(self, record: Record) -> None:
        assert self._fh is not None, "RunStore.open() first"
        self._fh.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._lock is not None:
            self._lock.close()  # releases the flock
            self._lock = None

"""The provenance of a run: what ``run.json`` records beside its tables.

Every run writes one: ``dcnsim run`` into its output folder, every sweep point into
``points/NNNN/run.json`` and a sweep into ``<dir>/run.json``. The tables themselves hold no
wall-clock time or host (the same scenario and seed give byte-identical tables); this is
where those go. Fields a run cannot know are ``null`` (e.g. the git commit of a wheel built
outside any git repository).
"""

from __future__ import annotations

import datetime
import functools
import platform
import socket
import subprocess
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGE_DIR = Path(__file__).resolve().parent
RUN_JSON = "run.json"


def dcnsim_version() -> str:
    """The installed package's version ("0+unknown" when running from a source tree)."""
    try:
        return metadata.version("dcnsim")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@functools.cache
def git_commit() -> str | None:
    """The commit of the dcnsim checkout this package is loaded from (with ``+dirty`` when
    it has uncommitted changes); else, for an installed package, the commit its extension
    was built from (``build_commit``); None when neither is known."""
    return checkout_commit() or build_commit()


def build_commit() -> str | None:
    """The git commit of the source tree the compiled extension was built from (recorded by
    ``crates/dcnsim-py/build.rs``; ``+dirty`` when the tree differed from it), or None: built
    without git or outside a repository, or no extension."""
    from ._native import core

    try:
        recorded = getattr(core(), "build_commit", None)
    except ImportError:
        return None
    value = recorded() if callable(recorded) else None
    return str(value) if value else None


def checkout_commit() -> str | None:
    """The commit of the dcnsim checkout this package is loaded from (``+dirty`` when it has
    uncommitted changes), or None: an installed copy, or no git."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(PACKAGE_DIR), *args], capture_output=True,
                              text=True, timeout=5, check=True).stdout.strip()

    try:
        top = Path(git("rev-parse", "--show-toplevel")).resolve()
        if top / "python" / "dcnsim" != PACKAGE_DIR:  # some other repository holds the install
            return None
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("+dirty" if dirty else "")


def machine() -> dict[str, str]:
    """Where a run ran: host name, Python and platform (a worker's, on a cluster)."""
    return {"host": socket.gethostname(), "python": platform.python_version(),
            "platform": platform.platform()}


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def run_metadata(*, scenario: str, scenario_sha256: str, engine: str,
                 overrides: Mapping[str, Any], summary: Mapping[str, Any], wall_s: float,
                 point_id: str | None = None, where: Mapping[str, str] | None = None,
                 warnings: Sequence[str] = (), stopped: str | None = None,
                 ) -> dict[str, Any]:
    """The ``run.json`` of one run. ``summary`` is the engine's summary row: the seed and
    the event count are taken from it (None if the engine does not report them); ``where``
    is the ``machine()`` of the process that ran it (this one by default). ``warnings``:
    the engine's warnings about legal but suspicious settings; ``stopped``: why the run
    stopped before its end (``--max-events``, ``--max-wall``; its tables are partial)."""
    return {"dcnsim": dcnsim_version(), "git_commit": git_commit(), "engine": engine,
            "scenario": scenario, "scenario_sha256": scenario_sha256,
            "overrides": dict(overrides), "seed": _int_or_none(summary.get("seed")),
            "point_id": point_id, "wall_s": round(wall_s, 6),
            "events": _int_or_none(summary.get("events")),
            "warnings": list(warnings), "partial": stopped,
            **(dict(where) if where is not None else machine()), "finished_at": now()}

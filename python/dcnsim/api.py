"""The Python API: run a scenario's base point into DataFrames, or check a scenario file.

``dcnsim`` re-exports these; see its docstring for an example.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import _toml
from ._messages import shortens_scenario_errors
from ._native import core
from ._tables import frame_csv, write_bytes_atomic, write_text_atomic
from .errors import CheckFailed, RunFailed
from .provenance import RUN_JSON, run_metadata
from .runs import run_id
from .scenario import check_sets, load_validated, read_text, validate_all_points
from .store import params, write_run

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Result:
    """The tables of one run, as pandas DataFrames (``res.summary``, ``res.flows``, ...).

    The engine's columns are kept as they came (``raw``: table -> column -> values); the
    DataFrames are made on first use, so writing the CSV files builds none (the Parquet
    store still loads pandas, through pyarrow)."""

    raw: dict[str, dict[str, list[Any]]]
    scenario: str = ""
    overrides: dict[str, Any] = field(default_factory=dict)
    #: Wall-clock seconds of the engine call (not in the tables, which stay identical
    #: from run to run; written to ``run.json`` by ``to_dir``).
    wall_s: float = 0.0
    #: The scenario text's SHA-256, for ``run.json``.
    scenario_sha256: str = ""
    #: Packet captures of ``[measure] pcap``: port name -> libpcap file bytes (written by
    #: ``to_dir`` as ``pcap/<port>.pcap``, see :func:`pcap_file_name`).
    captures: dict[str, bytes] = field(default_factory=dict)
    #: The engine's warnings about legal but suspicious settings (one line each; also in
    #: ``run.json``, never in the tables).
    warnings: list[str] = field(default_factory=list)
    #: Why the run stopped before its end (``max_events``, ``max_wall``), None when it ran
    #: to the end; the tables then cover the time simulated (``summary.partial`` = 1).
    stopped: str | None = None
    _frames: dict[str, pd.DataFrame] | None = field(default=None, init=False, repr=False,
                                                    compare=False)

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table as a pandas DataFrame (made on first access)."""
        if self._frames is None:
            self._frames = _tables_to_frames(self.raw)
        return self._frames

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name.startswith("_") or name in ("raw", "tables", "scenario", "overrides", "wall_s",
                                            "scenario_sha256", "captures", "warnings",
                                            "stopped"):
            raise AttributeError(name)
        try:
            return self.tables[name]
        except KeyError:
            raise AttributeError(
                f"no table {name!r} in this result (tables: {', '.join(self.tables)})"
            ) from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.tables))

    @property
    def summary_row(self) -> dict[str, Any]:
        """The single row of the ``summary`` table as a plain dict."""
        return {str(k): v[0] for k, v in self.raw["summary"].items()}

    def metadata(self) -> dict[str, Any]:
        """What ``run.json`` records of this run (``provenance.run_metadata``): versions and
        git commit, scenario and its SHA-256, overrides, seed, wall time, events, platform."""
        engine = str(core().version())
        return run_metadata(scenario=self.scenario, scenario_sha256=self.scenario_sha256,
                            engine=engine, overrides=self.overrides,
                            summary=self.summary_row if "summary" in self.raw else {},
                            wall_s=self.wall_s,
                            point_id=run_id(self.scenario_sha256, engine, self.overrides),
                            warnings=self.warnings, stopped=self.stopped)

    def to_dir(self, path: str | PathLike[str]) -> list[Path]:
        """Write each table as ``<path>/<name>.csv``, each packet capture as
        ``<path>/pcap/<port>.pcap``, the run's metadata as ``<path>/run.json`` and the tables
        to the Parquet store ``<path>/store/`` (see ``dcnsim.store``; skipped without
        pyarrow); returns the files (and store) written."""
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, columns in self.raw.items():
            target = out / f"{name}.csv"
            # Through a temporary file and a rename: a killed run leaves whole files only.
            write_text_atomic(target, frame_csv(columns))
            written.append(target)
        if self.captures:
            (out / "pcap").mkdir(exist_ok=True)
        for port, data in self.captures.items():
            target = out / "pcap" / pcap_file_name(port)
            write_bytes_atomic(target, data)
            written.append(target)
        meta = self.metadata()
        meta_path = out / RUN_JSON
        write_text_atomic(meta_path, json.dumps(meta, indent=1, default=str) + "\n")
        written.append(meta_path)
        columns = params(meta["point_id"], 0, False, meta["seed"], self.scenario_sha256,
                         self.overrides)
        store = write_run(out, Path(self.scenario).stem, 0, meta["point_id"], columns,
                          self.raw)
        return written + ([store] if store is not None else [])


def pcap_file_name(port: str) -> str:
    """File name of a port's capture: ``"sw->client"`` gives ``sw-client.pcap`` (``->``
    becomes ``-``, other characters outside ``[A-Za-z0-9._-]`` become ``_``)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", port.replace("->", "-")) + ".pcap"


def _tables_to_frames(raw: Mapping[str, Mapping[str, list[Any]]]) -> dict[str, pd.DataFrame]:
    import pandas as pd

    return {name: pd.DataFrame(dict(columns)) for name, columns in raw.items()}


@shortens_scenario_errors
def run(scenario: str | PathLike[str], overrides: Mapping[str, Any] | None = None, *,
        text: str | None = None, progress: Callable[[float], Any] | None = None,
        check: bool = False, max_events: int | None = None, max_wall: float | None = None,
        max_memory: int | None = None) -> Result:
    """Run the base point of a scenario file (its ``[sweep]`` is ignored).

    ``overrides`` maps dotted field names to Python values, e.g.
    ``{"topology.servers": 16, "topology.switch_buffer": "32KiB"}``. With ``text``
    the scenario is taken from that string and ``scenario`` only names it in errors.
    ``progress``, if given, is called with 0.0 when the scenario is built and the simulation
    starts, then with the fraction of simulated time done about every million events.
    ``check``: the engine's end-of-run self-checks (packet conservation and buffer bound per
    port, sequence order per flow); a failure raises ``CheckFailed`` naming the port or
    flow. ``max_events`` / ``max_wall`` (seconds) stop the run cleanly
    (``Result.stopped`` says why; the tables are marked partial); ``max_memory`` (bytes)
    refuses a run whose estimated memory is above it. Raises ``ScenarioError`` for a bad
    scenario, ``EngineError`` for an engine bug, ``OSError`` for an unreadable file.
    """
    path = str(scenario)
    check_sets(path, overrides)
    if text is None:
        text = read_text(path)
    pairs = _toml.literal_pairs(overrides)
    start = time.perf_counter()
    limits = {k: v for k, v in (("check", check), ("max_events", max_events),
                                ("max_wall", max_wall), ("max_memory", max_memory)) if v}
    try:
        raw, captures, info = core().run_captured(text, path, pairs, progress, **limits)
    except MemoryError:
        # Python refused memory for the tables (the engine's own refusals are answered
        # inside it); nothing was written yet.
        raise RunFailed(f"{path}: out of memory while taking the result tables from the "
                        "engine (ulimit -v, or other processes); make the scenario "
                        "smaller") from None
    wall = time.perf_counter() - start
    if info.get("check_failed"):
        raise CheckFailed(f"{path}: --check failed: {info['check_failed']}")
    return Result(raw={name: dict(cols) for name, cols in raw.items()}, scenario=path,
                  overrides=dict(overrides or {}),
                  wall_s=wall, scenario_sha256=hashlib.sha256(text.encode()).hexdigest(),
                  captures=dict(captures), warnings=list(info.get("warnings", [])),
                  stopped=info.get("stopped"))


@shortens_scenario_errors
def validate(scenario: str | PathLike[str], overrides: Mapping[str, Any] | None = None, *,
             text: str | None = None) -> list[str]:
    """Check a scenario file without running it: the engine's schema, the Python-owned
    tables (``[sweep]``, ``[quick]``, ``[report]``) and every sweep point, full and quick.
    Raises ``ScenarioError`` naming the file, field and problem; returns the engine's
    warnings about legal but suspicious settings (one line each): the base point's, then
    those only some sweep points give, each naming the first such point.
    """
    from . import reports  # only here: the report modules are not needed to run

    scn = load_validated(scenario, overrides, text=text)
    reports.parse(scn)
    return list(scn.warnings) + validate_all_points(scn, overrides)

"""Sweeps from Python: ``dcnsim.run_sweep`` runs every point of a scenario's ``[sweep]``
into a sweep folder (the same folder, resume and lock as ``dcnsim sweep``, without the
report), locally or on a cluster::

    import dcnsim
    from distributed import Client
    out = dcnsim.run_sweep("scenarios/devkota-fig08.toml", "out/fig08", quick=True,
                           executor=Client("tcp://host:8786").get_executor(pure=False))
    tables = dcnsim.open("out/fig08")       # the results store, as DataFrames
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from os import PathLike
from pathlib import Path
from typing import IO, Any

from . import executors
from ._messages import shortens_scenario_errors
from .scenario import load_validated, make_plan, validate_points
from .sweep import SweepOutcome
from .sweep import run_sweep as _run_plan


@shortens_scenario_errors
def run_sweep(scenario: str | PathLike[str], out: str | PathLike[str],
              overrides: Mapping[str, Any] | None = None, *, quick: bool = False,
              keep: Sequence[str] = (), fresh: bool = False, jobs: int | None = None,
              executor: Executor | None = None, cluster: str | None = None,
              stream: IO[str] | None = None) -> SweepOutcome:
    """Run the points of ``scenario``'s sweep not yet done in the folder ``out``.

    ``overrides`` are applied to every point (one value for an axis pins it), ``quick``
    applies the scenario's ``[quick]`` table, ``keep`` names result tables also saved as
    CSV per point (every table goes to the Parquet store anyway). The points run on
    ``executor`` (any ``concurrent.futures.Executor``; left running), on the Dask
    scheduler at ``cluster`` (e.g. ``"tcp://host:8786"``), or else on ``jobs`` threads
    (default: all CPUs). Progress goes to ``stream`` (default stderr).
    """
    scn = load_validated(scenario, overrides)
    plan = make_plan(scn, quick=quick, sets=overrides)
    validate_points(plan)
    with executors.choose(cluster=cluster, executor=executor) as pool:
        return _run_plan(plan, Path(out), jobs=jobs or executors.cpu_count(), keep=keep,
                         fresh=fresh, stream=stream or sys.stderr, executor=pool.executor,
                         where=pool.description)

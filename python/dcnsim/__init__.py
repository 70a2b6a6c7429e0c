"""dcnsim: packet-level datacenter congestion-control simulator.

Python API over the compiled engine ``dcnsim._core``::

    import dcnsim
    res = dcnsim.run("scenarios/devkota-fig08.toml", {"topology.servers": 16})
    res.summary          # pandas DataFrame, one row
    res.to_dir("out/x")  # one CSV per table
    dcnsim.run_sweep("scenarios/devkota-fig08.toml", "out/fig08", quick=True)  # every point
    dcnsim.open("out/fig08")["summary"]  # the Parquet results store, as DataFrames

The engine is imported on first use, so ``import dcnsim`` works without it and
the first call explains how to build it. This module only re-exports: the API is in
``dcnsim.api`` and ``dcnsim.experiment``, the exceptions in ``dcnsim.errors``.
"""

from __future__ import annotations

from importlib import metadata as _metadata
from typing import Any

from ._native import core as _core_module
from .api import Result, run, validate
from .errors import DcnsimError, ExtensionMissingError, UserError
from .experiment import run_sweep
from .store import open_store as open  # dcnsim.open(DIR): the results store

try:
    __version__ = _metadata.version("dcnsim")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "DcnsimError",
    "ExtensionMissingError",
    "Result",
    "ScenarioError",
    "UserError",
    "__version__",
    "open",
    "run",
    "run_sweep",
    "validate",
]


def __getattr__(name: str) -> Any:
    # ``ScenarioError`` is the engine's exception class: resolved on first access.
    if name == "ScenarioError":
        return _core_module().ScenarioError
    raise AttributeError(f"module 'dcnsim' has no attribute {name!r}")

"""Where the points of a sweep run.

The sweep (``sweep.run_sweep``) submits ``sweep.run_point(text, path, overrides)`` (plain
data in, the tables out) to a ``concurrent.futures.Executor`` and writes each result as
it arrives. Three kinds of executor:

- none given: the sweep's own thread pool of ``jobs`` threads (the default; the engine
  releases the GIL);
- any ``concurrent.futures.Executor`` the caller owns (a process pool, a Dask client's
  ``get_executor()``, ...): the sweep submits to it and leaves it running;
- ``--cluster ADDRESS``: a Dask distributed scheduler (``dask_cluster``). Its workers need
  the same dcnsim installed; a task of a worker that dies is rerun on another one by the
  scheduler, and the sweep writes a point only when its result arrives, so nothing is
  written twice.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .errors import UserError, missing_extra


def cpu_count() -> int:
    """The default number of local threads: one per CPU."""
    return os.cpu_count() or 1

CONNECT_TIMEOUT_S = 10.0


@dataclass
class Pool:
    """The executor a sweep submits to (None: the sweep's own threads) and how to name it
    in messages and in the sweep's ``run.json``."""

    executor: Executor | None
    description: str | None
    #: The Dask client behind ``executor``, if any: the sweep hears the points' progress
    #: through it (``live.py``).
    client: Any = None


def client_of(executor: Executor | None) -> Any:
    """The Dask client behind a Dask client's executor (``client.get_executor()``, which
    keeps it as ``_client``), or None for any other executor."""
    if type(executor).__name__ != "ClientExecutor":
        return None
    return getattr(executor, "_client", None)


@contextmanager
def choose(*, cluster: str | None = None, executor: Executor | None = None) -> Iterator[Pool]:
    """The pool a sweep runs on: ``cluster`` (a Dask scheduler address), ``executor``
    (the caller's), or neither (the sweep's own threads)."""
    if cluster is not None and executor is not None:
        raise UserError("give either a cluster address or an executor, not both")
    if cluster is not None:
        with dask_cluster(cluster) as pool:
            yield pool
    elif executor is not None:
        yield Pool(executor, type(executor).__name__, client_of(executor))
    else:
        yield Pool(None, None)


@contextmanager
def dask_cluster(address: str, *, timeout_s: float | None = None) -> Iterator[Pool]:
    """A Dask client connected to the scheduler at ``address`` (e.g. ``tcp://host:8786``),
    as an executor; closed (not the cluster, only the connection) at the end."""
    try:
        import distributed
    except ImportError as exc:
        raise missing_extra("--cluster", "cluster", exc) from None
    client_class: Any = distributed.Client  # untyped
    try:
        client: Any = client_class(address, timeout=timeout_s or CONNECT_TIMEOUT_S,
                                   set_as_default=False)
    except Exception as exc:  # noqa: BLE001 -- OSError, TimeoutError, ValueError, ...
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"cannot connect to the Dask scheduler at {address}: {text}") from None
    try:
        workers = len(client.scheduler_info().get("workers", {}))
        plural = "" if workers == 1 else "s"
        # pure=False: every submit is a new task (the scheduler never hands back an old result)
        yield Pool(client.get_executor(pure=False),
                   f"the Dask cluster at {address} ({workers} worker{plural} now)", client)
    finally:
        client.close()

"""Per-run progress of the points a sweep is running now (simulated time done / wall time),
from whatever runs them.

The engine calls a progress callback with 0.0 when the simulation starts, then with the
fraction of simulated time done about every million events (the start call is not
reported). ``run_point`` hands it a reporter that sends ``(sweep, index, fraction,
wall_s)`` to the sweep that submitted the point:

- in the sweep's own threads (the default pool) straight into that sweep's ``LiveRuns``,
  found in this process by the sweep's token;
- on a Dask worker, as an event of the worker's log under ``TOPIC``; the sweep's client
  subscribes to the topic (``subscribed``) and feeds its ``LiveRuns``. A worker sends at
  most one event per ``SEND_EVERY_S`` per point, so a cluster is not flooded;
- anywhere else (a process pool given by the caller) nowhere: the sweep still shows its
  per-point progress.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: The Dask event-log topic of progress messages.
TOPIC = "dcnsim-progress"
#: A worker sends at most one progress event per point this often.
SEND_EVERY_S = 1.0

_SWEEPS: dict[str, LiveRuns] = {}
_SWEEPS_LOCK = threading.Lock()


class LiveRuns:
    """The fraction done and the wall time so far of each point running now."""

    def __init__(self) -> None:
        self.token = uuid.uuid4().hex
        self._runs: dict[int, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def update(self, index: int, fraction: float, wall_s: float) -> None:
        with self._lock:
            self._runs[index] = (min(max(fraction, 0.0), 1.0), wall_s)

    def finish(self, index: int) -> None:
        with self._lock:
            self._runs.pop(index, None)

    def snapshot(self) -> dict[int, tuple[float, float]]:
        with self._lock:
            return dict(self._runs)

    def text(self, label: Callable[[int], str]) -> str:
        """``point 3 45 % (0:12)`` for each point running, by grid index; "" if none."""
        runs = self.snapshot()
        parts = []
        for index in sorted(runs):
            fraction, wall = runs[index]
            minutes, seconds = divmod(round(wall), 60)
            parts.append(f"{label(index)} {fraction:.0%} ({minutes}:{seconds:02d})")
        return ", ".join(parts)

    @contextmanager
    def registered(self) -> Iterator[LiveRuns]:
        """Findable by ``reporter`` in this process while the sweep runs."""
        with _SWEEPS_LOCK:
            _SWEEPS[self.token] = self
        try:
            yield self
        finally:
            with _SWEEPS_LOCK:
                _SWEEPS.pop(self.token, None)


def _dask_worker() -> Any:
    """The Dask worker running this task, or None."""
    try:
        from distributed import get_worker
    except ImportError:
        return None
    try:
        return get_worker()
    except ValueError:  # not in a worker
        return None


def reporter(token: str | None, index: int) -> Callable[[float], None] | None:
    """The progress callback for point ``index`` of the sweep ``token``, or None when its
    progress can go nowhere."""
    if token is None:
        return None
    start = time.perf_counter()
    with _SWEEPS_LOCK:
        live = _SWEEPS.get(token)
    if live is not None:
        def local(fraction: float) -> None:
            if fraction > 0.0:  # the engine's call at the start carries no progress
                live.update(index, fraction, time.perf_counter() - start)
        return local
    worker = _dask_worker()
    if worker is None:
        return None
    last = [-float("inf")]

    def remote(fraction: float) -> None:
        if fraction <= 0.0:  # the engine's call at the start carries no progress
            return
        now = time.perf_counter()
        if now - last[0] < SEND_EVERY_S:
            return
        last[0] = now
        worker.log_event(TOPIC, {"sweep": token, "index": index, "fraction": fraction,
                                 "wall_s": now - start})
    return remote


@contextmanager
def subscribed(client: Any, live: LiveRuns) -> Iterator[None]:
    """Feed ``live`` from the progress events that the workers of ``client``'s cluster log
    for this sweep (None: no client, nothing to do)."""
    if client is None:
        yield
        return

    def handle(event: tuple[float, Any]) -> None:
        msg = event[1]
        if isinstance(msg, dict) and msg.get("sweep") == live.token:
            live.update(int(msg["index"]), float(msg["fraction"]), float(msg["wall_s"]))

    client.subscribe_topic(TOPIC, handle)
    try:
        yield
    finally:
        try:
            client.unsubscribe_topic(TOPIC)
        except Exception:  # noqa: BLE001 -- a closed connection: nothing left to stop
            pass

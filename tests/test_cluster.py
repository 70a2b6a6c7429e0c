"""Sweeps on a real Dask distributed cluster (a LocalCluster of two worker processes
started here) against the real engine: the same bytes as the local thread pool, and a
worker killed in the middle of a point loses nothing and writes nothing twice."""

from __future__ import annotations

import io
import json
import logging
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dcnsim
import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing
import pytest
from dcnsim.cli import main
from distributed import Client, LocalCluster

from .conftest import SCENARIOS

# devkota-fig08 cut to 8 short points (2 buffers x 4 server counts).
GRID = ('[sweep]\n"topology.switch_buffer" = ["64KiB", "256KiB"]\n'
        '"topology.servers" = [2, 4, 8, 16]\n')
SHORT = {"sim.duration": "0.5s"}
LONG = {"sim.duration": "60s"}  # ~0.5 s of wall time per point: long enough to be killed in


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with LocalCluster(processes=True, n_workers=2, threads_per_worker=1,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as c:
        yield c


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    text = (SCENARIOS / "devkota-fig08.toml").read_text(encoding="utf-8")
    head, _, tail = text.partition("[sweep]")
    path = tmp_path / "fig08-small.toml"
    path.write_text(head + GRID + "\n[report]" + tail.partition("[report]")[2],
                    encoding="utf-8")
    return path


def _files(folder: Path) -> dict[str, bytes]:
    """Every file a sweep wrote that must not depend on where it ran (run.json holds the
    host and wall time; runs.jsonl is in completion order, so its lines are sorted)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_file() and path.name not in ("run.json", ".dcnsim.lock", "runs.jsonl"):
            out[rel] = path.read_bytes()
    lines = sorted((folder / "runs.jsonl").read_text().splitlines())
    out["runs.jsonl"] = "\n".join(lines).encode()
    return out


def test_cluster_sweep_gives_the_local_bytes(client: Client, scenario: Path,
                                             tmp_path: Path) -> None:
    address = client.scheduler.address
    sets = [f"--set={k}={v}" for k, v in SHORT.items()]
    assert main(["sweep", str(scenario), *sets, "--out", str(tmp_path / "local")]) == 0
    assert main(["sweep", str(scenario), *sets, "--cluster", address,
                 "--out", str(tmp_path / "cluster")]) == 0
    local = _files(tmp_path / "local" / scenario.stem)
    remote = _files(tmp_path / "cluster" / scenario.stem)
    assert "results.csv" in local
    assert len([k for k in local if k.startswith("store/summary/experiment=fig08-small/")]) == 8
    assert local == remote
    lines = (tmp_path / "cluster" / scenario.stem / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 8
    sweep_meta = json.loads((tmp_path / "cluster" / scenario.stem / "run.json").read_text())
    assert sweep_meta["executor"].startswith(f"the Dask cluster at {address}")
    assert sweep_meta["ran"] == 8
    hosts = {json.loads(p.read_text())["host"]
             for p in (tmp_path / "cluster" / scenario.stem / "points").glob("*/run.json")}
    assert hosts  # written from what the workers reported


def test_a_killed_worker_loses_nothing(client: Client, scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    box: dict[str, Any] = {}

    def sweep() -> None:
        try:
            box["outcome"] = dcnsim.run_sweep(scenario, out, LONG, cluster=client.scheduler.address,
                                              stream=io.StringIO())
        except BaseException as exc:  # noqa: BLE001 -- checked below
            box["error"] = exc

    thread = threading.Thread(target=sweep)
    thread.start()
    # Wait until both workers are busy and some points are saved, then kill one in mid-point.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        busy = {w: keys for w, keys in client.processing().items() if keys}
        saved = (out / "runs.jsonl").read_text().count("\n") if (out / "runs.jsonl").exists() else 0
        if len(busy) == 2 and saved >= 1:
            break
        time.sleep(0.02)
    else:
        pytest.fail("the cluster never ran two points at once")
    victim = sorted(busy)[0]
    pid = client.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    thread.join(120)
    assert not thread.is_alive()
    assert "error" not in box, box.get("error")
    assert saved < 8, "the kill came after the sweep"
    lines = (out / "runs.jsonl").read_text().splitlines()
    ids = [json.loads(line)["point_id"] for line in lines]
    assert len(ids) == 8 and len(set(ids)) == 8, "every point written exactly once"
    assert box["outcome"].ran == 8

    reference = tmp_path / "reference"
    dcnsim.run_sweep(scenario, reference, LONG, jobs=2, stream=io.StringIO())
    assert _files(out) == _files(reference)


@pytest.fixture
def progress_seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, float]]:
    """Every progress update a sweep's ``LiveRuns`` receives here, and running lines every
    tick (no 30 s wait)."""
    from dcnsim import live, sweep

    seen: list[tuple[int, float]] = []
    update = live.LiveRuns.update

    def record(self: live.LiveRuns, index: int, fraction: float, wall_s: float) -> None:
        seen.append((index, fraction))
        update(self, index, fraction, wall_s)

    monkeypatch.setattr(live.LiveRuns, "update", record)
    monkeypatch.setattr(sweep, "LIVE_EVERY_S", 0.0)
    monkeypatch.setattr(sweep, "LIVE_TICK_S", 0.05)
    return seen


def _check_progress(seen: list[tuple[int, float]], text: str) -> None:
    # A healthy 12 s point is several million events: the engine reports every ~1 M, so
    # such points report in mid-run (collapsed ones may finish before their first report).
    points = {index for index, _ in seen}
    assert len(points) >= 3 and points <= set(range(8)), seen
    assert all(0.0 < f <= 1.0 for _, f in seen), seen
    assert any(0.0 < f < 1.0 for _, f in seen), "no report in mid-run"
    assert "  running: #" in text and "%" in text.partition("  running: #")[2], text


def test_cluster_points_report_their_progress(client: Client, scenario: Path, tmp_path: Path,
                                              progress_seen: list[tuple[int, float]]) -> None:
    stream = io.StringIO()
    dcnsim.run_sweep(scenario, tmp_path / "c", LONG, cluster=client.scheduler.address,
                     stream=stream)
    _check_progress(progress_seen, stream.getvalue())


def test_local_points_report_their_progress(scenario: Path, tmp_path: Path,
                                            progress_seen: list[tuple[int, float]]) -> None:
    stream = io.StringIO()
    dcnsim.run_sweep(scenario, tmp_path / "l", LONG, jobs=2, stream=stream)
    _check_progress(progress_seen, stream.getvalue())

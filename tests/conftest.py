"""Shared fixtures: a fake engine, so the Python logic is tested without the extension."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]

try:
    import dcnsim
except ImportError:  # not installed: test the source tree (logic tests need no extension)
    sys.path.insert(0, str(REPO / "python"))

import dcnsim._native  # noqa: E402 (after the sys.path fallback above)

SCENARIOS = REPO / "python" / "dcnsim" / "scenarios"

_RATE = re.compile(r"\d+(\.\d+)?[KMG]?bps")
_SIZE = re.compile(r"(\d+)(KiB|KB|B)")


class FakeScenarioError(ValueError):
    """Stands in for the engine's ScenarioError."""


class FakeCore:
    """Mimics the contract of ``dcnsim._core`` with a made-up, deterministic model."""

    ScenarioError = FakeScenarioError

    def __init__(self) -> None:
        self.runs: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.on_run: Callable[[dict[str, Any]], None] | None = None

    def version(self) -> str:
        return "fake-0.0"

    def schema(self) -> str:
        return "fake schema: [sim] [topology] [tcp] [[apps]] [measure]"

    def _load(self, text: str, path: str, overrides: list[tuple[str, str]]) -> dict[str, Any]:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise FakeScenarioError(f"{path}: TOML syntax error: {exc}") from None
        for key, literal in overrides:
            assert isinstance(literal, str), "overrides must be TOML literal strings"
            try:
                value = tomllib.loads(f"v = {literal}")["v"]
            except tomllib.TOMLDecodeError:
                value = literal
            *parents, last = key.split(".")
            table = data
            for part in parents:
                table = table.setdefault(part, {})
            table[last] = value
        topo = data.get("topology", {})
        rate = topo.get("link_rate", "1Gbps")
        if not isinstance(rate, str) or not _RATE.fullmatch(rate):
            raise FakeScenarioError(
                f'{path}: line 14, field topology.link_rate: invalid rate "{rate}": expected a '
                "number followed by bps, Kbps, Mbps or Gbps")
        servers = topo.get("servers", 1)
        if not isinstance(servers, int) or isinstance(servers, bool) or servers < 1:
            raise FakeScenarioError(f"{path}: field topology.servers: expected a positive integer")
        buffer = topo.get("switch_buffer", "256KiB")
        match = _SIZE.fullmatch(str(buffer))
        if not match:
            raise FakeScenarioError(f"{path}: field topology.switch_buffer: invalid size")
        return data

    def validate(self, text: str, path: str, overrides: list[tuple[str, str]]) -> list[str]:
        self._load(text, path, overrides)
        return []

    def run(self, text: str, path: str, overrides: list[tuple[str, str]],
            progress: Callable[[float], Any] | None = None) -> dict[str, dict[str, list[Any]]]:
        data = self._load(text, path, overrides)
        if progress is not None:
            progress(1.0)
        with self.lock:
            self.runs.append(dict(overrides))
        if self.on_run is not None:
            self.on_run(data)
        topo = data["topology"]
        n = topo["servers"]
        num, unit = _SIZE.fullmatch(topo["switch_buffer"]).groups()  # type: ignore[union-attr]
        buffer = int(num) * {"KiB": 1024, "KB": 1000, "B": 1}[unit]
        duration = float(str(data["sim"]["duration"]).rstrip("s"))
        goodput = min(973.0, 973.0 * buffer / (n * 16384)) + 0.125
        summary = {
            "id": [data.get("meta", {}).get("id", "x")], "seed": [data["sim"].get("seed", 1)],
            "duration_s": [duration], "flows": [n], "servers": [n],
            "switch_buffer_bytes": [buffer], "goodput_mbps": [goodput],
            "delivered_bytes": [int(goodput * duration * 125000)],
            "timeouts": [max(0, n - buffer // 16384)], "retransmits": [n], "drops": [n * 3],
            "silent_s": [duration * (1 - goodput / 973.125) * 0.8], "rounds": [int(duration * 10)],
            "events": [1000 * n], "wall_s": [0.001 * n], "bottleneck_pkts": [500 * n],
        }
        flows = {"flow": list(range(n)), "bytes": [256000] * n}
        ports = {"port": ["sw->client"], "drops": [n * 3]}
        return {"summary": summary, "flows": flows, "ports": ports}

    def run_captured(self, text: str, path: str, overrides: list[tuple[str, str]],
                     progress: Callable[[float], Any] | None = None, **limits: Any,
                     ) -> tuple[dict[str, dict[str, list[Any]]], dict[str, bytes],
                                dict[str, Any]]:
        self.limits = limits
        return self.run(text, path, overrides, progress), {}, {"warnings": [], "stopped": None}


@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> FakeCore:
    fake = FakeCore()
    monkeypatch.setattr(dcnsim._native, "_CORE", fake)
    monkeypatch.setenv("CI", "true")  # no progress bar in tests
    return fake


@pytest.fixture
def sigint_raises() -> Iterator[None]:
    """SIGINT raises ``KeyboardInterrupt`` in this process during the test, as Python sets it
    up at start unless the process began with SIGINT ignored (a shell's background job, or
    `trap "" INT`): a test of Ctrl-C must not inherit that."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def sigint_default() -> None:
    """``preexec_fn`` of a child process that a test stops with SIGINT: the default
    disposition, whatever this process inherited (a background job ignores SIGINT, and so
    would the child, which Python then leaves ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def fig08(tmp_path: Path) -> Path:
    """A copy of devkota-fig08.toml in a temporary directory."""
    target = tmp_path / "devkota-fig08.toml"
    target.write_text((SCENARIOS / "devkota-fig08.toml").read_text(encoding="utf-8"),
                      encoding="utf-8")
    return target


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Run the ``dcnsim`` command line in this process: its exit code and its stderr,
    after checking that neither stream shows a traceback."""
    from dcnsim.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, err


CATALOG_TIMEOUT_S = 1200


@pytest.fixture(scope="session")
def catalog_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The output folder, stdout and stderr of one ``dcnsim reproduce --all --quick`` on the
    real engine, run once per session and shared by every test that reads it."""
    import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing

    out = tmp_path_factory.mktemp("catalog") / "results"
    env = {**os.environ, "CI": "true"}
    proc = subprocess.run([sys.executable, "-m", "dcnsim", "reproduce", "--all", "--quick",
                           "--out", str(out)], capture_output=True, text=True, env=env,
                          timeout=CATALOG_TIMEOUT_S, check=False)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc.stdout, proc.stderr

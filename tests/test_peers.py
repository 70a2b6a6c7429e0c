"""`benches/peers.py` finds the htsim driver that `benches/htsim/build.sh` builds."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def load_peers():
    spec = importlib.util.spec_from_file_location("peers_bench", REPO / "benches" / "peers.py")
    assert spec and spec.loader
    peers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peers)
    return peers


def test_the_built_driver_is_the_default_htsim_command(tmp_path: Path) -> None:
    peers = load_peers()
    assert peers.HTSIM == REPO / "benches" / "htsim" / "build" / "htsim_star_incast"
    driver = tmp_path / "dir with space" / "htsim_star_incast"
    assert peers.default_htsim(driver) is None  # not built
    driver.parent.mkdir()
    driver.write_text("#!/bin/sh\n")
    assert peers.default_htsim(driver) is None  # not executable
    driver.chmod(0o755)
    template = peers.default_htsim(driver)
    case = {"servers": 64, "rate_gbps": 10, "workload": "sru", "duration": 2.0}
    assert peers.htsim_cmd(template, case, str(tmp_path)) == [
        str(driver), "-n", "64", "-rate_gbps", "10", "-time_s", "2.0", "-workload", "sru"]
    assert shlex.split(template)[0] == str(driver)


def test_the_build_script_pins_the_htsim_commit_the_docs_report() -> None:
    script = (REPO / "benches" / "htsim" / "build.sh").read_text()
    pinned = re.search(r"^COMMIT=([0-9a-f]{40})$", script, re.M)
    assert pinned, "build.sh pins no commit"
    docs = (REPO / "docs" / "performance.md").read_text()
    assert f"Broadcom/csg-htsim at {pinned.group(1)[:7]}" in docs
    assert '"$HERE/htsim_star_incast.cpp"' in script


def test_engine_paths_are_checked_before_any_run(tmp_path: Path, monkeypatch, capsys) -> None:
    # Each simulator runs in its own temporary directory, so a relative engine path is
    # made absolute first; one that names no program is a one-line error, not a traceback.
    peers = load_peers()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["peers.py", "--engine", "target/release/dcnsim-engine"])
    assert peers.main() == 2
    err = capsys.readouterr().err.strip()
    engine = tmp_path / "target" / "release" / "dcnsim-engine"
    assert err == f"peers: --engine {engine}: not built (cargo build --release)"
    engine = tmp_path / "engine"
    engine.write_text("#!/bin/sh\n")
    engine.chmod(0o755)
    monkeypatch.setattr(
        "sys.argv", ["peers.py", "--engine", "engine", "--base-engine", "old/engine"])
    assert peers.main() == 2
    err = capsys.readouterr().err.strip()
    assert err == f"peers: --base-engine {tmp_path}/old/engine: no such program"

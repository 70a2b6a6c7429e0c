"""Robustness (docs/robustness.md) against the real engine: exact one-line messages for out-of-range
values and wrong fields, warnings on stderr and in run.json, partial runs and ``--check``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import dcnsim
import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing
import pytest
from dcnsim.scenario import load_validated, make_plan

from .conftest import SCENARIOS
from .test_integration import dcnsim_cli

FIG08 = str(SCENARIOS / "devkota-fig08.toml")


def _error(*args: str) -> str:
    proc = dcnsim_cli(*args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    # At most 200 characters besides the file's path (which the user chose).
    assert len(lines) == 1 and len(lines[0]) - len(args[1]) <= 200, proc.stderr
    return lines[0]


def test_out_of_range_values_name_field_value_and_range() -> None:
    assert _error("validate", FIG08, "--set", 'topology.link_rate="1e30Gbps"') == (
        f'dcnsim: error: {FIG08}, field topology.link_rate: "1e30Gbps" is out of range: '
        "expected 1kbps ..= 10Tbps (limits: rates) (after applying overrides)")
    assert _error("validate", FIG08, "--set", "topology.servers=1000000000") == (
        f'dcnsim: error: {FIG08}, field topology.servers: "1000000000" is out of range: '
        "expected 1 ..= 99998 (limits: topology nodes)")


def test_unknown_override_names_its_key() -> None:
    assert _error("validate", FIG08, "--set", "nosuch.key=1") == (
        f"dcnsim: error: {FIG08}, field nosuch.key: unknown field `nosuch`, expected one of "
        "`meta`, `sim`, `topology` (first 3 of 11 fields; `dcnsim schema` lists them) "
        "(after applying overrides)")


def test_syntax_errors_give_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[sim]\nduration = "10ms"\n[topology\nkind = "star"\n')
    assert _error("validate", str(bad)) == (
        f"dcnsim: error: {bad}: line 3, column 10: TOML syntax error: invalid table header: "
        "expected `.`, `]`")


def test_suspicious_values_warn_once_on_stderr_and_in_run_json(tmp_path: Path) -> None:
    sets = ["--set", "topology.switch_buffer=0", "--set", 'sim.duration="20ms"']
    warning = (f"dcnsim: warning: {FIG08}, field topology.switch_buffer: a switch port has a "
               "zero buffer: it drops every packet that finds it busy")
    proc = dcnsim_cli("validate", FIG08, *sets)
    assert proc.returncode == 0 and proc.stderr.strip().splitlines() == [warning]
    out = tmp_path / "run"
    proc = dcnsim_cli("run", FIG08, *sets, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("dcnsim: warning:") == 1 and warning in proc.stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["warnings"] == [warning.removeprefix("dcnsim: warning: ")]
    assert meta["partial"] is None
    assert "switch_buffer" not in (out / "summary.csv").read_text().split("\n")[1]


def test_validate_warns_about_sweep_points_the_base_point_does_not_have(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('[sim]\nduration = "1ms"\n[topology]\nkind = "star"\nservers = 2\n'
                    'link_rate = "1Gbps"\n[[apps]]\nkind = "incast"\nsru = "10KB"\n[sweep]\n'
                    '"topology.switch_buffer" = ["256KiB", "1B", "8KiB", "2B"]\n'
                    '"apps.0.sru" = ["10KB", "20KB"]\n')
    proc = dcnsim_cli("validate", str(path))
    assert proc.returncode == 0, proc.stderr
    small = ("dcnsim: warning: {}, field topology.switch_buffer: a switch port's buffer of {} "
             "bytes holds no 1500-byte frame: it drops every full-size packet that finds it "
             "busy (2 points, e.g. sweep point topology.switch_buffer={}B")
    lines = proc.stderr.strip().splitlines()
    for n in (1, 2):
        assert any(line.startswith(small.format(path, n, n)) for line in lines), lines
    assert not any("8KiB" in line or "256KiB" in line for line in lines), lines


def test_max_memory_refuses_with_the_numbers_and_the_key(tmp_path: Path) -> None:
    line = _error("run", FIG08, "--max-memory", "1KB", "--out", str(tmp_path / "out"))
    assert line.startswith(f"dcnsim: error: {FIG08}: line ")
    assert "field topology.servers: the run needs about " in line and " (ports " in line
    assert line.endswith("1.0 kB available (--max-memory, ulimit -v): "
                         "lower topology.servers")


def test_max_events_keeps_partial_tables_marked_partial(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = dcnsim_cli("run", FIG08, "--max-events", "1", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((out / "run.json").read_text())
    assert meta["partial"].startswith("max_events: stopped after ")
    header, row = (out / "summary.csv").read_text().splitlines()[:2]
    columns = dict(zip(header.split(","), row.split(","), strict=True))
    assert columns["partial"] == "1" and 0 < float(columns["simulated_s"]) < 20


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.stem)
def test_check_passes_on_every_scenario_at_its_quick_cut(path: Path) -> None:
    # The quick overrides keep the whole set under ~10 s; the checks run in release.
    plan = make_plan(load_validated(path), quick=True)
    result = dcnsim.run(path, plan.points[0].overrides, check=True)
    assert result.stopped is None


def _with_fault(fault: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``dcnsim ARGS`` with the engine's fault injection ``DCNSIM_FAULT`` (base/alloc.rs)."""
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    env.update(CI="true", DCNSIM_FAULT=fault)
    proc = subprocess.run([sys.executable, "-m", "dcnsim", *args], check=False,
                          capture_output=True, text=True, env=env, timeout=600)
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc


def test_a_refused_allocation_is_a_one_line_error_naming_the_key(tmp_path: Path) -> None:
    # Every input-sized allocation (base::alloc) above 100 bytes is refused as if the
    # allocator had no memory: the run ends with exit 2, one line naming the key to lower,
    # not an abort; the output folder made for it is removed again.
    out = tmp_path / "run"
    proc = _with_fault("alloc-above=100", "run", FIG08, "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    # The first such allocation is the star's nodes, reserved by its builder (10 nodes);
    # the size follows the struct sizes, the rest is exact.
    line = proc.stderr.strip()
    assert re.fullmatch(
        re.escape(f"dcnsim: error: {FIG08}: line 13, field topology.servers: out of memory: "
                  "cannot allocate ") + r"\d+\.\d kB" + re.escape(
                      " for the nodes: lower topology.servers"), line), line
    assert not out.exists()


def test_an_engine_panic_is_one_line_naming_the_scenario(tmp_path: Path) -> None:
    # The EngineError path end to end: a panic inside the engine (injected) is caught at
    # the binding and reported as a bug in one line naming the scenario, exit 1.
    proc = _with_fault("panic", "run", FIG08, "--out", str(tmp_path / "run"))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip() == (
        f"dcnsim: error: internal error EngineError: {FIG08}: internal engine error: fault "
        "injected by DCNSIM_FAULT=panic (this is a bug; please report it; DCNSIM_DEBUG=1 "
        "shows the traceback)")
    assert not (tmp_path / "run").exists()
    # A sweep meets it when it checks the points (the engine's check builds each one),
    # before its folder is made.
    proc = _with_fault("panic", "sweep", FIG08, "--quick", "--out", str(tmp_path / "sweep"))
    assert proc.returncode == 1, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert f"EngineError: {FIG08}: internal engine error: fault injected" in proc.stderr
    assert not (tmp_path / "sweep").exists()


# A 99 998-server star: about 0.6 GB of address space for the whole `dcnsim run`.
BIG_STAR = """
[sim]
duration = "1ms"
[topology]
kind = "star"
servers = 99998
link_rate = "10Gbps"
link_delay = "1us"
switch_buffer = "1MiB"
[[apps]]
kind = "incast"
sru = "64KiB"
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as on Linux")
@pytest.mark.parametrize("limit_mb", [250, 350, 450, 460, 470, 520, 580, 700])
def test_a_real_address_space_limit_gives_an_answer_not_an_abort(tmp_path: Path,
                                                                 limit_mb: int) -> None:
    # `ulimit -v` below what the run needs: wherever the refusal lands (before the run,
    # while building, in the run, in the Parquet writer), the answer is one line and exit
    # 1 or 2, never a signal (before the emergency reserve: SIGABRT at 300-450 MB, a
    # segfault in pyarrow at 400-600 MB); what was computed is written.
    import resource

    scenario = tmp_path / "big.toml"
    scenario.write_text(BIG_STAR)
    out = tmp_path / "out"

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, limit_mb << 20))

    env = {**os.environ, "CI": "true"}
    proc = subprocess.run([sys.executable, "-m", "dcnsim", "run", str(scenario), "--out",
                           str(out)], capture_output=True, text=True, env=env, timeout=300,
                          preexec_fn=limit, check=False)
    assert proc.returncode in (0, 1, 2), (proc.returncode, proc.stderr[-2000:])
    if proc.returncode:
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dcnsim: error: "), proc.stderr
        # an allocation refused, or the estimate over what the limit leaves
        assert "out of memory" in lines[0] or "(--max-memory, ulimit -v)" in lines[0], lines[0]
    if proc.returncode != 2:  # the run ran: its tables are written
        assert (out / "summary.csv").is_file() and (out / "run.json").is_file()

"""End-to-end tests against the real compiled engine (always installed in CI)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing
import pytest

from .conftest import REPO, SCENARIOS


def dcnsim_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CI": "true"}
    proc = subprocess.run([sys.executable, "-m", "dcnsim", *args], check=False,
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_scenario_validates(path: Path) -> None:
    proc = dcnsim_cli("validate", str(path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"ok: {path}"


def test_run_fig08_short(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = dcnsim_cli("run", str(SCENARIOS / "devkota-fig08.toml"), "--set", 'sim.duration="0.5s"',
                      "--set", "topology.servers=4", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    with (out / "summary.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 1
    assert rows[0]["servers"] == "4"
    assert 100 <= float(rows[0]["goodput_mbps"]) <= 973
    assert (out / "flows.csv").exists() and (out / "ports.csv").exists()


def test_reproduce_fig08_quick_is_deterministic(tmp_path: Path) -> None:
    first = dcnsim_cli("reproduce", "devkota-fig08", "--quick", "--out", str(tmp_path / "a"))
    assert first.returncode == 0, first.stderr
    target = tmp_path / "a" / "devkota-fig08-quick"
    results = target / "results.csv"
    with results.open() as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        rows = list(reader)
    for column in ("buffer_bytes", "flows", "goodput_mbps", "timeouts", "drops", "silent_s",
                   "rounds"):
        assert column in header
    assert "wall_s" not in header and "events" not in header
    assert len(rows) == 4 * 4
    assert (target / "devkota-fig08.png").stat().st_size > 0
    assert "Silent periods" in first.stdout

    again = dcnsim_cli("reproduce", "devkota-fig08", "--quick", "--fresh", "--jobs", "1",
                       "--out", str(tmp_path / "b"))
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "b" / "devkota-fig08-quick" / "results.csv").read_bytes() == \
        results.read_bytes()
    # a resumed run reads the points back from runs.jsonl and writes the same bytes
    resumed = dcnsim_cli("reproduce", "devkota-fig08", "--quick", "--out", str(tmp_path / "a"))
    assert resumed.returncode == 0 and "16 already done" in resumed.stderr
    assert results.read_bytes() == \
        (tmp_path / "b" / "devkota-fig08-quick" / "results.csv").read_bytes()


def test_bad_link_rate_is_a_clean_error(tmp_path: Path) -> None:
    text = (SCENARIOS / "devkota-fig08.toml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('link_rate = "1Gbps"', 'link_rate = "10Gbs"'), encoding="utf-8")
    proc = dcnsim_cli("validate", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.startswith("dcnsim: error: ")
    assert "topology.link_rate" in proc.stderr and str(bad) in proc.stderr


def test_bad_set_value_is_a_clean_error(tmp_path: Path) -> None:
    proc = dcnsim_cli("run", str(SCENARIOS / "devkota-fig08.toml"), "--set",
                      "topology.servers=lots", "--out", str(tmp_path / "x"))
    assert proc.returncode == 2
    assert "topology.servers" in proc.stderr


def _quick_grid(tmp_path: Path, exp_id: str) -> dict[tuple[int, int], dict[str, str]]:
    proc = dcnsim_cli("reproduce", exp_id, "--quick", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    with (tmp_path / f"{exp_id}-quick" / "results.csv").open() as fh:
        return {(int(r["buffer_bytes"]), int(r["flows"])): r for r in csv.DictReader(fh)}


PAYLOAD_SHARE_MBPS = 1000 * 1460 / 1500  # goodput above this on a 1 Gb/s link is a bug


def test_fig08_quick_shape(tmp_path: Path) -> None:
    """Devkota 2010 Fig. 8 shape (2 s per point): full rate with one flow, collapse with many."""
    grid = _quick_grid(tmp_path, "devkota-fig08")
    kib = 1024
    for (buf, n), row in grid.items():
        g = float(row["goodput_mbps"])
        assert g <= PAYLOAD_SHARE_MBPS, (buf, n, g)
        if n == 1:
            assert g >= 0.9 * 1000, (buf, g)
        if n == 64:
            assert g < 0.5 * 1000, (buf, g)
        if buf == 32 * kib and n >= 8:
            assert g < 0.5 * 1000 and int(row["timeouts"]) > 0, (n, g)
    # collapse moves to more flows with more buffer (thesis: 32 KB from 8, 256 KB from 32)
    assert float(grid[(256 * kib, 16)]["goodput_mbps"]) > 900
    # Table I: 16 of 20 s silent at 32 KB and 16 flows, so at most ~4/20 of the payload
    # rate (~195 Mb/s); 250 leaves room for the 2 s quick run.
    assert float(grid[(32 * kib, 16)]["goodput_mbps"]) < 250


def test_fig09_quick_shape(tmp_path: Path) -> None:
    """Devkota 2010 Fig. 9: a 10 ms min RTO keeps goodput high where 200 ms collapses."""
    grid = _quick_grid(tmp_path, "devkota-fig09")
    kib = 1024
    for row in grid.values():
        assert float(row["goodput_mbps"]) <= PAYLOAD_SHARE_MBPS
    assert float(grid[(256 * kib, 16)]["goodput_mbps"]) >= 800
    assert float(grid[(128 * kib, 16)]["goodput_mbps"]) >= 800
    assert float(grid[(32 * kib, 16)]["goodput_mbps"]) >= 0.4 * 1000
    assert float(grid[(32 * kib, 4)]["goodput_mbps"]) >= 0.4 * 1000


PANELS_SCENARIO = """
[meta]
id = "panels-demo"
[sim]
duration = "50ms"
[topology]
kind = "star"
servers = 4
link_rate = "1Gbps"
link_delay = "25us"
switch_buffer = "64KiB"
[[apps]]
kind = "incast"
sru = "256KB"
[measure]
queue_ports = ["sw->client"]
queue_interval = "100us"
cwnd_flows = [0, 1]
cwnd_interval = "100us"
[sweep]
"topology.servers" = [2, 4]
[report]
kind = "panels"
tables = ["queue", "cwnd"]
[[report.panels]]
table = "queue"
y = ["bytes"]
[[report.panels]]
table = "cwnd"
y = ["cwnd_bytes"]
where = { flow = 0 }
[[report.numbers]]
label = "max queue"
table = "queue"
column = "bytes"
stat = "max"
"""


def test_panels_report_keeps_tables_and_plots(tmp_path: Path) -> None:
    scn = tmp_path / "panels-demo.toml"
    scn.write_text(PANELS_SCENARIO, encoding="utf-8")
    proc = dcnsim_cli("sweep", str(scn), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    target = tmp_path / "out" / "panels-demo"
    assert (target / "panels-demo.png").stat().st_size > 0
    for index in ("0000", "0001"):
        with (target / "points" / index / "queue.csv").open() as fh:
            rows = list(csv.DictReader(fh))
        assert len(rows) == 501  # samples at 0, 100 us, ..., 50 ms
        assert max(int(r["bytes"]) for r in rows) <= 65536
    assert "max queue" in proc.stdout
    bad = PANELS_SCENARIO.replace('table = "cwnd"\ny', 'table = "flows"\ny')
    scn.write_text(bad, encoding="utf-8")
    proc = dcnsim_cli("validate", str(scn))
    assert proc.returncode == 2 and "not in report.tables" in proc.stderr


@pytest.mark.parametrize("exp_id", ["devkota-fig21", "devkota-fig22"])
def test_fair_schedulers_give_little_gain_quick_shape(tmp_path: Path, exp_id: str) -> None:
    """Devkota 2010 Figs 21/22: SFQ or DRR at the switch do not prevent incast collapse with a
    small buffer; a 2 MiB buffer holds 64 flows (the thesis: SFQ needs 1 MB, DRR 2 MB)."""
    grid = _quick_grid(tmp_path, exp_id)
    kib = 1024
    for row in grid.values():
        assert float(row["goodput_mbps"]) <= PAYLOAD_SHARE_MBPS
    assert float(grid[(32 * kib, 16)]["goodput_mbps"]) < 0.5 * 1000
    assert float(grid[(32 * kib, 64)]["goodput_mbps"]) < 0.5 * 1000
    assert float(grid[(2048 * kib, 64)]["goodput_mbps"]) >= 0.9 * 1000
    assert int(grid[(2048 * kib, 64)]["timeouts"]) == 0


def test_sfq_hard_partition_quick_shape(tmp_path: Path) -> None:
    """Devkota 2010 Fig 23: a hard per-flow partition Q/n collapses with small buffers and
    needs a large one (the thesis: 2 MB for 64 flows)."""
    grid = _quick_grid(tmp_path, "devkota-fig23")
    kib = 1024
    assert float(grid[(32 * kib, 16)]["goodput_mbps"]) < 0.5 * 1000
    # 64 flows carried without collapse at 2 MB (the thesis's buffer for the hard partition)
    assert float(grid[(2048 * kib, 64)]["goodput_mbps"]) > 0.9 * 1000


def test_identical_runs_give_identical_tables_and_time_goes_to_run_json(tmp_path: Path) -> None:
    import json

    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        proc = dcnsim_cli("run", str(SCENARIOS / "devkota-fig08.toml"), "--set",
                          'sim.duration="0.2s"', "--set", "topology.servers=4", "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        outs.append(out)
    for table in sorted(p.name for p in outs[0].glob("*.csv")):
        assert (outs[0] / table).read_bytes() == (outs[1] / table).read_bytes(), table
    meta = json.loads((outs[0] / "run.json").read_text())
    assert meta["wall_s"] > 0 and meta["overrides"]["topology.servers"] == 4
    assert len(meta["scenario_sha256"]) == 64
    assert "wall_s" not in (outs[0] / "summary.csv").read_text()


def _doc_tables(heading: str) -> list[list[str]]:
    """The rows of the markdown table that starts with ``heading`` in docs/design.md, each
    cell as the backquoted names in it."""
    import re

    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    rows = []
    for line in text[text.index(heading):].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([" ".join(re.findall(r"`([^`]+)`", cell)) for cell in line.split("|")[1:-1]])
    return rows


def test_store_schema_is_the_documented_one(tmp_path: Path) -> None:
    import dcnsim

    out = tmp_path / "run"
    proc = dcnsim_cli("run", str(SCENARIOS / "devkota-fig08.toml"), "--set", 'sim.duration="0.2s"',
                      "--set", "topology.servers=4", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    tables = dcnsim.open(out)
    params = [row[0] for row in _doc_tables("| column | type | meaning |")]
    assert params == ["point_id", "point_index", "quick", "seed", "scenario_sha256",
                      "<dotted.key>", "experiment"]
    documented = {row[0]: row[2].split()
                  for row in _doc_tables("| table | rows | engine columns |")}
    assert sorted(documented) == sorted(tables)
    for name, frame in tables.items():
        own = documented[name]
        expected = own + [p for p in params[:5] if p not in own] + [
            "sim.duration", "topology.servers", "experiment"]
        assert list(frame.columns) == expected, name
        csv_header = (out / f"{name}.csv").read_text().splitlines()[0].split(",")
        assert csv_header == own, name  # the engine's columns, as in the CSV file
    assert tables["summary"]["point_id"][0] == json.loads((out / "run.json").read_text())[
        "point_id"]

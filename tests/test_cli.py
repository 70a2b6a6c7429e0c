"""The command line's behaviour and error paths, against the fake engine."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import dcnsim
import dcnsim._native
import pytest
from dcnsim.cli import main

from .conftest import FakeCore

Capture = pytest.CaptureFixture[str]


def _run(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_help(capsys: Capture) -> None:
    code, out, _ = _run(capsys, "--help")
    assert code == 0
    for command in ("run", "sweep", "reproduce", "validate", "schema", "bench"):
        assert command in out


def test_no_command_is_an_error(capsys: Capture) -> None:
    code, _, err = _run(capsys)
    assert code == 2 and "usage" in err


def test_missing_file(fake_core: FakeCore, capsys: Capture, tmp_path: Path) -> None:
    for command in ("run", "sweep", "validate"):
        code, _, err = _run(capsys, command, str(tmp_path / "nope.toml"))
        assert code == 2
        assert err.startswith("dcnsim: error: scenario file") and "does not exist" in err


def test_directory_instead_of_file(fake_core: FakeCore, capsys: Capture, tmp_path: Path) -> None:
    code, _, err = _run(capsys, "validate", str(tmp_path))
    assert code == 2 and "is a directory" in err


def test_not_utf8(fake_core: FakeCore, capsys: Capture, tmp_path: Path) -> None:
    path = tmp_path / "bin.toml"
    path.write_bytes(b"\xff\xfe[sim]\n")
    code, _, err = _run(capsys, "validate", str(path))
    assert code == 2 and "not UTF-8" in err


@pytest.mark.parametrize("arg", ["topology.servers", "=3", "a b=3", "x="])
def test_bad_set(fake_core: FakeCore, capsys: Capture, fig08: Path, arg: str) -> None:
    code, _, err = _run(capsys, "run", str(fig08), "--set", arg)
    assert code == 2 and "dcnsim: error: bad --set" in err


def test_bad_sweep_table(fake_core: FakeCore, capsys: Capture, fig08: Path) -> None:
    fig08.write_text(fig08.read_text().replace("[1, 2, 4, 8, 16, 32, 64]", "64"))
    for command in ("sweep", "validate"):
        code, _, err = _run(capsys, command, str(fig08))
        assert code == 2
        assert str(fig08) in err and 'sweep."topology.servers"' in err
        assert "expected a non-empty array" in err


def test_bad_sweep_value_names_point(fake_core: FakeCore, capsys: Capture, fig08: Path) -> None:
    fig08.write_text(fig08.read_text().replace('"128KiB"', '"128 kibibytes"'))
    code, _, err = _run(capsys, "sweep", str(fig08))
    assert code == 2 and "topology.switch_buffer" in err
    assert "sweep point topology.switch_buffer=128 kibibytes" in err


def test_toml_syntax_error(fake_core: FakeCore, capsys: Capture, tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("[sim]\nduration = \n")
    code, _, err = _run(capsys, "validate", str(path))
    assert code == 2 and str(path) in err


def test_unknown_id(fake_core: FakeCore, capsys: Capture) -> None:
    code, _, err = _run(capsys, "reproduce", "devkota-fig8")
    assert code == 2
    assert "unknown scenario id 'devkota-fig8'" in err and "devkota-fig08" in err


def test_reproduce_needs_id_or_list(fake_core: FakeCore, capsys: Capture) -> None:
    assert _run(capsys, "reproduce")[0] == 2
    assert _run(capsys, "reproduce", "devkota-fig08", "--list")[0] == 2


def test_list(capsys: Capture) -> None:
    code, out, _ = _run(capsys, "reproduce", "--list")
    assert code == 0
    assert "devkota-fig08" in out and "Fig. 8: TCP NewReno incast goodput" in out
    assert "devkota-fig09" in out and "bench-incast" in out


def test_bad_jobs(fake_core: FakeCore, capsys: Capture, fig08: Path) -> None:
    code, _, err = _run(capsys, "sweep", str(fig08), "--jobs", "0")
    assert code == 2 and "positive integer" in err


def test_validate_ok_and_bad(fake_core: FakeCore, capsys: Capture, fig08: Path) -> None:
    code, out, _ = _run(capsys, "validate", str(fig08))
    assert (code, out) == (0, f"ok: {fig08}\n")
    code, _, err = _run(capsys, "validate", str(fig08), "--set", "topology.link_rate=10Gbs")
    assert code == 2 and "topology.link_rate" in err


def test_run_writes_tables(fake_core: FakeCore, capsys: Capture, fig08: Path,
                           tmp_path: Path) -> None:
    out_dir = tmp_path / "one"
    code, out, _ = _run(capsys, "run", str(fig08), "--set", "sim.duration=0.5s",
                        "--set", "topology.servers=4", "--out", str(out_dir))
    assert code == 0
    assert fake_core.runs == [{"sim.duration": '"0.5s"', "topology.servers": "4"}]
    assert "goodput_mbps" in out
    assert sorted(p.name for p in out_dir.iterdir()) == ["flows.csv", "ports.csv", "run.json",
                                                         "store", "summary.csv"]
    meta = json.loads((out_dir / "run.json").read_text())
    assert meta["overrides"] == {"sim.duration": "0.5s", "topology.servers": 4}
    assert (meta["seed"], meta["events"], meta["engine"]) == (1, 4000, "fake-0.0")
    assert len(meta["scenario_sha256"]) == 64 and len(meta["point_id"]) == 16
    assert {"dcnsim", "git_commit", "wall_s", "host", "python", "platform"} <= set(meta)


def test_output_dir_not_writable(fake_core: FakeCore, capsys: Capture, fig08: Path,
                                 tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("in the way")
    for argv in (["run", str(fig08), "--out", str(blocker / "x")],
                 ["sweep", str(fig08), "--quick", "--out", str(blocker)]):
        code, _, err = _run(capsys, *argv)
        assert code == 2 and "cannot create output directory" in err


def test_sweep_and_resume(fake_core: FakeCore, capsys: Capture, fig08: Path,
                          tmp_path: Path) -> None:
    out = tmp_path / "res"
    code, stdout, err = _run(capsys, "sweep", str(fig08), "--quick", "--out", str(out))
    assert code == 0
    target = out / "devkota-fig08-quick"
    assert (target / "results.csv").exists() and (target / "devkota-fig08.png").exists()
    assert "Silent periods" in stdout and "16 points" in err
    assert "source figures printed below are those of the full-scale experiment" in err
    fake_core.runs.clear()
    code, _, err = _run(capsys, "sweep", str(fig08), "--quick", "--out", str(out))
    assert code == 0 and fake_core.runs == [] and "16 already done" in err


def test_report_kind_typo_and_fallback(fake_core: FakeCore, capsys: Capture, fig08: Path,
                                       tmp_path: Path) -> None:
    fig08.write_text(fig08.read_text().replace('kind = "incast-goodput"',
                                               'kind = "incast-goodputs"'))
    code, _, err = _run(capsys, "validate", str(fig08))
    assert code == 2 and "did you mean 'incast-goodput'" in err and "report.kind" in err
    fig08.write_text(fig08.read_text().replace('kind = "incast-goodputs"',
                                               'kind = "qcn-minrate"'))
    code, _, err = _run(capsys, "sweep", str(fig08), "--quick", "--out", str(tmp_path / "o"))
    assert code == 0 and "using the generic report" in err


def test_internal_error_is_one_line(fake_core: FakeCore, capsys: Capture, fig08: Path,
                                    tmp_path: Path) -> None:
    def explode(data: dict[str, object]) -> None:
        if data["topology"]["servers"] == 16:  # type: ignore[index]
            raise RuntimeError("boom\nsecond line")

    fake_core.on_run = explode
    out = tmp_path / "o"
    code, _, err = _run(capsys, "sweep", str(fig08), "--quick", "--jobs", "1", "--out", str(out))
    assert code == 1
    assert "this is a bug" in err and "RuntimeError: boom" in err and "second line" not in err
    assert "to resume, run: dcnsim sweep" in err
    assert (out / "devkota-fig08-quick" / "runs.jsonl").read_text().count("\n") >= 2


def test_missing_extension(monkeypatch: pytest.MonkeyPatch, capsys: Capture,
                           fig08: Path) -> None:
    monkeypatch.setattr(dcnsim._native, "_CORE", None)
    monkeypatch.setitem(sys.modules, "dcnsim._core", None)  # makes the import fail
    code, _, err = _run(capsys, "validate", str(fig08))
    assert code == 2 and "dcnsim._core" in err and "pip install -e ." in err
    with pytest.raises(ImportError, match="pip install"):
        dcnsim.run(fig08)


def test_schema_and_bench(fake_core: FakeCore, capsys: Capture) -> None:
    code, out, _ = _run(capsys, "schema")
    assert code == 0 and out.startswith("fake schema")
    code, out, _ = _run(capsys, "bench", "--quick")
    assert code == 0 and "events/s" in out and "incast 64 x 256KiB" in out
    assert {r["topology.servers"] for r in fake_core.runs} == {"8", "64"}
    assert all(r["sim.duration"] == '"2s"' for r in fake_core.runs)


def test_api_result(fake_core: FakeCore, fig08: Path, tmp_path: Path) -> None:
    res = dcnsim.run(fig08, {"topology.servers": 4, "topology.switch_buffer": "32KiB"})
    assert list(res.tables) == ["summary", "flows", "ports"]
    assert len(res.summary) == 1 and len(res.flows) == 4
    assert res.summary_row["servers"] == 4
    with pytest.raises(AttributeError, match="no table 'queue'"):
        _ = res.queue
    written = res.to_dir(tmp_path / "t")
    assert [p.name for p in written] == ["summary.csv", "flows.csv", "ports.csv", "run.json",
                                         "store"]
    assert dcnsim.ScenarioError is FakeCore.ScenarioError
    with pytest.raises(dcnsim.ScenarioError):
        dcnsim.validate(fig08, {"topology.servers": 0})


def test_schema_ends_with_the_tcp_profile_table() -> None:
    """`dcnsim schema` prints every profile's defaults, built from the engine's own table."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "dcnsim", "schema"], capture_output=True,
                         text=True, check=True).stdout
    table = out.split("tcp.profile defaults")[1].splitlines()
    head = next(line for line in table if line.strip().startswith("key "))
    assert head.split()[1:] == ["dcnsim", "rfc", "ns2", "ns3", "linux", "freebsd"]
    tick = next(line for line in table if line.strip().startswith("rtt_tick"))
    assert tick.split()[1:] == ["off", "off", "10ms", "off", "off", "off"]
    assert "not modelled:" in out

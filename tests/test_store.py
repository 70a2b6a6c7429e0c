"""The Parquet results store and its DuckDB queries, against the fake engine."""

from __future__ import annotations

import sys
from pathlib import Path

import dcnsim
import pytest
from dcnsim.cli import main

from .conftest import REPO, FakeCore

Capture = pytest.CaptureFixture[str]

SCENARIO = ('[sim]\nduration = "1s"\nseed = 3\n[topology]\nservers = 2\nswitch_buffer = "64KiB"\n'
            '[sweep]\n"topology.servers" = [2, 3, 40]\n'
            '[[sweep.variants]]\nlabel = "small"\n"topology.switch_buffer" = "32KiB"\n'
            '[[sweep.variants]]\nlabel = "big"\ntopology.switch_buffer = "256KiB"\n'
            '[report]\nkind = "generic"\n')


@pytest.fixture
def swept(fake_core: FakeCore, tmp_path: Path, capsys: Capture) -> tuple[Path, str]:
    """A generic sweep of 6 points: its folder and the table it printed."""
    path = tmp_path / "gen.toml"
    path.write_text(SCENARIO)
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 0
    return tmp_path / "out" / "gen", capsys.readouterr().out


def test_a_query_reproduces_the_printed_table(swept: tuple[Path, str], capsys: Capture) -> None:
    folder, printed = swept
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("servers"))
    header = lines[start].split()
    rows = [line.split() for line in lines[start + 1:start + 7]]
    # The printed table names the axes as people read them; the store by their fields.
    assert header[:2] == ["servers", "variant"] and "goodput_mbps" in header
    assert len(header) >= 4  # goodput, and the columns that move
    stored = ["topology.servers", "variants"] + header[2:]
    columns = ", ".join(f'"{c}"' for c in stored)
    assert main(["results", str(folder), "--query",
                 f"SELECT {columns} FROM summary ORDER BY point_index"]) == 0
    answer = capsys.readouterr().out.splitlines()
    assert answer[0].split() == stored
    assert [line.split() for line in answer[1:]] == rows


def test_store_layout_and_columns(swept: tuple[Path, str], capsys: Capture) -> None:
    folder, _ = swept
    files = sorted(p.relative_to(folder / "store").as_posix()
                   for p in (folder / "store").rglob("*.parquet"))
    assert len(files) == 3 * 6  # summary, flows, ports of every point
    assert files[0].startswith("flows/experiment=gen/0000-")
    assert main(["results", str(folder)]) == 0
    listing = capsys.readouterr().out
    assert "\nsummary (6 rows): id, seed, " in listing
    assert "flows (90 rows): flow, bytes, point_id, point_index, quick, seed, scenario_sha256, " \
        "topology.switch_buffer, topology.servers, variants, experiment\n" in listing
    assert main(["results", str(folder), "--csv", "--query",
                 'SELECT experiment, point_index, quick, seed, "topology.servers", variants, '
                 '"topology.switch_buffer", goodput_mbps FROM summary WHERE point_index = 5']) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("experiment,point_index,quick,seed,topology.servers,variants,"
                      "topology.switch_buffer,goodput_mbps")
    goodput = min(973.0, 973.0 * 262144 / (40 * 16384)) + 0.125  # the fake engine's model
    assert out[1] == f"gen,5,false,3,40,big,256KiB,{goodput!r}"


def test_open_gives_dataframes_in_grid_order(swept: tuple[Path, str]) -> None:
    folder, _ = swept
    tables = dcnsim.open(folder)
    assert sorted(tables) == ["flows", "ports", "summary"]
    summary = tables["summary"]
    assert list(summary["point_index"]) == list(range(6))
    assert list(summary["topology.servers"]) == [2, 2, 3, 3, 40, 40]
    assert summary["point_id"].nunique() == 6
    assert len(tables["flows"]) == 2 * (2 + 3 + 40)
    # the point ids are those of runs.jsonl
    import json

    lines = (folder / "runs.jsonl").read_text().splitlines()
    ids = {json.loads(line)["point_id"] for line in lines}
    assert set(summary["point_id"]) == ids
    # a folder of sweep folders is read as one store
    assert len(dcnsim.open(folder.parent)["summary"]) == 6


def test_dcnsim_run_writes_the_store(fake_core: FakeCore, fig08: Path, tmp_path: Path) -> None:
    res = dcnsim.run(fig08, {"topology.servers": 4})
    res.to_dir(tmp_path / "one")
    summary = dcnsim.open(tmp_path / "one")["summary"]
    assert len(summary) == 1
    row = summary.iloc[0]
    assert (row["experiment"], row["topology.servers"], row["servers"]) == ("devkota-fig08", 4, 4)
    assert row["goodput_mbps"] == res.summary_row["goodput_mbps"]
    assert row["point_id"] == res.metadata()["point_id"]


def test_store_errors_are_one_line(swept: tuple[Path, str], tmp_path: Path, capsys: Capture,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    folder, _ = swept
    assert main(["results", str(folder), "--query", "SELECT nope FROM summary"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dcnsim: error: query failed: ") and err.count("\n") == 1
    (tmp_path / "empty").mkdir()
    assert main(["results", str(tmp_path / "empty")]) == 2
    assert "no results store in" in capsys.readouterr().err
    with pytest.raises(dcnsim.UserError, match="polars is not installed: pip install polars"):
        monkeypatch.setitem(sys.modules, "polars", None)
        dcnsim.open(folder, polars=True)
    monkeypatch.setitem(sys.modules, "duckdb", None)
    assert main(["results", str(folder)]) == 2
    assert capsys.readouterr().err == ("dcnsim: error: reading the results store needs duckdb, "
                                       "which is not installed (a dependency of dcnsim: "
                                       "pip install duckdb)\n")


def test_without_pyarrow_runs_write_csv_and_say_so(fake_core: FakeCore, fig08: Path,
                                                    tmp_path: Path, capsys: Capture,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert main(["sweep", str(fig08), "--quick", "--out", str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err
    assert err.count("pyarrow is not installed") == 1 and "pip install pyarrow)" in err
    assert (tmp_path / "s" / "devkota-fig08-quick" / "results.csv").is_file()
    assert not (tmp_path / "s" / "devkota-fig08-quick" / "store").exists()
    assert main(["run", str(fig08), "--out", str(tmp_path / "r")]) == 0
    assert "pyarrow is not installed" in capsys.readouterr().err
    assert (tmp_path / "r" / "summary.csv").is_file()


@pytest.mark.parametrize("values", [
    [1.5, -0.0, 2.0, float("inf")],
    [3, -7, 1 << 62],
    [None, 4, None, None, 5, 6, 7, 8, None],
    [None, None],
    [],
    ["a", "", "élan", "sw->client"],
    [1, 2.5],          # not an engine column type: through pa.array
    [True, False],
    [-(1 << 63), (1 << 63) - 1],
])
def test_engine_columns_become_the_arrays_pa_array_makes(values: list) -> None:
    """The store builds Arrow arrays from buffers (pa.array would import pandas); they
    must be what pa.array gives: same type, values and nulls (a column of None only is
    int64, as the engine's optional-integer columns)."""
    pa = pytest.importorskip("pyarrow")
    from dcnsim.store import _engine_array

    want = pa.array(values)
    if want.type == pa.null():
        want = want.cast(pa.int64())
    got = _engine_array(pa, values)
    assert got.type == want.type
    assert got.equals(want)
    assert got.to_pylist() == values


@pytest.mark.parametrize("value", ["p-0003", "", 7, -1, 0.25, True, False])
@pytest.mark.parametrize("rows", [0, 1, 9])
def test_a_parameter_column_is_the_value_in_every_row(value: object, rows: int) -> None:
    pa = pytest.importorskip("pyarrow")
    from dcnsim.store import _repeated

    got = _repeated(pa, value, rows)
    want = pa.repeat(pa.scalar(value), rows)
    assert got.type == want.type
    assert got.equals(want)


def test_the_store_is_in_the_default_install() -> None:
    """`pip install .` brings pyarrow and DuckDB (the store is the embedded default
    a user expects after the README's first command); `dcnsim[store]` still installs."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {dep.split(">")[0].split("=")[0].split("[")[0].strip().lower()
             for dep in project["dependencies"]}
    assert {"pyarrow", "duckdb"} <= names
    assert "store" in project["optional-dependencies"]  # old install commands keep working
    for doc in ("README.md", "docs/api.md", "docs/design.md"):
        assert "[store]" not in (REPO / doc).read_text(), doc

"""Summaries that fit the experiment: ``[report] columns`` picks the printed summary
columns; without it the defaults follow what the scenario has (incast columns only with
an incast app, the CBR rate with a cbr app, marks when an AQM marks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import SCENARIOS, FakeCore

Capture = pytest.CaptureFixture[str]
BASE = ('[sim]\nduration = "1s"\n[topology]\nservers = 4\nswitch_buffer = "64KiB"\n'
        '[[apps]]\nkind = "incast"\n'
        '[sweep]\n"topology.servers" = [2, 8]\n')


def _sweep(tmp_path: Path, capsys: Capture, report: str) -> tuple[int, str, str]:
    from dcnsim.cli import main

    path = tmp_path / "cols.toml"
    path.write_text(BASE + report)
    code = main(["sweep", str(path), "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _header(out: str) -> list[str]:
    return next(line for line in out.splitlines() if line.startswith("servers")).split()


def test_report_columns_choose_the_printed_columns(fake_core: FakeCore, tmp_path: Path,
                                                   capsys: Capture) -> None:
    code, out, _ = _sweep(tmp_path, capsys, '[report]\ncolumns = ["drops", "rounds"]\n')
    assert code == 0
    assert _header(out) == ["servers", "drops", "rounds"]
    # results.csv keeps every column: the choice is of what is printed.
    assert "goodput_mbps" in (tmp_path / "out" / "cols" / "results.csv").read_text()


def test_an_unknown_report_column_is_one_line_naming_file_and_field(
        fake_core: FakeCore, tmp_path: Path, capsys: Capture) -> None:
    code, _, err = _sweep(tmp_path, capsys,
                          '[report]\ncolumns = ["drops", "goodput"]\n')
    assert code == 2
    assert err.count("\n") == 1
    assert str(tmp_path / "cols.toml") in err and "line 11" in err
    assert "field report.columns.1" in err
    assert "unknown summary column 'goodput'" in err and "goodput_mbps" in err


def test_report_columns_must_be_a_list_of_names(fake_core: FakeCore, tmp_path: Path,
                                                capsys: Capture) -> None:
    code, _, err = _sweep(tmp_path, capsys, '[report]\ncolumns = "drops"\n')
    assert code == 2 and "field report.columns" in err and "expected an array" in err


def _fit(ident: str) -> tuple[list[str], list[str]]:
    from dcnsim.reports.generic import fitting_columns
    from dcnsim.scenario import load

    return fitting_columns(load(SCENARIOS / f"{ident}.toml"))


def test_default_columns_follow_the_apps() -> None:
    usual, unfit = _fit("devkota-fig08")  # incast
    assert usual[0] == "goodput_mbps" and "silent_s" in usual and unfit == []
    usual, unfit = _fit("qcn-baseline1")  # CBR sources only
    assert usual[0] == "cbr_mbps"
    assert "goodput_mbps" in unfit and "silent_s" in unfit and "silent_s" not in usual
    usual, unfit = _fit("tcn-fig1")  # bulk TCP, no incast
    assert usual[0] == "goodput_mbps" and "silent_s" in unfit and "rounds" in unfit
    usual, _ = _fit("devkota-fig30")  # incast beside a CBR flow
    assert usual[:2] == ["goodput_mbps", "cbr_mbps"] and "silent_s" in usual
    usual, _ = _fit("tcn-fig6")  # a workload: its FCTs
    assert "fct_mean_s" in usual


def test_marks_are_shown_when_an_aqm_marks() -> None:
    from dcnsim.reports.generic import shown_columns

    metrics = ["goodput_mbps", "timeouts", "drops", "marks", "silent_s"]
    usual = ["goodput_mbps", "timeouts", "drops", "marks"]
    one = [{"goodput_mbps": 900.0, "timeouts": 0, "drops": 0, "marks": 120, "silent_s": 0.5}]
    assert shown_columns(metrics, one, usual=usual, unfit=["silent_s"]) == [
        "goodput_mbps", "marks"]
    quiet = [{**one[0], "marks": 0}]
    assert "marks" not in shown_columns(metrics, quiet, usual=usual, unfit=["silent_s"])
    # A column that does not fit is not shown even when it moves.
    two = [one[0], {**one[0], "silent_s": 0.7}]
    assert "silent_s" not in shown_columns(metrics, two, usual=usual, unfit=["silent_s"])


def test_every_shipped_report_columns_entry_is_known() -> None:
    """Every scenario loads (its [report] columns, if any, name known columns)."""
    from dcnsim.scenario import load

    for path in sorted(SCENARIOS.glob("*.toml")):
        load(path)

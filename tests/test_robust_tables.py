"""Robustness, "Python-owned tables" (docs/robustness.md): ``[report]``, ``[sweep]`` and ``[quick]``
are checked with the rigour of the engine's fields (``dcnsim._tablecheck``): every bad value is a
one-line error naming the file, the line when known, the dotted field and what was expected, never a
traceback. Run against the real engine on the shipped scenarios."""

from __future__ import annotations

import re
from pathlib import Path

import dcnsim
import dcnsim._core  # noqa: F401 -- fails loudly (not a skip) when the extension is missing
import pytest
from dcnsim.cli import main
from dcnsim.scenario import load

from .conftest import SCENARIOS


def _edit(name: str, table: str, line: str, *, drop: str | None = None) -> str:
    """The shipped scenario ``name`` with ``line`` added right under its ``[table]`` header
    (and the line matching ``drop`` in it removed)."""
    text = (SCENARIOS / f"{name}.toml").read_text()
    if drop is not None:
        text, n = re.subn(drop, "", text, count=1, flags=re.M)
        assert n == 1, drop
    head = re.search(rf"^\[\[?{re.escape(table)}\]\]?[^\n]*\n", text, flags=re.M)
    assert head is not None, table
    return text[:head.end()] + line + "\n" + text[head.end():]


def _error(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
           *sets: str) -> str:
    """Validate ``text`` with the command line: exit 2 and one line (the message after the
    file's path, which ``_error`` leaves out), at most 200 characters."""
    path = tmp_path / "s.toml"
    path.write_text(text)
    argv = ["validate", str(path)] + [a for s in sets for a in ("--set", s)]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    prefix = f"dcnsim: error: {path}"
    assert lines[0].startswith(prefix), lines[0]
    rest = lines[0].removeprefix(prefix)
    assert len(rest) <= 200, rest
    return rest


CASES = [
    # The crash of the issue: an array where tcn's figure name goes.
    ("tcn-fig1", "report", "figure = [1, 2]", r"^figure = .*\n",
     ": line 56, field report.figure: expected one of fig1, fig2, fig3, fig5, fct, got an "
     "array [1, 2]"),
    ("tcn-fig1", "report", 'figure = "fig9"', r"^figure = .*\n",
     ': line 56, field report.figure: expected one of fig1, fig2, fig3, fig5, fct, got a '
     'string "fig9"'),
    ("tcn-fig1", "report", "steady_after_s = nan", None,
     ": line 56, field report.steady_after_s: expected a finite number, got nan"),
    ("tcn-fig1", "report", "target_bps = -5e9", None,
     ": line 56, field report.target_bps: expected a positive number, got -5000000000.0"),
    ("tcn-fig1", "report", 'scheme_names = "TCN"', r"^scheme_names = .*\n",
     ': line 56, field report.scheme_names: expected an array, got a string "TCN"'),
    ("tcn-fig1", "report", "port = 5", None,
     ": line 56, field report.port: expected a non-empty name, got an integer 5"),
    ("devkota-fig08", "report", "ceiling_mbps = inf", None,
     ": line 47, field report.ceiling_mbps: expected a finite number, got inf"),
    ("devkota-fig08", "report", "ceiling_mbps = -1", None,
     ": line 47, field report.ceiling_mbps: expected a positive number, got -1"),
    ("devkota-fig08", "report", 'ceiling_mbps = "973"', None,
     ': line 47, field report.ceiling_mbps: expected a number, got a string "973"'),
    ("devkota-fig08", "report", "source_silent_table = { x = [1] }",
     r"^source_silent_table = .*\n",
     ": line 47, field report.source_silent_table.x: key 'x' is not a number of flows"),
    ("devkota-fig08", "report", "source_silent_table = { 2 = [1, inf] }",
     r"^source_silent_table = .*\n",
     ": line 47, field report.source_silent_table.2.1: expected a finite number, got inf"),
    # Source numbers: finite, never negative, not absurd (1e308 took the axis with it).
    ("devkota-fig08", "report", "source_silent_table = { 2 = [1, 1e308] }",
     r"^source_silent_table = .*\n",
     ": line 47, field report.source_silent_table.2.1: expected a number from 0 to 1e15, got "
     "1e+308"),
    ("devkota-fig08", "report", "source_silent_table = { 2 = [-3, 0] }",
     r"^source_silent_table = .*\n",
     ": line 47, field report.source_silent_table.2.0: expected a number from 0 to 1e15, got "
     "-3"),
    ("devkota-fig17", "report", "source_timeouts_per_flow = { 16 = -0.12 }",
     r"^source_timeouts_per_flow = .*\n",
     ": line 60, field report.source_timeouts_per_flow.16: expected a number from 0 to 1e15, "
     "got -0.12"),
    ("devkota-fig17", "report", "source_mean_queue_below_pkts = 2e15", None,
     ": line 60, field report.source_mean_queue_below_pkts: expected a number from 0 to 1e15, "
     "got 2000000000000000.0"),
    ("devkota-table6", "report.source", '"VIII other" = { 2 = 1e308 }', None,
     ': line 89, field report.source."VIII other".2: expected a number from 0 to 1e15, got '
     "1e+308"),
    ("devkota-table6", "report.source", '"VIII other" = -1', None,
     ': line 89, field report.source."VIII other": expected a number from 0 to 1e15 or '
     "expected a table, got an integer -1"),
    ("devkota-fig08", "report", "tables = [1]", None,
     ': line 47, field report.tables.0: expected a result table name such as "queue", got an '
     "integer 1"),
    ("devkota-fig08", "report", 'tables = ["../../etc"]', None,
     ': line 47, field report.tables.0: expected a result table name such as "queue", got a '
     'string "../../etc"'),
    ("devkota-fig08", "report", "title = 7", r'^title = "Fig.*\n',
     ": line 47, field report.title: expected a string, got an integer 7"),
    ("devkota-fig08", "report", f'title = "{"x" * 20_000}"', r'^title = "Fig.*\n',
     ": line 47, field report.title: a string of 20000 characters: at most 10000"),
    ("devkota-fig08", "report", "kind = [\"incast-goodput\"]", r'^kind = "incast-goodput"\n',
     ': line 47, field report.kind: expected a string, got an array ["incast-goodput"]'),
    # A key the kind does not read is accepted when well formed (`extra` below), refused
    # when not.
    ("devkota-fig08", "report", "extra = nan", None,
     ": line 47, field report.extra: expected a finite number, got nan"),
    ("devkota-fig08", "report", "extra = " + "[" * 20 + "1" + "]" * 20, None,
     ": line 47, field report.extra: nested more than 16 levels deep"),
    ("devkota-fig08", "report", f'"{"k" * 2_000_000}" = 1', None,
     f': field [report]: a key of 2000000 characters ("{"k" * 78}…): at most 200'),
    ("devkota-fig08", "report", f'extra = {{ "{"k" * 300}" = 1 }}', None,
     f': line 47, field report.extra: a key of 300 characters ("{"k" * 78}…): at most 200'),
    ("odctcp-fig4-1", "report.panels", 'style = 5', None,
     ": field report.panels.0.style: expected one of line, steps, points, got an integer 5"),
    ("odctcp-fig4-1", "report.numbers", 'stat = "median"', r'^stat = "sum"\n',
     ": field report.numbers.0.stat: expected one of mean, max, min, last, p99, sum, got a "
     'string "median"'),
    ("odctcp-fig4-1", "report.panels", 'scale = "2"', None,
     ': field report.panels.0.scale: expected a number, got a string "2"'),
    ("devkota-fig08", "sweep", '"sim.seed" = [1, nan]', None,
     ': line 39, field sweep."sim.seed": expected a finite number, got nan'),
    ("devkota-fig08", "sweep", '"sim.seed" = 1', None,
     ': line 39, field sweep."sim.seed": expected a non-empty array of values, got 1'),
    ("devkota-fig08", "sweep", '"sim.seed" = []', None,
     ': line 39, field sweep."sim.seed": expected a non-empty array of values, got []'),
    ("devkota-fig08", "sweep", f'"sim.{"s" * 300}" = [1]', None,
     ": field [sweep]: a field name of 304 characters "
     f'("sim.{"s" * 74}…): at most 200'),
    ("devkota-fig08", "sweep", '"sim seed" = [1]', None,
     ': line 39, field sweep.sim seed: expected a dotted field name such as topology.servers'),
    ("devkota-fig08", "quick", '"sim.seed" = -inf', None,
     ': line 43, field quick."sim.seed": expected a finite number, got -inf'),
    ("devkota-fig08", "quick", f'"sim.duration" = "{"9" * 2_000_000}"',
     r'^"sim.duration" = "2s"\n',
     ': line 43, field quick."sim.duration": a string of 2000000 characters: at most 10000'),
    ("devkota-fig08", "quick", '"report.kind" = "generic"', None,
     ': line 43, field quick."report.kind": cannot override the Python-owned table [report]'),
    ("qcn-baseline1", "quick", "sweep.variants = [[1]]", None,
     ": line 603, field quick.sweep.variants: no [[sweep.variants]] labelled [1]"),
]


@pytest.mark.parametrize(("name", "table", "line", "drop", "expected"), CASES,
                         ids=[f"{c[0]}:{c[2][:30]}" for c in CASES])
def test_a_bad_value_is_one_line_naming_the_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, table: str, line: str,
        drop: str | None, expected: str) -> None:
    assert _error(tmp_path, capsys, _edit(name, table, line, drop=drop)) == expected


def test_a_well_formed_key_the_kind_does_not_read_is_accepted(tmp_path: Path) -> None:
    text = _edit("devkota-fig08", "report", 'comment = "agrees"\nsource = { note = "p. 12" }')
    path = tmp_path / "s.toml"
    path.write_text(text)
    assert dcnsim.validate(path) == []


def test_a_sweep_axis_above_the_grid_cap_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = ", ".join(str(i) for i in range(200_000))
    line = _error(tmp_path, capsys, _edit("devkota-fig08", "sweep", f'"sim.seed" = [{values}]'))
    assert line == ': line 39, field sweep."sim.seed": 200000 values: at most 100000 per sweep'


@pytest.mark.parametrize(("sets", "expected"), [
    (["report.figure=[1,2]"], ", field report.figure: cannot override the Python-owned table "
                              "[report]; edit the scenario file instead"),
    (["sweep.x=[1]"], ", field sweep.x: cannot override the Python-owned table [sweep]; edit "
                      "the scenario file instead"),
])
def test_set_cannot_reach_a_python_table(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         sets: list[str], expected: str) -> None:
    text = (SCENARIOS / "tcn-fig1.toml").read_text()
    assert _error(tmp_path, capsys, text, *sets) == expected


def test_set_of_a_variant_that_is_not_a_label(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # An unhashable label: it used to end as "internal error TypeError: unhashable type".
    path = tmp_path / "s.toml"
    path.write_text((SCENARIOS / "qcn-baseline1.toml").read_text())
    code = main(["sweep", str(path), "--set", "variants=[1,2]", "--list-points"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == (f"dcnsim: error: {path}: field sweep.variants: no [[sweep.variants]] "
                           "labelled [1, 2]")


def test_nesting_deeper_than_python_can_parse(tmp_path: Path) -> None:
    # The engine refuses this first (its TOML parser has a recursion limit); the Python
    # side, which tomllib would crash with RecursionError, is checked on its own.
    path = tmp_path / "deep.toml"
    text = "[report]\nx = " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(dcnsim.ScenarioError,
                       match=r"deep.toml: TOML syntax error: arrays or tables nested too deep"):
        load(path, text)


def test_every_shipped_scenario_passes_the_table_checks() -> None:
    for path in sorted(SCENARIOS.glob("*.toml")):
        load(path)  # raises on a refused value

"""Sweep expansion, override spelling and resume, against the fake engine."""

from __future__ import annotations

import io
import json
import math
import re
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from dcnsim import _toml
from dcnsim.errors import UserError
from dcnsim.reports import ReportContext, parse, write_report
from dcnsim.runs import RUNS_FILE
from dcnsim.scenario import load, make_plan, overrides_key
from dcnsim.sweep import SweepInterrupted, run_sweep

from .conftest import FakeCore, FakeScenarioError

# ----------------------------------------------------------------------- TOML literals


@pytest.mark.parametrize("value, literal", [
    ("32KiB", '"32KiB"'), (16, "16"), (0.5, "0.5"), (True, "true"), (False, "false"),
    (1e20, "1e+20"), (math.inf, "inf"), ('a"b\\c\n', '"a\\"b\\\\c\\n"'),
    ([1, "x"], '[1, "x"]'), ({"a": 1, "b c": "d"}, '{a = 1, "b c" = "d"}'),
])
def test_to_toml(value: Any, literal: str) -> None:
    assert _toml.to_toml(value) == literal
    assert _toml.parse_value(literal) == value


@pytest.mark.parametrize("text, value", [
    ("16", 16), ('"0.5s"', "0.5s"), ("0.5s", "0.5s"), ("true", True), ("32KiB", "32KiB"),
    ("[1, 2]", [1, 2]), ("1\nx = 2", "1\nx = 2"), ("2.5", 2.5),
])
def test_parse_value_bare_words_are_strings(text: str, value: Any) -> None:
    assert _toml.parse_value(text) == value


def test_parse_sets_last_wins() -> None:
    sets = _toml.parse_sets(["topology.servers=4", "sim.duration=0.5s", "topology.servers=8"])
    assert sets == {"sim.duration": "0.5s", "topology.servers": 8}
    assert list(sets) == ["sim.duration", "topology.servers"]


@pytest.mark.parametrize("arg", ["servers", "=4", "a b=1", "topology..servers=1", "x="])
def test_parse_set_errors(arg: str) -> None:
    with pytest.raises(UserError, match="bad --set"):
        _toml.parse_set(arg)


# ---------------------------------------------------------------------------- expansion


def test_plan_grid_order(fake_core: FakeCore, fig08: Path) -> None:
    plan = make_plan(load(fig08))
    assert [key for key, _ in plan.axes] == ["topology.switch_buffer", "topology.servers"]
    assert len(plan.points) == 4 * 7
    assert plan.points[0].overrides == {"topology.switch_buffer": "32KiB", "topology.servers": 1}
    assert plan.points[1].overrides == {"topology.switch_buffer": "32KiB", "topology.servers": 2}
    assert plan.points[7].overrides == {"topology.switch_buffer": "64KiB", "topology.servers": 1}
    assert [p.index for p in plan.points] == list(range(28))


def test_plan_quick_and_sets(fake_core: FakeCore, fig08: Path) -> None:
    scn = load(fig08)
    quick = make_plan(scn, quick=True)
    assert len(quick.points) == 4 * 4
    assert quick.points[0].overrides == {"sim.duration": "2s",
                                         "topology.switch_buffer": "32KiB",
                                         "topology.servers": 1}
    assert [p.overrides["topology.servers"] for p in quick.points[:4]] == [1, 4, 16, 64]
    # --set wins over [quick], and pins an axis to one value.
    pinned = make_plan(scn, quick=True, sets={"sim.duration": "1s", "topology.servers": 8})
    assert len(pinned.points) == 4
    assert pinned.points[0].overrides == {"sim.duration": "1s",
                                          "topology.switch_buffer": "32KiB",
                                          "topology.servers": 8}


def test_plan_without_sweep_is_one_point(fake_core: FakeCore, tmp_path: Path) -> None:
    path = tmp_path / "one.toml"
    path.write_text('[sim]\nduration = "1s"\n[topology]\nservers = 2\nswitch_buffer = "64KiB"\n')
    plan = make_plan(load(path))
    assert len(plan.points) == 1 and plan.points[0].overrides == {}


def test_dotted_bare_keys_are_flattened(fake_core: FakeCore, tmp_path: Path) -> None:
    path = tmp_path / "bare.toml"
    path.write_text("[sweep]\ntopology.servers = [1, 2]\nsim.seed = [1, 2, 3]\n"
                    '[quick]\nsim.duration = "1s"\n')
    scn = load(path)
    assert scn.sweep == [("topology.servers", [1, 2]), ("sim.seed", [1, 2, 3])]
    assert scn.quick_overrides == {"sim.duration": "1s"}


@pytest.mark.parametrize("body, needle", [
    ('[sweep]\n"topology.servers" = 4\n', 'line 2, field sweep."topology.servers": expected a'),
    ('[sweep]\n"topology.servers" = []\n', 'sweep."topology.servers": expected a non-empty'),
    ('[sweep]\n"topology.servers" = [1, 1]\n', "value 1 appears twice"),
    ('sweep = 3\n', "field [sweep]: expected a table"),
    ('[sweep]\n"report.kind" = ["a"]\n', "Python-owned table [report]"),
    ('[sweep]\n"a b" = [1]\n', "expected a dotted field name"),
    ('[sweep]\nx = [1]\n[quick]\nsweep.y = [2]\n', 'quick.sweep.y: y is not an axis of [sweep]'),
    ('[quick]\nsweep = 4\n', "field quick.sweep: expected a table"),
    ("quick = [1]\n", "field [quick]: expected a table"),
    ('[report]\nkind = "incast-godput"\n', "did you mean 'incast-goodput'"),
    ("[report]\nkind = 3\n", "field report.kind: expected a string"),
    ('[report]\nkind = "incast-goodput"\nsource_silent_table = { x = [1] }\n',
     "key 'x' is not a number of flows"),
    ('[report]\nkind = "incast-goodput"\nsource_silent_table = { 2 = [1], 4 = [1, 2] }\n',
     "entry 4 has 2 values, others have 1"),
    ("[sim\n", "line 1, column 5: TOML syntax error"),
])
def test_bad_python_tables(fake_core: FakeCore, tmp_path: Path, body: str, needle: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(FakeScenarioError) as info:
        parse(load(path))  # [report] beyond its shape is checked by the report's kind
    assert str(path) in str(info.value)
    assert needle in str(info.value)


def test_report_table_is_parsed_once_into_a_frozen_config(fake_core: FakeCore,
                                                          fig08: Path) -> None:
    import dataclasses

    report = parse(load(fig08))
    assert report.kind.name == "incast-goodput" and report.note is None
    assert report.config.ceiling_mbps == 973.0
    assert report.config.source_silent[16][0] == 16  # flows = 16 row of Table I, 32 KiB
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.config.ceiling_mbps = 1.0


# -------------------------------------------------------------------------- run + resume


def _sweep(plan: Any, out: Path, **kw: Any) -> Any:
    return run_sweep(plan, out, jobs=kw.pop("jobs", 2), stream=io.StringIO(), **kw)


def _report(plan: Any, outcome: Any, out: Path) -> str:
    buf = io.StringIO()
    write_report(ReportContext(plan=plan, records=outcome.records, out_dir=out, out=buf))
    return buf.getvalue()


def test_sweep_writes_each_point_and_resumes(fake_core: FakeCore, fig08: Path,
                                              tmp_path: Path) -> None:
    plan = make_plan(load(fig08), quick=True)
    out = tmp_path / "out"
    first = _sweep(plan, out)
    assert (first.ran, first.reused) == (16, 0)
    lines = (out / RUNS_FILE).read_text().splitlines()
    assert len(lines) == 16
    rec = json.loads(lines[0])
    assert set(rec) >= {"overrides", "summary", "scenario_sha256"}
    assert "goodput_mbps" in rec["summary"]

    fake_core.runs.clear()
    again = _sweep(plan, out)
    assert (again.ran, again.reused) == (0, 16)
    assert fake_core.runs == []
    assert [r["overrides"] for r in again.records] == [p.overrides for p in plan.points]

    # Lose three points (and leave half a line, as a killed writer would): only they rerun.
    kept = lines[:5] + lines[8:]
    (out / RUNS_FILE).write_text("\n".join(kept) + '\n{"overrides": {"topolo')
    partial = _sweep(plan, out)
    assert (partial.ran, partial.reused) == (3, 13)
    assert len(fake_core.runs) == 3
    assert [r["overrides"] for r in partial.records] == [p.overrides for p in plan.points]
    assert all(json.loads(line) for line in (out / RUNS_FILE).read_text().splitlines()
               if "topolo\"" not in line and line.endswith("}"))

    fake_core.runs.clear()
    fresh = _sweep(plan, out, fresh=True)
    assert (fresh.ran, fresh.reused) == (16, 0)
    assert len(fake_core.runs) == 16


def test_changed_scenario_is_not_resumed(fake_core: FakeCore, fig08: Path,
                                         tmp_path: Path) -> None:
    out = tmp_path / "out"
    _sweep(make_plan(load(fig08), quick=True), out)
    fig08.write_text(fig08.read_text().replace("seed = 1", "seed = 2"))
    fake_core.runs.clear()
    outcome = _sweep(make_plan(load(fig08), quick=True), out)
    assert outcome.ran == 16 and len(fake_core.runs) == 16


def test_quick_and_full_points_differ(fake_core: FakeCore, fig08: Path) -> None:
    scn = load(fig08)
    full = {p.key() for p in make_plan(scn).points}
    quick = {p.key() for p in make_plan(scn, quick=True).points}
    assert not full & quick


def test_overrides_key_is_canonical() -> None:
    assert overrides_key({"a": 1, "b": "x"}) == overrides_key({"b": "x", "a": 1})
    assert overrides_key({"a": 1}) != overrides_key({"a": "1"})


def test_results_csv_is_deterministic(fake_core: FakeCore, fig08: Path, tmp_path: Path) -> None:
    plan = make_plan(load(fig08), quick=True)
    one, two = tmp_path / "one", tmp_path / "two"
    text = _report(plan, _sweep(plan, one, jobs=1), one)
    _report(plan, _sweep(plan, two, jobs=4), two)
    assert (one / "results.csv").read_bytes() == (two / "results.csv").read_bytes()
    # a resumed sweep (records read back from runs.jsonl) gives the same bytes
    _report(plan, _sweep(plan, two, jobs=4), two)
    assert (one / "results.csv").read_bytes() == (two / "results.csv").read_bytes()

    csv = (one / "results.csv").read_text().splitlines()
    header = csv[0].split(",")
    assert header[:7] == ["buffer_bytes", "flows", "goodput_mbps", "timeouts", "drops",
                          "silent_s", "rounds"]
    assert "wall_s" not in header and "events" not in header
    assert csv[1].startswith("32768,1,")
    assert len(csv) == 17
    assert (one / "devkota-fig08.png").stat().st_size > 1000
    assert "Goodput (Mb/s)" in text and "32KiB" in text and "256KiB" in text
    assert "Silent periods" in text and "ours (source)" in text
    assert "(16)" in text  # Table I value for 16 flows beside ours


def test_generic_report(fake_core: FakeCore, tmp_path: Path) -> None:
    path = tmp_path / "gen.toml"
    path.write_text('[sim]\nduration = "1s"\n[topology]\nservers = 2\nswitch_buffer = "64KiB"\n'
                    '[sweep]\n"topology.servers" = [2, 3]\n[report]\nkind = "qcn-minrate"\n')
    plan = make_plan(load(path))
    out = tmp_path / "out"
    text = _report(plan, _sweep(plan, out), out)
    rows = (out / "results.csv").read_text().splitlines()
    assert rows[0].startswith("topology.servers,id,seed,")
    assert [r.split(",")[0] for r in rows[1:]] == ["2", "3"]
    assert "goodput_mbps" in text


def test_interrupt_keeps_finished_points(fake_core: FakeCore, fig08: Path, tmp_path: Path,
                                         sigint_raises: None) -> None:
    main = threading.main_thread().ident
    assert main is not None
    count = {"n": 0}

    def on_run(data: dict[str, Any]) -> None:
        count["n"] += 1
        if count["n"] == 3:
            signal.pthread_kill(main, signal.SIGINT)
            time.sleep(0.3)  # let the main thread cancel the points not yet started

    fake_core.on_run = on_run
    plan = make_plan(load(fig08), quick=True)
    out = tmp_path / "out"
    with pytest.raises(SweepInterrupted) as info:
        _sweep(plan, out, jobs=1)
    done = info.value.done
    assert 3 <= done < 16
    # a Ctrl-C just after a line was written may write that point once more: harmless
    saved = {json.dumps(json.loads(line)["overrides"], sort_keys=True)
             for line in (out / RUNS_FILE).read_text().splitlines()}
    assert len(saved) == done

    fake_core.on_run = None
    fake_core.runs.clear()
    resumed = _sweep(plan, out)
    assert (resumed.ran, resumed.reused) == (16 - done, done)


# ------------------------------------------------------------------- [[sweep.variants]]

_VARIANTS = ('[sim]\nduration = "1s"\n[topology]\nservers = 2\nswitch_buffer = "64KiB"\n'
             '[sweep]\n"topology.servers" = [2, 3]\n'
             '[[sweep.variants]]\nlabel = "small"\n"topology.switch_buffer" = "32KiB"\n'
             '"sim.duration" = "0.5s"\n'
             '[[sweep.variants]]\nlabel = "big"\ntopology.switch_buffer = "256KiB"\n')


def test_variants_are_zipped_and_crossed(fake_core: FakeCore, tmp_path: Path) -> None:
    path = tmp_path / "var.toml"
    path.write_text(_VARIANTS + '[quick]\nsweep.variants = ["big"]\n')
    scn = load(path)
    assert scn.variants == {"small": {"topology.switch_buffer": "32KiB", "sim.duration": "0.5s"},
                            "big": {"topology.switch_buffer": "256KiB"}}
    plan = make_plan(scn)
    assert [p.axis_values for p in plan.points] == [
        {"topology.servers": 2, "variants": "small"}, {"topology.servers": 2, "variants": "big"},
        {"topology.servers": 3, "variants": "small"}, {"topology.servers": 3, "variants": "big"}]
    assert plan.points[0].overrides == {"topology.switch_buffer": "32KiB", "sim.duration": "0.5s",
                                        "topology.servers": 2}
    assert "variants" not in plan.points[1].overrides  # the label is not an engine field
    assert [p.axis_values["variants"] for p in make_plan(scn, quick=True).points] == ["big"] * 2
    pinned = make_plan(scn, sets={"variants": "small", "sim.duration": "2s"})
    assert [p.overrides["sim.duration"] for p in pinned.points] == ["2s", "2s"]  # sets win
    assert {p.overrides["topology.switch_buffer"] for p in pinned.points} == {"32KiB"}


def test_variants_generic_report_and_runs(fake_core: FakeCore, tmp_path: Path) -> None:
    path = tmp_path / "var.toml"
    path.write_text(_VARIANTS + '[report]\nkind = "generic"\n')
    plan = make_plan(load(path))
    out = tmp_path / "out"
    text = _report(plan, _sweep(plan, out), out)
    assert {tuple(sorted(r)) for r in fake_core.runs} == {
        ("sim.duration", "topology.servers", "topology.switch_buffer"),
        ("topology.servers", "topology.switch_buffer")}
    rows = (out / "results.csv").read_text().splitlines()
    assert rows[0].startswith("topology.servers,variants,")
    assert [r.split(",")[1] for r in rows[1:]] == ["small", "big", "small", "big"]
    assert "small" in text and "big" in text


@pytest.mark.parametrize("tail, needle", [
    ('[[sweep.variants]]\n"topology.servers" = 4\n', "variant 2: expected a non-empty string"),
    ('[[sweep.variants]]\nlabel = "big"\nsim.seed = 3\n', "label 'big' appears twice"),
    ('[[sweep.variants]]\nlabel = "b2"\ntopology.switch_buffer = "256KiB"\n',
     "variants 'big' and 'b2' set the same overrides"),
    ('[[sweep.variants]]\nlabel = "s"\n"topology.servers" = 4\n',
     "set by variant 's' and also a sweep axis"),
    ('[[sweep.variants]]\nlabel = "r"\n"report.kind" = "x"\n', "Python-owned table [report]"),
    ('[quick]\nsweep.variants = ["huge"]\n', "no [[sweep.variants]] labelled 'huge'"),
])
def test_bad_variants(fake_core: FakeCore, tmp_path: Path, tail: str, needle: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(_VARIANTS + tail)
    with pytest.raises(FakeScenarioError) as info:
        load(path)
    assert needle in str(info.value)


def test_bad_variants_table(fake_core: FakeCore, tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[sweep]\nvariants = [1, 2]\n')
    with pytest.raises(FakeScenarioError, match="expected \\[\\[sweep.variants\\]\\] tables"):
        load(path)
    path.write_text(_VARIANTS)
    with pytest.raises(FakeScenarioError, match="no \\[\\[sweep.variants\\]\\] labelled 'x'"):
        make_plan(load(path), sets={"variants": "x"})


def test_variant_of_prefers_the_most_specific(fake_core: FakeCore, tmp_path: Path) -> None:
    from dcnsim.scenario import variant_of

    path = tmp_path / "v.toml"
    path.write_text('[sim]\nduration = "1s"\n[[sweep.variants]]\nlabel = "a"\nsim.seed = 2\n'
                    '[[sweep.variants]]\nlabel = "ab"\nsim.seed = 2\n"topology.servers" = 3\n')
    scn = load(path)
    assert [variant_of(scn, p.overrides) for p in make_plan(scn).points] == ["a", "ab"]


def test_point_labels_never_show_raw_inline_tables() -> None:
    from dcnsim.scenario import LABEL_VALUE_CHARS, Point

    table = {"count": 2, "scheduler": "dwrr", "quanta": [1500, 1500], "marking": {"kind": "red"}}
    p = Point(index=0, overrides={}, axis_values={"topology.queues": table,
                                                   "topology.servers": 16})
    label = p.label()
    assert "{" not in label and "topology." not in label
    assert label.startswith("queues (count 2, scheduler dwrr")
    assert label.endswith("…), servers=16")
    value = label.split(", servers")[0].removeprefix("queues (").removesuffix(")")
    assert len(value) == LABEL_VALUE_CHARS


def test_printed_table_shows_the_columns_that_move() -> None:
    from dcnsim.reports.generic import shown_columns

    metrics = ["goodput_mbps", "timeouts", "drops", "events", "marks", "mean_queue_bytes"]
    # A RED sweep: goodput and drops equal at every point, marks and queue move.
    rows = [{"goodput_mbps": 940.0, "timeouts": 0, "drops": 0, "events": 10 + i,
             "marks": 100 * i, "mean_queue_bytes": 1000.0 * i} for i in range(6)]
    assert shown_columns(metrics, rows) == ["goodput_mbps", "marks", "mean_queue_bytes"]
    # An incast: the usual columns move and come first.
    rows = [{"goodput_mbps": 900.0 - i, "timeouts": i, "drops": i, "events": i, "marks": 0,
             "mean_queue_bytes": 5.0} for i in range(3)]
    assert shown_columns(metrics, rows) == ["goodput_mbps", "timeouts", "drops"]
    # Nothing moves: the usual columns.
    assert shown_columns(metrics, rows[:1]) == ["goodput_mbps", "timeouts", "drops"]


def test_shards_merge_into_the_whole_sweep(fake_core: FakeCore, fig08: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from dcnsim.cli import main

    whole = tmp_path / "whole"
    assert main(["sweep", str(fig08), "--quick", "--out", str(whole)]) == 0
    runs_whole = len(fake_core.runs)
    fake_core.runs.clear()
    for i in (1, 2, 3):
        assert main(["sweep", str(fig08), "--quick", "--shard", f"{i}/3",
                     "--out", str(tmp_path / f"s{i}")]) == 0
    assert len(fake_core.runs) == runs_whole, "every point ran once, in one of the shards"
    target = tmp_path / "merged" / "devkota-fig08-quick"
    assert main(["merge", str(target)] + [str(tmp_path / f"s{i}" / "devkota-fig08-quick")
                                          for i in (1, 2, 3)]) == 0
    fake_core.runs.clear()
    assert main(["sweep", str(fig08), "--quick", "--out", str(tmp_path / "merged")]) == 0
    assert fake_core.runs == [], "the merged folder holds every point"
    assert ((target / "results.csv").read_bytes()
            == (whole / "devkota-fig08-quick" / "results.csv").read_bytes())
    stored = sorted(p.relative_to(target).as_posix() for p in target.rglob("*.parquet"))
    assert len(stored) == 3 * runs_whole  # summary, flows, ports of every point, once
    assert stored == sorted(p.relative_to(whole / "devkota-fig08-quick").as_posix()
                            for p in (whole / "devkota-fig08-quick").rglob("*.parquet"))
    capsys.readouterr()
    assert main(["sweep", str(fig08), "--quick", "--list-points"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == runs_whole
    index, pid, label = lines[1].split("\t")
    assert index == "1" and len(pid) == 16 and label == "switch_buffer=32KiB, servers=4"


# --------------------------------------------------------------------------- provenance


def test_every_point_and_the_sweep_write_run_json(fake_core: FakeCore, fig08: Path,
                                                  tmp_path: Path) -> None:
    from dcnsim.provenance import git_commit

    plan = make_plan(load(fig08), quick=True)
    out = tmp_path / "out"
    _sweep(plan, out)
    records = {json.loads(line)["index"]: json.loads(line)
               for line in (out / RUNS_FILE).read_text().splitlines()}
    for point in plan.points:
        meta = json.loads((out / "points" / f"{point.index:04d}" / "run.json").read_text())
        rec = records[point.index]
        assert meta["point_id"] == rec["point_id"]
        assert meta["overrides"] == point.overrides == rec["overrides"]
        assert meta["scenario_sha256"] == plan.scenario.sha256
        assert meta["engine"] == "fake-0.0" and meta["git_commit"] == git_commit()
        assert meta["seed"] == 1 and meta["events"] == rec["summary"]["events"]
        assert meta["wall_s"] >= 0 and meta["host"] and meta["platform"]
    whole = json.loads((out / "run.json").read_text())
    assert (whole["status"], whole["points"], whole["ran"], whole["reused"]) == (
        "complete", 16, 16, 0)
    assert whole["events"] == sum(r["summary"]["events"] for r in records.values())
    assert whole["quick"] is True and whole["overrides"] == {"sim.duration": "2s"}
    assert whole["axes"]["topology.servers"] == [1, 4, 16, 64]

    _sweep(plan, out)  # resumed: nothing ran
    again = json.loads((out / "run.json").read_text())
    assert (again["ran"], again["reused"], again["events"]) == (0, 16, 0)


def test_git_commit_of_this_checkout() -> None:
    import subprocess

    from dcnsim import provenance

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(provenance.PACKAGE_DIR), *args],
                              capture_output=True, text=True, check=True).stdout.strip()

    commit = provenance.git_commit()
    try:
        top = Path(git("rev-parse", "--show-toplevel")).resolve()
        head = git("rev-parse", "HEAD")
    except (OSError, subprocess.CalledProcessError):
        # An installed copy outside any repository: the commit its extension was built from.
        assert commit == provenance.build_commit()
        return
    if top / "python" / "dcnsim" != provenance.PACKAGE_DIR:
        # Installed into site-packages that some other repository holds (pyenv's, say).
        assert commit == provenance.build_commit()
        return
    assert commit is not None and commit.removesuffix("+dirty") == head


def test_the_extension_records_the_commit_it_was_built_from() -> None:
    """`run.json` said `commit: unknown` for a package installed from a clone:
    `crates/dcnsim-py/build.rs` records the commit of the tree the extension is built from
    (skipped for an extension built outside a git checkout)."""
    import importlib
    import subprocess

    try:
        core = importlib.import_module("dcnsim._core")
    except ImportError:
        pytest.skip("the compiled extension is not built")
    commit, tree = core.build_commit(), core.build_tree()
    if commit is None or tree is None:
        pytest.skip("the extension was not built from a git checkout")
    assert re.fullmatch(r"[0-9a-f]{40,64}(\+dirty)?", commit), commit
    try:
        head = subprocess.run(["git", "-C", tree, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"the tree the extension was built from ({tree}) is gone")
    built = commit.removesuffix("+dirty")
    if built != head and subprocess.run(
            ["git", "-C", tree, "merge-base", "--is-ancestor", built, head]).returncode == 0:
        pytest.skip(f"{tree} has new commits since the extension was built at {built}: "
                    "rebuild it to check")
    assert built == head


def test_run_metadata_falls_back_to_the_build_commit(fake_core: FakeCore, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A package loaded from outside any checkout records the commit its extension was
    built from; None when that is not known either."""
    from dcnsim import provenance

    monkeypatch.setattr(provenance, "PACKAGE_DIR", tmp_path)  # no repository here
    provenance.git_commit.cache_clear()
    try:
        assert provenance.checkout_commit() is None
        assert provenance.git_commit() is None  # the fake engine records no build commit
        provenance.git_commit.cache_clear()
        monkeypatch.setattr(fake_core, "build_commit", lambda: "0123abcd+dirty", raising=False)
        meta = provenance.run_metadata(scenario="s.toml", scenario_sha256="0" * 64,
                                       engine="fake-0.0", overrides={}, summary={},
                                       wall_s=0.0)
        assert meta["git_commit"] == "0123abcd+dirty"
    finally:
        provenance.git_commit.cache_clear()


# ---------------------------------------------------------------------------- executors


def test_api_sweep_runs_on_the_callers_executor(fake_core: FakeCore, fig08: Path,
                                                 tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import dcnsim

    used: list[str] = []

    class Counting(ThreadPoolExecutor):
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
            used.append(fn.__name__)
            return super().submit(fn, *args, **kwargs)

    with Counting(max_workers=3) as pool:
        stream = io.StringIO()
        outcome = dcnsim.run_sweep(fig08, tmp_path / "api", quick=True, executor=pool,
                                   stream=stream)
        assert pool.submit(lambda: 7).result() == 7, "the caller's executor stays usable"
    assert (outcome.ran, len(outcome.records)) == (16, 16)
    assert used.count("run_point") == 16
    assert "running 16 on Counting" in stream.getvalue()
    meta = json.loads((tmp_path / "api" / "run.json").read_text())
    assert meta["executor"] == "Counting"
    local = tmp_path / "local"
    dcnsim.run_sweep(fig08, local, quick=True, jobs=1, stream=io.StringIO())
    assert (sorted((tmp_path / "api" / RUNS_FILE).read_text().splitlines())
            == sorted((local / RUNS_FILE).read_text().splitlines()))


def test_cluster_errors_are_one_line(fake_core: FakeCore, fig08: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    from dcnsim.cli import main

    base = ["sweep", str(fig08), "--quick", "--out", str(tmp_path)]
    assert main(base + ["--cluster", "tcp://127.0.0.1:1", "--jobs", "2"]) == 2
    assert "--jobs is for this machine's threads" in capsys.readouterr().err
    monkeypatch.setattr("dcnsim.executors.CONNECT_TIMEOUT_S", 0.5)
    assert main(base + ["--cluster", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dcnsim: error: cannot connect to the Dask scheduler at "
                          "tcp://127.0.0.1:1: ") and err.count("\n") == 1
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    assert main(base + ["--cluster", "tcp://127.0.0.1:1"]) == 2
    assert capsys.readouterr().err == ("dcnsim: error: --cluster needs distributed, which is not "
                                       "installed: pip install 'dcnsim[cluster]'\n")
    assert fake_core.runs == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_one_progress_bar_fed_by_any_executor(fake_core: FakeCore, fig08: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import dcnsim

    monkeypatch.delenv("CI")
    terminal = _Terminal()
    with ThreadPoolExecutor(max_workers=2) as pool:
        dcnsim.run_sweep(fig08, tmp_path / "a", quick=True, executor=pool, stream=terminal)
    bar = terminal.getvalue()
    assert bar.count("devkota-fig08:") >= 2 and bar.rstrip().endswith("run/s]")
    assert "16/16 [" in bar and "<00:00" in bar  # tqdm's elapsed<remaining
    assert "[1/16]" not in bar  # no log lines on a terminal

    # a log (not a terminal): a line per point at most every 2 s, with the ETA
    log = io.StringIO()
    (tmp_path / "a" / RUNS_FILE).write_text(
        "\n".join((tmp_path / "a" / RUNS_FILE).read_text().splitlines()[:4]) + "\n")
    dcnsim.run_sweep(fig08, tmp_path / "a", quick=True, jobs=1, stream=log)
    lines = [line for line in log.getvalue().splitlines() if line.startswith("[")]
    assert lines[0].startswith("[5/16] ") and re.search(r"; eta \d+:\d\d$", lines[0])
    assert lines[-1].startswith("[16/16] ") and "eta" not in lines[-1]

"""The ``slowdown`` report kind (``reports/slowdown.py``): FCT slowdown percentiles by
message size, one line per sweep point, on a small RoCE fat-tree run end to end, and its
pure helpers on hand-made numbers."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from dcnsim.cli import main
from dcnsim.reports.slowdown import SlowdownConfig, bin_labels, by_bin, percentile

SCENARIO = """
[meta]
id = "slowdown-test"
title = "RoCE fat-tree for the slowdown report"
[sim]
duration = "4ms"
seed = 2
[topology]
kind = "fattree"
k = 4
link_rate = "100Gbps"
link_delay = "1us"
switch_buffer = "4MB"
pause = { mode = "pfc", hi = "200KB", lo = "180KB" }
queues = { count = 2, scheduler = "sp", hosts = true, marking = { kind = "red", \
queue = "instantaneous", count = false, min_th = "5KB", max_th = "200KB", max_p = 0.01, \
gentle = false, on_queues = [1] } }
[[apps]]
kind = "workload"
pattern = "all-to-all"
workload = "alistorage2019-bytes"
load = 0.5
count = 150
connections = 64
transport = "roce"
[sweep]
"roce.cc" = ["none", "dcqcn"]
[report]
kind = "slowdown"
tables = ["completions"]
bins = [0, 4e3, 16e3, 2e6]
"""


def test_percentile_is_nearest_rank_and_bins_are_half_open() -> None:
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 99) == 5.0
    assert math.isnan(percentile([], 50))
    cfg = SlowdownConfig(bins=(0.0, 10.0, 100.0), percentiles=(50.0,))
    cols = {"bytes": [10, 11, 100, 101, 5], "slowdown": [1.0, 2.0, 3.0, 4.0, math.nan]}
    assert by_bin(cols, cfg) == [[1.0], [2.0, 3.0]]
    assert bin_labels((0.0, 10e3, 1e6, 2.5e9)) == ["0B-10KB", "10KB-1MB", "1MB-2.5GB"]


def test_the_report_prints_each_percentile_and_bin_and_draws_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "slowdown-test.toml"
    path.write_text(SCENARIO)
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("p")]
    # 3 percentiles x 3 bins, a column per congestion control.
    assert len(rows) == 9 and rows[0].split()[0] == "p50"
    assert "0B-4KB" in rows[0] and "16KB-2MB" in rows[2]
    done = next(line for line in out.splitlines() if line.startswith("messages with a"))
    assert [int(x) for x in done.split()[-2:]] == [150, 150]
    for row in rows:  # no message beats its ideal
        assert all(float(v) >= 1.0 for v in row.split()[-2:])
    png = tmp_path / "out" / "slowdown-test" / "slowdown-test.png"
    assert png.stat().st_size > 10_000


def test_a_slowdown_report_without_completions_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(SCENARIO.replace('tables = ["completions"]', 'tables = ["flows"]'))
    assert main(["validate", str(path)]) != 0
    assert 'needs "completions" in report.tables' in capsys.readouterr().err

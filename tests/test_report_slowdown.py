"""The ``slowdown`` report kind (``reports/slowdown.py``): FCT slowdown percentiles by
message size, one line per sweep point, on a small RoCE fat-tree run end to end, and its
pure helpers on hand-made numbers."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from dcnsim.cli import main
from dcnsim.reports._base import SourceSeries
from dcnsim.reports.slowdown import (
    Bucket,
    SlowdownConfig,
    beside_source,
    bin_labels,
    by_bin,
    by_quantile,
    percentile,
    size_label,
)

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


def test_size_quantile_buckets_follow_the_authors_analysis_script() -> None:
    # 10 messages of sizes 1..10 (given out of order), slowdowns 0.5 (counted as 1) .. 9;
    # buckets of 20 %: ranks [0, 2), [2, 4), ...; the p50 of a bucket of two is its second.
    sizes = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
    slows = [9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 0.5, math.nan]
    buckets = by_quantile({"bytes": sizes, "slowdown": slows}, 20)
    # nine messages with a slowdown: ranks 0..8, bucket i from floor(i*9/100) ...
    assert [b.start for b in buckets] == [0, 20, 40, 60, 80]
    assert [len(b.slowdowns) for b in buckets] == [1, 2, 2, 2, 2]
    assert buckets[0].slowdowns == (1.0,) and buckets[0].largest == 2.0
    assert buckets[1].slowdowns == (2.0, 3.0) and buckets[1].largest == 4.0
    assert buckets[1].percentile(50) == 3.0 and buckets[1].percentile(0) == 2.0
    assert buckets[4].percentile(99) == 9.0 and buckets[4].largest == 10.0
    assert math.isnan(Bucket(0, math.nan, ()).percentile(50))
    assert [size_label(v) for v in (324, 1000, 46_000, 10_000_000)] == ["324", "1K", "46K", "10M"]


def test_the_size_quantile_report_prints_buckets_and_writes_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "slowdown-test.toml"
    path.write_text(SCENARIO.replace("bins = [0, 4e3, 16e3, 2e6]",
                                     'x = "size-quantile"\nstep = 20\npercentiles = [99]'))
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("p99 ")]
    assert [r.split()[1] for r in rows] == ["0%", "20%", "40%", "60%", "80%"]
    assert all(float(v) >= 1.0 for r in rows for v in r.split()[-2:])
    lines = (tmp_path / "out" / "slowdown-test" / "results-quantiles.csv").read_text().splitlines()
    assert lines[0] == "point,bucket_start_pct,largest_bytes,messages,p99"
    assert len(lines) == 1 + 2 * 5  # two congestion controls, five buckets each
    assert sum(int(line.split(",")[3]) for line in lines[1:6]) == 150


@pytest.mark.parametrize("key, value, message", [
    ("x", '"quantile"', "expected one of 'bins', 'size-quantile'"),
    ("step", "3", "a whole percentage that divides 100"),
])
def test_bad_quantile_keys_get_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        key: str, value: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(SCENARIO.replace("bins = [0, 4e3, 16e3, 2e6]", f"{key} = {value}"))
    assert main(["validate", str(path)]) != 0
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_the_source_is_compared_with_the_median_of_nearby_buckets() -> None:
    # Buckets of 10 %: bucket k has the single slowdown k + 1 (bucket 4: an outlier, 50).
    pb = [Bucket(10 * k, float(k), (50.0 if k == 4 else float(k + 1),)) for k in range(10)]
    series = SourceSeries("hpcc (page)", "test", x=(0.0, 30.0, 95.0), y=(1.0, 4.0, 10.0))
    got = beside_source(series, 99, pb)
    # x 0: buckets 0..2 -> median 2; x 30: buckets 1..5 -> 2,3,4,50,6 -> 4; x 95: 7..9 -> 9.
    assert got == [(0.0, 1.0, 2.0), (30.0, 4.0, 4.0), (95.0, 10.0, 9.0)]


def test_the_quantile_report_prints_the_source_beside_its_point(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "slowdown-test.toml"
    path.write_text(SCENARIO.replace("bins = [0, 4e3, 16e3, 2e6]", '''x = "size-quantile"
step = 20
verdict = "no verdict"
verdict_note = "a test"
source_series = [
  { label = "cc=none (a curve)", provenance = "t", x = [0, 80], y = [1.0, 2.0], panel = 2 },
  { label = "other (no such point)", provenance = "test", x = [0], y = [1.0], panel = 2 },
]'''))
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "the source beside dcnsim" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("cc=none ")]
    assert [r[1:4] for r in rows] == [["p99", "0%", "1.0"], ["p99", "80%", "2.0"]]
    assert not any(line.startswith("other ") for line in out.splitlines())
    assert re.search(r"^p99: \d of 2 points within 25 % of the source \(ratios ", out, re.M)

"""docs/tutorial.md is run as written: its scenario files, its commands and its plotting
snippet, and what the text says about the results is checked against the tables."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

TUTORIAL = Path(__file__).resolve().parent.parent / "docs" / "tutorial.md"


RDMA = "\n# An RDMA fabric in ten minutes\n"


def blocks(lang: str, part: int = 0) -> list[str]:
    """The fenced code blocks in language ``lang``, in order, of the tutorial's first part
    (part 0: four DCTCP flows) or its second (part 1: the RDMA fabric)."""
    text = TUTORIAL.read_text().split(RDMA)[part]
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


def dcnsim(args: list[str], cwd: Path) -> str:
    """Run ``dcnsim ARGS`` the way the tutorial's shell blocks do; fail on a non-zero exit."""
    r = subprocess.run([sys.executable, "-m", "dcnsim", *args], cwd=cwd, capture_output=True,
                       text=True, env={**os.environ, "CI": "true"})
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    first, sweep = blocks("toml")
    (tmp_path / "first.toml").write_text(first)
    (tmp_path / "first-sweep.toml").write_text(first + "\n" + sweep)
    commands = [line.split()[1:] for b in blocks("sh") for line in b.splitlines()
                if line.startswith("dcnsim ")]
    assert [c[0] for c in commands] == ["validate", "run", "sweep"]
    outputs = [dcnsim(c, tmp_path) for c in commands]
    assert outputs[0].strip() == "ok: first.toml"

    # Section 4: the line minus headers (1460/1500 of 1 Gb/s), no drop.
    summary = pd.read_csv(tmp_path / "out/first/summary.csv").iloc[0]
    assert summary.goodput_mbps == pytest.approx(1000 * 1460 / 1500, rel=0.01)
    assert summary.drops == 0

    # Section 5: the snippet writes the plot; the queue sawtooth stays near K = 20, with
    # its top at K + N = 24 packets and an amplitude of about 7.5 (DCTCP's analysis).
    (plot,) = blocks("python")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    r = subprocess.run([sys.executable, "-c", plot], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out/first/queue.png").stat().st_size > 10_000
    q = pd.read_csv(tmp_path / "out/first/queue.csv")
    pkts = q[q.time_s > 0.05].bytes / 1500
    assert 24 - 2 * 7.5 <= pkts.min() and pkts.max() <= 24
    assert 16 <= pkts.mean() <= 24

    # Section 6: goodput stays at the line while the mean queue follows K.
    res = pd.read_csv(tmp_path / "out/sweep/first-sweep/results.csv")
    assert list(res.variants) == ["K = 5", "K = 20", "K = 65"]
    assert (res.goodput_mbps > 0.99 * 1000 * 1460 / 1500).all()
    # The sawtooth lies in [K + N - A, K + N], A = ½·√(2N(C·RTT + K)), C·RTT ≈ 8.3 packets
    # (1 Gb/s, 80 µs of propagation plus serialisation), N = 4.
    for k, mean in zip([5, 20, 65], res.mean_queue_pkts, strict=True):
        amplitude = 0.5 * (2 * 4 * (8.3 + k)) ** 0.5
        assert k + 4 - amplitude <= mean <= k + 4


def test_the_rdma_part_runs_as_written(tmp_path: Path) -> None:
    fabric, sweep = blocks("toml", 1)
    (tmp_path / "fabric.toml").write_text(fabric)
    (tmp_path / "fabric-sweep.toml").write_text(fabric + "\n" + sweep)
    commands = [line.split()[1:] for b in blocks("sh", 1) for line in b.splitlines()
                if line.startswith("dcnsim ")]
    assert [c[0] for c in commands] == ["run", "sweep"]
    for c in commands:
        dcnsim(c, tmp_path)

    # Section 2: lossless, every message done, no slowdown below 1, the summary's figures.
    summary = pd.read_csv(tmp_path / "out/fabric/summary.csv").iloc[0]
    assert summary.drops == 0 and summary.pause_sent > 0
    assert 490 <= summary.messages_done < 500
    assert 1.2 <= summary.slowdown_p50 <= 2.0 and 10 <= summary.slowdown_p99 <= 25
    c = pd.read_csv(tmp_path / "out/fabric/completions.csv")
    assert (c.slowdown >= 1 - 1e-9).all()

    # Section 3: the snippet prints and draws; small messages near their ideal.
    (snippet,) = blocks("python", 1)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    r = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out/fabric/slowdown.png").stat().st_size > 5_000
    small = c[c.bytes < 100e3].slowdown.median()
    assert 1.0 <= small <= 1.5

    # Section 4: DCQCN cuts the pauses ~25-fold and the small messages' tail ~5-fold, and
    # slows the large messages 2-3-fold.
    res = pd.read_csv(tmp_path / "out/sweep/fabric-sweep/results.csv").set_index("roce.cc")
    none, dcqcn = res.loc["none"], res.loc["dcqcn"]
    assert none.drops == 0 and dcqcn.drops == 0
    assert 10_000 <= none.pause_sent <= 20_000
    assert 15 <= none.pause_sent / dcqcn.pause_sent <= 40
    assert 3 <= none.fct_small_p99_s / dcqcn.fct_small_p99_s <= 8
    assert 2 <= dcqcn.fct_large_mean_s / none.fct_large_mean_s <= 3.5
    assert dcqcn.messages_done < 500 == none.messages_done

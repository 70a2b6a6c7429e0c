"""The fat-tree builder (docs/models.md §8) end to end: the reference point's scenario
(`benches/scenarios/fattree-k16.toml`) at k = 4 through `dcnsim run --check` and through
`benches/fattree.py`, the script that records the k = 16 point in docs/performance.md."""

from __future__ import annotations

import csv
import importlib.util
from collections import defaultdict
from pathlib import Path

import dcnsim._core  # noqa: F401 -- fails loudly when the extension is missing

from .test_integration import dcnsim_cli

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "benches" / "scenarios" / "fattree-k16.toml"
CUT = ["--set", "topology.k=4", "--set", "apps.0.count=600"]


def test_a_k4_fattree_delivers_every_message_and_spreads_over_the_uplinks(
        tmp_path: Path) -> None:
    proc = dcnsim_cli("run", str(SCENARIO), *CUT, "--check", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    with (tmp_path / "summary.csv").open() as fh:
        summary = next(csv.DictReader(fh))
    assert summary["servers"] == "16"
    assert summary["messages"] == summary["messages_done"] == "600"
    with (tmp_path / "ports.csv").open() as fh:
        ports = {r["port"]: int(r["tx_bytes"]) for r in csv.DictReader(fh)}
    # The switches' ports (the table leaves host NICs out): 16 towards hosts, and 16
    # edge-aggregation and 16 aggregation-core links in both directions.
    assert len(ports) == 16 + 2 * 32
    # ECMP: each edge switch sends upward on both of its aggregation links (k/2 = 2). A
    # broken group leaves one idle; a working one may still split bytes unevenly, as a few
    # web-search flows of several MB carry most of them (80/20 seen), hence 5 %.
    up: dict[str, list[int]] = defaultdict(list)
    for name, sent in ports.items():
        a, b = name.split("->")
        if a.startswith("edge") and b.startswith("agg"):
            up[a].append(sent)
    assert len(up) == 8 and all(len(v) == 2 for v in up.values())
    for edge, sent in up.items():
        assert min(sent) >= 0.05 * sum(sent) > 0, (edge, sent)


def test_the_benchmark_script_reports_the_run(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("fattree_bench",
                                                  REPO / "benches" / "fattree.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    got = bench.run(["topology.k=4", "apps.0.count=300"])
    assert got["messages"] == got["messages_done"] == 300
    assert got["flows"] > 0 and got["events"] > 0 and got["peak_rss_mib"] > 0
    assert got["events_per_wall_s"] == round(got["events"] / got["sim_wall_s"])

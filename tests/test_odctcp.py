"""The ODCTCP thesis reproductions: quick variants through dcnsim._core, checking
the published shape with stated tolerances."""

from __future__ import annotations

from pathlib import Path

from dcnsim import _core
from dcnsim.reports.odctcp import segments_after_cwr

SCN = Path(__file__).resolve().parent.parent / "python" / "dcnsim" / "scenarios"


def run(name: str, sets: list[tuple[str, str]] | None = None) -> dict:
    path = SCN / f"{name}.toml"
    return _core.run(path.read_text(), str(path), sets or [])


def mean_cwnd_segments_after(tables: dict, t0: float) -> float:
    c = tables["cwnd"]
    vals = [w for t, w in zip(c["time_s"], c["cwnd_bytes"], strict=True) if t >= t0]
    return sum(vals) / len(vals) / 1460


def test_fig5_1_dctcp_sender_stuck_at_two_segments_odctcp_larger() -> None:
    dur = [("sim.duration", '"4s"')]
    d = mean_cwnd_segments_after(run("odctcp-fig5-1", dur), 1.7)
    o = mean_cwnd_segments_after(run("odctcp-fig5-4", dur), 1.7)
    # Thesis: DCTCP sender + standard receiver at 2 segments from 1.7 s; ODCTCP larger.
    # dcnsim with FreeBSD's byte counting (abc_limit = 2) holds it at 3-4 segments
    # (docs/validation.md); ODCTCP's window is several times larger.
    assert d < 5.0
    assert o > 2.5 * d


def test_fig5_after_cwr_counts_are_measured() -> None:
    t = run("odctcp-fig5-6", [("sim.duration", '"3s"')])
    counts = segments_after_cwr(t["seq"], 1.0)
    assert counts, "CWR segments expected"
    assert all(c >= 1 for c in counts)


def test_seq_trace_off_costs_no_table() -> None:
    t = run("odctcp-incast", [("apps.0.size", '"10KB"'), ("sim.duration", '"0.5s"')])
    assert "seq" not in t and "throughput" not in t
    assert len(t["completions"]["flow"]) == 10


def test_queue_limit_in_packets_bounds_the_queue() -> None:
    t = run("odctcp-fig4-2", [("sim.duration", '"3s"'), ("topology.aqm.k", '"1000pkts"'),
                              ("tcp.ecn", "false"), ("tcp.cc", '"newreno"'),
                              ("tcp.receiver", '"none"')])
    q = max(t["queue"]["bytes"])
    # 20-packet dummynet queue of 1500-byte packets (the packet in service is not queued).
    assert q <= 20 * 1500
    assert t["summary"]["drops"][0] > 0


def test_incast_dctcp_keeps_srtt_low_at_800kb() -> None:
    sets = [("apps.0.size", '"800KB"'), ("sim.duration", '"1s"')]
    sack = run("odctcp-incast", sets + [("tcp.cc", '"sack"')])
    dctcp = run("odctcp-incast", sets + [("tcp.cc", '"dctcp"')])
    s_srtt = sum(sack["flows"]["srtt_s"]) / 10
    d_srtt = sum(dctcp["flows"]["srtt_s"]) / 10
    # Thesis Fig 7.5: SACK SRTT grows with size, DCTCP's stays low; ask for > 1.5x
    # (dcnsim gives ~2.0x with final SRTTs; see docs/validation.md).
    assert s_srtt > 1.5 * d_srtt


def test_fairness_odctcp_fair_mixed_less_fair() -> None:
    sets = [("sim.duration", '"1.5s"'), ("measure.fairness_after", '"0.5s"')]
    same = run("odctcp-fairness", sets)
    mixed = run("odctcp-fairness", sets + [("apps.1.tcp.cc", '"newreno"')])
    # Thesis: ODCTCP vs ODCTCP > 0.99; ODCTCP vs standard ECN 0.7 at 2 flows.
    assert same["summary"]["jain_index"][0] > 0.95
    assert mixed["summary"]["jain_index"][0] < same["summary"]["jain_index"][0] - 0.1


def test_size_bins_are_labelled_and_ordered_by_size() -> None:
    from dcnsim.reports.odctcp import _bin_label, _bin_labels

    bins = (1000, 10_000, 100_000, 1_000_000, 10_000_000)
    assert _bin_labels(bins) == ["1-10 KB", "10-100 KB", "100-1000 KB", "1000-10000 KB"]
    assert _bin_label(bins, 5_000_000) == "1000-10000 KB"
    assert _bin_label(bins, 999) is None
    # First seen in another order, the keys are sorted as the bins are.
    seen = ["1-10 KB", "1000-10000 KB", "100-1000 KB", "10-100 KB"]
    assert sorted(seen, key=_bin_labels(bins).index) == _bin_labels(bins)

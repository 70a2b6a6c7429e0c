"""The HPCC authors' ns-3 simulator's bench helpers that run without the simulator
(``benches/hpcc_ns3/run.py`` and ``compare.py``): the flow file, the configuration written
for each congestion control, and the reading of the simulator's FCT file."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benches" / "hpcc_ns3"


def _module(name: str):
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(f"hpcc_ns3_{name}", BENCH / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def run():
    return _module("run")


# FB_Hadoop's size CDF as the simulator's traffic generator reads it (size percent).
CDF = [(0, 0), (100, 1), (200, 2), (300, 5), (350, 15), (400, 20), (500, 30), (600, 40),
       (700, 50), (1000, 60), (2000, 67), (7000, 70), (30000, 72), (50000, 82), (80000, 87),
       (120000, 90), (300000, 95), (1000000, 97.5), (2000000, 99), (10000000, 100)]


def test_flow_file_round_trip_and_order(run, tmp_path):
    flows = run.make_flows(320, 0.3, 100, 500, CDF, seed=3)
    assert len(flows) == 500
    assert all(0 <= s < 320 and 0 <= d < 320 and s != d for s, d, _, _ in flows)
    assert [t for *_, t in flows] == sorted(t for *_, t in flows)
    assert all(1 <= size <= 10_000_000 for _, _, size, _ in flows)
    path = tmp_path / "flows.txt"
    path.write_text(run.flow_file_text(flows))
    lines = path.read_text().splitlines()
    assert lines[0] == "500"
    assert lines[1].split()[2:4] == ["3", "100"]      # pg 3, dport 100 as the generator
    back = run.read_flow_file(path)
    assert [(s, d, n) for s, d, n, _ in back] == [(s, d, n) for s, d, n, _ in flows]
    assert all(abs(a[3] - b[3]) < 1e-9 for a, b in zip(back, flows, strict=False))


def test_arrival_rate_gives_the_load(run):
    # 320 hosts at 30 % of 100 Gb/s with FB_Hadoop's mean: the arrivals of n flows span
    # about n · mean · 8 / (320 · 0.3 · 100e9) seconds.
    n = 4000
    flows = run.make_flows(320, 0.3, 100, n, CDF, seed=1)
    expect = n * run.cdf_mean(CDF) * 8 / (320 * 0.3 * 100e9)
    assert flows[-1][3] == pytest.approx(expect, rel=0.1)


def test_cdf_mean_and_draw(run):
    assert run.cdf_mean([(0, 0), (10, 50), (20, 100)]) == pytest.approx(10.0)
    rng = random.Random(0)
    draws = [run.cdf_draw([(0, 0), (10, 50), (20, 100)], rng) for _ in range(20000)]
    assert sum(draws) / len(draws) == pytest.approx(9.5, rel=0.03)   # int() truncates
    assert min(draws) >= 1


def test_config_values_per_cc_at_100g(run):
    hp, dq, tm = (run.cc_values(c, 100) for c in ("hp", "dcqcn", "timely"))
    assert (hp["mode"], hp["ai"], hp["int_multi"], hp["has_win"], hp["vwin"], hp["us"]) == \
        (3, 40, 4, 1, 1, 1)
    assert (dq["mode"], dq["ai"], dq["hai"], dq["has_win"], dq["t_inc"], dq["ack_prio"]) == \
        (1, 20, 200, 0, 300, 1)
    assert (tm["mode"], tm["ai"], tm["hai"], tm["has_win"]) == (7, 100, 500, 0)
    assert hp["kmin_map"] == "2 100000000000 400 400000000000 1600"
    assert hp["kmax_map"] == "2 100000000000 1600 400000000000 6400"
    assert hp["pmax_map"] == "2 100000000000 0.20 400000000000 0.20"
    assert hp["buffer_mb"] == 32
    dc = run.cc_values("dctcp", 100)
    assert dc["kmin_map"] == dc["kmax_map"] == "2 100000000000 300 400000000000 1200"
    with pytest.raises(SystemExit):
        run.cc_values("cubic", 100)


def test_config_text_has_every_key_of_the_simulators_run_py(run):
    text = run.config_text("dcqcn", 100, "/t/fat.txt", "/t/flow.txt", "/w", 0.5)
    keys = [line.split()[0] for line in text.splitlines()]
    expected = """ENABLE_QCN USE_DYNAMIC_PFC_THRESHOLD PACKET_PAYLOAD_SIZE TOPOLOGY_FILE FLOW_FILE
        TRACE_FILE TRACE_OUTPUT_FILE FCT_OUTPUT_FILE PFC_OUTPUT_FILE SIMULATOR_STOP_TIME CC_MODE
        ALPHA_RESUME_INTERVAL RATE_DECREASE_INTERVAL CLAMP_TARGET_RATE RP_TIMER EWMA_GAIN
        FAST_RECOVERY_TIMES RATE_AI RATE_HAI MIN_RATE DCTCP_RATE_AI ERROR_RATE_PER_LINK
        L2_CHUNK_SIZE L2_ACK_INTERVAL L2_BACK_TO_ZERO HAS_WIN GLOBAL_T VAR_WIN FAST_REACT
        U_TARGET MI_THRESH INT_MULTI MULTI_RATE SAMPLE_FEEDBACK PINT_LOG_BASE PINT_PROB
        RATE_BOUND ACK_HIGH_PRIO LINK_DOWN ENABLE_TRACE KMAX_MAP KMIN_MAP PMAX_MAP BUFFER_SIZE
        QLEN_MON_FILE QLEN_MON_START QLEN_MON_END""".split()
    assert keys == expected
    conf = dict(line.split(" ", 1) for line in text.splitlines())
    assert conf["CC_MODE"] == "1" and conf["RATE_AI"] == "20Mb/s" and conf["MIN_RATE"] == "1000Mb/s"
    assert conf["ENABLE_TRACE"] == "0"
    # the queue-length monitor would sample every port every 100 ns: it starts after the stop
    assert int(conf["QLEN_MON_START"]) > 0.5e9


def test_parse_fct_rows(run):
    # sip dip sport dport size start_ns fct_ns standalone_fct_ns; host 112 -> 11.0.112.1,
    # host 300 -> 11.1.44.1 (the simulator's node_id_to_ip)
    text = ("0b007001 0b012c01 10000 100 378 910 8108 8234\n"
            "0b012c01 0b007001 10001 100 2000000 5000 200000 100000\n"
            "garbage line\n")
    rows = run.parse_fct(text)
    assert [(r["src"], r["dst"]) for r in rows] == [(112, 300), (300, 112)]
    assert rows[0]["bytes"] == 378 and rows[0]["slowdown"] == pytest.approx(8108 / 8234)
    assert rows[1]["slowdown"] == pytest.approx(2.0)
    assert run.span_ms(rows) == pytest.approx((205000 - 910) / 1e6)


def test_compare_bins_are_the_slowdown_reports(run):
    cmp = _module("compare")
    slowdown = pytest.importorskip("dcnsim.reports.slowdown")
    assert cmp.BINS == slowdown.DEFAULT_BINS
    assert cmp.PERCENTILES == slowdown.DEFAULT_PERCENTILES
    vals = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert cmp.percentile(vals, 50) == slowdown.percentile(vals, 50) == 3.0
    assert cmp.by_bin([(10e3, 1.5), (10e3 + 1, 2.0), (5e6, 3.0)]) == [[1.5], [2.0], [], [3.0]]


def test_compare_dcnsim_overrides(run, tmp_path):
    cmp = _module("compare")
    f = tmp_path / "f.txt"
    assert cmp.dcnsim_overrides("hp", f) == [("apps.0.flows_file", str(f)),
                                            ("roce.cc", "hpcc-fork")]
    # with the scenario: its variant of that name, as the simulator's run.py per cc
    scn = REPO / "scenarios" / "hpcc-fattree.toml"
    dq = dict(cmp.dcnsim_overrides("dcqcn", f, scn))
    assert dq["roce.cc"] == "dcqcn-fork" and dq["roce.window"] == "none"
    assert 'per_rate = "100Gbps"' in dq["topology.queues.marking"]
    assert 'kind = "step"' in dict(cmp.dcnsim_overrides("dctcp", f, scn))["topology.queues.marking"]
    assert cmp.toml_value({"a": [1, 2.5], "b": True, "c": "x"}) == \
        '{ a = [1, 2.5], b = true, c = "x" }'


def test_fork_ideal_fct_matches_the_simulators_rows(run):
    cmp = _module("compare")
    # standalone FCTs the simulator wrote (fct.txt, last column) on mix/fat.txt at 100 Gb/s:
    # same pod, other ToR (4 links); same ToR (2 links); other pod (6 links)
    assert cmp.fork_ideal_ns(112, 105, 378) == pytest.approx(8234, abs=1)
    assert cmp.links(3, 15) == 2 and cmp.links(3, 16) == 4 and cmp.links(3, 64) == 6
    assert cmp.fork_ideal_ns(3, 15, 1000) == pytest.approx(4000 + 160 + 1048 * 8 / 100)
    assert cmp.fork_ideal_ns(0, 300, 2500) == pytest.approx(
        12000 + 160 + 4 * 20 + (2500 + 3 * 48) * 8 / 100)
    # dcnsim's FCT plus the ACK's way back, over that ideal, never below 1
    assert cmp.fork_def_slowdown(112, 105, 378, 1e-9, last_ack=False) == 1.0
    assert cmp.fork_def_slowdown(3, 15, 1000, 20e-6, last_ack=False) == pytest.approx(
        (20000 + 2000) / cmp.fork_ideal_ns(3, 15, 1000))
    assert cmp.fork_def_slowdown(3, 15, 1000, 20e-6, last_ack=True) == pytest.approx(
        20000 / cmp.fork_ideal_ns(3, 15, 1000))


def test_per_flow_matching(run):
    cmp = _module("compare")
    f = {"rows": [dict(src=0, dst=1, bytes=500, fct_ns=6000),
                  dict(src=0, dst=70, bytes=9000, fct_ns=20000),
                  dict(src=2, dst=3, bytes=7, fct_ns=1), dict(src=2, dst=3, bytes=7, fct_ns=2)]}
    d = {"rows": [dict(src=0, dst=1, bytes=500.0, fct_s=4e-6),
                  dict(src=0, dst=70, bytes=9000.0, fct_s=14e-6),
                  dict(src=2, dst=3, bytes=7.0, fct_s=1e-9)]}      # ambiguous: left out
    pf = cmp.per_flow(f, d)      # FCTs at delivery: the propagation back is added
    assert pf["matched"] == 2
    assert pf["ratio_p50"] == pytest.approx(1.0)   # 4 µs + 2 links, 14 µs + 6 links
    assert pf["pearson"] == pytest.approx(1.0)


def test_parse_pfc_and_paused_time(run):
    # time_ns node node_type if_index type (1 pause, 0 resume), as get_pfc writes them in
    # the order the frames arrive; node 5 a host NIC, node 330 a switch port
    text = ("1000 5 0 1 1\n"
            "1600 330 1 3 1\n"
            "2500 5 0 1 0\n"
            "3000 5 0 1 1\n"
            "3100 5 0 1 0\n"
            "not a pfc line\n"
            "4000 341 1 2 0\n")        # a resume with no pause seen: counted, no interval
    ev = run.parse_pfc(text)
    assert len(ev) == 6 and ev[0] == (1000, 5, 0, 1, 1)
    s = run.pfc_summary(ev, end_ns=5600)
    assert (s["pause_frames"], s["resume_frames"]) == (3, 3)
    assert (s["pauses_to_hosts"], s["pauses_to_switches"]) == (2, 1)
    assert s["paused_devices"] == 2 and s["unresumed"] == 1
    # host: 1000..2500 and 3000..3100; the switch port from 1600 to the end, 5600
    assert s["paused_s"] == pytest.approx((1500 + 100 + 4000) * 1e-9)
    assert run.pfc_summary([], 100)["paused_s"] == 0


def test_pfc_second_pause_keeps_the_interval(run):
    s = run.pfc_summary([(0, 1, 1, 2, 1), (50, 1, 1, 2, 1), (80, 1, 1, 2, 0)], end_ns=100)
    assert s["pause_frames"] == 2 and s["paused_s"] == pytest.approx(80e-9)


def test_incast_flow_file(run, tmp_path):
    flows = run.make_incast(320, 16, 1_000_000)
    srcs = [s for s, *_ in flows]
    assert len(set(srcs)) == 16 and 0 not in srcs
    assert all(d == 0 and n == 1_000_000 and t == 0.0 for _, d, n, t in flows)
    # spread over the fabric: under 16 different ToRs of mix/fat.txt (16 servers each)
    assert len({s // 16 for s in srcs}) == 16
    wide = run.make_incast(320, 64, 500_000, dst=100, start_s=1e-3)
    assert len({s for s, *_ in wide}) == 64 and 100 not in {s for s, *_ in wide}
    assert run.make_incast(4, 3, 10, dst=2) == [(3, 2, 10, 0.0), (0, 2, 10, 0.0),
                                                 (1, 2, 10, 0.0)]
    with pytest.raises(SystemExit):
        run.make_incast(320, 320, 1000)
    out = tmp_path / "incast.txt"
    assert run.main(["gen", "--incast", "16", "--size", "1000000", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "16" and lines[1].split()[3] == "200"     # the analysis' incast port
    assert [(s, d, n) for s, d, n, _ in run.read_flow_file(out)] == \
        [(s, d, n) for s, d, n, _ in flows]


def test_compare_reads_dcnsims_pfc_tables(run, tmp_path):
    cmp = _module("compare")
    (tmp_path / "pfc_buffer.csv").write_text(
        "port,priority,headroom_bytes,max_shared_bytes,max_headroom_bytes,pauses,drops,"
        "drop_bytes\n"
        "edge0->host3,1,53000,900000,1000,4,0,0\n"
        "edge0->agg1,1,161000,800000,0,2,0,0\n")
    (tmp_path / "pfc_ports.csv").write_text(
        "port,priority,pfc_sent,pfc_received,paused_s\n"
        "edge0->host3,1,9,0,0\n"
        "host3->edge0,1,0,9,2.5e-05\n"
        "agg1->edge0,1,0,3,1e-05\n")
    (tmp_path / "summary.csv").write_text("pause_sent,paused_s\n12,3.5e-05\n")
    p = cmp.read_pfc(tmp_path)
    assert (p["pause_frames"], p["pauses_to_hosts"], p["pauses_to_switches"]) == (6, 4, 2)
    assert p["paused_devices"] == 2 and p["paused_s"] == pytest.approx(3.5e-5)
    assert p["frames_sent"] == 12
    assert cmp.read_pfc(tmp_path / "none")["pause_frames"] == 0
    lines = cmp.pfc_lines(dict(pause_frames=3, resume_frames=3, paused_s=1e-6), p)
    assert lines[1].split() == ["pause_frames", "3", "6"]
    assert lines[-1].split()[-2:] == ["6", "12"]

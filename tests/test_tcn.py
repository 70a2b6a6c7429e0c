"""TCN paper (Bai et al. 2016) reproductions: the quick variants run end to end through `dcnsim
reproduce --quick`, and their published shapes are checked with stated tolerances."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import dcnsim._core  # noqa: F401 -- fails loudly when the extension is missing
import pytest


def _reproduce(exp: str, out: Path) -> list[dict[str, str]]:
    env = {**os.environ, "CI": "true"}
    proc = subprocess.run([sys.executable, "-m", "dcnsim", "reproduce", exp, "--quick",
                           "--out", str(out), "--jobs", "2"], check=False,
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    with (out / f"{exp}-quick" / "results.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_fig1_per_port_red_breaks_dwrr_fairness_tcn_keeps_it(tmp_path: Path) -> None:
    rows = _reproduce("tcn-fig1", tmp_path)
    got = {(r["scheme"], int(float(r["flows"]))): r for r in rows}
    red8 = got[("per-port RED", 8)]
    tcn8 = got[("TCN", 8)]
    # Paper: service 2 gets 670 Mb/s with 8 flows under per-port RED (fair share 500).
    assert float(red8["service2_mbps"]) > 600
    assert float(red8["service1_mbps"]) < 400
    # TCN: 50/50 within 5 %.
    s1, s2 = float(tcn8["service1_mbps"]), float(tcn8["service2_mbps"])
    assert abs(s1 - s2) < 0.05 * (s1 + s2)
    assert s1 + s2 > 900
    # One flow each: fair under both schemes.
    for scheme in ("per-port RED", "TCN"):
        r = got[(scheme, 1)]
        a, b = float(r["service1_mbps"]), float(r["service2_mbps"])
        assert abs(a - b) < 0.05 * (a + b)


def test_fig3_peak_buffer_enqueue_vs_dequeue(tmp_path: Path) -> None:
    rows = {r["scheme"]: r for r in _reproduce("tcn-fig3", tmp_path)}
    enq = float(rows["enqueue RED"]["peak_kb"])
    deq = float(rows["dequeue RED"]["peak_kb"])
    tcn = float(rows["TCN"]["peak_kb"])
    # Paper: ~375 KB (3 x BDP) for enqueue RED and TCN, ~250 KB (2 x BDP) for dequeue RED.
    assert abs(enq - 375) < 0.1 * 375
    assert abs(tcn - 375) < 0.1 * 375
    assert abs(deq - 250) < 0.1 * 250
    # Afterwards the queue stays near or below the 125 KB threshold (+ one window burst).
    for r in rows.values():
        assert float(r["steady_max_kb"]) < 200


def test_fig5_sp_wfq_split_and_queue3_rtt(tmp_path: Path) -> None:
    rows = {r["scheme"]: r for r in _reproduce("tcn-fig5", tmp_path)}
    for r in rows.values():
        # 500 / 250 / 250 Mb/s (UDP payload of the 500 Mb/s source: 490.7 Mb/s), within 5 %.
        assert abs(float(r["q1_mbps"]) - 490.7) < 0.05 * 490.7
        assert abs(float(r["q2_mbps"]) - 245) < 0.05 * 245
        assert abs(float(r["q3_mbps"]) - 245) < 0.05 * 245
    red, tcn = rows["per-queue RED"], rows["TCN"]
    # Paper: mean 1084 -> 415 us, p99 1400 -> 582 us: TCN well below per-queue RED.
    assert float(tcn["rtt_mean_us"]) < 0.6 * float(red["rtt_mean_us"])
    assert float(tcn["rtt_p99_us"]) < 0.7 * float(red["rtt_p99_us"])


def _fct_by(rows: list[dict[str, str]]) -> dict[tuple[str, float], dict[str, str]]:
    return {(r["scheme"], float(r["apps.0.load"])): r for r in rows}


def _check_fct_shape(exp: str, tmp_path: Path) -> None:
    """Quick variant (300 messages, loads 0.3/0.6/0.9): every message completes; TCN's
    small-flow mean FCT summed over the loads is below per-queue RED's (paper: up to 61%
    lower); large flows within 20% of per-queue RED at every load (paper: within 2.8%;
    300 messages give only a handful of large flows)."""
    got = _fct_by(_reproduce(exp, tmp_path))
    loads = sorted({k[1] for k in got})
    assert len(loads) == 3
    for r in got.values():
        assert float(r["messages_done"]) == 300
    red = sum(float(got[("per-queue RED", x)]["small_mean_us"]) for x in loads)
    tcn = sum(float(got[("TCN", x)]["small_mean_us"]) for x in loads)
    assert tcn < 0.9 * red, (tcn, red)
    for x in loads:
        nl = float(got[("TCN", x)]["norm_large_mean"])
        assert abs(nl - 1.0) < 0.2, (x, nl)


def test_fig6_dwrr_fct_tcn_small_flows_faster(tmp_path: Path) -> None:
    _check_fct_shape("tcn-fig6", tmp_path)


def test_fig7_wfq_fct_tcn_small_flows_faster(tmp_path: Path) -> None:
    _check_fct_shape("tcn-fig7", tmp_path)


@pytest.mark.parametrize("exp", ["tcn-fig10", "tcn-fig11", "tcn-fig12", "tcn-fig13"])
def test_leafspine_quick_runs_and_keeps_large_flows(exp: str, tmp_path: Path) -> None:
    """Quick leaf-spine (16 hosts, 4 spines, ECMP, SP + DWRR/WFQ, PIAS, 600 messages, loads
    50/90 %): every message completes under both schemes and large-flow FCT stays within
    20 % of per-queue RED (paper: within a few %). The paper's small-flow gain is NOT seen at
    this scale for fig10-12 (docs/validation.md C), so it is not asserted here."""
    got = _fct_by(_reproduce(exp, tmp_path))
    assert sorted({k[1] for k in got}) == [0.5, 0.9]
    for r in got.values():
        assert float(r["messages_done"]) == 600
    for x in (0.5, 0.9):
        nl = float(got[("TCN", x)]["norm_large_mean"])
        assert abs(nl - 1.0) < 0.2, (x, nl)


def test_fig2_departure_rate_estimates(tmp_path: Path) -> None:
    """Algorithm 1 after queue 1's share drops from 10 to 5 Gb/s at 10 ms (quick: 13 ms).
    Paper: dq_thresh 40 KB gives 29 samples in 2 ms and has not converged after 2 ms;
    10 KB samples swing between 3.7 and 10 Gb/s with the estimate above 6 Gb/s."""
    rows = {r["scheme"]: r for r in _reproduce("tcn-fig2", tmp_path)}
    a40, a10 = rows["Algorithm 1, 40 KB"], rows["Algorithm 1, 10 KB"]
    assert 20 <= int(a40["samples_2ms"]) <= 40
    assert 5.1 < float(a40["estimate_at_2ms_gbps"]) < 7.0
    assert int(a10["samples_2ms"]) > 2 * int(a40["samples_2ms"])
    assert float(a10["sample_min_gbps"]) < 4.5
    assert float(a10["sample_max_gbps"]) > 9.0
    assert float(a10["estimate_at_2ms_gbps"]) > 6.0
    # MQ-ECN (paper: converges to 5 Gb/s within 600 us): quantum / T_round, capped at C,
    # first within 10 % of 5 Gb/s well inside 600 us and mostly within it afterwards
    # (it leaves the band only for the rounds after a queue empties, docs/validation.md).
    mq = rows["MQ-ECN"]
    assert float(mq["first_within_us"]) < 600
    assert abs(float(mq["estimate_at_2ms_gbps"]) - 5.0) < 0.5
    assert float(mq["within10_pct"]) > 60
    assert int(mq["samples_2ms"]) > int(a10["samples_2ms"])


def test_table_spelling_keeps_small_ratios() -> None:
    from dcnsim.reports.tcn import _fmt

    assert _fmt(0.048) == "0.048"
    assert _fmt(1.0) == "1"
    assert _fmt(0.93456) == "0.935"
    assert _fmt(1234.56) == "1234.6"
    assert _fmt(float("nan")) == "nan"
    assert _fmt("dwrr") == "dwrr"

"""QCN / PAUSE reproductions (Devkota 2010 ch. III-V, Atikoglu & Prabhakar part 1): quick-scale
shape checks against the real engine (dcnsim._core), with the tolerances stated in each test."""

from __future__ import annotations

from typing import Any

import dcnsim._core as core

from .conftest import SCENARIOS

KIB = 1024
PAYLOAD_SHARE_MBPS = 1000 * 1460 / 1500


def run(exp_id: str, **overrides: Any) -> dict[str, dict[str, list[Any]]]:
    path = SCENARIOS / f"{exp_id}.toml"
    pairs = [(k.replace("__", "."), v) for k, v in overrides.items()]
    return core.run(path.read_text(), str(path), pairs)


def summary(tables: dict[str, dict[str, list[Any]]]) -> dict[str, Any]:
    return {k: v[0] for k, v in tables["summary"].items()}


def incast(exp_id: str, buffer_kib: int, n: int, duration: str = '"1s"') -> dict[str, Any]:
    return summary(run(exp_id, sim__duration=duration,
                       topology__switch_buffer=f'"{buffer_kib}KiB"', topology__servers=str(n)))


def test_fig10_qcn_shape() -> None:
    """Fig. 10 / Table III: with few flows QCN keeps full goodput and goodput ~ avg minrate x n
    (before timeouts start); at 8 flows QCN falls below line rate (thesis: 485 Mb/s at 128 KB)."""
    two = incast("devkota-fig10", 128, 2)
    assert two["goodput_mbps"] > 0.85 * PAYLOAD_SHARE_MBPS
    assert two["timeouts"] == 0 and two["cnm_sent"] > 0
    assert two["cnm_received"] == two["cnm_sent"]  # no CNM is lost
    # Table III: goodput ~ avg minrate x n while there are no timeouts (thesis 966.6 vs 1024.4).
    assert abs(two["avg_minrate_mbps"] * 2 - two["goodput_mbps"]) < 0.15 * two["goodput_mbps"]
    eight = incast("devkota-fig10", 128, 8)
    assert eight["goodput_mbps"] < 0.8 * PAYLOAD_SHARE_MBPS
    assert eight["avg_minrate_mbps"] < two["avg_minrate_mbps"] / 3


def test_fig10_qcn_below_plain_newreno_at_128k_8_flows() -> None:
    """Thesis Figs. 8 and 10: at 128 KB with 8 flows QCN (485 Mb/s) is below plain NewReno
    (Table I: no silent second). Full scale here: 652 against 710 Mb/s."""
    eight = incast("devkota-fig10", 128, 8)
    plain = incast("devkota-fig08", 128, 8)
    assert eight["goodput_mbps"] < plain["goodput_mbps"]


def test_fig20_ideal_rate_is_near_line_rate() -> None:
    """Fig. 20: every flow hard-limited to C/n: >= 90 % of the payload share, no drops, no
    timeouts (buffers >= 128 KiB; see docs/validation.md for 32/64 KiB with 32+ flows)."""
    for n in (2, 8, 32, 64):
        s = incast("devkota-fig20", 128, n, '"0.5s"')
        assert s["goodput_mbps"] >= 0.9 * PAYLOAD_SHARE_MBPS, (n, s["goodput_mbps"])
        assert s["drops"] == 0 and s["timeouts"] == 0, n


def test_congestion_memory_improves_on_unmodified_qcn() -> None:
    """Figs. 24 and 27 vs Fig. 10 at 128 KiB and 16 flows (thesis: 'much better')."""
    base = incast("devkota-fig10", 128, 16)["goodput_mbps"]
    for exp in ("devkota-fig24", "devkota-fig27"):
        g = incast(exp, 128, 16)["goodput_mbps"]
        assert g > base + 100, (exp, g, base)


def _rate(tables: dict[str, dict[str, list[Any]]], flow: int, t0: float, t1: float) -> float:
    fr = tables["flow_rate"]
    vals = [r for t, f, r in zip(fr["time_s"], fr["flow"], fr["rate_mbps"], strict=True)
            if f == flow and t0 < t <= t1]
    return sum(vals) / len(vals)


def test_pause_qcn_part1_shape() -> None:
    """Slides part 1 (quick: slow-down 100-350 ms): PAUSE alone drags the innocent 2->4 flow
    well below its 4 Gb/s; with QCN it keeps ~4 Gb/s; PAUSE loses nothing."""
    common = {"sim__duration": '"0.5s"', "topology__rate_changes__0__at": '"100ms"',
              "topology__rate_changes__1__at": '"350ms"', "topology__switch_buffer": '"unlimited"'}
    pause = run("pause-qcn-part1", **common, topology__pause__enabled="true")
    both = run("pause-qcn-part1", **common, topology__pause__enabled="true",
               topology__qcn__enabled="true")
    alone = run("pause-qcn-part1", **{**common, "topology__switch_buffer": '"150KB"'})
    innocent_pause = _rate(pause, 1, 0.15, 0.35)
    innocent_qcn = _rate(both, 1, 0.15, 0.35)
    innocent_tcp = _rate(alone, 1, 0.15, 0.35)
    assert innocent_pause < 0.6 * innocent_qcn, (innocent_pause, innocent_qcn)
    assert innocent_qcn > 3500 and innocent_tcp > 3500
    assert summary(pause)["drops"] == 0 and summary(pause)["pause_sent"] > 0
    assert summary(both)["drops"] == 0 and summary(both)["cnm_sent"] > 0
    # the culprit gets about node 3's 500 Mb/s during the slow-down
    assert 300 < _rate(both, 0, 0.15, 0.35) < 600


def test_pause_qcn_part2_shape() -> None:
    """Slides part 2 (quick: slow-down 0.5-1.1 s, measured over 0.7-1.1 s): per-flow
    limiters give the victim ~500 Mb/s and the innocent ~4 Gb/s; a shared limiter drags
    the innocent down to about the victim's rate; notifying the victim flow (drop one held
    packet) restores the innocent flow."""
    def rates(scope: str, notify: str) -> tuple[float, float, dict[str, Any]]:
        t = run("pause-qcn-part2", sim__duration='"1.2s"', topology__rate_changes__1__at='"1.1s"',
                qcn__rp__scope=f'"{scope}"', qcn__rp__notify=f'"{notify}"')
        return _rate(t, 0, 0.7, 1.1), _rate(t, 1, 0.7, 1.1), t["limiters"]

    victim, innocent, _ = rates("flow", "off")
    assert 350 < victim < 550 and innocent > 3500
    victim, innocent, _ = rates("shared", "off")
    assert innocent < 1000, innocent
    victim, innocent, lim = rates("shared", "drop")
    assert innocent > 3500 and victim < 600, (victim, innocent)
    assert lim["notified"][0] > 0


def test_mixed_udp_shapes() -> None:
    """Figs. 29-31 (mixed set-up, 2 s): with a 10 ms min RTO the UDP flow keeps its 400 Mb/s
    and the reads share the rest (256 KiB); with 200 ms NewReno the reads collapse at 16 flows;
    under QCN the UDP source is rate-limited too (CNMs reach it)."""
    def mixed(exp: str, n: int) -> tuple[float, float, dict[str, Any]]:
        t = run(exp, sim__duration='"2s"', topology__switch_buffer='"128KiB"',
                topology__servers=str(n))
        reads, udp = t["apps"]["goodput_mbps"]
        return reads, udp, summary(t)

    # The thesis's statement is for 256 KB ("UDP gets its 400 Mb/s, the rest shared fairly").
    t = run("devkota-fig30", sim__duration='"2s"', topology__switch_buffer='"256KiB"',
            topology__servers="16")
    reads, udp = t["apps"]["goodput_mbps"]
    assert udp > 350 and reads > 450, (reads, udp)
    reads, udp, _ = mixed("devkota-fig29", 16)
    assert reads < 300 and udp > 350, (reads, udp)
    _, _, s = mixed("devkota-fig31", 4)
    assert s["cnm_received"] == s["cnm_sent"] > 0 and s["cnm_ignored"] == 0


def test_table6_every_packet_sends_more_cnms() -> None:
    """Table VI: sampling every packet sends several times more CNMs than v2.2 (thesis at
    n = 2: 18969 vs 4740 in 20 s; here 1 s, ratio > 2)."""
    v22 = summary(run("devkota-table6", sim__duration='"1s"', topology__servers="2"))
    every = summary(run("devkota-table6", sim__duration='"1s"', topology__servers="2",
                        topology__qcn__sampling='"every_packet"'))
    assert every["cnm_sent"] > 2 * v22["cnm_sent"] > 0


AR_CM = {"qcn__rp__adaptive_rai": "true", "topology__qcn__congestion_memory": "true"}
B_QUICK = {"sim__duration": '"60ms"', "topology__rate_changes__0__at": '"10ms"',
           "topology__rate_changes__1__at": '"50ms"'}


def test_qcn_baselines_2_to_4_shape() -> None:
    """Devkota 2010 ch. VI baselines 2-4 (quick variants). Thesis: the modifications do not harm
    throughput, and AR+DS drops far fewer frames (1196/1118/94, 189/184/0, 382/389/17).
    dcnsim disagrees on which variant drops least (AR+CM, as in qcn-baseline1; see
    docs/validation.md), so this asserts dcnsim's own relation: AR+CM drops < 0.7x the
    unmodified drops, delivered bytes within 2 % of unmodified QCN, and every CNM delivered."""
    for exp, quick in (("qcn-baseline2", B_QUICK), ("qcn-baseline3", B_QUICK),
                       ("qcn-baseline4", {"sim__duration": '"40ms"'})):
        base = run(exp, **quick)
        cm = run(exp, **quick, **AR_CM)
        b, c = summary(base), summary(cm)
        assert b["drops"] > 0 and b["cnm_sent"] > 0, exp
        assert c["drops"] < 0.7 * b["drops"], (exp, b["drops"], c["drops"])
        assert abs(c["delivered_bytes"] - b["delivered_bytes"]) < 0.02 * b["delivered_bytes"], exp
        assert b["cnm_received"] == b["cnm_sent"], exp
        if exp == "qcn-baseline3":
            # Victims (apps 4-6, 7 Gb/s each) keep >= 85 % of their rate; the four culprits
            # share what node 7 serves: <= 8 Gb/s x 20 ms + 2 Gb/s x 40 ms over 60 ms.
            rates = base["apps"]["goodput_mbps"]
            assert all(r > 0.85 * 7000 for r in rates[4:7]), rates
            assert sum(rates[:4]) <= (8000 * 20 + 2000 * 40) / 60 * 1.02, rates


def test_table6_seven_variants_quick_plan() -> None:
    """devkota-table6 runs Table VI's seven columns as [[sweep.variants]]; the quick plan
    crosses them with n = 2, 16. At n = 2 (1 s) sampling every packet sends > 2x the CNMs of
    every other column (thesis 18969 vs 3337-11716 in 20 s)."""
    from dcnsim import _toml
    from dcnsim.scenario import load, make_plan, variant_of

    path = SCENARIOS / "devkota-table6.toml"
    scn = load(path)
    plan = make_plan(scn, quick=True)
    assert len(plan.points) == 14 and len(scn.variants) == 7
    cnms = {}
    for p in plan.points:
        if p.overrides["topology.servers"] != 2:
            continue
        assert variant_of(scn, p.overrides) == p.axis_values["variants"]
        tables = core.run(scn.text, str(path), _toml.literal_pairs(p.overrides))
        cnms[p.axis_values["variants"]] = summary(tables)["cnm_sent"]
    every = cnms.pop("II every packet")
    assert all(every > 2 * c > 0 for c in cnms.values()), (every, cnms)

//! HPCC against its update rules (docs/models.md §15): scripted INT records, exact rates,
//! reference rates, stages and windows.

use super::*;
use crate::model::roce::cc::RoceCc;

const G: u64 = 1_000_000_000;

fn us(x: u64) -> SimTime {
    SimTime::from_us(x)
}

/// A hop of 100 Gb/s at `ts_us` having sent `bytes` with `qlen` queued.
fn hop(ts_us: u64, bytes: u64, qlen: u64) -> IntHop {
    IntHop {
        rate_bps: 100 * G,
        ts: us(ts_us),
        tx_bytes: bytes,
        qlen,
    }
}

/// 100 Gb/s, T = 10 µs (so B·T = 125 000 bytes).
fn fork() -> Hpcc {
    Hpcc::new(HpccConfig::hpcc_fork(RateBps(100 * G), us(10)))
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} vs {b}");
}

#[test]
fn the_first_records_are_only_stored() {
    let mut h = fork();
    h.on_int(us(20), us(10), &[hop(15, 0, 0)]);
    assert_eq!(h.rate, 100e9);
    assert_eq!((h.nhops, h.last_update, h.updates), (1, Some(us(20)), 0));
    // No records: nothing happens.
    h.on_int(us(21), us(11), &[]);
    assert_eq!((h.rate, h.nhops), (100e9, 1));
}

#[test]
fn a_full_link_for_a_whole_base_rtt() {
    // Δts = T and the hop sent B·T bytes: U' = 1, τ = T, so U = 1 and k = 1/0.95:
    // R = R_c·0.95 + 40 Mb/s (R_AI = 10·bw/25 Mb/s), and the ACK (of a packet sent after the first records) updates
    // the reference.
    let mut h = fork();
    h.on_int(us(20), us(10), &[hop(15, 0, 0)]);
    h.on_int(us(30), us(20), &[hop(25, 125_000, 0)]);
    close(h.u, 1.0);
    close(h.rate, 100e9 * 0.95 + 40e6);
    close(h.rate_c, h.rate);
    assert_eq!(
        (h.inc_stage, h.updates, h.last_update),
        (0, 1, Some(us(30)))
    );
    // The window is R·T: 95.04 Gb/s × 10 µs = 118 800 bytes.
    assert_eq!(h.window(), Some(118_800));
}

#[test]
fn the_queue_term_and_a_partial_ewma() {
    // Δts = 5 µs = T/2, the hop sent at 100 Gb/s (62 500 B) and holds min(q, q_prev) =
    // 62 500 B = B·T/2: U' = 0.5 + 1 = 1.5, U = 0.5·0 + 0.5·1.5 = 0.75 < η: with the
    // fork's maxStage 0 the step is still multiplicative, R = R_c/(0.75/0.95) + R_AI.
    let mut h = fork();
    h.on_int(us(20), us(10), &[hop(15, 0, 70_000)]);
    h.on_int(us(25), us(20), &[hop(20, 62_500, 62_500)]);
    close(h.u, 0.75);
    close(h.rate, 100e9f64.min(100e9 / (0.75 / 0.95) + 40e6));
    assert_eq!(h.rate, 100e9, "capped at the line rate");
}

#[test]
fn the_most_loaded_hop_sets_u_and_tau() {
    // Hop 0: Δts 10 µs at half rate (U' = 0.5); hop 1: Δts 4 µs, full rate and
    // min(q) = 25 000 B = 0.2·B·T (U' = 1.2): hop 1 wins with τ = 4 µs,
    // U = 0.6·0 + 0.4·1.2 = 0.48.
    let mut h = fork();
    h.on_int(us(20), us(10), &[hop(10, 0, 0), hop(16, 0, 25_000)]);
    h.on_int(
        us(30),
        us(20),
        &[hop(20, 62_500, 0), hop(20, 50_000, 30_000)],
    );
    close(h.u, 0.48);
    close(h.rate, 100e9f64.min(100e9 / (0.48 / 0.95) + 40e6));
}

#[test]
fn per_ack_reaction_keeps_the_reference_until_the_round_trip_ends() {
    let mut h = fork();
    h.on_int(us(20), us(10), &[hop(15, 0, 0)]);
    // Full link: the update sets R_c = 95.04 G at t = 30 µs.
    h.on_int(us(30), us(20), &[hop(25, 125_000, 0)]);
    let rc = h.rate_c;
    // An ACK of a packet sent before 30 µs: the rate reacts (U = 1 again, from R_c), R_c
    // and the update count stay.
    h.on_int(us(31), us(29), &[hop(35, 250_000, 0)]);
    close(h.rate, rc * 0.95 + 40e6);
    assert_eq!((h.rate_c, h.updates), (rc, 1));
    // A packet sent at 30 µs or later ends the round trip: R_c follows.
    h.on_int(us(41), us(30), &[hop(45, 375_000, 0)]);
    close(h.rate_c, rc * 0.95 + 40e6);
    assert_eq!(h.updates, 2);
}

#[test]
fn the_paper_profile_adds_for_max_stage_round_trips() {
    // Half-loaded link (U = 0.5 < η): five additive updates of R_AI, then a multiplicative
    // one (R_c/(0.5/0.95) + R_AI), and the stage restarts.
    let mut h = Hpcc::new(HpccConfig::paper(RateBps(100 * G), us(10)));
    h.rate_c = 40e9;
    h.rate = 40e9;
    h.on_int(us(20), us(10), &[hop(15, 0, 0)]);
    let mut t = 15;
    let mut bytes = 0;
    for i in 1..=5 {
        t += 10;
        bytes += 62_500;
        let now = us(t + 5);
        h.on_int(now, us(t), &[hop(t, bytes, 0)]);
        close(h.u, 0.5);
        close(h.rate_c, 40e9 + i as f64 * 40e6);
        assert_eq!(h.inc_stage, i);
    }
    t += 10;
    bytes += 62_500;
    h.on_int(us(t + 5), us(t), &[hop(t, bytes, 0)]);
    close(h.rate_c, (40e9 + 200e6) / (0.5 / 0.95) + 40e6);
    assert_eq!(h.inc_stage, 0);
}

#[test]
fn floors_skips_and_new_paths() {
    let mut h = fork();
    h.rate_c = 20e9;
    h.on_int(us(20), us(10), &[hop(15, 0, 1_000_000)]);
    // A deep queue on a full link: U' = 8 + 1, R_c/(9/0.95) = 2.11 Gb/s + 40 Mb/s.
    h.on_int(us(30), us(20), &[hop(25, 125_000, 1_000_000)]);
    close(h.rate, 20e9 / (9.0 / 0.95) + 40e6);
    // From a low reference the same step would give 251 Mb/s: the floor of 1 Gb/s.
    h.rate_c = 2e9;
    h.on_int(us(40), us(30), &[hop(35, 250_000, 1_000_000)]);
    assert_eq!(h.rate, 1e9);
    // The paper's profile keeps the sample configuration's floor of 100 Mb/s.
    assert_eq!(
        HpccConfig::paper(RateBps(100_000_000_000), us(10)).min_rate,
        RateBps(100_000_000)
    );
    // A hop whose time did not advance gives nothing: only the records are stored.
    let before = (h.rate, h.u);
    h.on_int(us(41), us(31), &[hop(35, 260_000, 0)]);
    assert_eq!((h.rate, h.u), before);
    assert_eq!(h.prev[0].tx_bytes, 260_000);
    // Another hop count (a new path) restarts from its records.
    h.on_int(us(50), us(40), &[hop(45, 0, 0), hop(45, 0, 0)]);
    assert_eq!((h.nhops, h.rate), (2, before.0));
    // An idle path (U = 0 after a long gap): the line rate.
    let mut h = fork();
    h.rate_c = 1e9;
    h.on_int(us(20), us(10), &[hop(15, 0, 0)]);
    h.on_int(us(40), us(30), &[hop(35, 0, 0)]);
    assert_eq!(h.rate, 100e9);
}

#[test]
fn through_the_rate_control_seam() {
    // The queue pair hands the records in AckInfo; the send time is now − rtt.
    let mut cc = RoceCc::Hpcc(fork());
    let first = [hop(15, 0, 0)];
    let second = [hop(25, 125_000, 0)];
    let a = |int| AckInfo {
        acked: 1000,
        ce_echo: false,
        rtt: us(10),
        int,
        snd_una: 0,
        snd_nxt: 0,
    };
    cc.on_ack(us(20), &a(&first));
    cc.on_ack(us(30), &a(&second));
    assert_eq!(cc.rate(), RateBps(95_040_000_000));
    assert_eq!(cc.window(), Some(118_800));
}

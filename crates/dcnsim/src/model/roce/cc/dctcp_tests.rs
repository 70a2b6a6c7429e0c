//! The NIC's DCTCP against its update rules (docs/models.md §16): scripted ACKs with and
//! without the CE echo, exact α, rates, reductions and windows.

use super::*;
use crate::model::roce::cc::RoceCc;

const G: u64 = 1_000_000_000;

/// 100 Gb/s, T = 10 µs, 1 000-byte packets.
fn fork() -> DctcpRate {
    DctcpRate::new(DctcpRateConfig::hpcc_fork(
        RateBps(100 * G),
        SimTime::from_us(10),
        1000,
    ))
}

/// An ACK of one packet that leaves `una` acknowledged and `nxt` next to send.
fn ack(d: &mut DctcpRate, una: u64, nxt: u64, ce: bool) {
    let a = AckInfo {
        acked: 1000,
        ce_echo: ce,
        rtt: SimTime::from_us(10),
        int: &[],
        snd_una: una,
        snd_nxt: nxt,
    };
    d.on_ack(SimTime::from_us(una / 1000), &a);
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} vs {b}");
}

#[test]
fn the_fork_profile_constants() {
    let c = DctcpRateConfig::hpcc_fork(RateBps(100 * G), SimTime::from_us(10), 1000);
    assert_eq!((c.g, c.alpha0), (0.0625, 1.0));
    assert_eq!((c.rate_ai, c.min_rate), (RateBps(615_000_000), RateBps(G)));
    let d = DctcpRate::new(c);
    assert_eq!((d.rate(), d.alpha), (RateBps(100 * G), 1.0));
    // The window R·T: 100 Gb/s for 10 µs.
    assert_eq!(d.window(), Some(125_000));
}

#[test]
fn one_cut_per_window_then_alpha_from_the_marked_fraction_and_additive_increase() {
    let mut d = fork();
    // The first ACK opens the first batch: 10 packets sent since the start, so 11
    // expected; at line rate the increase changes nothing.
    ack(&mut d, 1000, 10_000, false);
    assert_eq!((d.batch, d.last_seq, d.updates), (11, Some(10_000), 0));
    assert_eq!(d.rate, 100e9);
    // A marked ACK: R·(1 − α/2) with α = 1, and a reduction until beyond 11 000.
    ack(&mut d, 2000, 11_000, true);
    assert_eq!(
        (d.rate, d.in_cwr, d.high_seq, d.cuts),
        (50e9, true, 11_000, 1)
    );
    // More marks inside the reduction cut nothing more; they count for α.
    for una in (3000..=10_000).step_by(1000) {
        ack(&mut d, una, 11_000, true);
    }
    assert_eq!((d.rate, d.cuts, d.marked), (50e9, 1, 9));
    // The ACK beyond 10 000 ends the batch: F = 9/11, α = 15/16 + F/16; the next batch
    // holds what is in flight, (20 000 − 11 000)/1 000 + 1 = 10 packets. Still in the
    // reduction (11 000 is not beyond 11 000): no increase.
    ack(&mut d, 11_000, 20_000, false);
    let a1 = 15.0 / 16.0 + (9.0 / 11.0) / 16.0;
    close(d.alpha, a1);
    assert_eq!((d.batch, d.marked, d.in_cwr, d.rate), (10, 0, true, 50e9));
    // The reduction ends on the next ACK; an ACK inside a batch raises nothing.
    ack(&mut d, 12_000, 21_000, false);
    assert_eq!((d.in_cwr, d.rate), (false, 50e9));
    // A batch without marks: α decays by 15/16 and R gains R_AI.
    ack(&mut d, 21_000, 30_000, false);
    close(d.alpha, a1 * 15.0 / 16.0);
    assert_eq!(d.rate, 50e9 + 615e6);
    assert_eq!(d.updates, 2);
    // The next mark cuts by the new α/2, and the window follows the rate.
    ack(&mut d, 22_000, 31_000, true);
    let r = (50e9 + 615e6) * (1.0 - a1 * 15.0 / 16.0 / 2.0);
    close(d.rate, r);
    assert_eq!(d.window(), Some((r * 10e-6 / 8.0) as u64));
}

#[test]
fn floor_ceiling_and_a_restarted_message() {
    let mut d = fork();
    d.rate = 1.5e9;
    ack(&mut d, 1000, 5000, true);
    // 1.5 Gb/s · (1 − 1/2) = 750 Mb/s, below the floor of 1 Gb/s.
    assert_eq!(d.rate, 1e9);
    // A queue pair whose controller restarts mid-stream (a workload's next message on the
    // same connection): the first batch counts from the ACK's previous snd_una.
    let mut d = fork();
    ack(&mut d, 501_000, 510_000, false);
    assert_eq!((d.batch, d.last_seq), (11, Some(510_000)));
}

#[test]
fn through_the_rate_control_seam() {
    let mut cc = RoceCc::Dctcp(fork());
    let a = AckInfo {
        acked: 1000,
        ce_echo: true,
        rtt: SimTime::from_us(10),
        int: &[],
        snd_una: 1000,
        snd_nxt: 10_000,
    };
    cc.on_ack(SimTime::from_us(10), &a);
    assert_eq!(cc.rate(), RateBps(50 * G));
    assert_eq!(cc.window(), Some(62_500));
}

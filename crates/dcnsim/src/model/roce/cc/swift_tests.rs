//! Swift driven with scripted ACKs and delays; every expected window and rate is worked out
//! here from the equations of docs/models.md §14, step by step.

use super::*;

const G100: u64 = 100_000_000_000;

fn us(x: u64) -> SimTime {
    SimTime::from_us(x)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// 100 Gb/s, 1000 B of payload (1062 B on the wire), two switches, a 4 µs base RTT.
fn path() -> SwiftPath {
    SwiftPath {
        line_rate: RateBps(G100),
        mtu: 1_000,
        wire: 1_062,
        hops: 2,
        base_rtt: us(4),
    }
}

fn at(cwnd: f64) -> Swift {
    let mut s = Swift::new(SwiftConfig::paper(path()));
    s.cwnd = cwnd;
    s
}

fn ack(s: &mut Swift, now: SimTime, rtt: SimTime) {
    let a = AckInfo {
        acked: 1_000,
        ce_echo: false,
        rtt,
        int: &[],
        snd_una: 0,
        snd_nxt: 0,
    };
    s.on_ack(now, &a);
}

/// The flow-scaling term at `cwnd` packets, picoseconds, from the §14 formula.
fn fs(cwnd: f64) -> f64 {
    let range = 125e6; // 5 × 25 µs
    let a = range / (1.0 / 0.1f64.sqrt() - 1.0 / 100f64.sqrt());
    let b = -a / 100f64.sqrt();
    (a / cwnd.sqrt() + b).clamp(0.0, range)
}

/// The target at `cwnd`: 25 µs + 2 hops × 1 µs + fs.
fn target(cwnd: f64) -> f64 {
    27e6 + fs(cwnd)
}

#[test]
fn constants_match_their_sources() {
    let c = SwiftConfig::paper(path());
    assert_eq!(c.base_target, us(25));
    assert_eq!(c.hop_scale, us(1));
    assert_eq!(c.fs_range, us(125));
    assert_eq!((c.fs_min_cwnd, c.fs_max_cwnd), (0.1, 100.0));
    assert_eq!((c.ai, c.beta, c.max_mdf), (1.0, 0.8, 0.5));
    assert_eq!((c.min_cwnd, c.max_cwnd), (0.001, 10_000.0));
    // One BDP: 4 µs × 100 Gb/s = 50 000 B, over 1062 B packets.
    assert!(close(c.init_cwnd, 50_000.0 / 1_062.0));
    let mut p = path();
    p.base_rtt = SimTime::ZERO;
    assert_eq!(SwiftConfig::paper(p).init_cwnd, 1.0);
}

#[test]
fn the_controller_fits_in_the_enum() {
    assert!(std::mem::size_of::<Swift>() <= std::mem::size_of::<super::super::dcqcn::Dcqcn>());
}

#[test]
fn the_flow_scaling_term_spans_fs_range_over_the_window_range() {
    // Full range at fs_min_cwnd and below, none at fs_max_cwnd and above.
    assert!(close(at(0.1).target(), 27e6 + 125e6));
    assert!(close(at(0.01).target(), 27e6 + 125e6));
    assert!(close(at(100.0).target(), 27e6));
    assert!(close(at(1000.0).target(), 27e6));
    // In between, α/√cwnd + β: at 1 and 10 packets.
    for w in [1.0, 10.0, 47.0] {
        assert!(close(at(w).target(), target(w)), "cwnd {w}");
    }
    // α = 125 µs / (√10 − 0.1): at 10 packets α·(1/√10 − 1/10).
    let a = 125e6 / (10f64.sqrt() - 0.1);
    assert!(close(fs(10.0), a * (1.0 / 10f64.sqrt() - 0.1)));
    let (ca, cb) = SwiftConfig::paper(path()).fs_coefficients();
    assert!(close(ca, a) && close(cb, -a / 10.0));
}

#[test]
fn below_the_target_the_window_grows_by_ai_over_cwnd_per_packet() {
    let mut s = at(10.0);
    ack(&mut s, us(1), us(5));
    assert!(close(s.cwnd, 10.0 + 1.0 / 10.0));
    ack(&mut s, us(2), us(5));
    assert!(close(s.cwnd, 10.1 + 1.0 / 10.1));
    // Ten ACKs of a 10-packet window: about one packet per RTT.
    let mut s = at(10.0);
    for i in 0..10 {
        ack(&mut s, us(i), us(5));
    }
    assert!(s.cwnd > 10.95 && s.cwnd < 11.0, "{}", s.cwnd);
    // Below one packet the increase is ai per packet acknowledged.
    let mut s = at(0.25);
    ack(&mut s, us(1), us(5));
    assert!(close(s.cwnd, 1.25));
}

#[test]
fn above_the_target_the_window_shrinks_once_per_rtt() {
    let mut s = at(10.0);
    let t = target(10.0);
    let delay = us(40);
    let d = delay.0 as f64;
    ack(&mut s, us(100), delay);
    // Factor 1 − β·(delay − target)/delay.
    let f = 1.0 - 0.8 * (d - t) / d;
    assert!(f > 0.5 && f < 1.0);
    let w1 = 10.0 * f;
    assert!(close(s.cwnd, w1));
    assert_eq!(s.last_decrease, Some(us(100)));
    // Within one RTT (40 µs) of that decrease: no second one.
    ack(&mut s, us(139), delay);
    assert!(close(s.cwnd, w1));
    assert_eq!(s.decreases, 1);
    // One RTT later: again, at the target of the smaller window.
    ack(&mut s, us(140), delay);
    let t2 = target(w1);
    assert!(close(s.cwnd, w1 * (1.0 - 0.8 * (d - t2) / d)));
    assert_eq!(s.decreases, 2);
}

#[test]
fn a_decrease_is_capped_by_max_mdf() {
    let mut s = at(10.0);
    ack(&mut s, us(1), us(2_000));
    // 1 − 0.8·(2000 − 29.…)/2000 < 0.5: the cap, 1 − max_mdf.
    assert!(close(s.cwnd, 5.0));
}

#[test]
fn the_window_floors_at_min_cwnd() {
    let mut s = at(0.0015);
    ack(&mut s, us(1), us(5_000));
    assert!(close(s.cwnd, 0.001));
}

#[test]
fn a_window_caps_bytes_in_flight_at_line_rate_and_paces_below_one_packet() {
    let mut s = at(2.5);
    s.rtt = us(40);
    assert_eq!(s.window(), Some(2_500));
    assert_eq!(s.rate(), RateBps(G100));
    // cwnd 0.5, RTT 40 µs: one 1062 B packet every 80 µs = 106.2 Mb/s; a window of one
    // packet.
    let mut s = at(0.5);
    s.rtt = us(40);
    assert_eq!(s.window(), Some(1_000));
    assert_eq!(s.rate(), RateBps(106_200_000));
    // The limiter spaces full packets by RTT/cwnd.
    assert_eq!(s.rate().tx_time(1_062), us(80));
    // Before any RTT sample: line rate.
    let s = at(0.5);
    assert_eq!(s.rate(), RateBps(G100));
}

#[test]
fn a_window_falling_below_one_packet_switches_to_pacing() {
    let mut s = at(1.5);
    ack(&mut s, us(1), us(3_000));
    // The max_mdf cap: 0.75 packets, paced at 0.75 packets per 3 ms.
    assert!(close(s.cwnd, 0.75));
    let want: f64 = 1_062.0 * 8.0 * 0.75 / 3e-3;
    assert_eq!(s.rate(), RateBps(want.round() as u64));
    assert_eq!(s.window(), Some(1_000));
}

//! TIMELY driven with scripted ACKs and RTT samples; every expected rate is worked out here
//! from the equations of docs/models.md §13, step by step.

use super::*;

const G100: u64 = 100_000_000_000;

fn us(x: u64) -> SimTime {
    SimTime::from_us(x)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// A paper-profile controller whose every ACK of `seg` bytes is one event, starting at
/// `rate` with the gradient normalised by a fixed `min_rtt`.
fn paper_at(rate: f64, min_rtt: SimTime) -> Timely {
    let mut cfg = TimelyConfig::paper(RateBps(G100));
    cfg.min_rtt = Some(min_rtt);
    let mut t = Timely::new(cfg);
    t.rate = rate;
    t
}

/// One ACK of `bytes` with RTT `rtt` at `now`.
fn ack(t: &mut Timely, now: SimTime, bytes: u64, rtt: SimTime) {
    let a = AckInfo {
        acked: bytes,
        ce_echo: false,
        rtt,
        int: &[],
        snd_una: 0,
        snd_nxt: 0,
    };
    t.on_ack(now, &a);
}

/// One paper event (a whole 16 KB segment) with RTT `rtt`.
fn seg(t: &mut Timely, rtt: SimTime) {
    ack(t, us(1_000), 16_000, rtt);
}

#[test]
fn constants_match_their_sources() {
    let p = TimelyConfig::paper(RateBps(G100));
    assert_eq!((p.t_low, p.t_high), (us(50), us(500)));
    assert_eq!(p.beta, 0.8);
    assert_eq!(p.delta, RateBps(10_000_000));
    assert_eq!(p.update, Update::Segment(16_000));
    assert_eq!((p.hai_after, p.hai), (5, HaiRule::Gradient { n: 5 }));
    assert_eq!(p.alpha, 0.875);
    assert_eq!(p.min_rtt, None);
    for (gbps, ai, hai) in [(25u64, 25u64, 125u64), (100, 100, 500)] {
        let f = TimelyConfig::hpcc_fork(RateBps(gbps * 1_000_000_000));
        assert_eq!(f.delta, RateBps(ai * 1_000_000), "{gbps}");
        assert_eq!(
            f.hai,
            HaiRule::Increases {
                r_hai: RateBps(hai * 1_000_000)
            }
        );
    }
    let f = TimelyConfig::hpcc_fork(RateBps(G100));
    assert_eq!((f.alpha, f.beta), (0.875, 0.8));
    assert_eq!((f.t_low, f.t_high), (us(50), us(500)));
    assert_eq!(f.min_rtt, Some(us(20)));
    assert_eq!(f.min_rate, RateBps(1_000_000_000));
    assert_eq!((f.update, f.hai_after), (Update::PerRtt, 5));
}

#[test]
fn the_controller_fits_in_the_enum() {
    assert!(std::mem::size_of::<Timely>() <= std::mem::size_of::<super::super::dcqcn::Dcqcn>());
}

#[test]
fn an_event_is_a_whole_segment_of_acknowledged_bytes() {
    let mut t = paper_at(50e9, us(10));
    // 15 ACKs of 1000 B: no event; the 16th completes the 16 KB segment.
    for _ in 0..15 {
        ack(&mut t, us(1), 1_000, us(10));
    }
    assert_eq!((t.events, t.rate), (0, 50e9));
    ack(&mut t, us(1), 1_000, us(10));
    assert_eq!(t.events, 1);
    // RTT 10 µs < T_low: R + δ.
    assert_eq!(t.rate, 50e9 + 10e6);
    // The remainder carries over: 1500 B then 14 500 B make the next segment exactly.
    ack(&mut t, us(2), 1_500, us(10));
    ack(&mut t, us(2), 14_500, us(10));
    assert_eq!((t.events, t.acked), (2, 0));
}

#[test]
fn below_t_low_the_rate_rises_by_delta_and_never_above_line_rate() {
    let mut t = paper_at(50e9, us(10));
    let mut want = 50e9;
    for rtt in [20, 30, 40, 49] {
        // Rising RTTs (a positive gradient) below T_low still increase additively.
        seg(&mut t, us(rtt));
        want += 10e6;
        assert_eq!(t.rate, want, "rtt {rtt} µs");
    }
    let mut t = paper_at(G100 as f64 - 5e6, us(10));
    seg(&mut t, us(10));
    assert_eq!(t.rate, G100 as f64);
    assert_eq!(t.rate(), RateBps(G100));
}

#[test]
fn above_t_high_the_rate_falls_with_the_excess_rtt() {
    let mut t = paper_at(40e9, us(10));
    seg(&mut t, us(800));
    // R·(1 − β·(1 − T_high/RTT)) = 40 G·(1 − 0.8·(1 − 500/800)) = 40 G·0.7 = 28 G.
    assert!(close(t.rate, 40e9 * (1.0 - 0.8 * (1.0 - 500.0 / 800.0))));
    assert!(close(t.rate, 28e9));
    seg(&mut t, us(1000));
    // 28 G·(1 − 0.8·0.5) = 16.8 G.
    assert!(close(t.rate, 16.8e9));
}

#[test]
fn a_positive_gradient_cuts_by_beta_times_the_normalised_gradient() {
    // min RTT 20 µs; first event at 100 µs (zero difference: gradient 0, an increase).
    let mut t = paper_at(40e9, us(20));
    seg(&mut t, us(100));
    assert_eq!(t.rate, 40e9 + 10e6);
    assert_eq!(t.rtt_diff, 0.0);
    // RTT 104 µs: new diff 4 µs, diff = 0.125·0 + 0.875·4 = 3.5 µs, g = 3.5/20 = 0.175.
    seg(&mut t, us(104));
    let d1 = 0.875 * 4e6;
    assert!(close(t.rtt_diff, d1));
    let r1 = (40e9 + 10e6) * (1.0 - 0.8 * d1 / 20e6);
    assert!(close(t.rate, r1));
    // RTT 106 µs: new diff 2 µs, diff = 0.125·3.5 + 0.875·2 = 2.1875 µs, g = 0.109375.
    seg(&mut t, us(106));
    let d2 = 0.125 * d1 + 0.875 * 2e6;
    assert!(close(t.rtt_diff, d2));
    assert!(close(t.rate, r1 * (1.0 - 0.8 * d2 / 20e6)));
}

#[test]
fn a_negative_gradient_raises_by_delta_then_hyperactively_after_five_events() {
    let mut t = paper_at(10e9, us(20));
    // Start at 300 µs (gradient 0: event 1 of the streak, +δ), then fall by 2 µs per
    // event (all gradients negative): events 2..4 +δ, event 5 onwards +5δ.
    seg(&mut t, us(300));
    let mut want = 10e9 + 10e6;
    assert_eq!(t.rate, want);
    for (i, rtt) in [298, 296, 294, 292, 290, 288].into_iter().enumerate() {
        seg(&mut t, us(rtt));
        let streak = i as u32 + 2;
        assert_eq!(t.streak, streak);
        want += if streak >= 5 { 5.0 * 10e6 } else { 10e6 };
        assert!(close(t.rate, want), "event {streak}");
    }
    // A rise of 40 µs turns the smoothed gradient positive: a cut, the streak restarts.
    seg(&mut t, us(328));
    assert!(t.rtt_diff > 0.0);
    assert_eq!(t.streak, 0);
    assert!(t.rate < want);
}

#[test]
fn decreases_floor_at_the_minimum_rate() {
    let mut t = paper_at(20e6, us(20));
    seg(&mut t, us(5_000));
    // 20 M·(1 − 0.8·0.9) = 5.6 Mb/s, below the 10 Mb/s floor.
    assert_eq!(t.rate, 10e6);
    // A gradient above 1/β gives a negative factor: the floor again.
    let mut t = paper_at(40e9, us(20));
    seg(&mut t, us(100));
    seg(&mut t, us(200)); // diff 87.5 µs, g = 4.375
    assert_eq!(t.rate, 10e6);
}

#[test]
fn the_minimum_rtt_defaults_to_the_smallest_sample() {
    let mut t = Timely::new(TimelyConfig::paper(RateBps(G100)));
    t.rate = 40e9;
    ack(&mut t, us(1), 1_000, us(80)); // not an event, but a sample
    ack(&mut t, us(2), 15_000, us(100));
    assert_eq!(t.min_seen, Some(us(80)));
    let r0 = t.rate;
    ack(&mut t, us(3), 16_000, us(108));
    // diff = 0.875·8 µs = 7 µs, normalised by the 80 µs minimum: g = 0.0875.
    assert!(close(t.rate, r0 * (1.0 - 0.8 * 7.0 / 80.0)));
}

#[test]
fn the_fork_updates_once_per_round_trip_and_records_its_first_rtt() {
    let mut t = Timely::new(TimelyConfig::hpcc_fork(RateBps(G100)));
    t.rate = 40e9;
    // First ACK at 100 µs (RTT 80 µs): recorded, no change.
    ack(&mut t, us(100), 1_000, us(80));
    assert_eq!((t.events, t.rate, t.prev_rtt), (1, 40e9, Some(us(80))));
    // ACKs of packets sent before 100 µs are not events.
    ack(&mut t, us(150), 1_000, us(60)); // sent at 90 µs
    ack(&mut t, us(179), 1_000, us(80)); // sent at 99 µs
    assert_eq!(t.events, 1);
    // A packet sent at 100 µs: the next update. RTT 84 µs: diff 0.875·4 µs = 3.5 µs, normalised
    // by the fixed 20 µs: g = 0.175; the rate falls by β·g.
    ack(&mut t, us(184), 1_000, us(84));
    assert_eq!(t.events, 2);
    assert!(close(t.rate, 40e9 * (1.0 - 0.8 * 0.175)));
    assert_eq!(t.last_update, Some(us(184)));
}

#[test]
fn the_fork_goes_hyperactive_after_five_increases_of_either_kind() {
    let mut t = Timely::new(TimelyConfig::hpcc_fork(RateBps(G100)));
    t.rate = 10e9;
    let mut now = 0u64;
    let mut next = |t: &mut Timely, rtt: u64| {
        now += 1_000;
        ack(t, us(now), 1_000, us(rtt));
    };
    next(&mut t, 30); // recorded
                      // RTT 30 µs < T_low: increases 1..5 add ai (100 Mb/s), the sixth and seventh hai
                      // (500 Mb/s).
    let mut want = 10e9;
    for i in 1..=7 {
        next(&mut t, 30);
        want += if i <= 5 { 100e6 } else { 500e6 };
        assert!(close(t.rate, want), "increase {i}");
    }
    // RTT 600 µs > T_high: R·(1 − 0.8·(1 − 500/600)), and the count restarts.
    next(&mut t, 600);
    want *= 1.0 - 0.8 * (1.0 - 500.0 / 600.0);
    assert!(close(t.rate, want));
    assert_eq!(t.streak, 0);
    next(&mut t, 30);
    assert!(close(t.rate, want + 100e6));
}

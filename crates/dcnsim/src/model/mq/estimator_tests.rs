//! The estimators of `model/aqm/` driven by a scheduler: MQ-ECN's round time fed by DWRR
//! through [`RoundObserver`], and Bai et al. 2016's departure-rate estimate (Algorithm 1) on
//! the departures of a DWRR port (Fig. 2). Here rather than beside the disciplines so that
//! `model/aqm/` does not name the queues.

use super::testutil::pkt;
use super::{MultiQueue, SchedConfig};
use crate::base::units::{RateBps, SimTime};
use crate::model::aqm::dqrate::*;
use crate::model::aqm::mqecn::*;

const G10: RateBps = RateBps(10_000_000_000);

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
}

use crate::model::aqm::dqrate::testutil::cfg;

/// Drive DWRR at line rate (one dequeue per transmission time) with `n` saturated queues
/// of 1500-B packets and quantum `quantum`: T_round converges to n × quantum / C.
#[test]
fn dwrr_round_time_converges_and_threshold_is_the_fair_share() {
    for (n, quantum) in [(2usize, 1500u32), (2, 18_000), (4, 3000)] {
        let cfg = SchedConfig::Dwrr {
            quanta: vec![quantum; n],
        };
        let mut mq = MultiQueue::<crate::base::packet::Packet>::new(n, &cfg, 64).unwrap();
        mq.set_mqecn(MqEcn::new(MqEcnConfig::new(G10, vec![quantum; n])).unwrap())
            .unwrap();
        let tx = G10.tx_time(1500);
        let mut now = SimTime::ZERO;
        for _ in 0..20_000 {
            for q in 0..n {
                while mq.queue(q).len() < 40 {
                    let mut p = pkt(q as u8, 1500);
                    p.enq_time = now;
                    mq.enqueue(q, p);
                }
            }
            mq.dequeue(now).unwrap();
            now = now + tx;
        }
        let m = mq.mqecn().unwrap();
        let want = n as f64 * quantum as f64 * 8.0 / 1e10;
        assert!(
            (m.round_time() - want).abs() < 0.01 * want,
            "{} vs {want}",
            m.round_time()
        );
        let th = m.threshold_pkts(0);
        assert!((th - 65.0 / n as f64).abs() < 0.01 * 65.0, "{th}");
    }
}

#[test]
fn queue_emptying_and_port_idle_through_multiqueue() {
    let cfg = SchedConfig::Dwrr {
        quanta: vec![1500, 1500],
    };
    let mut mq = MultiQueue::<crate::base::packet::Packet>::new(2, &cfg, 8).unwrap();
    mq.set_mqecn(MqEcn::new(MqEcnConfig::new(G10, vec![1500, 1500])).unwrap())
        .unwrap();
    // One packet into queue 0 at 0, sent at 0: sample 0 + 1.2 µs − 0.
    mq.enqueue(0, pkt(0, 1500));
    mq.dequeue(SimTime::ZERO).unwrap();
    let m = mq.mqecn().unwrap();
    assert_eq!(m.samples(), 1);
    assert!(close(m.round_time(), 0.25 * 1.2e-6));
    // The link went idle when that packet left the wire, at 1.2 µs; an arrival at
    // 12 µs (10.8 µs idle = 9 T_idle) decays T by 0.75^9.
    let before = m.round_time();
    let mut p = pkt(1, 1500);
    p.enq_time = SimTime::from_us(12);
    mq.enqueue(1, p);
    assert!(close(
        mq.mqecn().unwrap().round_time(),
        before * 0.75f64.powi(9)
    ));
}

/// Packets arriving one at a time at an empty port, each exactly when the previous one
/// has left the wire: the link never idles, so T_round must not decay. A packet that
/// arrives while the last one is still on the wire does not decay it either; a real gap
/// decays it by β^⌊gap / T_idle⌋, the gap counted from the end of the transmission.
#[test]
fn back_to_back_arrivals_are_not_idle() {
    let cfg = SchedConfig::Dwrr {
        quanta: vec![18_000, 18_000],
    };
    let mut mq = MultiQueue::<crate::base::packet::Packet>::new(2, &cfg, 8).unwrap();
    mq.set_mqecn(MqEcn::new(MqEcnConfig::new(G10, vec![18_000, 18_000])).unwrap())
        .unwrap();
    let at = SimTime::from_ns;
    let send = |mq: &mut MultiQueue, q: usize, t: SimTime| {
        let mut p = pkt(q as u8, 1500);
        p.enq_time = t;
        mq.enqueue(q, p);
        mq.dequeue(t).unwrap();
    };
    // 0: one packet, sent at once; it empties queue 0: sample 1.2 µs.
    send(&mut mq, 0, at(0));
    let t1 = 0.25 * 1.2e-6;
    assert!(close(mq.mqecn().unwrap().round_time(), t1));
    // 1.2 µs: the next arrives as the first leaves the wire — no decay, sample 1.2 µs.
    send(&mut mq, 0, at(1200));
    let t2 = 0.75 * t1 + 0.25 * 1.2e-6;
    assert!(close(mq.mqecn().unwrap().round_time(), t2));
    // 3.0 µs: the link has been idle since 2.4 µs, 0.6 µs < T_idle — no decay.
    send(&mut mq, 1, at(3000));
    let t3 = 0.75 * t2 + 0.25 * 1.2e-6;
    assert!(close(mq.mqecn().unwrap().round_time(), t3));
    // 3.6 µs: while the 3.0 µs packet is on the wire (until 4.2 µs): no decay.
    send(&mut mq, 0, at(3600));
    let t4 = 0.75 * t3 + 0.25 * 1.2e-6;
    assert!(close(mq.mqecn().unwrap().round_time(), t4));
    // That packet leaves the wire at 4.8 µs; an arrival at 4.8 + 3.6 + 0.5 µs
    // (idle 4.1 µs = 3.42 T_idle) decays T_round by β³ before its own sample.
    let m = mq.mqecn().unwrap().clone();
    let mut p = pkt(1, 1500);
    p.enq_time = at(8900);
    mq.enqueue(1, p);
    assert!(close(
        mq.mqecn().unwrap().round_time(),
        m.round_time() * 0.75f64.powi(3)
    ));
    assert_eq!(mq.mqecn().unwrap().samples(), 4);
}

#[test]
fn mqecn_needs_a_dwrr_scheduler() {
    let mut mq = MultiQueue::<crate::base::packet::Packet>::new(2, &SchedConfig::Sp, 8).unwrap();
    let m = MqEcn::new(MqEcnConfig::new(G10, vec![1500, 1500])).unwrap();
    assert!(mq.set_mqecn(m).is_err());
}

/// Bai et al. 2016 Fig. 2: DWRR with two saturated queues of quantum 18 KB at 10 Gb/s; queue 1
/// gets 5 Gb/s in bursts of 12 packets every 28.8 µs.
fn fig2(thresh: u64) -> (DqRate, Vec<(SimTime, f64)>) {
    let sched = SchedConfig::Dwrr {
        quanta: vec![18_000, 18_000],
    };
    let mut mq = MultiQueue::<crate::base::packet::Packet>::new(2, &sched, 128).unwrap();
    let mut d = DqRate::new(cfg(thresh, false)).unwrap();
    let tx = DEFAULT_INITIAL_RATE.tx_time(1500);
    let mut now = SimTime::ZERO;
    let mut out = vec![];
    while now < SimTime::from_ms(2) {
        for q in 0..2 {
            while mq.queue(q).len() < 100 {
                mq.enqueue(q, pkt(q as u8, 1500));
            }
        }
        let (q, p) = mq.dequeue(now).unwrap();
        if q == 0 {
            if let Some(s) = d.on_departure(now, mq.queue(0).bytes(), p.size) {
                out.push((now, s));
            }
        }
        now = now + tx;
    }
    (d, out)
}

#[test]
fn fig2_40kb_threshold_few_accurate_samples() {
    let (d, s) = fig2(40_000);
    // Paper: "only 29 sample rates in 2ms period".
    assert_eq!(s.len(), 29);
    // Every sample spans 27 packets over 2 rounds + 3 packets = 61.2 µs: 5.29 Gb/s.
    for (_, r) in &s {
        assert!((r - 40_500.0 * 8.0 / 61.2e-6).abs() < 1.0, "{r}");
    }
    // Smoothed from 10 Gb/s: still ≥ 5.3 Gb/s + 4.7·0.875^29 after 2 ms (slow).
    assert!(d.avg_rate_bps() > 5.35e9 && d.avg_rate_bps() < 5.6e9);
}

#[test]
fn fig2_10kb_threshold_samples_swing_between_10_and_3_7_gbps() {
    let (d, s) = fig2(10_000);
    let hi = s.iter().map(|x| x.1).fold(0.0, f64::max);
    let lo = s.iter().map(|x| x.1).fold(f64::MAX, f64::min);
    // Within a round: 7 packets in 8.4 µs = 10 Gb/s; across a round: 7 packets in
    // 8.4 + 14.4 µs = 3.68 Gb/s (paper: "oscillate between 3.7Gbps and 10Gbps").
    assert!((hi - 10e9).abs() < 1.0, "{hi}");
    assert!((lo - 10_500.0 * 8.0 / 22.8e-6).abs() < 1.0, "{lo}");
    for (_, r) in &s {
        assert!((r - hi).abs() < 1.0 || (r - lo).abs() < 1.0);
    }
    // Paper: the smoothed estimate stays above 6 Gb/s (true capacity 5 Gb/s).
    let avg = d.avg_rate_bps();
    assert!(avg > 6e9 && avg < 9e9, "{avg}");
}

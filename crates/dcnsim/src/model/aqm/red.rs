//! Floyd–Jacobson RED (Random Early Detection Gateways for Congestion Avoidance, 1993)
//! with the count mechanism, the ns-2/ns-3 `wait` variant, `gentle`, idle-time decay of the
//! average, and ECN (docs/models.md §5.4). Where RED decides to drop it answers `Mark`: an
//! ECN-capable packet is marked instead and a non-ECT packet is dropped (RFC 3168 §5;
//! [`MarkReason::if_not_ect`]). `instantaneous` uses the current queue as the average
//! (w_q = 1). Simplifications: no byte-mode probability scaling, no ns-3 `q > 1` guard.
//! `count = false` drops the count mechanism: every arrival between the thresholds is marked
//! independently with p_b, the congestion point of DCQCN (Zhu et al., "Congestion Control
//! for Large-Scale RDMA Deployments", SIGCOMM 2015; docs/models.md §11.4).
//!
//! Per port one instance on the port's total backlog (random stream `0x2_0000 + port`); per
//! class queue one instance per queue (stream `0x3_0000 + 64·port + queue`). The queue
//! compared is the one *excluding* the arrival, in packets or bytes as the thresholds are
//! given; an empty-queue notice starts the idle decay.

use super::{Aqm, Backlog, Build, Built, Entry, KeyError, QueueUnit, Scope, Verdict};
use crate::base::rng::Rng;
use crate::base::units::SimTime;

#[cfg(doc)]
use super::MarkReason;

/// RED parameters (defaults and sources in `scenario/mod.rs` / `schema.txt`).
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    pub unit: QueueUnit,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    /// ns-2/ns-3 `wait_`: space marks out more evenly (p_a = 0 while count·p_b < 1).
    pub wait: bool,
    /// Compare the instantaneous queue instead of the EWMA.
    pub instantaneous: bool,
    /// Floyd–Jacobson's count (p_a grows with the arrivals since the last mark); false:
    /// mark each arrival independently with p_b (`wait` then has no effect).
    pub count: bool,
    /// Transmission time of a mean-sized packet on this port (idle decay of avg).
    pub mean_pkt_time: SimTime,
}

#[derive(Clone, Debug)]
pub struct Red {
    pub p: RedParams,
    pub avg: f64,
    /// Packets since the last mark/drop (Floyd–Jacobson `count`).
    pub count: u64,
    /// Whether the average was above min_th at the previous arrival (ns-3 `m_old`).
    pub old: bool,
    pub idle: bool,
    pub idle_since: SimTime,
    pub rng: Rng,
}

impl Red {
    pub fn new(p: RedParams, rng: Rng) -> Red {
        Red {
            p,
            avg: 0.0,
            count: 0,
            old: false,
            idle: true,
            idle_since: SimTime::ZERO,
            rng,
        }
    }

    /// RED on one arrival; `q` is the queue excluding the arriving packet. Returns true
    /// for "congestion" (mark or drop).
    pub(crate) fn congested(&mut self, now: SimTime, q: f64) -> bool {
        let p = &self.p;
        if p.instantaneous {
            self.avg = q;
        } else {
            if self.idle {
                // Floyd–Jacobson: decay as if m small packets had arrived to an empty queue.
                let m = now
                    .0
                    .saturating_sub(self.idle_since.0)
                    .checked_div(p.mean_pkt_time.0)
                    .unwrap_or(0);
                self.avg *= (1.0 - p.w_q).powi(m.min(i32::MAX as u64) as i32);
            }
            self.avg = (1.0 - p.w_q) * self.avg + p.w_q * q;
        }
        self.idle = false;
        self.count += 1;
        let avg = self.avg;
        if avg < p.min_th {
            self.old = false;
            return false;
        }
        if (!p.gentle && avg >= p.max_th) || (p.gentle && avg >= 2.0 * p.max_th) {
            self.count = 0; // forced mark/drop
            return true;
        }
        if !p.count {
            let p_b = Self::p_b(p, avg);
            return self.rng.uniform() < p_b;
        }
        if !self.old {
            // First arrival above min_th: restart the count, no mark (ns-2/ns-3).
            self.old = true;
            self.count = 1;
            return false;
        }
        let p_b = Self::p_b(p, avg);
        let cp = self.count as f64 * p_b;
        let p_a = if p.wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p_b / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p_b / (1.0 - cp)
        } else {
            1.0
        };
        if self.rng.uniform() < p_a {
            self.count = 0;
            true
        } else {
            false
        }
    }
}

impl Red {
    /// The marking probability p_b at `avg` between min_th and the forced-mark level: linear
    /// from 0 at min_th to max_p at max_th, then (gentle) to 1 at 2·max_th.
    #[inline]
    fn p_b(p: &RedParams, avg: f64) -> f64 {
        if avg < p.max_th {
            p.max_p * (avg - p.min_th) / (p.max_th - p.min_th)
        } else {
            // gentle region [max_th, 2·max_th)
            p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th
        }
    }

    /// Decide for an arrival (or a departure) given the queue `b` excluding the packet:
    /// `Mark` for "congestion" (the port drops a non-ECT packet instead).
    #[inline]
    pub fn decide(&mut self, now: SimTime, b: Backlog) -> Verdict {
        let q = match self.p.unit {
            QueueUnit::Packets => b.pkts as f64,
            QueueUnit::Bytes => b.bytes as f64,
        };
        if self.congested(now, q) {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }

    /// The queue became empty; the link goes idle at `idle_at`.
    #[inline]
    pub fn queue_empty(&mut self, idle_at: SimTime) {
        self.idle = true;
        self.idle_since = idle_at;
    }
}

/// `kind = "red"`: thresholds (same unit, min ≤ max), max_p and w_q in (0, 1], the queue
/// compared ("average" or "instantaneous") and the mean packet size of the idle decay.
fn build(b: &Build) -> Result<Built, KeyError> {
    let k = b.keys;
    if k.given("k") {
        return Err(KeyError::new(
            "k",
            "only for kind = \"step\" (RED uses min_th/max_th)",
        ));
    }
    let (min, max) = (k.min_th, k.max_th);
    if min.1 != max.1 {
        return Err(KeyError::new(
            "max_th",
            "min_th and max_th must use the same unit (both packets or both bytes)",
        ));
    }
    if min.0 > max.0 {
        return Err(KeyError::new("max_th", "must not be below min_th"));
    }
    if !(k.max_p > 0.0 && k.max_p <= 1.0) {
        let m = format!("{} is out of range: expected 0 < max_p <= 1", k.max_p);
        return Err(KeyError::new("max_p", m));
    }
    if !(k.w_q > 0.0 && k.w_q <= 1.0) {
        let m = format!("{} is out of range: expected 0 < w_q <= 1", k.w_q);
        return Err(KeyError::new("w_q", m));
    }
    let instantaneous = match k.queue.as_str() {
        "average" => false,
        "instantaneous" => true,
        o => {
            let m = format!("unknown {o:?}: expected \"average\" or \"instantaneous\"");
            return Err(KeyError::new("queue", m));
        }
    };
    let mean = k.mean_pkt_size;
    if mean == 0 || mean > 65535 {
        return Err(KeyError::new("mean_pkt_size", "expected 1..65535 bytes"));
    }
    let p = RedParams {
        min_th: min.0 as f64,
        max_th: max.0 as f64,
        unit: min.1,
        max_p: k.max_p,
        w_q: k.w_q,
        gentle: k.gentle,
        wait: k.wait,
        instantaneous,
        count: k.count,
        mean_pkt_time: b.rate.tx_time(mean as u32),
    };
    // One random stream per port (or per class queue), derived from the scenario seed.
    let stream = match b.queue {
        None => 0x2_0000 + b.port as u64,
        Some(q) => 0x3_0000 + b.port as u64 * 64 + q as u64,
    };
    let aqm = Aqm::Red(Box::new(Red::new(p, Rng::new(b.seed, stream))));
    Ok(Built::new(aqm, k.at))
}

/// Registry entry: per port, or one instance per class queue.
pub const ENTRY: Entry = Entry {
    name: "red",
    port: true,
    queues: Some(Scope::PerQueue),
    build,
};

#[cfg(test)]
mod tests {
    use super::super::{Step, View};
    use super::*;
    use crate::base::packet::{Ecn, Packet};
    use crate::model::aqm::testutil::pkt;

    /// The arrival-time verdict of `a` for `p` with `q` packets (`bytes`) queued.
    fn d(a: &mut Aqm, now: SimTime, p: &Packet, q: u64, bytes: u64) -> Verdict {
        a.enqueue(now, p, View::port(Backlog { pkts: q, bytes }))
    }

    fn red(min: f64, max: f64, gentle: bool, instantaneous: bool) -> Aqm {
        Aqm::Red(Box::new(Red::new(
            RedParams {
                min_th: min,
                max_th: max,
                unit: QueueUnit::Packets,
                max_p: 0.1,
                w_q: 0.002,
                gentle,
                wait: true,
                instantaneous,
                count: true,
                mean_pkt_time: SimTime::from_us(12),
            },
            Rng::new(1, 2),
        )))
    }

    #[test]
    fn red_average_below_min_never_marks() {
        let mut a = red(5.0, 15.0, true, false);
        // A queue of 100 packets for 1000 arrivals keeps avg = 100·(1 − 0.998^k) < 5 for
        // k ≤ 25; every one of those arrivals passes.
        for k in 0..25 {
            assert_eq!(
                d(&mut a, SimTime::from_us(k), &pkt(Ecn::Ect0), 100, 150_000),
                Verdict::Pass
            );
        }
        if let Aqm::Red(r) = &a {
            assert!(r.avg < 5.0);
        }
    }

    #[test]
    fn red_instantaneous_above_max_always_signals() {
        for gentle in [false, true] {
            let mut a = red(5.0, 15.0, gentle, true);
            let q = if gentle { 30 } else { 15 };
            for _ in 0..100 {
                assert_eq!(
                    d(&mut a, SimTime::ZERO, &pkt(Ecn::Ect0), q, 0),
                    Verdict::Mark
                );
                assert_eq!(d(&mut a, SimTime::ZERO, &pkt(Ecn::Ce), q, 0), Verdict::Mark);
                // The port turns this one into a drop (`engine::net::resolve`).
                assert_eq!(
                    d(&mut a, SimTime::ZERO, &pkt(Ecn::NotEct), q, 0),
                    Verdict::Mark
                );
            }
            // Below min_th: never.
            for _ in 0..100 {
                assert_eq!(
                    d(&mut a, SimTime::ZERO, &pkt(Ecn::NotEct), 4, 0),
                    Verdict::Pass
                );
            }
        }
    }

    #[test]
    fn red_dctcp_emulation_marks_at_k() {
        // w_q = 1 (instantaneous), min_th = max_th = K, not gentle: mark iff q ≥ K, i.e.
        // the queue including the arrival exceeds K — the step rule.
        let mut a = red(20.0, 20.0, false, true);
        let mut s = Aqm::Step(Step {
            k: 20,
            unit: QueueUnit::Packets,
        });
        for q in 0..40 {
            let p = pkt(Ecn::Ect0);
            assert_eq!(
                d(&mut a, SimTime::ZERO, &p, q, 0),
                d(&mut s, SimTime::ZERO, &p, q, 0),
                "q = {q}"
            );
        }
    }

    #[test]
    fn red_count_spaces_marks_between_min_and_max() {
        // Constant avg in the linear region: p_b = 0.1·(10 − 5)/10 = 0.05. With `wait`,
        // no mark while count·p_b < 1, so at least 19 arrivals between marks; after 40
        // (count·p_b ≥ 2) the mark is certain.
        let mut a = red(5.0, 15.0, false, true);
        let mut last = None;
        let mut gaps = Vec::new();
        for i in 0..2000u64 {
            if d(&mut a, SimTime::ZERO, &pkt(Ecn::Ect0), 10, 0) == Verdict::Mark {
                if let Some(l) = last {
                    gaps.push(i - l);
                }
                last = Some(i);
            }
        }
        assert!(gaps.len() > 20);
        assert!(gaps.iter().all(|&g| (20..=40).contains(&g)), "{gaps:?}");
    }

    /// DCQCN's congestion point: RED with `count = false` on the instantaneous queue in
    /// bytes (Kmin = 5 KB, Kmax = 200 KB, Pmax = 1 %).
    fn dcqcn_red() -> Red {
        Red::new(
            RedParams {
                min_th: 5_000.0,
                max_th: 200_000.0,
                unit: QueueUnit::Bytes,
                max_p: 0.01,
                w_q: 0.002,
                gentle: false,
                wait: true,
                instantaneous: true,
                count: false,
                mean_pkt_time: SimTime::from_us(12),
            },
            Rng::new(7, 3),
        )
    }

    #[test]
    fn red_without_count_marks_each_packet_independently_with_p_b() {
        let mut r = dcqcn_red();
        // A replica of the stream: one uniform per arrival between the thresholds, marked
        // iff below p = Pmax·(q − Kmin)/(Kmax − Kmin); none below Kmin, all from Kmax (no
        // draw), whatever came before (no count, no skipped first arrival).
        let mut rng = Rng::new(7, 3);
        let b = |bytes| Backlog { pkts: 1, bytes };
        let mut marks = 0u32;
        for i in 0..30_000u64 {
            let q = [0, 4_999, 5_000, 102_500, 199_999, 200_000, 500_000][i as usize % 7];
            let want = if q < 5_000 {
                false
            } else if q >= 200_000 {
                true
            } else {
                let p = 0.01 * (q as f64 - 5_000.0) / 195_000.0;
                rng.uniform() < p
            };
            let got = r.decide(SimTime::ZERO, b(q)) == Verdict::Mark;
            assert_eq!(got, want, "arrival {i}, q = {q}");
            marks += (q == 102_500 && got) as u32;
        }
        // At the midpoint p = 0.5 %: about 21 of its 4286 arrivals (binomial sd 4.6).
        assert!((5..=40).contains(&marks), "{marks}");
    }

    #[test]
    fn red_without_count_hits_the_probability_in_the_long_run() {
        for (q, p) in [(43_999u64, 0.002), (102_500, 0.005), (180_500, 0.009)] {
            let mut r = dcqcn_red();
            let n = 200_000;
            let b = Backlog { pkts: 1, bytes: q };
            let m = (0..n)
                .filter(|_| r.decide(SimTime::ZERO, b) == Verdict::Mark)
                .count() as f64;
            let want = n as f64 * p;
            // Independent marks: binomial, well within 5 standard deviations.
            let sd = (n as f64 * p * (1.0 - p)).sqrt();
            assert!((m - want).abs() < 5.0 * sd, "q = {q}: {m} vs {want}");
        }
    }

    #[test]
    fn red_idle_time_decays_the_average() {
        let mut a = red(5.0, 15.0, true, false);
        if let Aqm::Red(r) = &mut a {
            r.avg = 10.0;
            r.idle = false;
        }
        a.queue_empty(SimTime::from_us(100));
        // Idle 120 us = 10 mean packet times: avg = 10·0.998^10, then one arrival at q = 0.
        d(&mut a, SimTime::from_us(220), &pkt(Ecn::Ect0), 0, 0);
        if let Aqm::Red(r) = &a {
            let want = 10.0 * 0.998f64.powi(10) * 0.998;
            assert!((r.avg - want).abs() < 1e-12, "{} vs {want}", r.avg);
        }
    }
}

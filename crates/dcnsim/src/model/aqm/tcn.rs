//! TCN, Time-based Congestion Notification (the TCN paper: Bai et al., "Enabling ECN over Generic Packet
//! Scheduling", CoNEXT 2016, §4.1–4.3;
//! docs/models.md §5.1; TCN-NS2 `prio_dwrr.cc`/`prio_wfq.cc` `tcn_mark`).
//!
//! At dequeue (when the scheduler picks the packet, before its transmission starts): mark CE
//! iff the packet is ECT and its sojourn time `now − enq_time` is **strictly** greater than
//! T. The model answers a [`Verdict`] (`Mark` when the sojourn exceeds T); the port sets CE
//! and lets a non-ECT packet pass (`engine::net::apply_verdict`). Stateless, per packet, the same T for every queue of the port, independent of the
//! scheduler. The sojourn excludes the packet's own serialisation.
//!
//! Probabilistic variant (§4.3): sojourn ≤ T_min → no mark; > T_max → mark; in between mark
//! with probability `P_max·(s − T_min)/(T_max − T_min)`. **Assumption**: the paper gives no
//! formula; the RED-like line is our choice (docs/models.md §7 item 6). No public code implements it.

use super::{Aqm, AqmAt, Build, Built, Entry, KeyError, Scope, Verdict};
use crate::base::packet::Packet;
use crate::base::rng::Rng;
use crate::base::units::{RateBps, SimTime};

/// Default T = 78 µs: DCTCP at 10 Gb/s, K = 65 packets × 1500 B × 8 / 10 Gb/s (Bai et al. 2016 §6,
/// docs/models.md §5.1; 101 µs for ECN*, 256 µs on the 1 Gb/s testbed).
pub const DEFAULT_T: SimTime = SimTime(78_000_000);

/// T derived from a packet threshold as TCN-NS2 does: `K × mean_pkt × 8 / C`
/// (65 packets at 10 Gb/s → 78 µs; 84 → 100.8 µs).
pub fn threshold_from_packets(k_pkts: u32, mean_pkt: u32, link: RateBps) -> SimTime {
    link.tx_time(k_pkts.saturating_mul(mean_pkt))
}

fn mark_if(congested: bool) -> Verdict {
    if congested {
        Verdict::Mark
    } else {
        Verdict::Pass
    }
}

/// Deterministic TCN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tcn {
    t: SimTime,
}

impl Default for Tcn {
    fn default() -> Self {
        Tcn { t: DEFAULT_T }
    }
}

impl Tcn {
    pub fn new(t: SimTime) -> Result<Tcn, String> {
        if t.is_never() {
            return Err("TCN threshold must be finite".into());
        }
        Ok(Tcn { t })
    }
    pub fn threshold(&self) -> SimTime {
        self.t
    }
    /// Would a packet enqueued at `enq` and dequeued at `now` be marked (if ECT)?
    #[inline]
    pub fn over(&self, enq: SimTime, now: SimTime) -> bool {
        now - enq > self.t
    }
    /// Dequeue-side decision: `Mark` iff the sojourn of `p` exceeds T.
    #[inline]
    pub fn on_dequeue(&self, p: &Packet, now: SimTime) -> Verdict {
        mark_if(self.over(p.enq_time, now))
    }
}

/// Probabilistic TCN (T_min, T_max, P_max).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbTcn {
    t_min: SimTime,
    t_max: SimTime,
    p_max: f64,
}

impl Default for ProbTcn {
    /// T_min = T_max = 78 µs, P_max = 1: no source gives values, so the default reduces
    /// exactly to deterministic TCN with its default T.
    fn default() -> Self {
        ProbTcn {
            t_min: DEFAULT_T,
            t_max: DEFAULT_T,
            p_max: 1.0,
        }
    }
}

impl ProbTcn {
    pub fn new(t_min: SimTime, t_max: SimTime, p_max: f64) -> Result<ProbTcn, String> {
        if t_min > t_max || t_max.is_never() {
            return Err(format!(
                "TCN needs T_min ≤ T_max (finite), got {t_min} and {t_max}"
            ));
        }
        if !(p_max > 0.0 && p_max <= 1.0) {
            return Err(format!("TCN P_max must be in (0, 1], got {p_max}"));
        }
        Ok(ProbTcn {
            t_min,
            t_max,
            p_max,
        })
    }

    /// Marking probability for sojourn `s` (assumed linear between T_min and T_max).
    pub fn probability(&self, s: SimTime) -> f64 {
        if s <= self.t_min {
            0.0
        } else if s > self.t_max {
            1.0
        } else {
            self.p_max * (s - self.t_min).ps() as f64 / (self.t_max - self.t_min).ps() as f64
        }
    }

    /// Dequeue-side decision; draws from `rng` only for an ECN-capable packet in the
    /// (T_min, T_max] band (a packet that cannot be marked passes without a draw).
    pub fn on_dequeue(&self, p: &Packet, now: SimTime, rng: &mut Rng) -> Verdict {
        if !p.is_ect() {
            return Verdict::Pass;
        }
        let s = now - p.enq_time;
        let m = if s <= self.t_min {
            false
        } else if s > self.t_max {
            true
        } else {
            rng.uniform() < self.probability(s)
        };
        mark_if(m)
    }
}

/// Probabilistic TCN with the port's random stream (`0x4_0000 + port`): one instance for
/// all the queues of a port, so the draws interleave across its queues as they depart.
#[derive(Clone, Debug)]
pub struct ProbTcnMarker {
    pub tcn: ProbTcn,
    pub rng: Rng,
}

impl ProbTcnMarker {
    /// [`ProbTcn::on_dequeue`] with the port's stream.
    #[inline]
    pub fn on_dequeue(&mut self, p: &Packet, now: SimTime) -> Verdict {
        self.tcn.on_dequeue(p, now, &mut self.rng)
    }
}

/// `kind = "tcn"`: T from `threshold`; decides at dequeue.
fn build(b: &Build) -> Result<Built, KeyError> {
    let t = Tcn::new(b.keys.threshold).map_err(|e| KeyError::new("threshold", e))?;
    Ok(Built::new(Aqm::Tcn(t), AqmAt::Dequeue))
}

/// `kind = "prob_tcn"`: `t_min` and `t_max` required, `p_max`; decides at dequeue.
fn build_prob(b: &Build) -> Result<Built, KeyError> {
    let k = b.keys;
    let t_min = k
        .t_min
        .ok_or_else(|| KeyError::new("t_min", "prob_tcn needs t_min"))?;
    let t_max = k
        .t_max
        .ok_or_else(|| KeyError::new("t_max", "prob_tcn needs t_max"))?;
    let tcn = ProbTcn::new(t_min, t_max, k.p_max).map_err(|e| KeyError::new("t_max", e))?;
    let rng = Rng::new(b.seed, 0x4_0000 + b.port as u64);
    let aqm = Aqm::ProbTcn(Box::new(ProbTcnMarker { tcn, rng }));
    Ok(Built::new(aqm, AqmAt::Dequeue))
}

/// Registry entry: TCN, one stateless instance for a port's queues.
pub const ENTRY: Entry = Entry {
    name: "tcn",
    port: false,
    queues: Some(Scope::Shared),
    build,
};

/// Registry entry: probabilistic TCN, one instance (one random stream) per port.
pub const PROB_ENTRY: Entry = Entry {
    name: "prob_tcn",
    port: false,
    queues: Some(Scope::Shared),
    build: build_prob,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::packet::Ecn;
    use crate::model::aqm::testutil::pkt_of as pkt;

    #[test]
    fn default_threshold_matches_k65_at_10g() {
        let t = threshold_from_packets(65, 1500, RateBps(10_000_000_000));
        assert_eq!(t, DEFAULT_T);
        let t = threshold_from_packets(84, 1500, RateBps(10_000_000_000));
        assert_eq!(t, SimTime(100_800_000));
    }

    #[test]
    fn marks_exactly_packets_whose_sojourn_exceeds_t() {
        let tcn = Tcn::new(SimTime::from_us(78)).unwrap();
        let now = SimTime::from_ms(10);
        let t = tcn.threshold().ps();
        for (sojourn_ps, want) in [
            (0, false),
            (t - 1, false),
            (t, false), // equal: not marked
            (t + 1, true),
            (10 * t, true),
        ] {
            let mut p = pkt(0, 1500);
            p.enq_time = SimTime(now.ps() - sojourn_ps);
            assert_eq!(
                tcn.on_dequeue(&p, now) == Verdict::Mark,
                want,
                "{sojourn_ps}"
            );
            // The model never writes the packet: the port does.
            assert_eq!(p.ecn, Ecn::Ect0);
        }
        // The sojourn alone decides; the port lets a non-ECT packet pass.
        let mut p = pkt(0, 1500);
        p.ecn = Ecn::NotEct;
        p.enq_time = SimTime::ZERO;
        assert_eq!(tcn.on_dequeue(&p, now), Verdict::Mark);
        // Enqueue time after now (clock skew) saturates to zero sojourn.
        let mut p = pkt(0, 1500);
        p.enq_time = SimTime::from_ms(11);
        assert_eq!(tcn.on_dequeue(&p, now), Verdict::Pass);
    }

    #[test]
    fn marks_by_sojourn_in_a_scripted_queue() {
        // 20 packets arrive every 10 µs; the port dequeues one every 12 µs (1500 B at 1 Gb/s).
        // Packet i arrives at 10i µs and leaves at 12i µs: sojourn 2i µs. T = 20 µs marks
        // exactly i > 10.
        let tcn = Tcn::new(SimTime::from_us(20)).unwrap();
        let marked: Vec<bool> = (0..20u64)
            .map(|i| {
                let mut p = pkt(0, 1500);
                p.enq_time = SimTime::from_us(10 * i);
                tcn.on_dequeue(&p, SimTime::from_us(12 * i)) == Verdict::Mark
            })
            .collect();
        let want: Vec<bool> = (0..20).map(|i| i > 10).collect();
        assert_eq!(marked, want);
    }

    #[test]
    fn probabilistic_variant_is_linear_between_thresholds() {
        let pt = ProbTcn::new(SimTime::from_us(50), SimTime::from_us(150), 0.5).unwrap();
        assert_eq!(pt.probability(SimTime::from_us(50)), 0.0);
        assert_eq!(pt.probability(SimTime::from_us(100)), 0.25);
        assert_eq!(pt.probability(SimTime::from_us(150)), 0.5);
        assert_eq!(pt.probability(SimTime(150_000_001)), 1.0);
        let mut rng = Rng::new(1, 2);
        let now = SimTime::from_ms(1);
        let mut marks = 0;
        let n = 100_000;
        for _ in 0..n {
            let mut p = pkt(0, 1500);
            p.enq_time = now - SimTime::from_us(100);
            if pt.on_dequeue(&p, now, &mut rng) == Verdict::Mark {
                marks += 1;
            }
        }
        let f = marks as f64 / n as f64;
        assert!((f - 0.25).abs() < 0.01, "{f}");
        // Below T_min never, above T_max always.
        for (s, want) in [(40u64, false), (151, true)] {
            let mut p = pkt(0, 1500);
            p.enq_time = now - SimTime::from_us(s);
            assert_eq!(pt.on_dequeue(&p, now, &mut rng) == Verdict::Mark, want);
        }
        // Same seed, same draws.
        let mut a = Rng::new(9, 9);
        let mut b = Rng::new(9, 9);
        for _ in 0..100 {
            let mut p = pkt(0, 1500);
            p.enq_time = now - SimTime::from_us(100);
            assert_eq!(
                pt.on_dequeue(&p, now, &mut a),
                pt.on_dequeue(&p, now, &mut b)
            );
        }
    }

    #[test]
    fn default_probabilistic_equals_deterministic() {
        let (pt, t) = (ProbTcn::default(), Tcn::default());
        let mut rng = Rng::new(0, 0);
        let now = SimTime::from_ms(1);
        for s in [0, 77_999_999u64, 78_000_000, 78_000_001, 200_000_000] {
            let mut p = pkt(0, 1500);
            p.enq_time = now - SimTime(s);
            assert_eq!(pt.on_dequeue(&p, now, &mut rng), t.on_dequeue(&p, now));
        }
    }

    #[test]
    fn bad_configs_are_rejected() {
        assert!(ProbTcn::new(SimTime(2), SimTime(1), 0.5).is_err());
        assert!(ProbTcn::new(SimTime(1), SimTime(2), 0.0).is_err());
        assert!(ProbTcn::new(SimTime(1), SimTime(2), 1.5).is_err());
        assert!(ProbTcn::new(SimTime(1), SimTime(2), f64::NAN).is_err());
        assert!(Tcn::new(SimTime::NEVER).is_err());
    }
}

//! Active queue management at a switch egress port: accept, ECN-mark or drop a packet at
//! enqueue (or, as an option, at dequeue). One small enum, `Aqm`, called from
//! `Core::enqueue` / `Core::on_port_tx_done`.
//!
//! [`Verdict`] is the one answer of every AQM of the crate (RED and step here; TCN, CoDel,
//! MQ-ECN and the dequeue-rate threshold in `model/mq/`). As in ns-3's queue discs, an AQM
//! only decides: the port applies the verdict and counts it under a named reason
//! (`engine::net::apply_verdict`), and no model writes CE into a packet. A `Mark` says
//! "signal congestion"; for a packet that is not ECN-capable the port turns it into what
//! the marker's rule says (RED: drop; the others: pass).
//!
//! - `Step`: the DCTCP switch rule (DCTCP paper §3.1; MODELS.md §3.1): `Mark` if the queue
//!   *including the arrival* exceeds K (packets or bytes). Non-ECT packets then pass (as
//!   TCN-NS2's marking and the ns-2 DCTCP patch); only tail drop applies to them.
//! - `Red`: Floyd–Jacobson RED (1993) with the count mechanism, the ns-2/ns-3 `wait`
//!   variant, `gentle`, idle-time decay of the average, and ECN (MODELS.md §5.4). Where RED
//!   decides to drop it answers `Mark`: an ECN-capable packet is marked instead and a
//!   non-ECT packet is dropped (RFC 3168 §5). `instantaneous` uses the current queue as
//!   the average (w_q = 1). Simplifications: no byte-mode probability scaling, no ns-3
//!   `q > 1` guard.
//!
//! Queue occupancy is the port's waiting queue (the packet being serialized has left it,
//! see `engine/net/mod.rs`), in packets or bytes as the thresholds are given.

use crate::base::packet::Packet;
use crate::base::rng::Rng;
use crate::base::units::{parse_bytes, SimTime};

/// Unit in which a threshold and the queue it is compared with are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueUnit {
    Bytes,
    Packets,
}

/// Parse a queue threshold: "20pkts" (also "20pkt", "20packets") or a size ("30KB").
pub fn parse_threshold(s: &str) -> Result<(u64, QueueUnit), String> {
    let t = s.trim();
    for suffix in ["packets", "pkts", "pkt"] {
        if let Some(num) = t.strip_suffix(suffix) {
            return num
                .trim()
                .parse::<u64>()
                .map(|v| (v, QueueUnit::Packets))
                .map_err(|_| format!("invalid threshold {s:?}: expected e.g. \"20pkts\""));
        }
    }
    parse_bytes(t)
        .map(|b| (b.0, QueueUnit::Bytes))
        .map_err(|e| format!("{e}, or a packet count such as \"20pkts\""))
}

/// What an AQM decided for one packet. The port acts on it (`engine::net::apply_verdict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let the packet through unchanged.
    Pass,
    /// Signal congestion: set CE if the packet is ECN-capable (otherwise the marker's rule
    /// decides, `engine::net::MarkReason::if_not_ect`).
    Mark,
    /// Discard the packet.
    Drop,
}

/// Where the port consults its AQM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AqmAt {
    #[default]
    Off,
    Enqueue,
    Dequeue,
}

/// DCTCP step marking.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub k: u64,
    pub unit: QueueUnit,
}

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
    fn congested(&mut self, now: SimTime, q: f64) -> bool {
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
        if !self.old {
            // First arrival above min_th: restart the count, no mark (ns-2/ns-3).
            self.old = true;
            self.count = 1;
            return false;
        }
        let p_b = if avg < p.max_th {
            p.max_p * (avg - p.min_th) / (p.max_th - p.min_th)
        } else {
            // gentle region [max_th, 2·max_th)
            p.max_p + (1.0 - p.max_p) * (avg - p.max_th) / p.max_th
        };
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

/// The AQM of one port.
#[derive(Clone, Debug, Default)]
pub enum Aqm {
    /// Tail drop only.
    #[default]
    None,
    Step(Step),
    Red(Box<Red>),
}

impl Aqm {
    /// Decide for packet `pkt` given the queue *excluding* it (`q_pkts`, `q_bytes`). The
    /// answer does not depend on the packet's ECN codepoint (`Mark` means congestion).
    #[inline]
    pub fn decide(&mut self, now: SimTime, pkt: &Packet, q_pkts: u64, q_bytes: u64) -> Verdict {
        match self {
            Aqm::None => Verdict::Pass,
            Aqm::Step(s) => {
                let q = match s.unit {
                    QueueUnit::Packets => q_pkts + 1,
                    QueueUnit::Bytes => q_bytes + pkt.size as u64,
                };
                if q > s.k {
                    Verdict::Mark
                } else {
                    Verdict::Pass
                }
            }
            Aqm::Red(r) => {
                let q = match r.p.unit {
                    QueueUnit::Packets => q_pkts as f64,
                    QueueUnit::Bytes => q_bytes as f64,
                };
                if r.congested(now, q) {
                    Verdict::Mark
                } else {
                    Verdict::Pass
                }
            }
        }
    }

    /// The queue became empty; the link goes idle at `link_idle_at` (end of the packet
    /// being serialized).
    #[inline]
    pub fn on_queue_empty(&mut self, link_idle_at: SimTime) {
        if let Aqm::Red(r) = self {
            r.idle = true;
            r.idle_since = link_idle_at;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::ids::{FlowId, NodeId};
    use crate::base::packet::{Ecn, Kind, SackBlocks};

    fn pkt(ecn: Ecn) -> Packet {
        Packet {
            flow: FlowId(0),
            src: NodeId(0),
            dst: NodeId(1),
            seq: 0,
            ack: 0,
            size: 1500,
            payload: 1460,
            kind: Kind::Data,
            flags: 0,
            ecn,
            class: 0,
            enq_time: SimTime::ZERO,
            sent_time: SimTime::ZERO,
            sack: SackBlocks::EMPTY,
        }
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
                mean_pkt_time: SimTime::from_us(12),
            },
            Rng::new(1, 2),
        )))
    }

    #[test]
    fn thresholds_parse_in_packets_or_bytes() {
        assert_eq!(parse_threshold("65pkts"), Ok((65, QueueUnit::Packets)));
        assert_eq!(parse_threshold("20 pkt"), Ok((20, QueueUnit::Packets)));
        assert_eq!(parse_threshold("30KB"), Ok((30_000, QueueUnit::Bytes)));
        assert!(parse_threshold("x pkts").is_err());
        assert!(parse_threshold("lots").is_err());
    }

    #[test]
    fn step_marks_exactly_the_ect_packets_above_k() {
        let mut a = Aqm::Step(Step {
            k: 3,
            unit: QueueUnit::Packets,
        });
        // Queue (excluding the arrival) 0..5: including it 1..6; K = 3 → marks at 4, 5, 6.
        let v: Vec<Verdict> = (0..6)
            .map(|q| a.decide(SimTime::ZERO, &pkt(Ecn::Ect0), q, q * 1500))
            .collect();
        use Verdict::*;
        assert_eq!(v, vec![Pass, Pass, Pass, Mark, Mark, Mark]);
        // The verdict does not look at the codepoint (the port lets non-ECT packets pass).
        assert_eq!(a.decide(SimTime::ZERO, &pkt(Ecn::NotEct), 10, 0), Mark);
        // Bytes: K = 4500 B; 2 queued + 1500 = 4500 is not above K, 3 queued is.
        let mut b = Aqm::Step(Step {
            k: 4500,
            unit: QueueUnit::Bytes,
        });
        assert_eq!(b.decide(SimTime::ZERO, &pkt(Ecn::Ect0), 2, 3000), Pass);
        assert_eq!(b.decide(SimTime::ZERO, &pkt(Ecn::Ect0), 3, 4500), Mark);
    }

    #[test]
    fn red_average_below_min_never_marks() {
        let mut a = red(5.0, 15.0, true, false);
        // A queue of 100 packets for 1000 arrivals keeps avg = 100·(1 − 0.998^k) < 5 for
        // k ≤ 25; every one of those arrivals passes.
        for k in 0..25 {
            assert_eq!(
                a.decide(SimTime::from_us(k), &pkt(Ecn::Ect0), 100, 150_000),
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
                    a.decide(SimTime::ZERO, &pkt(Ecn::Ect0), q, 0),
                    Verdict::Mark
                );
                assert_eq!(a.decide(SimTime::ZERO, &pkt(Ecn::Ce), q, 0), Verdict::Mark);
                // The port turns this one into a drop (`engine::net::resolve`).
                assert_eq!(
                    a.decide(SimTime::ZERO, &pkt(Ecn::NotEct), q, 0),
                    Verdict::Mark
                );
            }
            // Below min_th: never.
            for _ in 0..100 {
                assert_eq!(
                    a.decide(SimTime::ZERO, &pkt(Ecn::NotEct), 4, 0),
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
                a.decide(SimTime::ZERO, &p, q, 0),
                s.decide(SimTime::ZERO, &p, q, 0),
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
            if a.decide(SimTime::ZERO, &pkt(Ecn::Ect0), 10, 0) == Verdict::Mark {
                if let Some(l) = last {
                    gaps.push(i - l);
                }
                last = Some(i);
            }
        }
        assert!(gaps.len() > 20);
        assert!(gaps.iter().all(|&g| (20..=40).contains(&g)), "{gaps:?}");
    }

    #[test]
    fn red_idle_time_decays_the_average() {
        let mut a = red(5.0, 15.0, true, false);
        if let Aqm::Red(r) = &mut a {
            r.avg = 10.0;
            r.idle = false;
        }
        a.on_queue_empty(SimTime::from_us(100));
        // Idle 120 us = 10 mean packet times: avg = 10·0.998^10, then one arrival at q = 0.
        a.decide(SimTime::from_us(220), &pkt(Ecn::Ect0), 0, 0);
        if let Aqm::Red(r) = &a {
            let want = 10.0 * 0.998f64.powi(10) * 0.998;
            assert!((r.avg - want).abs() < 1e-12, "{} vs {want}", r.avg);
        }
    }
}

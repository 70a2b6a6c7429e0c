//! Multi-queue switch ports (issue 5 [multiqueue]): the wiring of the pure components of
//! `mq/` (class queues + scheduler, buffer admission, TCN, CoDel, MQ-ECN, Algorithm-1
//! departure-rate estimate) into a port of the simulation.
//!
//! A port with `Port::mq = Some(..)` bypasses the single FIFO (`Port::queue`), which stays
//! empty; every other port keeps the original fast path (one `is_some()` test per packet).
//!
//! Order of operations for an arriving packet (`Core::mq_enqueue`):
//! 1. per-port AQM at enqueue (`Port::aqm`, `model/aqm.rs`) on the port's total backlog;
//! 2. classification (`Packet::class`, or the flow hash for DRR/SFQ);
//! 3. per-queue marking at enqueue (RED/step per queue, MQ-ECN, ideal RED from Algorithm 1)
//!    on the queue's backlog *excluding* the arrival (RED) / *including* it (step, MQ-ECN,
//!    ideal RED: "queue length exceeds the threshold" after the arrival, as the DCTCP rule);
//! 4. buffer admission (complete sharing / static per queue / dynamic threshold over the
//!    switch's shared pool), tail drop otherwise;
//! 5. the packet is stamped (`enq_time = now`) and stored.
//!
//! At dequeue (the scheduler picks the packet when the transmitter becomes free, before its
//! serialisation): TCN / probabilistic TCN / CoDel / per-queue RED at dequeue / per-port
//! AQM at dequeue; the departure feeds the Algorithm-1 estimators. The sojourn time
//! therefore excludes the packet's own serialisation (MODELS.md §5.1).
//!
//! The port's `queued_bytes` mirrors the total backlog so the queue sampler and
//! `max_queue_bytes` work unchanged.
//!
//! Every verdict takes effect through `engine::net::apply_verdict` (CE on ECN-capable
//! packets, drops and marks counted by reason on the port and on the class queue). Where
//! two markers act on one packet (the port's AQM and the per-queue scheme), a drop by
//! either wins and a packet marked by both is counted once, under the one that decided
//! first (at enqueue the port's AQM, at dequeue the per-queue scheme). A drop by the
//! port's AQM at enqueue happens before classification and is not counted on a queue.

use crate::base::ids::PortId;
use crate::base::packet::{Packet, PktRef};
use crate::base::rng::Rng;
use crate::base::units::SimTime;
use crate::engine::net::{aqm_reason, MarkReason, ReasonCounts, Waiting};
use crate::model::aqm::{Aqm, AqmAt, Verdict};
use crate::model::mq::buffer::{Admission, BufferPolicy};
use crate::model::mq::codel::Codel;
use crate::model::mq::dqrate::DqRate;
use crate::model::mq::tcn::{ProbTcn, Tcn};
use crate::model::mq::{MultiQueue, Queued};

/// What a class queue of a port holds for a packet waiting in `Network::packets`: what its
/// transmission needs ([`Waiting`]: handle, size, payload, route at the peer) and the
/// class the schedulers read (20 bytes where the packet is 80).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedRef {
    pub h: PktRef,
    pub size: u32,
    pub payload: u32,
    pub out: PortId,
    pub class: u8,
}

impl QueuedRef {
    /// The entry for packet `p`, stored at `h`, forwarded to `out` by the peer.
    #[inline]
    pub fn new(h: PktRef, p: &Packet, out: PortId) -> QueuedRef {
        QueuedRef {
            h,
            size: p.size,
            payload: p.payload,
            out,
            class: p.class,
        }
    }

    /// The transmitter's part of the entry.
    #[inline(always)]
    pub fn waiting(self) -> Waiting {
        Waiting {
            h: self.h,
            size: self.size,
            payload: self.payload,
            out: self.out,
        }
    }
}

impl Queued for QueuedRef {
    #[inline]
    fn size(&self) -> u32 {
        self.size
    }
    #[inline]
    fn class(&self) -> u8 {
        self.class
    }
}

/// Per-queue marking scheme of a multi-queue port.
#[derive(Clone, Debug)]
pub enum QueueMark {
    /// No per-queue marking (a per-port AQM may still be set on the port).
    None,
    /// RED or step marking with one instance per queue, on that queue's backlog
    /// ("per-queue standard threshold" of seed 002), at enqueue or dequeue.
    PerQueue { aqm: Vec<Aqm>, at: AqmAt },
    /// TCN: mark at dequeue iff sojourn > T.
    Tcn(Tcn),
    /// Probabilistic TCN (seed 002 §4.3; linear between T_min and T_max, an assumption).
    ProbTcn(ProbTcn, Box<Rng>),
    /// CoDel per queue (RFC 8289), marking or dropping.
    Codel(Vec<Codel>),
    /// MQ-ECN (needs DWRR / SP+DWRR; the estimator lives in the MultiQueue).
    MqEcn,
    /// "Ideal RED": per-queue threshold avg_rate × RTT × λ from Algorithm 1, at enqueue.
    DqRate,
}

/// Per-queue counters of a multi-queue port.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueStats {
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    /// Payload bytes transmitted (goodput of the queue, retransmissions included).
    pub tx_payload: u64,
    pub max_bytes: u64,
    /// Drops and CE marks of packets of this queue, by reason.
    pub by: ReasonCounts,
}

impl QueueStats {
    /// Drops, every reason.
    pub fn drops(&self) -> u64 {
        self.by.drops_total()
    }
    /// CE marks, every reason.
    pub fn marks(&self) -> u64 {
        self.by.marks_total()
    }
}

/// The multi-queue state of one port. `repr(C)`, the fields each packet reads first (the
/// marking scheme, the shared pool, admission, the per-queue counters, then the queues):
/// the multi-queue fabrics are bound by the cache lines each packet touches
/// (docs/performance.md).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct MqPort {
    pub mark: QueueMark,
    /// Index of the switch's shared pool in `Network::pools` (dynamic threshold only).
    pub pool: Option<u32>,
    pub adm: Admission,
    pub qstats: Vec<QueueStats>,
    /// Algorithm-1 estimators, one per queue (empty when not configured). Always fed at
    /// dequeue when present; used for marking by [`QueueMark::DqRate`].
    pub dqrate: Vec<DqRate>,
    pub mq: MultiQueue<QueuedRef>,
    /// Samples of the estimators: (time, queue, sample bps, avg bps), kept when
    /// `record_estimates` is set (Fig. 2).
    pub record_estimates: bool,
    pub estimates: Vec<(SimTime, u8, f64, f64)>,
    /// MQ-ECN round-time samples already recorded in `estimates`.
    pub mqecn_samples_seen: u64,
    pub(crate) scratch: Vec<QueuedRef>,
}

impl MqPort {
    pub fn new(mq: MultiQueue<QueuedRef>, adm: Admission, mark: QueueMark) -> MqPort {
        let n = mq.num_queues();
        MqPort {
            mq,
            adm,
            pool: None,
            mark,
            dqrate: Vec::new(),
            record_estimates: false,
            estimates: Vec::new(),
            mqecn_samples_seen: 0,
            qstats: vec![QueueStats::default(); n],
            scratch: Vec::with_capacity(4),
        }
    }

    pub fn uses_pool(&self) -> bool {
        matches!(self.adm.policy(), BufferPolicy::DynamicThreshold { .. })
    }

    /// The reason the per-queue scheme's marks (and drops) of queue `q` are counted under.
    #[inline]
    pub fn mark_reason(&self, q: usize) -> MarkReason {
        match &self.mark {
            QueueMark::PerQueue { aqm, .. } => aqm_reason(&aqm[q]),
            QueueMark::Tcn(_) | QueueMark::ProbTcn(..) => MarkReason::Tcn,
            QueueMark::Codel(_) => MarkReason::Codel,
            QueueMark::MqEcn => MarkReason::MqEcn,
            QueueMark::DqRate => MarkReason::DqRate,
            // Never marks: any name will do.
            QueueMark::None => MarkReason::Step,
        }
    }

    /// Per-queue decision at enqueue for a packet going to queue `q`, and who made it.
    #[inline]
    pub fn enqueue_verdict(&mut self, now: SimTime, p: &Packet, q: usize) -> (Verdict, MarkReason) {
        let cq = self.mq.queue(q);
        let (qp, qb) = (cq.len() as u64, cq.bytes());
        let v = match &mut self.mark {
            QueueMark::PerQueue { aqm, at } if *at == AqmAt::Enqueue => {
                aqm[q].decide(now, p, qp, qb)
            }
            QueueMark::MqEcn => match self.mq.mqecn() {
                Some(m) => m.decide(q, qb + p.size as u64),
                None => Verdict::Pass,
            },
            QueueMark::DqRate => self.dqrate[q].decide(qb + p.size as u64),
            _ => Verdict::Pass,
        };
        (v, self.mark_reason(q))
    }

    /// Whether [`Self::dequeue_verdict`] has work to do; when not, it passes every packet
    /// without reading it, and the port need not read the packet either.
    #[inline]
    pub fn decides_at_dequeue(&self) -> bool {
        !matches!(
            self.mark,
            QueueMark::None | QueueMark::MqEcn | QueueMark::DqRate
        )
    }

    /// Per-queue decision at dequeue for packet `p` just taken from queue `q` at `now`, and
    /// who made it. No scheme writes the packet; the port applies the verdict.
    #[inline]
    pub fn dequeue_verdict(&mut self, now: SimTime, p: &Packet, q: usize) -> (Verdict, MarkReason) {
        let cq = self.mq.queue(q);
        let (qp, qb) = (cq.len() as u64, cq.bytes());
        let v = match &mut self.mark {
            QueueMark::PerQueue { aqm, at } if *at == AqmAt::Dequeue => {
                let v = aqm[q].decide(now, p, qp, qb);
                if qp == 0 {
                    aqm[q].on_queue_empty(now);
                }
                v
            }
            QueueMark::PerQueue { aqm, .. } => {
                if qp == 0 {
                    aqm[q].on_queue_empty(now);
                }
                Verdict::Pass
            }
            QueueMark::Tcn(t) => t.on_dequeue(p, now),
            QueueMark::ProbTcn(t, rng) => t.on_dequeue(p, now, rng),
            QueueMark::Codel(c) => {
                let v = c[q].on_dequeue(now, p, qb);
                if qp == 0 && v != Verdict::Drop {
                    c[q].on_empty(now);
                }
                v
            }
            _ => Verdict::Pass,
        };
        (v, self.mark_reason(q))
    }

    /// Feed the Algorithm-1 estimator of queue `q` with a departure.
    #[inline]
    pub fn on_departure(&mut self, now: SimTime, q: usize, size: u32) {
        if self.dqrate.is_empty() {
            return;
        }
        let left = self.mq.queue(q).bytes();
        if let Some(s) = self.dqrate[q].on_departure(now, left, size) {
            if self.record_estimates && !matches!(self.mark, QueueMark::MqEcn) {
                let avg = self.dqrate[q].avg_rate_bps();
                self.estimates.push((now, q as u8, s, avg));
            }
        }
        if self.record_estimates && matches!(self.mark, QueueMark::MqEcn) {
            // MQ-ECN ports record the round-time capacity estimate instead (Fig. 2),
            // once per new round-time sample. T_round is one per port, so every sample
            // (whichever queue's turn produced it) is a sample for every round-robin
            // queue: one row per queue with a quantum, `sample` = quantum / round sample,
            // `avg` = min(quantum / T_round, C) (`mqecn_estimates`).
            if let Some(m) = self.mq.mqecn() {
                if m.samples() != self.mqecn_samples_seen {
                    self.mqecn_samples_seen = m.samples();
                    crate::model::mq::mqecn::push_estimates(m, now, &mut self.estimates);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::mq::testutil::pkt;
    use crate::model::mq::SchedConfig;

    fn port(mark: QueueMark) -> MqPort {
        let mq = MultiQueue::new(2, &SchedConfig::Sp, 8).unwrap();
        let adm = Admission::new(BufferPolicy::CompleteSharing { limit: 10_000 }, 2).unwrap();
        MqPort::new(mq, adm, mark)
    }

    #[test]
    fn tcn_marks_on_sojourn_only() {
        let mut m = port(QueueMark::Tcn(Tcn::new(SimTime::from_us(10)).unwrap()));
        let mut p = pkt(0, 1500);
        p.enq_time = SimTime::from_us(0);
        assert_eq!(
            m.dequeue_verdict(SimTime::from_us(10), &p, 0),
            (Verdict::Pass, MarkReason::Tcn)
        );
        assert_eq!(
            m.dequeue_verdict(SimTime::from_us(11), &p, 0),
            (Verdict::Mark, MarkReason::Tcn)
        );
        // Deciding does not write the packet.
        assert_eq!(p.ecn, crate::base::packet::Ecn::Ect0);
    }

    #[test]
    fn the_fields_every_packet_reads_come_first() {
        // The marking scheme, pool, admission, per-queue counters, estimators and the
        // queues' own leading line lie in the first three cache lines (`repr(C)`); the
        // recorded estimates and scratch space come after.
        use std::mem::offset_of;
        assert_eq!(offset_of!(MqPort, mark), 0);
        assert!(offset_of!(MqPort, mq) + 64 <= 192);
        assert!(offset_of!(MqPort, estimates) > offset_of!(MqPort, mq));
        assert!(offset_of!(MqPort, scratch) > offset_of!(MqPort, mq));
    }

    #[test]
    fn a_fifo_entry_takes_16_bytes() {
        // Four to a cache line, as the wires' entries.
        assert_eq!(std::mem::size_of::<Waiting>(), 16);
    }

    #[test]
    fn a_class_queue_entry_takes_20_bytes() {
        // Three entries and a fifth to a cache line, where packets by value took 80 bytes.
        assert_eq!(std::mem::size_of::<QueuedRef>(), 20);
    }

    #[test]
    fn per_queue_step_uses_own_queue() {
        use crate::model::aqm::{QueueUnit, Step};
        let step = Aqm::Step(Step {
            k: 2000,
            unit: QueueUnit::Bytes,
        });
        let mut m = port(QueueMark::PerQueue {
            aqm: vec![step.clone(), step],
            at: AqmAt::Enqueue,
        });
        let mut p = pkt(0, 1500);
        p.enq_time = SimTime::ZERO;
        let mut arena = crate::base::packet::PacketArena::default();
        let h = arena.put(p);
        m.mq.enqueue_at(0, QueuedRef::new(h, &p, PortId::NONE), p.enq_time);
        // queue 0 holds 1500 B: a second packet makes 3000 > 2000 → mark; queue 1 is empty.
        assert_eq!(
            m.enqueue_verdict(SimTime::ZERO, &pkt(0, 1500), 0),
            (Verdict::Mark, MarkReason::Step)
        );
        assert_eq!(
            m.enqueue_verdict(SimTime::ZERO, &pkt(1, 1500), 1),
            (Verdict::Pass, MarkReason::Step)
        );
    }
}

//! Multi-queue switch ports (docs/models.md §5): the wiring of the pure components of
//! `mq/` (class queues + scheduler, buffer admission, TCN, CoDel, MQ-ECN, Algorithm-1
//! departure-rate estimate) into a port of the simulation.
//!
//! A port with `Port::mq = Some(..)` bypasses the single FIFO (`Port::queue`), which stays
//! empty; every other port keeps the original fast path (one `is_some()` test per packet).
//!
//! Order of operations for an arriving packet (`Core::mq_enqueue`):
//! 1. per-port AQM at enqueue (`Port::aqm`, `model/aqm/`) on the port's total backlog;
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
//! therefore excludes the packet's own serialisation (docs/models.md §5.1).
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
use crate::base::units::SimTime;
use crate::engine::net::{MarkReason, ReasonCounts, Waiting};
use crate::model::aqm::dqrate::DqRate;
use crate::model::aqm::{Aqm, AqmAt, Backlog, Scope, Signals, Verdict, View};
use crate::model::mq::buffer::{Admission, BufferPolicy};
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

/// How a multi-queue port's class-queue marking is attached (the discipline itself is an
/// [`Aqm`] of `model/aqm/`, named by none of the code here).
#[derive(Clone, Debug)]
pub enum QueueMark {
    /// No class-queue marking (a per-port AQM may still be set on the port).
    None,
    /// One instance per class queue, on that queue's backlog ([`Scope::PerQueue`]: step,
    /// RED, CoDel), deciding at enqueue or at dequeue.
    PerQueue { aqm: Vec<Aqm>, at: AqmAt },
    /// One instance for all the queues of the port, told the queue's index
    /// ([`Scope::Shared`]: TCN, probabilistic TCN, MQ-ECN, the departure-rate threshold).
    Shared { aqm: Aqm, at: AqmAt },
}

impl QueueMark {
    /// The attachment of `instances` (one per queue, or one for all by `scope`) deciding
    /// `at`; no marking when the instance is none.
    pub fn new(scope: Scope, mut instances: Vec<Aqm>, at: AqmAt) -> QueueMark {
        match scope {
            _ if instances.iter().all(Aqm::is_none) => QueueMark::None,
            Scope::PerQueue => QueueMark::PerQueue { aqm: instances, at },
            Scope::Shared => QueueMark::Shared {
                aqm: instances.swap_remove(0),
                at,
            },
        }
    }

    /// Whether the port must report every departure to the marking.
    pub fn wants_departures(&self) -> bool {
        match self {
            QueueMark::None => false,
            QueueMark::PerQueue { aqm, .. } => aqm.iter().any(Aqm::wants_departures),
            QueueMark::Shared { aqm, .. } => aqm.wants_departures(),
        }
    }

    /// Whether the marking reads the port's departure-rate estimates.
    pub fn reads_rates(&self) -> bool {
        match self {
            QueueMark::None => false,
            QueueMark::PerQueue { aqm, .. } => aqm.iter().any(Aqm::reads_rates),
            QueueMark::Shared { aqm, .. } => aqm.reads_rates(),
        }
    }
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
    /// Whether the marking asks for every departure ([`Aqm::wants_departures`]).
    pub departures: bool,
    pub adm: Admission,
    pub qstats: Vec<QueueStats>,
    /// Algorithm-1 estimators, one per queue (empty when not configured). Always fed at
    /// dequeue when present; read by a marking through [`Signals::rates`].
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
            departures: mark.wants_departures(),
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
            QueueMark::PerQueue { aqm, .. } => aqm[q].reason(),
            QueueMark::Shared { aqm, .. } => aqm.reason(),
            // Never marks: any name will do.
            QueueMark::None => MarkReason::Step,
        }
    }

    /// Per-queue decision at enqueue for a packet going to queue `q`, and who made it.
    #[inline]
    pub fn enqueue_verdict(&mut self, now: SimTime, p: &Packet, q: usize) -> (Verdict, MarkReason) {
        let cq = self.mq.queue(q);
        let v = View {
            q,
            backlog: Backlog {
                pkts: cq.len() as u64,
                bytes: cq.bytes(),
            },
            signals: Signals {
                round: self.mq.mqecn(),
                rates: &self.dqrate,
            },
        };
        let verdict = match &mut self.mark {
            QueueMark::PerQueue { aqm, at } if *at == AqmAt::Enqueue => aqm[q].enqueue(now, p, v),
            QueueMark::Shared { aqm, at } if *at == AqmAt::Enqueue => aqm.enqueue(now, p, v),
            _ => Verdict::Pass,
        };
        (verdict, self.mark_reason(q))
    }

    /// Whether [`Self::dequeue_verdict`] has work to do; when not, it passes every packet
    /// without reading it, and the port need not read the packet either. A per-queue
    /// attachment always has (its instances hear when their queue empties).
    #[inline]
    pub fn decides_at_dequeue(&self) -> bool {
        match &self.mark {
            QueueMark::None => false,
            QueueMark::PerQueue { .. } => true,
            QueueMark::Shared { at, .. } => *at == AqmAt::Dequeue,
        }
    }

    /// Per-queue decision at dequeue for packet `p` just taken from queue `q` at `now`, and
    /// who made it. No scheme writes the packet; the port applies the verdict. A
    /// per-queue instance whose queue is left empty hears it at `now`, unless it dropped
    /// the packet (the port then takes another: RFC 8289's loop).
    #[inline]
    pub fn dequeue_verdict(&mut self, now: SimTime, p: &Packet, q: usize) -> (Verdict, MarkReason) {
        let cq = self.mq.queue(q);
        let v = View {
            q,
            backlog: Backlog {
                pkts: cq.len() as u64,
                bytes: cq.bytes(),
            },
            signals: Signals {
                round: self.mq.mqecn(),
                rates: &self.dqrate,
            },
        };
        let verdict = match &mut self.mark {
            QueueMark::PerQueue { aqm, at } => {
                let a = &mut aqm[q];
                let verdict = if *at == AqmAt::Dequeue {
                    a.dequeue(now, p, v)
                } else {
                    Verdict::Pass
                };
                if v.backlog.pkts == 0 && verdict != Verdict::Drop {
                    a.queue_empty(now);
                }
                verdict
            }
            QueueMark::Shared { aqm, at } if *at == AqmAt::Dequeue => aqm.dequeue(now, p, v),
            _ => Verdict::Pass,
        };
        (verdict, self.mark_reason(q))
    }

    /// Feed the Algorithm-1 estimator of queue `q` with a departure.
    #[inline]
    pub fn on_departure(&mut self, now: SimTime, q: usize, size: u32) {
        if self.departures {
            let left = self.mq.queue(q).bytes();
            match &mut self.mark {
                QueueMark::PerQueue { aqm, .. } => aqm[q].departure(now, q, left, size),
                QueueMark::Shared { aqm, .. } => aqm.departure(now, q, left, size),
                QueueMark::None => {}
            }
        }
        if self.dqrate.is_empty() {
            return;
        }
        let left = self.mq.queue(q).bytes();
        if let Some(s) = self.dqrate[q].on_departure(now, left, size) {
            if self.record_estimates && self.mq.mqecn().is_none() {
                let avg = self.dqrate[q].avg_rate_bps();
                self.estimates.push((now, q as u8, s, avg));
            }
        }
        if self.record_estimates && self.mq.mqecn().is_some() {
            // MQ-ECN ports record the round-time capacity estimate instead (Fig. 2),
            // once per new round-time sample. T_round is one per port, so every sample
            // (whichever queue's turn produced it) is a sample for every round-robin
            // queue: one row per queue with a quantum, `sample` = quantum / round sample,
            // `avg` = min(quantum / T_round, C) (`mqecn_estimates`).
            if let Some(m) = self.mq.mqecn() {
                if m.samples() != self.mqecn_samples_seen {
                    self.mqecn_samples_seen = m.samples();
                    crate::model::aqm::mqecn::push_estimates(m, now, &mut self.estimates);
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
        let tcn = crate::model::aqm::tcn::Tcn::new(SimTime::from_us(10)).unwrap();
        let mut m = port(QueueMark::Shared {
            aqm: Aqm::Tcn(tcn),
            at: AqmAt::Dequeue,
        });
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

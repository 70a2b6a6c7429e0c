//! Multi-queue egress ports: N class FIFOs served by a configurable packet scheduler
//! (specification in docs/models.md §5.6 "Schedulers", §5.7 buffers, the
//! marking schemes of §5.1–5.3 and the TCN paper (Bai et al., *Enabling ECN over Generic Packet
//! Scheduling*, CoNEXT'16) §3.3 Algorithm 1).
//!
//! Pure building blocks (the engine wires them into ports: `engine/net/mq_port.rs`):
//! - [`MultiQueue`]: N FIFO queues of [`Packet`]s or of anything [`Queued`] (the engine's
//!   12-byte handles), byte/packet counts and a [`sched::Scheduler`] by [`sched::SchedConfig`].
//! - [`buffer`]: buffer admission (complete sharing, static per-queue, dynamic threshold).
//! - the marking / dropping decisions (TCN, CoDel, MQ-ECN, the departure-rate threshold)
//!   are AQMs of the one family in `model/aqm/`; MQ-ECN's round-time estimator is fed by
//!   the DWRR scheduler here ([`MultiQueue::set_mqecn`]).
//!
//! Time convention: [`MultiQueue::enqueue_at`] takes the arrival time (`enqueue`, of a
//! `Packet`, its `enq_time`); the AQMs here read sojourn times from the packet's `enq_time`.
//! No allocation per packet once warm: rings start small and a `VecDeque` only grows (by
//! doubling) when a queue exceeds its capacity, so each ring settles at its largest backlog.

pub mod buffer;
pub mod sched;

// The class-queue markers live with the other AQMs (`model/aqm/`); these paths name them
// from here as before.
pub use crate::model::aqm::{codel, dqrate, mqecn, tcn};

use std::collections::VecDeque;

use crate::base::packet::Packet;
use crate::base::units::SimTime;

pub use sched::{FlowKey, RoundObserver, SchedConfig, Scheduler, SfqLimit};

/// Most class queues a port may have (up to 32, the largest count the TCN paper's simulations use).
pub const MAX_CLASS_QUEUES: usize = 32;
/// Most hash buckets for the flow-hashing schedulers (DRR, SFQ).
pub const MAX_BUCKETS: usize = 1024;
/// Capacity (packets) of a class FIFO's ring once it has held a packet; rings grow beyond
/// it if needed. Small on purpose: a ring cycles through all its slots, so a ring sized for
/// the largest backlog it has seen touches fewer cache lines than a large preallocated one
/// (64 → 4 was about 3 % faster on the 144-host fabric; docs/performance.md, "How the
/// speed is obtained"). The scenario builder creates queues with capacity 0, so a ring is
/// allocated by its first packet (the standard library's first growth of a ring of packets
/// or 12-byte entries is to 4: tested) and a port's 32 queues cost no ring until used (a
/// 5 000-spine fabric with 32 queues per port is checked without allocating 1.2 GB of
/// empty rings).
pub const DEFAULT_QUEUE_CAPACITY: usize = 4;

/// Map a packet's class field to a queue index: values ≥ `n` go to the last queue, as
/// TCN-NS2 `prio_dwrr.cc`/`prio_wfq.cc` do (docs/models.md §5.6 SP). `n` must be ≥ 1.
#[inline]
pub fn class_to_queue(class: u8, n: usize) -> usize {
    (class as usize).min(n.saturating_sub(1))
}

/// What a class queue stores: a packet, or what the engine keeps for one held elsewhere
/// (`engine/net/mq_port.rs` `Queued`, a handle with the fields below). The schedulers and
/// the queues read only these.
pub trait Queued: Copy + std::fmt::Debug {
    /// Bytes on the wire.
    fn size(&self) -> u32;
    /// Traffic class (802.1Qbb priority of a paused queue's head).
    fn class(&self) -> u8;
}

impl Queued for Packet {
    #[inline]
    fn size(&self) -> u32 {
        self.size
    }
    #[inline]
    fn class(&self) -> u8 {
        self.class
    }
}

/// One FIFO with its byte and packet counts.
#[derive(Clone, Debug)]
pub struct ClassQueue<T: Queued = Packet> {
    pkts: VecDeque<T>,
    bytes: u64,
}

impl<T: Queued> ClassQueue<T> {
    fn with_capacity(cap: usize) -> ClassQueue<T> {
        ClassQueue {
            pkts: VecDeque::with_capacity(cap),
            bytes: 0,
        }
    }
    /// Packets waiting.
    #[inline]
    pub fn len(&self) -> usize {
        self.pkts.len()
    }
    /// Bytes waiting.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pkts.is_empty()
    }
    /// The packet at the head, if any.
    #[inline]
    pub fn head(&self) -> Option<&T> {
        self.pkts.front()
    }
    /// Size of the head packet (0 when empty).
    #[inline]
    pub fn head_size(&self) -> u32 {
        self.pkts.front().map_or(0, |p| p.size())
    }
    #[inline]
    pub(crate) fn push(&mut self, p: T) {
        self.bytes += p.size() as u64;
        self.pkts.push_back(p);
    }
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        let p = self.pkts.pop_front()?;
        self.bytes -= p.size() as u64;
        crate::base::packet::reuse_ring_from_the_start(&mut self.pkts);
        Some(p)
    }
}

/// N class queues plus a scheduler. Admission (buffer limits) is the caller's job through
/// [`buffer`]; only DRR (`blimit`) and SFQ (`maxqueue`) carry their own ns-2 drop rules.
///
/// `repr(C)`, fields in the order every enqueue and dequeue reads them, so that they share
/// as few cache lines as they can (the multi-queue fabrics are bound by the lines each
/// packet touches; docs/performance.md); the rarely used MQ-ECN estimator is boxed.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct MultiQueue<T: Queued = Packet> {
    queues: Vec<ClassQueue<T>>,
    bytes: u64,
    pkts: usize,
    /// Optional MQ-ECN round-time estimator fed by the DWRR scheduler.
    mqecn: Option<Box<mqecn::MqEcn>>,
    /// IEEE 802.1Qbb priorities currently paused at this port (bit p = priority p; set by
    /// `engine/datapath/l2/pfc.rs`). A queue whose head frame has a paused priority is skipped by
    /// [`Self::dequeue`]. 0 (the default) costs one test per dequeue.
    paused_prios: u8,
    sched: Scheduler,
    /// Packets dropped by the scheduler's own limit (DRR/SFQ) since the last `take_dropped`.
    dropped: Vec<T>,
}

impl<T: Queued> MultiQueue<T> {
    /// `n` queues (for DRR/SFQ: hash buckets) scheduled by `cfg`; `capacity` is the initial
    /// packet capacity of each FIFO (0: allocated by its first packet). Errors on a bad configuration, never panics.
    pub fn new(n: usize, cfg: &SchedConfig, capacity: usize) -> Result<MultiQueue<T>, String> {
        let sched = Scheduler::new(n, cfg)?;
        Ok(MultiQueue {
            queues: (0..n)
                .map(|_| ClassQueue::with_capacity(capacity))
                .collect(),
            sched,
            bytes: 0,
            pkts: 0,
            dropped: Vec::with_capacity(4),
            mqecn: None,
            paused_prios: 0,
        })
    }

    /// Attach an MQ-ECN estimator (only meaningful with DWRR or SP+DWRR). Its queue count
    /// must equal this port's.
    pub fn set_mqecn(&mut self, m: mqecn::MqEcn) -> Result<(), String> {
        if m.num_queues() != self.queues.len() {
            return Err(format!(
                "MQ-ECN has {} queues but the port has {}",
                m.num_queues(),
                self.queues.len()
            ));
        }
        if !matches!(self.sched, Scheduler::Dwrr(_)) {
            return Err("MQ-ECN needs a DWRR (or SP over DWRR) scheduler".into());
        }
        self.mqecn = Some(Box::new(m));
        Ok(())
    }
    pub fn mqecn(&self) -> Option<&mqecn::MqEcn> {
        self.mqecn.as_deref()
    }

    pub fn num_queues(&self) -> usize {
        self.queues.len()
    }
    pub fn queue(&self, i: usize) -> &ClassQueue<T> {
        &self.queues[i]
    }
    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }
    /// Total bytes waiting in all queues.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    /// Total packets waiting in all queues.
    pub fn len(&self) -> usize {
        self.pkts
    }
    pub fn is_empty(&self) -> bool {
        self.pkts == 0
    }

    /// Whether a packet arriving while every queue is empty may skip the FIFO and go
    /// straight to the transmitter: true when one packet's enqueue + dequeue leaves the
    /// scheduler unchanged — strict priority, and DWRR / SP+DWRR (a queue that empties gets
    /// its deficit and turn reset) without an MQ-ECN observer. WFQ (virtual time), WRR,
    /// DRR and SFQ keep the full path.
    #[inline]
    pub fn passes_through_when_empty(&self) -> bool {
        self.mqecn.is_none() && matches!(self.sched, Scheduler::Sp | Scheduler::Dwrr(_))
    }

    /// Queue index for a packet: the flow-hash bucket for DRR/SFQ, otherwise
    /// [`class_to_queue`] of `Packet::class`.
    pub fn classify(&self, p: &Packet) -> usize {
        match &self.sched {
            Scheduler::Drr(d) => sched::flow_bucket(p, d.key, self.queues.len()),
            Scheduler::Sfq(_) => sched::sfq_bucket(p, self.queues.len()),
            _ => class_to_queue(p.class, self.queues.len()),
        }
    }

    /// Enqueue `pkt`, arriving at `now`, into queue `q` (an index ≥ N goes to the last
    /// queue). Returns how many packets the scheduler's own limit dropped (the arriving one
    /// or others, ns-2 DRR/SFQ rules); they are kept for [`Self::take_dropped`].
    pub fn enqueue_at(&mut self, q: usize, pkt: T, now: SimTime) -> usize {
        let n = self.queues.len();
        let q = q.min(n - 1);
        if self.pkts == 0 {
            if let Some(m) = self.mqecn.as_deref_mut() {
                m.arrival_on_idle_port(now);
            }
        }
        let before = self.dropped.len();
        let (bytes, pkts) = match self.mqecn.as_deref_mut() {
            Some(m) => self
                .sched
                .enqueue(&mut self.queues, q, pkt, now, &mut self.dropped, m),
            None => self.sched.enqueue(
                &mut self.queues,
                q,
                pkt,
                now,
                &mut self.dropped,
                &mut sched::NoObserver,
            ),
        };
        // (bytes, pkts) = net change of the stored backlog.
        self.bytes = (self.bytes as i64 + bytes) as u64;
        self.pkts = (self.pkts as isize + pkts) as usize;
        self.dropped.len() - before
    }

    /// Packets dropped by DRR's `blimit` / SFQ's `maxqueue` rule since the last call.
    pub fn take_dropped(&mut self) -> std::vec::Drain<'_, T> {
        self.dropped.drain(..)
    }

    /// Pick and remove the next packet to transmit at time `now`.
    pub fn dequeue(&mut self, now: SimTime) -> Option<(usize, T)> {
        if self.pkts == 0 {
            return None;
        }
        if self.paused_prios != 0 {
            return self.dequeue_unpaused(now);
        }
        let r = match self.mqecn.as_deref_mut() {
            Some(m) => self.sched.dequeue(&mut self.queues, now, m),
            None => self
                .sched
                .dequeue(&mut self.queues, now, &mut sched::NoObserver),
        };
        self.account_dequeued(now, r)
    }

    /// Backlog accounting for a packet the scheduler handed out (and MQ-ECN's drain).
    #[inline]
    fn account_dequeued(&mut self, now: SimTime, r: Option<(usize, T)>) -> Option<(usize, T)> {
        if let Some((_, p)) = &r {
            self.bytes -= p.size() as u64;
            self.pkts -= 1;
            if self.pkts == 0 {
                if let Some(m) = self.mqecn.as_deref_mut() {
                    m.last_packet_dequeued(now, p.size());
                }
            }
        }
        r
    }

    /// Set the paused 802.1Qbb priorities (bit p = priority p of `l2::pause::class_priority`).
    pub fn set_paused_priorities(&mut self, mask: u8) {
        self.paused_prios = mask;
    }
    pub fn paused_priorities(&self) -> u8 {
        self.paused_prios
    }

    /// Whether queue `i`'s head frame is held by a paused priority.
    pub fn head_paused(&self, i: usize) -> bool {
        let m = self.paused_prios;
        self.queues[i]
            .head()
            .is_some_and(|p| m & (1u8 << crate::model::l2::class_priority(p.class())) != 0)
    }

    /// `dequeue` with some priorities paused: queues whose head is paused are passed over.
    fn dequeue_unpaused(&mut self, now: SimTime) -> Option<(usize, T)> {
        let m = self.paused_prios;
        let eligible = |c: &ClassQueue<T>| {
            c.head()
                .is_some_and(|p| m & (1u8 << crate::model::l2::class_priority(p.class())) == 0)
        };
        let r = match self.mqecn.as_deref_mut() {
            Some(o) => self
                .sched
                .dequeue_eligible(&mut self.queues, now, o, &eligible),
            None => self.sched.dequeue_eligible(
                &mut self.queues,
                now,
                &mut sched::NoObserver,
                &eligible,
            ),
        };
        self.account_dequeued(now, r)
    }
}

impl MultiQueue<Packet> {
    /// [`MultiQueue::enqueue_at`] the packet's own `enq_time`.
    pub fn enqueue(&mut self, q: usize, pkt: Packet) -> usize {
        self.enqueue_at(q, pkt, pkt.enq_time)
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use crate::base::ids::{FlowId, NodeId};
    use crate::base::packet::{Ecn, Kind, Packet};

    /// A data packet of `size` bytes in class `class` from `src` to `dst`.
    pub fn pkt(class: u8, size: u32) -> Packet {
        pkt_flow(class, size, 0, 1)
    }
    pub fn pkt_flow(class: u8, size: u32, src: u32, dst: u32) -> Packet {
        let ends = (NodeId(src), NodeId(dst));
        Packet {
            ecn: Ecn::Ect0,
            class,
            ..Packet::new(Kind::Data, FlowId(src), ends, size, size.saturating_sub(40))
        }
    }
}

#[cfg(test)]
mod estimator_tests;

#[cfg(test)]
mod tests {
    use super::testutil::pkt;
    use super::*;

    #[test]
    fn the_fields_every_packet_reads_lead_the_struct() {
        // Queues, backlog, the MQ-ECN test, the pause mask and the scheduler's variant lie
        // in the first cache line of a `MultiQueue` (`repr(C)`); MQ-ECN is boxed.
        use std::mem::offset_of;
        assert!(offset_of!(MultiQueue, sched) + 8 <= 64);
        assert!(offset_of!(MultiQueue, dropped) > offset_of!(MultiQueue, sched));
        assert_eq!(
            std::mem::size_of::<Option<Box<mqecn::MqEcn>>>(),
            std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn classification_maps_high_classes_to_last_queue() {
        assert_eq!(class_to_queue(0, 8), 0);
        assert_eq!(class_to_queue(7, 8), 7);
        assert_eq!(class_to_queue(8, 8), 7);
        assert_eq!(class_to_queue(255, 8), 7);
        let mq = MultiQueue::<Packet>::new(4, &SchedConfig::Sp, 8).unwrap();
        assert_eq!(mq.classify(&pkt(2, 100)), 2);
        assert_eq!(mq.classify(&pkt(9, 100)), 3);
    }

    /// Queues built with capacity 0 hold no ring until their first packet, which gives the
    /// ring `DEFAULT_QUEUE_CAPACITY` slots (the standard library's first growth).
    #[test]
    fn rings_are_allocated_by_the_first_packet() {
        let mut mq = MultiQueue::<Packet>::new(32, &SchedConfig::Sp, 0).unwrap();
        assert!((0..32).all(|q| mq.queues[q].pkts.capacity() == 0));
        mq.enqueue(5, pkt(5, 100));
        assert_eq!(mq.queues[5].pkts.capacity(), DEFAULT_QUEUE_CAPACITY);
        assert_eq!(mq.queues[4].pkts.capacity(), 0);
        // The same for entries of 12 bytes (the engine's `QueuedRef` is 20).
        #[derive(Clone, Copy, Debug)]
        struct Entry(#[allow(dead_code)] u32, u32, u8);
        impl Queued for Entry {
            fn size(&self) -> u32 {
                self.1
            }
            fn class(&self) -> u8 {
                self.2
            }
        }
        assert_eq!(std::mem::size_of::<Entry>(), 12);
        let mut mq = MultiQueue::<Entry>::new(8, &SchedConfig::Sp, 0).unwrap();
        mq.enqueue_at(3, Entry(0, 100, 3), SimTime::ZERO);
        assert_eq!(mq.queues[3].pkts.capacity(), DEFAULT_QUEUE_CAPACITY);
        assert_eq!((mq.len(), mq.bytes()), (1, 100));
    }

    #[test]
    fn counts_bytes_and_packets() {
        let mut mq = MultiQueue::<Packet>::new(3, &SchedConfig::Sp, 2).unwrap();
        assert!(mq.dequeue(SimTime::ZERO).is_none());
        for (c, s) in [(0u8, 100u32), (1, 200), (2, 300), (7, 400)] {
            assert_eq!(mq.enqueue(c as usize, pkt(c, s)), 0);
        }
        assert_eq!(mq.len(), 4);
        assert_eq!(mq.bytes(), 1000);
        assert_eq!(mq.queue(2).bytes(), 700);
        assert_eq!(mq.queue(2).len(), 2);
        let mut order = vec![];
        while let Some((q, p)) = mq.dequeue(SimTime::ZERO) {
            order.push((q, p.size));
        }
        assert_eq!(order, vec![(0, 100), (1, 200), (2, 300), (2, 400)]);
        assert_eq!(mq.bytes(), 0);
        assert!(mq.is_empty());
    }

    #[test]
    fn bad_configs_are_errors_not_panics() {
        assert!(MultiQueue::<Packet>::new(0, &SchedConfig::Sp, 8).is_err());
        assert!(MultiQueue::<Packet>::new(33, &SchedConfig::Sp, 8).is_err());
        assert!(
            MultiQueue::<Packet>::new(2, &SchedConfig::Dwrr { quanta: vec![1500] }, 8).is_err()
        );
        assert!(
            MultiQueue::<Packet>::new(2, &SchedConfig::Dwrr { quanta: vec![0, 1] }, 8).is_err()
        );
        assert!(MultiQueue::<Packet>::new(
            2,
            &SchedConfig::Wfq {
                weights: vec![1.0, f64::NAN]
            },
            8
        )
        .is_err());
        assert!(MultiQueue::<Packet>::new(
            2,
            &SchedConfig::Wrr {
                weights: vec![1, 0]
            },
            8
        )
        .is_err());
        assert!(MultiQueue::<Packet>::new(
            3,
            &SchedConfig::SpDwrr {
                strict: 3,
                quanta: vec![]
            },
            8
        )
        .is_err());
        assert!(MultiQueue::<Packet>::new(
            2000,
            &SchedConfig::Sfq {
                maxqueue: 40,
                limit: SfqLimit::Ns2
            },
            8
        )
        .is_err());
    }
}

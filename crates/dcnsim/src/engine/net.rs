//! Network elements: nodes (hosts and output-queued switches), ports with their egress
//! queue and their half of a full-duplex point-to-point link, and static routing.
//!
//! A port keeps at most one pending event for transmission and one for delivery:
//! - transmission is lazy, and its rules live in one place, the port's [`Transmitter`] and
//!   [`Port::begin_service`]. A packet that finds the transmitter idle
//!   ([`Transmitter::idle`]) is served at once, with no event. Serving a packet puts it on
//!   the wire and, when others wait behind it, arms the port's one `PortTxDone` event for
//!   the end of its serialisation; a packet stored behind a busy transmitter arms that same
//!   event if it is not armed yet ([`Transmitter::arm`]). When the event fires the port
//!   serves its next packet the same way, so the event stays armed exactly as long as
//!   there is a backlog. (Layer 2 adds hold and wake-up events for paused ports,
//!   [`Transmitter::hold`] and [`Transmitter::wake`]; `engine/l2.rs` discards the stale ones.)
//! - the wire is a FIFO of packets in flight with their arrival times (fixed delay, in
//!   order), and only the head's arrival is in the event queue.
//!
//! Offering a packet to a port (`Sim::enqueue`) says what became of it: [`Enqueued`].
//!
//! Buffer accounting: the switch buffer limit counts the bytes waiting in the queue; the
//! packet being serialized has left the queue (as in ns-2's DropTail + link, which the
//! seed-000 thesis used). A packet is dropped if `queued + size > limit`.

use crate::base::packet::Packet;
use crate::base::units::{RateBps, SimTime};
use crate::engine::ecmp::EcmpGroups;
use crate::engine::event::{Event, EventQueue};
use crate::model::aqm::{Aqm, AqmAt};
use std::collections::VecDeque;

/// Why a port refused a packet.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// A single-FIFO port's byte or packet limit (tail drop).
    Tail = 0,
    /// A multi-queue port's buffer admission (per-queue limit, complete sharing or the
    /// switch's shared pool).
    Buffer = 1,
    /// The AQM: the port's, or a multi-queue port's per-queue marker, at enqueue; or the
    /// dequeue-side AQM of a packet that went to the wire at once.
    Aqm = 2,
    /// A DRR/SFQ scheduler's own limit dropped packets on this arrival: the arrival itself
    /// or packets of the longest flow (ns-2 rules).
    SchedulerLimit = 3,
}

/// What became of a packet offered to a port (`Sim::enqueue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// The transmitter was idle and began serving at once (no queueing, no event).
    Started,
    /// Stored; it waits for the port's transmit event.
    Queued,
    /// Dropped (counted in the port's statistics).
    Dropped(DropReason),
}

/// The transmitter of a port: when the frame in service ends, and whether the port's one
/// `PortTxDone` event is armed. The fields are private: only the methods here (and
/// [`Port::begin_service`]) change them, so the one-event rule is kept in one place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transmitter {
    busy_until: SimTime,
    armed: bool,
}

impl Transmitter {
    /// When the frame now being serialized ends (or the last one ended).
    #[inline]
    pub fn busy_until(&self) -> SimTime {
        self.busy_until
    }

    /// Whether the port's `PortTxDone` event is armed.
    #[inline]
    pub fn armed(&self) -> bool {
        self.armed
    }

    /// The one idle test: nothing is being serialized at `now` and no transmit event is
    /// armed, so a frame offered now may start at once (a data frame also needs the port
    /// not to be paused, [`Port::may_start_data`]).
    #[inline]
    pub fn idle(&self, now: SimTime) -> bool {
        !self.armed && now >= self.busy_until
    }

    /// A frame is stored behind the transmitter: arm the transmit event for the end of the
    /// frame in service (`now` if none), unless it is armed already.
    #[inline]
    pub fn arm(&mut self, events: &mut EventQueue, pid: u32, now: SimTime) {
        if !self.armed {
            self.armed = true;
            events.schedule(self.busy_until.max(now), Event::PortTxDone(pid));
        }
    }

    /// The armed transmit event has fired (the port is about to pick its next frame).
    #[inline]
    pub fn fired(&mut self) {
        self.armed = false;
    }

    /// Layer 2: no frame may start before `at` (a pause): arm the transmit event for then.
    pub fn hold(&mut self, events: &mut EventQueue, pid: u32, at: SimTime) {
        self.armed = true;
        events.schedule(at, Event::PortTxDone(pid));
    }

    /// Layer 2: an extra transmit event at `at`, before the hold already armed (a resume, a
    /// control frame or a startable arrival ends the hold early). The caller notes `at` as
    /// the live hold so the superseded event is ignored.
    pub fn wake(&mut self, events: &mut EventQueue, pid: u32, at: SimTime) {
        debug_assert!(self.armed);
        events.schedule(at, Event::PortTxDone(pid));
    }
}

/// What a port starting a transmission needs besides itself: the event queue (its arrival
/// and its next transmit event) and the routes (where the peer forwards the frame).
pub struct Fabric<'a> {
    pub events: &'a mut EventQueue,
    pub nodes: &'a [Node],
    pub ecmp: &'a EcmpGroups,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    pub ports: Vec<u32>,
    /// Output port towards each destination host, indexed by node id (u32::MAX: none).
    pub route: Vec<u32>,
}

/// Per-port counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PortStats {
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub tx_data_pkts: u64,
    pub enq_pkts: u64,
    pub drops: u64,
    pub drop_bytes: u64,
    pub max_queue_bytes: u64,
    /// Packets marked CE by the AQM.
    pub marks: u64,
    /// Packets dropped by the AQM (also counted in `drops`).
    pub aqm_drops: u64,
}

impl PortStats {
    /// Count a packet of `size` bytes dropped by the AQM.
    #[inline]
    pub fn count_aqm_drop(&mut self, size: u32) {
        self.drops += 1;
        self.aqm_drops += 1;
        self.drop_bytes += size as u64;
    }
}

/// Silent-period tracker: total time in gaps longer than a threshold with no transmission.
#[derive(Clone, Debug, Default)]
pub struct SilentTracker {
    pub threshold: SimTime,
    pub last_busy_end: SimTime,
    pub total: SimTime,
    pub periods: Vec<(SimTime, SimTime)>,
}

impl SilentTracker {
    #[inline]
    pub fn on_tx(&mut self, start: SimTime, end: SimTime) {
        if start > self.last_busy_end {
            let gap = start - self.last_busy_end;
            if gap > self.threshold {
                self.total = self.total + gap;
                self.periods.push((self.last_busy_end, start));
            }
        }
        self.last_busy_end = end;
    }
    pub fn finish(&mut self, now: SimTime) {
        self.on_tx(now, now);
    }
}

#[derive(Clone, Debug)]
pub struct Port {
    pub name: String,
    pub node: u32,
    pub peer_node: u32,
    pub peer_port: u32,
    /// Link rate. Change it with [`Port::set_rate`] (keeps `ps_per_byte` in step).
    pub rate: RateBps,
    /// Picoseconds per byte when the rate divides 8·10¹² exactly (every common rate: 1, 10,
    /// 40, 100 Gb/s, 500 Mb/s), else 0 (then `tx_time` divides). Saves a division per packet.
    ps_per_byte: u64,
    pub delay: SimTime,
    /// Egress queue (FIFO) and its occupancy in bytes.
    pub queue: VecDeque<Packet>,
    pub queued_bytes: u64,
    /// Buffer limit in bytes (u64::MAX: unlimited).
    pub limit_bytes: u64,
    /// Queue limit in packets, as a dummynet pipe's `queue N` (u64::MAX: unlimited).
    pub limit_pkts: u64,
    /// The transmitter: end of the frame in service, the one `PortTxDone` event.
    pub tx: Transmitter,
    /// Packets in flight on the wire towards `peer_node`, with their arrival times.
    pub wire: VecDeque<(SimTime, Packet)>,
    pub stats: PortStats,
    pub silent: Option<SilentTracker>,
    /// Active queue management (`model/aqm.rs`) and where it is consulted.
    pub aqm: Aqm,
    pub aqm_at: AqmAt,
    /// Multi-queue egress (`engine/mq_port.rs`); `None` keeps the single FIFO above.
    pub mq: Option<Box<crate::engine::mq_port::MqPort>>,
    /// No data frame may start before this time (IEEE 802.3x PAUSE received from the peer;
    /// `engine/l2.rs`). Control frames (PAUSE, CNM) are not paused.
    pub paused_until: SimTime,
    /// The output port the peer switch forwards the wire's head packet to (u32::MAX: the
    /// peer is a host or has no route). Kept by `Port::begin_service` and `on_link_arrive`
    /// whenever the head changes, so the arrival needs no route lookup and the event loop
    /// can prefetch that port one event ahead.
    pub head_out: u32,
}

impl Port {
    pub fn new(name: String, node: u32, peer_node: u32, rate: RateBps, delay: SimTime) -> Port {
        Port {
            name,
            node,
            peer_node,
            peer_port: u32::MAX,
            rate,
            ps_per_byte: exact_ps_per_byte(rate),
            delay,
            queue: VecDeque::with_capacity(4),
            queued_bytes: 0,
            limit_bytes: u64::MAX,
            limit_pkts: u64::MAX,
            tx: Transmitter::default(),
            wire: VecDeque::with_capacity(4),
            stats: PortStats::default(),
            silent: None,
            aqm: Aqm::None,
            aqm_at: AqmAt::Off,
            mq: None,
            paused_until: SimTime::ZERO,
            head_out: u32::MAX,
        }
    }

    /// Change the link rate (service-rate changes).
    pub fn set_rate(&mut self, rate: RateBps) {
        self.rate = rate;
        self.ps_per_byte = exact_ps_per_byte(rate);
    }

    /// Serialisation time of `bytes` at the port's rate (same value as `rate.tx_time`).
    #[inline]
    pub fn tx_time(&self, bytes: u32) -> SimTime {
        debug_assert_eq!(
            self.ps_per_byte,
            exact_ps_per_byte(self.rate),
            "use set_rate"
        );
        if self.ps_per_byte != 0 {
            SimTime(bytes as u64 * self.ps_per_byte)
        } else {
            self.rate.tx_time(bytes)
        }
    }

    /// Whether a data frame offered at `now` may start at once: the transmitter is idle and
    /// no PAUSE is in force (control frames ignore the pause and test
    /// [`Transmitter::idle`] alone).
    #[inline]
    pub fn may_start_data(&self, now: SimTime) -> bool {
        self.tx.idle(now) && now >= self.paused_until
    }

    /// Serve `p` (already out of the queues) from `now`: serialize it, put it on the wire,
    /// schedule its arrival if it is the wire's head, and when `more` frames wait behind it
    /// arm the transmit event for the end of its serialisation. Every transmission starts
    /// here. (Always inlined, as the wiring it replaced: the serialisation itself,
    /// `start_tx`, stays one out-of-line copy.)
    #[inline(always)]
    pub fn begin_service(&mut self, pid: u32, now: SimTime, p: Packet, more: bool, f: Fabric) {
        debug_assert!(!self.tx.armed, "a port serves one frame at a time");
        let arrive = self.start_tx(now, p);
        if self.wire.len() == 1 {
            // Alone on the wire, so its head: note where the peer forwards it and schedule
            // its arrival (later frames are scheduled by `Sim::on_link_arrive` in turn).
            self.head_out =
                crate::engine::sim::route_hint(f.nodes, f.ecmp, self.peer_node, &self.wire[0].1);
            f.events.schedule(arrive, Event::LinkArrive(pid));
        }
        if more {
            self.tx.armed = true;
            f.events
                .schedule(self.tx.busy_until, Event::PortTxDone(pid));
        }
    }

    /// Start serializing `p` at `now`; returns the arrival time at the far end.
    #[inline]
    fn start_tx(&mut self, now: SimTime, p: Packet) -> SimTime {
        let end = now + self.tx_time(p.size);
        self.tx.busy_until = end;
        self.stats.tx_pkts += 1;
        self.stats.tx_bytes += p.size as u64;
        if p.payload > 0 {
            self.stats.tx_data_pkts += 1;
        }
        if let Some(s) = self.silent.as_mut() {
            s.on_tx(now, end);
        }
        let arrive = end + self.delay;
        self.wire.push_back((arrive, p));
        arrive
    }
}

/// `8·10¹² / rate` when that is an integer (bytes × it is then the exact serialisation time
/// in ps, no overflow below 2.3 MB for rates ≥ 1 b/s), else 0.
fn exact_ps_per_byte(rate: RateBps) -> u64 {
    let ps8 = 8 * SimTime::PS_PER_S;
    if rate.0 != 0 && ps8.is_multiple_of(rate.0) {
        ps8 / rate.0
    } else {
        0
    }
}

/// Compute static shortest-path routes (hop count) from every node to every host.
/// Ties are broken by the lowest port index, so routes are deterministic.
pub fn compute_routes(nodes: &mut [Node], ports: &[Port]) {
    let n = nodes.len();
    for node in nodes.iter_mut() {
        node.route = vec![u32::MAX; n];
    }
    for dst in 0..n {
        if nodes[dst].kind != NodeKind::Host {
            continue;
        }
        // BFS from the destination over reversed links.
        let mut dist = vec![u32::MAX; n];
        dist[dst] = 0;
        let mut frontier = VecDeque::new();
        frontier.push_back(dst);
        while let Some(v) = frontier.pop_front() {
            for &pid in &nodes[v].ports {
                let u = ports[pid as usize].peer_node as usize;
                if dist[u] == u32::MAX {
                    dist[u] = dist[v] + 1;
                    // Hosts do not forward: do not expand through a host other than dst.
                    if nodes[u].kind == NodeKind::Switch {
                        frontier.push_back(u);
                    }
                }
            }
        }
        for u in 0..n {
            if u == dst || dist[u] == u32::MAX {
                continue;
            }
            let mut best = u32::MAX;
            for &pid in &nodes[u].ports {
                let w = ports[pid as usize].peer_node as usize;
                if dist[w] != u32::MAX && dist[w] + 1 == dist[u] {
                    best = pid;
                    break;
                }
            }
            nodes[u].route[dst] = best;
        }
    }
}

#[cfg(test)]
mod port_rate_tests {
    use super::*;

    #[test]
    fn cached_serialisation_time_equals_the_division() {
        let mut p = Port::new("a->b".into(), 0, 1, RateBps(10_000_000_000), SimTime::ZERO);
        for r in [
            1u64,
            3,
            999_983,
            500_000_000,
            1_000_000_000,
            8_500_000_000,
            40_000_000_000,
        ] {
            p.set_rate(RateBps(r));
            for b in [0u32, 1, 64, 84, 1500, 9000, 65_535] {
                assert_eq!(p.tx_time(b), RateBps(r).tx_time(b), "rate {r} bytes {b}");
            }
        }
        p.set_rate(RateBps(10_000_000_000));
        assert_eq!(p.ps_per_byte, 800);
        p.set_rate(RateBps(8_500_000_000));
        assert_eq!(p.ps_per_byte, 0);
    }
}

#[cfg(test)]
mod transmitter_tests {
    use super::*;
    use crate::base::packet::{Ecn, Kind, SackBlocks};
    use crate::engine::mq_port::{MqPort, QueueMark};
    use crate::engine::sim::Sim;
    use crate::model::mq::buffer::{Admission, BufferPolicy};
    use crate::model::mq::{MultiQueue, SchedConfig};

    fn udp(seq: u64, size: u32) -> Packet {
        Packet {
            flow: u32::MAX,
            src: 0,
            dst: 1,
            seq,
            ack: 0,
            size,
            payload: size - 28,
            kind: Kind::Udp,
            flags: 0,
            ecn: Ecn::NotEct,
            class: 0,
            enq_time: SimTime::ZERO,
            sent_time: SimTime::ZERO,
            sack: SackBlocks::EMPTY,
        }
    }

    /// Two hosts on one 1 Gb/s, 5 us link; the port a→b holds `limit` bytes.
    fn pair(limit: u64) -> (Sim, u32) {
        let mut sim = Sim::new(SimTime::from_ms(10), 1);
        let a = sim.add_node("a", NodeKind::Host);
        let b = sim.add_node("b", NodeKind::Host);
        let (ab, _) = sim.add_link(
            a,
            b,
            RateBps(1_000_000_000),
            SimTime::from_us(5),
            limit,
            u64::MAX,
        );
        sim.finalize_routes();
        (sim, ab)
    }

    fn make_multi_queue(sim: &mut Sim, pid: u32, limit: u64) {
        let mq = MultiQueue::new(2, &SchedConfig::Sp, 8).unwrap();
        let adm = Admission::new(BufferPolicy::CompleteSharing { limit }, 2).unwrap();
        sim.ports[pid as usize].mq = Some(Box::new(MqPort::new(mq, adm, QueueMark::None)));
    }

    /// Run the port by hand to the end, checking after every event that the transmit event
    /// is armed exactly while packets wait; returns how many `PortTxDone` events fired.
    fn drain(sim: &mut Sim, pid: u32) -> usize {
        let mut fired = 0;
        while let Some((_, ev)) = sim.step() {
            if ev == Event::PortTxDone(pid) {
                fired += 1;
            }
            let port = &sim.ports[pid as usize];
            let waiting = port.queue.len() + port.mq.as_ref().map_or(0, |m| m.mq.len());
            assert_eq!(port.tx.armed(), waiting > 0);
            // At most one transmit event and the wire head's arrival.
            assert!(sim.events.len() <= 2);
        }
        fired
    }

    fn one_event_for_any_backlog(multi_queue: bool, pass_through: bool) {
        let (mut sim, ab) = pair(u64::MAX);
        sim.mq_pass_through = pass_through;
        if multi_queue {
            make_multi_queue(&mut sim, ab, u64::MAX);
        }
        assert!(sim.ports[ab as usize].tx.idle(SimTime::ZERO));
        assert_eq!(sim.enqueue(ab, udp(0, 1500)), Enqueued::Started);
        // Started at once: only the arrival is pending, no transmit event.
        assert_eq!(sim.events.len(), 1);
        assert!(!sim.ports[ab as usize].tx.armed());
        assert!(!sim.ports[ab as usize].tx.idle(SimTime::ZERO));
        for i in 1..20 {
            assert_eq!(sim.enqueue(ab, udp(i, 1500)), Enqueued::Queued);
            assert!(sim.ports[ab as usize].tx.armed());
            assert_eq!(sim.events.len(), 2, "one transmit event after {i} queued");
        }
        assert_eq!(drain(&mut sim, ab), 19);
        assert_eq!(sim.absorbed, 20);
        assert_eq!(sim.ports[ab as usize].stats.tx_pkts, 20);
        assert!(sim.ports[ab as usize].tx.idle(sim.now));
    }

    #[test]
    fn fifo_port_keeps_one_transmit_event() {
        one_event_for_any_backlog(false, true);
    }

    #[test]
    fn multi_queue_port_keeps_one_transmit_event() {
        one_event_for_any_backlog(true, true);
        one_event_for_any_backlog(true, false);
    }

    #[test]
    fn fifo_port_reports_tail_drop_at_the_byte_limit() {
        // 3000 B of buffer: the first packet is on the wire, two wait, the fourth is dropped.
        let (mut sim, ab) = pair(3000);
        let got: Vec<_> = (0..4).map(|i| sim.enqueue(ab, udp(i, 1500))).collect();
        assert_eq!(
            got,
            [
                Enqueued::Started,
                Enqueued::Queued,
                Enqueued::Queued,
                Enqueued::Dropped(DropReason::Tail)
            ]
        );
        assert_eq!(sim.ports[ab as usize].stats.drops, 1);
        assert_eq!(drain(&mut sim, ab), 2);
        // Idle again: the next packet starts at once.
        assert_eq!(sim.enqueue(ab, udp(9, 1500)), Enqueued::Started);
    }

    #[test]
    fn multi_queue_port_reports_buffer_drop() {
        let (mut sim, ab) = pair(u64::MAX);
        make_multi_queue(&mut sim, ab, 3000);
        let got: Vec<_> = (0..4).map(|i| sim.enqueue(ab, udp(i, 1500))).collect();
        assert_eq!(
            got,
            [
                Enqueued::Started,
                Enqueued::Queued,
                Enqueued::Queued,
                Enqueued::Dropped(DropReason::Buffer)
            ]
        );
        assert_eq!(drain(&mut sim, ab), 2);
    }

    #[test]
    fn a_paused_port_queues_and_arms_for_now() {
        // A PAUSE in force: the idle transmitter does not start a data frame; the frame is
        // queued and the transmit event armed for `now` (layer 2 then holds it).
        let (mut sim, ab) = pair(u64::MAX);
        sim.ports[ab as usize].paused_until = SimTime::from_us(100);
        assert!(sim.ports[ab as usize].tx.idle(SimTime::ZERO));
        assert!(!sim.ports[ab as usize].may_start_data(SimTime::ZERO));
        assert_eq!(sim.enqueue(ab, udp(0, 1500)), Enqueued::Queued);
        assert_eq!(sim.events.len(), 1);
        assert_eq!(
            sim.events.pop(),
            Some((SimTime::ZERO, Event::PortTxDone(ab)))
        );
    }
}

//! Network elements: nodes (hosts and output-queued switches), ports with their egress
//! queue and their half of a full-duplex point-to-point link, and static routing.
//!
//! A port keeps at most one pending event for transmission and one for delivery:
//! - transmission is lazy, and its rules live in one place, the port's [`Transmitter`] and
//!   [`Port::serve`] (or [`Port::begin_service`]). A packet that finds the transmitter idle
//!   ([`Transmitter::idle`]) is served at once, with no event. Serving a packet puts it on
//!   the wire and, when others wait behind it, arms the port's one `PortTxDone` event for
//!   the end of its serialisation; a packet stored behind a busy transmitter arms that same
//!   event if it is not armed yet ([`Transmitter::arm`]). When the event fires the port
//!   serves its next packet the same way, so the event stays armed exactly as long as
//!   there is a backlog. (Layer 2 adds hold and wake-up events for paused ports,
//!   [`Transmitter::hold`] and [`Transmitter::wake`]; `engine/datapath/l2/mod.rs` discards the stale ones.)
//! - the wire is a FIFO of packets in flight with their arrival times (fixed delay, in
//!   order), and only the head's arrival is in the event queue.
//!
//! Offering a packet to a port (`Core::enqueue`) says what became of it: [`Enqueued`].
//!
//! Buffer accounting: the switch buffer limit counts the bytes waiting in the queue; the
//! packet being serialized has left the queue (as in ns-2's DropTail + link, which the
//! Devkota 2010 used). A packet is dropped if `queued + size > limit`.

pub mod ecmp;
pub mod mq_port;
pub mod routing;
pub(crate) mod switch_graph;

use crate::base::alloc::{try_filled, AllocError};
use crate::base::ids::{NodeId, PortId};
use crate::base::packet::{Ecn, Packet, PacketArena, PktRef};
use crate::base::units::{RateBps, SimTime};
use crate::engine::event::{Event, EventQueue};
use crate::engine::net::ecmp::EcmpGroups;
use crate::model::aqm::{Aqm, AqmAt, Verdict};
use std::collections::VecDeque;

/// Why a port discarded a packet. Closed: the counters are arrays indexed by it
/// ([`ReasonCounts`]) and the result tables have one column per reason ([`DropReason::ALL`]);
/// its `u8` value, the index, is its place in this list, from 0.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// A single-FIFO port's byte or packet limit (tail drop).
    Tail,
    /// A multi-queue port's buffer admission (per-queue limit, complete sharing or the
    /// switch's shared pool).
    Buffer,
    /// RED (the port's AQM or a per-queue instance) dropping a packet that is not
    /// ECN-capable, at enqueue or at dequeue.
    Aqm,
    /// A DRR/SFQ scheduler's own limit dropped packets on this arrival: the arrival itself
    /// or packets of the longest flow (ns-2 rules).
    SchedulerLimit,
    /// CoDel's dequeue-side drop (RFC 8289), per queue of a multi-queue port.
    Codel,
}

impl DropReason {
    pub const COUNT: usize = 5;
    /// Every reason, in counter order.
    pub const ALL: [DropReason; DropReason::COUNT] = [
        DropReason::Tail,
        DropReason::Buffer,
        DropReason::Aqm,
        DropReason::SchedulerLimit,
        DropReason::Codel,
    ];

    /// Short name (result columns `drops_<name>`).
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Tail => "tail",
            DropReason::Buffer => "buffer",
            DropReason::Aqm => "aqm",
            DropReason::SchedulerLimit => "sched",
            DropReason::Codel => "codel",
        }
    }
}

pub use crate::model::aqm::MarkReason;

impl MarkReason {
    /// The reason a `Drop` of this marker is counted under at the port: CoDel's own
    /// column, every other AQM's drops under `aqm`.
    #[inline]
    pub fn drop_reason(self) -> DropReason {
        match self {
            MarkReason::Codel => DropReason::Codel,
            _ => DropReason::Aqm,
        }
    }
}

/// Drops and CE marks by reason: the counters of a port ([`PortStats::by`]) and of a
/// multi-queue port's class queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReasonCounts {
    pub drops: [u64; DropReason::COUNT],
    pub marks: [u64; MarkReason::COUNT],
}

impl ReasonCounts {
    /// Drops over every reason.
    pub fn drops_total(&self) -> u64 {
        self.drops.iter().sum()
    }
    /// Marks over every reason.
    pub fn marks_total(&self) -> u64 {
        self.marks.iter().sum()
    }
    /// Drops decided by an AQM (RED and CoDel; the former `aqm_drops` counter).
    pub fn aqm_drops(&self) -> u64 {
        self.drops[DropReason::Aqm as usize] + self.drops[DropReason::Codel as usize]
    }
}

/// What an AQM's verdict means for this packet: a `Mark` on a packet that is not
/// ECN-capable becomes what its marker says ([`MarkReason::if_not_ect`]); `Pass` and `Drop`
/// stay. Pure: the callers that must know before the buffer check whether a verdict drops
/// (a mark is applied only to a packet the buffer admits) ask this first.
#[inline(always)]
pub fn resolve(v: Verdict, by: MarkReason, p: &Packet) -> Verdict {
    if v == Verdict::Mark && !p.is_ect() {
        by.if_not_ect()
    } else {
        v
    }
}

/// The one place an AQM verdict takes effect on a packet at a port (as the base class of
/// ns-3's queue discs: the model decides, the port acts and counts). After [`resolve`]:
/// `Mark` sets CE on the (ECN-capable) packet and counts a mark under `by`; `Drop` counts
/// a drop under `by.drop_reason()` (the packet's bytes in `drop_bytes`; the caller
/// discards it); `Pass` does nothing. `queue`: the class queue's counters on a multi-queue
/// port, when the packet has one. Returns the verdict that took effect.
#[inline]
pub fn apply_verdict(
    v: Verdict,
    by: MarkReason,
    p: &mut Packet,
    port: &mut PortStats,
    queue: Option<&mut ReasonCounts>,
) -> Verdict {
    let v = resolve(v, by, p);
    match v {
        Verdict::Pass => {}
        Verdict::Mark => {
            p.ecn = Ecn::Ce;
            port.by.marks[by as usize] += 1;
            if let Some(q) = queue {
                q.marks[by as usize] += 1;
            }
        }
        Verdict::Drop => {
            let r = by.drop_reason();
            port.count_drop(r, p.size);
            if let Some(q) = queue {
                q.drops[r as usize] += 1;
            }
        }
    }
    v
}

/// What became of a packet offered to a port (`Core::enqueue`).
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
/// [`Port::serve`]) change them, so the one-event rule is kept in one place.
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
    pub fn arm(&mut self, events: &mut EventQueue, pid: PortId, now: SimTime) {
        if !self.armed {
            self.armed = true;
            events.schedule(self.busy_until.max(now), Event::PortTxDone(pid));
        }
    }

    /// [`Transmitter::arm`] where the transmit event is often due at once (layer 2 arms an
    /// idle port's transmitter at the current instant): through the event queue's lane
    /// (`EventQueue::schedule_soon`).
    #[inline]
    pub fn arm_soon(&mut self, events: &mut EventQueue, pid: PortId, now: SimTime) {
        if !self.armed {
            self.armed = true;
            events.schedule_soon(self.busy_until.max(now), Event::PortTxDone(pid));
        }
    }

    /// The armed transmit event has fired (the port is about to pick its next frame).
    #[inline]
    pub fn fired(&mut self) {
        self.armed = false;
    }

    /// Layer 2: no frame may start before `at` (a pause): arm the transmit event for then.
    pub fn hold(&mut self, events: &mut EventQueue, pid: PortId, at: SimTime) {
        self.armed = true;
        events.schedule(at, Event::PortTxDone(pid));
    }

    /// Layer 2: an extra transmit event at `at`, before the hold already armed (a resume, a
    /// control frame or a startable arrival ends the hold early). The caller notes `at` as
    /// the live hold so the superseded event is ignored.
    pub fn wake(&mut self, events: &mut EventQueue, pid: PortId, at: SimTime) {
        debug_assert!(self.armed);
        events.schedule(at, Event::PortTxDone(pid));
    }
}

/// What a port starting a transmission needs besides itself: the event queue (its arrival
/// and its next transmit event) and the routes (where the peer forwards the frame).
pub struct Fabric<'a> {
    pub events: &'a mut EventQueue,
    pub routing: &'a routing::Routing,
    pub ecmp: &'a EcmpGroups,
    pub packets: &'a PacketArena,
}

/// The [`Fabric`] of the event queue `events` (a `&mut`) and the network `net`, written as
/// field borrows so that a port of `net` may stay borrowed beside it.
macro_rules! fabric {
    ($events:expr, $net:expr) => {
        $crate::engine::net::Fabric {
            events: $events,
            routing: &$net.routing,
            ecmp: &$net.ecmp,
            packets: &$net.packets,
        }
    };
}
pub(crate) use fabric;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    pub ports: Vec<PortId>,
    /// Output port towards each destination host, indexed by node id (`PortId::NONE`:
    /// none). Empty for a host whose one link goes to a switch: see `uplink` and
    /// `Routing::route`. Moved into `Network::routing` (and emptied here) when the
    /// simulation finalizes its routes.
    /// With `by_edge` set, a switch's table is indexed by the destination's edge column
    /// instead (see `edge_col`).
    pub route: Vec<PortId>,
    /// A host with one link, to a switch: that port (else `NONE`). It reaches every other
    /// host of the same `fabric` through it and nothing else.
    pub uplink: PortId,
    /// Connected component of the switches (linked through switches only) that the node
    /// is, or hangs off (`u32::MAX`: none).
    pub fabric: u32,
    /// A switch whose `route` is indexed by edge column (single-homed hosts: one entry per
    /// switch that has hosts, not one per node).
    pub by_edge: bool,
    /// A single-homed host: the switch it hangs off (else `NONE`)...
    pub edge: NodeId,
    /// ... that switch's column in the `by_edge` tables (`u32::MAX`: none) ...
    pub edge_col: u32,
    /// ... and that switch's port towards the host.
    pub down: PortId,
}

impl Node {
    pub fn new(name: String, kind: NodeKind) -> Node {
        Node {
            name,
            kind,
            ports: Vec::new(),
            route: Vec::new(),
            uplink: PortId::NONE,
            fabric: u32::MAX,
            by_edge: false,
            edge: NodeId::NONE,
            edge_col: u32::MAX,
            down: PortId::NONE,
        }
    }
}

/// Per-port counters. Packet conservation: every packet offered to the port (`arrived`)
/// was dropped, still waits, or started its transmission (`tx_pkts`); see
/// [`Port::conservation`].
#[derive(Clone, Debug, Default, PartialEq)]
#[repr(C)]
pub struct PortStats {
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub tx_data_pkts: u64,
    /// Packets offered to the port (`Core::enqueue`, and layer-2 control frames).
    pub arrived: u64,
    pub max_queue_bytes: u64,
    pub drop_bytes: u64,
    /// Drops and CE marks by reason.
    pub by: ReasonCounts,
}

impl PortStats {
    /// Count a packet of `size` bytes dropped for `reason`.
    #[inline]
    pub fn count_drop(&mut self, reason: DropReason, size: u32) {
        self.by.drops[reason as usize] += 1;
        self.drop_bytes += size as u64;
    }
    /// Packets dropped, every reason.
    pub fn drops(&self) -> u64 {
        self.by.drops_total()
    }
    /// Packets marked CE by an AQM, every reason.
    pub fn marks(&self) -> u64 {
        self.by.marks_total()
    }
    /// Packets dropped by an AQM (RED, CoDel); also in [`PortStats::drops`].
    pub fn aqm_drops(&self) -> u64 {
        self.by.aqm_drops()
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

/// A port's name, "A->B": its node's name, then its peer's. Formatted when asked, not
/// stored: a `String` per port was about 56 bytes (header and heap block) of an idle
/// flow's two ports.
pub fn port_name(nodes: &[Node], p: &Port) -> String {
    format!(
        "{}->{}",
        nodes[p.node.idx()].name,
        nodes[p.peer_node.idx()].name
    )
}

/// A port: its link, egress queue(s), transmitter and wire. `repr(C)`, laid out by use:
/// the fields a packet hop reads (wire, transmitter, multi-queue state, the serialisation
/// and routing fields, the first counters of `stats`) come first and span three cache
/// lines, where the compiler's order spread them over all six of the 336 bytes; the FIFO's
/// own queue and limits, the AQM and the reason counters follow. The order is memory layout
/// only and changes no result; `port_rate_tests::port_fields_a_hop_reads_come_first`
/// checks it.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Port {
    /// Packets in flight on the wire towards `peer_node`, in order of arrival.
    pub wire: VecDeque<InFlight>,
    /// The transmitter: end of the frame in service, the one `PortTxDone` event.
    pub tx: Transmitter,
    /// Multi-queue egress (`engine/net/mq_port.rs`); `None` keeps the single FIFO below.
    pub mq: Option<Box<crate::engine::net::mq_port::MqPort>>,
    /// Packet capture of the frames this port starts (`engine/observe/pcap.rs`); `None`:
    /// off (one pointer test per transmission).
    pub pcap: Option<Box<crate::engine::observe::pcap::PortCapture>>,
    /// Link rate. Change it with [`Port::set_rate`] (keeps `ps_per_byte` in step).
    pub rate: RateBps,
    /// Picoseconds per byte when the rate divides 8·10¹² exactly (every common rate: 1, 10,
    /// 40, 100 Gb/s, 500 Mb/s), else 0 (then `tx_time` divides). Saves a division per packet.
    ps_per_byte: u64,
    pub delay: SimTime,
    /// Bytes waiting in the egress queue(s).
    pub queued_bytes: u64,
    /// Boxed: one port in a run tracks silences, the others keep a null pointer.
    pub silent: Option<Box<SilentTracker>>,
    /// No data frame may start before this time (IEEE 802.3x PAUSE received from the peer;
    /// `engine/datapath/l2/mod.rs`). Control frames (PAUSE, CNM) are not paused.
    pub paused_until: SimTime,
    /// The output port the peer switch forwards the wire's head packet to (`NONE`: the
    /// peer is a host or has no route). Kept by `Port::serve` and `on_link_arrive`
    /// whenever the head changes, so the arrival needs no route lookup and the event loop
    /// can prefetch that port one event ahead.
    pub head_out: PortId,
    /// The wire's head packet (meaningless while the wire is empty), kept with `head_out`:
    /// the event loop prefetches it through the port alone, one event after it prefetched
    /// the port (`Sim::prefetch_for`).
    pub head_h: PktRef,
    pub node: NodeId,
    pub peer_node: NodeId,
    /// Where the active queue management below is consulted.
    pub aqm_at: AqmAt,
    /// A switch egress that appends an INT hop record to the data packets asking for one
    /// (`base/int.rs`; set by `Network::enable_int`).
    pub int_record: bool,
    /// The peer's port of this link (in the padding after `aqm_at`).
    pub peer_port: PortId,
    /// Counters; the ones each packet updates come first.
    pub stats: PortStats,
    /// Active queue management (`model/aqm/`): one instance on the port's total backlog.
    pub aqm: Aqm,
    /// Egress queue (FIFO of entries for packets in `Network::packets`; its occupancy is
    /// `queued_bytes`).
    pub queue: VecDeque<Waiting>,
    /// Buffer limit in bytes (u64::MAX: unlimited).
    pub limit_bytes: u64,
    /// Queue limit in packets, as a dummynet pipe's `queue N` (u64::MAX: unlimited).
    pub limit_pkts: u64,
}

/// A packet waiting in a port's queue: its handle, and what its transmission needs of it
/// (its size and payload, and the port the peer switch will forward it to, `Routing::hint`,
/// `NONE` when the peer is a host). Taken when the packet is queued, while it is in the
/// cache: the packet is then not read again when it leaves, microseconds later, by when it
/// is no longer in the nearer caches (docs/performance.md, "How the speed is obtained":
/// the fabric gained 8–9 %). Routes are
/// static and the ECMP hash is pure, so the lookup may be made at either time. 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    pub h: PktRef,
    pub size: u32,
    pub payload: u32,
    pub out: PortId,
}

impl Waiting {
    /// The entry for packet `p`, stored at `h`, forwarded to `out` by the peer.
    #[inline(always)]
    pub fn new(h: PktRef, p: &Packet, out: PortId) -> Waiting {
        Waiting {
            h,
            size: p.size,
            payload: p.payload,
            out,
        }
    }
}

/// A packet in flight on a wire: its arrival time, its handle in `Network::packets`, and
/// the port the peer switch will forward it to (`Routing::hint`; `NONE` when the peer is a
/// host). The route is looked up when the packet is queued (it travels in the queue entry,
/// [`Waiting`]) or starts at once, while the packet is in the cache, not when it becomes
/// the wire's head tens of microseconds later (docs/performance.md, "How the speed is
/// obtained"). 16 bytes, as the pair it replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlight {
    pub at: SimTime,
    pub h: PktRef,
    pub out: PortId,
}

/// The bytes of a [`Port`] that a packet hop reads and writes: from its start to the end
/// of the per-packet counters of `stats` (what `Sim::prefetch_for` loads ahead).
pub const PORT_HOT_BYTES: usize =
    std::mem::offset_of!(Port, stats) + std::mem::offset_of!(PortStats, drop_bytes);
const _: () = assert!(
    PORT_HOT_BYTES <= 3 * 64,
    "a port's hot part spans three lines"
);

impl Port {
    pub fn new(node: NodeId, peer_node: NodeId, rate: RateBps, delay: SimTime) -> Port {
        Port {
            node,
            peer_node,
            peer_port: PortId::NONE,
            rate,
            ps_per_byte: exact_ps_per_byte(rate),
            delay,
            // Empty until the first packet: a host port of an idle flow costs nothing.
            queue: VecDeque::new(),
            queued_bytes: 0,
            limit_bytes: u64::MAX,
            limit_pkts: u64::MAX,
            tx: Transmitter::default(),
            wire: VecDeque::new(),
            stats: PortStats::default(),
            silent: None,
            aqm: Aqm::None,
            aqm_at: AqmAt::Off,
            int_record: false,
            mq: None,
            paused_until: SimTime::ZERO,
            head_out: PortId::NONE,
            head_h: PktRef::NONE,
            pcap: None,
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

    /// Packets waiting at the port: its FIFO (on a multi-queue port: layer-2 control
    /// frames) and its class queues.
    pub fn queued_pkts(&self) -> u64 {
        (self.queue.len() + self.mq.as_ref().map_or(0, |m| m.mq.len())) as u64
    }

    /// Packet conservation: `arrived = dropped + queued + sent` (sent: started on the
    /// wire). `Err` gives the four numbers (the caller names the port: `port_name`).
    pub fn conservation(&self) -> Result<(), String> {
        let s = &self.stats;
        let (dropped, queued) = (s.drops(), self.queued_pkts());
        if s.arrived == dropped + queued + s.tx_pkts {
            Ok(())
        } else {
            Err(format!(
                "arrived {} != dropped {dropped} + queued {queued} + sent {}",
                s.arrived, s.tx_pkts
            ))
        }
    }

    /// Serve packet `h` (already out of the queues) from `now`: serialize it, put it on the
    /// wire, schedule its arrival if it is the wire's head, and when `more` frames wait
    /// behind it arm the transmit event for the end of its serialisation. Looks up where
    /// the peer forwards it; the queues' own departures use [`Port::serve`] with the
    /// lookup made at enqueue.
    #[inline(always)]
    pub fn begin_service(&mut self, pid: PortId, now: SimTime, h: PktRef, more: bool, f: Fabric) {
        let p = &f.packets[h];
        let w = Waiting::new(h, p, f.routing.hint(f.ecmp, self.peer_node, p));
        self.serve(pid, now, w, more, f);
    }

    /// [`Port::begin_service`] of a packet whose size, payload and route at the peer its
    /// queue entry holds: the packet itself is not read (unless a capture records it).
    /// Every transmission starts here. (Always inlined, as the wiring it replaced: the
    /// serialisation itself, `start_tx`, stays one out-of-line copy.)
    #[inline(always)]
    pub fn serve(&mut self, pid: PortId, now: SimTime, w: Waiting, more: bool, f: Fabric) {
        debug_assert!(!self.tx.armed, "a port serves one frame at a time");
        debug_assert_eq!(w, {
            let p = &f.packets[w.h];
            Waiting::new(w.h, p, f.routing.hint(f.ecmp, self.peer_node, p))
        });
        let arrive = self.start_tx(now, w, f.packets);
        if self.wire.len() == 1 {
            // Alone on the wire, so its head: note where the peer forwards it and schedule
            // its arrival (later frames are scheduled by `Core::on_link_arrive` in turn).
            self.head_out = w.out;
            self.head_h = w.h;
            f.events.schedule(arrive, Event::LinkArrive(pid));
        }
        if more {
            self.tx.armed = true;
            f.events
                .schedule(self.tx.busy_until, Event::PortTxDone(pid));
        }
    }

    /// Start serializing packet `w` at `now`; returns the arrival time at the far end.
    #[inline]
    fn start_tx(&mut self, now: SimTime, w: Waiting, packets: &PacketArena) -> SimTime {
        let end = now + self.tx_time(w.size);
        if let Some(c) = self.pcap.as_mut() {
            c.record(now.0, &packets[w.h]);
        }
        if self.int_record {
            let hop = crate::base::int::IntHop {
                rate_bps: self.rate.0,
                ts: now,
                tx_bytes: self.stats.tx_bytes,
                qlen: self.queued_bytes,
            };
            packets.int_record(w.h, hop);
        }
        self.tx.busy_until = end;
        self.stats.tx_pkts += 1;
        self.stats.tx_bytes += w.size as u64;
        if w.payload > 0 {
            self.stats.tx_data_pkts += 1;
        }
        if let Some(s) = self.silent.as_mut() {
            s.on_tx(now, end);
        }
        let arrive = end + self.delay;
        self.wire.push_back(InFlight {
            at: arrive,
            h: w.h,
            out: w.out,
        });
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

/// The bytes `compute_routes` allocates for `nodes`: where hosts are single-homed, a table
/// of one `PortId` per switch with hosts in every switch, plus two search arrays of one
/// word per node; else one entry per (node, node) pair. `scenario::estimate` checks it
/// against the memory available before the routes are computed; keep it in step with
/// `compute_routes`.
pub fn route_table_bytes(nodes: &[Node], ports: &[Port]) -> u64 {
    let n = nodes.len() as u64;
    let per = std::mem::size_of::<PortId>() as u64;
    if single_homed(nodes, ports) {
        let is_host = |p: &PortId| nodes[ports[p.idx()].peer_node.idx()].kind == NodeKind::Host;
        let switches = nodes.iter().filter(|x| x.kind == NodeKind::Switch);
        let (s, e) = switches.fold((0u64, 0u64), |(s, e), x| {
            (s + 1, e + u64::from(x.ports.iter().any(is_host)))
        });
        // The tables, the node-to-rank map and the fabric numbers, the switch links.
        let links = nodes
            .iter()
            .filter(|x| x.kind == NodeKind::Switch)
            .map(|x| x.ports.len() as u64)
            .sum::<u64>();
        s * e * per + 2 * n * per + links * 2 * per
    } else {
        n * n * per
    }
}

/// Whether every host has at most one link and it goes to a switch.
fn single_homed(nodes: &[Node], ports: &[Port]) -> bool {
    nodes.iter().all(|n| {
        n.kind == NodeKind::Switch
            || n.ports.len() <= 1
                && n.ports
                    .iter()
                    .all(|p| nodes[ports[p.idx()].peer_node.idx()].kind == NodeKind::Switch)
    })
}

/// Fill every node's routes: towards each destination host, the first of the node's ports
/// (in port order) on a shortest path, where hosts do not forward (a path's inner nodes are
/// switches).
///
/// Where every host has at most one link and it goes to a switch (stars, dumbbells,
/// leaf-spines, fat-trees), hosts keep no table (`Node::uplink`, `Node::fabric`) and the
/// switches' tables have one entry per switch with hosts (`Node::by_edge`), from one
/// breadth-first search per such switch: O(edge switches × links) time and
/// O(switches × edge switches) memory instead of O(nodes²). Other topologies take the general way, one search
/// per destination host. Both give the same entries (tested).
///
/// The tables are allocated with `try_reserve` (`base::alloc`): an allocator that refuses
/// gives an `AllocError` (the nodes' tables are then incomplete; the caller gives up).
pub fn compute_routes(nodes: &mut [Node], ports: &[Port]) -> Result<(), AllocError> {
    if single_homed(nodes, ports) {
        routes_by_edge(nodes, ports, None)
    } else {
        routes_by_destination(nodes, ports)
    }
}

/// `compute_routes` followed by `EcmpGroups::build`, with the same entries and member
/// lists; for single-homed hosts in one pass, the ECMP groups formed as the tables are
/// filled (one search per edge switch instead of two).
pub fn compute_routes_ecmp(nodes: &mut [Node], ports: &[Port]) -> Result<EcmpGroups, AllocError> {
    if single_homed(nodes, ports) {
        let mut g = EcmpGroups::default();
        routes_by_edge(nodes, ports, Some(&mut g))?;
        Ok(g)
    } else {
        routes_by_destination(nodes, ports)?;
        EcmpGroups::build(nodes, ports)
    }
}

const ROUTES: &str = "route tables";

/// Distances from `src` to every node over paths whose inner nodes are switches (`src`
/// itself is expanded whatever its kind); u32::MAX: unreachable.
pub(crate) fn bfs(
    nodes: &[Node],
    ports: &[Port],
    src: usize,
    dist: &mut [u32],
    frontier: &mut VecDeque<usize>,
) {
    dist.iter_mut().for_each(|d| *d = u32::MAX);
    dist[src] = 0;
    frontier.clear();
    frontier.push_back(src);
    while let Some(v) = frontier.pop_front() {
        for &pid in &nodes[v].ports {
            let u = ports[pid.idx()].peer_node.idx();
            if dist[u] == u32::MAX {
                dist[u] = dist[v] + 1;
                // Hosts do not forward: do not expand through a host.
                if nodes[u].kind == NodeKind::Switch {
                    frontier.push_back(u);
                }
            }
        }
    }
}

/// The general way: one search from each destination host, a table in every node.
pub(crate) fn routes_by_destination(nodes: &mut [Node], ports: &[Port]) -> Result<(), AllocError> {
    let n = nodes.len();
    for node in nodes.iter_mut() {
        node.route = try_filled(n, PortId::NONE, ROUTES)?;
        node.uplink = PortId::NONE;
        node.fabric = u32::MAX;
        node.by_edge = false;
        node.edge = NodeId::NONE;
        node.edge_col = u32::MAX;
        node.down = PortId::NONE;
    }
    let mut dist = try_filled(n, u32::MAX, ROUTES)?;
    let mut frontier = VecDeque::new();
    for dst in 0..n {
        if nodes[dst].kind != NodeKind::Host {
            continue;
        }
        bfs(nodes, ports, dst, &mut dist, &mut frontier);
        for u in 0..n {
            if u == dst || dist[u] == u32::MAX {
                continue;
            }
            let mut best = PortId::NONE;
            for &pid in &nodes[u].ports {
                let w = ports[pid.idx()].peer_node.idx();
                if dist[w] != u32::MAX && dist[w] + 1 == dist[u] {
                    best = pid;
                    break;
                }
            }
            nodes[u].route[dst] = best;
        }
    }
    Ok(())
}

/// Single-homed hosts: tables by destination edge switch. For switch `u` and host `h`
/// hanging off switch `e ≠ u`, the general rule picks the first port whose peer `w` has
/// `dist(w, h) + 1 == dist(u, h)`; a host peer never qualifies (hosts hang off one switch and
/// do not forward), and for a switch peer `dist(w, h) = dist(w, e) + 1`. So the entry is the
/// same for every host of `e`: one search from each edge switch `e` (links are duplex, so
/// `dist(w, e) = dist(e, w)`) fills one column of every switch's table. A switch reaches its
/// own hosts through their ports (`Node::down`). O(edge switches × links) time and
/// O(switches × edge switches) memory.
/// With `ecmp`, entries with several next hops name their ECMP group, formed there.
pub(crate) fn routes_by_edge(
    nodes: &mut [Node],
    ports: &[Port],
    mut ecmp: Option<&mut EcmpGroups>,
) -> Result<(), AllocError> {
    let n = nodes.len();
    let switches: Vec<usize> = (0..n)
        .filter(|&u| nodes[u].kind == NodeKind::Switch)
        .collect();
    // Each host's switch and that switch's (first) port to it; the switches with hosts
    // get the edge columns, in node order.
    let mut edges: Vec<usize> = Vec::new();
    for node in nodes.iter_mut() {
        node.edge = NodeId::NONE;
        node.edge_col = u32::MAX;
        node.down = PortId::NONE;
    }
    for &u in &switches {
        let mut has_host = false;
        for &pid in &nodes[u].ports {
            let w = ports[pid.idx()].peer_node.idx();
            if nodes[w].kind == NodeKind::Host {
                has_host = true;
            }
        }
        if !has_host {
            continue;
        }
        let col = edges.len() as u32;
        edges.push(u);
        for i in 0..nodes[u].ports.len() {
            let pid = nodes[u].ports[i];
            let w = ports[pid.idx()].peer_node.idx();
            if nodes[w].kind == NodeKind::Host && nodes[w].down.is_none() {
                nodes[w].edge = NodeId(u as u32);
                nodes[w].edge_col = col;
                nodes[w].down = pid;
            }
        }
    }
    // Fabrics: switches connected through switches, numbered by the switch-order rank of
    // their first switch.
    let g = switch_graph::SwitchGraph::new(nodes, ports)?;
    let mut fabric = try_filled(n, u32::MAX, ROUTES)?;
    let mut dist = try_filled(g.len(), u32::MAX, ROUTES)?;
    let mut queue = Vec::new();
    for r in 0..g.len() {
        if fabric[g.node[r]] == u32::MAX {
            g.bfs(r, &mut dist, &mut queue);
            for (t, &d) in dist.iter().enumerate() {
                if d != u32::MAX {
                    fabric[g.node[t]] = r as u32;
                }
            }
        }
    }
    let cols = edges.len();
    for &u in &switches {
        nodes[u].route = try_filled(cols, PortId::NONE, ROUTES)?;
        nodes[u].by_edge = true;
        nodes[u].uplink = PortId::NONE;
        nodes[u].fabric = fabric[u];
    }
    let mut grouper = ecmp::EdgeGrouper::new(g.len());
    g.toward_each_edge(&edges, |c, r, closer| {
        let group = match ecmp.as_deref_mut() {
            Some(groups) => grouper.entry(groups, r, closer),
            None => None,
        };
        nodes[g.node[r]].route[c] =
            group.unwrap_or_else(|| closer.first().copied().unwrap_or(PortId::NONE));
    })?;
    for host in nodes.iter_mut().filter(|x| x.kind == NodeKind::Host) {
        let up = host.ports.first().copied().unwrap_or(PortId::NONE);
        let f = if up.is_some() {
            fabric[ports[up.idx()].peer_node.idx()]
        } else {
            u32::MAX
        };
        host.route = Vec::new();
        // A host without a link keeps `NONE`: it reaches nothing, like an empty table.
        host.uplink = up;
        host.fabric = f;
        host.by_edge = false;
    }
    Ok(())
}

/// The network: nodes, their routing, ports (queues, transmitters, wires), the switches'
/// shared buffer pools, ECMP groups, and the packet counters of the whole fabric.
pub struct Network {
    pub nodes: Vec<Node>,
    /// The nodes' routes, dense (`engine/net/routing.rs`): empty until the simulation
    /// finalizes its routes (`Core::finalize_routes`), which moves them here.
    pub routing: routing::Routing,
    pub ports: Vec<Port>,
    /// The packets on wires and in the ports' FIFO queues (`base/packet.rs`); the wires
    /// and queues hold their handles.
    pub packets: PacketArena,
    /// Switch-wide shared buffer pools (dynamic-threshold multi-queue ports, `engine/net/mq_port.rs`).
    pub pools: Vec<crate::model::mq::buffer::SharedPool>,
    /// ECMP groups named by switch route entries with `ecmp::ECMP_BIT` (`engine/net/ecmp.rs`).
    pub ecmp: crate::engine::net::ecmp::EcmpGroups,
    /// Let a packet that finds a multi-queue port idle and empty skip the FIFO round trip
    /// (`engine/net/mq_port.rs`; results are identical either way — tested). Default true.
    pub mq_pass_through: bool,
    /// Packets handed to the network by hosts, and packets absorbed by hosts.
    pub injected: u64,
    pub absorbed: u64,
    /// Packets discarded because no route led to their destination.
    pub unroutable: u64,
}

impl Network {
    /// Keep INT records (`base/int.rs`): every switch egress appends a hop record to the
    /// data packets that ask for one.
    pub fn enable_int(&mut self) {
        self.packets.enable_int();
        for i in 0..self.ports.len() {
            let node = self.ports[i].node;
            self.ports[i].int_record = self.nodes[node.idx()].kind == NodeKind::Switch;
        }
    }

    /// The ports packet `p` leaves by, from its source host to its destination (ECMP
    /// resolved by its hash), or None if it has no route (or loops).
    pub fn path(&self, p: &crate::base::packet::Packet) -> Option<Vec<PortId>> {
        let mut out = Vec::new();
        let mut node = p.src;
        while node != p.dst {
            let pid = match self.routing.kind(node) {
                Some(NodeKind::Switch) => self.routing.hint(&self.ecmp, node, p),
                _ if node == p.src => self.routing.route(node, p.dst),
                _ => PortId::NONE,
            };
            if pid == PortId::NONE || out.len() > self.nodes.len() {
                return None;
            }
            out.push(pid);
            node = self.ports[pid.idx()].peer_node;
        }
        Some(out)
    }

    /// The name of port `pid`, "A->B" (`port_name`).
    pub fn port_name(&self, pid: PortId) -> String {
        port_name(&self.nodes, &self.ports[pid.idx()])
    }

    /// Every port's name, by port id (for tables that repeat them).
    pub fn port_names(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|p| port_name(&self.nodes, p))
            .collect()
    }
}

#[cfg(test)]
mod tests;

//! Packets: small plain structs, stored once in a [`PacketArena`] while they cross the
//! network.
//!
//! A packet is 80 bytes; from the moment a host or a switch hands it to a port until a host
//! absorbs it or a port drops it, it stays in one slot of the network's arena, and the FIFO
//! queues, the wires and the multi-queue ports' class queues move its 4-byte handle
//! ([`PktRef`]; a queue keeps its size, payload and route at the next switch beside it, and
//! a class queue its class too, so that neither a scheduler nor a departure reads the
//! packet). A transport still builds its packets by value and reads the ones it receives
//! where they are. Handles in the FIFO queues and wires alone were no faster than packets
//! held by value; with the class queues too, both the star and the fabric gained
//! (docs/performance.md, "How the speed is obtained").
//!
//! SACK blocks (RFC 2018) ride on every packet as a compact fixed field, [`SackBlocks`]:
//! up to three blocks stored as 32-bit offsets from the packet's cumulative `ack`
//! (24 bytes instead of 48 for absolute 64-bit edges). A receive window never spans
//! 4 GiB here, so the offsets cannot overflow. Packets other than SACK-carrying ACKs leave
//! the field empty.

use crate::base::ids::{FlowId, NodeId};
use crate::base::units::SimTime;

/// What a packet is, which decides who handles it on arrival at a host. Its `u8` value is
/// its place in this list, from 0 (a CNM carries the sampled frame's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// TCP segment carrying data (it may also carry an ACK; we model one-way data).
    Data,
    /// Pure TCP acknowledgement.
    Ack,
    Syn,
    SynAck,
    /// UDP datagram (constant-bit-rate sources).
    Udp,
    /// QCN congestion notification message (64 B), from a switch to the source host of the
    /// sampled frame: build with [`Packet::cnm`], read with `Packet::cnm_*`.
    Cnm,
    /// IEEE 802.3x PAUSE or 802.1Qbb PFC frame (64 B MAC control, one hop): build with
    /// [`Packet::pause`], read with [`Packet::pause_quanta`] / [`Packet::pause_priority`].
    Pause,
}

/// ECN codepoint of the IP header (RFC 3168).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect0 = 2,
    Ce = 3,
}

/// TCP flag bits used by the models.
pub mod flags {
    pub const ECE: u8 = 1;
    pub const CWR: u8 = 2;
    pub const FIN: u8 = 4;
    /// UDP echo request / reply of the ping app (`engine/apps/mod.rs` `Ping`).
    pub const PING_REQ: u8 = 8;
    pub const PING_REPLY: u8 = 16;
    /// On a RoCE `Kind::Ack`: a negative acknowledgement (go back to its `ack`).
    pub const NACK: u8 = 32;
    /// On a RoCE `Kind::Ack`: a congestion notification packet (RoCEv2 CNP), not an ACK.
    pub const CNP: u8 = 64;
    /// On a `Kind::Pause` frame: an 802.1Qbb PFC frame for priority `class` (else 802.3x).
    pub const PFC_FRAME: u8 = 1;
    /// On a RoCE `Kind::Data`: collect INT hop records at switch egresses; on its ACK: the
    /// records echoed (`base/int.rs`, [`super::PacketArena::enable_int`]).
    pub const INT: u8 = 128;
}

/// Up to three SACK blocks, each `[ack + start, ack + end)`; an empty block has
/// `start == end`. Block 0 is the most recent (RFC 2018 §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlocks(pub [(u32, u32); 3]);

impl SackBlocks {
    pub const EMPTY: SackBlocks = SackBlocks([(0, 0); 3]);

    /// Encode absolute blocks relative to `ack` (blocks below `ack` are skipped).
    pub fn encode(ack: u64, blocks: &[(u64, u64)]) -> SackBlocks {
        let mut s = SackBlocks::EMPTY;
        let mut n = 0;
        for &(a, b) in blocks {
            if n == 3 {
                break;
            }
            if a >= ack && b > a {
                s.0[n] = ((a - ack) as u32, (b - ack) as u32);
                n += 1;
            }
        }
        s
    }

    /// The absolute blocks, most recent first.
    pub fn decode(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.0
            .iter()
            .filter(|b| b.1 > b.0)
            .map(move |b| (ack + b.0 as u64, ack + b.1 as u64))
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|b| b.1 <= b.0)
    }

    /// RFC 2883: put a D-SACK block `[s, e)` first (the others move down, the last is
    /// dropped). A block below `ack` is stored reversed, `(ack − s, ack − e)`, so `decode`
    /// and `is_empty` (which see only `start < end`) skip it.
    pub fn with_dsack(mut self, ack: u64, (s, e): (u64, u64)) -> SackBlocks {
        self.0[2] = self.0[1];
        self.0[1] = self.0[0];
        self.0[0] = if e <= ack {
            ((ack - s) as u32, (ack - e) as u32)
        } else {
            ((s - ack) as u32, (e - ack) as u32)
        };
        self
    }

    /// RFC 2883 §4 at the sender: the D-SACK block, if the first block is below `ack` or
    /// inside the second.
    pub fn dsack(&self, ack: u64) -> Option<(u64, u64)> {
        let [(a0, b0), (a1, b1), _] = self.0;
        if b0 < a0 {
            Some((ack - a0 as u64, ack - b0 as u64))
        } else if b0 > a0 && b1 > a1 && a1 <= a0 && b0 <= b1 {
            Some((ack + a0 as u64, ack + b0 as u64))
        } else {
            None
        }
    }
}

/// Once a ring (a queue or a wire) is empty, let its next element go to the ring's first
/// slot instead of the slot after the last one used. A ring grows to the longest backlog
/// it has held and then cycles through all of that memory, so a queue that holds a few
/// packets at a time but once held hundreds wrote each packet to a line last touched a
/// lap earlier, long out of the nearer caches; restarted at the front whenever it drains,
/// it keeps reusing the same few lines. `VecDeque::clear` of an empty deque only moves its
/// start to the first slot (std's implementation; were it not to, nothing but the cache
/// behaviour would change). Contents and order are untouched.
#[inline(always)]
pub fn reuse_ring_from_the_start<T>(ring: &mut std::collections::VecDeque<T>) {
    if ring.is_empty() {
        ring.clear();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Flow id (index into the simulation's flow arena).
    pub flow: FlowId,
    /// Source and destination host (node ids).
    pub src: NodeId,
    pub dst: NodeId,
    /// First payload byte (data) or the SYN's sequence number.
    pub seq: u64,
    /// Cumulative acknowledgement (ACKs).
    pub ack: u64,
    /// Bytes on the wire (payload + headers).
    pub size: u32,
    /// Payload bytes.
    pub payload: u32,
    pub kind: Kind,
    pub flags: u8,
    pub ecn: Ecn,
    /// Traffic class (queue selector at switches).
    pub class: u8,
    /// Time the packet entered its current queue (sojourn-time AQMs, queue delay).
    pub enq_time: SimTime,
    /// Time the transport handed it to the network (one-way delay measurement).
    pub sent_time: SimTime,
    /// SACK blocks carried by an ACK (empty otherwise).
    pub sack: SackBlocks,
}

impl Packet {
    pub fn is_ect(&self) -> bool {
        self.ecn != Ecn::NotEct
    }

    /// A packet of `kind` in `flow` from node `src` to `dst`, `size` bytes on the wire of
    /// which `payload` are data; every other field is empty: sequence and acknowledgement
    /// numbers 0, no flags, not ECN-capable, class 0, stamped at time zero, no SACK blocks.
    /// Fill the others by struct update (`Packet { seq, ..Packet::new(..) }`).
    #[inline]
    pub const fn new(
        kind: Kind,
        flow: FlowId,
        (src, dst): (NodeId, NodeId),
        size: u32,
        payload: u32,
    ) -> Packet {
        Packet {
            flow,
            src,
            dst,
            seq: 0,
            ack: 0,
            size,
            payload,
            kind,
            flags: 0,
            ecn: Ecn::NotEct,
            class: 0,
            enq_time: SimTime::ZERO,
            sent_time: SimTime::ZERO,
            sack: SackBlocks::EMPTY,
        }
    }

    /// A layer-2 control frame of `size` bytes from node `src` to `dst`, stamped `now`.
    fn control(kind: Kind, ends: (NodeId, NodeId), size: u32, now: SimTime) -> Packet {
        Packet {
            enq_time: now,
            sent_time: now,
            ..Packet::new(kind, FlowId::NONE, ends, size, 0)
        }
    }

    // Control frames travel as packets; these constructors and accessors are the only code
    // that knows which fields carry their contents.

    /// An 802.3x PAUSE frame (`prio` None) or an 802.1Qbb PFC frame for priority `prio`,
    /// asking the link partner to stop for `quanta` pause quanta (IEEE 802.3 Annex 31B).
    pub fn pause(
        ends: (NodeId, NodeId),
        size: u32,
        quanta: u16,
        prio: Option<u8>,
        now: SimTime,
    ) -> Packet {
        let mut p = Packet::control(Kind::Pause, ends, size, now);
        p.seq = quanta as u64;
        if let Some(c) = prio {
            p.flags = flags::PFC_FRAME;
            p.class = c;
        }
        p
    }

    /// The pause time of a PAUSE/PFC frame, in quanta.
    pub fn pause_quanta(&self) -> u16 {
        self.seq.min(u16::MAX as u64) as u16
    }

    /// The priority a PFC frame pauses; None for an 802.3x PAUSE frame.
    pub fn pause_priority(&self) -> Option<u8> {
        (self.flags & flags::PFC_FRAME != 0).then_some(self.class)
    }

    /// A QCN congestion notification (IEEE 802.1Qau) from switch `switch` about the sampled
    /// frame `sampled`, carrying the quantised feedback `q`, back to the sampled frame's
    /// source. It keeps the sampled frame's flow (the app for UDP) and class.
    pub fn cnm(sampled: &Packet, switch: NodeId, size: u32, q: u8, now: SimTime) -> Packet {
        let mut p = Packet::control(Kind::Cnm, (switch, sampled.src), size, now);
        p.flow = sampled.flow;
        p.seq = q as u64;
        p.ack = sampled.dst.0 as u64;
        p.flags = sampled.kind as u8;
        p.class = sampled.class;
        p
    }

    /// The quantised feedback a CNM carries.
    pub fn cnm_feedback(&self) -> u64 {
        self.seq
    }

    /// The destination host of the frame a CNM was sampled from.
    pub fn cnm_sampled_dst(&self) -> NodeId {
        NodeId(self.ack as u32)
    }

    /// Whether the frame a CNM was sampled from was of kind `k`.
    pub fn cnm_sampled(&self, k: Kind) -> bool {
        self.flags == k as u8
    }
}

/// Where a packet waits in the [`PacketArena`] while it crosses the network: queues and
/// wires hold these 4-byte handles instead of 80-byte packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PktRef(u32);

impl PktRef {
    /// A handle that names no packet (its slot's address is only ever prefetched).
    pub const NONE: PktRef = PktRef(u32::MAX);
}

/// The packets in the network, each in one slot from the moment a host or a switch hands
/// it to a port until a host absorbs it or a port drops it; queues and wires move handles
/// ([`PktRef`]). A freed slot is the next one given out (a stack of free slots), so a
/// packet created just after another was delivered or dropped is written to a line the
/// cache still holds: a host's ACK goes where the data segment it acknowledges was. The
/// arena only grows, to the most packets ever in flight at once. Which slot a packet gets
/// never changes what happens to it.
#[derive(Clone, Debug, Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// INT records by slot (None: no packet of the run asks for them).
    int: Option<Box<crate::base::int::IntStore>>,
}

impl PacketArena {
    /// Store `p`; its handle stays valid until `take` or `free`.
    #[inline]
    pub fn put(&mut self, p: Packet) -> PktRef {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                PktRef(i)
            }
            None => self.put_new(p),
        }
    }

    #[cold]
    #[inline(never)]
    fn put_new(&mut self, p: Packet) -> PktRef {
        let i = u32::try_from(self.slots.len()).expect("fewer than 2³² packets in flight");
        self.slots.push(p);
        PktRef(i)
    }

    /// Remove the packet of `h` and return it.
    #[inline]
    pub fn take(&mut self, h: PktRef) -> Packet {
        let p = self.slots[h.0 as usize];
        self.free.push(h.0);
        p
    }

    /// Remove the packet of `h` (dropped).
    #[inline]
    pub fn free(&mut self, h: PktRef) {
        self.free.push(h.0);
    }

    /// Packets stored now.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Bytes of the slots (the most packets ever stored at once) and of the free list.
    pub fn bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Packet>() + self.free.capacity() * 4
    }

    /// Keep INT records for the packets that carry `flags::INT` (`base/int.rs`).
    pub fn enable_int(&mut self) {
        self.int.get_or_insert_with(Default::default);
    }

    pub fn int_enabled(&self) -> bool {
        self.int.is_some()
    }

    /// A packet with `flags::INT` was stored at `h` by the host that sent it: a data packet
    /// starts with no records, a reply (ACK) with the records its host echoes now. (A switch
    /// forwards a stored packet where it lies, its records with it.)
    #[cold]
    #[inline(never)]
    pub fn int_begin(&self, h: PktRef) {
        let Some(st) = &self.int else { return };
        let i = h.0 as usize;
        let mut v = st.stacks.borrow_mut();
        if v.len() <= i {
            v.resize(i + 1, Default::default());
        }
        let from = match self.slots[i].kind {
            Kind::Ack => st.echo.get(),
            _ => None,
        };
        match from {
            Some(f) if f as usize == i => {}
            Some(f) => v[i] = v.get(f as usize).copied().unwrap_or_default(),
            None => v[i] = crate::base::int::IntStack::default(),
        }
    }

    /// Append a hop record to the packet at `h` if it collects them.
    #[cold]
    #[inline(never)]
    pub fn int_record(&self, h: PktRef, hop: crate::base::int::IntHop) {
        let Some(st) = &self.int else { return };
        let p = &self.slots[h.0 as usize];
        if p.flags & flags::INT == 0 || p.kind != Kind::Data {
            return;
        }
        if let Some(s) = st.stacks.borrow_mut().get_mut(h.0 as usize) {
            s.push(hop);
        }
    }

    /// `f` of the records of the packet at `h` (none without the INT store), read in place.
    #[inline]
    pub fn with_int_hops<R>(
        &self,
        h: PktRef,
        f: impl FnOnce(&[crate::base::int::IntHop]) -> R,
    ) -> R {
        let stacks = self.int.as_ref().map(|st| st.stacks.borrow());
        match stacks.as_ref().and_then(|v| v.get(h.0 as usize)) {
            Some(s) => f(s.hops()),
            None => f(&[]),
        }
    }

    /// The address of the INT records of the packet at `h`, if the store holds them (for
    /// prefetching; never dereferenced through this).
    #[inline]
    pub fn int_addr(&self, h: PktRef) -> Option<*const u8> {
        let v = self.int.as_ref()?.stacks.try_borrow().ok()?;
        ((h.0 as usize) < v.len()).then(|| v.as_ptr().wrapping_add(h.0 as usize) as *const u8)
    }

    /// The receiving host's next reply echoes the records of the packet at `h`.
    pub fn int_set_echo(&self, h: PktRef) {
        if let Some(st) = &self.int {
            st.echo.set(Some(h.0));
        }
    }

    /// The address of `h`'s slot (for prefetching; never dereferenced through this).
    #[inline]
    pub fn addr(&self, h: PktRef) -> *const u8 {
        self.slots.as_ptr().wrapping_add(h.0 as usize) as *const u8
    }
}

impl std::ops::Index<PktRef> for PacketArena {
    type Output = Packet;
    #[inline]
    fn index(&self, h: PktRef) -> &Packet {
        &self.slots[h.0 as usize]
    }
}

impl std::ops::IndexMut<PktRef> for PacketArena {
    #[inline]
    fn index_mut(&mut self, h: PktRef) -> &mut Packet {
        &mut self.slots[h.0 as usize]
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_is_small() {
        assert!(std::mem::size_of::<super::Packet>() <= 80);
    }

    #[test]
    fn control_frames_round_trip() {
        use super::{Kind, Packet};
        use crate::base::ids::{FlowId, NodeId};
        use crate::base::units::SimTime;
        let t = SimTime::from_us(5);
        let pause = Packet::pause((NodeId(3), NodeId(4)), 64, 0xFFFF, None, t);
        assert_eq!((pause.kind, pause.pause_quanta()), (Kind::Pause, 0xFFFF));
        assert_eq!(pause.pause_priority(), None);
        let pfc = Packet::pause((NodeId(3), NodeId(4)), 64, 7, Some(5), t);
        assert_eq!((pfc.pause_quanta(), pfc.pause_priority()), (7, Some(5)));
        let mut data = pause;
        (data.kind, data.flow, data.src, data.dst, data.class) =
            (Kind::Udp, FlowId(9), NodeId(1), NodeId(2), 3);
        let cnm = Packet::cnm(&data, NodeId(7), 64, 42, t);
        assert_eq!(
            (cnm.kind, cnm.src, cnm.dst, cnm.flow),
            (Kind::Cnm, NodeId(7), NodeId(1), FlowId(9))
        );
        assert_eq!((cnm.cnm_feedback(), cnm.class), (42, 3));
        assert!(cnm.cnm_sampled(Kind::Udp) && !cnm.cnm_sampled(Kind::Data));
        assert_eq!((cnm.enq_time, cnm.sent_time), (t, t));
    }

    /// The arena gives a freed slot out next (last freed, first reused), keeps the packets
    /// it stores intact, and counts them.
    #[test]
    fn the_arena_reuses_the_last_freed_slot() {
        use super::{Packet, PacketArena};
        use crate::base::ids::NodeId;
        use crate::base::units::SimTime;
        let pkt = |q: u16| Packet::pause((NodeId(1), NodeId(2)), 64, q, None, SimTime::ZERO);
        let mut a = PacketArena::default();
        let (h0, h1, h2) = (a.put(pkt(0)), a.put(pkt(1)), a.put(pkt(2)));
        assert_eq!(a.live(), 3);
        assert_eq!(a[h1].pause_quanta(), 1);
        assert_eq!(a.take(h0).pause_quanta(), 0);
        a.free(h2);
        assert_eq!(a.live(), 1);
        // h2 was freed last, so the next packet goes there, then to h0's slot.
        assert_eq!(a.put(pkt(7)), h2);
        assert_eq!(a.put(pkt(8)), h0);
        assert_eq!((a[h2].pause_quanta(), a[h0].pause_quanta()), (7, 8));
        a[h1].seq = 9;
        assert_eq!((a[h1].pause_quanta(), a.live()), (9, 3));
        let h3 = a.put(pkt(3));
        assert!(h3 != h0 && h3 != h1 && h3 != h2);
        assert_eq!(a.live(), 4);
        assert!(a.bytes() >= 4 * std::mem::size_of::<Packet>());
    }

    /// A drained ring starts again at its first slot, keeping its capacity and order.
    #[test]
    fn a_drained_ring_restarts_at_its_first_slot() {
        let mut ring: std::collections::VecDeque<u64> = std::collections::VecDeque::new();
        ring.extend(0..6);
        let first = ring.front().unwrap() as *const u64;
        let cap = ring.capacity();
        for _ in 0..6 {
            ring.pop_front();
        }
        super::reuse_ring_from_the_start(&mut ring);
        ring.push_back(7);
        assert_eq!(ring.front().unwrap() as *const u64, first);
        assert_eq!(ring.capacity(), cap);
        // A ring that still holds packets is left alone.
        ring.push_back(8);
        ring.pop_front();
        let at = ring.front().unwrap() as *const u64;
        super::reuse_ring_from_the_start(&mut ring);
        assert_eq!((ring.front().unwrap() as *const u64, ring.len()), (at, 1));
    }

    #[test]
    fn sack_blocks_round_trip() {
        let s = super::SackBlocks::encode(1000, &[(3000, 4000), (500, 900), (1500, 2000)]);
        let v: Vec<_> = s.decode(1000).collect();
        assert_eq!(v, vec![(3000, 4000), (1500, 2000)]);
        assert!(super::SackBlocks::EMPTY.is_empty());
    }
}

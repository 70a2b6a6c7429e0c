//! UDP as a transport kind: datagrams (RFC 768) sent at a constant bit rate, as ns-2's
//! `Application/Traffic/CBR` over a UDP agent sends them. No feedback, no retransmission:
//! the receiver counts what arrives, the sender paces what the application wrote, one
//! datagram per `rate.tx_time(size)`. The pacing timer is the template of a rate-based
//! sender's: a lazy deadline the engine holds one event for.
//!
//! A flow's datagrams are `Kind::Data` packets carrying the flow id (the receiver is found
//! by the flow, as a TCP segment's); the CBR application of `engine/apps` sends its own
//! `Kind::Udp` datagrams without an endpoint.

use super::{FlowCounters, FlowRow, LazyTimer, TimerKind, Transport};
use crate::base::ids::{FlowId, NodeId};
use crate::base::packet::{Kind, Packet};
use crate::base::units::{RateBps, SimTime};

/// The sender's pacing timer: the next datagram may go.
pub const PACE: TimerKind = TimerKind(0);

/// One UDP flow: a paced sender at `src`, a counting receiver at `dst`.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpFlow {
    pub id: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    /// Sending rate of the datagrams on the wire (headers included).
    pub rate: RateBps,
    /// Bytes of a full datagram on the wire, `header` of them headers.
    pub packet_size: u32,
    pub header: u32,
    pub class: u8,
    /// Payload bytes the application has written (`u64::MAX`: unlimited).
    pub written: u64,
    /// Payload bytes sent so far.
    pub sent: u64,
    pub datagrams_sent: u64,
    /// Payload bytes received so far (in any order: there is no sequence to keep).
    pub received: u64,
    pub datagrams_received: u64,
    /// When the next datagram may leave (the last one's serialisation at `rate` later).
    pub next_send: SimTime,
    pub pacing: LazyTimer,
}

impl UdpFlow {
    /// A flow from `src` to `dst` sending `packet_size`-byte datagrams (`header` bytes of
    /// headers each; 28 for IPv4 and UDP) at `rate`. Its id is set when the engine adds it.
    pub fn new(src: NodeId, dst: NodeId, rate: RateBps, packet_size: u32, header: u32) -> Self {
        assert!(packet_size > header, "a datagram carries no payload");
        assert!(rate.0 > 0, "a CBR flow needs a rate");
        UdpFlow {
            id: FlowId(0),
            src,
            dst,
            rate,
            packet_size,
            header,
            class: 0,
            written: 0,
            sent: 0,
            datagrams_sent: 0,
            received: 0,
            datagrams_received: 0,
            next_send: SimTime::ZERO,
            pacing: LazyTimer::default(),
        }
    }

    /// Send the next datagram now (the caller checked that bytes are waiting) and arm the
    /// pacing timer for the one after, if any waits.
    fn send_next(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let max = (self.packet_size - self.header) as u64;
        let payload = (self.written - self.sent).min(max) as u32;
        let size = payload + self.header;
        out.push(Packet {
            seq: self.sent,
            class: self.class,
            enq_time: now,
            sent_time: now,
            ..Packet::new(Kind::Data, self.id, (self.src, self.dst), size, payload)
        });
        self.sent += payload as u64;
        self.datagrams_sent += 1;
        self.next_send = now + self.rate.tx_time(size);
        if self.sent < self.written {
            self.pacing.set(self.next_send);
        }
    }
}

impl Transport for UdpFlow {
    fn kind_name(&self) -> &'static str {
        "udp"
    }
    fn set_id(&mut self, id: FlowId) {
        self.id = id;
    }
    fn src(&self) -> NodeId {
        self.src
    }
    fn dst(&self) -> NodeId {
        self.dst
    }
    fn set_class(&mut self, class: u8) {
        self.class = class;
    }
    fn on_data(&mut self, _now: SimTime, p: &Packet, _out: &mut Vec<Packet>) {
        self.received += p.payload as u64;
        self.datagrams_received += 1;
    }
    /// Nothing comes back to a UDP sender.
    fn on_feedback(&mut self, _now: SimTime, _p: &Packet, _out: &mut Vec<Packet>) {}
    fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>) {
        let idle = self.sent == self.written;
        self.written = self.written.saturating_add(bytes);
        if !idle || self.sent == self.written {
            return;
        }
        // The sender was idle: send now, or when the pacing of the last datagram allows.
        if now >= self.next_send {
            self.send_next(now, out);
        } else {
            self.pacing.set(self.next_send);
        }
    }
    fn written(&self) -> u64 {
        self.written
    }
    fn delivered(&self) -> u64 {
        self.received
    }
    fn next_timer(&mut self) -> Option<(TimerKind, SimTime)> {
        self.pacing.take_event().map(|at| (PACE, at))
    }
    fn timer_due(&mut self, now: SimTime, _kind: TimerKind) -> bool {
        self.pacing.fire(now)
    }
    fn on_timer(&mut self, now: SimTime, _kind: TimerKind, out: &mut Vec<Packet>) -> NodeId {
        if self.sent < self.written {
            self.send_next(now, out);
        }
        self.src
    }
    fn counters(&self) -> FlowCounters {
        FlowCounters::default()
    }
    fn check(&self) -> Result<(), String> {
        if self.received > self.sent || self.sent > self.written {
            return Err(format!(
                "flow {}: received {} sent {} written {} out of order",
                self.id, self.received, self.sent, self.written
            ));
        }
        Ok(())
    }
    fn row(&self, row: &mut FlowRow) {
        row.i64("segs_sent", self.datagrams_sent as i64)
            .i64("datagrams_received", self.datagrams_received as i64);
    }
}

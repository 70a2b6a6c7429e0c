//! Packets: small plain structs copied by value through queues and wires.
//!
//! DESIGN.md suggests a slab of packets passed by handle. A packet here is 64 bytes and
//! every queue is a preallocated ring (`VecDeque`), so moving the struct costs about as
//! much as moving a handle and saves the slab's indirection and bookkeeping; there is no
//! allocation per packet in the steady state either way.

use crate::units::SimTime;

/// What a packet is, which decides who handles it on arrival at a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// TCP segment carrying data (it may also carry an ACK; we model one-way data).
    Data = 0,
    /// Pure TCP acknowledgement.
    Ack = 1,
    Syn = 2,
    SynAck = 3,
    /// UDP datagram (constant-bit-rate sources).
    Udp = 4,
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Flow id (index into the simulation's flow arena).
    pub flow: u32,
    /// Source and destination host (node ids).
    pub src: u32,
    pub dst: u32,
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
}

impl Packet {
    pub fn is_ect(&self) -> bool {
        self.ecn != Ecn::NotEct
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn packet_is_small() {
        assert!(std::mem::size_of::<super::Packet>() <= 64);
    }
}

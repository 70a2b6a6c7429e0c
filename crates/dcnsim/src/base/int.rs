//! In-band network telemetry (INT) records, as HPCC uses them (Li et al., "HPCC: High
//! Precision Congestion Control", SIGCOMM 2019, §3.2; docs/models.md §15): each switch
//! egress a data packet that asks for them (`flags::INT`) leaves through appends one hop
//! record, the receiving host's ACK carries the same records back, and the sender's
//! congestion control compares them with the previous ACK's. The records live beside the
//! packets, in the packet arena's INT store (`PacketArena::enable_int`), so a packet
//! without them costs nothing.

use crate::base::units::SimTime;

/// The most hop records a packet carries (the HPCC simulator's `IntHeader::maxHop`: five,
/// a three-tier fat-tree's longest path). Hops past it are not recorded.
pub const MAX_HOPS: usize = 5;

/// Bytes the INT header adds to a packet on the wire: eight per possible hop and a two-byte
/// hop count, whether or not every hop is used (the HPCC simulator's
/// `IntHeader::GetStaticSize` in its INT mode).
pub const INT_HEADER_BYTES: u32 = 8 * MAX_HOPS as u32 + 2;

/// One switch egress's record, taken when the packet starts its transmission there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// The egress link's rate, bits per second.
    pub rate_bps: u64,
    /// When the record was taken.
    pub ts: SimTime,
    /// Bytes the egress had transmitted before this packet.
    pub tx_bytes: u64,
    /// Bytes queued at the egress behind this packet.
    pub qlen: u64,
}

/// The records of one packet, in path order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntStack {
    pub n: u8,
    pub hops: [IntHop; MAX_HOPS],
}

impl IntStack {
    /// Append a hop's record (none past [`MAX_HOPS`]).
    #[inline]
    pub fn push(&mut self, hop: IntHop) {
        if (self.n as usize) < MAX_HOPS {
            self.hops[self.n as usize] = hop;
            self.n += 1;
        }
    }

    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }
}

/// The INT records of the packets in flight, by packet slot, and the records a host's
/// reply echoes (`PacketArena`'s INT store). Interior mutability: ports record while the
/// arena is shared with the wiring.
#[derive(Clone, Debug, Default)]
pub struct IntStore {
    pub stacks: std::cell::RefCell<Vec<IntStack>>,
    /// The slot whose records the next reply (an ACK) of the receiving host echoes: the
    /// data packet's, whose slot the reply usually takes (then nothing is copied).
    pub echo: std::cell::Cell<Option<u32>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_five_hops_and_42_header_bytes() {
        let mut s = IntStack::default();
        for i in 0..7 {
            s.push(IntHop {
                tx_bytes: i,
                ..IntHop::default()
            });
        }
        assert_eq!(s.n, 5);
        assert_eq!(
            s.hops().iter().map(|h| h.tx_bytes).collect::<Vec<_>>(),
            [0, 1, 2, 3, 4]
        );
        assert_eq!(INT_HEADER_BYTES, 42);
    }
}

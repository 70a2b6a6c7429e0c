//! In-band network telemetry (INT) as HPCC uses it (Li et al., "HPCC: High Precision
//! Congestion Control", SIGCOMM 2019, §3.2; docs/models.md §15): each switch egress a data
//! packet leaves through appends one hop record, the receiver echoes the records in its ACK,
//! and the sender's congestion control compares them with the previous ACK's.

use crate::base::units::SimTime;

/// The most hop records a packet carries (the HPCC simulator's `IntHeader::maxHop`: five,
/// enough for a three-tier fat-tree's longest path).
pub const MAX_HOPS: usize = 5;

/// One switch egress's record, taken when the packet starts its transmission there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// The egress link's rate, bits per second.
    pub rate_bps: u64,
    /// When the record was taken.
    pub ts: SimTime,
    /// Bytes the egress had transmitted in total by then.
    pub tx_bytes: u64,
    /// Bytes queued at the egress then.
    pub qlen: u64,
}

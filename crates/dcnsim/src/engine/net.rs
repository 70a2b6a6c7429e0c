//! Network elements: nodes (hosts and output-queued switches), ports with their egress
//! queue and their half of a full-duplex point-to-point link, and static routing.
//!
//! A port keeps at most one pending event for transmission and one for delivery:
//! - transmission is lazy: a packet that finds the port idle and its queue empty starts at
//!   once (no event); only a port with a backlog holds a `PortTxDone` event;
//! - the wire is a FIFO of packets in flight with their arrival times (fixed delay, in
//!   order), and only the head's arrival is in the event queue.
//!
//! Buffer accounting: the switch buffer limit counts the bytes waiting in the queue; the
//! packet being serialized has left the queue (as in ns-2's DropTail + link, which the
//! seed-000 thesis used). A packet is dropped if `queued + size > limit`.

use crate::base::packet::Packet;
use crate::base::units::{RateBps, SimTime};
use crate::model::aqm::{Aqm, AqmAt};
use std::collections::VecDeque;

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
    /// When the packet now being serialized ends.
    pub busy_until: SimTime,
    /// Whether a `PortTxDone` event is pending.
    pub tx_pending: bool,
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
    /// peer is a host or has no route). Kept by `sim::arm_arrival` and `on_link_arrive`
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
            busy_until: SimTime::ZERO,
            tx_pending: false,
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

    /// Start serializing `p` at `now`; returns the arrival time at the far end.
    #[inline]
    pub fn start_tx(&mut self, now: SimTime, p: Packet) -> SimTime {
        let end = now + self.tx_time(p.size);
        self.busy_until = end;
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

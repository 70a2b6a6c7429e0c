//! Equal-cost multi-path routing (docs/models.md §8, leaf-spine fabrics): where a switch has several
//! next hops on shortest paths to a destination, its route entry names an ECMP group
//! (`ECMP_BIT | group`) instead of a port, and the port is chosen per packet by a
//! deterministic hash of the flow (flow id, source, destination) and the switch, so all
//! packets of a flow take the same path (no reordering) and different switches hash
//! independently. Routes with one next hop stay plain port numbers (`net::compute_routes`),
//! so scenarios without ECMP never reach this code.

use crate::base::alloc::AllocError;
use crate::base::ids::{NodeId, PortId};
use crate::base::packet::Packet;
use crate::engine::net::{Node, NodeKind, Port};
use std::collections::{HashMap, VecDeque};

/// Marks a route entry as an ECMP group index (port ids stay below 2^31).
pub const ECMP_BIT: u32 = 1 << 31;

/// ECMP groups: `groups[g] = (start, len)` into `members` (output ports).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EcmpGroups {
    pub members: Vec<PortId>,
    pub groups: Vec<(u32, u32)>,
}

/// splitmix64 finaliser: a well-mixed 64-bit hash of `x`.
#[inline]
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Per-flow hash of a packet at switch `node`. TCP data and its ACKs share the flow id but
/// have swapped endpoints; the hash orders the endpoints so both directions of a connection
/// see the same value at a given switch.
#[inline]
pub fn flow_hash(p: &Packet, node: NodeId) -> u64 {
    let (a, b) = if p.src <= p.dst {
        (p.src, p.dst)
    } else {
        (p.dst, p.src)
    };
    mix(((p.flow.0 as u64) << 32 | a.0 as u64) ^ mix((b.0 as u64) << 32 | node.0 as u64))
}

impl EcmpGroups {
    #[inline]
    pub fn is_group(route: PortId) -> bool {
        route != PortId::NONE && route.0 & ECMP_BIT != 0
    }

    /// The output port of group entry `route` for packet `p` at switch `node` (out of line:
    /// keeps `Core::receive` small for scenarios without ECMP).
    #[inline(never)]
    pub fn pick(&self, route: PortId, p: &Packet, node: NodeId) -> PortId {
        let (start, len) = self.groups[(route.0 & !ECMP_BIT) as usize];
        let h = flow_hash(p, node);
        // The remainder by a power of two is a mask (the same member; no division).
        let k = if len.is_power_of_two() {
            (h & (len as u64 - 1)) as u32
        } else {
            (h % len as u64) as u32
        };
        self.members[(start + k) as usize]
    }

    /// Replace single-path switch routes by ECMP groups wherever a switch has several
    /// shortest-path next hops (through switches, or the destination host itself). Call
    /// after `net::compute_routes`; identical member lists share one group. Tables by edge
    /// switch are filled again with their groups, in the one pass that
    /// `net::compute_routes_ecmp` makes.
    pub fn build(nodes: &mut [Node], ports: &[Port]) -> Result<EcmpGroups, AllocError> {
        let mut g = EcmpGroups::default();
        if nodes.iter().any(|x| x.by_edge) {
            crate::engine::net::routes_by_edge(nodes, ports, Some(&mut g))?;
        } else {
            g.build_by_destination(nodes, ports);
        }
        Ok(g)
    }

    /// The group of `hops` (a new one unless the same list has one).
    fn group_of(&mut self, index: &mut HashMap<Vec<PortId>, u32>, hops: Vec<PortId>) -> PortId {
        let gid = *index.entry(hops).or_insert_with_key(|hops| {
            self.groups
                .push((self.members.len() as u32, hops.len() as u32));
            self.members.extend_from_slice(hops);
            (self.groups.len() - 1) as u32
        });
        PortId(ECMP_BIT | gid)
    }

    /// Tables by destination node (the general way): one search from each host.
    fn build_by_destination(&mut self, nodes: &mut [Node], ports: &[Port]) {
        let n = nodes.len();
        let mut index: HashMap<Vec<PortId>, u32> = HashMap::new();
        let mut dist = vec![u32::MAX; n];
        let mut frontier = VecDeque::new();
        for dst in 0..n {
            if nodes[dst].kind != NodeKind::Host {
                continue;
            }
            crate::engine::net::bfs(nodes, ports, dst, &mut dist, &mut frontier);
            for u in 0..n {
                if u == dst || dist[u] == u32::MAX || nodes[u].kind != NodeKind::Switch {
                    continue;
                }
                let hops: Vec<PortId> = nodes[u]
                    .ports
                    .iter()
                    .copied()
                    .filter(|&pid| {
                        let w = ports[pid.idx()].peer_node.idx();
                        dist[w] != u32::MAX
                            && dist[w] + 1 == dist[u]
                            && (w == dst || nodes[w].kind == NodeKind::Switch)
                    })
                    .collect();
                if hops.len() >= 2 {
                    nodes[u].route[dst] = self.group_of(&mut index, hops);
                }
            }
        }
    }
}

/// The groups of the tables by edge column, as their entries are found
/// (`SwitchGraph::toward_each_edge`): identical member lists share one group.
pub(crate) struct EdgeGrouper {
    index: HashMap<Vec<PortId>, u32>,
    /// The last list and entry of each switch (by rank): a switch's next hops are often
    /// the same list towards every other edge switch (a leaf's uplinks), found without
    /// hashing.
    last: Vec<(Vec<PortId>, PortId)>,
}

impl EdgeGrouper {
    pub(crate) fn new(switches: usize) -> EdgeGrouper {
        EdgeGrouper {
            index: HashMap::new(),
            last: vec![(Vec::new(), PortId::NONE); switches],
        }
    }

    /// The group entry of switch rank `r` for next hops `hops`; None for fewer than two
    /// (the entry stays a plain port).
    pub(crate) fn entry(
        &mut self,
        g: &mut EcmpGroups,
        r: usize,
        hops: &[PortId],
    ) -> Option<PortId> {
        if hops.len() < 2 {
            return None;
        }
        let last = &mut self.last[r];
        if last.0 != hops {
            last.1 = match self.index.get(hops) {
                Some(&gid) => PortId(ECMP_BIT | gid),
                None => g.group_of(&mut self.index, hops.to_vec()),
            };
            last.0.clear();
            last.0.extend_from_slice(hops);
        }
        Some(last.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::ids::FlowId;
    use crate::base::packet::Kind;

    fn pkt(flow: u32, src: u32, dst: u32) -> Packet {
        Packet::new(
            Kind::Data,
            FlowId(flow),
            (NodeId(src), NodeId(dst)),
            1500,
            1460,
        )
    }

    #[test]
    fn hash_is_per_flow_symmetric_and_spreads() {
        let g = EcmpGroups {
            members: vec![PortId(10), PortId(11), PortId(12), PortId(13)],
            groups: vec![(0, 4)],
        };
        // Same flow: same port, whatever the sequence number; ACK direction agrees.
        let mut p = pkt(7, 1, 2);
        let a = g.pick(PortId(ECMP_BIT), &p, NodeId(5));
        p.seq = 123_456;
        assert_eq!(g.pick(PortId(ECMP_BIT), &p, NodeId(5)), a);
        assert_eq!(g.pick(PortId(ECMP_BIT), &pkt(7, 2, 1), NodeId(5)), a);
        // 4000 flows over 4 ports: each gets 1000 ± 15 %.
        let mut count = [0u32; 4];
        for f in 0..4000 {
            count[(g.pick(PortId(ECMP_BIT), &pkt(f, 1, 2), NodeId(5)).0 - 10) as usize] += 1;
        }
        for c in count {
            assert!((850..=1150).contains(&c), "{count:?}");
        }
        assert!(!EcmpGroups::is_group(PortId::NONE));
        assert!(!EcmpGroups::is_group(PortId(3)));
        assert!(EcmpGroups::is_group(PortId(ECMP_BIT | 2)));
    }

    /// Groups of every size from 1 to 9 (powers of two take a mask, the others a division):
    /// the member is the flow hash's remainder by the group's size, counted from its start.
    #[test]
    fn member_is_the_hash_modulo_the_group_size() {
        let g = EcmpGroups {
            members: (0..50).map(PortId).collect(),
            groups: (1..=9).map(|len| (len * 2, len)).collect(),
        };
        for (gi, &(start, len)) in g.groups.iter().enumerate() {
            for f in 0..200 {
                let p = pkt(f, 1 + f % 3, 7);
                let want = start as u64 + flow_hash(&p, NodeId(4)) % len as u64;
                let route = PortId(ECMP_BIT | gi as u32);
                assert_eq!(
                    g.pick(route, &p, NodeId(4)),
                    PortId(want as u32),
                    "size {len}"
                );
            }
        }
    }
}

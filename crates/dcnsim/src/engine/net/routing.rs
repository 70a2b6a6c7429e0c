//! The routing state a packet hop reads, packed (`Network::routing`): one 32-byte record
//! per node, two to a cache line, and every node's route table in one flat vector.
//!
//! Route computation (`net::compute_routes`, `ecmp::EcmpGroups::build`) fills the tables
//! and edge fields of the [`Node`]s; `Routing::index` then moves them here, once, when the
//! simulation finalizes its routes. Every hop reads the routing of two nodes (the next
//! switch's table and the destination's edge switch), and a host's send and every arrival
//! read a node's kind: on the 144-host leaf-spine, where the 168 nodes' 104-byte records
//! and the switches' tables were spread over as many lines, those reads were among the
//! fabric's first-touch misses (3 % fewer L1 misses packed; docs/performance.md, "How the
//! speed is obtained"). The
//! entries are the ones `Node::route` held, looked up the same way, so outputs do not
//! change.

use crate::base::alloc::{try_reserve, AllocError};
use crate::base::ids::{NodeId, PortId};
use crate::base::packet::Packet;
use crate::engine::net::ecmp::EcmpGroups;
use crate::engine::net::{Node, NodeKind};

/// What routing reads of one node (the fields of [`Node`] of the same names, its table
/// as a range of [`Routing::entries`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct NodeRoute {
    /// This node's table: `entries[table .. table + len]`.
    pub table: u32,
    pub len: u32,
    pub uplink: PortId,
    pub fabric: u32,
    pub edge: NodeId,
    pub edge_col: u32,
    pub down: PortId,
    pub kind: NodeKind,
    pub by_edge: bool,
}

const _: () = assert!(
    std::mem::size_of::<NodeRoute>() == 32,
    "two records per line"
);

/// The routing of every node, dense (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Routing {
    pub nodes: Vec<NodeRoute>,
    pub entries: Vec<PortId>,
}

const WHAT: &str = "route tables";

impl Routing {
    /// Move the routes of `nodes` (computed; their tables are left empty) into a dense
    /// routing. An `AllocError` when the flat table cannot be allocated.
    pub fn index(nodes: &mut [Node]) -> Result<Routing, AllocError> {
        let total: usize = nodes.iter().map(|n| n.route.len()).sum();
        let mut r = Routing::default();
        try_reserve(&mut r.nodes, nodes.len(), WHAT)?;
        try_reserve(&mut r.entries, total, WHAT)?;
        for n in nodes.iter_mut() {
            let (table, len) = (r.entries.len(), n.route.len());
            assert!(
                table + len <= u32::MAX as usize,
                "more than 2^32 route entries"
            );
            r.entries.extend_from_slice(&n.route);
            n.route = Vec::new();
            r.nodes.push(NodeRoute {
                table: table as u32,
                len: len as u32,
                uplink: n.uplink,
                fabric: n.fabric,
                edge: n.edge,
                edge_col: n.edge_col,
                down: n.down,
                kind: n.kind,
                by_edge: n.by_edge,
            });
        }
        Ok(r)
    }

    /// The kind of `node` (None: a node this routing does not know).
    #[inline]
    pub fn kind(&self, node: NodeId) -> Option<NodeKind> {
        self.nodes.get(node.idx()).map(|n| n.kind)
    }

    /// Entry `i` of `n`'s table (`NONE` past its end).
    #[inline]
    fn entry(&self, n: &NodeRoute, i: usize) -> PortId {
        if i < n.len as usize {
            self.entries
                .get(n.table as usize + i)
                .copied()
                .unwrap_or(PortId::NONE)
        } else {
            PortId::NONE
        }
    }

    /// The output port `node` uses towards host `dst` (`PortId::NONE`: none): the node's
    /// table entry, or for a host on one switch link, that link when `dst` is another host
    /// of the same switch fabric. A switch's entry may name an ECMP group
    /// (`ecmp::ECMP_BIT`).
    #[inline]
    pub fn route(&self, node: NodeId, dst: NodeId) -> PortId {
        let Some(n) = self.nodes.get(node.idx()) else {
            return PortId::NONE;
        };
        if n.uplink.is_some() {
            match self.nodes.get(dst.idx()) {
                Some(d) if dst != node && d.kind == NodeKind::Host && d.fabric == n.fabric => {
                    n.uplink
                }
                _ => PortId::NONE,
            }
        } else {
            self.table_entry(n, node, dst)
        }
    }

    /// Switch (or general-way host) `n` = `node`'s table entry towards `dst`: by the
    /// destination's edge column for a `by_edge` switch (its own hosts through their
    /// ports), else by node id. `NONE`: no route.
    #[inline]
    fn table_entry(&self, n: &NodeRoute, node: NodeId, dst: NodeId) -> PortId {
        if n.by_edge {
            let Some(d) = self.nodes.get(dst.idx()) else {
                return PortId::NONE;
            };
            if d.edge == node {
                d.down
            } else {
                self.entry(n, d.edge_col as usize)
            }
        } else {
            self.entry(n, dst.idx())
        }
    }

    /// Where switch `node` forwards `p`: its table entry, resolved by the ECMP hash when
    /// the entry is a group; `PortId::NONE` when `node` is a host or has no route. Routes
    /// are static and the hash is a pure function of the packet and the switch, so this
    /// may be computed any time before the packet arrives.
    #[inline]
    pub fn hint(&self, ecmp: &EcmpGroups, node: NodeId, p: &Packet) -> PortId {
        let Some(n) = self.nodes.get(node.idx()) else {
            return PortId::NONE;
        };
        if n.kind != NodeKind::Switch {
            return PortId::NONE;
        }
        let out = self.table_entry(n, node, p.dst);
        if EcmpGroups::is_group(out) {
            ecmp.pick(out, p, node)
        } else {
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(kind: NodeKind) -> Node {
        Node::new(String::from("n"), kind)
    }

    /// A switch by edge with two columns, a host on it and a host on another edge, and a
    /// general-way switch with a table by node id: every lookup is the one the nodes'
    /// fields say, the tables end up in one vector (the nodes' are emptied), and nodes or
    /// entries out of range give no route.
    #[test]
    fn index_moves_the_tables_and_looks_up_as_the_nodes_did() {
        let mut nodes = vec![
            node(NodeKind::Switch),
            node(NodeKind::Host),
            node(NodeKind::Host),
            node(NodeKind::Switch),
        ];
        nodes[0].by_edge = true;
        nodes[0].route = vec![PortId::NONE, PortId(7)];
        nodes[0].fabric = 0;
        for (h, col, down) in [(1, 0, PortId(3)), (2, 1, PortId::NONE)] {
            nodes[h].edge = NodeId(if col == 0 { 0 } else { 3 });
            nodes[h].edge_col = col;
            nodes[h].down = down;
            nodes[h].uplink = PortId(10 + h as u32);
            nodes[h].fabric = 0;
        }
        nodes[3].route = vec![PortId(20), PortId(21), PortId(22), PortId(23)];
        let r = Routing::index(&mut nodes).unwrap();
        assert!(nodes.iter().all(|n| n.route.is_empty()));
        assert_eq!(r.entries.len(), 6);
        assert_eq!(r.nodes[3].table, 2);
        // The switch by edge: its own host through its port, the other edge's by column.
        assert_eq!(r.route(NodeId(0), NodeId(1)), PortId(3));
        assert_eq!(r.route(NodeId(0), NodeId(2)), PortId(7));
        // Hosts: the uplink to another host of the fabric, nothing to themselves or to a
        // switch.
        assert_eq!(r.route(NodeId(1), NodeId(2)), PortId(11));
        assert_eq!(r.route(NodeId(1), NodeId(1)), PortId::NONE);
        assert_eq!(r.route(NodeId(1), NodeId(0)), PortId::NONE);
        // The general-way switch by node id.
        assert_eq!(r.route(NodeId(3), NodeId(2)), PortId(22));
        // Out of range: no route, no panic.
        assert_eq!(r.route(NodeId(9), NodeId(1)), PortId::NONE);
        assert_eq!(r.route(NodeId(0), NodeId(9)), PortId::NONE);
        assert_eq!(r.route(NodeId(3), NodeId(9)), PortId::NONE);
        assert_eq!(r.kind(NodeId(2)), Some(NodeKind::Host));
        assert_eq!(r.kind(NodeId(9)), None);
        // A host never forwards.
        let p: Packet = crate::model::mq::testutil::pkt_flow(0, 1500, 1, 2);
        let ecmp = EcmpGroups::default();
        assert_eq!(r.hint(&ecmp, NodeId(1), &p), PortId::NONE);
        assert_eq!(r.hint(&ecmp, NodeId(0), &p), PortId(7));
    }
}

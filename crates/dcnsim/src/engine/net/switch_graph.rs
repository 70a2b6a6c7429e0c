//! The switches of a network and the links between them, as compact arrays, for the route
//! computations of single-homed networks (`net::compute_routes`, `ecmp::EcmpGroups::build`):
//! a breadth-first search over them reads a few kilobytes of `u32`s instead of following
//! every node's port list into the (large) `Port` structures, hosts included.

use crate::base::alloc::{try_filled, AllocError};
use crate::base::ids::PortId;
use crate::engine::net::{Node, NodeKind, Port};

/// Switches numbered by rank (their order among the nodes); the links of rank `r` to other
/// switches are `start[r] .. start[r + 1]` of `peer` (the other switch's rank) and `port`
/// (the output port), in the switch's port order.
pub(crate) struct SwitchGraph {
    /// Node index of each rank.
    pub node: Vec<usize>,
    /// Rank of each node (`u32::MAX`: a host).
    pub rank: Vec<u32>,
    start: Vec<u32>,
    peer: Vec<u32>,
    port: Vec<PortId>,
}

const WHAT: &str = "route tables";

impl SwitchGraph {
    pub fn new(nodes: &[Node], ports: &[Port]) -> Result<SwitchGraph, AllocError> {
        let mut rank = try_filled(nodes.len(), u32::MAX, WHAT)?;
        let mut node = Vec::new();
        for (u, x) in nodes.iter().enumerate() {
            if x.kind == NodeKind::Switch {
                rank[u] = node.len() as u32;
                node.push(u);
            }
        }
        let mut start = Vec::with_capacity(node.len() + 1);
        let (mut peer, mut port) = (Vec::new(), Vec::new());
        for &u in &node {
            start.push(peer.len() as u32);
            for &pid in &nodes[u].ports {
                let r = rank[ports[pid.idx()].peer_node.idx()];
                if r != u32::MAX {
                    peer.push(r);
                    port.push(pid);
                }
            }
        }
        start.push(peer.len() as u32);
        Ok(SwitchGraph {
            node,
            rank,
            start,
            peer,
            port,
        })
    }

    /// Number of switches.
    pub fn len(&self) -> usize {
        self.node.len()
    }

    /// Links of rank `r`: (peer rank, output port), in port order.
    #[inline]
    pub fn links(&self, r: usize) -> impl Iterator<Item = (usize, PortId)> + '_ {
        let (a, b) = (self.start[r] as usize, self.start[r + 1] as usize);
        self.peer[a..b]
            .iter()
            .zip(&self.port[a..b])
            .map(|(&p, &pid)| (p as usize, pid))
    }

    /// For each edge switch `edges[c]` (a node index) and each other switch (rank `r`) that
    /// reaches it, `f(c, r, closer)`: `closer` yields `r`'s ports towards switches one hop
    /// closer to the edge switch, in port order (the next hops of a shortest path).
    pub fn toward_each_edge(
        &self,
        edges: &[usize],
        mut f: impl FnMut(usize, usize, &mut dyn Iterator<Item = PortId>),
    ) -> Result<(), AllocError> {
        let mut dist = try_filled(self.len(), u32::MAX, WHAT)?;
        let mut queue = Vec::new();
        for (c, &e) in edges.iter().enumerate() {
            let re = self.rank[e] as usize;
            self.bfs(re, &mut dist, &mut queue);
            for (r, &d) in dist.iter().enumerate() {
                if r == re || d == u32::MAX {
                    continue;
                }
                let mut closer = self
                    .links(r)
                    .filter(|&(w, _)| dist[w] != u32::MAX && dist[w] + 1 == d)
                    .map(|(_, pid)| pid);
                f(c, r, &mut closer);
            }
        }
        Ok(())
    }

    /// Hop counts from rank `src` to every switch over switch links (`u32::MAX`:
    /// unreachable); `queue` is scratch.
    pub fn bfs(&self, src: usize, dist: &mut [u32], queue: &mut Vec<u32>) {
        dist.iter_mut().for_each(|d| *d = u32::MAX);
        dist[src] = 0;
        queue.clear();
        queue.push(src as u32);
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head] as usize;
            head += 1;
            let next = dist[v] + 1;
            let (a, b) = (self.start[v] as usize, self.start[v + 1] as usize);
            for &p in &self.peer[a..b] {
                if dist[p as usize] == u32::MAX {
                    dist[p as usize] = next;
                    queue.push(p);
                }
            }
        }
    }
}

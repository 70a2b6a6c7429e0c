//! The switches of a network and the links between them, as compact arrays, for the route
//! computations of single-homed networks (`net::compute_routes`, `net::compute_routes_ecmp`):
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
    /// reaches it, `f(c, r, closer)`: `closer` is `r`'s ports towards switches one hop
    /// closer to the edge switch, in port order (the next hops of a shortest path).
    ///
    /// Edge switches are taken `BATCH` at a time: one search each, their hop counts side
    /// by side per switch (`dist[r * BATCH + b]`), then every switch's links are read once
    /// for the whole batch and `f` called for its `BATCH` columns in a row. So a table row
    /// is written in runs, not one scattered entry per search, and the links are scanned
    /// once per batch instead of once per column (a 5 000-leaf fabric's set-up: about a
    /// third less time; docs/performance.md, "Set-up of large fabrics"). Calls come batch by
    /// batch, switch by switch, column by column.
    pub fn toward_each_edge(
        &self,
        edges: &[usize],
        mut f: impl FnMut(usize, usize, &[PortId]),
    ) -> Result<(), AllocError> {
        const BATCH: usize = 32;
        let s = self.len();
        let mut one = try_filled(s, u32::MAX, WHAT)?;
        let mut dist = try_filled(s * BATCH, u32::MAX, WHAT)?;
        let mut queue = Vec::new();
        let mut hops: Vec<Vec<PortId>> = vec![Vec::new(); BATCH];
        for (i, batch) in edges.chunks(BATCH).enumerate() {
            let k = batch.len();
            for (b, &e) in batch.iter().enumerate() {
                self.bfs(self.rank[e] as usize, &mut one, &mut queue);
                for (r, &d) in one.iter().enumerate() {
                    dist[r * BATCH + b] = d;
                }
            }
            for r in 0..s {
                let dr = &dist[r * BATCH..r * BATCH + k];
                hops.iter_mut().for_each(Vec::clear);
                for (w, pid) in self.links(r) {
                    let dw = &dist[w * BATCH..w * BATCH + k];
                    for b in 0..k {
                        if dw[b] != u32::MAX && dw[b] + 1 == dr[b] {
                            hops[b].push(pid);
                        }
                    }
                }
                for b in 0..k {
                    if dr[b] == 0 || dr[b] == u32::MAX {
                        continue;
                    }
                    f(i * BATCH + b, r, &hops[b]);
                }
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

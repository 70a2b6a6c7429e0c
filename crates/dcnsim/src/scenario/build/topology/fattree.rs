//! k-ary fat-tree builder (docs/models.md §8), the three-tier Clos of Al-Fares, Loukissas and
//! Vahdat, "A Scalable, Commodity Data Center Network Architecture" (SIGCOMM 2008, §3.2):
//! k pods, each of k/2 edge and k/2 aggregation switches; (k/2)² core switches; k/2 hosts
//! under each edge switch, k³/4 hosts in all. Part of the topology builder
//! (`build/topology/mod.rs`).
//!
//! Nodes, numbered pod by pod: hosts "host1".. (host i under edge ⌈i / (k/2)⌉), edges
//! "edge1".. (edge e in pod ⌊(e − 1) / (k/2)⌋), aggregations "agg1".., cores "core1"...
//! Links: every edge to every aggregation of its pod; aggregation a of a pod (a = 0..k/2 − 1
//! within the pod) to cores a·(k/2) + 1 ..= (a + 1)·(k/2), so that each core reaches every
//! pod once (the paper's wiring). Host links at `link_rate`, switch-to-switch links at
//! `fabric_rate` (default `link_rate`); every link has `link_delay` (default 0). ECMP is on
//! by default: shortest paths in a fat-tree are its up-down paths, k/2 between pods at each
//! of the two upward hops (the paper's two-level tables spread flows over the same paths;
//! here a per-flow hash picks among them, `engine/net/ecmp.rs`).
//!
//! Two keys shrink or widen it with the same wiring: `pods` (default k) builds fewer pods,
//! and `hosts_per_edge` (default k/2) puts more or fewer hosts under each edge switch. The
//! HPCC paper's fabric (Li et al., SIGCOMM 2019, §5.1: 320 servers, 16 per ToR, 20 ToR, 20
//! aggregation and 16 core switches; its simulator's `mix/fat.txt`) is k = 8, 5 pods, 16
//! hosts per edge, with hosts numbered first as in that file.

use super::{link_defaults, BuildInfo, Built, Ctx, TopologyCfg};
use crate::base::ids::NodeId;
use crate::base::limits;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;

/// The node count of a k-ary fat-tree: k³/4 hosts and 5k²/4 switches.
pub(super) fn nodes(k: u64) -> u64 {
    k * k * k / 4 + 5 * k * k / 4
}

pub(super) fn build(ctx: &Ctx, t: &TopologyCfg, sim: &mut Sim, info: &mut BuildInfo) -> Built {
    let k =
        t.k.ok_or_else(|| ctx.err("topology", "k", "a fattree needs `k` (an even port count)"))?;
    let k = u64::from(k);
    if k < 2 || k % 2 != 0 || nodes(k) > limits::NODES_MAX {
        let msg = format!(
            "{k} is out of range: expected an even k in 2 ..= 72 (k³/4 hosts and 5k²/4 \
             switches, at most {} nodes; limits: topology nodes)",
            limits::NODES_MAX
        );
        return Err(ctx.err("topology", "k", msg));
    }
    let (rate, delay, sw_buf, nic_buf) = link_defaults(t);
    let rate =
        rate.ok_or_else(|| ctx.err("topology", "link_rate", "a fattree needs `link_rate`"))?;
    let frate = t.fabric_rate.map(|r| r.0).unwrap_or(rate);
    let half = (k / 2) as usize;
    let pods = u64::from(t.pods.unwrap_or(k as u32));
    if pods == 0 || pods > k {
        let msg = format!("{pods} is out of range: expected 1 ..= k = {k} pods");
        return Err(ctx.err("topology", "pods", msg));
    }
    let per_edge = u64::from(t.hosts_per_edge.unwrap_or(half as u32));
    let n_hosts = pods * half as u64 * per_edge;
    let n_nodes = n_hosts + pods * k + (half * half) as u64;
    if per_edge == 0 || n_nodes > limits::NODES_MAX {
        let msg = format!(
            "{per_edge} is out of range: expected at least 1, and at most {} nodes in all \
             (limits: topology nodes)",
            limits::NODES_MAX
        );
        return Err(ctx.err("topology", "hosts_per_edge", msg));
    }
    let (pods, per_edge) = (pods as usize, per_edge as usize);
    // Links: one per host, every edge to every aggregation of its pod, every aggregation to
    // k/2 cores.
    let n_links = n_hosts as usize + 2 * pods * half * half;
    sim.reserve_topology(n_nodes as usize, n_links)
        .map_err(|e| ctx.alloc_err(e, "topology.k"))?;
    let add = |sim: &mut Sim, name: &str, n: usize, kind: NodeKind| -> Vec<NodeId> {
        (1..=n)
            .map(|i| sim.add_node(&format!("{name}{i}"), kind))
            .collect()
    };
    let hosts = add(sim, "host", pods * half * per_edge, NodeKind::Host);
    let edge = add(sim, "edge", pods * half, NodeKind::Switch);
    let agg = add(sim, "agg", pods * half, NodeKind::Switch);
    let core = add(sim, "core", half * half, NodeKind::Switch);
    for (i, &h) in hosts.iter().enumerate() {
        sim.add_link(h, edge[i / per_edge], rate, delay, nic_buf, sw_buf);
    }
    for pod in 0..pods {
        for e in 0..half {
            for a in 0..half {
                let (x, y) = (edge[pod * half + e], agg[pod * half + a]);
                sim.add_link(x, y, frate, delay, sw_buf, sw_buf);
            }
        }
    }
    for pod in 0..pods {
        for a in 0..half {
            for j in 0..half {
                let (x, y) = (agg[pod * half + a], core[a * half + j]);
                sim.add_link(x, y, frate, delay, sw_buf, sw_buf);
            }
        }
    }
    info.servers = hosts.len() as u32;
    info.bottleneck_rate = Some(rate);
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The range the error message states: k = 72 is the largest even k within the node
    /// limit (93 312 hosts and 6 480 switches).
    #[test]
    fn k_72_is_the_largest_within_the_node_limit() {
        assert_eq!(super::nodes(4), 16 + 20);
        assert_eq!(super::nodes(72), 99_792);
        assert!(super::nodes(74) > crate::base::limits::NODES_MAX);
    }
}

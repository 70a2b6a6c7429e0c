//! Leaf-spine fabric builder (Bai et al. 2016 §6.2: 144 hosts, 12 leaves × 12 spines,
//! 10 Gb/s, base RTT 85.2 µs of which 80 µs in the hosts). Part of the topology builder
//! (`build/topology/mod.rs`).
//!
//! Nodes: hosts "host1".."hostN" (host i under leaf ⌈i / hosts_per_leaf⌉), "leaf1"..,
//! "spine1"..; every leaf links to every spine. Host links at `link_rate`, leaf-spine links
//! at `spine_rate` (default `link_rate`). Delays: with `base_rtt`, the propagation RTT
//! between hosts under different leaves (8 link traversals) equals `base_rtt`, of which
//! `host_delay` (default 0) sits on the host links (each traversed 4 times per RTT):
//! fabric links get d = (base_rtt − host_delay)/8, host links d + host_delay/4. Without
//! `base_rtt` every link gets `link_delay` (default 0). Serialization is not part of
//! `base_rtt`. ECMP (`engine/net/ecmp.rs`) spreads inter-leaf flows over the spines.

use super::{BuildInfo, Built, Ctx, ScenarioError, TopologyCfg};
use crate::base::ids::{Idx, NodeId};
use crate::base::units::SimTime;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;

pub(super) fn build(ctx: &Ctx, t: &TopologyCfg, sim: &mut Sim, info: &mut BuildInfo) -> Built {
    let need = |v: Option<u32>, key: &str| -> Result<u32, ScenarioError> {
        let v = v.ok_or_else(|| ctx.err("topology", key, format!("a leafspine needs `{key}`")))?;
        if v == 0 || v > 10_000 {
            return Err(ctx.err(
                "topology",
                key,
                format!("{v} is out of range: expected 1..10000"),
            ));
        }
        Ok(v)
    };
    let hpl = need(t.hosts_per_leaf, "hosts_per_leaf")?;
    let leaves = need(t.leaves, "leaves")?;
    let spines = need(t.spines, "spines")?;
    if hpl as u64 * leaves as u64 > 100_000 {
        return Err(ctx.err("topology", "leaves", "more than 100000 hosts"));
    }
    let rate = t
        .link_rate
        .map(|r| r.0)
        .ok_or_else(|| ctx.err("topology", "link_rate", "a leafspine needs `link_rate`"))?;
    let srate = t.spine_rate.map(|r| r.0).unwrap_or(rate);
    let (host_d, fabric_d) = match t.base_rtt {
        Some(rtt) => {
            let h = t.host_delay.map(|d| d.0).unwrap_or(SimTime::ZERO);
            if h > rtt.0 {
                return Err(ctx.err("topology", "host_delay", "must not exceed base_rtt"));
            }
            if t.link_delay.is_some() {
                return Err(ctx.err(
                    "topology",
                    "link_delay",
                    "give `base_rtt` (per-link delays follow from it) or `link_delay`, not both",
                ));
            }
            let d = SimTime((rtt.0 - h).0 / 8);
            (d + SimTime(h.0 / 4), d)
        }
        None => {
            if t.host_delay.is_some() {
                return Err(ctx.err("topology", "host_delay", "needs `base_rtt`"));
            }
            let d = t.link_delay.map(|d| d.0).unwrap_or(SimTime::ZERO);
            (d, d)
        }
    };
    let (sw_buf, nic_buf) = (t.switch_buffer.0, t.nic_buffer.0);
    let (h, l, s) = (
        hpl as usize * leaves as usize,
        leaves as usize,
        spines as usize,
    );
    sim.reserve_topology(h + l + s, h + l * s)
        .map_err(|e| ctx.alloc_err(e, "topology.hosts_per_leaf"))?;
    let hosts: Vec<NodeId> = (1..=hpl * leaves)
        .map(|i| sim.add_node(&format!("host{i}"), NodeKind::Host))
        .collect();
    let leaf: Vec<NodeId> = (1..=leaves)
        .map(|i| sim.add_node(&format!("leaf{i}"), NodeKind::Switch))
        .collect();
    let spine: Vec<NodeId> = (1..=spines)
        .map(|i| sim.add_node(&format!("spine{i}"), NodeKind::Switch))
        .collect();
    for (i, &h) in hosts.iter().enumerate() {
        sim.add_link(h, leaf[i / hpl.idx()], rate, host_d, nic_buf, sw_buf);
    }
    for &l in &leaf {
        for &s in &spine {
            sim.add_link(l, s, srate, fabric_d, sw_buf, sw_buf);
        }
    }
    info.servers = hosts.len() as u32;
    info.bottleneck_rate = Some(rate);
    Ok(())
}

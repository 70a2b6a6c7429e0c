//! `[topology]`: nodes, links and routes (with ECMP groups where asked) and packet limits.
//! The star, the dumbbell and the explicit topology are built here, the leaf-spine and the
//! fat-tree in their own files.

mod fattree;
mod leafspine;

use super::estimate;
use super::BuildInfo;
use crate::base::limits;
use crate::base::units::{RateBps, SimTime};
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::scenario::config::{TopoKind, TopologyCfg};
use crate::scenario::ctx::Ctx;
use crate::scenario::error::ScenarioError;

/// Nodes, links and routes (with ECMP groups where asked) and packet limits.
pub(crate) fn build_topology(
    ctx: &Ctx,
    t: &TopologyCfg,
    sim: &mut Sim,
    info: &mut BuildInfo,
) -> Result<(), ScenarioError> {
    info.switch_buffer_bytes = t.switch_buffer.0;
    check_kind_keys(ctx, t)?;
    match t.kind {
        TopoKind::Star => build_star(ctx, t, sim, info)?,
        TopoKind::Dumbbell => build_dumbbell(ctx, t, sim, info)?,
        TopoKind::Explicit => build_explicit(ctx, t, sim, info)?,
        TopoKind::Leafspine => leafspine::build(ctx, t, sim, info)?,
        TopoKind::Fattree => fattree::build(ctx, t, sim, info)?,
    }
    estimate::before_routes(ctx, t, sim)?;
    let ecmp = t
        .ecmp
        .unwrap_or(matches!(t.kind, TopoKind::Leafspine | TopoKind::Fattree));
    if ecmp {
        sim.finalize_routes_ecmp()
    } else {
        sim.finalize_routes()
    }
    .map_err(|e| ctx.alloc_err(e, estimate::nodes_key(t.kind)))?;
    if let Some(n) = t.queue_limit_pkts {
        let range = (1, limits::QUEUE_PKTS_MAX);
        ctx.in_range(
            "topology",
            "queue_limit_pkts",
            n,
            range,
            " packets (limits: queue_limit_pkts)",
        )?;
        let net = &mut sim.net;
        for p in net.ports.iter_mut() {
            if net.nodes[p.node.idx()].kind == NodeKind::Switch && p.limit_pkts == u64::MAX {
                p.limit_pkts = n;
            }
        }
    }
    Ok(())
}

/// The `[topology]` keys that only one kind of topology reads: given with another kind they
/// would be ignored, so they are refused (no value is accepted silently).
fn check_kind_keys(ctx: &Ctx, t: &TopologyCfg) -> Result<(), ScenarioError> {
    use TopoKind::{Dumbbell, Explicit, Fattree, Leafspine, Star};
    let keys = [
        ("servers", t.servers.is_some(), Star),
        ("server_delay_step", t.server_delay_step.is_some(), Star),
        ("extra_hosts", !t.extra_hosts.is_empty(), Star),
        ("left", t.left.is_some(), Dumbbell),
        ("right", t.right.is_some(), Dumbbell),
        ("bottleneck_rate", t.bottleneck_rate.is_some(), Dumbbell),
        ("bottleneck_delay", t.bottleneck_delay.is_some(), Dumbbell),
        ("nodes", !t.nodes.is_empty(), Explicit),
        ("links", !t.links.is_empty(), Explicit),
        ("hosts_per_leaf", t.hosts_per_leaf.is_some(), Leafspine),
        ("leaves", t.leaves.is_some(), Leafspine),
        ("spines", t.spines.is_some(), Leafspine),
        ("spine_rate", t.spine_rate.is_some(), Leafspine),
        ("base_rtt", t.base_rtt.is_some(), Leafspine),
        ("host_delay", t.host_delay.is_some(), Leafspine),
        ("k", t.k.is_some(), Fattree),
        ("fabric_rate", t.fabric_rate.is_some(), Fattree),
    ];
    for (key, given, kind) in keys {
        if given && t.kind != kind {
            let (of, this) = (kind.name(), t.kind.name());
            let msg = format!("only a {of} topology has it (this one is kind = \"{this}\")");
            return Err(ctx.err("topology", key, msg));
        }
    }
    Ok(())
}

/// What a topology builder returns: the nodes and links are added to the `Sim` it is given.
type Built = Result<(), ScenarioError>;

/// The link rate (if given), delay (default 0), switch buffer and NIC buffer shared by the
/// built-in topologies.
fn link_defaults(t: &TopologyCfg) -> (Option<RateBps>, SimTime, u64, u64) {
    let delay = t.link_delay.map(|d| d.0).unwrap_or(SimTime::ZERO);
    (
        t.link_rate.map(|r| r.0),
        delay,
        t.switch_buffer.0,
        t.nic_buffer.0,
    )
}

fn build_star(ctx: &Ctx, t: &TopologyCfg, sim: &mut Sim, info: &mut BuildInfo) -> Built {
    let (rate, delay, sw_buf, nic_buf) = link_defaults(t);
    let n = t
        .servers
        .ok_or_else(|| ctx.err("topology", "servers", "a star needs `servers` (at least 1)"))?;
    // The client and the switch are nodes too.
    let range = (1, limits::NODES_MAX - 2);
    ctx.in_range(
        "topology",
        "servers",
        n.into(),
        range,
        " (limits: topology nodes)",
    )?;
    let rate = rate.ok_or_else(|| ctx.err("topology", "link_rate", "a star needs `link_rate`"))?;
    info.servers = n;
    let (servers, extra) = (n as usize, t.extra_hosts.len());
    sim.reserve_topology(servers + 2 + extra, servers + 1 + extra)
        .map_err(|e| ctx.alloc_err(e, "topology.servers"))?;
    let sw = sim.add_node("sw", NodeKind::Switch);
    let client = sim.add_node("client", NodeKind::Host);
    let (_, down) = sim.add_link(client, sw, rate, delay, nic_buf, sw_buf);
    info.bottleneck_port = Some(down);
    info.bottleneck_rate = Some(rate);
    let step = t.server_delay_step.map(|s| s.0 .0).unwrap_or(0);
    // The last server's link must stay within the range of a link delay.
    let spread = step.saturating_mul(u64::from(n - 1));
    if spread > limits::DURATION_MAX_PS.saturating_sub(delay.0) {
        return Err(ctx.err(
            "topology",
            "server_delay_step",
            format!(
                "link_delay + (servers - 1) * step must be at most {} (limits: durations)",
                SimTime(limits::DURATION_MAX_PS)
            ),
        ));
    }
    for i in 1..=n {
        let h = sim.add_node(&format!("server{i}"), NodeKind::Host);
        let d = SimTime(delay.0 + step * u64::from(i - 1));
        sim.add_link(h, sw, rate, d, nic_buf, sw_buf);
    }
    for name in &t.extra_hosts {
        if sim.node_by_name(name).is_some() {
            return Err(ctx.err(
                "topology",
                "extra_hosts",
                format!("host name {name:?} is already used"),
            ));
        }
        let h = sim.add_node(name, NodeKind::Host);
        sim.add_link(h, sw, rate, delay, nic_buf, sw_buf);
    }
    Ok(())
}

fn build_dumbbell(ctx: &Ctx, t: &TopologyCfg, sim: &mut Sim, info: &mut BuildInfo) -> Built {
    let (rate, delay, sw_buf, nic_buf) = link_defaults(t);
    let l = t.left.ok_or_else(|| {
        ctx.err(
            "topology",
            "left",
            "a dumbbell needs `left` (hosts on the left)",
        )
    })?;
    let r = t.right.ok_or_else(|| {
        ctx.err(
            "topology",
            "right",
            "a dumbbell needs `right` (hosts on the right)",
        )
    })?;
    if l == 0 || r == 0 {
        return Err(ctx.err("topology", "left", "each side needs at least one host"));
    }
    // Both switches are nodes too.
    let range = (1, limits::NODES_MAX - 2);
    let what = " hosts on both sides (limits: topology nodes)";
    ctx.in_range("topology", "left", l.into(), range, what)?;
    ctx.in_range(
        "topology",
        "right",
        u64::from(l) + u64::from(r),
        range,
        what,
    )?;
    let rate =
        rate.ok_or_else(|| ctx.err("topology", "link_rate", "a dumbbell needs `link_rate`"))?;
    let brate = t.bottleneck_rate.map(|r| r.0).unwrap_or(rate);
    let bdelay = t.bottleneck_delay.map(|d| d.0).unwrap_or(delay);
    let swl = sim.add_node("swL", NodeKind::Switch);
    let swr = sim.add_node("swR", NodeKind::Switch);
    let (b, _) = sim.add_link(swl, swr, brate, bdelay, sw_buf, sw_buf);
    info.bottleneck_port = Some(b);
    info.bottleneck_rate = Some(brate);
    for i in 1..=l {
        let h = sim.add_node(&format!("left{i}"), NodeKind::Host);
        sim.add_link(h, swl, rate, delay, nic_buf, sw_buf);
    }
    for i in 1..=r {
        let h = sim.add_node(&format!("right{i}"), NodeKind::Host);
        sim.add_link(h, swr, rate, delay, nic_buf, sw_buf);
    }
    info.servers = l;
    Ok(())
}

fn build_explicit(ctx: &Ctx, t: &TopologyCfg, sim: &mut Sim, info: &mut BuildInfo) -> Built {
    let (rate, delay, sw_buf, nic_buf) = link_defaults(t);
    if t.nodes.is_empty() {
        return Err(ctx.err(
            "topology",
            "nodes",
            "an explicit topology needs [[topology.nodes]]",
        ));
    }
    let range = (1, limits::NODES_MAX);
    let what = " (limits: topology nodes)";
    ctx.in_range("topology", "nodes", t.nodes.len() as u64, range, what)?;
    for (i, n) in t.nodes.iter().enumerate() {
        let kind = match n.kind.as_str() {
            "host" => NodeKind::Host,
            "switch" => NodeKind::Switch,
            other => {
                return Err(ctx.err(
                    "topology.nodes",
                    "kind",
                    format!(
                        "node {i} ({}): unknown kind {other:?}: expected \"host\" or \"switch\"",
                        n.name
                    ),
                ))
            }
        };
        if sim.node_by_name(&n.name).is_some() {
            return Err(ctx.err(
                "topology.nodes",
                "name",
                format!("node name {:?} is used twice", n.name),
            ));
        }
        sim.add_node(&n.name, kind);
    }
    for (i, l) in t.links.iter().enumerate() {
        let a = sim.node_by_name(&l.a).ok_or_else(|| {
            ctx.err(
                "topology.links",
                "a",
                format!("link {i}: unknown node {:?}", l.a),
            )
        })?;
        let b = sim.node_by_name(&l.b).ok_or_else(|| {
            ctx.err(
                "topology.links",
                "b",
                format!("link {i}: unknown node {:?}", l.b),
            )
        })?;
        let lr = l.rate.map(|r| r.0).or(rate).ok_or_else(|| {
            ctx.err(
                "topology.links",
                "rate",
                format!("link {i}: no rate (set it or topology.link_rate)"),
            )
        })?;
        let ld = l.delay.map(|d| d.0).unwrap_or(delay);
        let buf = l.buffer.map(|b| b.0).unwrap_or(sw_buf);
        let la = if sim.net.nodes[a.idx()].kind == NodeKind::Host {
            nic_buf
        } else {
            buf
        };
        let lb = if sim.net.nodes[b.idx()].kind == NodeKind::Host {
            nic_buf
        } else {
            buf
        };
        let (pa, pb) = sim.add_link(a, b, lr, ld, la, lb);
        if let Some(n) = l.queue_limit_pkts {
            if n == 0 || n > limits::QUEUE_PKTS_MAX {
                let range = "1 ..= 1000000000 packets (limits: queue_limit_pkts)";
                return Err(ctx.err(
                    "topology.links",
                    "queue_limit_pkts",
                    format!("link {i}: {}", limits::out_of_range(&n.to_string(), range)),
                ));
            }
            for pid in [pa, pb] {
                let node = sim.net.ports[pid.idx()].node;
                if sim.net.nodes[node.idx()].kind == NodeKind::Switch {
                    sim.net.ports[pid.idx()].limit_pkts = n;
                }
            }
        }
    }
    info.servers = t.nodes.iter().filter(|n| n.kind == "host").count() as u32;
    Ok(())
}

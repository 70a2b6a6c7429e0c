//! `[topology]`: the kind of network, its nodes and links, and the tables of the switch
//! ports (AQM, multi-queue ports, layer 2) it holds.

use super::aqm::AqmCfg;
use super::l2::{PauseCfgFile, QcnCpCfg, RateChangeCfg};
use super::mq::QueuesCfg;
use super::units::{Dur, Rate, SizeOrUnlimited};
use serde::Deserialize;

#[derive(Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum TopoKind {
    /// One switch "sw", one host "client", hosts "server1".."serverN".
    Star,
    /// Hosts "left1".."leftN" on switch "swL", "right1".."rightM" on "swR", one bottleneck.
    Dumbbell,
    /// Nodes and links listed explicitly.
    Explicit,
    /// Leaf-spine fabric (`scenario/build/topology/leafspine.rs`): hosts "host1"..,
    /// leaves "leaf1".., spines "spine1"..; ECMP on by default.
    Leafspine,
    /// k-ary fat-tree (`scenario/build/topology/fattree.rs`): hosts "host1".., "edge1"..,
    /// "agg1".., "core1"..; ECMP on by default.
    Fattree,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    pub name: String,
    pub kind: String,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub a: String,
    pub b: String,
    /// Absent: `topology.link_rate`.
    pub rate: Option<Rate>,
    /// Absent: `topology.link_delay`.
    pub delay: Option<Dur>,
    /// Buffer of the switch ports at either end (hosts use `nic_buffer`). Absent:
    /// `topology.switch_buffer`.
    pub buffer: Option<SizeOrUnlimited>,
    /// Queue limit in packets of the switch ports at either end (a dummynet pipe's
    /// `queue N`); applies together with `buffer`. Default: no packet limit.
    pub queue_limit_pkts: Option<u64>,
}

/// `[topology]`. `kind` is required, so there is no `Default` impl: the two scalar keys with
/// a constant default take it from `TopologyCfg::unlimited`; the other scalar keys are
/// required by some kinds or fall back on other keys, and say so.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TopologyCfg {
    pub kind: TopoKind,
    /// star: number of servers (required for a star).
    pub servers: Option<u32>,
    /// dumbbell: hosts on each side (required for a dumbbell).
    pub left: Option<u32>,
    pub right: Option<u32>,
    /// Required by star, dumbbell and leafspine; explicit: the rate of links without one.
    pub link_rate: Option<Rate>,
    /// Absent: 0 (no propagation delay). An `Option` because a leafspine refuses it
    /// together with `base_rtt`.
    pub link_delay: Option<Dur>,
    /// dumbbell: the switch-to-switch link. Absent: `link_rate` / `link_delay`.
    pub bottleneck_rate: Option<Rate>,
    pub bottleneck_delay: Option<Dur>,
    /// Per switch output port, bytes (DropTail).
    #[serde(default = "TopologyCfg::unlimited")]
    pub switch_buffer: SizeOrUnlimited,
    /// Host NIC queue.
    #[serde(default = "TopologyCfg::unlimited")]
    pub nic_buffer: SizeOrUnlimited,
    /// Queue limit in packets of every switch output port without its own
    /// `links.queue_limit_pkts` (dummynet `queue N`). Default: no packet limit.
    pub queue_limit_pkts: Option<u64>,
    #[serde(default)]
    pub nodes: Vec<NodeCfg>,
    #[serde(default)]
    pub links: Vec<LinkCfg>,
    /// AQM of every switch output port (default none: tail drop only).
    pub aqm: Option<AqmCfg>,
    /// Per-port AQM overrides (`port = "A->B"` plus the keys of `aqm`).
    #[serde(default)]
    pub aqm_ports: Vec<AqmCfg>,
    /// Multi-queue switch ports (`scenario/config/mq.rs`; default: one FIFO per port).
    pub queues: Option<QueuesCfg>,
    /// Per-port multi-queue overrides (`port = "A->B"` plus the keys of `queues`).
    #[serde(default)]
    pub queue_ports: Vec<QueuesCfg>,
    /// QCN congestion points on switch egress ports (`engine/datapath/l2/mod.rs`).
    pub qcn: Option<QcnCpCfg>,
    /// IEEE 802.3x PAUSE at switches (`engine/datapath/l2/mod.rs`).
    pub pause: Option<PauseCfgFile>,
    /// Service-rate changes at set times.
    #[serde(default)]
    pub rate_changes: Vec<RateChangeCfg>,
    /// star: server i's link (i = 1..N) has the delay `link_delay + (i - 1) * step`, so that
    /// no two servers' packets reach the switch in the same instant (default 0: all equal;
    /// see docs/validation.md, "Why: the order of simultaneous arrivals").
    pub server_delay_step: Option<Dur>,
    /// star: extra hosts on the switch (same link), not incast servers by default
    /// (e.g. the Devkota 2010 mixed set-up's UDP sender).
    #[serde(default)]
    pub extra_hosts: Vec<String>,
    /// leafspine (`scenario/build/topology/leafspine.rs`, defaults documented there).
    pub hosts_per_leaf: Option<u32>,
    pub leaves: Option<u32>,
    pub spines: Option<u32>,
    /// leafspine: rate of the leaf-spine links (default `link_rate`).
    pub spine_rate: Option<Rate>,
    /// leafspine: base RTT between hosts under different leaves (propagation only);
    /// sets the per-link delays, with `host_delay` of it spent in the hosts.
    pub base_rtt: Option<Dur>,
    pub host_delay: Option<Dur>,
    /// fattree (`scenario/build/topology/fattree.rs`): the switches' port count k (even;
    /// k³/4 hosts).
    pub k: Option<u32>,
    /// fattree: rate of the switch-to-switch links (default `link_rate`).
    pub fabric_rate: Option<Rate>,
    /// fattree: pods built (default k) and hosts under each edge switch (default k/2).
    pub pods: Option<u32>,
    pub hosts_per_edge: Option<u32>,
    /// ECMP over equal-cost next hops (`engine/net/ecmp.rs`). Absent: on for leafspine and
    /// fattree, off otherwise.
    pub ecmp: Option<bool>,
}

impl TopologyCfg {
    /// `switch_buffer` and `nic_buffer`: unlimited (no tail drop), so that a scenario
    /// drops packets only at the buffer sizes it sets from its source.
    fn unlimited() -> SizeOrUnlimited {
        SizeOrUnlimited(u64::MAX)
    }
}

impl TopoKind {
    /// The `kind` string.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TopoKind::Star => "star",
            TopoKind::Dumbbell => "dumbbell",
            TopoKind::Explicit => "explicit",
            TopoKind::Leafspine => "leafspine",
            TopoKind::Fattree => "fattree",
        }
    }
}

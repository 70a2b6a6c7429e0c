//! Scenario files (TOML): schema, validation with errors that name the file, line and field,
//! `--set key=value` overrides, and construction of a `Sim`.
//!
//! The top-level tables `[sweep]`, `[quick]` and `[report]` belong to the Python front end
//! (sweep axes, quick-mode overrides, report kind); the engine accepts them unread.

use crate::base::ids::{FlowId, PortId};
use crate::base::limits;
use crate::base::rng::Rng;
use crate::base::units::{parse_bytes, parse_rate, parse_time, Bytes, RateBps, SimTime};
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::aqm::{parse_threshold, Aqm, AqmAt, QueueUnit, Red, RedParams, Step};
use crate::model::tcp::profile::{TcpProfile, PROFILES};
use crate::model::tcp::{CcAlgo, EcnRxPolicy, TcpConfig};
use serde::de::{self, Deserializer};
use serde::Deserialize;
use std::fmt;

pub use apps::AppCfg;
pub use estimate::budget as estimate_budget;
pub use mq::QueuesCfg;

pub mod apps;
mod estimate;
mod fattree;
pub mod flows;
pub mod json_schema;
pub mod l2;
mod leafspine;
mod mq;
pub mod workload;

/// An error in a scenario: which file, where, which field, and what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    pub line: Option<usize>,
    /// Column of a TOML syntax error (1-based, in characters), with its line.
    pub column: Option<usize>,
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ": line {l}")?;
        }
        if let Some(c) = self.column {
            write!(f, ", column {c}")?;
        }
        if let Some(k) = &self.field {
            write!(f, ", field {k}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

// ---------------------------------------------------------------- unit values

/// A duration within `limits::DURATION_MAX_PS`.
fn parse_time_checked(s: &str) -> Result<SimTime, String> {
    let t = parse_time(s)?;
    if t.0 > limits::DURATION_MAX_PS {
        return Err(limits::out_of_range(
            s,
            "0s ..= 1000000s (limits: durations)",
        ));
    }
    Ok(t)
}

/// A rate within `limits::RATE_MIN_BPS ..= RATE_MAX_BPS`.
fn parse_rate_checked(s: &str) -> Result<RateBps, String> {
    const RANGE: &str = "1kbps ..= 10Tbps (limits: rates)";
    // A rate below 0.5 b/s rounds to 0, which `parse_rate` refuses as not positive.
    let r = parse_rate(s).map_err(|e| {
        if e.ends_with("must be positive") {
            limits::out_of_range(s, RANGE)
        } else {
            e
        }
    })?;
    if !(limits::RATE_MIN_BPS..=limits::RATE_MAX_BPS).contains(&r.0) {
        return Err(limits::out_of_range(s, RANGE));
    }
    Ok(r)
}

/// A size within `limits::SIZE_MAX_BYTES`.
fn parse_bytes_checked(s: &str) -> Result<Bytes, String> {
    let b = parse_bytes(s)?;
    check_size(b.0, s)?;
    Ok(b)
}

fn check_size(bytes: u64, shown: &str) -> Result<(), String> {
    if bytes > limits::SIZE_MAX_BYTES {
        return Err(limits::out_of_range(shown, "0 ..= 1TiB (limits: sizes)"));
    }
    Ok(())
}

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:ident, $what:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(
    Dur,
    SimTime,
    parse_time_checked,
    "a duration string such as \"25us\""
);
unit_type!(
    Rate,
    RateBps,
    parse_rate_checked,
    "a rate string such as \"10Gbps\""
);

/// A size: a string with a unit ("256KiB", "32KB") or a plain integer number of bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size(pub Bytes);
impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Size;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"256KiB\", \"32KB\" or a number of bytes")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Size, E> {
                parse_bytes_checked(s).map(Size).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
                if v < 0 {
                    return Err(E::custom("a size cannot be negative"));
                }
                self.visit_u64(v as u64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
                check_size(v, &v.to_string()).map_err(E::custom)?;
                Ok(Size(Bytes(v)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A queue threshold with its unit: "65pkts" or a size such as "30KB".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Threshold(pub u64, pub QueueUnit);
impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Threshold;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a threshold such as \"65pkts\" or \"30KB\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Threshold, E> {
                let (v, u) = parse_threshold(s).map_err(E::custom)?;
                match u {
                    QueueUnit::Bytes => check_size(v, s).map_err(E::custom)?,
                    QueueUnit::Packets if v > limits::QUEUE_PKTS_MAX => {
                        return Err(E::custom(limits::out_of_range(
                            s,
                            "0 ..= 1000000000 packets (limits: queue_limit_pkts)",
                        )))
                    }
                    QueueUnit::Packets => {}
                }
                Ok(Threshold(v, u))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Threshold, E> {
                Err(E::custom(format!(
                    "write the unit: \"{v}pkts\" or a size such as \"{v}KB\""
                )))
            }
        }
        d.deserialize_any(V)
    }
}

/// A size or the word "unlimited".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeOrUnlimited(pub u64);
impl<'de> Deserialize<'de> for SizeOrUnlimited {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = SizeOrUnlimited;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"256KiB\" or \"unlimited\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<SizeOrUnlimited, E> {
                if s == "unlimited" {
                    return Ok(SizeOrUnlimited(u64::MAX));
                }
                parse_bytes_checked(s)
                    .map(|b| SizeOrUnlimited(b.0))
                    .map_err(|e| E::custom(format!("{e}, or \"unlimited\"")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SizeOrUnlimited, E> {
                if v < 0 {
                    return Err(E::custom("a size cannot be negative"));
                }
                check_size(v as u64, &v.to_string()).map_err(E::custom)?;
                Ok(SizeOrUnlimited(v as u64))
            }
        }
        d.deserialize_any(V)
    }
}

// --------------------------------------------------------------------- schema

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    pub id: Option<String>,
    pub title: Option<String>,
    pub source: Option<String>,
}

/// `[sim]`. `duration` is required; `seed` takes its default from `SimCfg::default_seed`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimCfg {
    /// Simulated time (required).
    pub duration: Dur,
    /// Seed of every random stream of the run.
    #[serde(default = "SimCfg::default_seed")]
    pub seed: u64,
}

impl SimCfg {
    /// Seed 1: our choice (no source fixes one); every run without `seed` draws the same
    /// random streams, so results are reproducible.
    fn default_seed() -> u64 {
        1
    }
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum TopoKind {
    /// One switch "sw", one host "client", hosts "server1".."serverN".
    Star,
    /// Hosts "left1".."leftN" on switch "swL", "right1".."rightM" on "swR", one bottleneck.
    Dumbbell,
    /// Nodes and links listed explicitly.
    Explicit,
    /// Leaf-spine fabric (`scenario/leafspine.rs`): hosts "host1".., leaves "leaf1"..,
    /// spines "spine1"..; ECMP on by default.
    Leafspine,
    /// k-ary fat-tree (`scenario/fattree.rs`): hosts "host1".., "edge1"..,
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
    /// Multi-queue switch ports (`scenario/mq.rs`; default: one FIFO per port).
    pub queues: Option<mq::QueuesCfg>,
    /// Per-port multi-queue overrides (`port = "A->B"` plus the keys of `queues`).
    #[serde(default)]
    pub queue_ports: Vec<mq::QueuesCfg>,
    /// QCN congestion points on switch egress ports (`engine/datapath/l2/mod.rs`).
    pub qcn: Option<crate::scenario::l2::QcnCpCfg>,
    /// IEEE 802.3x PAUSE at switches (`engine/datapath/l2/mod.rs`).
    pub pause: Option<crate::scenario::l2::PauseCfgFile>,
    /// Service-rate changes at set times.
    #[serde(default)]
    pub rate_changes: Vec<crate::scenario::l2::RateChangeCfg>,
    /// star: server i's link (i = 1..N) has the delay `link_delay + (i - 1) * step`, so that
    /// no two servers' packets reach the switch in the same instant (default 0: all equal;
    /// see docs/validation.md, "Why: the order of simultaneous arrivals").
    pub server_delay_step: Option<Dur>,
    /// star: extra hosts on the switch (same link), not incast servers by default
    /// (e.g. the seed-000 mixed set-up's UDP sender).
    #[serde(default)]
    pub extra_hosts: Vec<String>,
    /// leafspine (`scenario/leafspine.rs`, defaults documented there).
    pub hosts_per_leaf: Option<u32>,
    pub leaves: Option<u32>,
    pub spines: Option<u32>,
    /// leafspine: rate of the leaf-spine links (default `link_rate`).
    pub spine_rate: Option<Rate>,
    /// leafspine: base RTT between hosts under different leaves (propagation only);
    /// sets the per-link delays, with `host_delay` of it spent in the hosts.
    pub base_rtt: Option<Dur>,
    pub host_delay: Option<Dur>,
    /// fattree (`scenario/fattree.rs`): the switches' port count k (even; k³/4 hosts).
    pub k: Option<u32>,
    /// fattree: rate of the switch-to-switch links (default `link_rate`).
    pub fabric_rate: Option<Rate>,
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

/// Declares `AqmCfg` (`[topology] aqm`) and `MarkCfg` (a multi-queue port's `marking`) with
/// the step/RED keys they share written once, after `kind` and `AqmCfg`'s own keys and
/// before `MarkCfg`'s (the order serde lists them in its "expected one of" errors), and
/// `MarkCfg::aqm`, the shared keys as an `AqmCfg`. Not one struct: serde's `flatten` does
/// not work with `deny_unknown_fields`, and one struct with every key would let `aqm`
/// accept the TCN/CoDel keys.
macro_rules! aqm_tables {
    (
        $(#[$am:meta])* AqmCfg { $($(#[$afm:meta])* $af:ident: $aft:ty,)* }
        shared { $($(#[$sm:meta])* $s:ident: $st:ty,)* }
        $(#[$mm:meta])* MarkCfg { $($(#[$mfm:meta])* $mf:ident: $mft:ty,)* }
    ) => {
        $(#[$am])*
        #[derive(Deserialize, Debug, Clone, Default, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub struct AqmCfg {
            pub kind: String,
            $($(#[$afm])* pub $af: $aft,)*
            $($(#[$sm])* pub $s: $st,)*
        }

        $(#[$mm])*
        #[derive(Deserialize, Debug, Clone, Default, PartialEq)]
        #[serde(deny_unknown_fields)]
        pub struct MarkCfg {
            pub kind: String,
            $($(#[$sm])* pub $s: $st,)*
            $($(#[$mfm])* pub $mf: $mft,)*
        }

        impl MarkCfg {
            /// `kind` and the step/RED keys, as the `aqm` table they mean.
            pub fn aqm(&self) -> AqmCfg {
                AqmCfg {
                    kind: self.kind.clone(),
                    $($s: self.$s.clone(),)*
                    ..AqmCfg::default()
                }
            }
        }
    };
}

aqm_tables! {
    /// `[topology] aqm = { kind = "step" | "red" | "none", ... }` (also `aqm_ports` entries
    /// and `queues.port_marking`). One table holds the keys of several kinds and a key of
    /// another kind is an error, so every key is an `Option`; absence means the value in
    /// `MarkDefaults`, except `k` (absent: 65 packets on ports >= 10 Gb/s, 20 below).
    AqmCfg {
        /// Only in `aqm_ports`: the port ("A->B") this entry applies to.
        port: Option<String>,
    }
    shared {
        /// "enqueue" or "dequeue".
        at: Option<String>,
        /// step: marking threshold K.
        k: Option<Threshold>,
        /// red (this key to `mean_pkt_size`).
        min_th: Option<Threshold>,
        max_th: Option<Threshold>,
        max_p: Option<f64>,
        w_q: Option<f64>,
        gentle: Option<bool>,
        wait: Option<bool>,
        /// "average" or "instantaneous".
        queue: Option<String>,
        mean_pkt_size: Option<Size>,
    }
    /// `marking = { kind = ..., ... }` of a multi-queue port (`scenario/mq.rs`): "step" and
    /// "red" take the keys of `[topology] aqm`, per queue. As in `AqmCfg`, absence means
    /// the value in `MarkDefaults`; prob_tcn's `t_min` and `t_max` are required.
    MarkCfg {
        /// tcn / prob_tcn.
        threshold: Option<Dur>,
        t_min: Option<Dur>,
        t_max: Option<Dur>,
        p_max: Option<f64>,
        /// codel.
        target: Option<Dur>,
        interval: Option<Dur>,
        ecn: Option<bool>,
        /// mqecn.
        port_thresh: Option<f64>,
        beta: Option<f64>,
        /// dqrate (ideal RED) and the estimators.
        dq_thresh: Option<Size>,
        epsilon: Option<f64>,
        rtt: Option<Dur>,
        lambda: Option<f64>,
    }
}

/// The constant defaults of the keys of `AqmCfg` and `MarkCfg`, one field per key (the
/// tables keep `Option`s; see `AqmCfg`). `Deserialize` only lets the schema test read
/// `key = value` as written in schema.txt.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct MarkDefaults {
    pub at: String,
    pub min_th: Threshold,
    pub max_th: Threshold,
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub wait: bool,
    pub queue: String,
    pub mean_pkt_size: Size,
    pub threshold: Dur,
    pub p_max: f64,
    pub target: Dur,
    pub interval: Dur,
    pub ecn: bool,
    pub port_thresh: f64,
    pub beta: f64,
    pub dq_thresh: Size,
    pub epsilon: f64,
    pub rtt: Dur,
    pub lambda: f64,
}

impl Default for MarkDefaults {
    fn default() -> Self {
        use crate::model::mq::{codel, dqrate, mqecn, tcn};
        MarkDefaults {
            // DCTCP paper / MODELS.md §3.1: mark on arrival.
            at: "enqueue".to_string(),
            // RED: ns-3 RedQueueDisc (MinTh 5, MaxTh 15 packets, LInterm 50 → max_p 0.02,
            // QW 0.002, Gentle, Wait, MeanPktSize 500 B); MODELS.md §5.4.
            min_th: Threshold(5, QueueUnit::Packets),
            max_th: Threshold(15, QueueUnit::Packets),
            max_p: 0.02,
            w_q: 0.002,
            gentle: true,
            wait: true,
            // Floyd-Jacobson RED compares the averaged queue with the thresholds.
            queue: "average".to_string(),
            mean_pkt_size: Size(Bytes(500)),
            // `tcn::DEFAULT_T`: 78 µs, seed 002 (DCTCP at 10 Gb/s).
            threshold: Dur(tcn::DEFAULT_T),
            // prob_tcn: probability 1 at t_max, where it meets TCN's deterministic mark.
            p_max: 1.0,
            // `codel::DEFAULT_TARGET` / `DEFAULT_INTERVAL`: RFC 8289 (5 ms / 100 ms).
            target: Dur(codel::DEFAULT_TARGET),
            interval: Dur(codel::DEFAULT_INTERVAL),
            // Mark rather than drop: CoDel is one of the markings compared with TCN.
            ecn: true,
            // `mqecn::DEFAULT_PORT_THRESH_PKTS` (65, MQECN-NS2) and `DEFAULT_BETA` (0.75).
            port_thresh: mqecn::DEFAULT_PORT_THRESH_PKTS,
            beta: mqecn::DEFAULT_BETA,
            // `dqrate::DEFAULT_*`: seed 002 §3.3 (10 KB, ε 0.875, 100 µs, λ 1).
            dq_thresh: Size(Bytes(dqrate::DEFAULT_DQ_THRESH)),
            epsilon: dqrate::DEFAULT_EPSILON,
            rtt: Dur(dqrate::DEFAULT_RTT),
            lambda: dqrate::DEFAULT_LAMBDA,
        }
    }
}

/// `[tcp]` and `[apps.tcp]`. Every key is an `Option` on purpose: absence means the value
/// of the chosen `profile` (`model/tcp/profile.rs`, absent profile: "dcnsim", whose values
/// and sources are `TcpConfig::default()`), and an `[apps.tcp]` key falls back on `[tcp]`'s
/// (`over`). The receiver policy's default also depends on `cc` and `ecn`
/// (`tcp_algorithms`). schema.txt lists the "dcnsim" profile's values, checked by a test.
#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpCfgFile {
    pub cc: Option<String>,
    pub mss: Option<u32>,
    pub header: Option<u32>,
    pub init_cwnd: Option<u32>,
    pub init_ssthresh: Option<SizeOrUnlimited>,
    pub min_rto: Option<Dur>,
    pub max_rto: Option<Dur>,
    pub initial_rto: Option<Dur>,
    pub rto_granularity: Option<Dur>,
    pub delayed_ack: Option<u32>,
    pub delack_timeout: Option<Dur>,
    pub rwnd: Option<SizeOrUnlimited>,
    pub handshake: Option<bool>,
    pub dupack_threshold: Option<u32>,
    pub sack: Option<bool>,
    pub ecn: Option<bool>,
    pub receiver: Option<String>,
    pub dctcp_g: Option<f64>,
    pub dctcp_alpha_init: Option<f64>,
    pub dctcp_recovery_mode: Option<bool>,
    pub dctcp_reset_alpha_after_idle: Option<bool>,
    pub idle_restart: Option<bool>,
    pub abc_limit: Option<u32>,
    pub profile: Option<String>,
    pub limited_transmit: Option<bool>,
    pub rtt_tick: Option<Dur>,
    pub timestamps: Option<bool>,
    pub idle_rto_reset: Option<bool>,
    pub exit_cwnd_ns2: Option<bool>,
    pub rto_reset_on_ack: Option<bool>,
    pub whole_segments: Option<bool>,
    pub recover_strict: Option<bool>,
    pub recovery_maxburst: Option<u32>,
    pub ssthresh_from_cwnd: Option<bool>,
    pub rack: Option<bool>,
    pub tlp: Option<bool>,
    pub dsack: Option<bool>,
}

impl TcpCfgFile {
    /// This table's keys over `base`'s (an `[apps.tcp]` table over `[tcp]`).
    pub fn over(&self, base: &TcpCfgFile) -> TcpCfgFile {
        macro_rules! pick {
            ($($f:ident),*) => { TcpCfgFile { $($f: self.$f.clone().or_else(|| base.$f.clone())),* } };
        }
        pick!(
            cc,
            mss,
            header,
            init_cwnd,
            init_ssthresh,
            min_rto,
            max_rto,
            initial_rto,
            rto_granularity,
            delayed_ack,
            delack_timeout,
            rwnd,
            handshake,
            dupack_threshold,
            sack,
            ecn,
            receiver,
            dctcp_g,
            dctcp_alpha_init,
            dctcp_recovery_mode,
            dctcp_reset_alpha_after_idle,
            idle_restart,
            abc_limit,
            profile,
            limited_transmit,
            rtt_tick,
            timestamps,
            idle_rto_reset,
            exit_cwnd_ns2,
            rto_reset_on_ack,
            whole_segments,
            recover_strict,
            recovery_maxburst,
            ssthresh_from_cwnd,
            rack,
            tlp,
            dsack
        )
    }
}

/// `[measure]`: absent keys come from the `Default` impl; a key that turns something on
/// (a port or an interval) is an `Option` whose absence means "off".
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct MeasureCfg {
    /// Port named "A->B" whose silent periods are measured (absent: none).
    pub silent_link: Option<String>,
    pub silent_threshold: Dur,
    /// Port whose transmitted data packets are reported as `bottleneck_pkts`. Absent: the
    /// star's "sw->client" or the dumbbell's "swL->swR" (none for other topologies).
    pub bottleneck: Option<String>,
    pub queue_ports: Vec<String>,
    pub queue_interval: Dur,
    pub cwnd_flows: Vec<u32>,
    pub cwnd_interval: Dur,
    /// Flows whose data segments and ACKs are traced at the sender (`seq` table).
    pub seq_flows: Vec<u32>,
    /// Per-flow throughput sampling interval (`throughput` table and fairness summary);
    /// absent: off. Seed 001 §6.2 samples every 50 ms.
    pub throughput_interval: Option<Dur>,
    /// Fairness summary over samples from this time on. Absent: from 0; an `Option` because
    /// it is refused without `throughput_interval`.
    pub fairness_after: Option<Dur>,
    /// QCN: sampling period of the RP rates and their minimum.
    pub rp_interval: Dur,
    /// QCN: keep the per-limiter rate series as table `rp_rate`.
    pub rp_series: bool,
    /// Per-flow throughput sampled every interval as table `flow_rate` (absent: off).
    pub flow_rate_interval: Option<Dur>,
    /// Port "A->B" whose exact time-averaged queue is reported as summary columns
    /// `mean_queue_bytes` / `mean_queue_pkts` (`engine/observe/queue_mean.rs`); absent: off.
    /// Seed 000 Fig. 20 states "mean queue < 1 packet".
    pub mean_queue_port: Option<String>,
    /// Ports "A->B" whose transmitted frames are captured as libpcap files
    /// (`engine/observe/pcap.rs`; written by Python as `pcap/<port>.pcap`).
    #[serde(default)]
    pub pcap: Vec<String>,
    /// Memory cap of one port's capture; past it the capture stops and counts the frames
    /// it missed (table `pcap`, column `not_captured`).
    pub pcap_max_bytes: Size,
}

impl Default for MeasureCfg {
    fn default() -> Self {
        MeasureCfg {
            silent_link: None,
            // Seed 000 ch. I.4 counts "periods with no traffic", not short gaps: 100 ms
            // separates the 200 ms timeout stalls from the < 1 ms gaps between rounds.
            silent_threshold: Dur(SimTime::from_ms(100)),
            bottleneck: None,
            queue_ports: Vec::new(),
            // 1 ms: our choice (no source states a sampling period).
            queue_interval: Dur(SimTime::from_ms(1)),
            cwnd_flows: Vec::new(),
            // 1 ms, as `queue_interval`.
            cwnd_interval: Dur(SimTime::from_ms(1)),
            seq_flows: Vec::new(),
            throughput_interval: None,
            fairness_after: None,
            // 1 ms: our choice (seed 000 does not state how its minimum rate was sampled).
            rp_interval: Dur(SimTime::from_ms(1)),
            // The series is large; off unless asked for.
            rp_series: false,
            flow_rate_interval: None,
            mean_queue_port: None,
            pcap: Vec::new(),
            // 64 MiB: our choice, a few hundred thousand header-only frames per port.
            pcap_max_bytes: Size(Bytes(crate::engine::observe::pcap::DEFAULT_MAX_BYTES)),
        }
    }
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub meta: Meta,
    pub sim: SimCfg,
    pub topology: TopologyCfg,
    #[serde(default)]
    pub tcp: TcpCfgFile,
    #[serde(default)]
    pub apps: Vec<AppCfg>,
    #[serde(default)]
    pub measure: MeasureCfg,
    /// QCN reaction points in the hosts (`[qcn] rp = { ... }`, `engine/datapath/l2/mod.rs`).
    pub qcn: Option<crate::scenario::l2::QcnCfg>,
    /// Python-side tables, accepted unread.
    pub sweep: Option<toml::Value>,
    pub quick: Option<toml::Value>,
    pub report: Option<toml::Value>,
}

/// A parsed scenario with the name of the file it came from (for later error messages).
#[derive(Clone, Debug)]
pub struct Loaded {
    pub file: String,
    /// The file's text (line numbers in errors refer to it).
    pub text: String,
    pub scenario: Scenario,
    /// The dotted keys `--set` overrides, list indices left out ("apps.0.sru" is
    /// "apps.sru"): an error about one of them has no line (the value is not the file's).
    pub overridden: Vec<String>,
    /// Legal but suspicious settings (`BuildInfo::warnings`), found by `load`'s build.
    pub warnings: Vec<String>,
    /// Memory the run may take (`estimate::budget`); None: not checked.
    pub budget: Option<u64>,
}

// ---------------------------------------------------------------- error shaping

/// The table a header line names: "apps" for `[[apps]] # a comment`, "apps.tcp" for
/// `[apps.tcp]`; None for other lines.
fn header_name(line: &str) -> Option<String> {
    let t = line.trim();
    if !t.starts_with('[') {
        return None;
    }
    let inner = t.trim_start_matches('[');
    let name = inner.split(']').next().unwrap_or(inner);
    Some(name.trim().to_string())
}

/// Find the dotted field name for a byte offset: the nearest `[table]` header above the
/// line and the key on the line itself.
fn field_at(text: &str, offset: usize) -> (usize, Option<String>) {
    let line_no = text[..offset.min(text.len())].matches('\n').count() + 1;
    let lines: Vec<&str> = text.lines().collect();
    let mut table = String::new();
    // The headers above the line, and the line itself when it is one (an error at a
    // `[table]` header is about that table).
    for l in lines.iter().take(line_no) {
        if let Some(h) = header_name(l) {
            table = h;
        }
    }
    let key = lines.get(line_no - 1).and_then(|l| {
        let t = l.trim();
        if t.starts_with('[') || t.starts_with('#') {
            return None;
        }
        t.split_once('=')
            .map(|(k, _)| k.trim().trim_matches('"').to_string())
    });
    let field = match (key, table.is_empty()) {
        (Some(k), true) => Some(k),
        (Some(k), false) => Some(format!("{table}.{k}")),
        (None, false) => Some(table),
        (None, true) => None,
    };
    (line_no, field)
}

fn from_toml_error(file: &str, text: &str, e: &toml::de::Error) -> ScenarioError {
    let (span, msg) = apps::error_position(text, e);
    // toml's messages may span lines ("invalid table header\nexpected `.`, `]`").
    let msg = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ");
    match span {
        // A required top-level table is missing: name it, not the table the span starts in.
        Some(_)
            if ["sim", "topology"]
                .iter()
                .any(|t| msg == format!("missing field `{t}`")) =>
        {
            let missing = msg
                .trim_start_matches("missing field `")
                .trim_end_matches('`');
            ScenarioError {
                file: file.to_string(),
                line: None,
                column: None,
                field: Some(missing.to_string()),
                message: msg,
            }
        }
        Some(sp) => {
            let (line, field) = field_at(text, sp.start);
            ScenarioError {
                file: file.to_string(),
                line: Some(line),
                column: None,
                field,
                message: msg,
            }
        }
        None => ScenarioError {
            file: file.to_string(),
            line: None,
            column: None,
            field: None,
            message: msg,
        },
    }
}

/// The error for an array at `at` (a dotted path) where a table is read
/// (`json_schema::array_for_table`); `overridden`: found after `--set` overrides.
fn array_for_table(file: &str, text: &str, at: &str, overridden: bool) -> ScenarioError {
    let (table, key) = at.rsplit_once('.').unwrap_or(("", at));
    let line = if overridden {
        None
    } else {
        line_of(text, table, key)
    };
    let mut message = "invalid type: array, expected a table".to_string();
    if overridden {
        message.push_str(" (after applying overrides)");
    }
    ScenarioError {
        file: file.to_string(),
        line,
        column: None,
        field: Some(at.to_string()),
        message,
    }
}

/// Line of `key = ...` inside `[table]` (best effort, for semantic errors).
pub(crate) fn line_of(text: &str, table: &str, key: &str) -> Option<usize> {
    let mut cur = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if let Some(h) = header_name(l) {
            cur = h;
            continue;
        }
        if cur == table {
            if let Some((k, _)) = t.split_once('=') {
                if k.trim().trim_matches('"') == key {
                    return Some(i + 1);
                }
            }
        }
    }
    None
}

/// Apply `dotted.key = value` overrides to a TOML table. The value is parsed as a TOML
/// literal; if that fails it is taken as a string.
pub fn apply_overrides(
    table: &mut toml::Table,
    overrides: &[(String, String)],
) -> Result<(), String> {
    let mut root = toml::Value::Table(std::mem::take(table));
    let res = apply_to_value(&mut root, overrides);
    if let toml::Value::Table(t) = root {
        *table = t;
    }
    res
}

fn apply_to_value(root: &mut toml::Value, overrides: &[(String, String)]) -> Result<(), String> {
    for (key, raw) in overrides {
        let value: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
            Ok(mut t) => t.remove("v").unwrap_or(toml::Value::String(raw.clone())),
            Err(_) => toml::Value::String(raw.clone()),
        };
        let parts: Vec<&str> = key.split('.').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(format!("--set {key}: empty part in the key"));
        }
        let mut cur: &mut toml::Value = root;
        for (i, part) in parts.iter().enumerate() {
            let last = i == parts.len() - 1;
            match cur {
                toml::Value::Table(t) => {
                    if last {
                        t.insert(part.to_string(), value.clone());
                        break;
                    }
                    cur = t
                        .entry(part.to_string())
                        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                }
                toml::Value::Array(a) => {
                    let idx: usize = part.parse().map_err(|_| {
                        format!("--set {key}: {part:?} must be an index into a list")
                    })?;
                    let len = a.len();
                    let slot = a.get_mut(idx).ok_or_else(|| {
                        format!("--set {key}: index {idx} is out of range (the list has {len})")
                    })?;
                    if last {
                        *slot = value.clone();
                        break;
                    }
                    cur = slot;
                }
                _ => {
                    return Err(format!(
                        "--set {key}: {} is not a table",
                        parts[..i].join(".")
                    ))
                }
            }
        }
    }
    Ok(())
}

/// A TOML syntax error (the text is not TOML at all): its line and column, no field (the
/// line cannot be trusted to name one).
fn syntax_error(file: &str, text: &str, e: &toml::de::Error) -> ScenarioError {
    let msg = e.message().lines().map(str::trim).filter(|l| !l.is_empty());
    let msg = msg.collect::<Vec<_>>().join(": ");
    let (line, column) = match e.span() {
        Some(sp) => {
            let before = &text[..sp.start.min(text.len())];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let col = before[line_start..].chars().count() + 1;
            (Some(before.matches('\n').count() + 1), Some(col))
        }
        None => (None, None),
    };
    ScenarioError {
        file: file.to_string(),
        line,
        column,
        field: None,
        message: format!("TOML syntax error: {msg}"),
    }
}

/// The `--set` key an error after applying overrides is about: the override whose dotted
/// key (list indices left out) is the error's field or lies under it, or that names the
/// unknown field the message quotes. None: the error is about the file's own text.
fn override_field(field: Option<&str>, msg: &str, overridden: &[String]) -> Option<String> {
    let unknown = msg
        .strip_prefix("unknown field `")
        .and_then(|m| m.split('`').next());
    overridden
        .iter()
        .find(|k| {
            let under = field.is_some_and(|f| *k == f || k.starts_with(&format!("{f}.")));
            let names = unknown.is_some_and(|u| k.split('.').any(|p| p == u));
            under && (unknown.is_none() || names) || (field.is_none() && names)
        })
        .cloned()
}

/// Parse and validate a scenario. Errors name the file, line and field. The memory the run
/// would take is checked against what is available (`estimate::budget`).
pub fn load(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
) -> Result<Loaded, ScenarioError> {
    load_with_budget(text, file, overrides, estimate::budget(None))
}

/// As `load`, with the memory the run may take (None: not checked).
pub fn load_with_budget(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    budget: Option<u64>,
) -> Result<Loaded, ScenarioError> {
    let parsed = match toml::from_str::<toml::Table>(text) {
        Ok(t) => t,
        Err(e) => return Err(syntax_error(file, text, &e)),
    };
    let overridden: Vec<String> = overrides
        .iter()
        .map(|(k, _)| {
            let parts: Vec<&str> = k
                .split('.')
                .filter(|p| p.parse::<usize>().is_err())
                .collect();
            parts.join(".")
        })
        .collect();
    if let Some(at) = json_schema::array_for_table(&parsed) {
        return Err(array_for_table(file, text, &at, false));
    }
    let base: Scenario = toml::from_str(text).map_err(|e| from_toml_error(file, text, &e))?;
    let scenario = if overrides.is_empty() {
        base
    } else {
        let mut table = parsed;
        apply_overrides(&mut table, overrides).map_err(|m| ScenarioError {
            file: file.to_string(),
            line: None,
            column: None,
            field: None,
            message: m,
        })?;
        if let Some(at) = json_schema::array_for_table(&table) {
            return Err(array_for_table(file, text, &at, true));
        }
        let merged = toml::to_string(&table).map_err(|e| ScenarioError {
            file: file.to_string(),
            line: None,
            column: None,
            field: None,
            message: format!("cannot apply overrides: {e}"),
        })?;
        let s: Scenario = toml::from_str(&merged).map_err(|e| {
            let mut err = from_toml_error(file, &merged, &e);
            err.line = None;
            if let Some(k) = override_field(err.field.as_deref(), &err.message, &overridden) {
                err.field = Some(k);
            }
            err.message = format!("{} (after applying overrides)", err.message);
            err
        })?;
        s
    };
    let mut loaded = Loaded {
        file: file.to_string(),
        text: text.to_string(),
        scenario,
        overridden,
        warnings: Vec::new(),
        budget,
    };
    // Build once to run every semantic check.
    loaded.warnings = build(&loaded)?.1.warnings;
    Ok(loaded)
}

// ---------------------------------------------------------------- construction

struct Ctx<'a> {
    loaded: &'a Loaded,
    /// Legal but suspicious settings found while building (`suspicious`), each once.
    warnings: std::cell::RefCell<Vec<String>>,
}

impl Ctx<'_> {
    /// `v` within `lo ..= hi` (`what`: the unit and the limits entry, for the message).
    fn in_range(
        &self,
        table: &str,
        key: &str,
        v: u64,
        (lo, hi): (u64, u64),
        what: &str,
    ) -> Result<(), ScenarioError> {
        if (lo..=hi).contains(&v) {
            return Ok(());
        }
        let range = format!("{lo} ..= {hi}{what}");
        Err(self.err(table, key, limits::out_of_range(&v.to_string(), &range)))
    }

    /// A `[measure]` sampling interval: at least `limits::SAMPLE_INTERVAL_MIN_PS`.
    fn interval(&self, key: &str, d: SimTime) -> Result<(), ScenarioError> {
        if d.0 >= limits::SAMPLE_INTERVAL_MIN_PS {
            return Ok(());
        }
        let msg = format!(
            "{}ns is below 1us (limits: measure intervals)",
            d.0 as f64 / 1e3
        );
        Err(self.err("measure", key, msg))
    }

    /// Record a warning (once: the same text twice is kept once), shaped as an error.
    fn warn(&self, table: &str, key: &str, message: &str) {
        let text = self.err(table, key, message).to_string();
        let mut w = self.warnings.borrow_mut();
        if !w.contains(&text) {
            w.push(text);
        }
    }

    fn err(&self, table: &str, key: &str, message: impl Into<String>) -> ScenarioError {
        let field = if table.is_empty() {
            key.to_string()
        } else {
            format!("{table}.{key}")
        };
        let line = if self.loaded.overridden.contains(&field) {
            None
        } else {
            line_of(&self.loaded.text, table, key)
        };
        ScenarioError {
            file: self.loaded.file.clone(),
            line,
            column: None,
            field: Some(field),
            message: message.into(),
        }
    }

    /// The error for an input-sized allocation the allocator refused (`base::alloc`),
    /// naming `key` (dotted) as the one to lower.
    fn alloc_err(&self, e: crate::base::alloc::AllocError, key: &str) -> ScenarioError {
        let (table, k) = key.rsplit_once('.').unwrap_or(("", key));
        self.err(table, k, format!("{e}: lower {key}"))
    }
}

/// Build a flow's TCP configuration from a table (already merged over `[tcp]` for
/// `[apps.tcp]`): the profile's defaults, then every key the scenario sets over them. Keys
/// are checked in a fixed order, so the first bad one is the one reported.
fn tcp_config(ctx: &Ctx, table: &str, f: &TcpCfgFile) -> Result<TcpConfig, ScenarioError> {
    let profile = match f.profile.as_deref() {
        None => TcpProfile::Dcnsim,
        Some(p) => TcpProfile::parse(p).ok_or_else(|| {
            let names: Vec<String> = PROFILES.iter().map(|(n, _)| format!("{n:?}")).collect();
            ctx.err(
                table,
                "profile",
                format!(
                    "unknown TCP profile {p:?}: expected one of {}",
                    names.join(", ")
                ),
            )
        })?,
    };
    let mut c = profile.config(f.mss.unwrap_or(TcpConfig::default().mss));
    // Keys taken as they are (every value is valid).
    macro_rules! copy_keys {
        ($($k:ident),*) => { $( if let Some(v) = f.$k { c.$k = v; } )* };
    }
    copy_keys!(
        limited_transmit,
        timestamps,
        idle_rto_reset,
        exit_cwnd_ns2,
        rto_reset_on_ack,
        whole_segments,
        recover_strict,
        recovery_maxburst,
        ssthresh_from_cwnd,
        rack,
        tlp,
        dsack,
        dctcp_recovery_mode,
        dctcp_reset_alpha_after_idle,
        idle_restart,
        handshake
    );
    // Keys given in a unit type (a size or a duration), taken as they are.
    macro_rules! copy_units {
        ($($k:ident),*) => { $( if let Some(v) = f.$k { c.$k = v.0; } )* };
    }
    copy_units!(
        init_ssthresh,
        min_rto,
        max_rto,
        rto_granularity,
        delack_timeout,
        rwnd
    );
    if let Some(v) = f.rtt_tick {
        if v.0 > SimTime::from_ms(1000) {
            return Err(ctx.err(
                table,
                "rtt_tick",
                "expected \"0s\" (exact RFC 6298 estimator) up to \"1s\"",
            ));
        }
        c.rtt_tick = v.0;
    }
    tcp_algorithms(ctx, table, f, &mut c)?;
    tcp_numbers(ctx, table, f, &mut c)?;
    Ok(c)
}

/// The sender algorithm, SACK and RACK-TLP, ECN and the receiver policy, DCTCP's gain and
/// initial alpha.
fn tcp_algorithms(
    ctx: &Ctx,
    table: &str,
    f: &TcpCfgFile,
    c: &mut TcpConfig,
) -> Result<(), ScenarioError> {
    if let Some(cc) = &f.cc {
        c.cc = match cc.as_str() {
            "newreno" | "reno" => CcAlgo::NewReno,
            "sack" => {
                if f.sack == Some(false) {
                    return Err(ctx.err(table, "sack", "cc = \"sack\" needs sack = true"));
                }
                c.sack = true;
                CcAlgo::NewReno
            }
            "dctcp" => CcAlgo::Dctcp,
            "odctcp" => CcAlgo::Odctcp,
            other => {
                return Err(ctx.err(
                    table,
                    "cc",
                    format!(
                        "unknown congestion control {other:?}: expected \"newreno\", \"sack\", \"dctcp\" or \"odctcp\""
                    ),
                ))
            }
        };
    }
    if let Some(v) = f.sack {
        c.sack = v;
    }
    // RFC 8985: RACK needs SACK, TLP needs RACK. A profile's RACK-TLP turns off quietly
    // with sack = false; a key that asks for it does not.
    if c.rack && !c.sack {
        if f.rack == Some(true) {
            return Err(ctx.err(table, "rack", "rack = true needs sack = true (RFC 8985)"));
        }
        c.rack = false;
    }
    if c.dsack && !c.sack {
        if f.dsack == Some(true) {
            return Err(ctx.err(table, "dsack", "dsack = true needs sack = true (RFC 2883)"));
        }
        c.dsack = false;
    }
    if c.tlp && !c.rack {
        if f.tlp == Some(true) {
            return Err(ctx.err(table, "tlp", "tlp = true needs rack = true (RFC 8985)"));
        }
        c.tlp = false;
    }
    c.ecn = match f.ecn {
        Some(false) if c.cc.is_dctcp() => {
            return Err(ctx.err(
                table,
                "ecn",
                "DCTCP and ODCTCP need ECN: remove ecn = false or use cc = \"newreno\"",
            ))
        }
        Some(v) => v,
        None => c.cc.is_dctcp(),
    };
    c.ecn_rx = match f.receiver.as_deref() {
        Some("none") => EcnRxPolicy::Off,
        Some("standard") | Some("rfc3168") => EcnRxPolicy::Standard,
        Some("dctcp") => EcnRxPolicy::Dctcp,
        Some("odctcp") => EcnRxPolicy::Odctcp,
        Some(other) => {
            return Err(ctx.err(
                table,
                "receiver",
                format!("unknown receiver {other:?}: expected \"standard\", \"dctcp\", \"odctcp\" or \"none\""),
            ))
        }
        // Default: the receiver that matches the sender.
        None if !c.ecn => EcnRxPolicy::Off,
        None => match c.cc {
            CcAlgo::NewReno => EcnRxPolicy::Standard,
            CcAlgo::Dctcp => EcnRxPolicy::Dctcp,
            CcAlgo::Odctcp => EcnRxPolicy::Odctcp,
        },
    };
    if let Some(g) = f.dctcp_g {
        if !(g > 0.0 && g <= 1.0) {
            return Err(ctx.err(
                table,
                "dctcp_g",
                format!("{g} is out of range: expected 0 < g <= 1"),
            ));
        }
        c.dctcp_g = g;
    }
    if let Some(a) = f.dctcp_alpha_init {
        if !(0.0..=1.0).contains(&a) {
            return Err(ctx.err(
                table,
                "dctcp_alpha_init",
                format!("{a} is out of range: expected 0..1"),
            ));
        }
        c.dctcp_alpha_init = a;
    }
    Ok(())
}

/// Sizes, windows and timers with a range to check.
fn tcp_numbers(
    ctx: &Ctx,
    table: &str,
    f: &TcpCfgFile,
    c: &mut TcpConfig,
) -> Result<(), ScenarioError> {
    if let Some(v) = f.abc_limit {
        if v > 16 {
            return Err(ctx.err(table, "abc_limit", "expected 0 (off) to 16 segments"));
        }
        c.abc_limit = v;
    }
    if let Some(v) = f.mss {
        if !(64..=9000).contains(&v) {
            return Err(ctx.err(
                table,
                "mss",
                format!("{v} is out of range: expected 64..9000 bytes"),
            ));
        }
        c.mss = v;
    }
    if let Some(v) = f.header {
        if v > 200 {
            return Err(ctx.err(table, "header", "expected at most 200 bytes"));
        }
        c.header = v;
    }
    if let Some(v) = f.init_cwnd {
        let range = (1, limits::INIT_CWND_MAX);
        ctx.in_range(
            table,
            "init_cwnd",
            v.into(),
            range,
            " segments (limits: tcp.init_cwnd)",
        )?;
        c.init_cwnd = v;
    }
    if let Some(v) = f.initial_rto {
        if v.0 == SimTime::ZERO {
            return Err(ctx.err(table, "initial_rto", "must be positive"));
        }
        c.initial_rto = v.0;
    }
    if let Some(v) = f.delayed_ack {
        if v == 0 {
            return Err(ctx.err(
                table,
                "delayed_ack",
                "expected 1 (off) or more segments per ACK",
            ));
        }
        c.delack_count = v;
    }
    if let Some(v) = f.dupack_threshold {
        if v == 0 {
            return Err(ctx.err(table, "dupack_threshold", "expected at least 1"));
        }
        c.dupack_threshold = v;
    }
    if c.max_rto < c.min_rto {
        return Err(ctx.err(table, "max_rto", "must not be below min_rto"));
    }
    Ok(())
}

/// The AQM of port `pid` from an `aqm` table. `what` names the table in errors
/// ("topology.aqm" or "topology.aqm_ports").
fn aqm_from_cfg(
    ctx: &Ctx,
    what: &str,
    a: &AqmCfg,
    sim: &Sim,
    pid: PortId,
) -> Result<(Aqm, AqmAt), ScenarioError> {
    let err = |key: &str, msg: String| {
        let (table, k) = what.split_once('.').unwrap_or(("topology", what));
        let mut e = ctx.err(what, key, msg);
        e.line = e.line.or_else(|| line_of(&ctx.loaded.text, table, k));
        e
    };
    let d = MarkDefaults::default();
    let at = match a.at.as_deref().unwrap_or(&d.at) {
        "enqueue" => AqmAt::Enqueue,
        "dequeue" => AqmAt::Dequeue,
        o => {
            return Err(err(
                "at",
                format!("unknown {o:?}: expected \"enqueue\" or \"dequeue\""),
            ))
        }
    };
    let red_only = [
        ("min_th", a.min_th.is_some()),
        ("max_th", a.max_th.is_some()),
        ("max_p", a.max_p.is_some()),
        ("w_q", a.w_q.is_some()),
        ("gentle", a.gentle.is_some()),
        ("wait", a.wait.is_some()),
        ("queue", a.queue.is_some()),
        ("mean_pkt_size", a.mean_pkt_size.is_some()),
    ];
    let port = &sim.net.ports[pid.idx()];
    match a.kind.as_str() {
        "none" => Ok((Aqm::None, AqmAt::Off)),
        "step" => {
            if let Some((k, _)) = red_only.iter().find(|x| x.1) {
                return Err(err(k, "only for kind = \"red\"".to_string()));
            }
            // DCTCP paper §3.5 (MODELS.md §3.1): K = 20 packets at 1 Gb/s, 65 at 10 Gb/s.
            let k = a.k.unwrap_or(if port.rate.0 >= 10_000_000_000 {
                Threshold(65, QueueUnit::Packets)
            } else {
                Threshold(20, QueueUnit::Packets)
            });
            Ok((Aqm::Step(Step { k: k.0, unit: k.1 }), at))
        }
        "red" => {
            if a.k.is_some() {
                return Err(err(
                    "k",
                    "only for kind = \"step\" (RED uses min_th/max_th)".to_string(),
                ));
            }
            let min = a.min_th.unwrap_or(d.min_th);
            let max = a.max_th.unwrap_or(d.max_th);
            if min.1 != max.1 {
                return Err(err(
                    "max_th",
                    "min_th and max_th must use the same unit (both packets or both bytes)"
                        .to_string(),
                ));
            }
            if min.0 > max.0 {
                return Err(err("max_th", "must not be below min_th".to_string()));
            }
            let max_p = a.max_p.unwrap_or(d.max_p);
            if !(max_p > 0.0 && max_p <= 1.0) {
                return Err(err(
                    "max_p",
                    format!("{max_p} is out of range: expected 0 < max_p <= 1"),
                ));
            }
            let w_q = a.w_q.unwrap_or(d.w_q);
            if !(w_q > 0.0 && w_q <= 1.0) {
                return Err(err(
                    "w_q",
                    format!("{w_q} is out of range: expected 0 < w_q <= 1"),
                ));
            }
            let instantaneous = match a.queue.as_deref().unwrap_or(&d.queue) {
                "average" => false,
                "instantaneous" => true,
                o => {
                    return Err(err(
                        "queue",
                        format!("unknown {o:?}: expected \"average\" or \"instantaneous\""),
                    ))
                }
            };
            let mean = a.mean_pkt_size.unwrap_or(d.mean_pkt_size).0 .0;
            if mean == 0 || mean > 65535 {
                return Err(err("mean_pkt_size", "expected 1..65535 bytes".to_string()));
            }
            let p = RedParams {
                min_th: min.0 as f64,
                max_th: max.0 as f64,
                unit: min.1,
                max_p,
                w_q,
                gentle: a.gentle.unwrap_or(d.gentle),
                wait: a.wait.unwrap_or(d.wait),
                instantaneous,
                mean_pkt_time: port.rate.tx_time(mean as u32),
            };
            // One random stream per port, derived from the scenario seed.
            let rng = Rng::new(ctx.loaded.scenario.sim.seed, 0x2_0000 + pid.0 as u64);
            Ok((Aqm::Red(Box::new(Red::new(p, rng))), at))
        }
        o => Err(err(
            "kind",
            format!("unknown AQM {o:?}: expected \"step\", \"red\" or \"none\""),
        )),
    }
}

/// Summary of what was built, for the results.
#[derive(Clone, Debug, Default)]
pub struct BuildInfo {
    pub servers: u32,
    pub switch_buffer_bytes: u64,
    pub bottleneck_port: Option<PortId>,
    pub bottleneck_rate: Option<RateBps>,
    /// Legal but suspicious settings, one line each (file, line, field, what), each once:
    /// for stderr and the run's metadata, never the tables.
    pub warnings: Vec<String>,
}

/// Build the simulation described by a loaded scenario: the topology, the AQMs and
/// multi-queue ports, the apps, the measurements, then layer 2, in this order (which is also
/// the order in which errors are found).
pub fn build(loaded: &Loaded) -> Result<(Sim, BuildInfo), ScenarioError> {
    let ctx = Ctx {
        loaded,
        warnings: Default::default(),
    };
    let s = &loaded.scenario;
    if crate::base::alloc::fault() == Some(crate::base::alloc::Fault::Panic) {
        panic!("fault injected by DCNSIM_FAULT=panic");
    }
    if s.sim.duration.0 == SimTime::ZERO {
        return Err(ctx.err("sim", "duration", "must be positive"));
    }
    let mut sim = Sim::new(s.sim.duration.0, s.sim.seed);
    let mut info = BuildInfo::default();
    let t = &s.topology;
    build_topology(&ctx, t, &mut sim, &mut info)?;
    apply_aqm(&ctx, t, &mut sim)?;
    mq::apply(&ctx, t.queues.as_ref(), &t.queue_ports, &mut sim)?;
    build_apps(&ctx, s, &mut sim)?;
    build_measure(&ctx, &s.measure, &mut sim, &mut info)?;
    build_l2(&ctx, s, &mut sim)?;
    estimate::after_build(&ctx, &s.measure, &sim)?;
    suspicious(&ctx, &sim);
    info.warnings = ctx.warnings.take();
    Ok((sim, info))
}

/// An Ethernet frame of the standard 1500-byte MTU: a switch buffer below it is warned about.
const FULL_FRAME_BYTES: u64 = 1500;

/// Warn about settings that are legal but rarely meant: a zero switch or NIC buffer, or a
/// switch buffer below one 1500-byte frame (a
/// packet that finds the port busy is dropped; only an idle port passes one), a zero
/// receive window (the sender can never send), an initial window above
/// `limits::INIT_CWND_WARN` segments or above 1000 x the smallest switch buffer.
fn suspicious(ctx: &Ctx, sim: &Sim) {
    let t = &ctx.loaded.scenario.topology;
    let mut min_switch_buf = u64::MAX;
    for p in &sim.net.ports {
        if sim.net.nodes[p.node.idx()].kind == NodeKind::Switch {
            min_switch_buf = min_switch_buf.min(p.limit_bytes);
        }
    }
    if min_switch_buf == 0 {
        let key = if t.switch_buffer.0 == 0 {
            "switch_buffer"
        } else {
            "links"
        };
        let msg = "a switch port has a zero buffer: it drops every packet that finds it busy";
        ctx.warn("topology", key, msg);
    } else if min_switch_buf < FULL_FRAME_BYTES {
        let key = if t.switch_buffer.0 == min_switch_buf {
            "switch_buffer"
        } else {
            "links"
        };
        let msg = format!(
            "a switch port's buffer of {min_switch_buf} bytes holds no {FULL_FRAME_BYTES}-byte \
             frame: it drops every full-size packet that finds it busy"
        );
        ctx.warn("topology", key, &msg);
    }
    if t.nic_buffer.0 == 0 {
        let msg = "zero NIC buffer: a host drops every packet it sends while its NIC is busy";
        ctx.warn("topology", "nic_buffer", msg);
    }
    for f in &sim.hosts.flows {
        let c = &f.cfg;
        if c.rwnd == 0 {
            ctx.warn("tcp", "rwnd", "rwnd = 0: the sender can never send data");
        }
        let iw = u64::from(c.init_cwnd) * u64::from(c.mss);
        if u64::from(c.init_cwnd) > limits::INIT_CWND_WARN {
            let msg = format!(
                "init_cwnd = {} segments: far above RFC 6928's 10 (warned above {})",
                c.init_cwnd,
                limits::INIT_CWND_WARN
            );
            ctx.warn("tcp", "init_cwnd", &msg);
        } else if min_switch_buf > 0 && iw / 1000 > min_switch_buf {
            let msg = format!(
                "the initial window ({iw} bytes) is over 1000 x the smallest switch buffer \
                 ({min_switch_buf} bytes)"
            );
            ctx.warn("tcp", "init_cwnd", &msg);
        }
    }
}

impl TopoKind {
    fn name(self) -> &'static str {
        match self {
            TopoKind::Star => "star",
            TopoKind::Dumbbell => "dumbbell",
            TopoKind::Explicit => "explicit",
            TopoKind::Leafspine => "leafspine",
            TopoKind::Fattree => "fattree",
        }
    }
}

/// The `[topology]` keys that only one kind of topology reads: given with another kind they
/// would be ignored, so they are refused ([robust]: no value accepted silently).
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

/// Link rate, delay and buffers shared by the built-in topologies.
struct LinkDefaults {
    rate: Option<RateBps>,
    delay: SimTime,
    sw_buf: u64,
    nic_buf: u64,
}

/// Nodes, links and routes (with ECMP groups where asked) and packet limits.
fn build_topology(
    ctx: &Ctx,
    t: &TopologyCfg,
    sim: &mut Sim,
    info: &mut BuildInfo,
) -> Result<(), ScenarioError> {
    let d = LinkDefaults {
        rate: t.link_rate.map(|r| r.0),
        delay: t.link_delay.map(|d| d.0).unwrap_or(SimTime::ZERO),
        sw_buf: t.switch_buffer.0,
        nic_buf: t.nic_buffer.0,
    };
    info.switch_buffer_bytes = d.sw_buf;
    check_kind_keys(ctx, t)?;
    match t.kind {
        TopoKind::Star => build_star(ctx, t, &d, sim, info)?,
        TopoKind::Dumbbell => build_dumbbell(ctx, t, &d, sim, info)?,
        TopoKind::Explicit => build_explicit(ctx, t, &d, sim, info)?,
        TopoKind::Leafspine => leafspine::build(ctx, t, sim, info)?,
        TopoKind::Fattree => fattree::build(ctx, t, &d, sim, info)?,
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

fn build_star(
    ctx: &Ctx,
    t: &TopologyCfg,
    d: &LinkDefaults,
    sim: &mut Sim,
    info: &mut BuildInfo,
) -> Result<(), ScenarioError> {
    let LinkDefaults {
        rate,
        delay,
        sw_buf,
        nic_buf,
    } = *d;
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

fn build_dumbbell(
    ctx: &Ctx,
    t: &TopologyCfg,
    d: &LinkDefaults,
    sim: &mut Sim,
    info: &mut BuildInfo,
) -> Result<(), ScenarioError> {
    let LinkDefaults {
        rate,
        delay,
        sw_buf,
        nic_buf,
    } = *d;
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

fn build_explicit(
    ctx: &Ctx,
    t: &TopologyCfg,
    d: &LinkDefaults,
    sim: &mut Sim,
    info: &mut BuildInfo,
) -> Result<(), ScenarioError> {
    let LinkDefaults {
        rate,
        delay,
        sw_buf,
        nic_buf,
    } = *d;
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

/// `[topology] aqm` on every switch port, then the `[[topology.aqm_ports]]` overrides.
fn apply_aqm(ctx: &Ctx, t: &TopologyCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    if let Some(a) = &t.aqm {
        if a.port.is_some() {
            return Err(ctx.err(
                "topology.aqm",
                "port",
                "`port` belongs in [[topology.aqm_ports]] entries",
            ));
        }
        for pid in (0..sim.net.ports.len() as u32).map(PortId) {
            let node = sim.net.ports[pid.idx()].node;
            if sim.net.nodes[node.idx()].kind == NodeKind::Switch {
                let (aqm, at) = aqm_from_cfg(ctx, "topology.aqm", a, sim, pid)?;
                let p = &mut sim.net.ports[pid.idx()];
                p.aqm = aqm;
                p.aqm_at = at;
            }
        }
    }
    for (i, a) in t.aqm_ports.iter().enumerate() {
        let name = a.port.as_deref().ok_or_else(|| {
            ctx.err(
                "topology.aqm_ports",
                "port",
                format!("entry {i} needs `port` (a port name \"A->B\")"),
            )
        })?;
        let pid = sim.port_by_name(name).ok_or_else(|| {
            ctx.err(
                "topology.aqm_ports",
                "port",
                format!("entry {i}: unknown port {name:?}: ports are named \"A->B\""),
            )
        })?;
        let (aqm, at) = aqm_from_cfg(ctx, "topology.aqm_ports", a, sim, pid)?;
        let p = &mut sim.net.ports[pid.idx()];
        p.aqm = aqm;
        p.aqm_at = at;
    }

    Ok(())
}

/// Every `[[apps]]` entry, in order; apps are numbered in `sim.apps` order (a bulk app with
/// `count` adds several).
fn build_apps(ctx: &Ctx, s: &Scenario, sim: &mut Sim) -> Result<(), ScenarioError> {
    let base_tcp = tcp_config(ctx, "tcp", &s.tcp)?;
    if s.apps.is_empty() {
        return Err(ctx.err(
            "",
            "apps",
            "the scenario has no [[apps]]: nothing would be simulated",
        ));
    }
    for (ai, a) in s.apps.iter().enumerate() {
        let tcp = std::sync::Arc::new(match a.tcp() {
            Some(t) => tcp_config(ctx, "apps.tcp", &t.over(&s.tcp))?,
            None => base_tcp.clone(),
        });
        apps::build_app(&apps::AppArgs { ctx, ai, tcp: &tcp }, a, sim)?;
    }
    Ok(())
}

/// `[measure]`: silent-period tracker, samplers, the queue-length meter, traced flows.
fn build_measure(
    ctx: &Ctx,
    m: &MeasureCfg,
    sim: &mut Sim,
    info: &mut BuildInfo,
) -> Result<(), ScenarioError> {
    let port = |sim: &Sim, name: &str, key: &str| -> Result<PortId, ScenarioError> {
        sim.port_by_name(name).ok_or_else(|| {
            let names: Vec<String> = (0..sim.net.ports.len().min(4))
                .map(|i| sim.net.port_name(PortId(i as u32)))
                .collect();
            ctx.err(
                "measure",
                key,
                format!("unknown port {name:?}: ports are named \"A->B\", e.g. {names:?}"),
            )
        })
    };
    if let Some(name) = &m.silent_link {
        let pid = port(sim, name, "silent_link")?;
        sim.net.ports[pid.idx()].silent = Some(Box::new(crate::engine::net::SilentTracker {
            threshold: m.silent_threshold.0,
            ..Default::default()
        }));
    }
    if let Some(name) = &m.bottleneck {
        info.bottleneck_port = Some(port(sim, name, "bottleneck")?);
    }
    for name in &m.queue_ports {
        let pid = port(sim, name, "queue_ports")?;
        sim.obs.samplers.queue_ports.push(pid);
    }
    ctx.interval("queue_interval", m.queue_interval.0)?;
    ctx.interval("cwnd_interval", m.cwnd_interval.0)?;
    ctx.interval("rp_interval", m.rp_interval.0)?;
    for (key, d) in [
        ("throughput_interval", m.throughput_interval),
        ("flow_rate_interval", m.flow_rate_interval),
    ] {
        if let Some(d) = d {
            ctx.interval(key, d.0)?;
        }
    }
    sim.obs.samplers.queue_interval = m.queue_interval.0;
    if let Some(name) = &m.mean_queue_port {
        let pid = port(sim, name, "mean_queue_port")?;
        sim.obs.queue_mean = Some(Box::new(
            crate::engine::observe::queue_mean::QueueMean::new(pid),
        ));
    }
    for &f in &m.cwnd_flows {
        if f as usize >= sim.hosts.flows.len() {
            return Err(ctx.err(
                "measure",
                "cwnd_flows",
                format!(
                    "flow {f} does not exist (the scenario has {} flows)",
                    sim.hosts.flows.len()
                ),
            ));
        }
        sim.obs.samplers.cwnd_flows.push(FlowId(f));
    }
    sim.obs.samplers.cwnd_interval = m.cwnd_interval.0;
    for &f in &m.seq_flows {
        if f as usize >= sim.hosts.flows.len() {
            return Err(ctx.err(
                "measure",
                "seq_flows",
                format!(
                    "flow {f} does not exist (the scenario has {} flows)",
                    sim.hosts.flows.len()
                ),
            ));
        }
        sim.obs.samplers.seq.enable(FlowId(f));
    }
    if let Some(d) = m.throughput_interval {
        sim.obs.samplers.tput_interval = d.0;
    }
    let cap = m.pcap_max_bytes.0 .0;
    if cap < (crate::engine::observe::pcap::FILE_HEADER_BYTES as u64) {
        return Err(ctx.err("measure", "pcap_max_bytes", "must be at least 24 bytes"));
    }
    for name in &m.pcap {
        let pid = port(sim, name, "pcap")?;
        let p = &mut sim.net.ports[pid.idx()];
        if p.pcap.is_some() {
            return Err(ctx.err("measure", "pcap", format!("port {name:?} is named twice")));
        }
        p.pcap = Some(Box::new(crate::engine::observe::pcap::PortCapture::new(
            p.node,
            p.peer_node,
            cap,
        )));
    }
    if m.fairness_after.is_some() && m.throughput_interval.is_none() {
        return Err(ctx.err(
            "measure",
            "fairness_after",
            "needs measure.throughput_interval",
        ));
    }
    Ok(())
}

/// Layer 2 (QCN, PAUSE/PFC, rate changes) and the combinations not supported yet.
fn build_l2(ctx: &Ctx, s: &Scenario, sim: &mut Sim) -> Result<(), ScenarioError> {
    let (t, m) = (&s.topology, &s.measure);
    let l2_args = crate::scenario::l2::BuildArgs {
        cp: t.qcn.as_ref(),
        pause: t.pause.as_ref(),
        rate_changes: &t.rate_changes,
        qcn: s.qcn.as_ref(),
        rp_interval: m.rp_interval.0,
        keep_rp_series: m.rp_series,
        flow_rate_interval: m.flow_rate_interval.map(|d| d.0),
    };
    crate::scenario::l2::build(sim, &l2_args, &|table: &str, key: &str, msg: String| {
        ctx.err(table, key, msg)
    })?;
    // The layer-2 hooks (CP sampling, PAUSE input accounting) read the single-FIFO queue; they
    // are not wired into multi-queue ports yet (PFC would need it), so refuse the mix.
    // Likewise the layer-2 forwarding path resolves single next hops, not ECMP groups.
    if sim.l2.is_some() && !sim.net.ecmp.groups.is_empty() {
        let key = if t.pause.is_some() { "pause" } else { "qcn" };
        return Err(ctx.err(
            "topology",
            key,
            "QCN/PAUSE together with ECMP (topology.ecmp) is not supported yet",
        ));
    }
    // PAUSE and PFC work on multi-queue ports (`engine/datapath/l2/pfc.rs`); the QCN congestion point is
    // still wired to the single FIFO only.
    let cp_on = sim
        .l2
        .as_ref()
        .is_some_and(|l| l.cp.iter().any(|c| c.is_some()));
    if cp_on && sim.net.ports.iter().any(|p| p.mq.is_some()) {
        return Err(ctx.err(
            "topology",
            "qcn",
            "QCN on switches with multi-queue ports (topology.queues) is not supported yet",
        ));
    }
    Ok(())
}

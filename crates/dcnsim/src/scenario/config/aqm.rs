//! `[topology] aqm` (also `aqm_ports` entries and `queues.port_marking`), a multi-queue
//! port's `marking`, and `MarkDefaults`, the constant defaults of both.
//!
//! `AqmCfg` and `MarkCfg` share the step/RED keys: `AqmCfg` lists them after `kind` and its
//! own `port`, `MarkCfg` after `kind` and before its own keys (the order serde lists them in
//! its "expected one of" errors and `json_schema` in the schema). Not one struct: serde's
//! `flatten` does not work with `deny_unknown_fields`, and one struct with every key would
//! let `aqm` accept the TCN/CoDel keys. `aqm_tables!` declares both with the shared keys
//! written once and writes `MarkCfg::aqm` from them.

use super::units::{Dur, Rate, Size, Threshold};
use crate::base::units::{Bytes, RateBps};
use crate::model::aqm::QueueUnit;
use serde::Deserialize;

/// Declares `AqmCfg` and `MarkCfg` with the keys they share written once (after `kind`
/// and `AqmCfg`'s own `port`, before `MarkCfg`'s own keys), and writes `MarkCfg::aqm` from
/// them.
macro_rules! aqm_tables {
    (
        shared { $($(#[$sm:meta])* pub $s:ident: $st:ty,)* }
        $(#[$am:meta])* pub struct AqmCfg { $($(#[$afm:meta])* pub $af:ident: $aft:ty,)* }
        $(#[$mm:meta])* pub struct MarkCfg { $($(#[$mfm:meta])* pub $mf:ident: $mft:ty,)* }
    ) => {
        $(#[$am])*
        pub struct AqmCfg {
            pub kind: String,
            $($(#[$afm])* pub $af: $aft,)*
            $($(#[$sm])* pub $s: $st,)*
        }

        $(#[$mm])*
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
    shared {
        /// "enqueue" or "dequeue".
        pub at: Option<String>,
        /// step: marking threshold K.
        pub k: Option<Threshold>,
        /// red (this key to `mean_pkt_size`).
        pub min_th: Option<Threshold>,
        pub max_th: Option<Threshold>,
        pub max_p: Option<f64>,
        pub w_q: Option<f64>,
        pub gentle: Option<bool>,
        pub wait: Option<bool>,
        /// false: mark each packet independently with p_b (DCQCN's congestion point).
        pub count: Option<bool>,
        /// "average" or "instantaneous".
        pub queue: Option<String>,
        pub mean_pkt_size: Option<Size>,
        /// step and red: the thresholds (`k`, `min_th`, `max_th`) are for a port of this
        /// rate; a port of another rate scales them in proportion (as the HPCC authors'
        /// simulator sets its ECN thresholds per link rate). Absent: as given, every port.
        pub per_rate: Option<Rate>,
    }

    /// `[topology] aqm = { kind = "step" | "red" | "none", ... }` (also `aqm_ports` entries
    /// and `queues.port_marking`). One table holds the keys of several kinds and a key of
    /// another kind is an error, so every key is an `Option`; absence means the value in
    /// `MarkDefaults` (for `k`, `MarkDefaults::k` of the port's rate).
    #[derive(Deserialize, Debug, Clone, Default, PartialEq)]
    #[serde(deny_unknown_fields)]
    pub struct AqmCfg {
        /// Only in `aqm_ports`: the port ("A->B") this entry applies to.
        pub port: Option<String>,
    }

    /// `marking = { kind = ..., ... }` of a multi-queue port (`scenario/build/mq.rs`): "step"
    /// and "red" take the keys of `[topology] aqm`, per queue. As in `AqmCfg`, absence means
    /// the value in `MarkDefaults`; prob_tcn's `t_min` and `t_max` are required.
    #[derive(Deserialize, Debug, Clone, Default, PartialEq)]
    #[serde(deny_unknown_fields)]
    pub struct MarkCfg {
        /// tcn / prob_tcn.
        pub threshold: Option<Dur>,
        pub t_min: Option<Dur>,
        pub t_max: Option<Dur>,
        pub p_max: Option<f64>,
        /// codel.
        pub target: Option<Dur>,
        pub interval: Option<Dur>,
        pub ecn: Option<bool>,
        /// mqecn.
        pub port_thresh: Option<f64>,
        pub beta: Option<f64>,
        /// dqrate (ideal RED) and the estimators.
        pub dq_thresh: Option<Size>,
        pub epsilon: Option<f64>,
        pub rtt: Option<Dur>,
        pub lambda: Option<f64>,
        /// The class queues that mark (absent: all); a per-queue marker only, e.g. ECN on
        /// the RDMA data queue and none on the control queue, as switches are set up for
        /// DCQCN.
        pub on_queues: Option<Vec<usize>>,
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
    pub count: bool,
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
            // DCTCP paper / docs/models.md §3.1: mark on arrival.
            at: "enqueue".to_string(),
            // RED: ns-3 RedQueueDisc (MinTh 5, MaxTh 15 packets, LInterm 50 → max_p 0.02,
            // QW 0.002, Gentle, Wait, MeanPktSize 500 B); docs/models.md §5.4.
            min_th: Threshold(5, QueueUnit::Packets),
            max_th: Threshold(15, QueueUnit::Packets),
            max_p: 0.02,
            w_q: 0.002,
            gentle: true,
            wait: true,
            // Floyd-Jacobson's count mechanism (ns-3 RedQueueDisc has no other mode).
            count: true,
            // Floyd-Jacobson RED compares the averaged queue with the thresholds.
            queue: "average".to_string(),
            mean_pkt_size: Size(Bytes(500)),
            // `tcn::DEFAULT_T`: 78 µs, Bai et al. 2016 (DCTCP at 10 Gb/s).
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
            // `dqrate::DEFAULT_*`: Bai et al. 2016 §3.3 (10 KB, ε 0.875, 100 µs, λ 1).
            dq_thresh: Size(Bytes(dqrate::DEFAULT_DQ_THRESH)),
            epsilon: dqrate::DEFAULT_EPSILON,
            rtt: Dur(dqrate::DEFAULT_RTT),
            lambda: dqrate::DEFAULT_LAMBDA,
        }
    }
}

impl MarkDefaults {
    /// step's marking threshold K where `k` is absent, by the port's rate: DCTCP paper §3.5
    /// (docs/models.md §3.1): K = 20 packets at 1 Gb/s, 65 at 10 Gb/s (65 from 10 Gb/s up, 20
    /// below). Not a field: it depends on the port, and the fields are constants (the schema
    /// test reads them as `key = value`).
    pub fn k(rate: RateBps) -> Threshold {
        if rate.0 >= 10_000_000_000 {
            Threshold(65, QueueUnit::Packets)
        } else {
            Threshold(20, QueueUnit::Packets)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key `AqmCfg` and `MarkCfg` share reaches `MarkCfg::aqm`: with each of them
    /// set, the `AqmCfg` it gives leaves only `port` (not a `MarkCfg` key) unset.
    #[test]
    fn aqm_carries_every_shared_key() {
        let th = Some(Threshold(1, QueueUnit::Packets));
        let m = MarkCfg {
            kind: "step".to_string(),
            at: Some("dequeue".to_string()),
            k: th,
            min_th: th,
            max_th: th,
            max_p: Some(0.5),
            w_q: Some(0.5),
            gentle: Some(false),
            wait: Some(false),
            count: Some(false),
            queue: Some("instantaneous".to_string()),
            mean_pkt_size: Some(Size(Bytes(1))),
            per_rate: Some(Rate(RateBps(1_000_000))),
            ..MarkCfg::default()
        };
        let a = m.aqm();
        let debug = format!("{a:#?}");
        let unset: Vec<&str> = debug.lines().filter(|l| l.contains(": None")).collect();
        assert_eq!(unset, ["    port: None,"], "{debug}");
        assert_eq!(a.kind, "step");
        assert_eq!(a.mean_pkt_size, Some(Size(Bytes(1))));
    }

    /// `MarkDefaults::k`: 65 packets from 10 Gb/s up, 20 below.
    #[test]
    fn k_default_follows_the_port_rate() {
        let pkts = |n| Threshold(n, QueueUnit::Packets);
        assert_eq!(MarkDefaults::k(RateBps(10_000_000_000)), pkts(65));
        assert_eq!(MarkDefaults::k(RateBps(40_000_000_000)), pkts(65));
        assert_eq!(MarkDefaults::k(RateBps(9_999_999_999)), pkts(20));
        assert_eq!(MarkDefaults::k(RateBps(1_000_000_000)), pkts(20));
    }
}

//! Keys of multi-queue ports (`[topology] queues = {...}` and `[[topology.queue_ports]]`);
//! their builder is `scenario/build/mq.rs`.

use super::aqm::{AqmCfg, MarkCfg};
use super::units::Size;
use crate::base::units::Bytes;
use crate::model::mq::sched::{DEFAULT_DRR_BLIMIT, DEFAULT_SFQ_MAXQUEUE};
use serde::Deserialize;

/// `queues = { ... }` and each `[[topology.queue_ports]]` entry: absent keys come from the
/// `Default` impl; a key whose fallback depends on `scheduler`, on the queue count or on
/// the port is an `Option`, and says what absence means.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct QueuesCfg {
    /// Only in `queue_ports`: the port ("A->B").
    pub port: Option<String>,
    /// Absent: 8, or the ns-2 bucket count for "drr" (10) and "sfq" (16).
    pub count: Option<u32>,
    pub scheduler: String,
    /// sp_*: queues 0..strict are strict priority.
    pub strict: u32,
    /// Absent: 1500 B, or 250 B for "drr".
    pub quantum: Option<Size>,
    /// One per round-robin queue; absent: `quantum` each.
    pub quanta: Option<Vec<u32>>,
    /// One per weighted queue; absent: 1 each.
    pub weights: Option<Vec<f64>>,
    /// "shared" | "static" | "dynamic".
    pub buffer: String,
    /// shared: port limit (absent: the port's `switch_buffer`, or 300 KB if that is
    /// unlimited); static: limit of every queue (absent: `limits` is required).
    pub limit: Option<Size>,
    pub limits: Option<Vec<Size>>,
    /// dynamic: DT α and the switch-wide pool (`pool` required).
    pub alpha: f64,
    pub pool: Option<Size>,
    /// drr / sfq.
    pub blimit: Size,
    pub drr_key: String,
    pub maxqueue: u32,
    /// sfq: hard per-flow limit maxqueue/n (absent: ns-2's limit).
    pub sfq_partition_flows: Option<u32>,
    /// Absent: no marking.
    pub marking: Option<MarkCfg>,
    /// Per-port AQM on the port's total backlog (the keys of `[topology] aqm`); overrides
    /// `[topology] aqm` for this port. Lets one sweep value switch per-port / per-queue.
    pub port_marking: Option<AqmCfg>,
    /// Attach Algorithm-1 estimators to every queue and record their samples.
    pub record_estimates: bool,
    /// Only in `[topology] queues`: give every host NIC the same configuration (absent:
    /// false; an `Option` because a `queue_ports` entry refuses it). ns-2's `duplex-link`
    /// puts one queue of the link's type at *both* ends, so the TCN paper's simulations mark
    /// and limit at the sender's NIC too; without it a DCTCP sender whose NIC is its
    /// bottleneck sees no marks and its window grows without bound.
    pub hosts: Option<bool>,
}

impl Default for QueuesCfg {
    fn default() -> Self {
        QueuesCfg {
            port: None,
            count: None,
            // TCN simulations: DWRR over the service queues (docs/models.md §5.6).
            scheduler: "dwrr".to_string(),
            // TCN-NS2 PrioDwrr / PrioWfq: 1 SP queue above the round robin (docs/models.md §5.6).
            strict: 1,
            quantum: None,
            quanta: None,
            weights: None,
            // TCN simulations: one buffer shared by the port's queues (docs/models.md §5.7).
            buffer: "shared".to_string(),
            limit: None,
            limits: None,
            // `DEFAULT_DT_ALPHA`: α = 1 (docs/models.md §5.7).
            alpha: crate::model::mq::buffer::DEFAULT_DT_ALPHA,
            pool: None,
            // `DEFAULT_DRR_BLIMIT`: ns-2 ns-default.tcl `Queue/DRR set blimit_ 25000`.
            blimit: Size(Bytes(DEFAULT_DRR_BLIMIT)),
            // ns-2 Queue/DRR hashes flows by source address (docs/models.md §5.6).
            drr_key: "src".to_string(),
            // `DEFAULT_SFQ_MAXQUEUE`: ns-2 `maxqueue_` = 40 (docs/models.md §5.6).
            maxqueue: DEFAULT_SFQ_MAXQUEUE,
            sfq_partition_flows: None,
            marking: None,
            port_marking: None,
            // The estimates table is large; off unless asked for.
            record_estimates: false,
            hosts: None,
        }
    }
}

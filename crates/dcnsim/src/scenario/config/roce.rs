//! `[roce]`: the RoCEv2 queue pairs of the apps whose `transport = "roce"` (`model/roce`,
//! docs/models.md §11–12); the builder is `scenario/build/roce.rs`.

use super::units::{Dur, Size};
use crate::base::units::{Bytes, SimTime};
use crate::model::roce::qp::RoceConfig;
use serde::Deserialize;

/// `[roce]` (module doc). Defaults come from `RoceConfig::default()`, whose sources are in
/// `model/roce/qp.rs`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RoceCfg {
    /// Payload bytes per packet.
    pub mtu: Size,
    /// An ACK every this many in-order packets (and on a message's last).
    pub ack_every: u32,
    /// "go-back-n" (RoCE's) or "selective-repeat" (IRN's).
    pub recovery: String,
    /// Cap on the bytes in flight: absent or "none" none, "bdp" (the path's base RTT at the
    /// NIC's rate, as the HPCC authors' simulator sets its window), "rate-bdp" (that window
    /// scaled by the limiter's rate over the NIC's, the simulator's VAR_WIN) or a size.
    pub window: Option<String>,
    /// Go-back-N's retransmission timeout.
    pub rto: Dur,
    /// "dcqcn" (the DCQCN paper's constants), "dcqcn-fork" (the HPCC authors' simulator's
    /// DCQCN), "timely" (the TIMELY paper's), "timely-fork" (the HPCC authors' simulator's
    /// TIMELY), "swift" (the Swift paper's algorithm), "hpcc" (the HPCC paper's), "hpcc-fork"
    /// (the HPCC authors' simulator's; both with INT), "dctcp-fork" (DCTCP's control law as
    /// the HPCC authors' simulator runs it on the NIC) or "none" (every queue pair at line
    /// rate). docs/models.md §11, §13, §14, §15, §16.
    pub cc: String,
    /// Swift's hop count (the paper reads it from the TTL): absent, the switches on each
    /// queue pair's path (a workload's: the most from its first host); or a number for all.
    pub hops: Option<u32>,
    /// HPCC's target utilisation η (`hpcc` and `hpcc-fork` only; absent: the profile's
    /// 0.95). The HPCC authors' published results page reran their simulations at 0.99.
    pub eta: Option<f64>,
    /// The receiver's congestion notification: absent: the controller's ("dcqcn" and
    /// "none": at most one CNP per flow per 50 µs; every "-fork" profile, as the HPCC
    /// authors' simulator: "per-ack"), "per-ack" (the
    /// ACK echoes CE) or a duration (at most one CNP per flow per that time).
    pub cnp: Option<String>,
    /// Traffic class of the data packets and of ACKs, NACKs and CNPs.
    pub data_class: u8,
    pub ctrl_class: u8,
}

impl Default for RoceCfg {
    fn default() -> Self {
        let q = RoceConfig::default();
        RoceCfg {
            mtu: Size(Bytes(q.mtu as u64)),
            ack_every: q.ack_every,
            // RoCE's own recovery (`RoceConfig::default`).
            recovery: "go-back-n".to_string(),
            window: None,
            rto: Dur(q.rto),
            // DCQCN as its paper gives it: the congestion control RoCE NICs ship.
            cc: "dcqcn".to_string(),
            hops: None,
            eta: None,
            cnp: None,
            data_class: q.data_class,
            ctrl_class: q.ctrl_class,
        }
    }
}

impl RoceCfg {
    /// The 50 µs CNP interval of the DCQCN paper (`DcqcnConfig::paper`).
    pub const CNP_INTERVAL: SimTime = SimTime::from_us(50);
}

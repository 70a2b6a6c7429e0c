//! `[measure]`.

use super::units::{Dur, Size};
use crate::base::units::{Bytes, SimTime};
use serde::Deserialize;

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
    /// absent: off. The ODCTCP thesis §6.2 samples every 50 ms.
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
    /// Devkota 2010 Fig. 20 states "mean queue < 1 packet".
    pub mean_queue_port: Option<String>,
    /// Ports "A->B" whose transmitted frames are captured as libpcap files
    /// (`engine/observe/pcap.rs`; written by Python as `pcap/<port>.pcap`).
    #[serde(default)]
    pub pcap: Vec<String>,
    /// Memory cap of one port's capture; past it the capture stops and counts the frames
    /// it missed (table `pcap`, column `not_captured`).
    pub pcap_max_bytes: Size,
    /// Where a transfer's completion time ends: "delivery" (the last byte delivered to the
    /// receiver) or "last-ack" (the sender's receipt of the ACK of the last byte, with the
    /// slowdown's ideal of the HPCC authors' simulator; RoCE apps only). docs/models.md §9.
    pub fct: String,
}

impl Default for MeasureCfg {
    fn default() -> Self {
        MeasureCfg {
            silent_link: None,
            // Devkota 2010 ch. I.4 counts "periods with no traffic", not short gaps: 100 ms
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
            // 1 ms: our choice (Devkota 2010 does not state how its minimum rate was sampled).
            rp_interval: Dur(SimTime::from_ms(1)),
            // The series is large; off unless asked for.
            rp_series: false,
            flow_rate_interval: None,
            mean_queue_port: None,
            pcap: Vec::new(),
            // 64 MiB: our choice, a few hundred thousand header-only frames per port.
            pcap_max_bytes: Size(Bytes(crate::engine::observe::pcap::DEFAULT_MAX_BYTES)),
            // Every dcnsim transport's completion is its receiver's.
            fct: "delivery".to_string(),
        }
    }
}

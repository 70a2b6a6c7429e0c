//! Scenario construction of `kind = "workload"` apps (`engine/apps/workload.rs`).
//!
//! Keys (defaults and their sources):
//! - `workload`: built-in size CDF (`workload::BUILTIN_NAMES`; default "websearch", the TCN
//!   testbed's web-search sizes) or `cdf_file` (a user CDF file, `workload::parse_cdf_text`
//!   format, values in units of `cdf_unit` bytes, default 1; relative paths are relative to
//!   the scenario file).
//! - `service_workloads`: one size CDF name per service (default: `workload` for all);
//!   `service_classes`: the queue (Packet.class) of each service (default [`class` or 0]).
//! - `load` (required): offered load of the edge links, 0 < load ≤ 1.5.
//! - `mean_bytes`: the mean in λ = load·C/(8·mean) (default: the services' exact mean).
//! - `pattern`: "client-server" (default; `client`, default "client", and `servers`,
//!   default all other hosts) or "all-to-all" (`srcs`, default all hosts).
//! - `connections`: persistent connections per pair (default 5 for client-server, the TCN
//!   testbed's "5 persistent connections to each server"; 1 for all-to-all).
//! - `service_by`: "message" (default: each message draws its service uniformly; λ uses the
//!   mix's mean) or "pair" (all-to-all only: a fixed service per ordered host pair and a
//!   Poisson process per pair at load·C/(8·mean of its service)/(N − 1), as the TCN
//!   authors' leaf-spine ns-2 script `spine_empirical_pias_diffserv.tcl` does).
//! - `pias_threshold`: two-priority PIAS threshold (absent: off; TCN uses 100 KB).
//! - `count`: messages generated before stopping (default 1000); `start` (default 0).
//! - `flows_file`: replay the flows of a file (`model/flow_file.rs`: the HPCC simulator's
//!   `flow.txt` form) instead of Poisson arrivals: all-to-all only, without `load`; `src` and
//!   `dst` index the hosts, each flow's `pg` picks the service with that class, every flow
//!   starts at `start` + its time, and the run ends when all have finished.
//! - `incast = { senders, bytes, load }`: incast events on top (all-to-all, not with a flow
//!   file): `senders` hosts each send `bytes` to one receiver, events Poisson at the rate
//!   that makes them `load` of the hosts' edge capacity, λ = load·ΣC/(8·senders·bytes).
//!
//! The builder is in `scenario/build/workload.rs`.

use super::tcp::TcpCfgFile;
use super::units::{Dur, Size};
use crate::base::units::{Bytes, SimTime};
use crate::engine::apps::workload::Pattern;
use serde::Deserialize;

/// `kind = "workload"` (module doc).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadCfg {
    /// Offered load of the edge links (required).
    pub load: Option<f64>,
    pub workload: String,
    /// A user CDF file instead of `workload`.
    pub cdf_file: Option<String>,
    pub cdf_unit: Size,
    /// Absent: the exact mean of the service mix.
    pub mean_bytes: Option<f64>,
    pub pattern: String,
    pub client: String,
    /// Absent: every host but the client.
    pub servers: Option<Vec<String>>,
    /// all-to-all hosts (absent: every host).
    pub srcs: Option<Vec<String>>,
    /// Absent: 5 for client-server, 1 for all-to-all (`default_connections`).
    pub connections: Option<u32>,
    /// Absent: [`class`].
    pub service_classes: Option<Vec<u8>>,
    /// Absent: `workload` for every service.
    pub service_workloads: Option<Vec<String>>,
    /// "message" | "pair" (module doc).
    pub service_by: String,
    /// Absent: PIAS off.
    pub pias_threshold: Option<Size>,
    pub count: u32,
    /// Flows to replay instead of Poisson arrivals (module doc).
    pub flows_file: Option<String>,
    /// Incast events on top of the arrivals (module doc).
    pub incast: Option<IncastCfg>,
    pub start: Dur,
    pub class: u8,
    /// "tcp" (default) or "roce" (RoCEv2 queue pairs of `[roce]`).
    pub transport: String,
    pub tcp: Option<TcpCfgFile>,
}

impl Default for WorkloadCfg {
    fn default() -> Self {
        WorkloadCfg {
            load: None,
            // The TCN testbed's web-search flow sizes (Bai et al. 2016 §6.1).
            workload: "websearch".to_string(),
            cdf_file: None,
            // CDF files give bytes unless told otherwise.
            cdf_unit: Size(Bytes(1)),
            mean_bytes: None,
            // The TCN testbed: one client fetching from every server.
            pattern: "client-server".to_string(),
            // The receiving host of the star topology.
            client: "client".to_string(),
            servers: None,
            srcs: None,
            connections: None,
            service_classes: None,
            service_workloads: None,
            // dcnsim's original mix: a service per message, equally likely.
            service_by: "message".to_string(),
            pias_threshold: None,
            // Enough messages for FCT percentiles on a short run; the run ends when all finish.
            count: 1000,
            flows_file: None,
            incast: None,
            start: Dur(SimTime::ZERO),
            // Class 0: the first queue of a multi-queue port, the only one of a FIFO.
            class: 0,
            // TCP, the transport of the TCN paper's workloads.
            transport: "tcp".to_string(),
            tcp: None,
        }
    }
}

/// `incast = { senders, bytes, load }` of a workload (module doc); every key required.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IncastCfg {
    pub senders: u32,
    pub bytes: Size,
    pub load: f64,
}

/// Persistent connections per pair when `connections` is absent: the TCN testbed's "5
/// persistent connections to each server" for client-server, one per pair for all-to-all.
pub(crate) fn default_connections(p: &Pattern) -> u32 {
    match p {
        Pattern::ClientServer { .. } => 5,
        Pattern::AllToAll { .. } => 1,
    }
}

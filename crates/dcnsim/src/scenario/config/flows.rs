//! Scenario construction of the scheduled-transfer apps (`engine/apps/schedule.rs`):
//!
//! - `kind = "flows"`: `count` flows (default one per entry of `srcs`), flow i from
//!   `srcs[i % len]` to `dst`, each `size` bytes ("unlimited" for long flows) from
//!   `start + i·stagger`, optionally written `chunk` bytes at a time with `pause` between
//!   chunks (the ODCTCP thesis Fig 4.4: 200 KB then 1 s idle).
//! - `kind = "mix"`: `count` flows, each between a random host of `srcs` and a random
//!   different host of `dsts`, size drawn from `size_cdf` ([[bytes, cdf], ...]) and start
//!   times separated by gaps drawn from `interarrival_cdf` ([[seconds, cdf], ...]), both
//!   piecewise-linear `workload::EmpiricalCdf` tables (the ODCTCP thesis §6.1.2 benchmark).
//!
//! All random draws come from one stream per app derived from the scenario seed.
//!
//! The keys of both kinds; their builders are in `scenario/build/flows.rs`.

use super::tcp::TcpCfgFile;
use super::units::{Dur, Size, SizeOrUnlimited};
use crate::base::units::SimTime;
use serde::Deserialize;

/// `kind = "flows"` (module doc).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct FlowsCfg {
    /// Sending hosts; flow i uses srcs[i % len] (`src` = one host; one of them is required).
    pub srcs: Option<Vec<String>>,
    pub src: Option<String>,
    /// Required.
    pub dst: Option<String>,
    /// Absent: one flow per entry of `srcs` (or `count_like`).
    pub count: Option<u32>,
    /// Take `count` from the earlier "flows" app with this index, so that one sweep axis
    /// sizes two groups of flows (e.g. ODCTCP vs standard ECN, the ODCTCP thesis Fig 7.15).
    pub count_like: Option<u32>,
    pub size: SizeOrUnlimited,
    pub start: Dur,
    /// Time between the starts of consecutive flows.
    pub stagger: Dur,
    /// Bytes per application write, then `pause` idle (absent: everything in one write).
    pub chunk: Option<Size>,
    pub pause: Dur,
    pub class: u8,
    /// "tcp" (default) or "roce" (RoCEv2 queue pairs configured by `[roce]`).
    pub transport: String,
    pub tcp: Option<TcpCfgFile>,
}

impl Default for FlowsCfg {
    fn default() -> Self {
        FlowsCfg {
            srcs: None,
            src: None,
            dst: None,
            count: None,
            count_like: None,
            // Long-lived flows: the ODCTCP thesis's fairness and queue experiments run them to the end.
            size: SizeOrUnlimited(u64::MAX),
            start: Dur(SimTime::ZERO),
            // All flows start together unless staggered (the ODCTCP thesis Fig 4.x start them at once).
            stagger: Dur(SimTime::ZERO),
            chunk: None,
            // No idle time between writes (only meaningful with `chunk`).
            pause: Dur(SimTime::ZERO),
            // Class 0: the first queue of a multi-queue port, the only one of a FIFO.
            class: 0,
            // TCP, the transport of every source document.
            transport: "tcp".to_string(),
            tcp: None,
        }
    }
}

/// `kind = "mix"` (module doc).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct MixCfg {
    /// Sending hosts (`src` = one host; one of them is required).
    pub srcs: Option<Vec<String>>,
    pub src: Option<String>,
    /// Receiving hosts (`dst` = one host; one of them is required).
    pub dsts: Option<Vec<String>>,
    pub dst: Option<String>,
    /// Number of flows (required).
    pub count: Option<u32>,
    /// Flow size CDF, [[bytes, cdf], ...] (required).
    pub size_cdf: Option<Vec<(f64, f64)>>,
    /// Inter-arrival time CDF, [[seconds, cdf], ...] (required).
    pub interarrival_cdf: Option<Vec<(f64, f64)>>,
    pub start: Dur,
    /// As for "flows" (absent: everything in one write).
    pub chunk: Option<Size>,
    pub pause: Dur,
    pub class: u8,
    /// "tcp" (default) or "roce" (RoCEv2 queue pairs configured by `[roce]`).
    pub transport: String,
    pub tcp: Option<TcpCfgFile>,
}

impl Default for MixCfg {
    fn default() -> Self {
        MixCfg {
            srcs: None,
            src: None,
            dsts: None,
            dst: None,
            count: None,
            size_cdf: None,
            interarrival_cdf: None,
            start: Dur(SimTime::ZERO),
            chunk: None,
            // As for "flows".
            pause: Dur(SimTime::ZERO),
            class: 0,
            // TCP, the transport of every source document.
            transport: "tcp".to_string(),
            tcp: None,
        }
    }
}

//! `[[apps]]`: one configuration struct per app kind and the enum that `kind` selects
//! ("flows" and "mix" are in `flows.rs`, "workload" in `workload.rs`; their builders in
//! `scenario/build/`).
//!
//! Defaults: every struct takes absent keys from its `Default` impl (`#[serde(default)]`),
//! where each default has its source in a comment; the builders read the fields as they are.
//! A key that is required, or whose fallback depends on other keys or on the topology, is an
//! `Option` and its builder says what absence means. `schema.txt` lists the same defaults;
//! `tests::schema_defaults` parses the values written there and compares them with these
//! impls, so the two cannot drift apart unnoticed.

use super::tcp::TcpCfgFile;
use super::units::{Dur, Rate, Size, SizeOrUnlimited};
use crate::base::units::{Bytes, SimTime};
use serde::Deserialize;

pub use super::flows::{FlowsCfg, MixCfg};
pub use super::workload::WorkloadCfg;

/// One `[[apps]]` entry; `kind` picks the variant and only that kind's keys are accepted.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum AppCfg {
    Incast(IncastCfg),
    Bulk(BulkCfg),
    Cbr(CbrCfg),
    Flows(FlowsCfg),
    Mix(MixCfg),
    Ping(PingCfg),
    Transactions(TransactionsCfg),
    Workload(WorkloadCfg),
}

impl AppCfg {
    /// The `kind` string of the entry.
    pub fn kind(&self) -> &'static str {
        match self {
            AppCfg::Incast(_) => "incast",
            AppCfg::Bulk(_) => "bulk",
            AppCfg::Cbr(_) => "cbr",
            AppCfg::Flows(_) => "flows",
            AppCfg::Mix(_) => "mix",
            AppCfg::Ping(_) => "ping",
            AppCfg::Transactions(_) => "transactions",
            AppCfg::Workload(_) => "workload",
        }
    }

    /// Whether the entry's flows are RoCE queue pairs (`transport = "roce"`).
    pub fn is_roce(&self) -> bool {
        match self {
            AppCfg::Flows(a) => a.transport == "roce",
            AppCfg::Mix(a) => a.transport == "roce",
            AppCfg::Workload(a) => a.transport == "roce",
            _ => false,
        }
    }

    /// The entry's `[apps.tcp]` table (UDP kinds have none).
    pub fn tcp(&self) -> Option<&TcpCfgFile> {
        match self {
            AppCfg::Incast(a) => a.tcp.as_ref(),
            AppCfg::Bulk(a) => a.tcp.as_ref(),
            AppCfg::Flows(a) => a.tcp.as_ref(),
            AppCfg::Mix(a) => a.tcp.as_ref(),
            AppCfg::Transactions(a) => a.tcp.as_ref(),
            AppCfg::Workload(a) => a.tcp.as_ref(),
            AppCfg::Cbr(_) | AppCfg::Ping(_) => None,
        }
    }
}

/// `kind = "incast"` (`engine/apps`): the client asks every server for `sru` bytes and asks
/// again when all have answered (Devkota 2010's synchronized reads).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct IncastCfg {
    pub client: String,
    /// Absent: every host but the client and `topology.extra_hosts`.
    pub servers: Option<Vec<String>>,
    /// Server response unit, bytes per server per round (required).
    pub sru: Option<Size>,
    pub request_delay: Dur,
    pub response_jitter: Dur,
    /// Absent: no limit (rounds until the end of the run).
    pub max_rounds: Option<u64>,
    pub tcp: Option<TcpCfgFile>,
}

impl Default for IncastCfg {
    fn default() -> Self {
        IncastCfg {
            // The receiving host of the star topology (`build_star` names it "client").
            client: "client".to_string(),
            servers: None,
            sru: None,
            // The next request goes out at once and servers answer at once: Devkota 2010 gives no
            // delay (its request's ~50 µs trip is < 0.3 % of a round at n = 8), and the
            // synchronized answers are what make incast collapse.
            request_delay: Dur(SimTime::ZERO),
            response_jitter: Dur(SimTime::ZERO),
            max_rounds: None,
            tcp: None,
        }
    }
}

/// `kind = "bulk"`: `count` identical TCP flows from `src` to `dst`, each sending `size` bytes
/// from `start`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct BulkCfg {
    /// Required.
    pub src: Option<String>,
    /// Required.
    pub dst: Option<String>,
    pub size: SizeOrUnlimited,
    pub start: Dur,
    pub class: u8,
    pub count: u32,
    pub tcp: Option<TcpCfgFile>,
}

impl Default for BulkCfg {
    fn default() -> Self {
        BulkCfg {
            src: None,
            dst: None,
            // A long-lived flow (the TCN papers' background "bulk" traffic).
            size: SizeOrUnlimited(u64::MAX),
            start: Dur(SimTime::ZERO),
            // Class 0: the first queue of a multi-queue port, the only one of a FIFO.
            class: 0,
            // One flow per entry unless asked for more.
            count: 1,
            tcp: None,
        }
    }
}

/// `kind = "cbr"`: a UDP source sending `packet_size`-byte datagrams at `rate`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CbrCfg {
    /// Required.
    pub src: Option<String>,
    /// Required.
    pub dst: Option<String>,
    /// Required.
    pub rate: Option<Rate>,
    pub packet_size: Size,
    pub start: Dur,
    /// Absent: until the end of the run.
    pub stop: Option<Dur>,
    pub class: u8,
}

impl Default for CbrCfg {
    fn default() -> Self {
        CbrCfg {
            src: None,
            dst: None,
            rate: None,
            // A full Ethernet frame payload (1500 B MTU), as the Devkota 2010 UDP source.
            packet_size: Size(Bytes(1500)),
            start: Dur(SimTime::ZERO),
            stop: None,
            class: 0,
        }
    }
}

/// `kind = "ping"`: echo requests from `src` every `interval`; `dst` answers; the RTTs go to
/// table "pings".
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct PingCfg {
    /// Required.
    pub src: Option<String>,
    /// Required.
    pub dst: Option<String>,
    pub interval: Dur,
    pub packet_size: Size,
    pub start: Dur,
    /// Absent: until the end of the run.
    pub stop: Option<Dur>,
    pub class: u8,
}

impl Default for PingCfg {
    fn default() -> Self {
        PingCfg {
            src: None,
            dst: None,
            // Bai et al. 2016 (TCN Fig. 5) does not state the probe interval; 1 ms is our choice.
            interval: Dur(SimTime::from_ms(1)),
            // 64 B: the ICMP message of a default `ping` (56 data bytes + 8-byte header).
            packet_size: Size(Bytes(64)),
            start: Dur(SimTime::ZERO),
            stop: None,
            class: 0,
        }
    }
}

/// `kind = "transactions"`: messages of `size` bytes written to one persistent TCP connection
/// with exponential gaps of mean size·8/rate.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TransactionsCfg {
    /// Required.
    pub src: Option<String>,
    /// Required.
    pub dst: Option<String>,
    /// Message size (required, finite).
    pub size: Option<SizeOrUnlimited>,
    /// Offered load (required).
    pub rate: Option<Rate>,
    pub start: Dur,
    /// Absent: until the end of the run.
    pub stop: Option<Dur>,
    pub class: u8,
    pub tcp: Option<TcpCfgFile>,
}

impl Default for TransactionsCfg {
    fn default() -> Self {
        TransactionsCfg {
            src: None,
            dst: None,
            size: None,
            rate: None,
            start: Dur(SimTime::ZERO),
            stop: None,
            class: 0,
            tcp: None,
        }
    }
}

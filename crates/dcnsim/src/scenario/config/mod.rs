//! The scenario file's schema: one struct per table, read by serde. Each section's struct
//! is in its own file, with a `Default` impl (or `default = ...` functions) that holds every
//! constant default and cites its source; a key whose fallback depends on other keys, on the
//! topology or on the port is an `Option` and its file says what absence means.
//! `schema.txt` lists the same defaults and `tests::schema_defaults` checks them against
//! these impls; `json_schema` reads the key names and types off these structs.

pub mod apps;
pub mod aqm;
pub mod flows;
pub mod l2;
pub mod measure;
pub mod mq;
pub mod roce;
pub mod sim;
pub mod tcp;
pub mod topology;
pub mod units;
pub mod workload;

pub use apps::AppCfg;
pub use aqm::{AqmCfg, MarkCfg, MarkDefaults};
pub use measure::MeasureCfg;
pub use mq::QueuesCfg;
pub use sim::{Meta, SimCfg};
pub use tcp::TcpCfgFile;
pub use topology::{LinkCfg, NodeCfg, TopoKind, TopologyCfg};
pub use units::{Dur, Rate, Size, SizeOrUnlimited, Threshold};

use serde::Deserialize;

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
    pub qcn: Option<l2::QcnCfg>,
    /// The RoCEv2 queue pairs of `transport = "roce"` apps (`config/roce.rs`).
    #[serde(default)]
    pub roce: roce::RoceCfg,
    /// Python-side tables, accepted unread.
    pub sweep: Option<toml::Value>,
    pub quick: Option<toml::Value>,
    pub report: Option<toml::Value>,
}

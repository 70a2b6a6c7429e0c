//! `[tcp]` and `[apps.tcp]`.

use super::units::{Dur, SizeOrUnlimited};
use serde::Deserialize;

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
    pub dctcp_loss_after_ece: Option<String>,
    pub dctcp_grow_on_ece: Option<bool>,
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
        pick! {
            cc, mss, header, init_cwnd, init_ssthresh, min_rto, max_rto, initial_rto,
            rto_granularity, delayed_ack, delack_timeout, rwnd, handshake, dupack_threshold, sack,
            ecn, receiver, dctcp_g, dctcp_alpha_init, dctcp_recovery_mode,
            dctcp_reset_alpha_after_idle, dctcp_loss_after_ece, dctcp_grow_on_ece, idle_restart, abc_limit, profile, limited_transmit,
            rtt_tick, timestamps, idle_rto_reset, exit_cwnd_ns2, rto_reset_on_ack, whole_segments,
            recover_strict, recovery_maxburst, ssthresh_from_cwnd, rack, tlp, dsack
        }
    }
}

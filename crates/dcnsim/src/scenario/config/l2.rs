//! Layer-2 keys of a scenario (`[topology] qcn`, `pause`, `[[rate_changes]]`, `[qcn]`);
//! their builder is `scenario/build/l2.rs`.

use super::units::{Dur, Rate, Size, SizeOrAuto, SizeOrUnlimited};
use crate::base::units::Bytes;
use crate::model::l2::*;
use serde::Deserialize;

/// `[topology] qcn = { ... }`: a QCN congestion point on every switch egress port (or on
/// `ports`). Absent keys come from the `Default` impl, which takes the model's parameters
/// from `CpConfig::default()` (Devkota 2010 App. A: Q_EQ 33 KB, W 2, v2.2; sources there).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct QcnCpCfg {
    /// false removes the CPs (for sweeping QCN on/off).
    pub enabled: bool,
    pub q_eq: Size,
    pub w: f64,
    /// "v2.2", "nov2007" (unverified hypothesis) or "every_packet".
    pub sampling: String,
    pub jitter: f64,
    /// M1 (Devkota 2010 ch. IV-B-1).
    pub congestion_memory: bool,
    /// M1's QSC as a fraction of the port buffer.
    pub memory_threshold: f64,
    /// M2 (Devkota 2010 Table V).
    pub detailed_sampling: bool,
    pub nov2007_p_min: f64,
    pub nov2007_p_max: f64,
    /// Which frames the CP samples: "admitted" (frames the queue accepted, as the public
    /// software models LINUX-QCN and OMNET-QCN) or "arrivals" (every arriving frame,
    /// dropped ones included, as the Broadcom Soc_petra-B hardware CP; `SampleSet`).
    pub sample: String,
    /// Quantise |Fb| by dropping this many low-order bits (`Quantizer::MsbShift`, docs/models.md
    /// §1.2, most significant bits, as the QCN-patched Linux qdisc with 13). Absent: the linear
    /// `floor(63·|Fb|/FbMax)`.
    pub quantizer_shift: Option<u32>,
    /// Only these ports ("A->B"); absent: every switch egress port.
    pub ports: Option<Vec<String>>,
}

impl Default for QcnCpCfg {
    fn default() -> Self {
        // `CpConfig::default()` holds the sources of q_eq, w, jitter, sampling (v2.2),
        // detailed (off) and sample (admitted).
        let cp = CpConfig::default();
        QcnCpCfg {
            // A `qcn` table turns the CPs on.
            enabled: true,
            q_eq: Size(Bytes(cp.q_eq_bytes)),
            w: cp.w,
            sampling: "v2.2".to_string(),
            jitter: cp.jitter,
            // `CpConfig::default().memory` is None: M1 off.
            congestion_memory: false,
            // `CongestionMemory::new`: 0.9 (Devkota 2010: 90 % of the buffer).
            memory_threshold: CongestionMemory::new(0).threshold_fraction,
            detailed_sampling: cp.detailed,
            // The unverified Nov-2007 hypothesis: p from 1 % to 10 % of packets (docs/models.md
            // "Nov-2007 pseudocode vs v2.2").
            nov2007_p_min: 0.01,
            nov2007_p_max: 0.10,
            sample: "admitted".to_string(),
            quantizer_shift: None,
            ports: None,
        }
    }
}

/// `[topology] pause = { ... }`: IEEE 802.3x PAUSE at every switch. Absent keys come from
/// the `Default` impl, which takes the watermarks and timing from `PauseConfig::default()`
/// (the slides' 130 KB / 110 KB; sources there).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct PauseCfgFile {
    /// false disables PAUSE (for sweeping it on/off).
    pub enabled: bool,
    /// High watermark per input.
    pub hi: Size,
    /// Low watermark per input.
    pub lo: Size,
    /// Quanta per PAUSE frame.
    pub quanta: u32,
    /// Refresh at this fraction of the pause time.
    pub refresh_fraction: f64,
    /// Only these switches; absent: all.
    pub switches: Option<Vec<String>>,
    /// "pause" (IEEE 802.3x, one class per link, the slides' set-up) or "pfc" (IEEE
    /// 802.1Qbb: watermarks per input x priority, priority = class mod 8).
    pub mode: String,
    /// Under "pfc", the priorities PFC is enabled for (lossless); absent: all eight. The
    /// others are never paused and take no reserve or headroom.
    pub priorities: Option<Vec<i64>>,
    /// "static" (the watermarks `hi` / `lo`) or "dynamic" (a Choudhury-Hahne threshold over
    /// a shared buffer with reserve and headroom per input (x priority), docs/models.md §2.5;
    /// `hi` and `lo` are then not used). The keys below are for "dynamic" only; absent, they
    /// come from `DynamicConfig::default()` (sources in `model/l2/pfc_dynamic.rs`).
    pub threshold: String,
    /// alpha = 2^-alpha_shift (default 3: 1/8).
    pub alpha_shift: Option<i64>,
    /// alpha in proportion to each input link's rate, `alpha_shift` holding at this rate
    /// (the shift drops by one per doubling above it, to 0 at most; absent: one alpha).
    pub alpha_per_rate: Option<Rate>,
    /// Guaranteed bytes per input (x priority), outside the shared pool (default 4 KiB).
    pub reserve: Option<Size>,
    /// Headroom per input (x priority): a size, or "auto" (default: sized from each input
    /// link's rate and delay and `mtu`).
    pub headroom: Option<SizeOrAuto>,
    /// Resume when the shared bytes are this far below the threshold (default 3 KiB).
    pub resume_offset: Option<Size>,
    /// The switch's buffer: reserves + headrooms + shared pool (default 16 MiB).
    pub buffer: Option<Size>,
    /// Largest frame for `headroom = "auto"` (default 1500 B).
    pub mtu: Option<Size>,
}

impl Default for PauseCfgFile {
    fn default() -> Self {
        let p = PauseConfig::default();
        PauseCfgFile {
            // A `pause` table turns PAUSE on.
            enabled: true,
            // Slides: 130 KB / 110 KB.
            hi: Size(Bytes(p.hi_bytes)),
            lo: Size(Bytes(p.lo_bytes)),
            // 0xFFFF, the largest (docs/models.md §2.2 implementation choice).
            quanta: p.quanta as u32,
            // docs/models.md §2.2.
            refresh_fraction: p.refresh_fraction,
            switches: None,
            // `PauseConfig::default().mode`: 802.3x, the slides' set-up.
            mode: "pause".to_string(),
            priorities: None,
            // `PauseConfig::default().dynamic` is None: the watermarks.
            threshold: "static".to_string(),
            alpha_shift: None,
            alpha_per_rate: None,
            reserve: None,
            headroom: None,
            resume_offset: None,
            buffer: None,
            mtu: None,
        }
    }
}

/// `[[topology.rate_changes]] port = "sw->n3", at = "250ms", rate = "500Mbps"`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateChangeCfg {
    pub port: String,
    pub at: Dur,
    pub rate: Rate,
}

/// `[qcn] rp = { ... }`: reaction points in the hosts.
#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct QcnCfg {
    pub rp: Option<RpCfgFile>,
}

/// `[qcn] rp = { ... }`. Absent keys come from the `Default` impl, which takes the RP's
/// parameters from `RpConfig::default()` (802.1Qau / Devkota 2010; sources there).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct RpCfgFile {
    /// "flow", "destination" or "shared".
    pub scope: String,
    /// Ideal mode: every flow hard-limited to its destination link rate / number of flows to
    /// that destination (Devkota 2010 Fig. 20). No QCN reaction.
    pub ideal: bool,
    /// Fixed-rate limiter instead of QCN (like `ideal`, with an explicit rate); absent: QCN.
    pub fixed_rate: Option<Rate>,
    pub adaptive_rai: bool,
    pub gd: f64,
    pub min_rate: Rate,
    pub bc_limit: Size,
    pub timer_period: Dur,
    pub r_ai: Rate,
    pub r_hai: Rate,
    pub jitter: f64,
    pub release_at_line_rate: bool,
    /// Token-bucket depth (0: pure pacing).
    pub bucket: SizeOrUnlimited,
    /// Per-flow notification by a shared limiter cut by a CNM (slides part 2): "off",
    /// "drop" (drop the flow's oldest held segment) or "ecn" (CE-mark it if ECT, else drop
    /// it).
    pub notify: String,
}

impl Default for RpCfgFile {
    fn default() -> Self {
        // `RpConfig::default()` holds the sources of gd to bucket.
        let r = RpConfig::default();
        RpCfgFile {
            // Devkota 2010: one rate limiter per server, one flow each.
            scope: "flow".to_string(),
            ideal: false,
            fixed_rate: None,
            // M3 off: unmodified QCN.
            adaptive_rai: r.adaptive_rai,
            gd: r.gd,
            min_rate: Rate(r.min_rate),
            bc_limit: Size(Bytes(r.bc_limit_bytes)),
            timer_period: Dur(r.timer_period),
            r_ai: Rate(r.r_ai),
            r_hai: Rate(r.r_hai),
            jitter: r.jitter,
            release_at_line_rate: r.release_at_line_rate,
            bucket: SizeOrUnlimited(r.bucket_bytes),
            // Slides part 1: no per-flow notification.
            notify: "off".to_string(),
        }
    }
}

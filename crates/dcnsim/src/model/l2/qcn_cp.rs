//! QCN congestion point (CP), one instance per switch egress queue.
//!
//! Implements IEEE 802.1Qau QCN as in R. Pan's pseudocode v2.2 ("serial HAI"), following
//! docs/models.md §1.1–1.2 and Devkota 2010 (ch. II-B-2; ch. IV-B for the
//! sampling modifications; Tables IV and V):
//!
//! - feedback `Fb = −(qoff + W·qdelta)` with `qoff = qlen − Q_EQ`, `qdelta = qlen − qold`,
//!   clamped to `[−FbMax, 0]`, `FbMax = Q_EQ·(1 + 2W)`;
//! - 6-bit quantisation `q = floor(63·|Fb|/FbMax)` ([`Quantizer::Linear`]) or a fixed right
//!   shift keeping the most significant bits ([`Quantizer::MsbShift`]);
//! - sampling: the v2.2 byte table keyed by `q >> 3` with a uniform ±15 % jitter
//!   ([`Sampling::V22`]); the thesis's "sample every packet" ([`Sampling::EveryPacket`]);
//!   an *unverified hypothesis* of the Nov-2007 sampler ([`Sampling::Nov2007`]);
//! - the thesis's modification M1, congestion-memory-based sampling ([`CongestionMemory`]),
//!   and M2, detailed sampling of level 7 (Table V, [`CpConfig::detailed`]).
//!
//! A congestion notification message ([`Cnm`]) is produced only at a sampling instant with
//! `q > 0`; the caller addresses it to the source (reaction point) of the packet it passed to
//! [`CongestionPoint::on_enqueue`], i.e. the sampled packet. `qold` is updated at every
//! sample, whether a CNM is sent or not. Packets dropped at the tail must not be passed to
//! `on_enqueue`; [`CongestionPoint::on_arrival`] takes every arrival and offers dropped ones
//! to the sampler only with [`SampleSet::Arrivals`]. The CP takes no action on dequeue except for M1's crossing
//! detector ([`CongestionPoint::on_dequeue`]).

use crate::base::rng::Rng;

/// Size of a CNM frame on the wire model, in bytes. 64 B as in the QCN-patched Linux qdisc
/// of docs/models.md §1.1 (a 64-byte CNM). The 802.1Qau CNM PDU, which
/// encapsulates part of the sampled frame, may be larger; that is not modelled here.
pub const CNM_FRAME_BYTES: u32 = 64;

/// Largest 6-bit quantised feedback value.
pub const Q_MAX: u8 = 63;

/// Bytes between samples by `q >> 3`: Devkota 2010 Table IV (level 0 printed "15000" there but
/// 100 packets of 1500 B; 150000 is the 150 KB base of all sources), docs/models.md §1.2.
pub const V22_TABLE: [u64; 8] = [
    150_000, 75_000, 50_000, 37_500, 30_000, 25_000, 21_500, 18_500,
];

/// Bytes between samples for q = 56..=63 with detailed sampling (M2): Devkota 2010 Table V.
pub const DETAILED_LEVEL7: [u64; 8] = [18_500, 15_500, 12_500, 9_500, 6_500, 4_500, 3_000, 1_500];

/// How |Fb| is mapped to the 6-bit feedback `q`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantizer {
    /// `q = floor(63·|Fb|/FbMax)` — the linear quantiser of docs/models.md §1.2 (FOGSim).
    Linear,
    /// `q = min(63, floor(|Fb|) >> shift)` — the most-significant-bits form of
    /// docs/models.md §1.2 (the QCN-patched Linux qdisc drops 13 low-order bits). Not
    /// full-scale: with Q_EQ 33 KB, W 2 and shift 13 the clamp at FbMax gives only q = 20.
    MsbShift {
        /// Number of low-order bits dropped.
        shift: u32,
    },
}

/// When the CP takes a sample.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampling {
    /// Pseudocode v2.2: a byte budget reloaded at each sample from [`V22_TABLE`] by `q >> 3`
    /// (or the M1/M2 variants), times U(1 − jitter, 1 + jitter). The "unmodified QCN" of the
    /// Devkota 2010. Default.
    V22,
    /// UNVERIFIED HYPOTHESIS of the Nov-2007 pseudocode's sampler (docs/models.md §1.2
    /// and §7 item 1: no copy of that document was found). Each admitted packet
    /// is sampled independently with probability `p_min + (p_max − p_min)·q/63`, where q is the
    /// quantised feedback computed for that packet — i.e. rising linearly from 1 % at q = 0 to
    /// 10 % at q = 63 with the defaults, the curve shown in the QCN description papers. No
    /// byte budget and no jitter. Treat results with this option as a sensitivity study, not
    /// as a reproduction of the 2007 text.
    Nov2007 {
        /// Sampling probability at q = 0 (hypothesis: 0.01).
        p_min: f64,
        /// Sampling probability at q = 63 (hypothesis: 0.10).
        p_max: f64,
    },
    /// Sample every admitted packet: Devkota 2010's first experiment (ch. IV-B).
    EveryPacket,
}

/// Which arriving frames are offered to the CP's sampler.
///
/// `Admitted` is the reading of the two public software models (LINUX-QCN, OMNET-QCN: the CP
/// runs after the tail-drop check, docs/models.md §1.2). `Arrivals` offers every frame that
/// arrives at the CP's queue, including frames the queue then drops: the reading of a
/// hardware CP, Broadcom's Soc_petra-B IQM "CNM parameters" table (`CpSampleBase`: "the
/// minimal number of packet's bytes that should arrive to the Q (enqueued or discarded)
/// between two consecutive CNM packets"; Broadcom DPP SDK, index file id 27220476294), and
/// consistent with the IEEE 802.1Q CN MIB, which counts frames "passed on to the queue
/// controlled by this Congestion Point" separately from those "discarded by the queue"
/// (`ieee8021CnCpTransmittedFrames` / `ieee8021CnCpDiscardedFrames`). The 802.1Qau clause
/// itself could not be retrieved; the thesis (Devkota 2010) does not say. A dropped frame is
/// sampled with the queue length it found (which does not include it), and a CNM goes to its
/// source as for an admitted frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleSet {
    /// Only frames admitted to the queue (default: preserves every published dcnsim result).
    Admitted,
    /// Every arriving frame, admitted or dropped.
    Arrivals,
}

impl Sampling {
    /// The Nov-2007 hypothesis with its default 1 % → 10 % probabilities.
    pub const NOV2007_DEFAULT: Sampling = Sampling::Nov2007 {
        p_min: 0.01,
        p_max: 0.10,
    };
}

/// M1, congestion-memory-based sampling (Devkota 2010 ch. IV-B-1; docs/models.md §1.4).
///
/// A counter `Mem` counts congestion events; the sampling interval becomes
/// `max(floor_bytes, interval >> Mem)` (the thesis multiplies the sampling frequency by
/// `2^Mem` and implements it as right shifts). Assumptions the thesis leaves open, all as
/// recommended in docs/models.md §1.4:
/// - an event is an *upward crossing* of `QSC = threshold_fraction × capacity` (queue length
///   going from `<= QSC` to `> QSC`), not every arrival above it; the crossing detector re-arms
///   when an enqueue or [`CongestionPoint::on_dequeue`] sees the queue at or below QSC;
/// - `Mem` never decays;
/// - the interval (before jitter) never drops below `floor_bytes` (one MTU), the floor of
///   Table V and the thesis's every-packet upper bound.
///
/// The thesis's alternative trigger (feedback instead of QSC) is not implemented.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CongestionMemory {
    /// Queue capacity in bytes (the egress buffer). No default: it is the queue's limit.
    pub capacity_bytes: u64,
    /// Fraction of the capacity defining QSC. Default 0.9 (Devkota 2010 ch. IV-B-1, "90% of
    /// the queue").
    pub threshold_fraction: f64,
    /// Floor of the sampling interval in bytes. Default 1500 (one MTU; docs/models.md §1.4).
    pub floor_bytes: u64,
}

impl CongestionMemory {
    /// M1 with the default threshold (0.9) and floor (1500 B) for a queue of `capacity_bytes`.
    pub fn new(capacity_bytes: u64) -> CongestionMemory {
        CongestionMemory {
            capacity_bytes,
            threshold_fraction: 0.9,
            floor_bytes: 1500,
        }
    }
}

/// CP parameters. `Default` gives unmodified v2.2 QCN with Devkota 2010's values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpConfig {
    /// Queue set point Q_EQ in bytes. Default 33000: Devkota 2010 App. A (baselines); the
    /// slides and the 802.1Qau default (cpQSp) use 26000 (docs/models.md §1.1).
    pub q_eq_bytes: u64,
    /// Weight W of qdelta. Default 2.0: Devkota 2010 ch. II and App. A; 802.1Qau cpW
    /// (docs/models.md §1.1; the slides' "W=20" is read as 2.0).
    pub w: f64,
    /// Quantisation of |Fb|. Default [`Quantizer::Linear`] (linear, docs/models.md §1.2).
    pub quantizer: Quantizer,
    /// Sampling scheme. Default [`Sampling::V22`].
    pub sampling: Sampling,
    /// Half-width of the uniform jitter on the v2.2 byte budget: the reload is multiplied by
    /// U(1 − jitter, 1 + jitter). Default 0.15 ("30 % randomness", Devkota 2010 and slides;
    /// U(0.85, 1.15) as in the OMNeT++ QCN model, docs/models.md §1.2). 0 disables it.
    pub jitter: f64,
    /// M2, detailed sampling: for q = 56..=63 use [`DETAILED_LEVEL7`] instead of level 7 of
    /// the table (Devkota 2010 Table V). Default false. Only with [`Sampling::V22`].
    pub detailed: bool,
    /// M1, congestion-memory-based sampling. Default `None` (off). Not with
    /// [`Sampling::EveryPacket`]; with [`Sampling::Nov2007`] it multiplies the sampling
    /// probability by `2^Mem` (capped at 1; the floor is not used there).
    pub memory: Option<CongestionMemory>,
    /// Which frames are offered to the sampler. Default [`SampleSet::Admitted`] (the public
    /// software models; see [`SampleSet`] for the sources of both readings).
    pub sample: SampleSet,
}

impl Default for CpConfig {
    fn default() -> Self {
        CpConfig {
            q_eq_bytes: 33_000,
            w: 2.0,
            quantizer: Quantizer::Linear,
            sampling: Sampling::V22,
            jitter: 0.15,
            detailed: false,
            memory: None,
            sample: SampleSet::Admitted,
        }
    }
}

impl CpConfig {
    /// Check the parameters; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if self.q_eq_bytes == 0 || self.q_eq_bytes > (1 << 40) {
            return Err(format!(
                "qcn: q_eq must be between 1 B and 1 TB, got {}",
                self.q_eq_bytes
            ));
        }
        if !self.w.is_finite() || self.w < 0.0 || self.w > 1e6 {
            return Err(format!(
                "qcn: w must be a finite number >= 0, got {}",
                self.w
            ));
        }
        if !self.jitter.is_finite() || !(0.0..1.0).contains(&self.jitter) {
            return Err(format!(
                "qcn: sampling jitter must be in [0, 1), got {}",
                self.jitter
            ));
        }
        if let Quantizer::MsbShift { shift } = self.quantizer {
            if shift > 48 {
                return Err(format!(
                    "qcn: quantizer shift must be at most 48, got {shift}"
                ));
            }
        }
        if let Sampling::Nov2007 { p_min, p_max } = self.sampling {
            let ok = |p: f64| p.is_finite() && (0.0..=1.0).contains(&p);
            if !ok(p_min) || !ok(p_max) || p_min > p_max {
                return Err(format!(
                    "qcn: nov2007 sampling needs 0 <= p_min <= p_max <= 1, got {p_min} and {p_max}"
                ));
            }
        }
        if self.detailed && self.sampling != Sampling::V22 {
            return Err(
                "qcn: detailed sampling (Table V) only applies to the v2.2 sampling table".into(),
            );
        }
        if let Some(m) = self.memory {
            if self.sampling == Sampling::EveryPacket {
                return Err(
                    "qcn: congestion-memory sampling has no effect when every packet is sampled"
                        .into(),
                );
            }
            if m.capacity_bytes == 0 {
                return Err("qcn: congestion-memory sampling needs a queue capacity > 0".into());
            }
            if !m.threshold_fraction.is_finite()
                || m.threshold_fraction <= 0.0
                || m.threshold_fraction > 1.0
            {
                return Err(format!(
                    "qcn: congestion-memory threshold fraction must be in (0, 1], got {}",
                    m.threshold_fraction
                ));
            }
            if m.floor_bytes == 0 {
                return Err("qcn: congestion-memory interval floor must be at least 1 B".into());
            }
        }
        Ok(())
    }
}

/// A congestion notification message, produced at a sample with `q > 0`. The caller sends it
/// (as a [`CNM_FRAME_BYTES`] frame) to the source of the sampled packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cnm {
    /// Quantised |Fb|, 1..=63.
    pub q: u8,
    /// `qlen − Q_EQ` at the sample, bytes.
    pub qoff: i64,
    /// `qlen − qold` at the sample, bytes.
    pub qdelta: i64,
}

/// Counters of one CP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpStats {
    /// Sampling instants (with or without a CNM).
    pub samples: u64,
    /// CNMs generated (samples with q > 0).
    pub cnms: u64,
    /// M1 congestion events (upward crossings of QSC); 0 when M1 is off.
    pub congestion_events: u64,
    /// Sampling instants taken on frames the queue dropped ([`SampleSet::Arrivals`] only).
    pub dropped_samples: u64,
}

/// QCN congestion point of one egress queue.
#[derive(Clone, Debug)]
pub struct CongestionPoint {
    cfg: CpConfig,
    fb_max: f64,
    qold: u64,
    /// Bytes still to enqueue before the next sample (v2.2 only).
    sample_left: i64,
    /// M1 memory `Mem` and crossing detector.
    mem: u32,
    qsc: u64,
    above_qsc: bool,
    /// Counters.
    pub stats: CpStats,
}

impl CongestionPoint {
    /// A CP with `qold = 0` and the first byte budget `TABLE[0]` (no jitter on the first one).
    pub fn new(cfg: CpConfig) -> Result<CongestionPoint, String> {
        cfg.validate()?;
        let q_eq = cfg.q_eq_bytes as f64;
        let qsc = cfg
            .memory
            .map(|m| (m.threshold_fraction * m.capacity_bytes as f64).floor() as u64)
            .unwrap_or(u64::MAX);
        Ok(CongestionPoint {
            fb_max: q_eq * (1.0 + 2.0 * cfg.w),
            qold: 0,
            sample_left: V22_TABLE[0] as i64,
            mem: 0,
            qsc,
            above_qsc: false,
            stats: CpStats::default(),
            cfg,
        })
    }

    pub fn config(&self) -> &CpConfig {
        &self.cfg
    }

    /// `FbMax = Q_EQ·(1 + 2W)` in bytes.
    pub fn fb_max(&self) -> f64 {
        self.fb_max
    }

    /// Queue length at the previous sample, bytes.
    pub fn qold(&self) -> u64 {
        self.qold
    }

    /// Bytes left before the next sample (v2.2 sampling).
    pub fn sample_left(&self) -> i64 {
        self.sample_left
    }

    /// M1 memory `Mem` (0 when M1 is off).
    pub fn memory(&self) -> u32 {
        self.mem
    }

    /// M1 threshold QSC in bytes (`u64::MAX` when M1 is off).
    pub fn qsc(&self) -> u64 {
        self.qsc
    }

    /// Clamped feedback `Fb ∈ [−FbMax, 0]` for a queue of `qlen` bytes given the current
    /// `qold`.
    pub fn feedback(&self, qlen: u64) -> f64 {
        let (fb, _, _) = self.raw_feedback(qlen);
        fb
    }

    fn raw_feedback(&self, qlen: u64) -> (f64, i64, i64) {
        let qoff = qlen as i64 - self.cfg.q_eq_bytes as i64;
        let qdelta = qlen as i64 - self.qold as i64;
        let fb = -(qoff as f64 + self.cfg.w * qdelta as f64);
        (fb.clamp(-self.fb_max, 0.0), qoff, qdelta)
    }

    /// 6-bit quantisation of a clamped feedback value (`fb <= 0`).
    pub fn quantize(&self, fb: f64) -> u8 {
        let a = (-fb).clamp(0.0, self.fb_max);
        let q = match self.cfg.quantizer {
            Quantizer::Linear => (63.0 * a / self.fb_max).floor(),
            Quantizer::MsbShift { shift } => ((a.floor() as u64) >> shift) as f64,
        };
        q.min(Q_MAX as f64) as u8
    }

    /// Sampling interval in bytes for feedback `q`, before jitter: the table entry (with M2
    /// for q >= 56), shifted right by the M1 memory and floored. For [`Sampling::V22`]; the
    /// value is also reported for the other schemes but not used by them.
    pub fn interval_bytes(&self, q: u8) -> u64 {
        let q = q.min(Q_MAX);
        let base = if self.cfg.detailed && q >= 56 {
            DETAILED_LEVEL7[(q - 56) as usize]
        } else {
            V22_TABLE[(q >> 3) as usize]
        };
        match self.cfg.memory {
            Some(m) => (base >> self.mem.min(63)).max(m.floor_bytes),
            None => base,
        }
    }

    /// Per-packet sampling probability for feedback `q` under [`Sampling::Nov2007`] (the
    /// hypothesis; with M1 multiplied by `2^Mem`, capped at 1). 1 for
    /// [`Sampling::EveryPacket`]; 0 for [`Sampling::V22`], which is not probabilistic.
    pub fn sample_probability(&self, q: u8) -> f64 {
        match self.cfg.sampling {
            Sampling::V22 => 0.0,
            Sampling::EveryPacket => 1.0,
            Sampling::Nov2007 { p_min, p_max } => {
                let p = p_min + (p_max - p_min) * q.min(Q_MAX) as f64 / Q_MAX as f64;
                let scale = if self.cfg.memory.is_some() {
                    (2.0f64).powi(self.mem.min(64) as i32)
                } else {
                    1.0
                };
                (p * scale).min(1.0)
            }
        }
    }

    fn observe_qlen(&mut self, qlen: u64) {
        if qlen > self.qsc {
            if !self.above_qsc {
                self.above_qsc = true;
                self.mem = self.mem.saturating_add(1);
                self.stats.congestion_events += 1;
            }
        } else {
            self.above_qsc = false;
        }
    }

    /// A packet of `pkt_bytes` was admitted into the queue, whose length including it is
    /// `qlen_bytes_after`. Returns the CNM to send to the packet's source if this packet is
    /// sampled and the quantised feedback is > 0. Draws from `rng` only for the v2.2 jitter
    /// (at a sample) and for the Nov-2007 coin (every packet).
    ///
    /// The v2.2 byte budget triggers a sample when it reaches `<= 0` (the budget has run out,
    /// docs/models.md §1.2; a `< 0` test would not sample every packet at a 1500-B interval):
    /// with `<= 0` an interval of 1500 B samples every 1500-B packet, as Table V (1500 B = 1 packet) and M1's floor intend. The budget is
    /// overwritten at each sample (no carry of the overshoot).
    pub fn on_enqueue(
        &mut self,
        qlen_bytes_after: u64,
        pkt_bytes: u32,
        rng: &mut Rng,
    ) -> Option<Cnm> {
        if self.cfg.memory.is_some() {
            self.observe_qlen(qlen_bytes_after);
        }
        let (fb, qoff, qdelta) = match self.cfg.sampling {
            Sampling::EveryPacket => self.raw_feedback(qlen_bytes_after),
            Sampling::V22 => {
                self.sample_left -= pkt_bytes as i64;
                if self.sample_left > 0 {
                    return None;
                }
                self.raw_feedback(qlen_bytes_after)
            }
            Sampling::Nov2007 { .. } => {
                let r = self.raw_feedback(qlen_bytes_after);
                let p = self.sample_probability(self.quantize(r.0));
                if rng.uniform() >= p {
                    return None;
                }
                r
            }
        };
        // Sampling instant.
        let q = self.quantize(fb);
        self.stats.samples += 1;
        self.qold = qlen_bytes_after;
        if self.cfg.sampling == Sampling::V22 {
            let interval = self.interval_bytes(q) as f64;
            let j = self.cfg.jitter;
            let reload = if j > 0.0 {
                interval * rng.range(1.0 - j, 1.0 + j)
            } else {
                interval
            };
            self.sample_left = (reload.round() as i64).max(1);
        }
        if q == 0 {
            return None;
        }
        self.stats.cnms += 1;
        Some(Cnm { q, qoff, qdelta })
    }

    /// A frame of `pkt_bytes` arrived at the queue. `admitted`: the queue accepted it and
    /// `qlen_bytes` includes it; otherwise it was dropped and `qlen_bytes` is the queue length
    /// it found. With [`SampleSet::Admitted`] a dropped frame is ignored (no state change, no
    /// random draw); with [`SampleSet::Arrivals`] it is offered like an admitted one
    /// ([`CongestionPoint::on_enqueue`]).
    pub fn on_arrival(
        &mut self,
        qlen_bytes: u64,
        pkt_bytes: u32,
        admitted: bool,
        rng: &mut Rng,
    ) -> Option<Cnm> {
        if admitted {
            return self.on_enqueue(qlen_bytes, pkt_bytes, rng);
        }
        if self.cfg.sample == SampleSet::Admitted {
            return None;
        }
        let samples = self.stats.samples;
        let r = self.on_enqueue(qlen_bytes, pkt_bytes, rng);
        self.stats.dropped_samples += self.stats.samples - samples;
        r
    }

    /// A packet left the queue, which now holds `qlen_bytes_after`. QCN itself takes no action
    /// on dequeue; with M1 this re-arms the crossing detector when the queue is at or below
    /// QSC, so that crossings are detected exactly. Optional: without it the detector re-arms
    /// at the next enqueue that sees the queue at or below QSC.
    pub fn on_dequeue(&mut self, qlen_bytes_after: u64) {
        if qlen_bytes_after <= self.qsc {
            self.above_qsc = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg_every() -> CpConfig {
        CpConfig {
            sampling: Sampling::EveryPacket,
            ..CpConfig::default()
        }
    }

    #[test]
    fn defaults_validate_and_fbmax() {
        let cp = CongestionPoint::new(CpConfig::default()).unwrap();
        // FbMax = 33000 · (1 + 2·2) = 165000.
        assert_eq!(cp.fb_max(), 165_000.0);
        assert_eq!(cp.sample_left(), 150_000);
        assert_eq!(cp.qold(), 0);
        let slides = CongestionPoint::new(CpConfig {
            q_eq_bytes: 26_000,
            ..CpConfig::default()
        })
        .unwrap();
        // 26 KB · 5 = 130 KB.
        assert_eq!(slides.fb_max(), 130_000.0);
    }

    #[test]
    fn bad_configs_are_errors() {
        let bad = [
            CpConfig {
                q_eq_bytes: 0,
                ..CpConfig::default()
            },
            CpConfig {
                w: -1.0,
                ..CpConfig::default()
            },
            CpConfig {
                w: f64::NAN,
                ..CpConfig::default()
            },
            CpConfig {
                jitter: 1.0,
                ..CpConfig::default()
            },
            CpConfig {
                quantizer: Quantizer::MsbShift { shift: 60 },
                ..CpConfig::default()
            },
            CpConfig {
                sampling: Sampling::Nov2007 {
                    p_min: 0.2,
                    p_max: 0.1,
                },
                ..CpConfig::default()
            },
            CpConfig {
                detailed: true,
                sampling: Sampling::EveryPacket,
                ..CpConfig::default()
            },
            CpConfig {
                memory: Some(CongestionMemory::new(128_000)),
                sampling: Sampling::EveryPacket,
                ..CpConfig::default()
            },
            CpConfig {
                memory: Some(CongestionMemory::new(0)),
                ..CpConfig::default()
            },
            CpConfig {
                memory: Some(CongestionMemory {
                    threshold_fraction: 1.5,
                    ..CongestionMemory::new(128_000)
                }),
                ..CpConfig::default()
            },
        ];
        for c in bad {
            assert!(CongestionPoint::new(c).is_err(), "{c:?}");
        }
    }

    /// Scripted queue lengths, every packet sampled, Q_EQ 33000, W 2, FbMax 165000.
    #[test]
    fn feedback_and_linear_quantisation() {
        let mut cp = CongestionPoint::new(cfg_every()).unwrap();
        let mut rng = Rng::new(1, 1);
        // qlen 10000, qold 0: qoff = -23000, qdelta = 10000, Fb = -(-23000 + 20000) = 3000
        // > 0 -> clamped to 0 -> q = 0 -> no CNM, but qold := 10000.
        assert_eq!(cp.feedback(10_000), 0.0);
        assert_eq!(cp.on_enqueue(10_000, 1500, &mut rng), None);
        assert_eq!(cp.qold(), 10_000);
        // qlen 40000: qoff = 7000, qdelta = 30000, Fb = -(7000 + 60000) = -67000;
        // q = floor(63·67000/165000) = floor(4221000/165000) = floor(25.58) = 25.
        assert_eq!(cp.feedback(40_000), -67_000.0);
        assert_eq!(
            cp.on_enqueue(40_000, 1500, &mut rng),
            Some(Cnm {
                q: 25,
                qoff: 7000,
                qdelta: 30_000
            })
        );
        // qlen 40000 again: qdelta = 0, Fb = -7000, q = floor(441000/165000) = 2.
        assert_eq!(
            cp.on_enqueue(40_000, 1500, &mut rng),
            Some(Cnm {
                q: 2,
                qoff: 7000,
                qdelta: 0
            })
        );
        // qlen 100000: qoff = 67000, qdelta = 60000, Fb = -187000 -> clamp -165000 -> q = 63.
        assert_eq!(cp.feedback(100_000), -165_000.0);
        assert_eq!(
            cp.on_enqueue(100_000, 1500, &mut rng),
            Some(Cnm {
                q: 63,
                qoff: 67_000,
                qdelta: 60_000
            })
        );
        // qlen 99000: qoff = 66000, qdelta = -1000, Fb = -(66000 - 2000) = -64000,
        // q = floor(4032000/165000) = floor(24.44) = 24.
        assert_eq!(
            cp.on_enqueue(99_000, 1500, &mut rng),
            Some(Cnm {
                q: 24,
                qoff: 66_000,
                qdelta: -1000
            })
        );
        // qlen 33500: qoff = 500, qdelta = -65500, Fb = -(500 - 131000) = 130500 -> 0.
        assert_eq!(cp.on_enqueue(33_500, 1500, &mut rng), None);
        // qlen 34000: qoff = 1000, qdelta = 500, Fb = -2000 < 0 but
        // q = floor(126000/165000) = 0 -> no CNM.
        assert_eq!(cp.feedback(34_000), -2000.0);
        assert_eq!(cp.on_enqueue(34_000, 1500, &mut rng), None);
        assert_eq!(cp.qold(), 34_000);
        assert_eq!(
            cp.stats,
            CpStats {
                samples: 7,
                cnms: 4,
                congestion_events: 0,
                dropped_samples: 0
            }
        );
    }

    #[test]
    fn quantisation_boundaries() {
        let cp = CongestionPoint::new(cfg_every()).unwrap();
        // The smallest whole |Fb| of each level, ceil(165000·k/63), gives exactly k; one byte
        // less gives k - 1.
        for k in 1..=63u64 {
            let a = (165_000 * k).div_ceil(63);
            assert_eq!(cp.quantize(-(a as f64)), k as u8);
            assert_eq!(cp.quantize(-((a - 1) as f64)), k as u8 - 1);
        }
        // One byte below the level-1 boundary (2619.05) is still 0.
        assert_eq!(cp.quantize(-2619.0), 0);
        assert_eq!(cp.quantize(-2620.0), 1);
        assert_eq!(cp.quantize(-1e9), 63);
    }

    #[test]
    fn msb_shift_quantisation() {
        let cp = CongestionPoint::new(CpConfig {
            quantizer: Quantizer::MsbShift { shift: 13 },
            ..cfg_every()
        })
        .unwrap();
        // 67000 >> 13 = 8 (8·8192 = 65536 <= 67000 < 73728).
        assert_eq!(cp.quantize(-67_000.0), 8);
        // The clamp 165000 >> 13 = 20 (20·8192 = 163840): not full scale.
        assert_eq!(cp.quantize(-1e9), 20);
        assert_eq!(cp.quantize(-8191.0), 0);
    }

    #[test]
    fn v22_interval_per_level() {
        let cp = CongestionPoint::new(CpConfig::default()).unwrap();
        let expect = [
            150_000, 75_000, 50_000, 37_500, 30_000, 25_000, 21_500, 18_500,
        ];
        for q in 0..=63u8 {
            assert_eq!(cp.interval_bytes(q), expect[(q / 8) as usize], "q={q}");
        }
        assert_eq!(cp.interval_bytes(7), 150_000);
        assert_eq!(cp.interval_bytes(8), 75_000);
        assert_eq!(cp.interval_bytes(63), 18_500);
    }

    #[test]
    fn v22_budget_without_jitter() {
        let mut cp = CongestionPoint::new(CpConfig {
            jitter: 0.0,
            ..CpConfig::default()
        })
        .unwrap();
        let mut rng = Rng::new(1, 2);
        // Uncongested (qlen 1500, q = 0): 150000 / 1500 = 100 packets per sample.
        for i in 1..=300u32 {
            let r = cp.on_enqueue(1500, 1500, &mut rng);
            assert_eq!(r, None);
            assert_eq!(cp.stats.samples, (i / 100) as u64, "packet {i}");
        }
        assert_eq!(cp.sample_left(), 150_000);
        // Congested at q = 63 (qlen 200000 > FbMax + Q_EQ): the budget 150000 runs out after
        // 100 packets; this sample reloads 18500: 12 packets leave 500, the 13th samples.
        let mut cnms = 0;
        for _ in 0..100 {
            cnms += cp.on_enqueue(200_000, 1500, &mut rng).is_some() as u32;
        }
        assert_eq!(cnms, 1);
        assert_eq!(cp.sample_left(), 18_500);
        for i in 1..=13 {
            let r = cp.on_enqueue(200_000, 1500, &mut rng);
            assert_eq!(r.is_some(), i == 13, "packet {i}");
        }
        // A 100000-B packet exhausts the 18500 budget: sample at qlen 40000 with qold 200000:
        // qoff 7000, qdelta -160000, Fb = -(7000 - 320000) > 0 -> q 0, no CNM; reload 150000.
        let r = cp.on_enqueue(40_000, 100_000, &mut rng);
        assert_eq!(r, None);
        assert_eq!(cp.sample_left(), 150_000);
        // Now a sample at qlen 45000: qoff 12000, qdelta 5000, Fb = -22000,
        // q = floor(63·22000/165000) = floor(8.4) = 8 -> level 1 -> reload 75000.
        let r = cp.on_enqueue(45_000, 150_000, &mut rng);
        assert_eq!(r.map(|c| c.q), Some(8));
        assert_eq!(cp.sample_left(), 75_000);
    }

    #[test]
    fn v22_jitter_stays_within_15_percent() {
        let mut cp = CongestionPoint::new(CpConfig::default()).unwrap();
        let mut rng = Rng::new(7, 3);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        let mut sum = 0i64;
        let n = 20_000;
        for _ in 0..n {
            // A huge packet always exhausts the budget: one sample per call at q = 0.
            assert_eq!(cp.on_enqueue(0, 400_000, &mut rng), None);
            let s = cp.sample_left();
            lo = lo.min(s);
            hi = hi.max(s);
            sum += s;
        }
        assert_eq!(cp.stats.samples, n);
        // 150000 · U(0.85, 1.15) in [127500, 172500].
        assert!(lo >= 127_500 && hi <= 172_500, "{lo} {hi}");
        // Both ends are reached (within 0.2 %), and the mean is the nominal interval.
        assert!(lo < 127_800 && hi > 172_200, "{lo} {hi}");
        let mean = sum as f64 / n as f64;
        assert!((mean - 150_000.0).abs() < 500.0, "{mean}");
        // Same for level 7 (18500 · [0.85, 1.15] = [15725, 21275]).
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for _ in 0..5000 {
            cp.on_enqueue(400_000, 400_000, &mut rng);
            lo = lo.min(cp.sample_left());
            hi = hi.max(cp.sample_left());
        }
        assert!(lo >= 15_725 && hi <= 21_275, "{lo} {hi}");
    }

    #[test]
    fn jitter_is_deterministic() {
        let run = || {
            let mut cp = CongestionPoint::new(CpConfig::default()).unwrap();
            let mut rng = Rng::new(42, 9);
            (0..50)
                .map(|i| {
                    cp.on_enqueue(30_000 + 1000 * (i % 40), 60_000, &mut rng);
                    cp.sample_left()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn detailed_sampling_table_v() {
        let cp = CongestionPoint::new(CpConfig {
            detailed: true,
            ..CpConfig::default()
        })
        .unwrap();
        assert_eq!(cp.interval_bytes(0), 150_000);
        assert_eq!(cp.interval_bytes(48), 21_500);
        assert_eq!(cp.interval_bytes(55), 21_500);
        let expect = [18_500, 15_500, 12_500, 9_500, 6_500, 4_500, 3_000, 1_500];
        for (i, e) in expect.iter().enumerate() {
            assert_eq!(cp.interval_bytes(56 + i as u8), *e);
        }
        // At q = 63 with no jitter, every 1500-B packet is sampled.
        let mut cp = CongestionPoint::new(CpConfig {
            detailed: true,
            jitter: 0.0,
            ..CpConfig::default()
        })
        .unwrap();
        let mut rng = Rng::new(1, 4);
        cp.on_enqueue(300_000, 150_000, &mut rng); // first budget 150000 -> 0 -> sample
        assert_eq!(cp.stats.samples, 1);
        assert_eq!(cp.sample_left(), 1500);
        for i in 0..10 {
            assert!(cp.on_enqueue(300_000, 1500, &mut rng).is_some());
            assert_eq!(cp.stats.samples, 2 + i);
        }
    }

    #[test]
    fn congestion_memory_sampling() {
        let mut cp = CongestionPoint::new(CpConfig {
            memory: Some(CongestionMemory::new(128_000)),
            jitter: 0.0,
            ..CpConfig::default()
        })
        .unwrap();
        let mut rng = Rng::new(1, 5);
        // QSC = floor(0.9 · 128000) = 115200; an event is qlen going above it.
        assert_eq!(cp.qsc(), 115_200);
        cp.on_enqueue(115_200, 1500, &mut rng); // not above
        assert_eq!(cp.memory(), 0);
        cp.on_enqueue(115_201, 1500, &mut rng); // upward crossing: Mem 1
        assert_eq!(cp.memory(), 1);
        cp.on_enqueue(120_000, 1500, &mut rng); // still above: no new event
        assert_eq!(cp.memory(), 1);
        // Intervals halve: 150000 >> 1 = 75000; level 7: 18500 >> 1 = 9250.
        assert_eq!(cp.interval_bytes(0), 75_000);
        assert_eq!(cp.interval_bytes(63), 9_250);
        cp.on_dequeue(110_000); // re-arm
        cp.on_enqueue(116_000, 1500, &mut rng); // Mem 2
        assert_eq!(cp.memory(), 2);
        // 150000 >> 2 = 37500; 50000 >> 2 = 12500; 18500 >> 2 = 4625.
        assert_eq!(cp.interval_bytes(0), 37_500);
        assert_eq!(cp.interval_bytes(16), 12_500);
        assert_eq!(cp.interval_bytes(63), 4_625);
        // Re-arm through an enqueue at or below QSC, no dequeue hook.
        cp.on_enqueue(100_000, 1500, &mut rng);
        cp.on_enqueue(130_000, 1500, &mut rng); // Mem 3
        assert_eq!(cp.memory(), 3);
        // 18500 >> 3 = 2312; 150000 >> 3 = 18750.
        assert_eq!(cp.interval_bytes(63), 2_312);
        assert_eq!(cp.interval_bytes(0), 18_750);
        for _ in 0..4 {
            cp.on_dequeue(0);
            cp.on_enqueue(120_000, 1500, &mut rng);
        }
        // Mem 7: 150000 >> 7 = 1171 -> floor 1500; no decay.
        assert_eq!(cp.memory(), 7);
        assert_eq!(cp.interval_bytes(0), 1500);
        assert_eq!(cp.interval_bytes(63), 1500);
        assert_eq!(cp.stats.congestion_events, 7);
        // M1 + M2: level 63 = 1500 >> Mem floored at 1500; q = 57: 15500 >> 7 = 121 -> 1500.
        let mut both = CongestionPoint::new(CpConfig {
            memory: Some(CongestionMemory::new(128_000)),
            detailed: true,
            ..CpConfig::default()
        })
        .unwrap();
        both.on_enqueue(120_000, 1500, &mut rng);
        assert_eq!(both.memory(), 1);
        // q = 57: 15500 >> 1 = 7750.
        assert_eq!(both.interval_bytes(57), 7_750);
        assert_eq!(both.interval_bytes(63), 1_500);
    }

    #[test]
    fn memory_reload_uses_shifted_interval() {
        let mut cp = CongestionPoint::new(CpConfig {
            memory: Some(CongestionMemory::new(10_000)),
            jitter: 0.0,
            ..CpConfig::default()
        })
        .unwrap();
        let mut rng = Rng::new(2, 5);
        // QSC 9000; a 150000-B enqueue at qlen 9500 crosses (Mem 1) and samples:
        // qoff -23500, qdelta 9500, Fb = 4500 -> q 0 -> reload 150000 >> 1 = 75000.
        assert_eq!(cp.on_enqueue(9_500, 150_000, &mut rng), None);
        assert_eq!(cp.memory(), 1);
        assert_eq!(cp.sample_left(), 75_000);
    }

    #[test]
    fn nov2007_hypothesis_probability() {
        let mut cp = CongestionPoint::new(CpConfig {
            sampling: Sampling::NOV2007_DEFAULT,
            ..CpConfig::default()
        })
        .unwrap();
        assert!((cp.sample_probability(0) - 0.01).abs() < 1e-15);
        assert!((cp.sample_probability(63) - 0.10).abs() < 1e-15);
        // 0.01 + 0.09·21/63 = 0.04.
        assert!((cp.sample_probability(21) - 0.04).abs() < 1e-15);
        let mut rng = Rng::new(11, 6);
        // Uncongested: ~1 % of 200000 packets sampled (sd ≈ 44.5), none notified.
        for _ in 0..200_000 {
            assert_eq!(cp.on_enqueue(1500, 1500, &mut rng), None);
        }
        let s = cp.stats.samples;
        assert!((1800..=2200).contains(&s), "{s}");
        // Saturated (qlen 200000 -> Fb clamped -> q 63): ~10 % (sd ≈ 134), all with a CNM.
        let before = cp.stats;
        for _ in 0..200_000 {
            if let Some(c) = cp.on_enqueue(200_000, 1500, &mut rng) {
                assert_eq!(c.q, 63);
            }
        }
        let s = cp.stats.samples - before.samples;
        assert!((19_400..=20_600).contains(&s), "{s}");
        assert_eq!(cp.stats.cnms - before.cnms, s);
        // With M1, Mem 2 multiplies by 4: 0.04 at q = 0, capped at 1 for large q.
        let mut m = CongestionPoint::new(CpConfig {
            sampling: Sampling::NOV2007_DEFAULT,
            memory: Some(CongestionMemory::new(1000)),
            ..CpConfig::default()
        })
        .unwrap();
        m.on_enqueue(950, 100, &mut rng);
        m.on_dequeue(0);
        m.on_enqueue(950, 100, &mut rng);
        assert_eq!(m.memory(), 2);
        assert!((m.sample_probability(0) - 0.04).abs() < 1e-15);
        assert!((m.sample_probability(63) - 0.40).abs() < 1e-15);
    }

    /// Scripted arrivals at a full queue, no jitter: with `Admitted` the dropped frames are
    /// invisible to the CP; with `Arrivals` their bytes count towards the budget and one of
    /// them is sampled, with the queue length it found.
    #[test]
    fn sample_set_admitted_vs_arrivals() {
        let script = |set: SampleSet| {
            let mut cp = CongestionPoint::new(CpConfig {
                jitter: 0.0,
                sample: set,
                ..CpConfig::default()
            })
            .unwrap();
            let mut rng = Rng::new(3, 7);
            let mut cnms = Vec::new();
            // 99 admitted 1500-B frames at qlen 10000 (q = 0): budget 150000 -> 1500 left.
            for _ in 0..99 {
                assert_eq!(cp.on_arrival(10_000, 1500, true, &mut rng), None);
            }
            assert_eq!(cp.sample_left(), 1500);
            assert_eq!(cp.stats.samples, 0);
            // Two frames dropped at a full queue of 150000 B.
            for _ in 0..2 {
                if let Some(c) = cp.on_arrival(150_000, 1500, false, &mut rng) {
                    cnms.push(c);
                }
            }
            // One admitted frame at 150000 B.
            if let Some(c) = cp.on_arrival(150_000, 1500, true, &mut rng) {
                cnms.push(c);
            }
            (cp, cnms)
        };
        // Admitted: the drops change nothing; the admitted frame uses the last 1500 B of the
        // budget and is sampled: qoff 117000, qdelta 150000, Fb = -417000 -> clamp -> q 63;
        // 18500 B left to the next sample.
        // Arrivals: the first dropped frame exhausts the budget and is sampled (same Fb, the
        // CNM goes to its source); the reload is 18500 (q 63), so the second drop and the
        // admitted frame are not sampled: 18500 - 3000 = 15500 left.
        let cases = [
            (SampleSet::Admitted, 0, 18_500),
            (SampleSet::Arrivals, 1, 15_500),
        ];
        for (set, dropped_samples, left) in cases {
            let (cp, cnms) = script(set);
            let cnm = Cnm {
                q: 63,
                qoff: 117_000,
                qdelta: 150_000,
            };
            assert_eq!(cnms, vec![cnm], "{set:?}");
            let stats = CpStats {
                samples: 1,
                cnms: 1,
                congestion_events: 0,
                dropped_samples,
            };
            assert_eq!(cp.stats, stats, "{set:?}");
            assert_eq!(cp.qold(), 150_000, "{set:?}");
            assert_eq!(cp.sample_left(), left, "{set:?}");
        }
        // A long run of drops at a full queue: with Admitted no sample at all. With Arrivals
        // the first (150000-B) arrival samples at q 63 (qdelta 150000) and reloads 18500: the
        // 13th 1500-B drop samples (12 leave 500). From then on qdelta = 0, Fb = -117000,
        // q = floor(63·117000/165000) = 44 -> level 5 -> 25000 B: every 17th drop samples
        // (16 leave 1000). 130 drops: 1 + floor((130 - 13)/17) = 1 + 6 = 7 CNMs.
        for (set, expect) in [(SampleSet::Admitted, 0u64), (SampleSet::Arrivals, 7)] {
            let mut cp = CongestionPoint::new(CpConfig {
                jitter: 0.0,
                sample: set,
                ..CpConfig::default()
            })
            .unwrap();
            let mut rng = Rng::new(3, 8);
            // First sample on one 150000-B arrival at a full queue.
            cp.on_arrival(150_000, 150_000, false, &mut rng);
            let before = cp.stats.cnms;
            for _ in 0..130 {
                cp.on_arrival(150_000, 1500, false, &mut rng);
            }
            assert_eq!(cp.stats.cnms - before, expect, "{set:?}");
        }
    }
}

//! QCN reaction point (RP): one rate limiter (RL), per flow, per destination or shared.
//!
//! Implements the reaction point of IEEE 802.1Qau QCN as in R. Pan's pseudocode v2.2
//! ("serial HAI"), exactly the pseudocode of docs/models.md §1.3 in Devkota 2010 / NS3RDMA
//! convention (Devkota 2010, ch. II-B-3), plus the thesis's modification M3, adaptive R_AI
//! (ch. IV-C; docs/models.md §1.4):
//!
//! - a CNM with feedback q > 0 cuts `CR := max(MIN_RATE, CR·max(1 − Gd·q, MIN_DEC_FACTOR))`;
//!   `TR := CR` (before the cut) and the byte counter is reloaded only if at least one byte
//!   cycle completed since the previous CNM (`BC > 0`); BC, T := 0; phase FR; timer restarted;
//! - self-increase on each byte-counter cycle (`BC_LIMIT` bytes, halved in HAI) and each timer
//!   expiry (`TIMER_PERIOD`, halved in HAI), both reloaded with a U(0.85, 1.15) factor:
//!   FR while `BC < 5 and T < 5` (TR unchanged); HAI when both `>= 5` (`TR += R_HAI·(min(BC,
//!   T) − 5 + 1)`); AI otherwise (`TR += R_AI`); when `BC == 1 or T == 1` and `TR > 10·CR`,
//!   `TR := TR/8` instead of the increment; then `CR := min((CR + TR)/2, line rate)`.
//!   AI therefore starts at the 5th event of a counter (4 FR averaging steps);
//! - the RL does not exist until the first CNM (then `CR = TR = line rate`) and may optionally
//!   be released when CR reaches the line rate again (OMNeT++ QCN model; off by default).
//!
//! Rates: parameters are integer [`RateBps`]; CR and TR are kept as `f64` bits/s (the
//! pseudocode's averaging and multiplicative cut produce fractions; the thesis's 1 Mb/s Runit
//! granularity is not applied). The limiter enforces `round(CR)` bits/s with an exact integer
//! token bucket ([`ReactionPoint::next_departure`]), so that TCP sees CR as a physical limit.
//!
//! Timer in the engine's lazy style: [`ReactionPoint::next_deadline`] is the time the RP wants
//! its timer to fire; the caller holds one pending event and calls
//! [`ReactionPoint::on_timer`] when it fires (an early event — the deadline moved later after
//! a CNM — returns false and the caller re-arms at the new deadline).

use crate::base::rng::Rng;
use crate::base::units::{RateBps, SimTime};

/// Token units per byte: the bucket counts bit·picoseconds per second, so that a rate in
/// bits/s times an interval in picoseconds is an exact integer.
const UNITS_PER_BYTE: i128 = 8 * SimTime::PS_PER_S as i128;

/// Rate-increase phase of an active rate limiter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Fast recovery: both counters below the threshold; CR averages toward TR.
    FastRecovery,
    /// Active increase: exactly one counter at or above the threshold; TR += R_AI.
    ActiveIncrease,
    /// Hyper-active increase: both counters at or above the threshold.
    HyperActiveIncrease,
}

/// RP parameters. `Default` gives the values of Devkota 2010 and the Atikoglu & Prabhakar
/// slides (docs/models.md §1.1) with M3 off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RpConfig {
    /// Decrease gain Gd. Default 1/128 (slides, thesis App. A; one CNM at most about halves CR).
    pub gd: f64,
    /// Smallest multiplicative factor of one cut. Default 0.5 (OMNeT++ QCN MIN_DEC_FACTOR;
    /// Mellanox RPG_MIN_DEC_FAC 50 %). Never binds with Gd = 1/128 (63/128 < 0.5).
    pub min_dec_factor: f64,
    /// Floor of CR. Default 10 Mb/s (slides, thesis, OMNeT++ QCN).
    pub min_rate: RateBps,
    /// Byte-counter cycle length in bytes (halved in HAI). Default 150000 (slides, thesis; 75 KB
    /// in HAI per thesis ch. II).
    pub bc_limit_bytes: u64,
    /// Timer period (halved in HAI). Default 15 ms (slides, thesis; 7.5 ms in HAI per ch. II).
    pub timer_period: SimTime,
    /// FAST_RECOVERY_TH: events of a counter before it leaves FR. Default 5 (slides, thesis,
    /// Mellanox rpgThreshold).
    pub fast_recovery_th: u32,
    /// Active-increase step R_AI. Default 5 Mb/s (slides, thesis).
    pub r_ai: RateBps,
    /// Hyper-active-increase step R_HAI. Default 50 Mb/s (slides, thesis, Mellanox).
    pub r_hai: RateBps,
    /// Half-width of the uniform jitter on byte-counter and timer reloads: U(1 − j, 1 + j).
    /// Default 0.15 ("30 %" in the slides; OMNeT++ QCN U(0.85, 1.15)). 0 disables it.
    pub jitter: f64,
    /// Whether the timer restart on a CNM is jittered too. Default true (docs/models.md §1.3
    /// pseudocode; the OMNeT++ model restarts without jitter — a minor difference).
    pub jitter_on_cnm: bool,
    /// Release the RL when CR reaches the line rate (re-created with CR = TR = line rate on
    /// the next CNM; all state, including M3's memory, is lost). Default false (NS3RDMA keeps
    /// the state; the OMNeT++ model releases — docs/models.md §1.3).
    pub release_at_line_rate: bool,
    /// M3, adaptive R_AI (Devkota 2010 ch. IV-C). Default false.
    pub adaptive_rai: bool,
    /// M3 normalisation: `D = max(1, Mem_rp / adaptive_norm)`. Default 64 (thesis: "divided by
    /// 64 (to normalize it)").
    pub adaptive_norm: u32,
    /// M3 upper bound of `Mem_rp`. The thesis says the counter is bounded but gives no bound;
    /// default `u32::MAX` (effectively unbounded, saturating).
    pub adaptive_mem_cap: u32,
    /// Token-bucket depth in bytes. Default 0: pure pacing, the next frame may start when the
    /// previous frames have been "serialised" at CR (`t_next = t_last + size_last/CR`,
    /// docs/models.md §1.3, "Enforcement"; the thesis names a token bucket without a size).
    pub bucket_bytes: u64,
}

impl Default for RpConfig {
    fn default() -> Self {
        RpConfig {
            gd: 1.0 / 128.0,
            min_dec_factor: 0.5,
            min_rate: RateBps(10_000_000),
            bc_limit_bytes: 150_000,
            timer_period: SimTime::from_ms(15),
            fast_recovery_th: 5,
            r_ai: RateBps(5_000_000),
            r_hai: RateBps(50_000_000),
            jitter: 0.15,
            jitter_on_cnm: true,
            release_at_line_rate: false,
            adaptive_rai: false,
            adaptive_norm: 64,
            adaptive_mem_cap: u32::MAX,
            bucket_bytes: 0,
        }
    }
}

impl RpConfig {
    /// Check the parameters against a host line rate; the error names the offending field.
    pub fn validate(&self, line_rate: RateBps) -> Result<(), String> {
        if !self.gd.is_finite() || self.gd <= 0.0 || self.gd > 1.0 {
            return Err(format!("qcn: gd must be in (0, 1], got {}", self.gd));
        }
        if !self.min_dec_factor.is_finite()
            || self.min_dec_factor <= 0.0
            || self.min_dec_factor > 1.0
        {
            return Err(format!(
                "qcn: min_dec_factor must be in (0, 1], got {}",
                self.min_dec_factor
            ));
        }
        if self.min_rate.0 == 0 {
            return Err("qcn: min_rate must be positive".into());
        }
        if line_rate.0 < self.min_rate.0 || line_rate.0 > 1u64 << 50 {
            return Err(format!(
                "qcn: the line rate ({} b/s) must be at least min_rate ({} b/s) and at most 2^50 b/s",
                line_rate.0, self.min_rate.0
            ));
        }
        if self.bc_limit_bytes < 2 || self.bc_limit_bytes > 1 << 40 {
            return Err(format!(
                "qcn: bc_limit must be between 2 B and 1 TB, got {}",
                self.bc_limit_bytes
            ));
        }
        if self.timer_period.0 < 2 || self.timer_period.0 > SimTime::PS_PER_S * 1_000_000 {
            return Err(format!(
                "qcn: timer period must be between 2 ps and 10^6 s, got {}",
                self.timer_period
            ));
        }
        if self.fast_recovery_th == 0 {
            return Err("qcn: fast_recovery_th must be at least 1".into());
        }
        if !self.jitter.is_finite() || !(0.0..1.0).contains(&self.jitter) {
            return Err(format!(
                "qcn: RP jitter must be in [0, 1), got {}",
                self.jitter
            ));
        }
        if self.adaptive_norm == 0 {
            return Err("qcn: adaptive_norm must be at least 1".into());
        }
        if self.bucket_bytes > 1 << 40 {
            return Err(format!(
                "qcn: bucket must be at most 1 TB, got {}",
                self.bucket_bytes
            ));
        }
        Ok(())
    }
}

/// Counters of one RP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RpStats {
    /// CNMs applied (q > 0).
    pub cnms: u64,
    /// Completed byte-counter cycles.
    pub byte_events: u64,
    /// Timer expiries handled.
    pub timer_events: u64,
    /// RL creations (first CNM, or first CNM after a release).
    pub activations: u64,
    /// RL releases at line rate.
    pub releases: u64,
}

/// A QCN reaction point (rate limiter) on a host link of a fixed line rate.
#[derive(Clone, Debug)]
pub struct ReactionPoint {
    cfg: RpConfig,
    line: f64,
    active: bool,
    cr: f64,
    tr: f64,
    /// Byte-counter stage BC and timer stage T.
    bc: u32,
    t: u32,
    bc_left: i64,
    phase: Phase,
    deadline: SimTime,
    /// M3 memory Mem_rp.
    mem: u32,
    /// Token bucket: tokens (bit·ps/s units; may be negative = debt) as of `t_upd`.
    tokens: i128,
    t_upd: SimTime,
    /// Counters.
    pub stats: RpStats,
}

fn jittered(x: f64, j: f64, rng: &mut Rng) -> f64 {
    if j > 0.0 {
        x * rng.range(1.0 - j, 1.0 + j)
    } else {
        x
    }
}

impl ReactionPoint {
    /// An RP with no rate limiter yet (traffic leaves at line rate until the first CNM).
    pub fn new(cfg: RpConfig, line_rate: RateBps) -> Result<ReactionPoint, String> {
        cfg.validate(line_rate)?;
        let line = line_rate.0 as f64;
        Ok(ReactionPoint {
            cfg,
            line,
            active: false,
            cr: line,
            tr: line,
            bc: 0,
            t: 0,
            bc_left: 0,
            phase: Phase::FastRecovery,
            deadline: SimTime::NEVER,
            mem: 0,
            tokens: 0,
            t_upd: SimTime::ZERO,
            stats: RpStats::default(),
        })
    }

    pub fn config(&self) -> &RpConfig {
        &self.cfg
    }

    /// Whether a rate limiter exists (a CNM arrived and it was not released since).
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Current rate CR in bits/s (the line rate when no RL exists).
    pub fn current_rate_bps(&self) -> f64 {
        self.cr
    }

    /// Target rate TR in bits/s (the line rate when no RL exists).
    pub fn target_rate_bps(&self) -> f64 {
        self.tr
    }

    /// The rate the limiter enforces: `round(CR)` bits/s (at least 1).
    pub fn current_rate(&self) -> RateBps {
        RateBps((self.cr.round() as u64).max(1))
    }

    pub fn line_rate_bps(&self) -> f64 {
        self.line
    }

    /// Rate-increase phase, `None` when no RL exists.
    pub fn phase(&self) -> Option<Phase> {
        self.active.then_some(self.phase)
    }

    /// Byte-counter stage BC (completed byte cycles since the last CNM).
    pub fn byte_stage(&self) -> u32 {
        self.bc
    }

    /// Timer stage T (timer expiries since the last CNM).
    pub fn timer_stage(&self) -> u32 {
        self.t
    }

    /// Bytes left in the current byte-counter cycle.
    pub fn bc_left(&self) -> i64 {
        self.bc_left
    }

    /// M3 memory Mem_rp (0 when M3 is off).
    pub fn memory(&self) -> u32 {
        self.mem
    }

    /// M3 divisor `D = max(1, Mem_rp / norm)` (1 when M3 is off).
    pub fn adaptive_divisor(&self) -> f64 {
        if self.cfg.adaptive_rai {
            (self.mem as f64 / self.cfg.adaptive_norm as f64).max(1.0)
        } else {
            1.0
        }
    }

    /// Effective R_AI in bits/s: `R_AI / D`.
    pub fn effective_r_ai_bps(&self) -> f64 {
        self.cfg.r_ai.0 as f64 / self.adaptive_divisor()
    }

    /// Effective R_HAI in bits/s: `R_HAI / D`.
    pub fn effective_r_hai_bps(&self) -> f64 {
        self.cfg.r_hai.0 as f64 / self.adaptive_divisor()
    }

    /// When the RP timer wants to fire (`SimTime::NEVER` when no RL exists).
    pub fn next_deadline(&self) -> SimTime {
        self.deadline
    }

    fn enforced_rate(&self) -> i128 {
        self.current_rate().0 as i128
    }

    fn bucket_cap(&self) -> i128 {
        self.cfg.bucket_bytes as i128 * UNITS_PER_BYTE
    }

    fn tokens_at(&self, now: SimTime) -> i128 {
        if now <= self.t_upd {
            return self.tokens;
        }
        let add = self.enforced_rate() * (now.0 - self.t_upd.0) as i128;
        (self.tokens + add).min(self.bucket_cap())
    }

    /// Bring the bucket up to `now` at the current rate (before any rate change).
    fn accrue(&mut self, now: SimTime) {
        self.tokens = self.tokens_at(now);
        if now > self.t_upd {
            self.t_upd = now;
        }
    }

    /// Earliest time (>= `now`) at which a frame of `bytes` may start leaving the limiter.
    /// The frame needs `min(bytes, bucket)` bytes of tokens (so with the default bucket of 0
    /// it needs the earlier frames' debt repaid: pure pacing at CR); tokens accrue at
    /// `round(CR)` bits/s. `now` when no RL exists. Call [`Self::on_bytes_sent`] when the
    /// frame actually leaves.
    pub fn next_departure(&self, now: SimTime, bytes: u32) -> SimTime {
        if !self.active {
            return now;
        }
        let need = (bytes as u64).min(self.cfg.bucket_bytes) as i128 * UNITS_PER_BYTE;
        let tok = self.tokens_at(now);
        if tok >= need {
            return now;
        }
        let r = self.enforced_rate();
        let wait = (need - tok + r - 1) / r;
        now + SimTime(wait.min(u64::MAX as i128) as u64)
    }

    /// A frame of `bytes` left the limiter at `now`: charge the bucket and run the byte
    /// counter (one byte-counter event at most per call; the reload overwrites, no carry).
    /// No effect when no RL exists.
    pub fn on_bytes_sent(&mut self, now: SimTime, bytes: u32, rng: &mut Rng) {
        if !self.active {
            return;
        }
        self.accrue(now);
        self.tokens -= bytes as i128 * UNITS_PER_BYTE;
        self.bc_left -= bytes as i64;
        if self.bc_left < 0 {
            let limit = self.cfg.bc_limit_bytes as f64;
            let reload = if self.phase == Phase::HyperActiveIncrease {
                limit / 2.0
            } else {
                limit
            };
            self.bc_left = jittered(reload, self.cfg.jitter, rng).round() as i64;
            self.bc = self.bc.saturating_add(1);
            self.stats.byte_events += 1;
            self.self_increase(now);
        }
    }

    /// The timer event held by the caller fired at `now`. Returns false (and does nothing) if
    /// no RL exists or the deadline is later than `now` (re-arm at [`Self::next_deadline`]).
    pub fn on_timer(&mut self, now: SimTime, rng: &mut Rng) -> bool {
        if !self.active || self.deadline.is_never() || now < self.deadline {
            return false;
        }
        self.accrue(now);
        let period = if self.phase == Phase::HyperActiveIncrease {
            self.cfg.timer_period.0 as f64 / 2.0
        } else {
            self.cfg.timer_period.0 as f64
        };
        self.deadline = now + SimTime(jittered(period, self.cfg.jitter, rng).round() as u64);
        self.t = self.t.saturating_add(1);
        self.stats.timer_events += 1;
        if self.cfg.adaptive_rai {
            self.mem = self.mem.saturating_sub(1);
        }
        self.self_increase(now);
        true
    }

    /// A CNM with quantised feedback `q` for this RL arrived at `now`. Creates the RL if none
    /// exists. Returns false (ignored) for q = 0.
    pub fn on_cnm(&mut self, now: SimTime, q: u8, rng: &mut Rng) -> bool {
        if q == 0 {
            return false;
        }
        let q = q.min(63);
        self.accrue(now);
        let new_episode = if !self.active {
            self.active = true;
            self.cr = self.line;
            self.tr = self.line;
            self.bc = 0;
            self.t = 0;
            self.bc_left =
                jittered(self.cfg.bc_limit_bytes as f64, self.cfg.jitter, rng).round() as i64;
            self.tokens = self.bucket_cap();
            self.t_upd = now;
            self.stats.activations += 1;
            true
        } else if self.bc > 0 {
            self.tr = self.cr;
            self.bc_left =
                jittered(self.cfg.bc_limit_bytes as f64, self.cfg.jitter, rng).round() as i64;
            true
        } else {
            false
        };
        if self.cfg.adaptive_rai && new_episode {
            self.mem = self
                .mem
                .saturating_add(q as u32)
                .min(self.cfg.adaptive_mem_cap);
        }
        let factor = (1.0 - self.cfg.gd * q as f64).max(self.cfg.min_dec_factor);
        self.cr = (self.cr * factor).max(self.cfg.min_rate.0 as f64);
        self.bc = 0;
        self.t = 0;
        self.phase = Phase::FastRecovery;
        let period = self.cfg.timer_period.0 as f64;
        let period = if self.cfg.jitter_on_cnm {
            jittered(period, self.cfg.jitter, rng)
        } else {
            period
        };
        self.deadline = now + SimTime(period.round() as u64);
        self.stats.cnms += 1;
        true
    }

    fn self_increase(&mut self, now: SimTime) {
        let th = self.cfg.fast_recovery_th;
        let (phase, inc) = if self.bc < th && self.t < th {
            (Phase::FastRecovery, 0.0)
        } else if self.bc >= th && self.t >= th {
            let k = (self.bc.min(self.t) - th + 1) as f64;
            (Phase::HyperActiveIncrease, self.effective_r_hai_bps() * k)
        } else {
            (Phase::ActiveIncrease, self.effective_r_ai_bps())
        };
        self.phase = phase;
        if (self.bc == 1 || self.t == 1) && self.tr > 10.0 * self.cr {
            self.tr /= 8.0;
        } else {
            self.tr += inc;
        }
        self.cr = ((self.cr + self.tr) / 2.0).min(self.line);
        if self.cfg.release_at_line_rate && self.cr >= self.line {
            self.release(now);
        }
    }

    fn release(&mut self, now: SimTime) {
        self.active = false;
        self.cr = self.line;
        self.tr = self.line;
        self.bc = 0;
        self.t = 0;
        self.bc_left = 0;
        self.phase = Phase::FastRecovery;
        self.deadline = SimTime::NEVER;
        self.mem = 0;
        self.tokens = 0;
        self.t_upd = now;
        self.stats.releases += 1;
    }
}

#[cfg(test)]
// The expected rates are written out in full: they are exact binary fractions (every cut and
// average here is exact in f64), longer than the shortest decimal that round-trips.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;

    const G: u64 = 1_000_000_000;

    fn ms(x: u64) -> SimTime {
        SimTime::from_ms(x)
    }

    fn exact(jitter_free: RpConfig) -> RpConfig {
        RpConfig {
            jitter: 0.0,
            ..jitter_free
        }
    }

    fn rp_1g() -> ReactionPoint {
        ReactionPoint::new(exact(RpConfig::default()), RateBps(G)).unwrap()
    }

    /// One byte-counter event: more than any reload (150000 B) in one call.
    const CYCLE: u32 = 150_001;

    #[test]
    fn bad_configs_are_errors() {
        let line = RateBps(G);
        let bad = [
            RpConfig {
                gd: 0.0,
                ..RpConfig::default()
            },
            RpConfig {
                gd: f64::NAN,
                ..RpConfig::default()
            },
            RpConfig {
                min_dec_factor: 0.0,
                ..RpConfig::default()
            },
            RpConfig {
                min_rate: RateBps(0),
                ..RpConfig::default()
            },
            RpConfig {
                min_rate: RateBps(2 * G),
                ..RpConfig::default()
            },
            RpConfig {
                bc_limit_bytes: 0,
                ..RpConfig::default()
            },
            RpConfig {
                timer_period: SimTime(0),
                ..RpConfig::default()
            },
            RpConfig {
                fast_recovery_th: 0,
                ..RpConfig::default()
            },
            RpConfig {
                jitter: -0.1,
                ..RpConfig::default()
            },
            RpConfig {
                adaptive_norm: 0,
                ..RpConfig::default()
            },
        ];
        for c in bad {
            assert!(ReactionPoint::new(c, line).is_err(), "{c:?}");
        }
        assert!(ReactionPoint::new(RpConfig::default(), RateBps(0)).is_err());
        assert!(ReactionPoint::new(RpConfig::default(), line).is_ok());
    }

    #[test]
    fn inactive_until_first_cnm() {
        let mut rp = rp_1g();
        let mut rng = Rng::new(1, 1);
        assert!(!rp.is_active());
        assert_eq!(rp.phase(), None);
        assert_eq!(rp.next_deadline(), SimTime::NEVER);
        assert_eq!(rp.next_departure(ms(1), 1500), ms(1));
        rp.on_bytes_sent(ms(1), 1_000_000, &mut rng); // no RL: nothing counted
        assert_eq!(rp.stats, RpStats::default());
        assert!(!rp.on_timer(ms(100), &mut rng));
        // q = 0 is not a CNM.
        assert!(!rp.on_cnm(ms(1), 0, &mut rng));
        assert!(!rp.is_active());
    }

    #[test]
    fn cnm_cut_and_tr_rule() {
        let mut rp = rp_1g();
        let mut rng = Rng::new(1, 2);
        // First CNM q = 32 creates the RL: CR = TR = 1e9, then CR = 1e9·(1 - 32/128) = 7.5e8.
        assert!(rp.on_cnm(ms(0), 32, &mut rng));
        assert_eq!(rp.current_rate_bps(), 750e6);
        assert_eq!(rp.target_rate_bps(), 1e9);
        assert_eq!(rp.phase(), Some(Phase::FastRecovery));
        assert_eq!(rp.bc_left(), 150_000);
        assert_eq!(rp.next_deadline(), ms(15));
        // Second CNM q = 16 before any byte cycle (BC = 0): TR is NOT touched, bc_left keeps
        // counting; CR = 7.5e8·(1 - 16/128) = 7.5e8·0.875 = 656250000.
        rp.on_bytes_sent(ms(1), 1500, &mut rng);
        assert!(rp.on_cnm(ms(2), 16, &mut rng));
        assert_eq!(rp.current_rate_bps(), 656_250_000.0);
        assert_eq!(rp.target_rate_bps(), 1e9);
        assert_eq!(rp.bc_left(), 148_500);
        assert_eq!(rp.next_deadline(), ms(17));
        // One byte cycle: BC = 1, FR: CR = (656250000 + 1e9)/2 = 828125000.
        rp.on_bytes_sent(ms(3), CYCLE, &mut rng);
        assert_eq!(rp.byte_stage(), 1);
        assert_eq!(rp.current_rate_bps(), 828_125_000.0);
        // CNM q = 8 with BC = 1 > 0: TR := CR = 828125000, bc_left reloaded to 150000,
        // CR = 828125000·(1 - 8/128) = 828125000·0.9375 = 776367187.5.
        assert!(rp.on_cnm(ms(4), 8, &mut rng));
        assert_eq!(rp.target_rate_bps(), 828_125_000.0);
        assert_eq!(rp.current_rate_bps(), 776_367_187.5);
        assert_eq!(rp.bc_left(), 150_000);
        assert_eq!((rp.byte_stage(), rp.timer_stage()), (0, 0));
        assert_eq!(rp.stats.cnms, 3);
        assert_eq!(rp.stats.activations, 1);
    }

    /// FR -> AI -> HAI with the exact rates after each event (line 1 Gb/s, no jitter).
    #[test]
    fn fr_ai_hai_transitions() {
        let mut rp = rp_1g();
        let mut rng = Rng::new(1, 3);
        // Set-up: CNM q=32 at 0 (CR 7.5e8, TR 1e9); a byte cycle at 1 ms (CR 8.75e8);
        // CNM q=16 at 2 ms with BC = 1: TR := 8.75e8, CR = 8.75e8·0.875 = 765625000.
        rp.on_cnm(ms(0), 32, &mut rng);
        rp.on_bytes_sent(ms(1), CYCLE, &mut rng);
        assert_eq!(rp.current_rate_bps(), 875e6);
        rp.on_cnm(ms(2), 16, &mut rng);
        assert_eq!(rp.target_rate_bps(), 875e6);
        assert_eq!(rp.current_rate_bps(), 765_625_000.0);
        assert_eq!(rp.next_deadline(), ms(17));
        let tr = 875e6;
        let check = |rp: &ReactionPoint, bc: u32, t: u32, ph: Phase, tr: f64, cr: f64| {
            assert_eq!((rp.byte_stage(), rp.timer_stage()), (bc, t));
            assert_eq!(rp.phase(), Some(ph));
            assert_eq!(rp.target_rate_bps(), tr);
            assert_eq!(rp.current_rate_bps(), cr);
        };
        use Phase::*;
        // E1 byte, BC=1 T=0: FR, TR stays; CR = (765625000 + 875e6)/2 = 820312500.
        rp.on_bytes_sent(ms(3), CYCLE, &mut rng);
        check(&rp, 1, 0, FastRecovery, tr, 820_312_500.0);
        // E2 byte, BC=2: CR = (820312500 + 875e6)/2 = 847656250.
        rp.on_bytes_sent(ms(4), CYCLE, &mut rng);
        check(&rp, 2, 0, FastRecovery, tr, 847_656_250.0);
        // An early timer event (deadline 17 ms) does nothing.
        assert!(!rp.on_timer(ms(16), &mut rng));
        // E3 timer at 17 ms, T=1: FR; CR = (847656250 + 875e6)/2 = 861328125; next 32 ms.
        assert!(rp.on_timer(ms(17), &mut rng));
        check(&rp, 2, 1, FastRecovery, tr, 861_328_125.0);
        assert_eq!(rp.next_deadline(), ms(32));
        // E4 byte, BC=3: CR = (861328125 + 875e6)/2 = 868164062.5.
        rp.on_bytes_sent(ms(18), CYCLE, &mut rng);
        check(&rp, 3, 1, FastRecovery, tr, 868_164_062.5);
        // E5 byte, BC=4: CR = (868164062.5 + 875e6)/2 = 871582031.25.
        rp.on_bytes_sent(ms(19), CYCLE, &mut rng);
        check(&rp, 4, 1, FastRecovery, tr, 871_582_031.25);
        // E6 byte, BC=5 (>= 5), T=1: AI from the 5th event: TR = 875e6 + 5e6 = 880e6,
        // CR = (871582031.25 + 880e6)/2 = 875791015.625.
        rp.on_bytes_sent(ms(20), CYCLE, &mut rng);
        check(&rp, 5, 1, ActiveIncrease, 880e6, 875_791_015.625);
        assert_eq!(rp.bc_left(), 150_000); // reload chosen in FR (phase before the event)
                                           // E7 byte, BC=6: TR = 885e6, CR = (875791015.625 + 885e6)/2 = 880395507.8125.
        rp.on_bytes_sent(ms(21), CYCLE, &mut rng);
        check(&rp, 6, 1, ActiveIncrease, 885e6, 880_395_507.812_5);
        assert_eq!(rp.bc_left(), 150_000); // full reload in AI
                                           // Timers at 32, 47, 62 ms (T = 2, 3, 4; AI, TR += 5e6 each):
                                           // CR = (880395507.8125 + 890e6)/2 = 885197753.90625
                                           // CR = (885197753.90625 + 895e6)/2 = 890098876.953125
                                           // CR = (890098876.953125 + 900e6)/2 = 895049438.4765625
        assert!(rp.on_timer(ms(32), &mut rng));
        check(&rp, 6, 2, ActiveIncrease, 890e6, 885_197_753.906_25);
        assert!(rp.on_timer(ms(47), &mut rng));
        check(&rp, 6, 3, ActiveIncrease, 895e6, 890_098_876.953_125);
        assert!(rp.on_timer(ms(62), &mut rng));
        check(&rp, 6, 4, ActiveIncrease, 900e6, 895_049_438.476_562_5);
        assert_eq!(rp.next_deadline(), ms(77));
        // Timer at 77 ms, T=5, BC=6: HAI, TR += 50e6·(min(6,5) - 5 + 1) = 50e6 -> 950e6,
        // CR = (895049438.4765625 + 950e6)/2 = 922524719.23828125. The period was chosen in
        // AI (15 ms): next at 92 ms.
        assert!(rp.on_timer(ms(77), &mut rng));
        check(
            &rp,
            6,
            5,
            HyperActiveIncrease,
            950e6,
            922_524_719.238_281_25,
        );
        assert_eq!(rp.next_deadline(), ms(92));
        // Byte at 80 ms, BC=7: HAI, TR += 50e6·(min(7,5) - 4) = 50e6 -> 1000e6,
        // CR = (922524719.23828125 + 1e9)/2 = 961262359.619140625; reload halved: 75000.
        rp.on_bytes_sent(ms(80), CYCLE, &mut rng);
        check(
            &rp,
            7,
            5,
            HyperActiveIncrease,
            1000e6,
            961_262_359.619_140_625,
        );
        assert_eq!(rp.bc_left(), 75_000);
        // Timer at 92 ms, T=6: TR += 50e6·(min(7,6) - 4) = 100e6 -> 1.1e9,
        // CR = min(1e9, (961262359.619140625 + 1.1e9)/2 = 1030631179.8...) = 1e9 (line cap).
        // Period halved in HAI: next at 92 + 7.5 = 99.5 ms.
        assert!(rp.on_timer(ms(92), &mut rng));
        check(&rp, 7, 6, HyperActiveIncrease, 1.1e9, 1e9);
        assert_eq!(rp.next_deadline(), SimTime::from_us(99_500));
        assert!(rp.is_active()); // not released by default
                                 // A CNM with BC = 7 > 0: TR := CR = 1e9, CR = 1e9·(1 - 4/128) = 968750000, FR.
        rp.on_cnm(ms(93), 4, &mut rng);
        check(&rp, 0, 0, FastRecovery, 1e9, 968_750_000.0);
        assert_eq!(rp.next_deadline(), ms(108));
    }

    #[test]
    fn min_rate_floor_and_tr_over_8() {
        let mut rp = rp_1g();
        let mut rng = Rng::new(1, 4);
        // q = 63 cuts by 65/128: 1e9 -> 507812500 exactly.
        rp.on_cnm(ms(0), 63, &mut rng);
        assert_eq!(rp.current_rate_bps(), 507_812_500.0);
        // Six more without byte cycles (TR stays 1e9): 1e9·(65/128)^6 = 17.15 Mb/s,
        // ^7 = 8.71 Mb/s -> floored at MIN_RATE 10 Mb/s.
        for _ in 0..5 {
            rp.on_cnm(ms(0), 63, &mut rng);
        }
        assert!((rp.current_rate_bps() - 17_148_270.359_257_367).abs() < 1e-6);
        rp.on_cnm(ms(0), 63, &mut rng);
        assert_eq!(rp.current_rate_bps(), 10e6);
        rp.on_cnm(ms(0), 63, &mut rng);
        assert_eq!(rp.current_rate_bps(), 10e6);
        assert_eq!(rp.target_rate_bps(), 1e9);
        let mut by_timer = rp.clone();
        // Byte event, BC = 1 and TR = 1e9 > 10·CR = 1e8: TR := 1e9/8 = 125e6 (replaces the
        // increment); CR = (10e6 + 125e6)/2 = 67.5e6.
        rp.on_bytes_sent(ms(1), CYCLE, &mut rng);
        assert_eq!(rp.target_rate_bps(), 125e6);
        assert_eq!(rp.current_rate_bps(), 67.5e6);
        // BC = 2: rule not applicable; CR = (67.5e6 + 125e6)/2 = 96.25e6.
        rp.on_bytes_sent(ms(2), CYCLE, &mut rng);
        assert_eq!(rp.target_rate_bps(), 125e6);
        assert_eq!(rp.current_rate_bps(), 96.25e6);
        // T = 1 but TR = 125e6 < 10·CR = 962.5e6: plain FR, CR = (96.25e6 + 125e6)/2.
        assert!(rp.on_timer(ms(15), &mut rng));
        assert_eq!(rp.target_rate_bps(), 125e6);
        assert_eq!(rp.current_rate_bps(), 110.625e6);
        // Same rule triggered by the timer (T = 1).
        assert!(by_timer.on_timer(ms(15), &mut rng));
        assert_eq!(by_timer.target_rate_bps(), 125e6);
        assert_eq!(by_timer.current_rate_bps(), 67.5e6);
    }

    #[test]
    fn min_dec_factor_clamps_the_cut() {
        let cfg = RpConfig {
            gd: 1.0 / 64.0,
            ..exact(RpConfig::default())
        };
        let mut rp = ReactionPoint::new(cfg, RateBps(G)).unwrap();
        let mut rng = Rng::new(1, 5);
        // 1 - 63/64 = 1/64 < 0.5 -> factor 0.5: CR = 5e8.
        rp.on_cnm(ms(0), 63, &mut rng);
        assert_eq!(rp.current_rate_bps(), 5e8);
        // 1 - 16/64 = 0.75 > 0.5: CR = 3.75e8.
        rp.on_cnm(ms(0), 16, &mut rng);
        assert_eq!(rp.current_rate_bps(), 3.75e8);
    }

    #[test]
    fn adaptive_rai_memory() {
        let cfg = RpConfig {
            adaptive_rai: true,
            ..exact(RpConfig::default())
        };
        let mut rp = ReactionPoint::new(cfg, RateBps(G)).unwrap();
        let mut rng = Rng::new(1, 6);
        // CNM q=32 creates the RL (new episode): Mem = 32; CR = 7.5e8.
        rp.on_cnm(ms(0), 32, &mut rng);
        assert_eq!(rp.memory(), 32);
        // CNM q=20 with BC = 0 (same FR cycle): no addition.
        rp.on_cnm(ms(0), 20, &mut rng);
        assert_eq!(rp.memory(), 32);
        assert_eq!(rp.adaptive_divisor(), 1.0); // 32/64 < 1 -> D = 1
        assert_eq!(rp.effective_r_ai_bps(), 5e6);
        // A byte cycle, then CNM q=48 starts a new episode: Mem = 80.
        rp.on_bytes_sent(ms(1), CYCLE, &mut rng);
        rp.on_cnm(ms(2), 48, &mut rng);
        assert_eq!(rp.memory(), 80);
        // CNM q=16 before a byte cycle: unchanged.
        rp.on_cnm(ms(3), 16, &mut rng);
        assert_eq!(rp.memory(), 80);
        // Byte cycle (BC=1): CR = (CR + TR)/2; then CNM q=48, new episode: Mem = 128, D = 2.
        rp.on_bytes_sent(ms(4), CYCLE, &mut rng);
        rp.on_cnm(ms(5), 48, &mut rng);
        assert_eq!(rp.memory(), 128);
        assert_eq!(rp.adaptive_divisor(), 2.0);
        assert_eq!(rp.effective_r_ai_bps(), 2.5e6);
        assert_eq!(rp.effective_r_hai_bps(), 25e6);
        // Rates so far: 1e9·0.75 = 7.5e8; ·(1 - 20/128) = 632812500; byte cycle ->
        // (632812500 + 1e9)/2 = 816406250; CNM q=48: TR = 816406250, CR = ·0.625 =
        // 510253906.25; q=16: ·0.875 = 446472167.96875; byte -> (446472167.96875 +
        // 816406250)/2 = 631439208.984375; CNM q=48: TR = 631439208.984375,
        // CR = ·0.625 = 394649505.615234375.
        let tr = 631_439_208.984_375;
        assert_eq!(rp.target_rate_bps(), tr);
        assert_eq!(rp.current_rate_bps(), 394_649_505.615_234_375);
        // Four FR byte events, then the 5th is AI with TR += R_AI/2 = 2.5e6.
        for _ in 0..4 {
            rp.on_bytes_sent(ms(6), CYCLE, &mut rng);
        }
        assert_eq!(rp.target_rate_bps(), tr);
        let cr4 = rp.current_rate_bps();
        rp.on_bytes_sent(ms(7), CYCLE, &mut rng);
        assert_eq!(rp.phase(), Some(Phase::ActiveIncrease));
        assert_eq!(rp.target_rate_bps(), tr + 2.5e6);
        assert_eq!(rp.current_rate_bps(), (cr4 + (tr + 2.5e6)) / 2.0);
        // Timer expiry at 20 ms (5 + 15): Mem 128 -> 127 before the increase,
        // D = 127/64 = 1.984375, TR += 5e6/1.984375.
        let tr5 = rp.target_rate_bps();
        assert!(rp.on_timer(ms(20), &mut rng));
        assert_eq!(rp.memory(), 127);
        assert_eq!(rp.adaptive_divisor(), 1.984_375);
        assert_eq!(rp.target_rate_bps(), tr5 + 5e6 / 1.984_375);
        // 63 more expiries bring Mem to 64 (D = 1); then it saturates at 0.
        for _ in 0..63 {
            let d = rp.next_deadline();
            assert!(rp.on_timer(d, &mut rng));
        }
        assert_eq!(rp.memory(), 64);
        assert_eq!(rp.effective_r_ai_bps(), 5e6);
        for _ in 0..100 {
            let d = rp.next_deadline();
            rp.on_timer(d, &mut rng);
        }
        assert_eq!(rp.memory(), 0);
        // Without M3 the memory stays 0.
        let mut plain = rp_1g();
        plain.on_cnm(ms(0), 63, &mut rng);
        assert_eq!(plain.memory(), 0);
    }

    #[test]
    fn adaptive_rai_cap() {
        let cfg = RpConfig {
            adaptive_rai: true,
            adaptive_mem_cap: 100,
            ..exact(RpConfig::default())
        };
        let mut rp = ReactionPoint::new(cfg, RateBps(G)).unwrap();
        let mut rng = Rng::new(1, 7);
        rp.on_cnm(ms(0), 63, &mut rng);
        rp.on_bytes_sent(ms(0), CYCLE, &mut rng);
        rp.on_cnm(ms(0), 63, &mut rng);
        assert_eq!(rp.memory(), 100); // 126 capped
    }

    #[test]
    fn release_at_line_rate() {
        let cfg = RpConfig {
            release_at_line_rate: true,
            ..exact(RpConfig::default())
        };
        let mut rp = ReactionPoint::new(cfg, RateBps(G)).unwrap();
        let mut rng = Rng::new(1, 8);
        // q = 1: CR = 1e9·127/128 = 992187500; 4 FR steps halve the gap 7812500 to 488281.25
        // (CR 999511718.75); the 5th (AI) gives (999511718.75 + 1.005e9)/2 > 1e9 -> line
        // rate -> released.
        rp.on_cnm(ms(0), 1, &mut rng);
        assert_eq!(rp.current_rate_bps(), 992_187_500.0);
        for _ in 0..4 {
            rp.on_bytes_sent(ms(1), CYCLE, &mut rng);
        }
        assert_eq!(rp.current_rate_bps(), 999_511_718.75);
        assert!(rp.is_active());
        rp.on_bytes_sent(ms(1), CYCLE, &mut rng);
        assert!(!rp.is_active());
        assert_eq!(rp.stats.releases, 1);
        assert_eq!(rp.next_deadline(), SimTime::NEVER);
        assert_eq!(rp.next_departure(ms(2), 1500), ms(2));
        // Re-created by the next CNM with CR = TR = line rate.
        rp.on_cnm(ms(3), 32, &mut rng);
        assert!(rp.is_active());
        assert_eq!(rp.target_rate_bps(), 1e9);
        assert_eq!(rp.current_rate_bps(), 750e6);
        assert_eq!(rp.stats.activations, 2);
    }

    #[test]
    fn rp_jitter_bounds() {
        let mut rp = ReactionPoint::new(RpConfig::default(), RateBps(10 * G)).unwrap();
        let mut rng = Rng::new(3, 9);
        rp.on_cnm(ms(0), 1, &mut rng);
        let (mut blo, mut bhi) = (i64::MAX, i64::MIN);
        let (mut tlo, mut thi) = (u64::MAX, u64::MIN);
        let mut now = ms(0);
        for i in 0..4000 {
            // Keep it out of HAI: a CNM every 4 events resets the stages.
            if i % 4 == 0 {
                rp.on_cnm(now, 1, &mut rng);
            }
            rp.on_bytes_sent(now, 300_000, &mut rng);
            if rp.phase() != Some(Phase::HyperActiveIncrease) {
                blo = blo.min(rp.bc_left());
                bhi = bhi.max(rp.bc_left());
            }
            let d = rp.next_deadline();
            let gap = d.0 - now.0;
            tlo = tlo.min(gap);
            thi = thi.max(gap);
            now = d;
            assert!(rp.on_timer(now, &mut rng));
        }
        // 150000·[0.85, 1.15] and 15 ms·[0.85, 1.15].
        assert!(blo >= 127_500 && bhi <= 172_500, "{blo} {bhi}");
        assert!(blo < 128_500 && bhi > 171_500, "{blo} {bhi}");
        assert!(
            tlo >= 12_750_000_000 && thi <= 17_250_000_000,
            "{tlo} {thi}"
        );
        assert!(tlo < 12_900_000_000 && thi > 17_100_000_000, "{tlo} {thi}");
    }

    #[test]
    fn pacing_at_current_rate() {
        let mut rp = rp_1g();
        let mut rng = Rng::new(1, 10);
        rp.on_cnm(SimTime(0), 32, &mut rng); // CR = 750 Mb/s
        assert_eq!(rp.current_rate(), RateBps(750_000_000));
        assert_eq!(rp.next_departure(SimTime(0), 1500), SimTime(0));
        rp.on_bytes_sent(SimTime(0), 1500, &mut rng);
        // 12000 bit / 750e6 b/s = 16 us.
        assert_eq!(rp.next_departure(SimTime(0), 1500), SimTime::from_us(16));
        assert_eq!(
            rp.next_departure(SimTime::from_us(10), 1500),
            SimTime::from_us(16)
        );
        assert_eq!(
            rp.next_departure(SimTime::from_us(20), 1500),
            SimTime::from_us(20)
        );
        // Back-to-back frames: 2 x 1500 B at 16 us and 32 us.
        rp.on_bytes_sent(SimTime::from_us(16), 1500, &mut rng);
        assert_eq!(
            rp.next_departure(SimTime::from_us(16), 64),
            SimTime::from_us(32)
        );
        // At 24 us half of the debt (6000 bit) is left; a CNM q=32 (BC = 0) cuts CR to
        // 562.5 Mb/s: 6000 bit / 562.5e6 = 10.6667 us -> ceil to ps = 10666667 ps.
        rp.on_cnm(SimTime::from_us(24), 32, &mut rng);
        assert_eq!(rp.current_rate_bps(), 562.5e6);
        assert_eq!(
            rp.next_departure(SimTime::from_us(24), 1500),
            SimTime(24_000_000 + 10_666_667)
        );
    }

    #[test]
    fn token_bucket_allows_bursts() {
        let cfg = RpConfig {
            bucket_bytes: 3000,
            ..exact(RpConfig::default())
        };
        let mut rp = ReactionPoint::new(cfg, RateBps(G)).unwrap();
        let mut rng = Rng::new(1, 11);
        rp.on_cnm(SimTime(0), 32, &mut rng); // 750 Mb/s, bucket full (3000 B)
        rp.on_bytes_sent(SimTime(0), 1500, &mut rng);
        assert_eq!(rp.next_departure(SimTime(0), 1500), SimTime(0));
        rp.on_bytes_sent(SimTime(0), 1500, &mut rng);
        // Empty: 1500 B need 16 us; a 9000-B frame needs a full bucket (3000 B): 32 us.
        assert_eq!(rp.next_departure(SimTime(0), 1500), SimTime::from_us(16));
        assert_eq!(rp.next_departure(SimTime(0), 9000), SimTime::from_us(32));
        // Tokens never exceed the depth: after 1 s idle, still 2 frames then a wait.
        let t = SimTime::from_ms(1000);
        rp.on_bytes_sent(t, 1500, &mut rng);
        rp.on_bytes_sent(t, 1500, &mut rng);
        assert_eq!(rp.next_departure(t, 1500), t + SimTime::from_us(16));
    }
}

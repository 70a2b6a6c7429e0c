//! DCQCN, the reaction point (RP) of Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015, as a rate controller of the RoCE queue pair
//! (docs/models.md §11).
//!
//! State: the current rate R_C (what the limiter sends at), the target rate R_T, the
//! congestion estimate α, the timer and byte-counter stages T and BC (rate-increase events
//! since the last rate decrease), the bytes sent in the current byte cycle.
//!
//! - **Decrease.** A congestion notification cuts the rate, `R_T = R_C`,
//!   `R_C = max(min_rate, R_C·(1 − α/2))`, and restarts the increase stages. The paper cuts
//!   at once, with the α held before the notification, then raises α
//!   (`α = (1 − g)·α + g`); the HPCC authors' ns-3 fork ([`DcqcnConfig::hpcc_fork`]) only
//!   notes the notification and cuts at its next periodic decrease check, with the α its
//!   own periodic update has by then (which, but for a notification in the last
//!   nanosecond before a check, already counts it).
//! - **α.** The paper lowers α, `α = (1 − g)·α`, every K without a notification (the period
//!   restarts at each one); the fork updates α on a fixed grid of period K from its first
//!   notification, raising it once if a notification arrived since the previous update and
//!   lowering it otherwise. Both are computed on demand from the grid (no engine event per
//!   period): the same values as the periodic timer, without the events.
//! - **Increase.** Each expiry of the increase timer (period T, restarted by a decrease)
//!   and each B bytes sent (the byte counter, paper only) is an increase event; it counts in
//!   its stage, then moves the rates by [`IncreaseRule`]: fast recovery
//!   `R_C = (R_T + R_C)/2`, additive increase `R_T += R_AI` then the same averaging, hyper
//!   increase `R_T += i·R_HAI` (paper) or `R_T += R_HAI` (fork) then the averaging. R_T and
//!   R_C never exceed the line rate; the timer and the counter stop once R_C is back at the
//!   line rate (every later event would leave the rates where they are).
//!
//! Rates are real numbers of bits per second; [`RateControl::rate`] rounds R_C.

use super::{AckInfo, RateControl};
use crate::base::timer::LazyTimer;
use crate::base::units::{RateBps, SimTime};

/// How α evolves between notifications.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlphaRule {
    /// Paper: raised at each notification (after the rate cut), lowered every
    /// `alpha_interval` without one; the period restarts at each notification.
    OnCnp,
    /// Fork (`RdmaHw::UpdateAlphaMlx`): a fixed grid of period `alpha_interval` from the first
    /// notification; at each grid point α rises once if a notification arrived since the
    /// previous point, else decays. The first notification sets α to `alpha_init` and is not
    /// counted as a rise.
    Periodic,
}

/// Which increase an event makes, from the stages T (timer) and BC (byte counter), both
/// counting the event itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncreaseRule {
    /// Paper: fast recovery while `max(T, BC) ≤ F`; hyper increase `R_T += i·R_HAI` with
    /// `i = min(T, BC) − F` once both exceed F; additive increase otherwise.
    Paper,
    /// Fork (`RdmaHw::RateIncEventMlx`, timer only): fast recovery while `T ≤ F`, one
    /// additive increase at `T = F + 1`, then hyper increase `R_T += R_HAI` (not scaled).
    TimerOnly,
}

/// Every constant of a DCQCN profile: the reaction point's, and the notification point's and
/// congestion point's for the scenario that builds the fabric around it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnConfig {
    /// The rate a queue pair starts at and never exceeds.
    pub line_rate: RateBps,
    /// The floor of a rate decrease.
    pub min_rate: RateBps,
    /// g, the gain of α.
    pub g: f64,
    /// α when the first notification arrives.
    pub alpha_init: f64,
    /// K: the α period.
    pub alpha_interval: SimTime,
    pub alpha_rule: AlphaRule,
    /// None: decrease at each notification (paper). Some(p): a decrease check every p from
    /// the first notification, plus 1 ns (the fork's `ScheduleDecreaseRateMlx`), cutting once
    /// if a notification arrived since the previous check.
    pub decrease_interval: Option<SimTime>,
    /// On the first notification, `R_C = R_T = first_cnp_rate·R_C` before anything else
    /// (the fork's `RateOnFirstCNP`; 1 changes nothing).
    pub first_cnp_rate: f64,
    /// T: the period of the rate-increase timer.
    pub increase_interval: SimTime,
    /// B: bytes per byte-counter event (None: no byte counter).
    pub byte_counter: Option<u64>,
    /// F: the number of fast-recovery events.
    pub fast_recovery: u32,
    pub rule: IncreaseRule,
    pub r_ai: RateBps,
    pub r_hai: RateBps,
    /// Whether every decrease sets `R_T = R_C` (paper); false: only when a timer increase
    /// happened since the previous decrease (the fork's `ClampTargetRate = false`).
    pub clamp_target: bool,
    /// Whether an ACK's congestion echo counts as a notification (the fork's per-ACK echo).
    pub ce_echo_is_cnp: bool,
    /// Notification point: at most one CNP per flow per this interval (zero: one per marked
    /// packet). Read by the receiver, not by this controller.
    pub cnp_interval: SimTime,
    /// Congestion point (RED-like, instantaneous egress queue in bytes): Kmin, Kmax, Pmax.
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

impl DcqcnConfig {
    /// The paper's constants (Zhu et al., "Congestion Control for Large-Scale RDMA
    /// Deployments", SIGCOMM 2015, evaluated at 40 Gb/s; rates are absolute, not scaled with
    /// `line_rate`). Where the paper gives no value the comment names the source used.
    pub fn paper(line_rate: RateBps) -> DcqcnConfig {
        DcqcnConfig {
            line_rate,
            // Not in the paper: the DCQCN authors' ns-3 code (bobzhuyb/ns3-rdma,
            // `QbbNetDevice` attribute MinRate) defaults to 100 Mb/s.
            min_rate: RateBps(100_000_000),
            // Paper (RP algorithm, parameter list): g = 1/256.
            g: 1.0 / 256.0,
            // Not in the paper: 1, as the fork (`RdmaHw::cnp_received_mlx`); the authors'
            // ns-3 code (bobzhuyb/ns3-rdma) starts at 0.5.
            alpha_init: 1.0,
            // Paper (RP algorithm): α decays every K = 55 µs without a CNP (K above the NP's
            // 50 µs CNP interval).
            alpha_interval: SimTime::from_us(55),
            alpha_rule: AlphaRule::OnCnp,
            // Paper (RP algorithm): the rate decreases at each CNP.
            decrease_interval: None,
            first_cnp_rate: 1.0,
            // Paper (parameter list): rate-increase timer T = 55 µs.
            increase_interval: SimTime::from_us(55),
            // Paper (parameter list): byte counter B = 10 MB.
            byte_counter: Some(10_000_000),
            // Paper (RP algorithm): F = 5 fast-recovery steps.
            fast_recovery: 5,
            rule: IncreaseRule::Paper,
            // Paper (parameter list, 40 Gb/s): R_AI = 40 Mb/s (also RATE_AI in the authors'
            // ns-3 sample configuration, bobzhuyb/ns3-rdma `mix/config.txt`).
            r_ai: RateBps(40_000_000),
            // Not in the paper: the authors' ns-3 sample configuration
            // (bobzhuyb/ns3-rdma `mix/config.txt`, RATE_HAI beside RATE_AI 40 Mb/s).
            r_hai: RateBps(200_000_000),
            // Paper (RP algorithm): R_T = R_C at every CNP.
            clamp_target: true,
            // Paper: CNPs are separate packets from the notification point.
            ce_echo_is_cnp: false,
            // Paper (NP algorithm): at most one CNP per flow every N = 50 µs.
            cnp_interval: SimTime::from_us(50),
            // Paper (CP algorithm and buffer settings): Kmin = 5 KB, Kmax = 200 KB,
            // Pmax = 1 %.
            kmin: 5_000,
            kmax: 200_000,
            pmax: 0.01,
        }
    }

    /// What the HPCC authors' ns-3 fork runs as DCQCN (their "mlx" variant, `CC_MODE 1`),
    /// as its `run.py` configures `--cc dcqcn` (github alibaba-edu/
    /// High-Precision-Congestion-Control, `simulation/run.py`, read with
    /// `simulation/src/point-to-point/model/rdma-hw.cc` and `switch-mmu.cc`).
    pub fn hpcc_fork(line_rate: RateBps) -> DcqcnConfig {
        // run.py scales R_AI, R_HAI and the marking thresholds with the NIC rate in Gb/s
        // ("bw"); `per_gbps(x)` is x per Gb/s of line rate (run.py's integer division
        // rounds down; at multiples of 5 Gb/s, e.g. 10, 25, 40, 100, the two agree).
        let per_gbps = |x: f64| x * line_rate.0 as f64 / 1e9;
        DcqcnConfig {
            line_rate,
            // run.py template: MIN_RATE 1000Mb/s (rdma-hw.cc's attribute default is 100 Mb/s).
            min_rate: RateBps(1_000_000_000),
            // run.py `--cc dcqcn`: g = 0.00390625 = 1/256 (EWMA_GAIN).
            g: 1.0 / 256.0,
            // `RdmaHw::cnp_received_mlx`: α = 1 on the first CNP.
            alpha_init: 1.0,
            // run.py `--cc dcqcn`: t_alpha = 1 (ALPHA_RESUME_INTERVAL, µs);
            // `RdmaHw::UpdateAlphaMlx` runs on that period.
            alpha_interval: SimTime::from_us(1),
            alpha_rule: AlphaRule::Periodic,
            // run.py `--cc dcqcn`: t_dec = 4 (RATE_DECREASE_INTERVAL, µs);
            // `RdmaHw::CheckRateDecreaseMlx`.
            decrease_interval: Some(SimTime::from_us(4)),
            // rdma-hw.cc attribute RateOnFirstCNP (default 1.0; run.py does not set it).
            first_cnp_rate: 1.0,
            // run.py `--cc dcqcn`: t_inc = 300 (RP_TIMER, µs); `RdmaHw::RateIncEventTimerMlx`.
            increase_interval: SimTime::from_us(300),
            // The mlx variant has no byte counter (`RdmaHw::RateIncEventMlx` is timer only).
            byte_counter: None,
            // run.py template: FAST_RECOVERY_TIMES 1 (rdma-hw.cc's default is 5).
            fast_recovery: 1,
            rule: IncreaseRule::TimerOnly,
            // run.py `--cc dcqcn`: ai = 5·bw/25 Mb/s, hai = 50·bw/25 Mb/s.
            r_ai: RateBps((per_gbps(5.0 / 25.0) * 1e6).round() as u64),
            r_hai: RateBps((per_gbps(50.0 / 25.0) * 1e6).round() as u64),
            // run.py template: CLAMP_TARGET_RATE 0.
            clamp_target: false,
            // `RdmaHw::ReceiveUdp` sets the CNP flag on the ACK of a marked packet and
            // `RdmaHw::ReceiveAck` reacts to it; run.py sets L2_ACK_INTERVAL 1 (every packet).
            ce_echo_is_cnp: true,
            cnp_interval: SimTime::ZERO,
            // run.py: KMIN_MAP 100·bw/25 KB, KMAX_MAP 400·bw/25 KB, PMAX_MAP 0.2 (and the same
            // per Gb/s at 4·bw); `SwitchMmu::ConfigEcn` multiplies by 1000.
            kmin: (per_gbps(100.0 / 25.0) * 1000.0).round() as u64,
            kmax: (per_gbps(400.0 / 25.0) * 1000.0).round() as u64,
            pmax: 0.2,
        }
    }
}

/// Timer numbers (below `CC_TIMERS`).
pub const TIMER_INCREASE: u8 = 0;
pub const TIMER_DECREASE: u8 = 1;

/// The DCQCN reaction point of one queue pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Dcqcn {
    pub cfg: DcqcnConfig,
    /// R_C and R_T, bits per second.
    pub rc: f64,
    pub rt: f64,
    /// α as of `alpha_at` (OnCnp: the last notification; Periodic: the last grid point
    /// applied).
    alpha: f64,
    alpha_at: SimTime,
    /// Periodic α: a notification arrived since the last grid point.
    alpha_flag: bool,
    /// Periodic decrease: a notification arrived since the last check.
    decrease_flag: bool,
    /// The first decrease check (the grid of the periodic checks).
    decrease_origin: SimTime,
    /// Whether a notification ever arrived.
    pub started: bool,
    /// T and BC: increase events since the last decrease.
    pub t_stage: u32,
    pub bc_stage: u32,
    /// Bytes sent in the current byte cycle.
    pub bytes: u64,
    timers: [LazyTimer; 2],
}

impl Dcqcn {
    pub fn new(cfg: DcqcnConfig) -> Dcqcn {
        let line = cfg.line_rate.0 as f64;
        Dcqcn {
            cfg,
            rc: line,
            rt: line,
            alpha: cfg.alpha_init,
            alpha_at: SimTime::ZERO,
            alpha_flag: false,
            decrease_flag: false,
            decrease_origin: SimTime::ZERO,
            started: false,
            t_stage: 0,
            bc_stage: 0,
            bytes: 0,
            timers: [LazyTimer::default(); 2],
        }
    }

    /// α at `now` (without changing the state).
    pub fn alpha(&self, now: SimTime) -> f64 {
        self.alpha_after(now).0
    }

    /// α at `now` and the last grid point applied to reach it.
    fn alpha_after(&self, now: SimTime) -> (f64, SimTime) {
        let k = self.cfg.alpha_interval.0.max(1);
        let n = now.0.saturating_sub(self.alpha_at.0) / k;
        if !self.started || n == 0 {
            return (self.alpha, self.alpha_at);
        }
        let keep = 1.0 - self.cfg.g;
        let mut a = self.alpha;
        let mut decays = n;
        if self.cfg.alpha_rule == AlphaRule::Periodic && self.alpha_flag {
            a = keep * a + self.cfg.g;
            decays -= 1;
        }
        // (1 − g)^n underflows long before n leaves i32.
        a *= keep.powi(decays.min(1 << 20) as i32);
        (a, SimTime(self.alpha_at.0 + n * k))
    }

    /// Apply the α grid up to `now` (Periodic: also clears the notification flag).
    fn advance_alpha(&mut self, now: SimTime) {
        if self.cfg.alpha_rule == AlphaRule::Periodic {
            let (a, at) = self.alpha_after(now);
            if at != self.alpha_at {
                self.alpha = a;
                self.alpha_at = at;
                self.alpha_flag = false;
            }
        }
    }

    /// The target rate R_T.
    pub fn target(&self) -> RateBps {
        RateBps(self.rt.round() as u64)
    }

    fn line(&self) -> f64 {
        self.cfg.line_rate.0 as f64
    }

    /// A congestion notification at `now`.
    fn notify(&mut self, now: SimTime) {
        if !self.started {
            self.started = true;
            self.rc *= self.cfg.first_cnp_rate;
            self.rt = self.rc;
            self.alpha = self.cfg.alpha_init;
            self.alpha_at = now;
            self.decrease_origin = now + SimTime::from_ns(1);
            if self.cfg.alpha_rule == AlphaRule::Periodic {
                // The first notification sets α; it is not counted as a rise.
                self.note_decrease(now);
                return;
            }
        }
        match self.cfg.alpha_rule {
            AlphaRule::OnCnp => {
                let a = self.alpha(now);
                if self.cfg.decrease_interval.is_none() {
                    self.decrease(now, a);
                } else {
                    self.note_decrease(now);
                }
                self.alpha = (1.0 - self.cfg.g) * a + self.cfg.g;
                self.alpha_at = now;
            }
            AlphaRule::Periodic => {
                self.advance_alpha(now);
                self.alpha_flag = true;
                if self.cfg.decrease_interval.is_none() {
                    let a = self.alpha;
                    self.decrease(now, a);
                } else {
                    self.note_decrease(now);
                }
            }
        }
    }

    /// Note a notification for the next periodic decrease check (the first check point
    /// strictly after `now`).
    fn note_decrease(&mut self, now: SimTime) {
        let Some(p) = self.cfg.decrease_interval else {
            return;
        };
        if self.decrease_flag {
            return;
        }
        self.decrease_flag = true;
        let p = p.0.max(1);
        let o = self.decrease_origin.0;
        let k = if now.0 < o + p {
            1
        } else {
            (now.0 - o) / p + 1
        };
        self.timers[TIMER_DECREASE as usize].set(SimTime(o + k * p));
    }

    /// Cut the rate with `alpha` and restart the increase stages at `now`.
    fn decrease(&mut self, now: SimTime, alpha: f64) {
        if self.cfg.clamp_target || self.t_stage != 0 {
            self.rt = self.rc;
        }
        let min = self.cfg.min_rate.0 as f64;
        self.rc = (self.rc * (1.0 - alpha / 2.0)).max(min).min(self.line());
        self.t_stage = 0;
        self.bc_stage = 0;
        self.bytes = 0;
        self.timers[TIMER_INCREASE as usize].set(now + self.cfg.increase_interval);
    }

    /// One increase event (its stage already counted).
    fn increase(&mut self) {
        let f = self.cfg.fast_recovery;
        let (t, bc) = (self.t_stage, self.bc_stage);
        let step = match self.cfg.rule {
            IncreaseRule::Paper => {
                let (lo, hi) = if self.cfg.byte_counter.is_some() {
                    (t.min(bc), t.max(bc))
                } else {
                    (t, t)
                };
                if hi <= f {
                    0.0
                } else if lo > f {
                    (lo - f) as f64 * self.cfg.r_hai.0 as f64
                } else {
                    self.cfg.r_ai.0 as f64
                }
            }
            IncreaseRule::TimerOnly => {
                if t <= f {
                    0.0
                } else if t == f + 1 {
                    self.cfg.r_ai.0 as f64
                } else {
                    self.cfg.r_hai.0 as f64
                }
            }
        };
        let line = self.line();
        self.rt = (self.rt + step).min(line);
        self.rc = ((self.rt + self.rc) / 2.0).min(line);
    }

    /// Whether R_C is back at the line rate (the increase machinery then stops).
    fn at_line_rate(&self) -> bool {
        self.rc >= self.line()
    }
}

impl RateControl for Dcqcn {
    fn rate(&self) -> RateBps {
        RateBps(self.rc.round() as u64)
    }

    fn on_cnp(&mut self, now: SimTime) {
        self.notify(now);
    }

    fn on_ack(&mut self, now: SimTime, ack: &AckInfo) {
        if ack.ce_echo && self.cfg.ce_echo_is_cnp {
            self.notify(now);
        }
    }

    fn on_sent(&mut self, _now: SimTime, bytes: u32) {
        let Some(b) = self.cfg.byte_counter else {
            return;
        };
        if !self.started || self.at_line_rate() {
            return;
        }
        self.bytes += bytes as u64;
        if self.bytes >= b {
            self.bytes -= b;
            self.bc_stage += 1;
            self.increase();
        }
    }

    fn next_timer(&mut self) -> Option<(u8, SimTime)> {
        (0..2u8).find_map(|t| self.timers[t as usize].take_event().map(|at| (t, at)))
    }

    fn timer_due(&mut self, now: SimTime, t: u8) -> bool {
        self.timers
            .get_mut(t as usize)
            .is_some_and(|timer| timer.fire(now))
    }

    fn on_timer(&mut self, now: SimTime, t: u8) {
        match t {
            TIMER_INCREASE => {
                self.t_stage += 1;
                self.increase();
                if !self.at_line_rate() {
                    let next = now + self.cfg.increase_interval;
                    self.timers[TIMER_INCREASE as usize].set(next);
                }
            }
            TIMER_DECREASE if self.decrease_flag => {
                self.decrease_flag = false;
                self.advance_alpha(now);
                let a = self.alpha(now);
                self.decrease(now, a);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "dcqcn_tests.rs"]
mod tests;

//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter",
//! SIGCOMM 2015) as a rate controller of the RoCE queue pair (docs/models.md §13).
//!
//! TIMELY adjusts the rate at each *completion event* from the round-trip time the event
//! measures. Per event, with `rtt` the new sample and `prev` the previous event's:
//!
//! - the RTT difference is smoothed, `diff = (1 − α)·diff + α·(rtt − prev)`, and normalised
//!   by the minimum RTT, `g = diff / min_rtt` (the gradient);
//! - below `T_low` the rate rises additively, `R += δ`;
//! - above `T_high` it falls in proportion to the excess, `R = R·(1 − β·(1 − T_high/rtt))`;
//! - in between it follows the gradient: `g ≤ 0` raises it, `R += N·δ` (N = 1, or the
//!   hyperactive increase N = 5 once the gradient has stayed ≤ 0 for 5 consecutive
//!   events), `g > 0` lowers it, `R = R·(1 − β·g)`.
//!
//! The rate stays within [`TimelyConfig::min_rate`, line rate].
//!
//! **Completion events.** The paper's event is the completion of a segment (16 KB by
//! default) of a message; dcnsim's queue pair acknowledges each packet, so the paper profile
//! makes an event of every `segment` newly acknowledged bytes ([`Update::Segment`]), with the
//! RTT of the ACK that completes it: per-ACK events would apply δ once per 1 KB packet, 16
//! times as often as the paper's increase rate. The HPCC authors' ns-3 fork updates once per
//! round trip ([`Update::PerRtt`]: when an ACK acknowledges a packet sent after the previous
//! update), with its own hyperactive-increase rule ([`HaiRule::Increases`]).
//!
//! Rates are real numbers of bits per second; [`RateControl::rate`] rounds.

use super::{AckInfo, RateControl};
use crate::base::units::{RateBps, SimTime};

/// What makes a completion event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// Every this many newly acknowledged bytes (the paper's segment), the RTT of the ACK
    /// that completes it.
    Segment(u64),
    /// Once per round trip: an ACK for a packet sent at or after the previous update (the
    /// fork's `RdmaHw::HandleAckTimely`, `m_lastUpdateSeq`). The first event only records the
    /// RTT (the fork's `UpdateRateTimely` on its first round trip).
    PerRtt,
}

/// When an increase is hyperactive and by how much.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HaiRule {
    /// Paper: once the normalised gradient has been ≤ 0 for `hai_after` consecutive events
    /// (this one included), a gradient increase is `n·δ`; increases below `T_low` stay δ.
    Gradient { n: u32 },
    /// Fork (`RdmaHw::UpdateRateTimely`): after `hai_after` consecutive increases of either
    /// kind (counted since the last decrease, this one not included), every increase is
    /// `r_hai` instead of δ.
    Increases { r_hai: RateBps },
}

/// Every constant of a TIMELY profile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelyConfig {
    /// The rate a queue pair starts at and never exceeds.
    pub line_rate: RateBps,
    /// The floor of a decrease.
    pub min_rate: RateBps,
    /// α: the weight of the new RTT difference in the smoothed difference.
    pub alpha: f64,
    /// β: the multiplicative-decrease factor.
    pub beta: f64,
    pub t_low: SimTime,
    pub t_high: SimTime,
    /// δ: the additive increment.
    pub delta: RateBps,
    /// Consecutive events before the hyperactive increase.
    pub hai_after: u32,
    pub hai: HaiRule,
    /// The RTT the gradient is normalised by (None: the smallest sample so far).
    pub min_rtt: Option<SimTime>,
    pub update: Update,
}

impl TimelyConfig {
    /// The paper's constants (its §6: "segment size of 16 KB, T_low of 50 µs, T_high of
    /// 500 µs, additive increment of 10 Mbps, β of 0.8"; Algorithm 1 for N = 5 after five
    /// events). Where the paper gives no value the comment names the source used.
    pub fn paper(line_rate: RateBps) -> TimelyConfig {
        TimelyConfig {
            line_rate,
            // Not in the paper (the authors' published code snippet leaves the floor
            // optional): one additive step, 10 Mb/s.
            min_rate: RateBps(10_000_000),
            // Not among the paper's §6 parameters: 0.875, the HPCC authors' fork
            // (`RdmaHw` attribute TimelyAlpha). The TIMELY authors' later code snippet
            // recommends 0.02.
            alpha: 0.875,
            beta: 0.8,
            t_low: SimTime::from_us(50),
            t_high: SimTime::from_us(500),
            delta: RateBps(10_000_000),
            hai_after: 5,
            hai: HaiRule::Gradient { n: 5 },
            // The paper normalises by the minimum RTT without a number; the queue pair's
            // smallest sample is the path's base RTT in simulation.
            min_rtt: None,
            update: Update::Segment(16_000),
        }
    }

    /// What the HPCC authors' ns-3 fork runs as TIMELY (`CC_MODE 7`), as its `run.py`
    /// configures `--cc timely` (github alibaba-edu/High-Precision-Congestion-Control,
    /// `simulation/run.py` read with `simulation/src/point-to-point/model/rdma-hw.cc`,
    /// `RdmaHw::UpdateRateTimely` and the `RdmaHw` attribute defaults).
    pub fn hpcc_fork(line_rate: RateBps) -> TimelyConfig {
        // run.py `--cc timely`: ai = 10·bw/10 Mb/s, hai = 50·bw/10 Mb/s, bw the NIC rate in
        // Gb/s.
        let per_gbps = |x: f64| RateBps((x * line_rate.0 as f64 / 1e9 * 1e6).round() as u64);
        TimelyConfig {
            line_rate,
            // run.py template: MIN_RATE 1000Mb/s.
            min_rate: RateBps(1_000_000_000),
            // Attribute defaults (run.py sets none of them): TimelyAlpha 0.875, TimelyBeta
            // 0.8, TimelyTLow 50 µs, TimelyTHigh 500 µs, TimelyMinRtt 20 µs.
            alpha: 0.875,
            beta: 0.8,
            t_low: SimTime::from_us(50),
            t_high: SimTime::from_us(500),
            delta: per_gbps(1.0),
            // `UpdateRateTimely`: the literal 5 of `m_incStage < 5`.
            hai_after: 5,
            hai: HaiRule::Increases {
                r_hai: per_gbps(5.0),
            },
            min_rtt: Some(SimTime::from_us(20)),
            update: Update::PerRtt,
        }
    }
}

/// The TIMELY sender of one queue pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Timely {
    pub cfg: TimelyConfig,
    /// The current rate, bits per second.
    pub rate: f64,
    /// The smoothed RTT difference, picoseconds.
    pub rtt_diff: f64,
    /// The RTT of the previous event.
    pub prev_rtt: Option<SimTime>,
    /// The smallest RTT sample (the normaliser when `cfg.min_rtt` is None).
    pub min_seen: Option<SimTime>,
    /// Bytes acknowledged towards the next segment.
    pub acked: u64,
    /// PerRtt: the time of the last update.
    pub last_update: Option<SimTime>,
    /// Consecutive events with gradient ≤ 0 (Gradient rule) or increases (Increases rule).
    pub streak: u32,
    /// Completion events so far.
    pub events: u64,
}

impl Timely {
    pub fn new(cfg: TimelyConfig) -> Timely {
        Timely {
            cfg,
            rate: cfg.line_rate.0 as f64,
            rtt_diff: 0.0,
            prev_rtt: None,
            min_seen: None,
            acked: 0,
            last_update: None,
            streak: 0,
            events: 0,
        }
    }

    /// The gradient the next event would normalise with.
    fn normaliser(&self, rtt: SimTime) -> f64 {
        let m = self.cfg.min_rtt.or(self.min_seen).unwrap_or(rtt);
        m.0.max(1) as f64
    }

    /// Whether this ACK completes an event.
    fn is_event(&mut self, now: SimTime, ack: &AckInfo) -> bool {
        match self.cfg.update {
            Update::Segment(seg) => {
                self.acked += ack.acked;
                if self.acked < seg.max(1) {
                    return false;
                }
                self.acked %= seg.max(1);
                true
            }
            Update::PerRtt => {
                let sent = now - ack.rtt;
                if self.last_update.is_some_and(|u| sent < u) {
                    return false;
                }
                self.last_update = Some(now);
                true
            }
        }
    }

    /// One completion event with RTT sample `rtt`.
    pub fn event(&mut self, rtt: SimTime) {
        self.events += 1;
        let Some(prev) = self.prev_rtt else {
            self.prev_rtt = Some(rtt);
            if self.cfg.update == Update::PerRtt {
                return;
            }
            self.adjust(rtt, 0.0);
            return;
        };
        self.prev_rtt = Some(rtt);
        let new_diff = rtt.0 as f64 - prev.0 as f64;
        self.adjust(rtt, new_diff);
    }

    /// Smooth the difference `new_diff` and move the rate.
    fn adjust(&mut self, rtt: SimTime, new_diff: f64) {
        let c = &self.cfg;
        self.rtt_diff = (1.0 - c.alpha) * self.rtt_diff + c.alpha * new_diff;
        let g = self.rtt_diff / self.normaliser(rtt);
        if let HaiRule::Gradient { .. } = c.hai {
            self.streak = if g <= 0.0 { self.streak + 1 } else { 0 };
        }
        let r = rtt.0 as f64;
        if rtt < c.t_low {
            self.increase(false);
        } else if rtt > c.t_high {
            self.decrease(1.0 - c.beta * (1.0 - c.t_high.0 as f64 / r));
        } else if g <= 0.0 {
            self.increase(true);
        } else {
            self.decrease(1.0 - c.beta * g);
        }
    }

    /// An additive increase (`gradient`: in the gradient band, where the paper's
    /// hyperactive increase applies).
    fn increase(&mut self, gradient: bool) {
        let c = &self.cfg;
        let delta = c.delta.0 as f64;
        let step = match c.hai {
            HaiRule::Gradient { n } if gradient && self.streak >= c.hai_after => n as f64 * delta,
            HaiRule::Gradient { .. } => delta,
            HaiRule::Increases { r_hai } => {
                let s = if self.streak < c.hai_after {
                    delta
                } else {
                    r_hai.0 as f64
                };
                self.streak += 1;
                s
            }
        };
        self.rate = (self.rate + step).min(c.line_rate.0 as f64);
    }

    /// A multiplicative decrease by `factor` (negative factors floor at the minimum rate).
    fn decrease(&mut self, factor: f64) {
        let c = &self.cfg;
        if let HaiRule::Increases { .. } = c.hai {
            self.streak = 0;
        }
        let min = c.min_rate.0 as f64;
        self.rate = (self.rate * factor.max(0.0))
            .max(min)
            .min(c.line_rate.0 as f64);
    }
}

impl RateControl for Timely {
    fn rate(&self) -> RateBps {
        RateBps(self.rate.round() as u64)
    }

    fn on_ack(&mut self, now: SimTime, ack: &AckInfo) {
        if self.min_seen.is_none_or(|m| ack.rtt < m) {
            self.min_seen = Some(ack.rtt);
        }
        if self.is_event(now, ack) {
            self.event(ack.rtt);
        }
    }
}

#[cfg(test)]
#[path = "timely_tests.rs"]
mod tests;

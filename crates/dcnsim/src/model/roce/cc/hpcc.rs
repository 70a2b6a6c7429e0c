//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, §3.3 and its
//! Algorithm 1) as a rate and window controller of the RoCE queue pair (docs/models.md §15).
//!
//! Each ACK echoes the INT hop records its data packet collected (`model/roce/int.rs`);
//! the sender keeps the previous ACK's records. Per ACK, for every hop i with records
//! (rate B, time ts, transmitted bytes, queue q) now and before:
//!
//! - the hop's normalised in-flight bytes `u_i = min(q, q_prev)·8/(B·T) + txRate/B`, with
//!   `txRate = Δbytes·8/Δts` and T the base round-trip time;
//! - the most loaded hop gives `U'` and its `τ = Δts`, capped at T;
//! - the estimate is the EWMA `U = (1 − τ/T)·U + (τ/T)·U'`.
//!
//! The rate follows from a reference rate R_c (the paper's reference window W_c = R_c·T):
//! with `k = U/η`, if `k ≥ 1` or the increase stage has reached `max_stage`, `R = R_c/k +
//! R_AI` (the stage restarts), else `R = R_c + R_AI` (one more stage). Every ACK sets R (the
//! paper's per-ACK reaction); R_c and the stage change only on the first ACK of a packet
//! sent after the previous such update — once per round trip. R stays within [`min_rate`,
//! line rate]; the window is `R·T`, so the queue pair also never has more than that in
//! flight (the paper's window and pacing rate; the HPCC authors' ns-3 simulator with
//! `VAR_WIN`).
//!
//! The first ACK with records only stores them (and starts the first round trip). A hop
//! whose time has not advanced since the previous ACK gives no rate and is skipped; an ACK
//! with no usable hop changes nothing but the stored records. With `U = 0` (an idle path)
//! the rate goes to the line rate.
//!
//! [`min_rate`]: HpccConfig::min_rate

use super::{AckInfo, RateControl};
use crate::base::int::{IntHop, MAX_HOPS};
use crate::base::units::{RateBps, SimTime};

/// Every constant of an HPCC profile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccConfig {
    /// The rate a queue pair starts at and never exceeds.
    pub line_rate: RateBps,
    /// T: the base round-trip time of the EWMA and of the window `R·T`.
    pub base_rtt: SimTime,
    /// η: the target utilisation.
    pub eta: f64,
    /// maxStage: additive increases before a multiplicative step while below η.
    pub max_stage: u32,
    /// R_AI = W_AI/T: the additive increase.
    pub rate_ai: RateBps,
    /// The floor of a decrease.
    pub min_rate: RateBps,
}

impl HpccConfig {
    /// The paper's profile: η = 95 % and maxStage = 5 (§5.1's settings). The additive step
    /// and the floor are not re-read from the paper here: the step is the HPCC simulator's
    /// (below), the floor its sample configuration's (`mix/config.txt`, `MIN_RATE 100Mb/s`).
    pub fn paper(line_rate: RateBps, base_rtt: SimTime) -> HpccConfig {
        HpccConfig {
            line_rate,
            base_rtt,
            eta: 0.95,
            max_stage: 5,
            // The simulator's `run.py` for HPCC: RATE_AI = 10·bw/25 Mb/s, bw the NIC rate in
            // Gb/s (40 Mb/s at 100 Gb/s).
            rate_ai: RateBps(line_rate.0 / 2500),
            min_rate: RateBps(100_000_000),
        }
    }

    /// The HPCC authors' ns-3 simulator as its `run.py` configures HPCC for the paper's
    /// experiments: `U_TARGET 0.95`, `MI_THRESH 0` (maxStage 0: every step multiplicative;
    /// the authors' project page says the paper's simulations ran this, its "maxStage = 5"
    /// being a typo), `RATE_AI` 10·bw/25 Mb/s, `MIN_RATE 1000Mb/s` (its sample
    /// `mix/config.txt` has 100 Mb/s; `run.py` writes the configurations of the paper's
    /// runs), `FAST_REACT 1` (per-ACK rate), `MULTI_RATE 0` (one rate from the most loaded
    /// hop).
    pub fn hpcc_fork(line_rate: RateBps, base_rtt: SimTime) -> HpccConfig {
        HpccConfig {
            max_stage: 0,
            min_rate: RateBps(1_000_000_000),
            ..HpccConfig::paper(line_rate, base_rtt)
        }
    }
}

/// The HPCC sender of one queue pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Hpcc {
    pub cfg: HpccConfig,
    /// R: the current rate, bits per second.
    pub rate: f64,
    /// R_c: the reference rate.
    pub rate_c: f64,
    /// U: the EWMA of the normalised in-flight bytes.
    pub u: f64,
    pub inc_stage: u32,
    /// When the reference rate was last updated (the round trip's start).
    pub last_update: Option<SimTime>,
    /// The previous ACK's hop records (`nhops` of them).
    pub prev: [IntHop; MAX_HOPS],
    pub nhops: u8,
    /// Round-trip updates so far.
    pub updates: u64,
}

impl Hpcc {
    pub fn new(cfg: HpccConfig) -> Hpcc {
        Hpcc {
            cfg,
            rate: cfg.line_rate.0 as f64,
            rate_c: cfg.line_rate.0 as f64,
            u: 0.0,
            inc_stage: 0,
            last_update: None,
            prev: [IntHop::default(); MAX_HOPS],
            nhops: 0,
            updates: 0,
        }
    }

    fn store(&mut self, hops: &[IntHop]) {
        let n = hops.len().min(MAX_HOPS);
        self.prev[..n].copy_from_slice(&hops[..n]);
        self.nhops = n as u8;
    }

    /// U' and τ (ps) of the most loaded hop, or None when no hop's time advanced.
    fn most_loaded(&self, hops: &[IntHop]) -> Option<(f64, u64)> {
        let t = self.cfg.base_rtt.0.max(1) as f64 / 1e12;
        let mut best: Option<(f64, u64)> = None;
        for (h, p) in hops.iter().zip(&self.prev[..self.nhops as usize]) {
            let dt = h.ts.0.saturating_sub(p.ts.0);
            if dt == 0 || h.rate_bps == 0 {
                continue;
            }
            let b = h.rate_bps as f64;
            let tx_rate = h.tx_bytes.saturating_sub(p.tx_bytes) as f64 * 8.0 / (dt as f64 / 1e12);
            let u = h.qlen.min(p.qlen) as f64 * 8.0 / (b * t) + tx_rate / b;
            if best.is_none_or(|(bu, _)| u > bu) {
                best = Some((u, dt));
            }
        }
        best
    }

    /// The rate for estimate U from the reference rate, and the stage it leads to.
    fn compute(&self) -> (f64, u32) {
        let c = &self.cfg;
        let k = self.u / c.eta;
        let (r, stage) = if k >= 1.0 || self.inc_stage >= c.max_stage {
            let r = if k > 0.0 {
                self.rate_c / k
            } else {
                f64::INFINITY
            };
            (r + c.rate_ai.0 as f64, 0)
        } else {
            (self.rate_c + c.rate_ai.0 as f64, self.inc_stage + 1)
        };
        (r.clamp(c.min_rate.0 as f64, c.line_rate.0 as f64), stage)
    }

    /// One ACK carrying `hops`, for a packet sent at `sent`, arriving at `now`.
    pub fn on_int(&mut self, now: SimTime, sent: SimTime, hops: &[IntHop]) {
        if hops.is_empty() {
            return;
        }
        if self.nhops == 0 || self.nhops as usize != hops.len().min(MAX_HOPS) {
            // The first records (or a new path): they start the first round trip.
            self.store(hops);
            self.last_update = Some(now);
            return;
        }
        let Some((u_new, dt)) = self.most_loaded(hops) else {
            self.store(hops);
            return;
        };
        let t = self.cfg.base_rtt.0.max(1) as f64;
        let tau = (dt as f64).min(t);
        self.u = (self.u * (t - tau) + u_new * tau) / t;
        let (r, stage) = self.compute();
        self.rate = r;
        if self.last_update.is_none_or(|u| sent >= u) {
            self.rate_c = r;
            self.inc_stage = stage;
            self.last_update = Some(now);
            self.updates += 1;
        }
        self.store(hops);
    }
}

impl RateControl for Hpcc {
    fn rate(&self) -> RateBps {
        RateBps(self.rate.round() as u64)
    }

    /// R·T in bytes, at least one.
    fn window(&self) -> Option<u64> {
        let w = self.rate * (self.cfg.base_rtt.0 as f64 / 1e12) / 8.0;
        Some((w.round() as u64).max(1))
    }

    fn on_ack(&mut self, now: SimTime, ack: &AckInfo) {
        self.on_int(now, now - ack.rtt, ack.int);
    }
}

#[cfg(test)]
#[path = "hpcc_tests.rs"]
mod tests;

//! DCTCP's control law on the RoCE queue pair, as the HPCC authors' ns-3 simulator runs it
//! for its comparisons (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019;
//! the simulator's `CC_MODE 8`, configured by its `run.py` for `--cc dctcp`): a rate, not a
//! TCP window, driven by the receiver's per-ACK echo of CE (docs/models.md §16).
//!
//! DCTCP itself (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; RFC 8257 §3.3–3.4)
//! estimates α, the fraction of marked bytes, once per window of data and cuts its window by
//! α/2 at most once per window. On the NIC:
//!
//! - **α** (initially 1): each ACK with the CE echo counts one marked packet. When an ACK
//!   acknowledges beyond `last_seq`, a batch is over: `F = min(1, marked/batch)`, `α ← (1 −
//!   g)·α + g·F`; the next batch ends at the current `snd_nxt` and is expected to hold
//!   `(snd_nxt − snd_una)/mtu + 1` packets (what is in flight). The first such ACK of a
//!   queue pair only opens the first batch (`snd_nxt/mtu + 1` packets since the start).
//! - **Decrease**: an ACK with the CE echo, outside a reduction, sets `R ← max(min_rate,
//!   R·(1 − α/2))` and starts a reduction that ends when an ACK acknowledges beyond the
//!   `snd_nxt` of that moment (once per window, as DCTCP's CWR state).
//! - **Increase**: on the ACK that ends a batch, outside a reduction, `R ← min(line rate, R +
//!   R_AI)` — one packet per round trip at the simulator's 13 µs RTT (its comment on `R_AI`).
//! - **Window** `R·T` (T the base round trip), the simulator's `VAR_WIN` with `HAS_WIN`.
//!
//! Sequence numbers here are the queue pair's; the simulator opens a queue pair per flow,
//! numbered from 0, and dcnsim restarts a workload message's controller at its start: the
//! first batch counts from the first ACK's previous `snd_una` (0 in the simulator).

use super::{AckInfo, RateControl};
use crate::base::units::{RateBps, SimTime};

/// Every constant of the NIC's DCTCP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpRateConfig {
    /// The rate a queue pair starts at and never exceeds.
    pub line_rate: RateBps,
    /// T: the base round trip of the window `R·T`.
    pub base_rtt: SimTime,
    /// g: α's gain.
    pub g: f64,
    /// α before any batch.
    pub alpha0: f64,
    /// R_AI: the step per batch without a mark.
    pub rate_ai: RateBps,
    /// The floor of a decrease.
    pub min_rate: RateBps,
    /// Payload bytes per packet (a batch's expected packets).
    pub mtu: u32,
}

impl DctcpRateConfig {
    /// The HPCC authors' simulator as its `run.py` sets `--cc dctcp`: `EWMA_GAIN 0.0625`
    /// (g = 1/16, RFC 8257's suggested gain), `DCTCP_RATE_AI 615Mb/s` (whatever the link
    /// rate), `MIN_RATE 1000Mb/s`; α starts at 1 (its queue pair's initial value).
    pub fn hpcc_fork(line_rate: RateBps, base_rtt: SimTime, mtu: u32) -> DctcpRateConfig {
        DctcpRateConfig {
            line_rate,
            base_rtt,
            g: 1.0 / 16.0,
            alpha0: 1.0,
            rate_ai: RateBps(615_000_000),
            min_rate: RateBps(1_000_000_000),
            mtu,
        }
    }
}

/// The DCTCP sender of one queue pair.
#[derive(Clone, Debug, PartialEq)]
pub struct DctcpRate {
    pub cfg: DctcpRateConfig,
    /// R, bits per second.
    pub rate: f64,
    pub alpha: f64,
    /// ACKs with the CE echo in the current batch.
    pub marked: u64,
    /// Packets the current batch is expected to hold.
    pub batch: u64,
    /// The batch ends when an ACK acknowledges beyond this byte (None: before the first).
    pub last_seq: Option<u64>,
    /// In a reduction until an ACK acknowledges beyond `high_seq`.
    pub in_cwr: bool,
    pub high_seq: u64,
    /// α updates and rate cuts so far.
    pub updates: u64,
    pub cuts: u64,
}

impl DctcpRate {
    pub fn new(cfg: DctcpRateConfig) -> DctcpRate {
        DctcpRate {
            cfg,
            rate: cfg.line_rate.0 as f64,
            alpha: cfg.alpha0,
            marked: 0,
            batch: 0,
            last_seq: None,
            in_cwr: false,
            high_seq: 0,
            updates: 0,
            cuts: 0,
        }
    }

    fn packets(&self, bytes: u64) -> u64 {
        bytes / self.cfg.mtu.max(1) as u64 + 1
    }

    /// α's batch accounting for an ACK; true when it ended a batch.
    fn batch_over(&mut self, ack: &AckInfo) -> bool {
        self.marked += ack.ce_echo as u64;
        match self.last_seq {
            Some(last) if ack.snd_una <= last => false,
            None => {
                let start = ack.snd_una - ack.acked;
                self.batch = self.packets(ack.snd_nxt.saturating_sub(start));
                self.last_seq = Some(ack.snd_nxt);
                true
            }
            Some(_) => {
                let f = (self.marked as f64 / self.batch.max(1) as f64).min(1.0);
                self.alpha = (1.0 - self.cfg.g) * self.alpha + self.cfg.g * f;
                self.updates += 1;
                self.marked = 0;
                self.batch = self.packets(ack.snd_nxt.saturating_sub(ack.snd_una));
                self.last_seq = Some(ack.snd_nxt);
                true
            }
        }
    }
}

impl RateControl for DctcpRate {
    fn rate(&self) -> RateBps {
        RateBps(self.rate as u64)
    }

    fn window(&self) -> Option<u64> {
        let w = self.rate * (self.cfg.base_rtt.0 as f64 / 1e12) / 8.0;
        Some((w as u64).max(1))
    }

    fn on_ack(&mut self, _now: SimTime, ack: &AckInfo) {
        let new_batch = self.batch_over(ack);
        if self.in_cwr && ack.snd_una > self.high_seq {
            self.in_cwr = false;
        }
        if ack.ce_echo && !self.in_cwr {
            let cut = self.rate * (1.0 - self.alpha / 2.0);
            self.rate = cut.max(self.cfg.min_rate.0 as f64);
            self.in_cwr = true;
            self.high_seq = ack.snd_nxt;
            self.cuts += 1;
        }
        if !self.in_cwr && new_batch {
            let up = self.rate + self.cfg.rate_ai.0 as f64;
            self.rate = up.min(self.cfg.line_rate.0 as f64);
        }
    }
}

#[cfg(test)]
#[path = "dctcp_tests.rs"]
mod tests;

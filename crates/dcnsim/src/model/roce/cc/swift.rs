//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
//! Datacenter", SIGCOMM 2020) as a window controller of the RoCE queue pair
//! (docs/models.md §14).
//!
//! Swift keeps a congestion window `cwnd`, in packets (a real number: it may fall below one
//! packet), and compares each ACK's delay with a target:
//!
//! - **Target.** `target = base_target + hops·h + fs`, with the flow-scaling term
//!   `fs = clamp(α/√cwnd + β_fs, 0, fs_range)`, `α = fs_range / (1/√fs_min_cwnd −
//!   1/√fs_max_cwnd)`, `β_fs = −α/√fs_max_cwnd`: the full `fs_range` at `fs_min_cwnd`
//!   packets or fewer, nothing at `fs_max_cwnd` or more (many flows, each with a small
//!   window, get a larger target, since their queue grows with the square root of their
//!   number).
//! - **Increase.** An ACK of `n` packets with a delay below the target adds `ai·n/cwnd`
//!   (`ai·n` below one packet): `ai` packets per round trip.
//! - **Decrease.** An ACK at or above the target, if the last decrease is at least one RTT
//!   old, multiplies the window by `max(1 − β·(delay − target)/delay, 1 − max_mdf)`.
//! - The window stays within [`min_cwnd`, `max_cwnd`]; any reduction restarts the
//!   once-per-RTT clock.
//!
//! **Window and rate.** At one packet or more the window caps the payload bytes in flight
//! ([`RateControl::window`], `cwnd·mtu`) and the queue pair sends at line rate. Below one
//! packet Swift paces: one packet per `RTT/cwnd`, so the window allows one packet and
//! [`RateControl::rate`] is the wire size of a full packet over `RTT/cwnd` (the RTT of the
//! latest ACK).
//!
//! dcnsim has no host delays, so the endpoint window of the paper (its NIC and host delay
//! against an endpoint target) never binds: one window, on the whole RTT as the fabric
//! delay. Loss reactions (fast recovery, retransmission timeout) are left out: the
//! controller seam reports neither.
//!
//! [`min_cwnd`]: SwiftConfig::min_cwnd
//! [`max_cwnd`]: SwiftConfig::max_cwnd

use super::{AckInfo, RateControl};
use crate::base::units::{RateBps, SimTime};

/// The path a Swift queue pair runs on, which some constants derive from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwiftPath {
    /// The NIC's rate.
    pub line_rate: RateBps,
    /// Payload bytes of a full packet, and its bytes on the wire.
    pub mtu: u32,
    pub wire: u32,
    /// Switches between sender and receiver (the paper reads it from the TTL).
    pub hops: u32,
    /// The path's base RTT (the initial window is one bandwidth-delay product).
    pub base_rtt: SimTime,
}

/// Every constant of a Swift profile (windows in packets).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwiftConfig {
    pub line_rate: RateBps,
    pub mtu: u32,
    pub wire: u32,
    pub hops: u32,
    pub base_target: SimTime,
    /// h: target added per hop.
    pub hop_scale: SimTime,
    pub fs_range: SimTime,
    pub fs_min_cwnd: f64,
    pub fs_max_cwnd: f64,
    /// ai: the additive increment, packets per RTT.
    pub ai: f64,
    /// β: the multiplicative-decrease factor.
    pub beta: f64,
    pub max_mdf: f64,
    pub min_cwnd: f64,
    pub max_cwnd: f64,
    pub init_cwnd: f64,
}

impl SwiftConfig {
    /// The paper's algorithm (its Algorithm 1 and §3.5) with constants from the sources the
    /// comments name; the paper publishes only a few of its deployment's values.
    pub fn paper(p: SwiftPath) -> SwiftConfig {
        let bdp = p.base_rtt.as_secs_f64() * p.line_rate.0 as f64 / 8.0;
        let base_target = SimTime::from_us(25);
        SwiftConfig {
            line_rate: p.line_rate,
            mtu: p.mtu,
            wire: p.wire,
            hops: p.hops,
            // Not verified in the paper's text here: 25 µs, the value public
            // re-implementations give as the paper's.
            base_target,
            // Not published: 1 µs per switch (dcnsim's choice).
            hop_scale: SimTime::from_us(1),
            // Not published: 5 × base_target, fs_min_cwnd 0.1, fs_max_cwnd 100 packets, as
            // htsim's Swift models set them.
            fs_range: SimTime(5 * base_target.0),
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            // ai = 1 packet per RTT, β = 0.8, max_mdf = 0.5: the values public
            // re-implementations take from the paper (not verified in its text here).
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            // Paper §3.4: the window may fall to 0.001 packets.
            min_cwnd: 0.001,
            // Not published: 10 000 packets (10 MB at 1000 B) never binds in dcnsim's
            // fabrics.
            max_cwnd: 10_000.0,
            // Not published: one bandwidth-delay product of the path (at least a packet).
            init_cwnd: (bdp / p.wire.max(1) as f64).max(1.0),
        }
    }

    /// α and β_fs of the flow-scaling term, picoseconds.
    pub fn fs_coefficients(&self) -> (f64, f64) {
        let range = self.fs_range.0 as f64;
        let a = range / (1.0 / self.fs_min_cwnd.sqrt() - 1.0 / self.fs_max_cwnd.sqrt());
        (a, -a / self.fs_max_cwnd.sqrt())
    }
}

/// The Swift sender of one queue pair.
#[derive(Clone, Debug, PartialEq)]
pub struct Swift {
    pub cfg: SwiftConfig,
    /// The window, packets.
    pub cwnd: f64,
    /// The last reduction of the window.
    pub last_decrease: Option<SimTime>,
    /// The RTT of the latest ACK (zero before any).
    pub rtt: SimTime,
    /// Multiplicative decreases so far.
    pub decreases: u64,
}

impl Swift {
    pub fn new(cfg: SwiftConfig) -> Swift {
        Swift {
            cfg,
            cwnd: cfg.init_cwnd.clamp(cfg.min_cwnd, cfg.max_cwnd),
            last_decrease: None,
            rtt: SimTime::ZERO,
            decreases: 0,
        }
    }

    /// The target delay at the current window, picoseconds.
    pub fn target(&self) -> f64 {
        let c = &self.cfg;
        let (a, b) = c.fs_coefficients();
        let fs = (a / self.cwnd.sqrt() + b).clamp(0.0, c.fs_range.0 as f64);
        c.base_target.0 as f64 + c.hops as f64 * c.hop_scale.0 as f64 + fs
    }

    /// Whether the last reduction is at least `rtt` before `now`.
    fn can_decrease(&self, now: SimTime, rtt: SimTime) -> bool {
        self.last_decrease.is_none_or(|t| now - t >= rtt)
    }
}

impl RateControl for Swift {
    fn rate(&self) -> RateBps {
        let line = self.cfg.line_rate;
        if self.cwnd >= 1.0 || self.rtt == SimTime::ZERO {
            return line;
        }
        // One full packet every RTT/cwnd.
        let bits = self.cfg.wire as f64 * 8.0;
        let r = bits * self.cwnd / self.rtt.as_secs_f64();
        RateBps((r.round() as u64).clamp(1, line.0))
    }

    fn window(&self) -> Option<u64> {
        let w = (self.cwnd.max(1.0) * self.cfg.mtu as f64).round() as u64;
        Some(w.max(self.cfg.mtu as u64))
    }

    fn on_ack(&mut self, now: SimTime, ack: &AckInfo) {
        self.rtt = ack.rtt;
        let c = self.cfg;
        let before = self.cwnd;
        let delay = ack.rtt.0 as f64;
        let target = self.target();
        if delay < target {
            let n = ack.acked as f64 / c.mtu.max(1) as f64;
            if self.cwnd >= 1.0 {
                self.cwnd += c.ai * n / self.cwnd;
            } else {
                self.cwnd += c.ai * n;
            }
        } else if self.can_decrease(now, ack.rtt) {
            let f = (1.0 - c.beta * (delay - target) / delay).max(1.0 - c.max_mdf);
            self.cwnd *= f;
            self.decreases += 1;
        }
        self.cwnd = self.cwnd.clamp(c.min_cwnd, c.max_cwnd);
        if self.cwnd < before {
            self.last_decrease = Some(now);
        }
    }
}

#[cfg(test)]
#[path = "swift_tests.rs"]
mod tests;

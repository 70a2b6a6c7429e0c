//! Departure-rate (queue capacity) estimator of the TCN paper (Bai et al., CoNEXT'16) §3.3,
//! Algorithm 1 and Fig. 2, borrowed from PIE (RFC 8033), and the "ideal ECN/RED" whose
//! marking threshold follows it: `K = avg_rate × RTT × λ` (Bai et al. 2016 Equation 2).
//!
//! Upon each departure from the queue (`qlen` = bytes still queued after it leaves, as in
//! PIE): if `qlen ≥ dq_thresh` and no cycle is running, start one (`dq_count = 0`,
//! `dq_start = now`); during a cycle add the departing bytes; once `dq_count ≥ dq_thresh`
//! take the sample `dq_rate = dq_count / (now − dq_start)`, smooth it
//! `avg = ε·avg + (1 − ε)·dq_rate` and end the cycle.
//!
//! **Interpretation** (`count_opening_packet`): printed literally, Algorithm 1 also counts
//! the packet whose departure opens the cycle, although no time has elapsed for it, which
//! biases every sample up by one packet (e.g. 11.7 instead of 10 Gb/s). By default we count
//! only bytes departing *after* `dq_start`, which reproduces the paper's Fig. 2 numbers
//! exactly (10 KB threshold: samples of 10 Gb/s within a DWRR round and 3.7 Gb/s across
//! rounds; 40 KB: 29 samples in 2 ms). Set `count_opening_packet = true` for the literal text.
//! A cycle that reaches `dq_thresh` with zero elapsed time yields no sample.

use super::{Aqm, AqmAt, Build, Built, Entry, KeyError, Scope, Verdict};
use crate::base::units::{RateBps, SimTime};

/// dq_thresh default 10 KB: "conventional wisdom recommends 10KB [PIE]" (Bai et al. 2016 §3.3;
/// the paper also evaluates 40 KB).
pub const DEFAULT_DQ_THRESH: u64 = 10_000;
/// Averaging weight ε = 0.875 (Bai et al. 2016 §3.3: "We use 0.875 as the averaging parameter").
pub const DEFAULT_EPSILON: f64 = 0.875;
/// RTT default 100 µs (Bai et al. 2016 §3.3 Fig. 2 set-up: base RTT 100 µs).
pub const DEFAULT_RTT: SimTime = SimTime(100_000_000);
/// λ default 1 (ECN*; standard threshold 125 KB = 100 µs × 10 Gb/s, Bai et al. 2016 §3.3).
pub const DEFAULT_LAMBDA: f64 = 1.0;
/// Initial avg_rate: the link capacity, 10 Gb/s in Bai et al. 2016's simulations.
pub const DEFAULT_INITIAL_RATE: RateBps = RateBps(10_000_000_000);

/// Parameters of Algorithm 1 and the ideal-RED threshold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DqRateConfig {
    /// Queue length (bytes) that opens a cycle and bytes per cycle (default 10 KB).
    pub dq_thresh: u64,
    /// Averaging weight ε (default 0.875).
    pub epsilon: f64,
    /// RTT of the threshold K = avg_rate × RTT × λ (default 100 µs).
    pub rtt: SimTime,
    /// λ of the threshold (default 1).
    pub lambda: f64,
    /// Starting avg_rate (default 10 Gb/s, the link capacity).
    pub initial_rate: RateBps,
    /// Count the cycle-opening packet's bytes, as printed (default false; see module doc).
    pub count_opening_packet: bool,
}

impl Default for DqRateConfig {
    fn default() -> Self {
        DqRateConfig {
            dq_thresh: DEFAULT_DQ_THRESH,
            epsilon: DEFAULT_EPSILON,
            rtt: DEFAULT_RTT,
            lambda: DEFAULT_LAMBDA,
            initial_rate: DEFAULT_INITIAL_RATE,
            count_opening_packet: false,
        }
    }
}

/// Estimator state for one queue.
#[derive(Clone, Debug)]
pub struct DqRate {
    cfg: DqRateConfig,
    is_measure: bool,
    dq_count: u64,
    dq_start: SimTime,
    last_sample: Option<f64>,
    avg_rate: f64,
    samples: u64,
}

impl DqRate {
    pub fn new(cfg: DqRateConfig) -> Result<DqRate, String> {
        if cfg.dq_thresh == 0 {
            return Err("dq_thresh must be > 0 bytes".into());
        }
        if !(cfg.epsilon >= 0.0 && cfg.epsilon < 1.0) {
            return Err(format!(
                "averaging weight must be in [0, 1), got {}",
                cfg.epsilon
            ));
        }
        if !(cfg.lambda.is_finite() && cfg.lambda > 0.0) {
            return Err(format!("lambda must be finite and > 0, got {}", cfg.lambda));
        }
        Ok(DqRate {
            cfg,
            is_measure: false,
            dq_count: 0,
            dq_start: SimTime::ZERO,
            last_sample: None,
            avg_rate: cfg.initial_rate.0 as f64,
            samples: 0,
        })
    }

    /// A packet of `size` bytes departs at `now`, leaving `qlen` bytes queued. Returns the
    /// new sample (bits/s) if this departure closed a cycle.
    pub fn on_departure(&mut self, now: SimTime, qlen: u64, size: u32) -> Option<f64> {
        if !self.is_measure && qlen >= self.cfg.dq_thresh {
            self.dq_count = 0;
            self.dq_start = now;
            self.is_measure = true;
            if !self.cfg.count_opening_packet {
                return None;
            }
        }
        if !self.is_measure {
            return None;
        }
        self.dq_count += size as u64;
        if self.dq_count < self.cfg.dq_thresh {
            return None;
        }
        self.is_measure = false;
        let dt = (now - self.dq_start).as_secs_f64();
        if dt <= 0.0 {
            return None;
        }
        let rate = self.dq_count as f64 * 8.0 / dt;
        self.avg_rate = self.cfg.epsilon * self.avg_rate + (1.0 - self.cfg.epsilon) * rate;
        self.last_sample = Some(rate);
        self.samples += 1;
        Some(rate)
    }

    /// Smoothed departure rate (bits/s): the queue-capacity estimate.
    pub fn avg_rate_bps(&self) -> f64 {
        self.avg_rate
    }
    pub fn last_sample_bps(&self) -> Option<f64> {
        self.last_sample
    }
    pub fn samples(&self) -> u64 {
        self.samples
    }
    /// Ideal ECN/RED threshold in bytes: avg_rate × RTT × λ.
    pub fn threshold_bytes(&self) -> f64 {
        self.avg_rate / 8.0 * self.cfg.rtt.as_secs_f64() * self.cfg.lambda
    }
    /// `Mark` iff the queue holds more than the threshold (the port sets CE on ECT packets
    /// and lets the others pass).
    pub fn decide(&self, q_bytes: u64) -> Verdict {
        if q_bytes as f64 > self.threshold_bytes() {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

/// `kind = "dqrate"`: the marking rule, one instance for the port's queues, deciding at
/// enqueue from the estimates the port keeps ([`super::Signals::rates`]; its keys
/// `dq_thresh`, `epsilon`, `rtt`, `lambda` configure those estimators).
fn build(_: &Build) -> Result<Built, KeyError> {
    Ok(Built::new(Aqm::DqRate, AqmAt::Enqueue))
}

/// Registry entry: one instance for a port's queues.
pub const ENTRY: Entry = Entry {
    name: "dqrate",
    port: false,
    queues: Some(Scope::Shared),
    build,
};

#[cfg(test)]
pub(crate) mod testutil {
    use super::DqRateConfig;

    /// The default configuration with threshold `thresh` and `count_opening_packet`
    /// `literal`.
    pub fn cfg(thresh: u64, literal: bool) -> DqRateConfig {
        DqRateConfig {
            dq_thresh: thresh,
            count_opening_packet: literal,
            ..DqRateConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::cfg;
    use super::*;

    #[test]
    fn steady_5gbps_departures_give_5gbps_samples() {
        // 1500-B packets leaving every 2.4 µs (5 Gb/s), queue always above dq_thresh.
        for (literal, want) in [(false, 5e9), (true, 5e9 * 27.0 / 26.0)] {
            let mut d = DqRate::new(cfg(40_000, literal)).unwrap();
            let mut samples = vec![];
            for k in 0..10_000u64 {
                if let Some(s) = d.on_departure(SimTime(k * 2_400_000), 100_000, 1500) {
                    samples.push(s);
                }
            }
            assert!(samples.len() > 300);
            for s in &samples {
                assert!((s - want).abs() < 1.0, "{s} vs {want}");
            }
            // avg = want + (10G − want)·0.875^k.
            assert!((d.avg_rate_bps() - want).abs() < 1.0);
            // Ideal RED threshold: 5 Gb/s × 100 µs = 62.5 KB.
            if !literal {
                assert!((d.threshold_bytes() - 62_500.0).abs() < 1e-3);
                assert_eq!(d.decide(62_501), Verdict::Mark);
                assert_eq!(d.decide(62_500), Verdict::Pass);
            }
        }
    }

    #[test]
    fn exact_sample_sequence_and_cycle_opening() {
        let mut d = DqRate::new(cfg(3000, false)).unwrap();
        let us = SimTime::from_us;
        // Queue below dq_thresh: no cycle.
        assert_eq!(d.on_departure(us(0), 2999, 1500), None);
        // Opens at 10 µs (qlen 3000 ≥ 3000); 1500 B at 11 µs, 1500 B at 13 µs → 3000 B / 3 µs.
        assert_eq!(d.on_departure(us(10), 3000, 1500), None);
        assert_eq!(d.on_departure(us(11), 0, 1500), None);
        let s = d.on_departure(us(13), 0, 1500).unwrap();
        assert!((s - 8e9).abs() < 1e-3);
        assert!((d.avg_rate_bps() - (0.875 * 1e10 + 0.125 * 8e9)).abs() < 1e-3);
        // Cycle over; qlen 0 does not open another.
        assert_eq!(d.on_departure(us(14), 0, 1500), None);
        assert_eq!(d.samples(), 1);
    }

    #[test]
    fn bad_configs_are_rejected() {
        assert!(DqRate::new(cfg(0, false)).is_err());
        let mut c = cfg(1, false);
        c.epsilon = 1.0;
        assert!(DqRate::new(c).is_err());
        c.epsilon = 0.5;
        c.lambda = 0.0;
        assert!(DqRate::new(c).is_err());
    }
}

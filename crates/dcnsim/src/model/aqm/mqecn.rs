//! MQ-ECN (Bai et al., NSDI'16; docs/models.md §5.3, reference version MQECN-NS2 `queue/dwrr.cc`).
//!
//! Per-queue dynamic ECN threshold for round-robin schedulers:
//! `K_i = min(quantum_i / T_round, C) × RTT × λ`, implemented (in packets of `mean_pkt`
//! bytes) as `thresh_i = min(quantum_i·8 / (T_round·C), 1) × K_port`; with `T_round < 1 ns`
//! the threshold is `K_port`. Marking (at enqueue by default) iff `bytes_i > thresh_i ×
//! mean_pkt`.
//!
//! T_round is an EWMA (`T := β·T + (1−β)·sample`) with samples taken by the DWRR scheduler
//! through [`RoundObserver`]:
//! - queue activated: `start_i := max(now, start_i)`;
//! - head queue visited but cannot send: sample `now − start_i`, `start_i := now`;
//! - queue emptied after sending L bytes: sample `now + L·8/C − start_i`,
//!   `start_i := now + L·8/C`;
//! - first arrival to an idle port: `T := T·β^n`, `n = ⌊(now − last_idle)/T_idle⌋`,
//!   `T_idle = idle_bytes·8/C`; `last_idle := now` whenever a dequeue empties the port.

use super::{Aqm, AqmAt, Build, Built, Entry, KeyError, Scope, Verdict};
use crate::base::units::{RateBps, SimTime};

/// EWMA weight β = 0.75 (MQ-ECN paper and TCN; MQECN-NS2 `estimate_round_alpha_`).
pub const DEFAULT_BETA: f64 = 0.75;
/// T_idle = one MTU transmission time: 1500 B (MQECN-NS2 `estimate_round_idle_interval_bytes_`).
pub const DEFAULT_IDLE_BYTES: u32 = 1500;
/// K_port = 65 packets (MQECN-NS2 `port_thresh_`; DCTCP K at 10 Gb/s, docs/models.md §3.1).
pub const DEFAULT_PORT_THRESH_PKTS: f64 = 65.0;
/// Mean packet size 1500 B (MQECN-NS2 `mean_pktsize_`).
pub const DEFAULT_MEAN_PKT: u32 = 1500;

/// MQ-ECN parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct MqEcnConfig {
    /// Link capacity C (MQECN-NS2 default 10 Gb/s).
    pub link: RateBps,
    /// Per-queue quantum in bytes (the DWRR quanta; 0 for strict-priority queues, whose
    /// threshold is then K_port).
    pub quanta: Vec<u32>,
    /// Standard port threshold K_port = C × RTT × λ in packets (default 65).
    pub port_thresh_pkts: f64,
    /// Bytes per threshold packet (default 1500).
    pub mean_pkt: u32,
    /// EWMA weight β (default 0.75).
    pub beta: f64,
    /// T_idle in bytes at line rate (default 1500).
    pub idle_bytes: u32,
}

impl MqEcnConfig {
    /// Defaults for `quanta` at `link`.
    pub fn new(link: RateBps, quanta: Vec<u32>) -> MqEcnConfig {
        MqEcnConfig {
            link,
            quanta,
            port_thresh_pkts: DEFAULT_PORT_THRESH_PKTS,
            mean_pkt: DEFAULT_MEAN_PKT,
            beta: DEFAULT_BETA,
            idle_bytes: DEFAULT_IDLE_BYTES,
        }
    }
}

/// MQ-ECN estimator and marking rule for one port.
#[derive(Clone, Debug)]
pub struct MqEcn {
    cfg: MqEcnConfig,
    /// T_round in seconds.
    round: f64,
    start: Vec<SimTime>,
    last_idle: SimTime,
    t_idle: SimTime,
    samples: u64,
    /// The latest round-time sample in seconds (0 before the first).
    last_sample: f64,
}

impl MqEcn {
    pub fn new(cfg: MqEcnConfig) -> Result<MqEcn, String> {
        if cfg.link.0 == 0 {
            return Err("MQ-ECN link capacity must be > 0".into());
        }
        // At most 32 queues, as a multi-queue port (`MAX_CLASS_QUEUES` of the queues).
        if cfg.quanta.is_empty() || cfg.quanta.len() > 32 {
            return Err(format!("MQ-ECN: 1..=32 queues, got {}", cfg.quanta.len()));
        }
        if !(cfg.beta >= 0.0 && cfg.beta < 1.0) {
            return Err(format!("MQ-ECN beta must be in [0, 1), got {}", cfg.beta));
        }
        if !(cfg.port_thresh_pkts.is_finite() && cfg.port_thresh_pkts >= 0.0) {
            return Err("MQ-ECN port threshold must be finite and ≥ 0".into());
        }
        if cfg.mean_pkt == 0 {
            return Err("MQ-ECN mean packet size must be > 0".into());
        }
        let t_idle = cfg.link.tx_time(cfg.idle_bytes);
        let n = cfg.quanta.len();
        Ok(MqEcn {
            cfg,
            round: 0.0,
            start: vec![SimTime::ZERO; n],
            last_idle: SimTime::ZERO,
            t_idle,
            samples: 0,
            last_sample: 0.0,
        })
    }

    pub fn num_queues(&self) -> usize {
        self.start.len()
    }
    /// Current T_round estimate in seconds.
    pub fn round_time(&self) -> f64 {
        self.round
    }
    /// Number of round-time samples taken.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Capacity of queue `q` implied by the round-time estimate: quantum·8 / T_round (b/s;
    /// Bai et al. 2016 Fig. 2's "MQ-ECN" curve). `None` before the first sample.
    pub fn capacity_estimate_bps(&self, q: usize) -> Option<f64> {
        let quantum = self.cfg.quanta.get(q).copied()? as f64;
        if self.round < 1e-12 {
            return None;
        }
        Some(quantum * 8.0 / self.round)
    }

    /// The latest round-time sample in seconds (0 before the first).
    pub fn last_sample(&self) -> f64 {
        self.last_sample
    }
    /// Quantum of queue `q` in bytes (0 for strict-priority queues or out of range).
    pub fn quantum(&self, q: usize) -> u32 {
        self.cfg.quanta.get(q).copied().unwrap_or(0)
    }

    /// The capacity MQ-ECN attributes to queue `q`: `min(quantum·8 / T_round, C)` (b/s),
    /// the rate its threshold is computed from (`K_q = min(quantum_q/T_round, C)·RTT·λ`,
    /// docs/models.md §5.3). Quantum / T_round alone exceeds C whenever the rounds are shorter
    /// than one quantum at line rate — a queue alone, or one sending a single packet per
    /// visit — and MQ-ECN then uses C. `None` before the first sample and for queues
    /// without a quantum.
    pub fn capped_capacity_bps(&self, q: usize) -> Option<f64> {
        if self.quantum(q) == 0 {
            return None;
        }
        let c = self.capacity_estimate_bps(q)?;
        Some(c.min(self.cfg.link.0 as f64))
    }

    /// Capacity of queue `q` implied by the latest round-time sample alone:
    /// `quantum·8 / sample` (b/s, not capped). `None` before the first sample, after a
    /// zero-length sample and for queues without a quantum.
    pub fn sample_capacity_bps(&self, q: usize) -> Option<f64> {
        let quantum = self.quantum(q);
        if quantum == 0 || self.last_sample < 1e-12 {
            return None;
        }
        Some(quantum as f64 * 8.0 / self.last_sample)
    }

    fn sample(&mut self, s: f64) {
        self.last_sample = s;
        let b = self.cfg.beta;
        self.round = b * self.round + (1.0 - b) * s;
        self.samples += 1;
    }

    /// Threshold of queue `q` in packets of `mean_pkt` bytes.
    pub fn threshold_pkts(&self, q: usize) -> f64 {
        let k = self.cfg.port_thresh_pkts;
        let quantum = self.cfg.quanta.get(q).copied().unwrap_or(0);
        if self.round < 1e-9 || quantum == 0 {
            return k;
        }
        let share = quantum as f64 * 8.0 / self.round / self.cfg.link.0 as f64;
        share.min(1.0) * k
    }

    /// Threshold of queue `q` in bytes.
    pub fn threshold_bytes(&self, q: usize) -> f64 {
        self.threshold_pkts(q) * self.cfg.mean_pkt as f64
    }

    /// Marking rule: `Mark` iff `bytes_q > thresh_q × mean_pkt` (the port sets CE on ECT
    /// packets and lets the others pass).
    pub fn decide(&self, q: usize, q_bytes: u64) -> Verdict {
        if q_bytes as f64 > self.threshold_bytes(q) {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }

    /// A packet arrives at a port whose queues are all empty: decay T_round by β^n.
    pub fn arrival_on_idle_port(&mut self, now: SimTime) {
        let idle = now - self.last_idle;
        if self.t_idle == SimTime::ZERO {
            self.round = 0.0;
            return;
        }
        let n = (idle.ps() / self.t_idle.ps()).min(i32::MAX as u64) as i32;
        self.round *= self.cfg.beta.powi(n);
    }

    /// The link of the port went idle at `now` (every queue empty, nothing being sent).
    pub fn port_drained(&mut self, now: SimTime) {
        self.last_idle = now;
    }

    /// A dequeue at `now` took the last packet (`size` bytes) of the port: the link goes
    /// idle when that packet's transmission ends, at `now + size·8/C`. This is the moment
    /// the reference sets `last_idle_time` (MQECN-NS2 `dwrr.cc`: ns-2 calls `deque()` again
    /// from `Queue::resume()` when the link finishes the packet, and the empty `deque()`
    /// stamps the idle time). Stamping the dequeue instant instead would count the last
    /// packet's own transmission as idle time, so a packet arriving back to back behind it
    /// (a busy link) would decay T_round by β — see `back_to_back_arrivals_are_not_idle`.
    pub fn last_packet_dequeued(&mut self, now: SimTime, size: u32) {
        self.last_idle = now + self.cfg.link.tx_time(size);
    }
}

impl MqEcn {
    /// Queue `q` became active at `now` (the DWRR scheduler's `RoundObserver` calls).
    pub fn activated(&mut self, q: usize, now: SimTime) {
        self.start[q] = self.start[q].max(now);
    }
    /// The turn of queue `q` ended at `now` without it emptying.
    pub fn turn_ended(&mut self, q: usize, now: SimTime) {
        let s = (now.ps() as f64 - self.start[q].ps() as f64) / SimTime::PS_PER_S as f64;
        self.sample(s);
        self.start[q] = now;
    }
    /// Queue `q` emptied at `now` after sending its last `size` bytes.
    pub fn emptied(&mut self, q: usize, now: SimTime, size: u32) {
        let end = now + self.cfg.link.tx_time(size);
        let s = (end.ps() as f64 - self.start[q].ps() as f64) / SimTime::PS_PER_S as f64;
        self.sample(s);
        self.start[q] = end;
    }
}

/// Append one `(now, queue, sample_bps, estimate_bps)` row per queue with a quantum for the
/// latest round-time sample of `m` (the `estimates` table of Bai et al. 2016 Fig. 2): `sample_bps`
/// = quantum / that sample (uncapped), `estimate_bps` = min(quantum / T_round, C). Only
/// called when a port records estimates.
pub fn push_estimates(m: &MqEcn, now: SimTime, out: &mut Vec<(SimTime, u8, f64, f64)>) {
    for q in 0..m.num_queues() {
        let (Some(s), Some(c)) = (m.sample_capacity_bps(q), m.capped_capacity_bps(q)) else {
            continue;
        };
        out.push((now, q as u8, s, c));
    }
}

/// `kind = "mqecn"`: needs the port's DWRR quanta; `port_thresh` and `beta`. The marking
/// rule is one instance for the port's queues, deciding at enqueue; the round-time
/// estimator it reads goes to the port's scheduler ([`Built::round`]).
fn build(b: &Build) -> Result<Built, KeyError> {
    let quanta = b
        .quanta
        .ok_or_else(|| KeyError::new("kind", "mqecn needs scheduler = \"dwrr\" or \"sp_dwrr\""))?;
    let mut cfg = MqEcnConfig::new(b.rate, quanta.to_vec());
    cfg.port_thresh_pkts = b.keys.port_thresh;
    cfg.beta = b.keys.beta;
    let e = MqEcn::new(cfg).map_err(|e| KeyError::new("port_thresh", e))?;
    let mut built = Built::new(Aqm::MqEcn, AqmAt::Enqueue);
    built.round = Some(e);
    Ok(built)
}

/// Registry entry: one instance for a port's queues.
pub const ENTRY: Entry = Entry {
    name: "mqecn",
    port: false,
    queues: Some(Scope::Shared),
    build,
};

#[cfg(test)]
mod tests {
    use super::*;

    const G10: RateBps = RateBps(10_000_000_000);

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
    }

    #[test]
    fn capacity_estimate_is_quantum_over_round_time() {
        let mut m = MqEcn::new(MqEcnConfig::new(G10, vec![18_000, 18_000])).unwrap();
        assert_eq!(m.capacity_estimate_bps(0), None);
        m.activated(0, SimTime::ZERO);
        m.turn_ended(0, SimTime::from_ns(28_800)); // T = 0.25 · 28.8 µs = 7.2 µs
        let want = 18_000.0 * 8.0 / (0.25 * 28.8e-6);
        assert!(close(m.capacity_estimate_bps(1).unwrap(), want));
        assert_eq!(m.capacity_estimate_bps(2), None);
    }

    #[test]
    fn threshold_follows_formula_for_scripted_round_times() {
        let mut m = MqEcn::new(MqEcnConfig::new(G10, vec![1500, 3000, 18_000])).unwrap();
        // No estimate yet: K_port.
        assert_eq!(m.threshold_pkts(0), 65.0);
        // Script: queue 0 active at 0, its turn ends at 2.4 µs: sample 2.4 µs.
        m.activated(0, SimTime::ZERO);
        m.turn_ended(0, SimTime::from_ns(2400));
        let t1 = 0.25 * 2.4e-6;
        assert!(close(m.round_time(), t1));
        // Second sample 4.8 µs: T = 0.75·T + 0.25·4.8 µs.
        m.turn_ended(0, SimTime::from_ns(7200));
        let t2 = 0.75 * t1 + 0.25 * 4.8e-6;
        assert!(close(m.round_time(), t2), "{}", m.round_time());
        // Queue 1 activated at 1 µs, empties after sending 1500 B at 9 µs:
        // sample 9 µs + 1.2 µs − 1 µs = 9.2 µs.
        m.activated(1, SimTime::from_us(1));
        m.emptied(1, SimTime::from_us(9), 1500);
        let t3 = 0.75 * t2 + 0.25 * 9.2e-6;
        assert!(close(m.round_time(), t3));
        for (q, quantum) in [(0usize, 1500.0), (1, 3000.0), (2, 18_000.0)] {
            let want = (quantum * 8.0 / (t3 * 1e10)).min(1.0) * 65.0;
            assert!(close(m.threshold_pkts(q), want), "q{q}");
            assert!(close(m.threshold_bytes(q), want * 1500.0));
        }
        // Queue 2's share is capped at 1 → K_port.
        assert_eq!(m.threshold_pkts(2), 65.0);
        let th0 = m.threshold_bytes(0);
        assert_eq!(m.decide(0, th0.floor() as u64), Verdict::Pass);
        assert_eq!(m.decide(0, th0.floor() as u64 + 1), Verdict::Mark);
    }

    #[test]
    fn idle_decay_by_beta_to_the_n() {
        let mut m = MqEcn::new(MqEcnConfig::new(G10, vec![1500, 1500])).unwrap();
        m.activated(0, SimTime::ZERO);
        m.turn_ended(0, SimTime::from_us(10));
        let r0 = m.round_time();
        assert!(close(r0, 2.5e-6));
        // Port empties at 20 µs; T_idle = 1500 B at 10 Gb/s = 1.2 µs.
        m.port_drained(SimTime::from_us(20));
        // Next arrival 20 + 3.5 × 1.2 µs: n = 3.
        m.arrival_on_idle_port(SimTime::from_ns(20_000 + 4_200));
        assert!(close(m.round_time(), r0 * 0.75f64.powi(3)));
        // Less than one T_idle: no decay.
        let r1 = m.round_time();
        m.port_drained(SimTime::from_us(30));
        m.arrival_on_idle_port(SimTime::from_ns(31_199));
        assert_eq!(m.round_time(), r1);
        // A long idle period decays it to (almost) zero → threshold back to K_port.
        m.port_drained(SimTime::from_us(40));
        m.arrival_on_idle_port(SimTime::from_ms(40));
        assert!(m.round_time() < 1e-12);
        assert_eq!(m.threshold_pkts(0), 65.0);
    }

    /// The Fig. 2 rows: one per round-robin queue for every round-time sample, the
    /// sample as quantum / sample (uncapped) and the estimate min(quantum / T_round, C).
    #[test]
    fn estimate_rows_per_queue_sample_and_capped_estimate() {
        // Queues: 18 KB, 9 KB, and a strict-priority queue (quantum 0, no row).
        let mut m = MqEcn::new(MqEcnConfig::new(G10, vec![18_000, 9_000, 0])).unwrap();
        let mut rows = Vec::new();
        push_estimates(&m, SimTime::ZERO, &mut rows);
        assert!(rows.is_empty(), "no sample yet");
        // Queue 0 alone: its turn lasts one quantum at line rate, 14.4 µs.
        m.activated(0, SimTime::ZERO);
        m.turn_ended(0, SimTime::from_ns(14_400));
        push_estimates(&m, SimTime::from_ns(14_400), &mut rows);
        // T_round = 0.25 · 14.4 µs = 3.6 µs: 18 KB / 3.6 µs = 40 Gb/s → capped at 10.
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].1, 0);
        assert!(close(rows[0].2, 10e9), "{}", rows[0].2);
        assert_eq!(rows[0].3, 10e9);
        assert_eq!(rows[1].1, 1);
        assert!(close(rows[1].2, 5e9));
        // 9 KB / 3.6 µs = 20 Gb/s, also capped.
        assert_eq!(rows[1].3, 10e9);
        // Rounds of 43.2 µs (both round-robin queues backlogged, 27 KB per round): after
        // k samples T = 43.2 − (43.2 − 3.6)·0.75^k µs; queue 0's estimate tends to
        // 18 KB / 43.2 µs = 3.33 Gb/s, queue 1's to 1.67 Gb/s.
        let mut t = 14_400u64;
        for _ in 0..40 {
            t += 43_200;
            m.turn_ended(0, SimTime::from_ns(t));
        }
        rows.clear();
        push_estimates(&m, SimTime::from_ns(t), &mut rows);
        let want_t = 43.2e-6 - (43.2e-6 - 3.6e-6) * 0.75f64.powi(40);
        assert!(close(m.round_time(), want_t));
        assert!(close(rows[0].2, 18_000.0 * 8.0 / 43.2e-6));
        assert!(close(rows[0].3, 18_000.0 * 8.0 / want_t));
        assert!(close(rows[1].3, 9_000.0 * 8.0 / want_t));
        assert!((rows[0].3 - 3.333e9).abs() < 0.01e9);
    }

    #[test]
    fn bad_configs_are_rejected() {
        assert!(MqEcn::new(MqEcnConfig::new(RateBps(0), vec![1500])).is_err());
        assert!(MqEcn::new(MqEcnConfig::new(G10, vec![])).is_err());
        let mut c = MqEcnConfig::new(G10, vec![1500]);
        c.beta = 1.0;
        assert!(MqEcn::new(c).is_err());
    }
}

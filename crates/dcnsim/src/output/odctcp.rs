//! Result tables of the ODCTCP thesis measurements: the sender-side
//! time-sequence trace (`seq`), per-flow throughput every `measure.throughput_interval`
//! (`throughput`, thesis §6.2 samples every 50 ms) and the fairness summary (Jain's index
//! and mean/std of per-flow throughput, computed with `base/stats.rs`).

use crate::base::ids::FlowId;
use crate::base::stats::{jain_index, mean, std_dev};
use crate::base::units::SimTime;
use crate::engine::observe::trace::SEQ_DATA;
use crate::engine::sim::Sim;
use crate::output::Table;

/// Fairness over the throughput samples taken at or after `after`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fairness {
    /// Mean over sampling intervals of Jain's index of the flows' interval throughputs
    /// (intervals in which no flow delivered anything are skipped).
    pub jain_mean: f64,
    /// Jain's index of the flows' throughputs over the whole window.
    pub jain_total: f64,
    /// Mean and sample standard deviation across flows of the window throughput, Mb/s.
    pub mean_mbps: f64,
    pub std_mbps: f64,
    /// Sum over flows (aggregate goodput in the window), Mb/s.
    pub sum_mbps: f64,
}

/// Per-flow throughput (b/s) between consecutive sample times ≥ `after`:
/// one Vec per interval, indexed by flow, with the interval's start and end.
pub fn interval_rates(sim: &Sim, after: SimTime) -> Vec<(SimTime, SimTime, Vec<f64>)> {
    let n = sim.hosts.flows.len();
    let s = &sim.obs.samplers.tput;
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    // Samples come in rounds of n rows with one time each.
    let rounds: Vec<&[(SimTime, FlowId, u64)]> = s.chunks_exact(n).collect();
    for w in rounds.windows(2) {
        let (t0, t1) = (w[0][0].0, w[1][0].0);
        if t0 < after || t1 <= t0 {
            continue;
        }
        let dt = (t1 - t0).as_secs_f64();
        let rates = (0..n)
            .map(|i| (w[1][i].2 - w[0][i].2) as f64 * 8.0 / dt)
            .collect();
        out.push((t0, t1, rates));
    }
    out
}

pub fn fairness(sim: &Sim, after: SimTime) -> Fairness {
    let iv = interval_rates(sim, after);
    let nan = f64::NAN;
    let jains: Vec<f64> = iv
        .iter()
        .filter_map(|(_, _, r)| jain_index(r).ok())
        .collect();
    let jain_mean = mean(&jains).unwrap_or(nan);
    let (Some(first), Some(last)) = (iv.first(), iv.last()) else {
        return Fairness {
            jain_mean,
            jain_total: nan,
            mean_mbps: nan,
            std_mbps: nan,
            sum_mbps: nan,
        };
    };
    let span = (last.1 - first.0).as_secs_f64();
    let n = sim.hosts.flows.len();
    let mut total = vec![0.0; n];
    for (t0, t1, r) in &iv {
        let dt = (*t1 - *t0).as_secs_f64();
        for i in 0..n {
            total[i] += r[i] * dt / span / 1e6;
        }
    }
    Fairness {
        jain_mean,
        jain_total: jain_index(&total).unwrap_or(nan),
        mean_mbps: mean(&total).unwrap_or(nan),
        std_mbps: std_dev(&total).unwrap_or(0.0),
        sum_mbps: total.iter().sum(),
    }
}

/// Append the `seq` and `throughput` tables when their measurements are on.
pub fn tables(sim: &Sim, tables: &mut Vec<Table>) {
    let rows = &sim.obs.samplers.seq.rows;
    if sim.obs.samplers.seq.on {
        let mut t = Table::new("seq");
        t.f64(
            "time_s",
            rows.iter().map(|r| r.time.as_secs_f64()).collect(),
        )
        .i64("flow", rows.iter().map(|r| r.flow.0 as i64).collect())
        .str(
            "what",
            rows.iter()
                .map(|r| if r.what == SEQ_DATA { "data" } else { "ack" }.to_string())
                .collect(),
        )
        .i64("seq", rows.iter().map(|r| r.seq as i64).collect())
        .i64("len", rows.iter().map(|r| r.len as i64).collect())
        .i64("ece", rows.iter().map(|r| r.ece as i64).collect())
        .i64("cwr", rows.iter().map(|r| r.cwr as i64).collect())
        .i64("retx", rows.iter().map(|r| r.retx as i64).collect());
        tables.push(t);
    }
    if sim.obs.samplers.tput_interval > SimTime::ZERO {
        let iv = interval_rates(sim, SimTime::ZERO);
        let mut time = Vec::new();
        let mut flow = Vec::new();
        let mut mbps = Vec::new();
        for (t0, _, r) in &iv {
            for (i, &x) in r.iter().enumerate() {
                time.push(t0.as_secs_f64());
                flow.push(i as i64);
                mbps.push(x / 1e6);
            }
        }
        let mut t = Table::new("throughput");
        t.f64("time_s", time).i64("flow", flow).f64("mbps", mbps);
        tables.push(t);
    }
}

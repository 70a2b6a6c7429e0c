//! Summary columns and the `messages` table of the workload apps (flow completion times).

use crate::base::table::Table;
use crate::engine::sim::Sim;

/// Summary columns and the `messages` table (one row per message) of the workload apps.
pub fn result_tables(sim: &Sim, summary: &mut Table) -> Option<Table> {
    let s = fct_summary(sim)?;
    summary
        .i64("messages", vec![s.messages as i64])
        .i64("messages_done", vec![s.done as i64])
        .i64("timeouts_small", vec![s.small_timeouts as i64])
        .i64("small_with_timeout", vec![s.small_with_timeout as i64])
        .f64("fct_mean_s", vec![s.all_mean]);
    for (i, name) in ["small", "medium", "large"].iter().enumerate() {
        let (m, p) = s.bins.get(i).copied().unwrap_or((f64::NAN, f64::NAN));
        summary
            .f64(&format!("fct_{name}_mean_s"), vec![m])
            .f64(&format!("fct_{name}_p99_s"), vec![p]);
    }
    let mut t = Table::new("messages");
    let (mut app, mut flow, mut svc, mut class, mut bytes, mut st, mut en) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut tos = vec![];
    for (ai, a) in sim.apps.iter().enumerate() {
        if let crate::engine::apps::App::Workload(w) = a {
            for m in &w.messages {
                app.push(ai as i64);
                flow.push(m.flow.0 as i64);
                svc.push(m.service as i64);
                class.push(m.class as i64);
                bytes.push(m.bytes as i64);
                st.push(m.arrival.as_secs_f64());
                en.push(m.end.map_or(f64::NAN, |e| e.as_secs_f64()));
                tos.push(m.timeouts as i64);
            }
        }
    }
    t.i64("app", app)
        .i64("flow", flow)
        .i64("service", svc)
        .i64("class", class)
        .i64("bytes", bytes)
        .f64("start_s", st)
        .f64("end_s", en)
        .i64("timeouts", tos);
    Some(t)
}

/// FCT summary of all workload apps' finished messages by the TCN size bins.
struct FctSummary {
    pub messages: u64,
    pub done: u64,
    pub all_mean: f64,
    /// (mean, p99) per bin: small, medium, large (NaN for an empty bin).
    pub bins: Vec<(f64, f64)>,
    /// Timeouts of finished small messages (the first bin) and how many of them had any.
    pub small_timeouts: u64,
    pub small_with_timeout: u64,
}

fn fct_summary(sim: &Sim) -> Option<FctSummary> {
    let mut any = false;
    let mut messages = 0u64;
    let mut pairs = Vec::new();
    let bins = crate::base::stats::SizeBins::tcn_default();
    let (mut small_timeouts, mut small_with_timeout) = (0u64, 0u64);
    for a in &sim.apps {
        if let crate::engine::apps::App::Workload(w) = a {
            any = true;
            messages += w.messages.len() as u64;
            for m in &w.messages {
                if let Some(e) = m.end {
                    pairs.push((m.bytes.max(1), (e - m.arrival).as_secs_f64()));
                    if bins.bin_of(m.bytes.max(1)) == 0 {
                        small_timeouts += m.timeouts as u64;
                        small_with_timeout += (m.timeouts > 0) as u64;
                    }
                }
            }
        }
    }
    if !any {
        return None;
    }
    let all: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let summ = crate::base::stats::fct_by_bin(&pairs, &bins).unwrap_or_default();
    Some(FctSummary {
        messages,
        done: pairs.len() as u64,
        all_mean: crate::base::stats::mean(&all).unwrap_or(f64::NAN),
        bins: summ
            .iter()
            .map(|b| (b.mean.unwrap_or(f64::NAN), b.p99.unwrap_or(f64::NAN)))
            .collect(),
        small_timeouts,
        small_with_timeout,
    })
}

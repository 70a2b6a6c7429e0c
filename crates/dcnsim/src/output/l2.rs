//! Result tables of layer 2: QCN, PAUSE and PFC counters, rate-limiter series.

use crate::base::table::Table;
use crate::base::units::SimTime;
use crate::engine::l2::*;
use crate::engine::sim::Sim;
use crate::model::l2::*;

/// Summary columns and tables of the L2 features (only when they are configured).
pub fn tables(sim: &Sim) -> Vec<Table> {
    let l = match sim.l2.as_ref() {
        Some(l) => l,
        None => return Vec::new(),
    };
    let end = sim.end;
    let mut out = Vec::new();
    let mut t = Table::new("l2_ports");
    let idx: Vec<usize> = (0..sim.ports.len())
        .filter(|&i| {
            l.cp[i].is_some() || l.pause_sent[i] > 0 || l.pause_rcvd[i] > 0 || l.cnm_port[i] > 0
        })
        .collect();
    t.str(
        "port",
        idx.iter().map(|&i| sim.ports[i].name.clone()).collect(),
    )
    .i64(
        "cnms_sent",
        idx.iter().map(|&i| l.cnm_port[i] as i64).collect(),
    )
    .i64(
        "cp_samples",
        idx.iter()
            .map(|&i| {
                l.cp[i]
                    .as_ref()
                    .map(|c| c.stats.samples as i64)
                    .unwrap_or(0)
            })
            .collect(),
    )
    .i64(
        "cp_samples_dropped",
        idx.iter()
            .map(|&i| {
                l.cp[i]
                    .as_ref()
                    .map(|c| c.stats.dropped_samples as i64)
                    .unwrap_or(0)
            })
            .collect(),
    )
    .i64(
        "pause_sent",
        idx.iter().map(|&i| l.pause_sent[i] as i64).collect(),
    )
    .i64(
        "pause_received",
        idx.iter().map(|&i| l.pause_rcvd[i] as i64).collect(),
    )
    .f64(
        "paused_s",
        idx.iter()
            .map(|&i| l.pause_tx[i].paused_time_total(end).as_secs_f64())
            .collect(),
    );
    out.push(t);
    if l.pause_mode == PauseMode::Pfc {
        out.push(priority_table(sim, l));
    }
    if !l.rls.is_empty() {
        let mut t = Table::new("limiters");
        let r = &l.rls;
        t.str("limiter", r.iter().map(|x| x.name.clone()).collect())
            .str(
                "host",
                r.iter()
                    .map(|x| sim.nodes[x.host as usize].name.clone())
                    .collect(),
            )
            .i64("flows", r.iter().map(|x| x.flows as i64).collect())
            .i64("cnms", r.iter().map(|x| x.cnms as i64).collect())
            .i64("notified", r.iter().map(|x| x.notified as i64).collect())
            .i64(
                "released_pkts",
                r.iter().map(|x| x.released as i64).collect(),
            )
            .i64(
                "max_held_pkts",
                r.iter().map(|x| x.max_held as i64).collect(),
            )
            .i64("rto_held", r.iter().map(|x| x.rto_held as i64).collect())
            .f64(
                "final_rate_mbps",
                r.iter().map(|x| x.rate_bps() / 1e6).collect(),
            );
        out.push(t);
    }
    if l.keep_rp_series {
        let s = &l.rp_samples;
        let mut t = Table::new("rp_rate");
        t.f64("time_s", s.iter().map(|x| x.0.as_secs_f64()).collect())
            .str(
                "limiter",
                s.iter().map(|x| l.rls[x.1 as usize].name.clone()).collect(),
            )
            .f64("rate_mbps", s.iter().map(|x| x.2 / 1e6).collect());
        out.push(t);
        let mut t = Table::new("minrate");
        t.f64(
            "time_s",
            l.minrate.iter().map(|x| x.0.as_secs_f64()).collect(),
        )
        .f64("rate_mbps", l.minrate.iter().map(|x| x.1 / 1e6).collect());
        out.push(t);
    }
    if l.flow_interval > SimTime::ZERO {
        let s = &l.flow_samples;
        let mut t = Table::new("flow_rate");
        t.f64("time_s", s.iter().map(|x| x.0.as_secs_f64()).collect())
            .i64("flow", s.iter().map(|x| x.1 as i64).collect())
            .f64("rate_mbps", s.iter().map(|x| x.2).collect());
        out.push(t);
        if !l.app_samples.is_empty() {
            let s = &l.app_samples;
            let ends = |x: &(SimTime, u32, f64), src: bool| -> String {
                match &sim.apps[x.1 as usize] {
                    crate::engine::apps::App::Cbr(c) => sim.nodes
                        [if src { c.src } else { c.dst } as usize]
                        .name
                        .clone(),
                    _ => String::new(),
                }
            };
            let mut t = Table::new("app_rate");
            t.f64("time_s", s.iter().map(|x| x.0.as_secs_f64()).collect())
                .i64("app", s.iter().map(|x| x.1 as i64).collect())
                .str("src", s.iter().map(|x| ends(x, true)).collect())
                .str("dst", s.iter().map(|x| ends(x, false)).collect())
                .f64("rate_mbps", s.iter().map(|x| x.2).collect());
            out.push(t);
        }
    }
    out
}

/// Extra summary columns (appended to `summary` when L2 is configured).
pub fn summary_columns(sim: &Sim, t: &mut Table) {
    let l = match sim.l2.as_ref() {
        Some(l) => l,
        None => return,
    };
    let end = sim.end;
    let paused: f64 = l
        .pause_tx
        .iter()
        .map(|s| s.paused_time_total(end).as_secs_f64())
        .sum();
    t.i64("cnm_sent", vec![l.cnm_sent as i64])
        .i64("cnm_received", vec![l.cnm_received as i64])
        .i64("cnm_ignored", vec![l.cnm_ignored as i64])
        .i64("timeouts_held_in_limiter", vec![l.rto_held as i64])
        .i64("pause_sent", vec![l.pause_sent.iter().sum::<u64>() as i64])
        .i64(
            "pause_received",
            vec![l.pause_rcvd.iter().sum::<u64>() as i64],
        )
        .f64("paused_s", vec![paused])
        .f64("avg_minrate_mbps", vec![l.avg_minrate_mbps()]);
}

/// Table `pfc_ports`: per port and priority with any PFC activity, frames sent/received and
/// paused time.
pub fn priority_table(sim: &Sim, l: &L2) -> Table {
    let end = sim.end;
    let (mut port, mut prio, mut sent, mut rcvd, mut paused) =
        (vec![], vec![], vec![], vec![], vec![]);
    for (i, p) in sim.ports.iter().enumerate() {
        for c in 0..PFC_PRIORITIES {
            let s = l.mqp.sent_prio[i][c];
            let r = l.mqp.rcvd_prio[i][c];
            let t = if l.pause_mode == PauseMode::Pfc {
                l.pause_tx[i].paused_time(end, c as u8)
            } else {
                SimTime::ZERO
            };
            if s == 0 && r == 0 && t == SimTime::ZERO {
                continue;
            }
            port.push(p.name.clone());
            prio.push(c as i64);
            sent.push(s as i64);
            rcvd.push(r as i64);
            paused.push(t.as_secs_f64());
        }
    }
    let mut t = Table::new("pfc_ports");
    t.str("port", port)
        .i64("priority", prio)
        .i64("pfc_sent", sent)
        .i64("pfc_received", rcvd)
        .f64("paused_s", paused);
    t
}

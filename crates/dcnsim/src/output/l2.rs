//! Result tables of layer 2: QCN, PAUSE and PFC counters, rate-limiter series.

use crate::base::table::Table;
use crate::base::units::SimTime;
use crate::engine::datapath::l2::*;
use crate::engine::sim::Sim;
use crate::model::l2::*;

/// Summary columns and tables of the L2 features (only when they are configured).
pub fn tables(sim: &Sim) -> Vec<Table> {
    let l = match sim.l2.as_ref() {
        Some(l) => l,
        None => return Vec::new(),
    };
    let mut out = vec![ports(sim, l)];
    if l.pause_mode == PauseMode::Pfc {
        out.push(priority_table(sim, l));
    }
    if !l.rls.is_empty() {
        out.push(limiters(sim, l));
    }
    if l.keep_rp_series {
        out.extend(rp_series(l));
    }
    if l.flow_interval > SimTime::ZERO {
        out.extend(rate_series(sim, l));
    }
    out
}

/// `l2_ports`: one row per port with a congestion point or PAUSE traffic.
fn ports(sim: &Sim, l: &L2) -> Table {
    let end = sim.end;
    let idx: Vec<usize> = (0..sim.net.ports.len())
        .filter(|&i| {
            l.cp[i].is_some() || l.pause_sent[i] > 0 || l.pause_rcvd[i] > 0 || l.cnm_port[i] > 0
        })
        .collect();
    let int = |g: &dyn Fn(usize) -> u64| idx.iter().map(|&i| g(i) as i64).collect::<Vec<i64>>();
    let cp_stat = |i: usize, g: fn(&CongestionPoint) -> u64| l.cp[i].as_ref().map_or(0, g);
    let mut t = Table::new("l2_ports");
    t.str(
        "port",
        idx.iter()
            .map(|&i| crate::engine::net::port_name(&sim.net.nodes, &sim.net.ports[i]))
            .collect(),
    )
    .i64("cnms_sent", int(&|i| l.cnm_port[i]))
    .i64("cp_samples", int(&|i| cp_stat(i, |c| c.stats.samples)))
    .i64(
        "cp_samples_dropped",
        int(&|i| cp_stat(i, |c| c.stats.dropped_samples)),
    )
    .i64("pause_sent", int(&|i| l.pause_sent[i]))
    .i64("pause_received", int(&|i| l.pause_rcvd[i]))
    .f64(
        "paused_s",
        idx.iter()
            .map(|&i| l.pause_tx[i].paused_time_total(end).as_secs_f64())
            .collect(),
    );
    t
}

/// `limiters`: one row per QCN rate limiter.
fn limiters(sim: &Sim, l: &L2) -> Table {
    let r = &l.rls;
    let int = |g: fn(&Limiter) -> u64| r.iter().map(|x| g(x) as i64).collect::<Vec<i64>>();
    let mut t = Table::new("limiters");
    t.str("limiter", r.iter().map(|x| x.name.clone()).collect())
        .str(
            "host",
            r.iter()
                .map(|x| sim.net.nodes[x.host.idx()].name.clone())
                .collect(),
        )
        .i64("flows", int(|x| x.flows as u64))
        .i64("cnms", int(|x| x.cnms))
        .i64("notified", int(|x| x.notified))
        .i64("released_pkts", int(|x| x.released))
        .i64("max_held_pkts", int(|x| x.max_held))
        .i64("rto_held", int(|x| x.rto_held))
        .f64(
            "final_rate_mbps",
            r.iter().map(|x| x.rate_bps() / 1e6).collect(),
        );
    t
}

/// `rp_rate` (every limiter's rate over time) and `minrate`.
fn rp_series(l: &L2) -> [Table; 2] {
    let s = &l.rp_samples;
    let mut t = Table::new("rp_rate");
    t.f64("time_s", s.iter().map(|x| x.0.as_secs_f64()).collect())
        .str(
            "limiter",
            s.iter().map(|x| l.rls[x.1 as usize].name.clone()).collect(),
        )
        .f64("rate_mbps", s.iter().map(|x| x.2 / 1e6).collect());
    let mut m = Table::new("minrate");
    m.f64(
        "time_s",
        l.minrate.iter().map(|x| x.0.as_secs_f64()).collect(),
    )
    .f64("rate_mbps", l.minrate.iter().map(|x| x.1 / 1e6).collect());
    [t, m]
}

/// `flow_rate` and, with CBR apps, `app_rate`: delivered rates sampled over time.
fn rate_series(sim: &Sim, l: &L2) -> Vec<Table> {
    let s = &l.flow_samples;
    let mut t = Table::new("flow_rate");
    t.f64("time_s", s.iter().map(|x| x.0.as_secs_f64()).collect())
        .i64("flow", s.iter().map(|x| x.1 .0 as i64).collect())
        .f64("rate_mbps", s.iter().map(|x| x.2).collect());
    let mut out = vec![t];
    if !l.app_samples.is_empty() {
        let s = &l.app_samples;
        let ends = |x: &(SimTime, u32, f64), src: bool| -> String {
            match &sim.apps[x.1 as usize] {
                crate::engine::apps::App::Cbr(c) => sim.net.nodes
                    [if src { c.src } else { c.dst }.idx()]
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
        .f64("paused_s", vec![paused]);
    // The mean lowest QCN rate exists only with QCN reaction points sampled
    // (`measure.rp_interval`): PAUSE or PFC alone, or only fixed-rate limiters, have none,
    // and the column is left out (as `cbr_mbps` without a CBR app) rather than written NaN.
    if !l.minrate.is_empty() {
        t.f64("avg_minrate_mbps", vec![l.avg_minrate_mbps()]);
    }
}

/// Table `pfc_ports`: per port and priority with any PFC activity, frames sent/received and
/// paused time.
pub fn priority_table(sim: &Sim, l: &L2) -> Table {
    let end = sim.end;
    let (mut port, mut prio, mut sent, mut rcvd, mut paused) =
        (vec![], vec![], vec![], vec![], vec![]);
    for (i, p) in sim.net.ports.iter().enumerate() {
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
            port.push(crate::engine::net::port_name(&sim.net.nodes, p));
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

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
    if l.pause_sw.iter().any(|s| s.is_some()) {
        out.push(pause_tree(sim, l));
    }
    if l.pause_sw.iter().flatten().any(|s| s.wm.mmu().is_some()) {
        out.push(pfc_buffer(sim, l));
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

/// One edge of the pause tree: the switch port that sent the frames, the upstream port they
/// paused, the priority (-1: 802.3x, every priority) and the frames sent.
struct Edge {
    from: usize,
    up: usize,
    prio: i64,
    frames: u64,
}

/// The edges of the pause tree: every (port, priority) that sent PAUSE / PFC frames.
fn pause_edges(sim: &Sim, l: &L2) -> Vec<Edge> {
    let mut e = Vec::new();
    for (i, p) in sim.net.ports.iter().enumerate() {
        if l.pause_sent[i] == 0 {
            continue;
        }
        let up = p.peer_port.idx();
        match l.pause_mode {
            PauseMode::Pause => e.push(Edge {
                from: i,
                up,
                prio: -1,
                frames: l.pause_sent[i],
            }),
            PauseMode::Pfc => {
                for (c, &n) in l.mqp.sent_prio[i].iter().enumerate() {
                    if n > 0 {
                        e.push(Edge {
                            from: i,
                            up,
                            prio: c as i64,
                            frames: n,
                        });
                    }
                }
            }
        }
    }
    e
}

/// Hop of each edge: 0 when the pausing switch was itself not paused in that priority (the
/// congestion is its own), else 1 + the largest hop of the edges that paused it. A cycle of
/// pauses (a possible PFC deadlock) drives its hops up to the number of edges.
fn pause_hops(sim: &Sim, e: &[Edge]) -> Vec<i64> {
    let node = |i: usize| sim.net.ports[i].node;
    let mut hop = vec![0i64; e.len()];
    for _ in 0..e.len() {
        let mut changed = false;
        for k in 0..e.len() {
            let h = e
                .iter()
                .enumerate()
                .filter(|(_, x)| x.prio == e[k].prio && node(x.up) == node(e[k].from))
                .map(|(j, _)| hop[j] + 1)
                .max()
                .unwrap_or(0)
                .min(e.len() as i64);
            if h != hop[k] {
                hop[k] = h;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    hop
}

/// Table `pause_tree`: one row per (pausing switch port, priority) with the upstream port it
/// paused, the frames it sent, how long the upstream was paused in that priority, and the
/// hop from the root of the congestion (docs/tables.md).
pub fn pause_tree(sim: &Sim, l: &L2) -> Table {
    let end = sim.end;
    let e = pause_edges(sim, l);
    let hop = pause_hops(sim, &e);
    let name = |i: usize| crate::engine::net::port_name(&sim.net.nodes, &sim.net.ports[i]);
    let paused = |x: &Edge| match l.pause_mode {
        PauseMode::Pause => l.pause_tx[x.up].paused_time(end, 0),
        PauseMode::Pfc => l.pause_tx[x.up].paused_time(end, x.prio as u8),
    };
    let mut t = Table::new("pause_tree");
    t.str("port", e.iter().map(|x| name(x.from)).collect())
        .i64("priority", e.iter().map(|x| x.prio).collect())
        .str("paused_port", e.iter().map(|x| name(x.up)).collect())
        .i64("frames", e.iter().map(|x| x.frames as i64).collect())
        .f64(
            "paused_s",
            e.iter().map(|x| paused(x).as_secs_f64()).collect(),
        )
        .i64("hop", hop);
    t
}

/// Table `pfc_buffer` (dynamic pause threshold only): one row per switch ingress port and
/// priority that paused, used headroom or dropped.
pub fn pfc_buffer(sim: &Sim, l: &L2) -> Table {
    let (mut port, mut prio, mut hdrm, mut max_sh, mut max_h) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut pauses, mut drops, mut drop_b) = (vec![], vec![], vec![]);
    for (n, sw) in l.pause_sw.iter().enumerate() {
        let Some(sw) = sw else { continue };
        let Some(m) = sw.wm.mmu() else { continue };
        let classes = sw.wm.classes_per_input();
        for (ii, &pid) in sim.net.nodes[n].ports.iter().enumerate() {
            for c in 0..classes {
                let g = m.group(ii * classes + c);
                let np = sw.wm.pauses(ii, c as u8);
                if np == 0 && g.max_hdrm == 0 && g.drops == 0 {
                    continue;
                }
                port.push(sim.net.port_name(pid));
                prio.push(if classes == 1 { -1 } else { c as i64 });
                hdrm.push(m.headroom_of(ii) as i64);
                max_sh.push(g.max_shared as i64);
                max_h.push(g.max_hdrm as i64);
                pauses.push(np as i64);
                drops.push(g.drops as i64);
                drop_b.push(g.drop_bytes as i64);
            }
        }
    }
    let mut t = Table::new("pfc_buffer");
    t.str("port", port)
        .i64("priority", prio)
        .i64("headroom_bytes", hdrm)
        .i64("max_shared_bytes", max_sh)
        .i64("max_headroom_bytes", max_h)
        .i64("pauses", pauses)
        .i64("drops", drops)
        .i64("drop_bytes", drop_b);
    t
}

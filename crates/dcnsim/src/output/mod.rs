//! Result tables: named columns handed to Python as lists (and written as CSV there).

use crate::engine::apps::App;
use crate::engine::net::{DropReason, MarkReason, NodeKind, Port, ReasonCounts};
use crate::engine::sim::Sim;
use crate::model::transport::{Cell, FlowRow};
use crate::scenario::{BuildInfo, Loaded};

pub mod l2;
pub mod messages;
pub mod mq;
pub mod observe;
pub mod odctcp;
pub mod slowdown;

pub use crate::base::table::{Column, Table};

/// A limit that may be unlimited (`u64::MAX`, or anything past `i64::MAX`): `None`, an
/// empty cell, rather than a sentinel number.
fn limit_i64(v: u64) -> Option<i64> {
    i64::try_from(v).ok()
}

fn clamp_i64(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

/// Every result table of a finished run, in a fixed order: summary, messages, flows,
/// ports, apps, queues/estimates, pings, completions, queue, cwnd, the ODCTCP tables,
/// silent, the layer-2 tables, then pcap.
pub fn collect(loaded: &Loaded, sim: &Sim, info: &BuildInfo) -> Vec<Table> {
    let mut tables = Vec::new();
    let goodput = app_goodput(sim);
    let mut summary = summary(loaded, sim, info, &goodput);
    let workload_messages = crate::output::messages::result_tables(sim, &mut summary);
    slowdown::summary(sim, &mut summary);
    tables.push(summary);
    tables.extend(workload_messages);
    tables.push(flows(sim));
    tables.push(ports(sim));
    tables.push(goodput.table);
    tables.extend(crate::output::mq::result_tables(sim));
    tables.extend(pings(sim));
    tables.push(completions(sim));
    samplers(sim, &mut tables);
    crate::output::odctcp::tables(sim, &mut tables);
    tables.extend(silent(sim));
    tables.extend(crate::output::l2::tables(sim));
    tables.extend(crate::output::observe::pcap_table(sim));
    tables
}

/// The `apps` table and the per-app byte counts the summary needs.
struct AppGoodput {
    table: Table,
    app_bytes: Vec<u64>,
    rounds_total: u64,
    delivered: u64,
}

fn app_goodput(sim: &Sim) -> AppGoodput {
    let dur = sim.end.as_secs_f64();
    let mut app_bytes = vec![0u64; sim.apps.len()];
    for (i, f) in sim.hosts.flows.iter().enumerate() {
        let a = sim.hosts.targets[i].app;
        if a.idx() < app_bytes.len() {
            app_bytes[a.idx()] += f.delivered();
        }
    }
    let mut rounds_total = 0u64;
    let mut apps = Table::new("apps");
    let mut kinds = Vec::new();
    let mut goodputs = Vec::new();
    let mut rounds = Vec::new();
    for (i, a) in sim.apps.iter().enumerate() {
        let (bytes, r) = match a {
            App::Incast(x) => (app_bytes[i], x.rounds_done),
            App::Bulk(_) => (app_bytes[i], 0),
            App::Cbr(c) => (c.received_bytes, 0),
            App::Schedule(_) => (app_bytes[i], 0),
            App::Ping(_) => (0, 0),
            App::Transactions(_) => (app_bytes[i], 0),
            App::Workload(_) => (app_bytes[i], 0),
        };
        rounds_total += r;
        kinds.push(a.kind().to_string());
        goodputs.push(bytes as f64 * 8.0 / dur / 1e6);
        rounds.push(r as i64);
    }
    let delivered: u64 = sim.hosts.flows.iter().map(|f| f.delivered()).sum::<u64>()
        + sim
            .apps
            .iter()
            .map(|a| {
                if let App::Cbr(c) = a {
                    c.received_bytes
                } else {
                    0
                }
            })
            .sum::<u64>();
    apps.i64("app", (0..sim.apps.len() as i64).collect())
        .str("kind", kinds)
        .f64("goodput_mbps", goodputs)
        .i64("rounds", rounds);

    AppGoodput {
        table: apps,
        app_bytes,
        rounds_total,
        delivered,
    }
}

/// The one-row `summary` table (before the workload apps add their columns).
fn summary(loaded: &Loaded, sim: &Sim, info: &BuildInfo, g: &AppGoodput) -> Table {
    let dur = sim.end.as_secs_f64();
    let (app_bytes, rounds_total, delivered) = (&g.app_bytes, g.rounds_total, g.delivered);
    let fl = &sim.hosts.flows;
    let timeouts: u64 = fl.iter().map(|f| f.counters().timeouts).sum();
    let retx: u64 = fl.iter().map(|f| f.counters().retransmits).sum();
    let frs: u64 = fl.iter().map(|f| f.counters().fast_recoveries).sum();
    let (mut drops, mut marks) = (0u64, 0u64);
    for p in &sim.net.ports {
        if sim.net.nodes[p.node.idx()].kind == NodeKind::Switch {
            drops += p.stats.drops();
            marks += p.stats.marks();
        }
    }
    let silent_s: f64 = sim
        .net
        .ports
        .iter()
        .filter_map(|p| p.silent.as_ref())
        .fold(0.0, |acc, s| acc + s.total.as_secs_f64());
    let bottleneck_pkts = info
        .bottleneck_port
        .map(|p| sim.net.ports[p.idx()].stats.tx_data_pkts)
        .unwrap_or(0);
    let id = loaded.scenario.meta.id.clone().unwrap_or_default();
    let mut summary = Table::new("summary");
    summary
        .str("id", vec![id])
        .i64("seed", vec![clamp_i64(sim.seed)])
        .f64("duration_s", vec![dur])
        .i64("flows", vec![sim.hosts.flows.len() as i64])
        .i64("servers", vec![info.servers as i64])
        .opt_i64(
            "switch_buffer_bytes",
            vec![limit_i64(info.switch_buffer_bytes)],
        )
        .f64("goodput_mbps", vec![delivered as f64 * 8.0 / dur / 1e6])
        .i64("delivered_bytes", vec![clamp_i64(delivered)])
        .i64("timeouts", vec![timeouts as i64])
        .i64("retransmits", vec![retx as i64])
        .i64("fast_recoveries", vec![frs as i64])
        .i64("drops", vec![drops as i64])
        .i64("marks", vec![clamp_i64(marks)])
        .f64("silent_s", vec![silent_s])
        .i64("rounds", vec![rounds_total as i64])
        .i64("bottleneck_pkts", vec![bottleneck_pkts as i64])
        .i64("events", vec![sim.events.popped as i64])
        .i64("peak_pending", vec![sim.events.peak_len as i64]);
    if sim.obs.samplers.tput_interval > crate::base::units::SimTime::ZERO {
        let after = loaded
            .scenario
            .measure
            .fairness_after
            .map(|d| d.0)
            .unwrap_or(crate::base::units::SimTime::ZERO);
        let f = crate::output::odctcp::fairness(sim, after);
        summary
            .f64("jain_index", vec![f.jain_mean])
            .f64("jain_total", vec![f.jain_total])
            .f64("flow_tput_mean_mbps", vec![f.mean_mbps])
            .f64("flow_tput_std_mbps", vec![f.std_mbps])
            .f64("utilisation_mbps", vec![f.sum_mbps]);
    }
    if sim.apps.iter().any(|a| matches!(a, App::Cbr(_))) {
        // Bytes the CBR apps' receivers got, as a rate (`goodput_mbps` adds TCP's).
        let cbr: u64 = sim
            .apps
            .iter()
            .map(|a| match a {
                App::Cbr(c) => c.received_bytes,
                _ => 0,
            })
            .sum();
        summary.f64("cbr_mbps", vec![cbr as f64 * 8.0 / dur / 1e6]);
    }
    crate::output::l2::summary_columns(sim, &mut summary);
    crate::output::observe::summary_columns(sim, &mut summary);
    if sim.apps.iter().any(|a| matches!(a, App::Cbr(_)))
        && sim.apps.iter().any(|a| matches!(a, App::Incast(_)))
    {
        // Mixed set-ups: goodput of the synchronized reads alone.
        let reads: u64 = (0..sim.apps.len())
            .filter(|&i| matches!(sim.apps[i], App::Incast(_)))
            .map(|i| app_bytes[i])
            .sum();
        summary.f64("incast_goodput_mbps", vec![reads as f64 * 8.0 / dur / 1e6]);
    }
    summary
}

/// Mark the tables of a run stopped before its end (`RunOptions::max_events`,
/// `max_wall`): `summary` gains `partial` = 1 and `simulated_s`, the time reached (a
/// complete run has neither column, so its tables stay as they were).
pub fn mark_partial(tables: &mut [Table], sim: &Sim) {
    if let Some(t) = tables.iter_mut().find(|t| t.name == "summary") {
        t.i64("partial", vec![1])
            .f64("simulated_s", vec![sim.now.as_secs_f64()]);
    }
}

/// One row per flow: the common columns (flow, app, src, dst, then `transport`, the kind's
/// name, when any flow is not TCP, and delivered_bytes), then each kind's own columns
/// (`Transport::row`) in the order they first appear. A row without a column another
/// kind has gets an empty cell (NaN for a float column). Without flows: TCP's columns.
pub fn flows(sim: &Sim) -> Table {
    let fl = &sim.hosts.flows;
    let name = |n: crate::base::ids::NodeId| sim.net.nodes[n.idx()].name.clone();
    let mut t = Table::new("flows");
    t.i64("flow", (0..fl.len() as i64).collect())
        .i64(
            "app",
            sim.hosts.targets.iter().map(|t| t.app.0 as i64).collect(),
        )
        .str("src", fl.iter().map(|f| name(f.src())).collect())
        .str("dst", fl.iter().map(|f| name(f.dst())).collect());
    if fl.iter().any(|f| f.tcp().is_none()) {
        let kinds = fl.iter().map(|f| f.kind_name().to_string()).collect();
        t.str("transport", kinds);
    }
    t.i64(
        "delivered_bytes",
        fl.iter().map(|f| clamp_i64(f.delivered())).collect(),
    );
    let rows: Vec<FlowRow> = fl
        .iter()
        .map(|f| {
            let mut r = FlowRow::default();
            f.row(&mut r);
            r
        })
        .collect();
    kind_columns(&mut t, &rows);
    t
}

/// Append the kinds' own columns of the `flows` table from its rows' cells.
fn kind_columns(t: &mut Table, rows: &[FlowRow]) {
    let mut names: Vec<(&'static str, Cell)> = Vec::new();
    if rows.is_empty() {
        // No flows: TCP's columns, empty (the table's shape before other kinds existed).
        names = crate::model::transport::tcp::columns().cells;
    }
    for r in rows {
        for &(n, c) in &r.cells {
            if !names.iter().any(|(m, _)| *m == n) {
                names.push((n, c));
            }
        }
    }
    for (n, first) in names {
        let cells: Vec<Option<Cell>> = rows
            .iter()
            .map(|r| r.cells.iter().find(|(m, _)| *m == n).map(|&(_, c)| c))
            .collect();
        let whole = cells.iter().all(Option::is_some);
        match first {
            Cell::I64(_) => {
                let v = cells.iter().map(|c| c.map(|c| cell_i64(n, c)));
                if whole {
                    t.i64(n, v.map(|x| x.unwrap_or_default()).collect());
                } else {
                    t.opt_i64(n, v.collect());
                }
            }
            Cell::F64(_) => {
                let v = cells.iter().map(|c| c.map_or(f64::NAN, |c| cell_f64(n, c)));
                t.f64(n, v.collect());
            }
        }
    }
}

fn cell_i64(name: &str, c: Cell) -> i64 {
    match c {
        Cell::I64(v) => v,
        Cell::F64(_) => panic!("flows column {name}: an integer in one kind, a float in another"),
    }
}

fn cell_f64(name: &str, c: Cell) -> f64 {
    match c {
        Cell::F64(v) => v,
        Cell::I64(_) => panic!("flows column {name}: a float in one kind, an integer in another"),
    }
}

/// One row per switch port.
fn ports(sim: &Sim) -> Table {
    let ps: Vec<&Port> = sim
        .net
        .ports
        .iter()
        .filter(|p| sim.net.nodes[p.node.idx()].kind == NodeKind::Switch)
        .collect();
    let int = |g: fn(&Port) -> u64| ps.iter().map(|p| g(p) as i64).collect::<Vec<i64>>();
    let mut t = Table::new("ports");
    t.str(
        "port",
        ps.iter()
            .map(|p| crate::engine::net::port_name(&sim.net.nodes, p))
            .collect(),
    )
    .i64("tx_pkts", int(|p| p.stats.tx_pkts))
    .i64("tx_bytes", int(|p| p.stats.tx_bytes))
    .i64("drops", int(|p| p.stats.drops()))
    .i64("drop_bytes", int(|p| p.stats.drop_bytes))
    .i64("max_queue_bytes", int(|p| p.stats.max_queue_bytes))
    .i64("marks", int(|p| p.stats.marks()))
    .i64("aqm_drops", int(|p| p.stats.aqm_drops()));
    reason_columns(&mut t, ps.iter().map(|p| &p.stats.by));
    t
}

/// Append one column per drop reason (`drops_<reason>`) and per mark reason
/// (`marks_<reason>`) to `t`, from the counters of its rows in order.
pub(crate) fn reason_columns<'a>(t: &mut Table, rows: impl Iterator<Item = &'a ReasonCounts>) {
    let rows: Vec<&ReasonCounts> = rows.collect();
    for r in DropReason::ALL {
        let col = rows.iter().map(|c| c.drops[r as usize] as i64).collect();
        t.i64(&format!("drops_{}", r.name()), col);
    }
    for r in MarkReason::ALL {
        let col = rows.iter().map(|c| c.marks[r as usize] as i64).collect();
        t.i64(&format!("marks_{}", r.name()), col);
    }
    // The marks of disciplines outside the built-ins (`model/aqm/`), only when there are.
    let ext = MarkReason::Extension;
    if rows.iter().any(|c| c.marks[ext as usize] > 0) {
        let col = rows.iter().map(|c| c.marks[ext as usize] as i64).collect();
        t.i64(&format!("marks_{}", ext.name()), col);
    }
}

/// The RTT samples of the ping apps, if any.
fn pings(sim: &Sim) -> Option<Table> {
    let mut app = Vec::new();
    let mut rtt = Vec::new();
    for (i, a) in sim.apps.iter().enumerate() {
        if let App::Ping(p) = a {
            for r in &p.rtts {
                app.push(i as i64);
                rtt.push(r.as_secs_f64());
            }
        }
    }
    if !app.is_empty() {
        let mut t = Table::new("pings");
        t.i64("app", app).f64("rtt_s", rtt);
        return Some(t);
    }
    None
}

/// One row per completed transfer.
pub(crate) fn completions(sim: &Sim) -> Table {
    let mut comp = Table::new("completions");
    let c = &sim.hosts.completions;
    comp.i64("flow", c.iter().map(|x| x.flow.0 as i64).collect())
        .i64("bytes", c.iter().map(|x| x.bytes as i64).collect())
        .f64("start_s", c.iter().map(|x| x.start.as_secs_f64()).collect())
        .f64("end_s", c.iter().map(|x| x.end.as_secs_f64()).collect());
    if !sim.hosts.completion_service.is_empty() {
        // Service of workload messages (`engine/apps/workload.rs`); missing (an empty
        // cell) for other completions.
        let mut svc: Vec<Option<i64>> = vec![None; c.len()];
        for &(i, s) in &sim.hosts.completion_service {
            if let Some(v) = svc.get_mut(i as usize) {
                *v = Some(s as i64);
            }
        }
        comp.opt_i64("service", svc);
    }
    if let Some((ideal, slowdown)) = slowdown::columns(sim) {
        comp.f64("ideal_s", ideal).f64("slowdown", slowdown);
    }
    comp
}

/// The `queue` and `cwnd` sampler tables, when sampling was asked for.
fn samplers(sim: &Sim, tables: &mut Vec<Table>) {
    if !sim.obs.samplers.queue_ports.is_empty() {
        let q = &sim.obs.samplers.queue;
        let names = sim.net.port_names();
        let mut t = Table::new("queue");
        t.f64("time_s", q.iter().map(|x| x.0.as_secs_f64()).collect())
            .str("port", q.iter().map(|x| names[x.1.idx()].clone()).collect())
            .i64("bytes", q.iter().map(|x| x.2 as i64).collect());
        tables.push(t);
    }
    if !sim.obs.samplers.cwnd_flows.is_empty() {
        let q = &sim.obs.samplers.cwnd;
        let mut t = Table::new("cwnd");
        t.f64("time_s", q.iter().map(|x| x.0.as_secs_f64()).collect())
            .i64("flow", q.iter().map(|x| x.1 .0 as i64).collect())
            .i64("cwnd_bytes", q.iter().map(|x| clamp_i64(x.2)).collect())
            .opt_i64("ssthresh_bytes", q.iter().map(|x| limit_i64(x.3)).collect())
            .f64("alpha", q.iter().map(|x| x.4).collect());
        let r = &sim.obs.samplers.rtt;
        t.f64("srtt_s", r.iter().map(|x| x.0.as_secs_f64()).collect())
            .f64("rto_s", r.iter().map(|x| x.1.as_secs_f64()).collect());
        tables.push(t);
    }
}

/// Silent periods of the tracked ports, if any.
fn silent(sim: &Sim) -> Option<Table> {
    let silent: Vec<_> = sim
        .net
        .ports
        .iter()
        .filter_map(|p| {
            let s = p.silent.as_ref()?;
            Some((crate::engine::net::port_name(&sim.net.nodes, p), s))
        })
        .collect();
    if !silent.is_empty() {
        let mut t = Table::new("silent");
        let mut port = Vec::new();
        let mut start = Vec::new();
        let mut end = Vec::new();
        for (name, s) in silent {
            for &(a, b) in &s.periods {
                port.push(name.clone());
                start.push(a.as_secs_f64());
                end.push(b.as_secs_f64());
            }
        }
        t.str("port", port).f64("start_s", start).f64("end_s", end);
        return Some(t);
    }
    None
}

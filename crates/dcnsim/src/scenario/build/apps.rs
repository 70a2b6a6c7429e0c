//! Builders of `[[apps]]`: the loop over the entries (`build_apps`) and the kinds whose
//! keys are in `config/apps.rs` ("flows" and "mix" are built in `flows.rs`, "workload" in
//! `workload.rs`).

use super::AppArgs;
use crate::base::ids::{AppId, FlowId, NodeId, PortId};
use crate::base::rng::Rng;
use crate::base::units::SimTime;
use crate::engine::apps::{App, Bulk, Cbr, Incast, Ping, Transactions};
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::tcp::TcpFlow;
use crate::scenario::config::apps::{AppCfg, BulkCfg, CbrCfg, IncastCfg, PingCfg, TransactionsCfg};
use crate::scenario::config::workload::WorkloadCfg;
use crate::scenario::config::Scenario;
use crate::scenario::ctx::Ctx;
use crate::scenario::error::ScenarioError;

/// Every `[[apps]]` entry, in order; apps are numbered in `sim.apps` order (a bulk app with
/// `count` adds several).
pub(super) fn build_apps(ctx: &Ctx, s: &Scenario, sim: &mut Sim) -> Result<(), ScenarioError> {
    let base_tcp = super::tcp::tcp_config(ctx, "tcp", &s.tcp)?;
    if s.apps.is_empty() {
        return Err(ctx.err(
            "",
            "apps",
            "the scenario has no [[apps]]: nothing would be simulated",
        ));
    }
    for (ai, a) in s.apps.iter().enumerate() {
        let tcp = std::sync::Arc::new(match a.tcp() {
            Some(t) => super::tcp::tcp_config(ctx, "apps.tcp", &t.over(&s.tcp))?,
            None => base_tcp.clone(),
        });
        build_app(&AppArgs { ctx, ai, tcp: &tcp }, a, sim)?;
    }
    Ok(())
}

/// A host named `name` (the error names `apps.key`).
pub(super) fn host(ctx: &Ctx, sim: &Sim, name: &str, key: &str) -> Result<NodeId, ScenarioError> {
    match sim.node_by_name(name) {
        Some(id) if sim.net.nodes[id.idx()].kind == NodeKind::Host => Ok(id),
        Some(_) => Err(ctx.err(
            "apps",
            key,
            format!("{name:?} is a switch, expected a host"),
        )),
        None => {
            let hosts: Vec<&str> = sim
                .net
                .nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Host)
                .take(5)
                .map(|n| n.name.as_str())
                .collect();
            Err(ctx.err(
                "apps",
                key,
                format!("unknown host {name:?} (hosts are e.g. {hosts:?})"),
            ))
        }
    }
}

fn reachable(sim: &Sim, src: NodeId, dst: NodeId) -> bool {
    sim.net.routing.route(src, dst) != PortId::NONE
}

/// A required `src` or `dst` key of app `ai` of kind `kind`, resolved to a host.
fn end(
    ctx: &Ctx,
    sim: &Sim,
    (ai, kind): (usize, &str),
    key: &str,
    name: &Option<String>,
) -> Result<NodeId, ScenarioError> {
    let name = name
        .as_deref()
        .ok_or_else(|| ctx.err("apps", key, format!("app {ai} ({kind}) needs `{key}`")))?;
    host(ctx, sim, name, key)
}

/// The `src` and `dst` hosts of app `ai` of kind `kind`, with a route from one to the other.
fn src_dst(
    ctx: &Ctx,
    sim: &Sim,
    (ai, kind): (usize, &str),
    src: &Option<String>,
    dst: &Option<String>,
) -> Result<(NodeId, NodeId), ScenarioError> {
    let src = end(ctx, sim, (ai, kind), "src", src)?;
    let dst = end(ctx, sim, (ai, kind), "dst", dst)?;
    if src == dst || !reachable(sim, src, dst) {
        return Err(ctx.err("apps", "dst", format!("app {ai}: no route from src to dst")));
    }
    Ok((src, dst))
}

/// Add the app(s) of entry `ai` to `sim`.
pub(super) fn build_app(args: &AppArgs, a: &AppCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let ctx = args.ctx;
    let (file, text) = (&ctx.loaded.file, &ctx.loaded.text);
    let (ai, seed) = (args.ai, ctx.loaded.scenario.sim.seed);
    match a {
        AppCfg::Incast(c) => app_incast(args, c, sim),
        AppCfg::Bulk(c) => app_bulk(args, c, sim),
        AppCfg::Cbr(c) => app_cbr(args, c, sim),
        AppCfg::Flows(c) => super::flows::build_flows(args, c, sim),
        AppCfg::Mix(c) => super::flows::build_mix(args, c, sim),
        AppCfg::Workload(c) => {
            let conn = super::workload::conn_kind(args, c, sim)?;
            super::workload::build_workload(file, text, sim, ai, c, conn, seed)?;
            warn_idle_workload(ctx, ai, c, sim);
            Ok(())
        }
        AppCfg::Ping(c) => app_ping(args, c, sim),
        AppCfg::Transactions(c) => app_transactions(args, c, sim),
    }
}

/// A workload (the last app built) whose expected gap between messages is longer than
/// the run is legal but carries nothing (the fuzzer's `load = 5e-324` was accepted
/// silently): warn with the gap.
/// With a flow file, the keys of the Poisson arrivals are not used: warn about each given.
fn warn_idle_workload(ctx: &Ctx, ai: usize, c: &WorkloadCfg, sim: &Sim) {
    let Some(crate::engine::apps::App::Workload(w)) = sim.apps.last() else {
        return;
    };
    if w.replay.is_some() {
        let d = WorkloadCfg::default();
        let given = [
            ("load", c.load.is_some()),
            ("mean_bytes", c.mean_bytes.is_some()),
            ("count", c.count != d.count),
            ("service_by", c.service_by != d.service_by),
        ];
        for (key, _) in given.iter().filter(|g| g.1) {
            let msg = format!(
                "app {ai} (workload): `{key}` is not used with `flows_file` (the file gives \
                 every flow)"
            );
            ctx.warn("apps", key, &msg);
        }
        return;
    }
    let gap_s = 1.0 / w.arrivals.rate_per_s();
    let end_s = ctx.loaded.scenario.sim.duration.0.as_secs_f64();
    let run_s = (end_s - w.start.as_secs_f64()).max(0.0);
    if gap_s > run_s {
        let gap = if gap_s.is_finite() {
            format!("{gap_s:.3e} s")
        } else {
            "more than 1e308 s".to_string()
        };
        let msg = format!(
            "app {ai} (workload): one message every {gap} on average, longer than the \
             {run_s} s the run leaves it: the run will likely carry no message"
        );
        ctx.warn("apps", "load", &msg);
    }
}

fn app_incast(args: &AppArgs, a: &IncastCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let (ctx, ai) = (args.ctx, args.ai);
    let s = &ctx.loaded.scenario;
    let app_id = sim.apps.len() as u32;
    let client = host(ctx, sim, &a.client, "client")?;
    let servers: Vec<NodeId> = match &a.servers {
        Some(list) => list
            .iter()
            .map(|n| host(ctx, sim, n, "servers"))
            .collect::<Result<_, _>>()?,
        None => (0..sim.net.nodes.len() as u32)
            .map(NodeId)
            .filter(|&i| i != client && sim.net.nodes[i.idx()].kind == NodeKind::Host)
            .filter(|&i| {
                !s.topology
                    .extra_hosts
                    .contains(&sim.net.nodes[i.idx()].name)
            })
            .collect(),
    };
    if servers.is_empty() {
        return Err(ctx.err("apps", "servers", "an incast needs at least one server"));
    }
    let sru = a.sru.ok_or_else(|| {
        ctx.err(
            "apps",
            "sru",
            format!("app {ai} (incast) needs `sru`, the server response unit"),
        )
    })?;
    if sru.0 .0 == 0 {
        return Err(ctx.err("apps", "sru", "must be positive"));
    }
    sim.reserve_flows(servers.len())
        .map_err(|e| ctx.alloc_err(e, "topology.servers"))?;
    let mut flows = Vec::new();
    for &srv in &servers {
        if !reachable(sim, srv, client) {
            return Err(ctx.err(
                "apps",
                "servers",
                format!(
                    "no route from {} to {}",
                    sim.net.nodes[srv.idx()].name,
                    a.client
                ),
            ));
        }
        let f = TcpFlow::new(FlowId(0), srv, client, args.tcp.clone());
        flows.push(sim.add_flow(f, AppId(app_id)));
    }
    sim.apps.push(App::Incast(Incast {
        flows,
        sru: sru.0 .0,
        request_delay: a.request_delay.0,
        response_jitter: a.response_jitter.0,
        rng: Rng::new(s.sim.seed, 0x1_0000 + ai as u64),
        rounds_done: 0,
        max_rounds: a.max_rounds.unwrap_or(u64::MAX),
        pending: 0,
        round_start: SimTime::ZERO,
        round_times: Vec::new(),
        delivered: 0,
    }));
    Ok(())
}

fn app_bulk(args: &AppArgs, a: &BulkCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let ctx = args.ctx;
    let app_id = sim.apps.len() as u32;
    let (src, dst) = src_dst(ctx, sim, (args.ai, "bulk"), &a.src, &a.dst)?;
    if a.count == 0 || a.count > 100_000 {
        return Err(ctx.err("apps", "count", "expected 1..100000 flows"));
    }
    sim.reserve_flows(a.count as usize)
        .map_err(|e| ctx.alloc_err(e, "apps.count"))?;
    for k in 0..a.count {
        let mut f = TcpFlow::new(FlowId(0), src, dst, args.tcp.clone());
        f.class = a.class;
        let fid = sim.add_flow(f, AppId(app_id + k));
        sim.apps.push(App::Bulk(Bulk {
            flow: fid,
            bytes: a.size.0,
            start: a.start.0,
            finished: None,
        }));
    }
    Ok(())
}

fn app_cbr(args: &AppArgs, a: &CbrCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let (ctx, ai) = (args.ctx, args.ai);
    let (src, dst) = src_dst(ctx, sim, (ai, "cbr"), &a.src, &a.dst)?;
    let rate = a
        .rate
        .ok_or_else(|| ctx.err("apps", "rate", format!("app {ai} (cbr) needs `rate`")))?;
    let size = a.packet_size.0 .0;
    if size <= 28 || size > 65535 {
        return Err(ctx.err("apps", "packet_size", "expected 29..65535 bytes"));
    }
    sim.apps.push(App::Cbr(Cbr {
        src,
        dst,
        rate: rate.0,
        packet_size: size as u32,
        header: 28,
        start: a.start.0,
        stop: a.stop.map(|d| d.0).unwrap_or(SimTime::NEVER),
        class: a.class,
        sent_bytes: 0,
        received_bytes: 0,
    }));
    Ok(())
}

fn app_ping(args: &AppArgs, a: &PingCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let (ctx, ai) = (args.ctx, args.ai);
    let src = end(ctx, sim, (ai, "ping"), "src", &a.src)?;
    let dst = end(ctx, sim, (ai, "ping"), "dst", &a.dst)?;
    if src == dst || !reachable(sim, src, dst) || !reachable(sim, dst, src) {
        return Err(ctx.err(
            "apps",
            "dst",
            format!("app {ai}: no route between src and dst"),
        ));
    }
    let size = a.packet_size.0 .0;
    if !(29..=65535).contains(&size) {
        return Err(ctx.err("apps", "packet_size", "expected 29..65535 bytes"));
    }
    sim.apps.push(App::Ping(Ping {
        src,
        dst,
        interval: a.interval.0,
        packet_size: size as u32,
        start: a.start.0,
        stop: a.stop.map(|d| d.0).unwrap_or(SimTime::NEVER),
        class: a.class,
        sent: 0,
        rtts: Vec::new(),
    }));
    Ok(())
}

fn app_transactions(
    args: &AppArgs,
    a: &TransactionsCfg,
    sim: &mut Sim,
) -> Result<(), ScenarioError> {
    let (ctx, ai) = (args.ctx, args.ai);
    let app_id = sim.apps.len() as u32;
    let (src, dst) = src_dst(ctx, sim, (ai, "transactions"), &a.src, &a.dst)?;
    let rate = a.rate.ok_or_else(|| {
        ctx.err(
            "apps",
            "rate",
            format!("app {ai} (transactions) needs `rate`, the offered load"),
        )
    })?;
    if rate.0 .0 == 0 {
        return Err(ctx.err("apps", "rate", "must be positive"));
    }
    let size = match a.size {
        Some(s) if s.0 > 0 && s.0 != u64::MAX => s.0,
        _ => {
            return Err(ctx.err(
                "apps",
                "size",
                format!("app {ai} (transactions) needs a finite `size` > 0"),
            ))
        }
    };
    let mut f = TcpFlow::new(FlowId(0), src, dst, args.tcp.clone());
    f.class = a.class;
    let fid = sim.add_flow(f, AppId(app_id));
    sim.apps.push(App::Transactions(Transactions {
        flow: fid,
        size,
        rate: rate.0,
        start: a.start.0,
        stop: a.stop.map(|d| d.0).unwrap_or(SimTime::NEVER),
        rng: Rng::new(ctx.loaded.scenario.sim.seed, 0x2_0000 + ai as u64),
        written: 0,
    }));
    Ok(())
}

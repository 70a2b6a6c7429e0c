//! Builder of `kind = "workload"` apps (`engine/apps/workload.rs`; keys, defaults and their
//! sources: `scenario/config/workload.rs`).

use super::flows::err;
use crate::base::ids::NodeId;
use crate::base::rng::Rng;
use crate::engine::apps::workload::{
    ConnKind, IncastEvents, PairServices, Pattern, Replay, Service, Workload,
};
use crate::engine::apps::App;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::flow_file::parse_flow_file;
use crate::model::workload::{load_cdf_file, FlowSizeDist, PoissonArrivals};
use crate::scenario::config::workload::{default_connections, WorkloadCfg};
use crate::scenario::error::ScenarioError;

fn host(file: &str, text: &str, sim: &Sim, key: &str, name: &str) -> Result<NodeId, ScenarioError> {
    match sim.node_by_name(name) {
        Some(id) if sim.net.nodes[id.idx()].kind == NodeKind::Host => Ok(id),
        Some(_) => Err(err(
            file,
            text,
            key,
            format!("{name:?} is a switch, expected a host"),
        )),
        None => Err(err(file, text, key, format!("unknown host {name:?}"))),
    }
}

fn size_dist(
    file: &str,
    text: &str,
    ai: usize,
    key: &str,
    name: &str,
) -> Result<FlowSizeDist, ScenarioError> {
    FlowSizeDist::builtin(name).map_err(|m| err(file, text, key, format!("app {ai}: {m}")))
}

/// Add app `ai` (kind "workload").
/// The connections of workload app `args.ai`: TCP with the app's configuration, or RoCE
/// queue pairs of `[roce]` for the app's hosts (`roce::roce_proto`).
pub(super) fn conn_kind(
    args: &super::AppArgs,
    a: &WorkloadCfg,
    sim: &Sim,
) -> Result<ConnKind, ScenarioError> {
    let ctx = args.ctx;
    let (file, text) = (&ctx.loaded.file, &ctx.loaded.text);
    match a.transport.as_str() {
        "tcp" => Ok(ConnKind::Tcp(args.tcp.clone())),
        "roce" => {
            let (p, _, _) = pattern(file, text, sim, args.ai, a)?;
            let ends = match p {
                Pattern::ClientServer {
                    client,
                    mut servers,
                } => {
                    servers.push(client);
                    servers
                }
                Pattern::AllToAll { hosts } => hosts,
            };
            let q = super::roce::roce_config(ctx, &ctx.loaded.scenario.roce)?;
            let (q, cc) = super::roce::roce_proto(ctx, sim, &q, &ends)?;
            Ok(ConnKind::Roce(q, Box::new(cc)))
        }
        other => Err(err(
            file,
            text,
            "transport",
            format!(
                "app {} (workload): unknown {other:?}: expected \"tcp\" or \"roce\"",
                args.ai
            ),
        )),
    }
}

pub fn build_workload(
    file: &str,
    text: &str,
    sim: &mut Sim,
    ai: usize,
    a: &WorkloadCfg,
    conn: ConnKind,
    seed: u64,
) -> Result<(), ScenarioError> {
    let e = |key: &str, m: String| err(file, text, key, format!("app {ai} (workload): {m}"));
    let mut services = services(file, text, ai, a)?;
    if let ConnKind::Roce(q, _) = &conn {
        // Queue pairs send their data in `[roce] data_class` (its ACKs and CNPs in
        // `ctrl_class`), as the flows app's do: `class` and `service_classes` are TCP's.
        for s in &mut services {
            s.class = q.data_class;
        }
    }
    let (pattern, edge_host, sources) = pattern(file, text, sim, ai, a)?;
    let endpoints: Vec<NodeId> = match &pattern {
        Pattern::ClientServer { client, servers } => {
            let mut v = servers.clone();
            v.push(*client);
            v
        }
        Pattern::AllToAll { hosts } => hosts.clone(),
    };
    for &h in &endpoints {
        if sim.net.nodes[h.idx()].ports.is_empty() {
            return Err(e(
                "pattern",
                format!("host {:?} has no link", sim.net.nodes[h.idx()].name),
            ));
        }
    }
    let roce = matches!(conn, ConnKind::Roce(..));
    let replay = match &a.flows_file {
        Some(path) => Some(replay(file, text, ai, path, &pattern, &services, roce)?),
        None => None,
    };
    let (arrivals, by_pair, limit) = match &replay {
        // The flows are given: no Poisson draws (the process below is never sampled).
        Some(r) => (
            PoissonArrivals::new(1.0).map_err(|m| e("load", m))?,
            None,
            r.flows.len() as u64,
        ),
        None => {
            let (arr, by_pair) = poisson(
                file, text, sim, ai, a, &services, &pattern, edge_host, sources,
            )?;
            (arr, by_pair, a.count as u64)
        }
    };
    let connections = a.connections.unwrap_or(default_connections(&pattern));
    if connections == 0 || connections > 64 {
        return Err(e("connections", "expected 1..64 per pair".into()));
    }
    if limit == 0 || limit > 10_000_000 {
        return Err(e("count", "expected 1..10000000 messages".into()));
    }
    let pias = a.pias_threshold.map(|s| s.0 .0);
    let mut w = Workload::new(
        pattern,
        services,
        arrivals,
        connections,
        pias,
        conn,
        a.start.0,
        limit,
        Rng::new(seed, 0x5_0000 + ai as u64),
    );
    w.by_pair = by_pair;
    w.incast = incast(file, text, sim, ai, a, &w.pattern, seed)?;
    w.replay = replay.map(Box::new);
    sim.apps.push(App::Workload(Box::new(w)));
    Ok(())
}

/// The Poisson arrival process of `load` on the edge link of `edge_host` (`sources` edges),
/// and with `service_by = "pair"` the services fixed per pair.
#[allow(clippy::too_many_arguments)]
fn poisson(
    file: &str,
    text: &str,
    sim: &Sim,
    ai: usize,
    a: &WorkloadCfg,
    services: &[Service],
    pattern: &Pattern,
    edge_host: NodeId,
    sources: usize,
) -> Result<(PoissonArrivals, Option<PairServices>), ScenarioError> {
    let e = |key: &str, m: String| err(file, text, key, format!("app {ai} (workload): {m}"));
    let load = a.load.ok_or_else(|| {
        e(
            "load",
            "needs `load` (0 < load ≤ 1.5) or `flows_file`".into(),
        )
    })?;
    if !(load > 0.0 && load <= 1.5) {
        return Err(e("load", format!("{load} is out of range (0, 1.5]")));
    }
    let edge_port = sim.net.nodes[edge_host.idx()].ports[0];
    let rate_bps = sim.net.ports[edge_port.idx()].rate.0 as f64;
    let mean = match a.mean_bytes {
        Some(m) => m,
        None => Workload::mean_bytes(services),
    };
    let per_edge = PoissonArrivals::for_load(load, rate_bps, mean).map_err(|m| e("load", m))?;
    let (by_pair, total) =
        arrival_split(a, services, pattern, load, rate_bps).map_err(|m| e("service_by", m))?;
    let total = total.unwrap_or(per_edge.rate_per_s() * sources as f64);
    let arrivals = PoissonArrivals::new(total).map_err(|m| e("load", m))?;
    Ok((arrivals, by_pair))
}

/// The flows of `flows_file` (all-to-all only; `load`, `count`, `mean_bytes` and
/// `service_by` are not used, `scenario/build/apps.rs` warns about them), each with the service whose class is its `pg` (RoCE: service 0, every service's class
/// being `[roce] data_class`).
#[allow(clippy::too_many_arguments)]
fn replay(
    file: &str,
    text: &str,
    ai: usize,
    path: &str,
    pattern: &Pattern,
    services: &[Service],
    roce: bool,
) -> Result<Replay, ScenarioError> {
    let e = |m: String| {
        err(
            file,
            text,
            "flows_file",
            format!("app {ai} (workload): {m}"),
        )
    };
    let Pattern::AllToAll { hosts } = pattern else {
        return Err(e("a flow file needs pattern = \"all-to-all\"".into()));
    };
    let full = relative_to(file, path);
    let name = full.to_string_lossy();
    let body =
        std::fs::read_to_string(&full).map_err(|x| e(format!("{name}: cannot read: {x}")))?;
    let flows = parse_flow_file(&body, &name, hosts.len()).map_err(e)?;
    let mut service = Vec::with_capacity(flows.len());
    for f in &flows {
        let si = if roce {
            Some(0)
        } else {
            services.iter().position(|s| s.class == f.class)
        };
        let Some(si) = si else {
            let classes: Vec<u8> = services.iter().map(|s| s.class).collect();
            return Err(e(format!(
                "{name}: pg {} is not the class of a service (service_classes = {classes:?})",
                f.class
            )));
        };
        service.push(si as u16);
    }
    Ok(Replay {
        flows,
        service,
        next: 0,
    })
}

/// The incast events of `a.incast` (all-to-all, without a flow file): their rate from the
/// share `load` of the hosts' summed edge rates.
fn incast(
    file: &str,
    text: &str,
    sim: &Sim,
    ai: usize,
    a: &WorkloadCfg,
    pattern: &Pattern,
    seed: u64,
) -> Result<Option<Box<IncastEvents>>, ScenarioError> {
    let Some(c) = &a.incast else { return Ok(None) };
    let e = |m: String| err(file, text, "incast", format!("app {ai} (workload): {m}"));
    let Pattern::AllToAll { hosts } = pattern else {
        return Err(e("incast events need pattern = \"all-to-all\"".into()));
    };
    if a.flows_file.is_some() {
        return Err(e(
            "a flow file gives every flow: put the incast flows in it".into(),
        ));
    }
    if c.senders == 0 || c.senders as usize >= hosts.len() {
        return Err(e(format!(
            "senders = {}: expected 1..{} (hosts other than the receiver)",
            c.senders,
            hosts.len() - 1
        )));
    }
    let bytes = c.bytes.0 .0;
    if bytes == 0 {
        return Err(e("bytes: expected at least 1".into()));
    }
    if !(c.load > 0.0 && c.load <= 1.0) {
        return Err(e(format!("load = {}: expected a share in (0, 1]", c.load)));
    }
    let capacity: f64 = hosts
        .iter()
        .map(|h| sim.net.ports[sim.net.nodes[h.idx()].ports[0].idx()].rate.0 as f64)
        .sum();
    let rate = c.load * capacity / (8.0 * c.senders as f64 * bytes as f64);
    let arrivals = PoissonArrivals::new(rate).map_err(e)?;
    Ok(Some(Box::new(IncastEvents {
        senders: c.senders,
        bytes,
        arrivals,
        rng: Rng::new(seed, 0x6_0000 + ai as u64),
        events: 0,
    })))
}

/// `path` as given when absolute, else relative to the scenario file's folder.
fn relative_to(scenario_file: &str, path: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::path::Path::new(scenario_file)
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join(p)
    }
}

/// `service_by`: None for "message"; for "pair", the pairs of each service and the merged
/// rate of all pairs' Poisson processes (λ per pair from its own service's mean, or from
/// `mean_bytes` when given).
fn arrival_split(
    a: &WorkloadCfg,
    services: &[Service],
    pattern: &Pattern,
    load: f64,
    rate_bps: f64,
) -> Result<(Option<PairServices>, Option<f64>), String> {
    match (a.service_by.as_str(), pattern) {
        ("message", _) => Ok((None, None)),
        ("pair", Pattern::AllToAll { hosts }) => {
            let means: Vec<f64> = services
                .iter()
                .map(|s| a.mean_bytes.unwrap_or(s.dist.mean_bytes()))
                .collect();
            let ps = PairServices::tcn_script(hosts.len(), &means);
            let total = ps.total_rate(hosts.len(), |s| load * rate_bps / (8.0 * means[s]));
            Ok((Some(ps), Some(total)))
        }
        ("pair", _) => Err("\"pair\" needs pattern = \"all-to-all\"".into()),
        (other, _) => Err(format!(
            "unknown {other:?}: expected \"message\" or \"pair\""
        )),
    }
}

/// The message-size distribution of each service class (`workload` or `cdf_file`, per
/// class `service_workloads`).
fn services(
    file: &str,
    text: &str,
    ai: usize,
    a: &WorkloadCfg,
) -> Result<Vec<Service>, ScenarioError> {
    let e = |key: &str, m: String| err(file, text, key, format!("app {ai} (workload): {m}"));
    // `workload` has a default, so only a value other than it shows that both were given
    // (`workload = "websearch"` next to `cdf_file` goes unnoticed; the file wins).
    let named = a.workload != WorkloadCfg::default().workload;
    let base = match &a.cdf_file {
        Some(_) if named => {
            return Err(e(
                "cdf_file",
                "give `workload` or `cdf_file`, not both".into(),
            ))
        }
        Some(path) => {
            let full = relative_to(file, path);
            let cdf = load_cdf_file(&full.to_string_lossy()).map_err(|m| e("cdf_file", m))?;
            let unit = a.cdf_unit.0 .0;
            FlowSizeDist::new(path, cdf, unit).map_err(|m| e("cdf_unit", m))?
        }
        None => size_dist(file, text, ai, "workload", &a.workload)?,
    };
    let classes = a.service_classes.clone().unwrap_or_else(|| vec![a.class]);
    if classes.is_empty() || classes.len() > 256 {
        return Err(e("service_classes", "expected 1..256 services".into()));
    }
    let dists: Vec<FlowSizeDist> = match &a.service_workloads {
        None => vec![base; classes.len()],
        Some(names) => {
            if names.len() != classes.len() {
                return Err(e(
                    "service_workloads",
                    format!(
                        "{} workloads for {} services (service_classes)",
                        names.len(),
                        classes.len()
                    ),
                ));
            }
            names
                .iter()
                .map(|n| size_dist(file, text, ai, "service_workloads", n))
                .collect::<Result<_, _>>()?
        }
    };
    let services: Vec<Service> = dists
        .into_iter()
        .zip(classes.iter())
        .map(|(dist, &class)| Service { dist, class })
        .collect();
    Ok(services)
}

/// The traffic pattern, the host whose edge link sets the load, and the number of sources.
fn pattern(
    file: &str,
    text: &str,
    sim: &Sim,
    ai: usize,
    a: &WorkloadCfg,
) -> Result<(Pattern, NodeId, usize), ScenarioError> {
    let e = |key: &str, m: String| err(file, text, key, format!("app {ai} (workload): {m}"));
    let p = match a.pattern.as_str() {
        "client-server" => {
            let client = host(file, text, sim, "client", &a.client)?;
            let servers: Vec<NodeId> = match &a.servers {
                Some(list) => list
                    .iter()
                    .map(|n| host(file, text, sim, "servers", n))
                    .collect::<Result<_, _>>()?,
                None => (0..sim.net.nodes.len() as u32)
                    .map(NodeId)
                    .filter(|&i| i != client && sim.net.nodes[i.idx()].kind == NodeKind::Host)
                    .collect(),
            };
            if servers.is_empty() || servers.contains(&client) {
                return Err(e(
                    "servers",
                    "needs at least one server other than the client".into(),
                ));
            }
            (Pattern::ClientServer { client, servers }, client, 1usize)
        }
        "all-to-all" => {
            let hosts: Vec<NodeId> = match &a.srcs {
                Some(list) => list
                    .iter()
                    .map(|n| host(file, text, sim, "srcs", n))
                    .collect::<Result<_, _>>()?,
                None => (0..sim.net.nodes.len() as u32)
                    .map(NodeId)
                    .filter(|&i| sim.net.nodes[i.idx()].kind == NodeKind::Host)
                    .collect(),
            };
            if hosts.len() < 2 || hosts.len() > 10_000 {
                return Err(e("srcs", "all-to-all needs 2..10000 hosts".into()));
            }
            let h0 = hosts[0];
            let n = hosts.len();
            (Pattern::AllToAll { hosts }, h0, n)
        }
        other => {
            return Err(e(
                "pattern",
                format!("unknown pattern {other:?}: expected \"client-server\" or \"all-to-all\""),
            ))
        }
    };
    Ok(p)
}

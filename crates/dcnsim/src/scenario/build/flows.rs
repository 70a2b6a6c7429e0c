//! Builders of the scheduled-transfer apps `kind = "flows"` and `kind = "mix"` (keys and
//! their meaning: `scenario/config/flows.rs`). All random draws come from one stream per
//! app derived from the scenario seed.

use super::AppArgs;
use crate::base::ids::{AppId, FlowId, NodeId, PortId};
use crate::base::rng::Rng;
use crate::base::units::SimTime;
use crate::engine::apps::schedule::{Schedule, Transfer};
use crate::engine::apps::App;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::tcp::{TcpConfig, TcpFlow};
use crate::model::workload::EmpiricalCdf;
use crate::scenario::config::flows::{FlowsCfg, MixCfg};
use crate::scenario::config::units::{Dur, Size};
use crate::scenario::error::{line_of, ScenarioError};

/// An error about key `key` of an `[[apps]]` entry.
pub(super) fn err(file: &str, text: &str, key: &str, message: String) -> ScenarioError {
    ScenarioError {
        file: file.to_string(),
        line: line_of(text, "apps", key),
        column: None,
        field: Some(format!("apps.{key}")),
        message,
    }
}

/// The `[[apps]]` entry being built: where its errors point, and its index.
struct Entry<'a> {
    file: &'a str,
    text: &'a str,
    ai: usize,
    ctx: &'a crate::scenario::ctx::Ctx<'a>,
}

impl<'a> Entry<'a> {
    fn of(args: &'a AppArgs) -> Entry<'a> {
        let loaded = args.ctx.loaded;
        let (file, text) = (&loaded.file, &loaded.text);
        Entry {
            file,
            text,
            ai: args.ai,
            ctx: args.ctx,
        }
    }

    /// An error about key `key` of this entry.
    fn err(&self, key: &str, message: String) -> ScenarioError {
        err(self.file, self.text, key, message)
    }
}

/// The hosts `names` lists; a name ending in `*` stands for every host whose name starts
/// with the rest, in node order (`"server*"`: all servers of a star, whatever their number).
fn hosts(e: &Entry, sim: &Sim, key: &str, names: &[String]) -> Result<Vec<NodeId>, ScenarioError> {
    let ai = e.ai;
    if names.is_empty() {
        return Err(e.err(key, format!("app {ai}: `{key}` is empty")));
    }
    let mut out = Vec::new();
    for n in names {
        if let Some(prefix) = n.strip_suffix('*') {
            let before = out.len();
            for (i, node) in sim.net.nodes.iter().enumerate() {
                if node.kind == NodeKind::Host && node.name.starts_with(prefix) {
                    out.push(NodeId(i as u32));
                }
            }
            if out.len() == before {
                return Err(e.err(
                    key,
                    format!("app {ai}: no host name starts with {prefix:?}"),
                ));
            }
            continue;
        }
        out.push(match sim.node_by_name(n) {
            Some(id) if sim.net.nodes[id.idx()].kind == NodeKind::Host => id,
            Some(_) => {
                return Err(e.err(key, format!("app {ai}: {n:?} is a switch, expected a host")))
            }
            None => return Err(e.err(key, format!("app {ai}: unknown host {n:?}"))),
        });
    }
    Ok(out)
}

fn cdf(e: &Entry, key: &str, pts: &Option<Vec<(f64, f64)>>) -> Result<EmpiricalCdf, ScenarioError> {
    let ai = e.ai;
    let pts = pts.clone().ok_or_else(|| {
        e.err(
            key,
            format!("app {ai} (mix) needs `{key}` = [[value, cdf], ...]"),
        )
    })?;
    EmpiricalCdf::new(pts).map_err(|m| e.err(key, format!("app {ai}: {m}")))
}

/// What every transfer of a schedule app shares.
struct Each {
    start: SimTime,
    chunk: u64,
    pause: SimTime,
}

impl Each {
    fn new(e: &Entry, start: Dur, chunk: Option<Size>, pause: Dur) -> Result<Each, ScenarioError> {
        let ai = e.ai;
        let chunk = chunk.map(|c| c.0 .0).unwrap_or(u64::MAX);
        if chunk == 0 {
            return Err(e.err("chunk", format!("app {ai}: must be positive")));
        }
        Ok(Each {
            start: start.0,
            chunk,
            pause: pause.0,
        })
    }

    /// A transfer of `bytes` starting at `start`, not begun.
    fn transfer(&self, start: SimTime, bytes: u64) -> Transfer {
        Transfer {
            start,
            bytes,
            chunk: self.chunk,
            pause: self.pause,
            written: 0,
            finished: None,
        }
    }
}

type Transfers = (Vec<(NodeId, NodeId)>, Vec<Transfer>);

/// A list key, or its one-host form (`srcs` or `src`, `dsts` or `dst`).
fn list_or_one(list: &Option<Vec<String>>, one: &Option<String>) -> Option<Vec<String>> {
    list.clone().or_else(|| one.clone().map(|s| vec![s]))
}

/// Add the flows of app `ai` (kind "flows").
pub(super) fn build_flows(
    args: &AppArgs,
    a: &FlowsCfg,
    sim: &mut Sim,
) -> Result<(), ScenarioError> {
    let e = &Entry::of(args);
    let srcs = sources(e, sim, "flows", (&a.srcs, &a.src))?;
    let each = Each::new(e, a.start, a.chunk, a.pause)?;
    let (pairs, transfers) = fixed_transfers(e, sim, a, &srcs, &each)?;
    let t = transport(args, e, &a.transport)?;
    add_schedule(e, sim, (a.class, &t), (pairs, transfers))
}

/// Add the flows of app `ai` (kind "mix").
pub(super) fn build_mix(args: &AppArgs, a: &MixCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let e = &Entry::of(args);
    let srcs = sources(e, sim, "mix", (&a.srcs, &a.src))?;
    let seed = args.ctx.loaded.scenario.sim.seed;
    let each = Each::new(e, a.start, a.chunk, a.pause)?;
    let (pairs, transfers) = mix_transfers(e, sim, a, &srcs, &each, seed)?;
    let t = transport(args, e, &a.transport)?;
    add_schedule(e, sim, (a.class, &t), (pairs, transfers))
}

/// The source hosts of app `ai` of kind `kind`: its `srcs` list, or its one `src`.
fn sources(
    e: &Entry,
    sim: &Sim,
    kind: &str,
    (list, one): (&Option<Vec<String>>, &Option<String>),
) -> Result<Vec<NodeId>, ScenarioError> {
    let ai = e.ai;
    let srcs = list_or_one(list, one).ok_or_else(|| {
        let msg = format!("app {ai} ({kind}) needs `srcs` (or `src`)");
        e.err("srcs", msg)
    })?;
    hosts(e, sim, "srcs", &srcs)
}

/// The transport of an app's flows (`transport` key) with its configuration.
enum Transport<'a> {
    Tcp(&'a std::sync::Arc<TcpConfig>),
    Roce(crate::model::roce::qp::RoceConfig),
}

fn transport<'a>(args: &'a AppArgs, e: &Entry, name: &str) -> Result<Transport<'a>, ScenarioError> {
    match name {
        "tcp" => Ok(Transport::Tcp(args.tcp)),
        "roce" => {
            let c = &args.ctx.loaded.scenario.roce;
            Ok(Transport::Roce(super::roce::roce_config(args.ctx, c)?))
        }
        other => Err(e.err(
            "transport",
            format!(
                "app {}: unknown {other:?}: expected \"tcp\" or \"roce\"",
                e.ai
            ),
        )),
    }
}

/// Check the routes of `pairs` and add one flow per pair and the `Schedule` app (`class`
/// is a TCP app's; RoCE queue pairs use `[roce] data_class`).
fn add_schedule(
    e: &Entry,
    sim: &mut Sim,
    (class, t): (u8, &Transport),
    (pairs, transfers): Transfers,
) -> Result<(), ScenarioError> {
    let ai = e.ai;
    for &(s, d) in &pairs {
        if sim.net.routing.route(s, d) == PortId::NONE || s == d {
            return Err(e.err(
                "dst",
                format!(
                    "app {ai}: no route from {} to {}",
                    sim.net.nodes[s.idx()].name,
                    sim.net.nodes[d.idx()].name
                ),
            ));
        }
    }
    let app_id = sim.apps.len() as u32;
    let first_flow = FlowId(sim.hosts.flows.len() as u32);
    for &(s, d) in &pairs {
        match t {
            Transport::Tcp(tcp) => {
                let mut f = TcpFlow::new(FlowId(0), s, d, (*tcp).clone());
                f.class = class;
                sim.add_flow(f, AppId(app_id));
            }
            Transport::Roce(q) => {
                let f = super::roce::roce_flow(e.ctx, sim, q, (s, d))?;
                sim.add_flow(f, AppId(app_id));
            }
        }
    }
    sim.apps.push(App::Schedule(Schedule {
        first_flow,
        transfers,
    }));
    Ok(())
}

/// `kind = "flows"`: `count` transfers of `size` bytes from `srcs` in turn to one `dst`,
/// `stagger` apart.
fn fixed_transfers(
    e: &Entry,
    sim: &Sim,
    a: &FlowsCfg,
    srcs: &[NodeId],
    each: &Each,
) -> Result<Transfers, ScenarioError> {
    let ai = e.ai;
    let start = each.start;
    let mut pairs: Vec<(NodeId, NodeId)> = Vec::new();
    let mut transfers: Vec<Transfer> = Vec::new();
    let dst_name = a
        .dst
        .clone()
        .ok_or_else(|| e.err("dst", format!("app {ai} (flows) needs `dst`")))?;
    let dst = hosts(e, sim, "dst", &[dst_name])?[0];
    let count = match a.count_like {
        None => a.count.unwrap_or(srcs.len() as u32),
        Some(j) => {
            let like = sim.apps.get(j as usize).and_then(|x| match x {
                App::Schedule(sch) if (j as usize) < ai => Some(sch.transfers.len() as u32),
                _ => None,
            });
            if a.count.is_some() {
                return Err(e.err(
                    "count_like",
                    format!("app {ai}: give `count` or `count_like`, not both"),
                ));
            }
            like.ok_or_else(|| {
                e.err(
                    "count_like",
                    format!("app {ai}: app {j} is not an earlier \"flows\" app"),
                )
            })?
        }
    };
    if count == 0 || count > 100_000 {
        return Err(e.err(
            "count",
            format!("app {ai}: {count} is out of range: expected 1..100000"),
        ));
    }
    let bytes = a.size.0;
    if bytes == 0 {
        return Err(e.err("size", format!("app {ai}: must be positive")));
    }
    let stagger = a.stagger.0;
    for i in 0..count as usize {
        pairs.push((srcs[i % srcs.len()], dst));
        transfers.push(each.transfer(start + SimTime(stagger.0 * i as u64), bytes));
    }
    Ok((pairs, transfers))
}

/// `kind = "mix"`: `count` transfers with sizes and gaps drawn from the CDFs, between random
/// src/dst pairs of different hosts.
fn mix_transfers(
    e: &Entry,
    sim: &Sim,
    a: &MixCfg,
    srcs: &[NodeId],
    each: &Each,
    seed: u64,
) -> Result<Transfers, ScenarioError> {
    let ai = e.ai;
    let start = each.start;
    let mut pairs: Vec<(NodeId, NodeId)> = Vec::new();
    let mut transfers: Vec<Transfer> = Vec::new();
    let dsts_names = list_or_one(&a.dsts, &a.dst);
    let dsts_names =
        dsts_names.ok_or_else(|| e.err("dsts", format!("app {ai} (mix) needs `dsts`")))?;
    let dsts = hosts(e, sim, "dsts", &dsts_names)?;
    let count = a
        .count
        .ok_or_else(|| e.err("count", format!("app {ai} (mix) needs `count`")))?;
    if count == 0 || count > 1_000_000 {
        return Err(e.err(
            "count",
            format!("app {ai}: {count} is out of range: expected 1..1000000"),
        ));
    }
    let sizes = cdf(e, "size_cdf", &a.size_cdf)?;
    let gaps = cdf(e, "interarrival_cdf", &a.interarrival_cdf)?;
    if !srcs.iter().any(|s| dsts.iter().any(|d| d != s)) {
        return Err(e.err(
            "dsts",
            format!("app {ai}: no src/dst pair of different hosts"),
        ));
    }
    let mut rng = Rng::new(seed, 0x3_0000 + ai as u64);
    let mut t = start;
    for i in 0..count as usize {
        if i > 0 {
            let g = gaps.sample(rng.uniform());
            t = t + SimTime((g * 1e12).round() as u64);
        }
        let (s, d) = loop {
            let s = srcs[rng.below(srcs.len() as u64) as usize];
            let d = dsts[rng.below(dsts.len() as u64) as usize];
            if s != d {
                break (s, d);
            }
        };
        let bytes = (sizes.sample(rng.uniform()).round() as u64).max(1);
        pairs.push((s, d));
        transfers.push(each.transfer(t, bytes));
    }
    Ok((pairs, transfers))
}

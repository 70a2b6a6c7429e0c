//! Builders of the scheduled-transfer apps `kind = "flows"` and `kind = "mix"` (keys and
//! their meaning: `scenario/config/flows.rs`). All random draws come from one stream per
//! app derived from the scenario seed.

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

fn err(file: &str, text: &str, key: &str, message: String) -> ScenarioError {
    ScenarioError {
        file: file.to_string(),
        line: line_of(text, "apps", key),
        column: None,
        field: Some(format!("apps.{key}")),
        message,
    }
}

fn hosts(
    file: &str,
    text: &str,
    sim: &Sim,
    ai: usize,
    key: &str,
    names: &[String],
) -> Result<Vec<NodeId>, ScenarioError> {
    if names.is_empty() {
        return Err(err(file, text, key, format!("app {ai}: `{key}` is empty")));
    }
    names
        .iter()
        .map(|n| match sim.node_by_name(n) {
            Some(id) if sim.net.nodes[id.idx()].kind == NodeKind::Host => Ok(id),
            Some(_) => Err(err(
                file,
                text,
                key,
                format!("app {ai}: {n:?} is a switch, expected a host"),
            )),
            None => Err(err(
                file,
                text,
                key,
                format!("app {ai}: unknown host {n:?}"),
            )),
        })
        .collect()
}

fn cdf(
    file: &str,
    text: &str,
    ai: usize,
    key: &str,
    pts: &Option<Vec<(f64, f64)>>,
) -> Result<EmpiricalCdf, ScenarioError> {
    let pts = pts.clone().ok_or_else(|| {
        err(
            file,
            text,
            key,
            format!("app {ai} (mix) needs `{key}` = [[value, cdf], ...]"),
        )
    })?;
    EmpiricalCdf::new(pts).map_err(|m| err(file, text, key, format!("app {ai}: {m}")))
}

/// What every transfer of a schedule app shares.
struct Each {
    start: SimTime,
    chunk: u64,
    pause: SimTime,
}

impl Each {
    fn new(
        file: &str,
        text: &str,
        ai: usize,
        start: Dur,
        chunk: Option<Size>,
        pause: Dur,
    ) -> Result<Each, ScenarioError> {
        let chunk = chunk.map(|c| c.0 .0).unwrap_or(u64::MAX);
        if chunk == 0 {
            return Err(err(
                file,
                text,
                "chunk",
                format!("app {ai}: must be positive"),
            ));
        }
        Ok(Each {
            start: start.0,
            chunk,
            pause: pause.0,
        })
    }
}

type Transfers = (Vec<(NodeId, NodeId)>, Vec<Transfer>);

/// A list key, or its one-host form (`srcs` or `src`, `dsts` or `dst`).
fn list_or_one(list: &Option<Vec<String>>, one: &Option<String>) -> Option<Vec<String>> {
    list.clone().or_else(|| one.clone().map(|s| vec![s]))
}

/// Add the flows of app `ai` (kind "flows").
pub fn build_flows(
    file: &str,
    text: &str,
    sim: &mut Sim,
    ai: usize,
    a: &FlowsCfg,
    tcp: &std::sync::Arc<TcpConfig>,
) -> Result<(), ScenarioError> {
    let srcs = list_or_one(&a.srcs, &a.src).ok_or_else(|| {
        err(
            file,
            text,
            "srcs",
            format!("app {ai} (flows) needs `srcs` (or `src`)"),
        )
    })?;
    let srcs = hosts(file, text, sim, ai, "srcs", &srcs)?;
    let each = Each::new(file, text, ai, a.start, a.chunk, a.pause)?;
    let (pairs, transfers) = fixed_transfers(file, text, sim, ai, a, &srcs, &each)?;
    add_schedule(file, text, sim, ai, a.class, tcp, (pairs, transfers))
}

/// Add the flows of app `ai` (kind "mix").
pub fn build_mix(
    file: &str,
    text: &str,
    sim: &mut Sim,
    ai: usize,
    a: &MixCfg,
    tcp: &std::sync::Arc<TcpConfig>,
    seed: u64,
) -> Result<(), ScenarioError> {
    let srcs = list_or_one(&a.srcs, &a.src).ok_or_else(|| {
        err(
            file,
            text,
            "srcs",
            format!("app {ai} (mix) needs `srcs` (or `src`)"),
        )
    })?;
    let srcs = hosts(file, text, sim, ai, "srcs", &srcs)?;
    let each = Each::new(file, text, ai, a.start, a.chunk, a.pause)?;
    let (pairs, transfers) = mix_transfers(file, text, sim, ai, a, &srcs, &each, seed)?;
    add_schedule(file, text, sim, ai, a.class, tcp, (pairs, transfers))
}

/// Check the routes of `pairs` and add one flow per pair and the `Schedule` app.
fn add_schedule(
    file: &str,
    text: &str,
    sim: &mut Sim,
    ai: usize,
    class: u8,
    tcp: &std::sync::Arc<TcpConfig>,
    (pairs, transfers): Transfers,
) -> Result<(), ScenarioError> {
    for &(s, d) in &pairs {
        if sim.net.routing.route(s, d) == PortId::NONE || s == d {
            return Err(err(
                file,
                text,
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
        let mut f = TcpFlow::new(FlowId(0), s, d, tcp.clone());
        f.class = class;
        sim.add_flow(f, AppId(app_id));
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
    file: &str,
    text: &str,
    sim: &Sim,
    ai: usize,
    a: &FlowsCfg,
    srcs: &[NodeId],
    each: &Each,
) -> Result<Transfers, ScenarioError> {
    let Each {
        start,
        chunk,
        pause,
    } = *each;
    let mut pairs: Vec<(NodeId, NodeId)> = Vec::new();
    let mut transfers: Vec<Transfer> = Vec::new();
    let dst_name = a
        .dst
        .clone()
        .ok_or_else(|| err(file, text, "dst", format!("app {ai} (flows) needs `dst`")))?;
    let dst = hosts(file, text, sim, ai, "dst", &[dst_name])?[0];
    let count = match a.count_like {
        None => a.count.unwrap_or(srcs.len() as u32),
        Some(j) => {
            let like = sim.apps.get(j as usize).and_then(|x| match x {
                App::Schedule(sch) if (j as usize) < ai => Some(sch.transfers.len() as u32),
                _ => None,
            });
            if a.count.is_some() {
                return Err(err(
                    file,
                    text,
                    "count_like",
                    format!("app {ai}: give `count` or `count_like`, not both"),
                ));
            }
            like.ok_or_else(|| {
                err(
                    file,
                    text,
                    "count_like",
                    format!("app {ai}: app {j} is not an earlier \"flows\" app"),
                )
            })?
        }
    };
    if count == 0 || count > 100_000 {
        return Err(err(
            file,
            text,
            "count",
            format!("app {ai}: {count} is out of range: expected 1..100000"),
        ));
    }
    let bytes = a.size.0;
    if bytes == 0 {
        return Err(err(
            file,
            text,
            "size",
            format!("app {ai}: must be positive"),
        ));
    }
    let stagger = a.stagger.0;
    for i in 0..count as usize {
        pairs.push((srcs[i % srcs.len()], dst));
        transfers.push(Transfer {
            start: start + SimTime(stagger.0 * i as u64),
            bytes,
            chunk,
            pause,
            written: 0,
            finished: None,
        });
    }
    Ok((pairs, transfers))
}

/// `kind = "mix"`: `count` transfers with sizes and gaps drawn from the CDFs, between random
/// src/dst pairs of different hosts.
#[allow(clippy::too_many_arguments)]
fn mix_transfers(
    file: &str,
    text: &str,
    sim: &Sim,
    ai: usize,
    a: &MixCfg,
    srcs: &[NodeId],
    each: &Each,
    seed: u64,
) -> Result<Transfers, ScenarioError> {
    let Each {
        start,
        chunk,
        pause,
    } = *each;
    let mut pairs: Vec<(NodeId, NodeId)> = Vec::new();
    let mut transfers: Vec<Transfer> = Vec::new();
    let dsts_names = list_or_one(&a.dsts, &a.dst);
    let dsts_names = dsts_names
        .ok_or_else(|| err(file, text, "dsts", format!("app {ai} (mix) needs `dsts`")))?;
    let dsts = hosts(file, text, sim, ai, "dsts", &dsts_names)?;
    let count = a
        .count
        .ok_or_else(|| err(file, text, "count", format!("app {ai} (mix) needs `count`")))?;
    if count == 0 || count > 1_000_000 {
        return Err(err(
            file,
            text,
            "count",
            format!("app {ai}: {count} is out of range: expected 1..1000000"),
        ));
    }
    let sizes = cdf(file, text, ai, "size_cdf", &a.size_cdf)?;
    let gaps = cdf(file, text, ai, "interarrival_cdf", &a.interarrival_cdf)?;
    if !srcs.iter().any(|s| dsts.iter().any(|d| d != s)) {
        return Err(err(
            file,
            text,
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
        transfers.push(Transfer {
            start: t,
            bytes,
            chunk,
            pause,
            written: 0,
            finished: None,
        });
    }
    Ok((pairs, transfers))
}

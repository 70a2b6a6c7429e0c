//! Scenario construction of the scheduled-transfer apps (`engine/apps/schedule.rs`):
//!
//! - `kind = "flows"`: `count` flows (default one per entry of `srcs`), flow i from
//!   `srcs[i % len]` to `dst`, each `size` bytes ("unlimited" for long flows) from
//!   `start + i·stagger`, optionally written `chunk` bytes at a time with `pause` between
//!   chunks (seed 001 Fig 4.4: 200 KB then 1 s idle).
//! - `kind = "mix"`: `count` flows, each between a random host of `srcs` and a random
//!   different host of `dsts`, size drawn from `size_cdf` ([[bytes, cdf], ...]) and start
//!   times separated by gaps drawn from `interarrival_cdf` ([[seconds, cdf], ...]), both
//!   piecewise-linear `workload::EmpiricalCdf` tables (seed 001 §6.1.2 benchmark).
//!
//! All random draws come from one stream per app derived from the scenario seed.

use crate::base::rng::Rng;
use crate::base::units::SimTime;
use crate::engine::apps::schedule::{Schedule, Transfer};
use crate::engine::apps::App;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::tcp::{TcpConfig, TcpFlow};
use crate::model::workload::EmpiricalCdf;
use crate::scenario::{line_of, AppCfg, ScenarioError};

fn err(file: &str, text: &str, key: &str, message: String) -> ScenarioError {
    ScenarioError {
        file: file.to_string(),
        line: line_of(text, "apps", key),
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
) -> Result<Vec<u32>, ScenarioError> {
    if names.is_empty() {
        return Err(err(file, text, key, format!("app {ai}: `{key}` is empty")));
    }
    names
        .iter()
        .map(|n| match sim.node_by_name(n) {
            Some(id) if sim.nodes[id as usize].kind == NodeKind::Host => Ok(id),
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

/// Add the flows of app `ai` (kind "flows" or "mix") and its `Schedule`.
pub fn build_schedule(
    file: &str,
    text: &str,
    sim: &mut Sim,
    ai: usize,
    a: &AppCfg,
    tcp: &TcpConfig,
    seed: u64,
) -> Result<(), ScenarioError> {
    let srcs_names = a.srcs.clone().or_else(|| a.src.clone().map(|s| vec![s]));
    let srcs_names = srcs_names.ok_or_else(|| {
        err(
            file,
            text,
            "srcs",
            format!("app {ai} ({}) needs `srcs` (or `src`)", a.kind),
        )
    })?;
    let srcs = hosts(file, text, sim, ai, "srcs", &srcs_names)?;
    let start = a.start.map(|d| d.0).unwrap_or(SimTime::ZERO);
    let chunk = a.chunk.map(|c| c.0 .0).unwrap_or(u64::MAX);
    if chunk == 0 {
        return Err(err(
            file,
            text,
            "chunk",
            format!("app {ai}: must be positive"),
        ));
    }
    let pause = a.pause.map(|d| d.0).unwrap_or(SimTime::ZERO);
    let each = Each {
        start,
        chunk,
        pause,
    };
    let (pairs, transfers) = if a.kind == "flows" {
        fixed_transfers(file, text, sim, ai, a, &srcs, &each)?
    } else {
        mix_transfers(file, text, sim, ai, a, &srcs, &each, seed)?
    };
    for &(s, d) in &pairs {
        if sim.nodes[s as usize].route[d as usize] == u32::MAX || s == d {
            return Err(err(
                file,
                text,
                "dst",
                format!(
                    "app {ai}: no route from {} to {}",
                    sim.nodes[s as usize].name, sim.nodes[d as usize].name
                ),
            ));
        }
    }
    let app_id = sim.apps.len() as u32;
    let first_flow = sim.flows.len() as u32;
    for &(s, d) in &pairs {
        let mut f = TcpFlow::new(0, s, d, tcp.clone());
        f.class = a.class.unwrap_or(0);
        sim.add_flow(f, app_id);
    }
    sim.apps.push(App::Schedule(Schedule {
        first_flow,
        transfers,
    }));
    Ok(())
}

/// What every transfer of a schedule app shares.
struct Each {
    start: SimTime,
    chunk: u64,
    pause: SimTime,
}

type Transfers = (Vec<(u32, u32)>, Vec<Transfer>);

/// `kind = "flows"`: `count` transfers of `size` bytes from `srcs` in turn to one `dst`,
/// `stagger` apart.
fn fixed_transfers(
    file: &str,
    text: &str,
    sim: &Sim,
    ai: usize,
    a: &AppCfg,
    srcs: &[u32],
    each: &Each,
) -> Result<Transfers, ScenarioError> {
    let Each {
        start,
        chunk,
        pause,
    } = *each;
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut transfers: Vec<Transfer> = Vec::new();
    for k in ["dsts", "size_cdf", "interarrival_cdf"] {
        let set = match k {
            "dsts" => a.dsts.is_some(),
            "size_cdf" => a.size_cdf.is_some(),
            _ => a.interarrival_cdf.is_some(),
        };
        if set {
            return Err(err(
                file,
                text,
                k,
                format!("app {ai}: `{k}` is only for kind = \"mix\""),
            ));
        }
    }
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
    let bytes = a.size.map(|s| s.0).unwrap_or(u64::MAX);
    if bytes == 0 {
        return Err(err(
            file,
            text,
            "size",
            format!("app {ai}: must be positive"),
        ));
    }
    let stagger = a.stagger.map(|d| d.0).unwrap_or(SimTime::ZERO);
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
    a: &AppCfg,
    srcs: &[u32],
    each: &Each,
    seed: u64,
) -> Result<Transfers, ScenarioError> {
    let Each {
        start,
        chunk,
        pause,
    } = *each;
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut transfers: Vec<Transfer> = Vec::new();
    if a.count_like.is_some() {
        return Err(err(
            file,
            text,
            "count_like",
            format!("app {ai}: only for kind = \"flows\""),
        ));
    }
    if a.stagger.is_some() || a.size.is_some() {
        let k = if a.size.is_some() { "size" } else { "stagger" };
        return Err(err(
            file,
            text,
            k,
            format!("app {ai}: `{k}` is only for kind = \"flows\" (mix uses size_cdf / interarrival_cdf)"),
        ));
    }
    let dsts_names = a.dsts.clone().or_else(|| a.dst.clone().map(|s| vec![s]));
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

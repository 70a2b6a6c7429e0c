//! The per-port AQM of switch ports: `[topology] aqm` on every switch port, then the
//! `[[topology.aqm_ports]]` overrides (`apply_aqm`); `aqm_from_cfg` builds one port's AQM
//! from its table (also used by `mq.rs` for per-queue and per-port marking).

use crate::base::ids::PortId;
use crate::base::units::RateBps;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::aqm::{self, Aqm, AqmAt};
use crate::scenario::config::{AqmCfg, MarkCfg, MarkDefaults, Threshold, TopologyCfg};
use crate::scenario::ctx::Ctx;
use crate::scenario::error::{line_of, ScenarioError};

/// `[topology] aqm` on every switch port, then the `[[topology.aqm_ports]]` overrides.
pub(crate) fn apply_aqm(ctx: &Ctx, t: &TopologyCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    if let Some(a) = &t.aqm {
        if a.port.is_some() {
            return Err(ctx.err(
                "topology.aqm",
                "port",
                "`port` belongs in [[topology.aqm_ports]] entries",
            ));
        }
        for pid in (0..sim.net.ports.len() as u32).map(PortId) {
            let node = sim.net.ports[pid.idx()].node;
            if sim.net.nodes[node.idx()].kind == NodeKind::Switch {
                let (aqm, at) = aqm_from_cfg(ctx, "topology.aqm", a, sim, pid)?;
                let p = &mut sim.net.ports[pid.idx()];
                p.aqm = aqm;
                p.aqm_at = at;
            }
        }
    }
    for (i, a) in t.aqm_ports.iter().enumerate() {
        let name = a.port.as_deref().ok_or_else(|| {
            ctx.err(
                "topology.aqm_ports",
                "port",
                format!("entry {i} needs `port` (a port name \"A->B\")"),
            )
        })?;
        let pid = sim.port_by_name(name).ok_or_else(|| {
            ctx.err(
                "topology.aqm_ports",
                "port",
                format!("entry {i}: unknown port {name:?}: ports are named \"A->B\""),
            )
        })?;
        let (aqm, at) = aqm_from_cfg(ctx, "topology.aqm_ports", a, sim, pid)?;
        let p = &mut sim.net.ports[pid.idx()];
        p.aqm = aqm;
        p.aqm_at = at;
    }

    Ok(())
}

/// The AQM of port `pid` from an `aqm` table. `what` names the table in errors
/// ("topology.aqm" or "topology.aqm_ports").
pub(crate) fn aqm_from_cfg(
    ctx: &Ctx,
    what: &str,
    a: &AqmCfg,
    sim: &Sim,
    pid: PortId,
) -> Result<(Aqm, AqmAt), ScenarioError> {
    let (_, b) = build_aqm(ctx, what, a, None, sim, pid, None)?;
    Ok((b.aqm, b.at))
}

/// Build an AQM through the registry (`model/aqm/`): a port AQM from an `aqm` table
/// (`m` = `None`), or the instance for class queue `q.0` of a marking `m` (whose step/RED
/// keys are `a`; `q.1`: the DWRR quanta; an instance shared by all the queues ignores the
/// index). Returns the registry's entry with what it built.
pub(crate) fn build_aqm(
    ctx: &Ctx,
    what: &str,
    a: &AqmCfg,
    m: Option<&MarkCfg>,
    sim: &Sim,
    pid: PortId,
    q: Option<(Option<usize>, Option<&[u32]>)>,
) -> Result<(&'static aqm::Entry, aqm::Built), ScenarioError> {
    let err = |key: &str, msg: String| {
        let (table, k) = what.split_once('.').unwrap_or(("topology", what));
        let mut e = ctx.err(what, key, msg);
        e.line = e.line.or_else(|| line_of(&ctx.loaded.text, table, k));
        e
    };
    let d = MarkDefaults::default();
    let at = match a.at.as_deref().unwrap_or(&d.at) {
        "enqueue" => AqmAt::Enqueue,
        "dequeue" => AqmAt::Dequeue,
        o => {
            return Err(err(
                "at",
                format!("unknown {o:?}: expected \"enqueue\" or \"dequeue\""),
            ))
        }
    };
    let entry = aqm::find(&a.kind, m.is_none()).map_err(|e| err("kind", e))?;
    if a.per_rate.is_some() && a.kind != "step" && a.kind != "red" {
        return Err(err(
            "per_rate",
            format!(
                "kind {:?} has no queue thresholds to scale: only \"step\" and \"red\" take it",
                a.kind
            ),
        ));
    }
    let keys = aqm_keys(a, m, at, sim.net.ports[pid.idx()].rate);
    let (queue, quanta) = q.unwrap_or((None, None));
    let b = aqm::Build {
        keys: &keys,
        rate: sim.net.ports[pid.idx()].rate,
        seed: ctx.loaded.scenario.sim.seed,
        port: pid.0,
        queue,
        quanta,
    };
    let built = (entry.build)(&b).map_err(|e| err(e.key, e.msg))?;
    Ok((entry, built))
}

/// The keys of an `aqm` table `a` (and a marking's own keys `m`) as the registry's
/// constructors read them: `MarkDefaults` applied, and which keys the table sets.
fn aqm_keys(a: &AqmCfg, m: Option<&MarkCfg>, at: AqmAt, rate: RateBps) -> aqm::Keys {
    let d = MarkDefaults::default();
    let dk = MarkDefaults::k(rate);
    let none = MarkCfg::default();
    let m = m.unwrap_or(&none);
    let set = [
        ("k", a.k.is_some()),
        ("min_th", a.min_th.is_some()),
        ("max_th", a.max_th.is_some()),
        ("max_p", a.max_p.is_some()),
        ("w_q", a.w_q.is_some()),
        ("gentle", a.gentle.is_some()),
        ("wait", a.wait.is_some()),
        ("count", a.count.is_some()),
        ("queue", a.queue.is_some()),
        ("mean_pkt_size", a.mean_pkt_size.is_some()),
    ];
    // `per_rate`: a threshold given for a port of that rate, in proportion to this port's.
    let scale = |(v, u): (u64, crate::model::aqm::QueueUnit)| match a.per_rate {
        Some(r) => ((v as u128 * rate.0 as u128 / r.0 .0 as u128) as u64, u),
        None => (v, u),
    };
    let th = |t: Option<Threshold>, d: Threshold| t.map_or((d.0, d.1), |t| scale((t.0, t.1)));
    aqm::Keys {
        given: set.iter().filter(|x| x.1).map(|x| x.0).collect(),
        at,
        k: a.k.map_or((dk.0, dk.1), |t| scale((t.0, t.1))),
        min_th: th(a.min_th, d.min_th),
        max_th: th(a.max_th, d.max_th),
        max_p: a.max_p.unwrap_or(d.max_p),
        w_q: a.w_q.unwrap_or(d.w_q),
        gentle: a.gentle.unwrap_or(d.gentle),
        wait: a.wait.unwrap_or(d.wait),
        count: a.count.unwrap_or(d.count),
        queue: a.queue.clone().unwrap_or(d.queue),
        mean_pkt_size: a.mean_pkt_size.unwrap_or(d.mean_pkt_size).0 .0,
        threshold: m.threshold.unwrap_or(d.threshold).0,
        t_min: m.t_min.map(|t| t.0),
        t_max: m.t_max.map(|t| t.0),
        p_max: m.p_max.unwrap_or(d.p_max),
        target: m.target.unwrap_or(d.target).0,
        interval: m.interval.unwrap_or(d.interval).0,
        ecn: m.ecn.unwrap_or(d.ecn),
        port_thresh: m.port_thresh.unwrap_or(d.port_thresh),
        beta: m.beta.unwrap_or(d.beta),
    }
}

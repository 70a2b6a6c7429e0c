//! The per-port AQM of switch ports: `[topology] aqm` on every switch port, then the
//! `[[topology.aqm_ports]]` overrides (`apply_aqm`); `aqm_from_cfg` builds one port's AQM
//! from its table (also used by `mq.rs` for per-queue and per-port marking).

use crate::base::ids::PortId;
use crate::base::rng::Rng;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::aqm::{Aqm, AqmAt, Red, RedParams, Step};
use crate::scenario::config::{AqmCfg, MarkDefaults, TopologyCfg};
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
    let red_only = [
        ("min_th", a.min_th.is_some()),
        ("max_th", a.max_th.is_some()),
        ("max_p", a.max_p.is_some()),
        ("w_q", a.w_q.is_some()),
        ("gentle", a.gentle.is_some()),
        ("wait", a.wait.is_some()),
        ("queue", a.queue.is_some()),
        ("mean_pkt_size", a.mean_pkt_size.is_some()),
    ];
    let port = &sim.net.ports[pid.idx()];
    match a.kind.as_str() {
        "none" => Ok((Aqm::None, AqmAt::Off)),
        "step" => {
            if let Some((k, _)) = red_only.iter().find(|x| x.1) {
                return Err(err(k, "only for kind = \"red\"".to_string()));
            }
            let k = a.k.unwrap_or(MarkDefaults::k(port.rate));
            Ok((Aqm::Step(Step { k: k.0, unit: k.1 }), at))
        }
        "red" => {
            if a.k.is_some() {
                return Err(err(
                    "k",
                    "only for kind = \"step\" (RED uses min_th/max_th)".to_string(),
                ));
            }
            let min = a.min_th.unwrap_or(d.min_th);
            let max = a.max_th.unwrap_or(d.max_th);
            if min.1 != max.1 {
                return Err(err(
                    "max_th",
                    "min_th and max_th must use the same unit (both packets or both bytes)"
                        .to_string(),
                ));
            }
            if min.0 > max.0 {
                return Err(err("max_th", "must not be below min_th".to_string()));
            }
            let max_p = a.max_p.unwrap_or(d.max_p);
            if !(max_p > 0.0 && max_p <= 1.0) {
                return Err(err(
                    "max_p",
                    format!("{max_p} is out of range: expected 0 < max_p <= 1"),
                ));
            }
            let w_q = a.w_q.unwrap_or(d.w_q);
            if !(w_q > 0.0 && w_q <= 1.0) {
                return Err(err(
                    "w_q",
                    format!("{w_q} is out of range: expected 0 < w_q <= 1"),
                ));
            }
            let instantaneous = match a.queue.as_deref().unwrap_or(&d.queue) {
                "average" => false,
                "instantaneous" => true,
                o => {
                    return Err(err(
                        "queue",
                        format!("unknown {o:?}: expected \"average\" or \"instantaneous\""),
                    ))
                }
            };
            let mean = a.mean_pkt_size.unwrap_or(d.mean_pkt_size).0 .0;
            if mean == 0 || mean > 65535 {
                return Err(err("mean_pkt_size", "expected 1..65535 bytes".to_string()));
            }
            let p = RedParams {
                min_th: min.0 as f64,
                max_th: max.0 as f64,
                unit: min.1,
                max_p,
                w_q,
                gentle: a.gentle.unwrap_or(d.gentle),
                wait: a.wait.unwrap_or(d.wait),
                instantaneous,
                mean_pkt_time: port.rate.tx_time(mean as u32),
            };
            // One random stream per port, derived from the scenario seed.
            let rng = Rng::new(ctx.loaded.scenario.sim.seed, 0x2_0000 + pid.0 as u64);
            Ok((Aqm::Red(Box::new(Red::new(p, rng))), at))
        }
        o => Err(err(
            "kind",
            format!("unknown AQM {o:?}: expected \"step\", \"red\" or \"none\""),
        )),
    }
}

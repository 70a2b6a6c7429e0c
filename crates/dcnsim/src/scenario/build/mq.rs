//! Multi-queue ports (`[topology] queues = {...}` and `[[topology.queue_ports]]`, keys in
//! `scenario/config/mq.rs`), built into `mqport::MqPort`s.

use super::aqm::{aqm_from_cfg, build_aqm};
use crate::base::ids::{NodeId, PortId};
use crate::base::units::RateBps;
use crate::engine::net::mq_port::{MqPort, QueueMark, QueuedRef};
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::aqm::Scope;
use crate::model::mq::buffer::{Admission, BufferPolicy, SharedPool, DEFAULT_PORT_BUFFER_BYTES};
use crate::model::mq::dqrate::{DqRate, DqRateConfig};
use crate::model::mq::sched::{FlowKey, SfqLimit, DEFAULT_DRR_BUCKETS, DEFAULT_SFQ_BUCKETS};
use crate::model::mq::{MultiQueue, SchedConfig};
use crate::scenario::config::{MarkCfg, MarkDefaults, QueuesCfg};
use crate::scenario::ctx::Ctx;
use crate::scenario::error::{line_of, ScenarioError};

fn sched_config(
    ctx: &Ctx,
    what: &str,
    q: &QueuesCfg,
    n: usize,
) -> Result<SchedConfig, ScenarioError> {
    let err = |key: &str, msg: String| ctx.err(what, key, msg);
    let name = q.scheduler.as_str();
    // TCN / MQ-ECN sims: quantum 1500 B (1460 + 40) per service queue (docs/models.md §5.6).
    let quantum = q.quantum.map(|s| s.0 .0).unwrap_or(1500);
    if quantum == 0 || quantum > u32::MAX as u64 {
        return Err(err("quantum", "expected 1..4294967295 bytes".into()));
    }
    let strict = q.strict as usize;
    let rr_n = |k: usize| -> Result<usize, ScenarioError> {
        if k >= n {
            return Err(err(
                "strict",
                format!("{k} strict queues leave none of the {n} for the round robin"),
            ));
        }
        Ok(n - k)
    };
    let quanta = |m: usize| -> Result<Vec<u32>, ScenarioError> {
        match &q.quanta {
            Some(v) if v.len() != m => Err(err(
                "quanta",
                format!("{} quanta for {m} round-robin queues", v.len()),
            )),
            Some(v) => Ok(v.clone()),
            None => Ok(vec![quantum as u32; m]),
        }
    };
    let weights = |m: usize| -> Result<Vec<f64>, ScenarioError> {
        match &q.weights {
            Some(v) if v.len() != m => Err(err(
                "weights",
                format!("{} weights for {m} weighted queues", v.len()),
            )),
            Some(v) => Ok(v.clone()),
            None => Ok(vec![1.0; m]),
        }
    };
    Ok(match name {
        "sp" => SchedConfig::Sp,
        "dwrr" => SchedConfig::Dwrr { quanta: quanta(n)? },
        "wfq" => SchedConfig::Wfq {
            weights: weights(n)?,
        },
        "wrr" => SchedConfig::Wrr {
            weights: weights(n)?
                .iter()
                .map(|w| w.max(0.0).round() as u32)
                .collect(),
        },
        "sp_dwrr" => SchedConfig::SpDwrr {
            strict,
            quanta: quanta(rr_n(strict)?)?,
        },
        "sp_wfq" => SchedConfig::SpWfq {
            strict,
            weights: weights(rr_n(strict)?)?,
        },
        "drr" => SchedConfig::Drr {
            // ns-2 Queue/DRR quantum_ default 250 B (docs/models.md §5.6).
            quantum: q.quantum.map(|s| s.0 .0 as u32).unwrap_or(250),
            blimit: q.blimit.0 .0,
            key: match q.drr_key.as_str() {
                "src" => FlowKey::Src,
                "src_dst" => FlowKey::SrcDst,
                o => {
                    return Err(err(
                        "drr_key",
                        format!("unknown {o:?}: expected \"src\" or \"src_dst\""),
                    ))
                }
            },
        },
        "sfq" => SchedConfig::Sfq {
            maxqueue: q.maxqueue,
            limit: match q.sfq_partition_flows {
                None => SfqLimit::Ns2,
                Some(0) => return Err(err("sfq_partition_flows", "must be ≥ 1".into())),
                Some(f) => SfqLimit::HardPartition { flows: f },
            },
        },
        o => {
            return Err(err(
                "scheduler",
                format!(
                    "unknown {o:?}: expected \"sp\", \"wfq\", \"dwrr\", \"wrr\", \"sp_wfq\", \"sp_dwrr\", \"drr\" or \"sfq\""
                ),
            ))
        }
    })
}

/// The class-queue marking of port `pid` (`n` queues, DWRR `quanta` if any) from its
/// `marking` table, built through the registry (`model/aqm/`): one instance per queue or
/// one for all of them, as the discipline's entry says. MQ-ECN's round-time estimator goes
/// to the scheduler (`mq`).
#[allow(clippy::too_many_arguments)]
fn mark_from_cfg(
    ctx: &Ctx,
    what: &str,
    m: &MarkCfg,
    sim: &Sim,
    pid: PortId,
    n: usize,
    quanta: Option<Vec<u32>>,
    mq: &mut MultiQueue<QueuedRef>,
) -> Result<QueueMark, ScenarioError> {
    let a = m.aqm();
    let quanta = quanta.as_deref();
    let (entry, first) = build_aqm(ctx, what, &a, Some(m), sim, pid, Some((Some(0), quanta)))?;
    let scope = entry.queues.expect("a class-queue marking");
    let at = first.at;
    let mut round = first.round;
    let mut v = Vec::with_capacity(n);
    v.push(first.aqm);
    if scope == Scope::PerQueue {
        for q in 1..n {
            let built = build_aqm(ctx, what, &a, Some(m), sim, pid, Some((Some(q), quanta)))?;
            v.push(built.1.aqm);
        }
    }
    if let Some(only) = &m.on_queues {
        if scope != Scope::PerQueue {
            let msg = format!(
                "{:?} marks the port as a whole: on_queues needs a per-queue marker",
                m.kind
            );
            return Err(ctx.err(what, "on_queues", msg));
        }
        if let Some(&q) = only.iter().find(|&&q| q >= n) {
            return Err(ctx.err(
                what,
                "on_queues",
                format!("queue {q}: the port has {n} (0..{})", n - 1),
            ));
        }
        for (q, aqm) in v.iter_mut().enumerate() {
            if !only.contains(&q) {
                *aqm = crate::model::aqm::Aqm::None;
            }
        }
    }
    if let Some(e) = round.take() {
        mq.set_mqecn(e).map_err(|e| ctx.err(what, "kind", e))?;
    }
    Ok(QueueMark::new(scope, v, at))
}

fn dq_config(
    ctx: &Ctx,
    what: &str,
    m: Option<&MarkCfg>,
    rate: RateBps,
) -> Result<DqRateConfig, ScenarioError> {
    let d = MarkDefaults::default();
    let none = MarkCfg::default();
    let m = m.unwrap_or(&none);
    let c = DqRateConfig {
        initial_rate: rate,
        dq_thresh: m.dq_thresh.unwrap_or(d.dq_thresh).0 .0,
        epsilon: m.epsilon.unwrap_or(d.epsilon),
        rtt: m.rtt.unwrap_or(d.rtt).0,
        lambda: m.lambda.unwrap_or(d.lambda),
        ..DqRateConfig::default()
    };
    DqRate::new(c).map_err(|e| ctx.err(what, "dq_thresh", e))?;
    Ok(c)
}

/// Build the multi-queue state of port `pid` from a `queues` table.
fn build_port(
    ctx: &Ctx,
    what: &str,
    q: &QueuesCfg,
    sim: &mut Sim,
    pid: PortId,
    pools: &mut Vec<(NodeId, u32)>,
) -> Result<(), ScenarioError> {
    let err = |key: &str, msg: String| {
        let mut e = ctx.err(what, key, msg);
        if e.line.is_none() {
            let (t, k) = what.split_once('.').unwrap_or(("topology", what));
            e.line = line_of(&ctx.loaded.text, t, k);
        }
        e
    };
    let fail = |key: &str, msg: String| -> ScenarioError { err(key, msg) };
    let sched_name = q.scheduler.as_str();
    // TCN simulations: 8 queues per port (SP + 7 DWRR/WFQ); DRR/SFQ: ns-2 bucket counts.
    let default_n = match sched_name {
        "drr" => DEFAULT_DRR_BUCKETS as u32,
        "sfq" => DEFAULT_SFQ_BUCKETS as u32,
        _ => 8,
    };
    let n = q.count.unwrap_or(default_n) as usize;
    if n as u64 > crate::base::limits::QUEUES_MAX {
        let range = "1 ..= 1024 (limits: queues.count)";
        return Err(fail(
            "count",
            crate::base::limits::out_of_range(&n.to_string(), range),
        ));
    }
    let cfg = sched_config(ctx, what, q, n)?;
    let quanta = match &cfg {
        SchedConfig::Dwrr { quanta } => Some(quanta.clone()),
        SchedConfig::SpDwrr { strict, quanta } => {
            let mut v = vec![0u32; *strict];
            v.extend(quanta.iter().copied());
            Some(v)
        }
        _ => None,
    };
    let mut mq: MultiQueue<QueuedRef> =
        MultiQueue::new(n, &cfg, 0).map_err(|e| fail("count", e))?;
    let policy = buffer_policy(q, n, sim.net.ports[pid.idx()].limit_bytes, &fail)?;
    let dynamic = matches!(policy, BufferPolicy::DynamicThreshold { .. });
    let adm = Admission::new(policy, n).map_err(|e| fail("buffer", e))?;
    let mark = match &q.marking {
        Some(m) => mark_from_cfg(
            ctx,
            &format!("{what}.marking"),
            m,
            sim,
            pid,
            n,
            quanta,
            &mut mq,
        )?,
        None => QueueMark::None,
    };
    let rate = sim.net.ports[pid.idx()].rate;
    let mut mp = MqPort::new(mq, adm, mark);
    let want_est = q.record_estimates;
    if mp.mark.reads_rates() || want_est {
        let c = dq_config(ctx, what, q.marking.as_ref(), rate)?;
        mp.dqrate = (0..n).map(|_| DqRate::new(c).expect("validated")).collect();
        mp.record_estimates = want_est;
    }
    if dynamic {
        mp.pool = Some(shared_pool(q, sim, pid, pools, &fail)?);
    }
    if let Some(a) = &q.port_marking {
        let (aqm, at) = aqm_from_cfg(ctx, &format!("{what}.port_marking"), a, sim, pid)?;
        let port = &mut sim.net.ports[pid.idx()];
        port.aqm = aqm;
        port.aqm_at = at;
    }
    let port = &mut sim.net.ports[pid.idx()];
    port.mq = Some(Box::new(mp));
    Ok(())
}

type Fail<'a> = dyn Fn(&str, String) -> ScenarioError + 'a;

/// The buffer sharing of one port's queues (`buffer`, `limit`, `limits`, `alpha`).
fn buffer_policy(
    q: &QueuesCfg,
    n: usize,
    sw_limit: u64,
    fail: &Fail,
) -> Result<BufferPolicy, ScenarioError> {
    let policy = match q.buffer.as_str() {
        "shared" => BufferPolicy::CompleteSharing {
            // The port's switch_buffer if set, else 300 KB (TCN sims: 200 × 1500 B).
            limit: q.limit.map(|s| s.0 .0).unwrap_or(if sw_limit == u64::MAX {
                DEFAULT_PORT_BUFFER_BYTES
            } else {
                sw_limit
            }),
        },
        "static" => BufferPolicy::StaticPerQueue {
            limits: match (&q.limits, q.limit) {
                (Some(v), _) => v.iter().map(|s| s.0 .0).collect(),
                (None, Some(l)) => vec![l.0 .0; n],
                (None, None) => {
                    return Err(fail(
                        "limits",
                        "buffer = \"static\" needs `limits` (one per queue) or `limit`".into(),
                    ))
                }
            },
        },
        "dynamic" => BufferPolicy::DynamicThreshold { alpha: q.alpha },
        o => {
            return Err(fail(
                "buffer",
                format!("unknown {o:?}: expected \"shared\", \"static\" or \"dynamic\""),
            ))
        }
    };
    Ok(policy)
}

/// The switch-wide pool of a dynamic-threshold port: one per switch, made by its first port.
fn shared_pool(
    q: &QueuesCfg,
    sim: &mut Sim,
    pid: PortId,
    pools: &mut Vec<(NodeId, u32)>,
    fail: &Fail,
) -> Result<u32, ScenarioError> {
    // One pool per switch; the sources give no default size, so `pool` is required.
    let node = sim.net.ports[pid.idx()].node;
    let cap = q.pool.map(|s| s.0 .0).ok_or_else(|| {
        fail(
            "pool",
            "buffer = \"dynamic\" needs `pool`, the switch-wide shared buffer".into(),
        )
    })?;
    let idx = match pools.iter().find(|(n, _)| *n == node) {
        Some(&(_, i)) => i,
        None => {
            sim.net
                .pools
                .push(SharedPool::new(cap).map_err(|e| fail("pool", e))?);
            let i = (sim.net.pools.len() - 1) as u32;
            pools.push((node, i));
            i
        }
    };
    Ok(idx)
}

/// Apply `[topology] queues` to every switch port, then `[[topology.queue_ports]]`.
pub(super) fn apply(
    ctx: &Ctx,
    all: Option<&QueuesCfg>,
    ports: &[QueuesCfg],
    sim: &mut Sim,
) -> Result<(), ScenarioError> {
    let mut pools: Vec<(NodeId, u32)> = Vec::new();
    if let Some(q) = all {
        if q.port.is_some() {
            return Err(ctx.err(
                "topology.queues",
                "port",
                "`port` belongs in [[topology.queue_ports]] entries",
            ));
        }
        let hosts = q.hosts.unwrap_or(false);
        for pid in (0..sim.net.ports.len() as u32).map(PortId) {
            let node = sim.net.ports[pid.idx()].node;
            let kind = sim.net.nodes[node.idx()].kind;
            if kind == NodeKind::Switch || (hosts && kind == NodeKind::Host) {
                build_port(ctx, "topology.queues", q, sim, pid, &mut pools)?;
            }
        }
    }
    for (i, q) in ports.iter().enumerate() {
        if q.hosts.is_some() {
            return Err(ctx.err(
                "topology.queue_ports",
                "hosts",
                format!("entry {i}: `hosts` belongs in [topology] queues (all host NICs)"),
            ));
        }
        let name = q.port.as_deref().ok_or_else(|| {
            ctx.err(
                "topology.queue_ports",
                "port",
                format!("entry {i} needs `port` (a port name \"A->B\")"),
            )
        })?;
        let pid = sim.port_by_name(name).ok_or_else(|| {
            ctx.err(
                "topology.queue_ports",
                "port",
                format!("entry {i}: unknown port {name:?}: ports are named \"A->B\""),
            )
        })?;
        build_port(ctx, "topology.queue_ports", q, sim, pid, &mut pools)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    const BASE: &str = "[sim]\nduration = \"1ms\"\n[topology]\nkind = \"leafspine\"\n\
        hosts_per_leaf = 2\nleaves = 2\nspines = 2\nlink_rate = \"10Gbps\"\n\
        base_rtt = \"20us\"\nhost_delay = \"10us\"\n";

    fn build(extra: &str) -> Result<crate::engine::sim::Sim, crate::scenario::ScenarioError> {
        let text =
            format!("{BASE}{extra}[[apps]]\nkind = \"bulk\"\nsrc = \"host1\"\ndst = \"host4\"\n");
        let loaded = crate::scenario::load(&text, "t.toml", &[])?;
        crate::scenario::build(&loaded).map(|(sim, _)| sim)
    }

    fn nic_has_queues(sim: &crate::engine::sim::Sim) -> (usize, usize) {
        let mut host = 0;
        let mut switch = 0;
        for p in &sim.net.ports {
            if p.mq.is_some() {
                if sim.net.nodes[p.node.idx()].kind == crate::engine::net::NodeKind::Host {
                    host += 1;
                } else {
                    switch += 1;
                }
            }
        }
        (host, switch)
    }

    #[test]
    fn hosts_key_puts_the_queues_on_every_nic() {
        let q = "queues = { count = 4, scheduler = \"sp_dwrr\", strict = 1, quantum = 1500";
        let off = build(&format!("{q} }}\n")).unwrap();
        let on = build(&format!("{q}, hosts = true }}\n")).unwrap();
        // 4 hosts; 2 leaves x (2 down + 2 up) + 2 spines x 2 down = 12 switch ports.
        assert_eq!(nic_has_queues(&off), (0, 12));
        assert_eq!(nic_has_queues(&on), (4, 12));
    }

    #[test]
    fn hosts_key_is_refused_per_port() {
        let e =
            build("[[topology.queue_ports]]\nport = \"leaf1->spine1\"\ncount = 2\nhosts = true\n")
                .err()
                .expect("refused");
        let msg = e.to_string();
        assert!(
            msg.contains("hosts") && msg.contains("queue_ports"),
            "{msg}"
        );
    }
}

//! The queue pairs of `transport = "roce"` apps from `[roce]` (`config/roce.rs`).

use crate::base::ids::NodeId;
use crate::base::int::INT_HEADER_BYTES;
use crate::base::packet::{Kind, Packet};
use crate::base::units::{parse_bytes, parse_time, RateBps, SimTime};
use crate::engine::sim::Sim;
use crate::model::roce::cc::dcqcn::{Dcqcn, DcqcnConfig};
use crate::model::roce::cc::dctcp::{DctcpRate, DctcpRateConfig};
use crate::model::roce::cc::hpcc::{Hpcc, HpccConfig};
use crate::model::roce::cc::swift::{Swift, SwiftConfig, SwiftPath};
use crate::model::roce::cc::timely::{Timely, TimelyConfig};
use crate::model::roce::cc::{FixedRate, RoceCc};
use crate::model::roce::qp::{CnpPolicy, LossRecovery, RoceConfig, RoceFlow};
use crate::scenario::config::roce::RoceCfg;
use crate::scenario::ctx::Ctx;
use crate::scenario::error::ScenarioError;

/// The queue-pair constants of `[roce]` (the window is per flow: `roce_flow`).
pub(super) fn roce_config(ctx: &Ctx, c: &RoceCfg) -> Result<RoceConfig, ScenarioError> {
    let err = |key: &str, m: String| ctx.err("roce", key, m);
    let mut q = RoceConfig::default();
    let mtu = c.mtu.0 .0;
    if !(64..=9000).contains(&mtu) {
        return Err(err(
            "mtu",
            format!("{mtu} B: expected 64 B to 9000 B of payload"),
        ));
    }
    q.mtu = mtu as u32;
    if c.ack_every == 0 || c.ack_every > 1024 {
        return Err(err(
            "ack_every",
            format!("{}: expected 1 to 1024 packets", c.ack_every),
        ));
    }
    q.ack_every = c.ack_every;
    q.recovery = match c.recovery.as_str() {
        "go-back-n" => LossRecovery::GoBackN,
        "selective-repeat" => LossRecovery::SelectiveRepeat,
        other => {
            return Err(err(
                "recovery",
                format!("unknown {other:?}: expected \"go-back-n\" or \"selective-repeat\""),
            ))
        }
    };
    if c.rto.0 == SimTime::ZERO {
        return Err(err("rto", "must be positive".into()));
    }
    q.rto = c.rto.0;
    q.cnp = match c.cnp.as_deref() {
        // The HPCC authors' simulator has no CNP packets: its ACKs carry the CE echo, whatever
        // the congestion control.
        None if c.cc.ends_with("-fork") => CnpPolicy::PerAck,
        None => CnpPolicy::Interval(RoceCfg::CNP_INTERVAL),
        Some("per-ack") => CnpPolicy::PerAck,
        Some(t) => match parse_time(t) {
            Ok(d) => CnpPolicy::Interval(d),
            Err(e) => {
                return Err(err(
                    "cnp",
                    format!("{t:?}: expected \"per-ack\" or a duration ({e})"),
                ))
            }
        },
    };
    if c.data_class > 7 || c.ctrl_class > 7 {
        return Err(err(
            if c.data_class > 7 {
                "data_class"
            } else {
                "ctrl_class"
            },
            "expected a traffic class 0 to 7".into(),
        ));
    }
    q.data_class = c.data_class;
    q.ctrl_class = c.ctrl_class;
    if c.cc.starts_with("hpcc") {
        // HPCC's data packets collect INT records and its ACKs echo them: both carry the
        // INT header.
        q.int = true;
        q.data_header += INT_HEADER_BYTES;
        q.ack_size += INT_HEADER_BYTES;
    }
    if let Some(eta) = c.eta {
        if !c.cc.starts_with("hpcc") {
            return Err(err(
                "eta",
                format!("is HPCC's target utilisation: not for cc = {:?}", c.cc),
            ));
        }
        if !(eta > 0.0 && eta <= 1.0) {
            return Err(err(
                "eta",
                format!("{eta}: expected a utilisation above 0 and at most 1"),
            ));
        }
    }
    // Checked here so that a bad value is reported before any flow is built.
    controller(ctx, c, &q, Path::check())?;
    window(ctx, c, None)?;
    Ok(q)
}

/// What a controller may derive constants from: the NIC's rate, the path's base RTT and its
/// switches.
#[derive(Clone, Copy, Debug)]
struct Path {
    line: RateBps,
    base_rtt: SimTime,
    hops: u32,
}

impl Path {
    /// A stand-in for checking `[roce] cc` before any flow exists.
    fn check() -> Path {
        Path {
            line: RateBps(1_000_000_000),
            base_rtt: SimTime::ZERO,
            hops: 0,
        }
    }
}

/// The controller `[roce] cc` names, for a queue pair of constants `q` on path `p`.
fn controller(ctx: &Ctx, c: &RoceCfg, q: &RoceConfig, p: Path) -> Result<RoceCc, ScenarioError> {
    let line = p.line;
    Ok(match c.cc.as_str() {
        "dcqcn" => RoceCc::Dcqcn(Dcqcn::new(DcqcnConfig::paper(line))),
        "dcqcn-fork" => RoceCc::Dcqcn(Dcqcn::new(DcqcnConfig::hpcc_fork(line))),
        "timely" => RoceCc::Timely(Timely::new(TimelyConfig::paper(line))),
        "timely-fork" => RoceCc::Timely(Timely::new(TimelyConfig::hpcc_fork(line))),
        "swift" => RoceCc::Swift(Swift::new(SwiftConfig::paper(SwiftPath {
            line_rate: line,
            mtu: q.mtu,
            wire: q.mtu + q.data_header,
            hops: c.hops.unwrap_or(p.hops),
            base_rtt: p.base_rtt,
        }))),
        "hpcc" => RoceCc::Hpcc(Hpcc::new(with_eta(HpccConfig::paper(line, p.base_rtt), c))),
        "hpcc-fork" => RoceCc::Hpcc(Hpcc::new(with_eta(
            HpccConfig::hpcc_fork(line, p.base_rtt),
            c,
        ))),
        "dctcp-fork" => RoceCc::Dctcp(DctcpRate::new(DctcpRateConfig::hpcc_fork(
            line, p.base_rtt, q.mtu,
        ))),
        "none" => RoceCc::Fixed(FixedRate { rate: line }),
        other => {
            return Err(ctx.err(
                "roce",
                "cc",
                format!(
                    "unknown {other:?}: expected \"dcqcn\", \"dcqcn-fork\", \"timely\", \
                     \"timely-fork\", \"swift\", \"hpcc\", \"hpcc-fork\", \"dctcp-fork\" or \"none\""
                ),
            ))
        }
    })
}

/// An HPCC profile with `[roce] eta` over its η (checked in `roce_config`).
fn with_eta(mut cfg: HpccConfig, c: &RoceCfg) -> HpccConfig {
    if let Some(eta) = c.eta {
        cfg.eta = eta;
    }
    cfg
}

/// `[roce] window = "rate-bdp"`: one bandwidth-delay product at the limiter's current rate.
const RATE_BDP: &str = "rate-bdp";

/// The line rate a `"rate-bdp"` window scales against (None for any other window).
fn window_line(c: &RoceCfg, line: RateBps) -> Option<RateBps> {
    (c.window.as_deref() == Some(RATE_BDP)).then_some(line)
}

/// `[roce] window` for a flow whose path has base RTT `rtt` at NIC rate `line` (None: only
/// check the value).
fn window(
    ctx: &Ctx,
    c: &RoceCfg,
    path: Option<(SimTime, RateBps)>,
) -> Result<Option<u64>, ScenarioError> {
    let Some(w) = c.window.as_deref() else {
        return Ok(None);
    };
    if w == "none" {
        return Ok(None);
    }
    if w == "bdp" || w == RATE_BDP {
        return Ok(path.map(|(rtt, line)| {
            (rtt.0 as u128 * line.0 as u128 / 8 / SimTime::PS_PER_S as u128) as u64
        }));
    }
    match parse_bytes(w) {
        Ok(b) if b.0 > 0 => Ok(Some(b.0)),
        _ => Err(ctx.err(
            "roce",
            "window",
            format!(
                "{w:?}: expected \"bdp\", \"rate-bdp\", \"none\" or a positive size such as \"100KB\""
            ),
        )),
    }
}

/// A queue pair from `src` to `dst` (a route exists): the controller at the rate of the
/// source's port towards `dst`, and the window of `[roce] window`.
pub(super) fn roce_flow(
    ctx: &Ctx,
    sim: &Sim,
    q: &RoceConfig,
    (src, dst): (NodeId, NodeId),
) -> Result<RoceFlow, ScenarioError> {
    let c = &ctx.loaded.scenario.roce;
    let line = sim.net.ports[sim.net.routing.route(src, dst).idx()].rate;
    let rtt = base_rtt(sim, q.mtu + q.data_header, q.ack_size, (src, dst));
    let path = Path {
        line,
        base_rtt: rtt,
        hops: switches(sim, (src, dst)),
    };
    let cc = controller(ctx, c, q, path)?;
    let mut q = *q;
    q.window = window(ctx, c, Some((rtt, line)))?;
    q.window_line = window_line(c, line);
    Ok(RoceFlow::new(src, dst, q, cc))
}

/// The queue-pair constants and the controller every queue pair among `hosts` starts from
/// (a workload opens them during the run): the controller for the first host's NIC rate,
/// and a "bdp" window at the largest base RTT from the first host — the fabric's diameter
/// in the symmetric topologies, as the HPCC authors' simulator gives every queue pair the
/// largest bandwidth-delay product of the network (Swift's hop count likewise: the most
/// switches from the first host).
pub(super) fn roce_proto(
    ctx: &Ctx,
    sim: &Sim,
    q: &RoceConfig,
    hosts: &[NodeId],
) -> Result<(RoceConfig, RoceCc), ScenarioError> {
    let c = &ctx.loaded.scenario.roce;
    let first = hosts[0];
    let line = sim.net.ports[sim.net.nodes[first.idx()].ports[0].idx()].rate;
    let rtt = hosts
        .iter()
        .filter(|&&h| h != first)
        .map(|&h| base_rtt(sim, q.mtu + q.data_header, q.ack_size, (first, h)))
        .max()
        .unwrap_or(SimTime::ZERO);
    let hops = hosts
        .iter()
        .filter(|&&h| h != first)
        .map(|&h| switches(sim, (first, h)))
        .max()
        .unwrap_or(0);
    let path = Path {
        line,
        base_rtt: rtt,
        hops,
    };
    let cc = controller(ctx, c, q, path)?;
    let mut q = *q;
    q.window = window(ctx, c, Some((rtt, line)))?;
    q.window_line = window_line(c, line);
    Ok((q, cc))
}

/// The switches a data packet from `src` to `dst` crosses (one fewer than the links).
fn switches(sim: &Sim, (src, dst): (NodeId, NodeId)) -> u32 {
    let p = Packet::new(Kind::Data, crate::base::ids::FlowId(0), (src, dst), 64, 0);
    let links = sim.net.path(&p).map_or(0, |v| v.len());
    links.saturating_sub(1) as u32
}

/// The round trip of a full data packet from `src` to `dst` and of its ACK back, alone in
/// the network: propagation both ways and store-and-forward at every hop.
fn base_rtt(sim: &Sim, data: u32, ack: u32, (src, dst): (NodeId, NodeId)) -> SimTime {
    let there = Packet::new(Kind::Data, crate::base::ids::FlowId(0), (src, dst), data, 0);
    let back = Packet::new(Kind::Ack, crate::base::ids::FlowId(0), (dst, src), ack, 0);
    let mut t = SimTime::ZERO;
    for (p, size) in [(there, data), (back, ack)] {
        for pid in sim.net.path(&p).unwrap_or_default() {
            let port = &sim.net.ports[pid.idx()];
            t = SimTime(t.0 + port.delay.0 + port.rate.tx_time(size).0);
        }
    }
    t
}

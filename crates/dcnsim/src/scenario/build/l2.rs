//! Layer 2 (QCN, PAUSE/PFC, rate changes): `build_l2` installs the engine's layer-2 state
//! (`engine/datapath/l2/mod.rs`) from the keys of `scenario/config/l2.rs` and refuses the
//! combinations not supported yet.

use crate::base::ids::{Idx, NodeId, PortId};
use crate::base::units::{RateBps, SimTime};
use crate::engine::datapath::l2::*;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::l2::*;
use crate::scenario::config::l2::{PauseCfgFile, QcnCfg, QcnCpCfg, RateChangeCfg, RpCfgFile};
use crate::scenario::config::Scenario;
use crate::scenario::ctx::Ctx;
use crate::scenario::error::ScenarioError;

/// Layer 2 (QCN, PAUSE/PFC, rate changes) and the combinations not supported yet.
pub(super) fn build_l2(ctx: &Ctx, s: &Scenario, sim: &mut Sim) -> Result<(), ScenarioError> {
    let (t, m) = (&s.topology, &s.measure);
    let l2_args = BuildArgs {
        cp: t.qcn.as_ref(),
        pause: t.pause.as_ref(),
        rate_changes: &t.rate_changes,
        qcn: s.qcn.as_ref(),
        rp_interval: m.rp_interval.0,
        keep_rp_series: m.rp_series,
        flow_rate_interval: m.flow_rate_interval.map(|d| d.0),
    };
    build(sim, &l2_args, &|table: &str, key: &str, msg: String| {
        ctx.err(table, key, msg)
    })?;
    // A switch forwards with the output port its arrival carries (`Routing::hint`, ECMP
    // resolved), so PAUSE and PFC work over ECMP fabrics; a QCN congestion point sends its
    // CNM back by a single next hop (`routing.route`), which an ECMP group is not.
    let cp_any = t.qcn.as_ref().is_some_and(|q| q.enabled);
    if cp_any && !sim.net.ecmp.groups.is_empty() {
        return Err(ctx.err(
            "topology",
            "qcn",
            "QCN together with ECMP (topology.ecmp) is not supported yet",
        ));
    }
    // PAUSE and PFC work on multi-queue ports (`engine/datapath/l2/pfc.rs`); the QCN congestion point is
    // still wired to the single FIFO only.
    let cp_on = sim
        .l2
        .as_ref()
        .is_some_and(|l| l.cp.iter().any(|c| c.is_some()));
    if cp_on && sim.net.ports.iter().any(|p| p.mq.is_some()) {
        return Err(ctx.err(
            "topology",
            "qcn",
            "QCN on switches with multi-queue ports (topology.queues) is not supported yet",
        ));
    }
    Ok(())
}

/// What `build` needs from the scenario.
pub struct BuildArgs<'a> {
    pub cp: Option<&'a QcnCpCfg>,
    pub pause: Option<&'a PauseCfgFile>,
    pub rate_changes: &'a [RateChangeCfg],
    pub qcn: Option<&'a QcnCfg>,
    pub rp_interval: SimTime,
    pub keep_rp_series: bool,
    pub flow_rate_interval: Option<SimTime>,
}

type ErrFn<'a> = &'a dyn Fn(&str, &str, String) -> ScenarioError;

fn cp_config(c: &QcnCpCfg, err: ErrFn) -> Result<CpConfig, ScenarioError> {
    let mut cfg = CpConfig {
        q_eq_bytes: c.q_eq.0 .0,
        w: c.w,
        jitter: c.jitter,
        detailed: c.detailed_sampling,
        ..CpConfig::default()
    };
    cfg.sampling = match c.sampling.as_str() {
        "v2.2" => Sampling::V22,
        "every_packet" => Sampling::EveryPacket,
        "nov2007" => Sampling::Nov2007 {
            p_min: c.nov2007_p_min,
            p_max: c.nov2007_p_max,
        },
        o => {
            return Err(err(
                "topology",
                "qcn",
                format!("sampling {o:?}: expected \"v2.2\", \"nov2007\" or \"every_packet\""),
            ))
        }
    };
    if let Some(shift) = c.quantizer_shift {
        cfg.quantizer = crate::model::l2::Quantizer::MsbShift { shift };
    }
    cfg.sample = match c.sample.as_str() {
        "admitted" => SampleSet::Admitted,
        "arrivals" => SampleSet::Arrivals,
        o => {
            return Err(err(
                "topology",
                "qcn",
                format!("sample {o:?}: expected \"admitted\" or \"arrivals\""),
            ))
        }
    };
    Ok(cfg)
}

fn rp_config(c: &RpCfgFile) -> RpConfig {
    RpConfig {
        gd: c.gd,
        min_rate: c.min_rate.0,
        bc_limit_bytes: c.bc_limit.0 .0,
        timer_period: c.timer_period.0,
        r_ai: c.r_ai.0,
        r_hai: c.r_hai.0,
        jitter: c.jitter,
        release_at_line_rate: c.release_at_line_rate,
        bucket_bytes: c.bucket.0,
        adaptive_rai: c.adaptive_rai,
        ..RpConfig::default()
    }
}

/// Install the L2 state described by the scenario (no-op when nothing is configured).
fn build(sim: &mut Sim, a: &BuildArgs, err: ErrFn) -> Result<(), ScenarioError> {
    let rp_cfg = a.qcn.and_then(|q| q.rp.as_ref());
    let cp_cfg = a.cp.filter(|c| c.enabled);
    let pause_cfg = a.pause.filter(|c| c.enabled);
    let a = &BuildArgs {
        cp: cp_cfg,
        pause: pause_cfg,
        rate_changes: a.rate_changes,
        qcn: a.qcn,
        rp_interval: a.rp_interval,
        keep_rp_series: a.keep_rp_series,
        flow_rate_interval: a.flow_rate_interval,
    };
    if a.cp.is_none()
        && a.pause.is_none()
        && a.rate_changes.is_empty()
        && rp_cfg.is_none()
        && a.flow_rate_interval.is_none()
    {
        return Ok(());
    }
    let cbr_src = sim
        .apps
        .iter()
        .map(|a| match a {
            crate::engine::apps::App::Cbr(c) => c.src,
            _ => NodeId::NONE,
        })
        .collect();
    let mut l = L2::new(sim, cbr_src);
    if let Some(c) = a.cp {
        install_cps(sim, &mut l, c, err)?;
    }
    if let Some(pc) = a.pause {
        install_pause(sim, &mut l, pc, err)?;
    }
    if a.cp.is_some() || a.pause.is_some() {
        for p in &sim.net.ports {
            if p.aqm_at == crate::model::aqm::AqmAt::Dequeue {
                return Err(err(
                    "topology",
                    if a.cp.is_some() { "qcn" } else { "pause" },
                    format!(
                        "QCN and PAUSE cannot be combined with a dequeue-time AQM (port {:?})",
                        crate::engine::net::port_name(&sim.net.nodes, p)
                    ),
                ));
            }
        }
    }
    for rc in a.rate_changes {
        let pid = port_named(sim, &rc.port, "topology.rate_changes", "port", err)?;
        if rc.rate.0 .0 == 0 {
            return Err(err(
                "topology.rate_changes",
                "rate",
                "a service rate must be positive".into(),
            ));
        }
        l.rate_changes.push((rc.at.0, pid, rc.rate.0));
    }
    if let Some(rc) = rp_cfg {
        install_rps(sim, &mut l, rc, err)?;
    }
    l.rp_interval = a.rp_interval;
    l.keep_rp_series = a.keep_rp_series;
    if let Some(t) = a.flow_rate_interval {
        l.flow_interval = t;
    }
    sim.l2 = Some(Box::new(l));
    Ok(())
}

/// Port `name`, or an error naming `table.key`.
fn port_named(
    sim: &Sim,
    name: &str,
    table: &str,
    key: &str,
    err: ErrFn,
) -> Result<PortId, ScenarioError> {
    sim.port_by_name(name).ok_or_else(|| {
        err(
            table,
            key,
            format!("unknown port {name:?}: ports are named \"A->B\""),
        )
    })
}

/// A QCN congestion point on every switch port, or on the ports listed.
fn install_cps(sim: &Sim, l: &mut L2, c: &QcnCpCfg, err: ErrFn) -> Result<(), ScenarioError> {
    let base = cp_config(c, err)?;
    let ports: Vec<PortId> = match &c.ports {
        Some(list) => list
            .iter()
            .map(|n| port_named(sim, n, "topology", "qcn", err))
            .collect::<Result<_, _>>()?,
        None => (0..sim.net.ports.len() as u32)
            .map(PortId)
            .filter(|&p| sim.net.nodes[sim.net.ports[p.idx()].node.idx()].kind == NodeKind::Switch)
            .collect(),
    };
    for pid in ports {
        let port = &sim.net.ports[pid.idx()];
        let mut cfg = base;
        if c.congestion_memory {
            if port.limit_bytes == u64::MAX {
                return Err(err(
                    "topology",
                    "qcn",
                    format!(
                        "congestion_memory needs a finite buffer on port {:?}",
                        sim.net.port_name(pid)
                    ),
                ));
            }
            let mut m = CongestionMemory::new(port.limit_bytes);
            m.threshold_fraction = c.memory_threshold;
            cfg.memory = Some(m);
        }
        let cp = CongestionPoint::new(cfg).map_err(|e| err("topology", "qcn", e))?;
        l.cp[pid.idx()] = Some(cp);
    }
    Ok(())
}

/// PAUSE (802.3x) or PFC (802.1Qbb) watermarks on every switch, or on the switches listed.
fn install_pause(
    sim: &Sim,
    l: &mut L2,
    pc: &PauseCfgFile,
    err: ErrFn,
) -> Result<(), ScenarioError> {
    let q = pc.quanta;
    if q == 0 || q > 0xFFFF {
        return Err(err(
            "topology",
            "pause",
            format!("quanta {q}: expected 1..65535"),
        ));
    }
    let mut cfg = PauseConfig {
        hi_bytes: pc.hi.0 .0,
        lo_bytes: pc.lo.0 .0,
        quanta: q as u16,
        refresh_fraction: pc.refresh_fraction,
        ..PauseConfig::default()
    };
    cfg.mode = match pc.mode.as_str() {
        "pause" => PauseMode::Pause,
        "pfc" => PauseMode::Pfc,
        o => {
            return Err(err(
                "topology",
                "pause",
                format!("mode {o:?}: expected \"pause\" (IEEE 802.3x) or \"pfc\" (802.1Qbb)"),
            ))
        }
    };
    cfg.dynamic = dynamic_config(pc, err)?;
    cfg.enabled = pfc_priorities(pc, cfg.mode, err)?;
    l.pause_mode = cfg.mode;
    l.pause_tx = vec![PauseState::new(cfg.mode); sim.net.ports.len()];
    cfg.validate().map_err(|e| err("topology", "pause", e))?;
    let switches: Vec<NodeId> = match &pc.switches {
        Some(list) => list
            .iter()
            .map(|n| match sim.node_by_name(n) {
                Some(id) if sim.net.nodes[id.idx()].kind == NodeKind::Switch => Ok(id),
                _ => Err(err("topology", "pause", format!("{n:?} is not a switch"))),
            })
            .collect::<Result<_, _>>()?,
        None => (0..sim.net.nodes.len() as u32)
            .map(NodeId)
            .filter(|&n| sim.net.nodes[n.idx()].kind == NodeKind::Switch)
            .collect(),
    };
    for n in switches {
        let rates: Vec<RateBps> = sim.net.nodes[n.idx()]
            .ports
            .iter()
            .map(|&p| sim.net.ports[p.idx()].rate)
            .collect();
        let delays: Vec<SimTime> = sim.net.nodes[n.idx()]
            .ports
            .iter()
            .map(|&p| sim.net.ports[p.idx()].delay)
            .collect();
        let wm = PauseWatermarks::with_delays(cfg, &rates, &delays).map_err(|e| {
            let name = &sim.net.nodes[n.idx()].name;
            err("topology", "pause", format!("switch {name:?}: {e}"))
        })?;
        l.pause_sw[n.idx()] = Some(SwitchPause {
            wm,
            refresh_at: SimTime::NEVER,
        });
        l.mqp.alloc_switch(sim, n);
    }
    Ok(())
}

/// `pause.priorities` as the enable vector (bit p: PFC on priority p); every priority when
/// absent.
fn pfc_priorities(pc: &PauseCfgFile, mode: PauseMode, err: ErrFn) -> Result<u8, ScenarioError> {
    let e = |m: String| err("topology", "pause", m);
    let Some(list) = &pc.priorities else {
        return Ok(0xFF);
    };
    if mode != PauseMode::Pfc {
        return Err(e(
            "priorities is a key of mode = \"pfc\" (802.3x PAUSE has no priorities)".into(),
        ));
    }
    if list.is_empty() {
        return Err(e("priorities: expected at least one priority (0..7)".into()));
    }
    let mut mask = 0u8;
    for &p in list {
        if !(0..8).contains(&p) {
            return Err(e(format!(
                "priorities: {p} is not a priority (expected 0..7)"
            )));
        }
        mask |= 1 << p;
    }
    Ok(mask)
}

/// `pause.threshold` and the keys of the dynamic threshold (docs/models.md §2.5): `None` for
/// the fixed watermarks, which take none of those keys.
fn dynamic_config(pc: &PauseCfgFile, err: ErrFn) -> Result<Option<DynamicConfig>, ScenarioError> {
    let e = |m: String| err("topology", "pause", m);
    let given = [
        ("alpha_shift", pc.alpha_shift.is_some()),
        ("alpha_per_rate", pc.alpha_per_rate.is_some()),
        ("reserve", pc.reserve.is_some()),
        ("headroom", pc.headroom.is_some()),
        ("resume_offset", pc.resume_offset.is_some()),
        ("buffer", pc.buffer.is_some()),
        ("mtu", pc.mtu.is_some()),
    ];
    match pc.threshold.as_str() {
        "static" => match given.iter().find(|g| g.1) {
            Some((k, _)) => Err(e(format!(
                "{k} is a key of threshold = \"dynamic\" (the threshold is \"static\")"
            ))),
            None => Ok(None),
        },
        "dynamic" => {
            let d = DynamicConfig::default();
            let shift = match pc.alpha_shift {
                None => d.alpha_shift,
                Some(v) if (-3..=10).contains(&v) => v as i8,
                Some(v) => {
                    return Err(e(format!(
                        "alpha_shift {v}: expected -3..=10 (alpha = 2^-alpha_shift, 8 to 1/1024)"
                    )))
                }
            };
            let mtu = match pc.mtu {
                None => crate::model::l2::pfc_dynamic::DEFAULT_MTU_BYTES,
                Some(m) if m.0 .0 > 0 && m.0 .0 <= 65_535 => m.0 .0 as u32,
                Some(m) => return Err(e(format!("mtu {} B: expected 1..65535 bytes", m.0 .0))),
            };
            let headroom = match pc.headroom.and_then(|h| h.0) {
                None => HeadroomRule::Auto { mtu },
                Some(_) if pc.mtu.is_some() => {
                    return Err(e("mtu is used only with headroom = \"auto\"".into()))
                }
                Some(b) => HeadroomRule::Bytes(b),
            };
            let buffer = pc.buffer.map_or(d.buffer_bytes, |b| b.0 .0);
            if buffer == 0 {
                return Err(e("buffer must be positive".into()));
            }
            Ok(Some(DynamicConfig {
                buffer_bytes: buffer,
                alpha_shift: shift,
                alpha_per_rate: pc.alpha_per_rate.map(|r| r.0),
                reserve_bytes: pc.reserve.map_or(d.reserve_bytes, |b| b.0 .0),
                resume_offset_bytes: pc.resume_offset.map_or(d.resume_offset_bytes, |b| b.0 .0),
                headroom,
            }))
        }
        o => Err(e(format!(
            "threshold {o:?}: expected \"static\" (watermarks hi/lo) or \"dynamic\" \
             (alpha x free shared buffer)"
        ))),
    }
}

/// QCN reaction points: one rate limiter per flow, per destination or per source host
/// (`scope`), shared by the TCP flows it covers, then limiters for the CBR sources.
fn install_rps(sim: &Sim, l: &mut L2, rc: &RpCfgFile, err: ErrFn) -> Result<(), ScenarioError> {
    let cfg = rp_config(rc);
    l.notify = match rc.notify.as_str() {
        "off" => Notify::Off,
        "drop" => Notify::Drop,
        "ecn" => Notify::Ecn,
        o => {
            return Err(err(
                "qcn",
                "rp",
                format!("notify {o:?}: expected \"off\", \"drop\" or \"ecn\""),
            ))
        }
    };
    let scope = rc.scope.as_str();
    if !matches!(scope, "flow" | "destination" | "shared") {
        return Err(err(
            "qcn",
            "rp",
            format!("scope {scope:?}: expected \"flow\", \"destination\" or \"shared\""),
        ));
    }
    let ideal = rc.ideal;
    let mut keys: Vec<(NodeId, u32, u32)> = Vec::new(); // (src, dst-or-flow key, limiter)
    for fid in 0..sim.hosts.flows.len() {
        let f = &sim.hosts.flows[fid];
        let (src, dst) = (f.src(), f.dst());
        let key = match scope {
            "flow" => fid as u32,
            "destination" => dst.0,
            _ => u32::MAX,
        };
        let idx = limiter_for(l, &mut keys, (src, key), || {
            let line = nic_rate(sim, src, dst);
            let rp = ReactionPoint::new(cfg, line).map_err(|e| err("qcn", "rp", e))?;
            let fixed = if ideal {
                // Destination link rate / number of flows to that destination.
                let n = sim.hosts.flows.iter().filter(|g| g.dst() == dst).count() as u64;
                let down = sim.net.nodes[dst.idx()]
                    .ports
                    .first()
                    .map(|&p| sim.net.ports[sim.net.ports[p.idx()].peer_port.idx()].rate)
                    .unwrap_or(line);
                Some(RateBps((down.0 / n.max(1)).max(1)))
            } else {
                rc.fixed_rate.map(|r| r.0)
            };
            if let Some(r) = fixed {
                if r.0 == 0 {
                    return Err(err("qcn", "rp", "fixed_rate must be positive".into()));
                }
            }
            let name = match scope {
                "flow" => format!("flow{fid}"),
                "destination" => format!(
                    "{}->{}",
                    sim.net.nodes[src.idx()].name,
                    sim.net.nodes[dst.idx()].name
                ),
                _ => sim.net.nodes[src.idx()].name.clone(),
            };
            Ok(Limiter::new(name, src, rp, fixed))
        })?;
        l.rls[idx.idx()].flows += 1;
        l.rl_of_flow[fid] = idx;
    }
    // UDP (CBR) sources get QCN limiters too (not in ideal / fixed-rate mode).
    if !ideal && rc.fixed_rate.is_none() {
        cbr_limiters(sim, l, cfg, scope, &mut keys, err)?;
    }
    Ok(())
}

/// The limiter of (`src`, `key`) in `keys` (source, key, limiter), made by `make` and
/// recorded if there is none yet.
fn limiter_for(
    l: &mut L2,
    keys: &mut Vec<(NodeId, u32, u32)>,
    (src, key): (NodeId, u32),
    make: impl FnOnce() -> Result<Limiter, ScenarioError>,
) -> Result<u32, ScenarioError> {
    if let Some(k) = keys.iter().find(|k| k.0 == src && k.1 == key) {
        return Ok(k.2);
    }
    l.rls.push(make()?);
    let i = (l.rls.len() - 1) as u32;
    keys.push((src, key, i));
    Ok(i)
}

/// Rate limiters of the CBR sources; `keys` holds (source, key, limiter) of those made.
fn cbr_limiters(
    sim: &Sim,
    l: &mut L2,
    cfg: RpConfig,
    scope: &str,
    keys: &mut Vec<(NodeId, u32, u32)>,
    err: ErrFn,
) -> Result<(), ScenarioError> {
    for (ai, app) in sim.apps.iter().enumerate() {
        let (src, dst) = match app {
            crate::engine::apps::App::Cbr(c) => (c.src, c.dst),
            _ => continue,
        };
        let key = match scope {
            "flow" => 0x8000_0000 | ai as u32,
            "destination" => dst.0,
            _ => u32::MAX,
        };
        let idx = limiter_for(l, keys, (src, key), || {
            let rp = ReactionPoint::new(cfg, nic_rate(sim, src, dst))
                .map_err(|e| err("qcn", "rp", e))?;
            Ok(Limiter::new(format!("app{ai}"), src, rp, None))
        })?;
        l.rls[idx.idx()].flows += 1;
        l.rl_of_app[ai] = idx;
    }
    Ok(())
}

//! Layer-2 keys of a scenario (`[topology] qcn`, `pause`, `[[rate_changes]]`, `[qcn]`) and
//! the builder that installs the engine's layer-2 state (`engine/datapath/l2/mod.rs`) from them.

use crate::base::ids::{Idx, PortId};
use crate::base::units::{RateBps, SimTime};
use crate::engine::datapath::l2::*;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::l2::*;
use crate::scenario::{Dur, Rate, ScenarioError, Size, SizeOrUnlimited};
use serde::Deserialize;

// ------------------------------------------------------------------- scenario keys

/// `[topology] qcn = { ... }`: a QCN congestion point on every switch egress port (or on
/// `ports`). Defaults: `CpConfig::default()` (seed 000 App. A: Q_EQ 33 KB, W 2, v2.2).
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct QcnCpCfg {
    /// Default true; false removes the CPs (for sweeping QCN on/off).
    pub enabled: Option<bool>,
    pub q_eq: Option<Size>,
    pub w: Option<f64>,
    /// "v2.2" (default), "nov2007" (unverified hypothesis) or "every_packet".
    pub sampling: Option<String>,
    pub jitter: Option<f64>,
    /// M1 (seed 000 ch. IV-B-1). Default false.
    pub congestion_memory: Option<bool>,
    /// M1's QSC as a fraction of the port buffer. Default 0.9 (thesis: 90 %).
    pub memory_threshold: Option<f64>,
    /// M2 (seed 000 Table V). Default false.
    pub detailed_sampling: Option<bool>,
    pub nov2007_p_min: Option<f64>,
    pub nov2007_p_max: Option<f64>,
    /// Which frames the CP samples: "admitted" (default; frames the queue accepted, as the
    /// public software models LINUX-QCN and OMNET-QCN) or "arrivals" (every arriving frame,
    /// dropped ones included, as the Broadcom Soc_petra-B hardware CP; `SampleSet`).
    pub sample: Option<String>,
    /// Quantise |Fb| by dropping this many low-order bits (`Quantizer::MsbShift`, MODELS.md
    /// §1.2 variant Q2, as the QCN-patched Linux qdisc with 13) instead of the default linear
    /// `floor(63·|Fb|/FbMax)` (variant Q1). Default: absent (linear).
    pub quantizer_shift: Option<u32>,
    /// Only these ports ("A->B"); default every switch egress port.
    pub ports: Option<Vec<String>>,
}

/// `[topology] pause = { ... }`: IEEE 802.3x PAUSE at every switch (slides' watermarks).
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct PauseCfgFile {
    /// Default true; false disables PAUSE (for sweeping it on/off).
    pub enabled: Option<bool>,
    /// High watermark per input. Default 130 KB (slides).
    pub hi: Option<Size>,
    /// Low watermark per input. Default 110 KB (slides).
    pub lo: Option<Size>,
    /// Quanta per PAUSE frame. Default 0xFFFF (MODELS.md §2.2 implementation choice).
    pub quanta: Option<u32>,
    /// Refresh at this fraction of the pause time. Default 0.5 (MODELS.md §2.2).
    pub refresh_fraction: Option<f64>,
    /// Only these switches; default all.
    pub switches: Option<Vec<String>>,
    /// "pause" (default: IEEE 802.3x, one class per link, the slides' set-up) or "pfc"
    /// (IEEE 802.1Qbb: watermarks per input x priority, priority = class mod 8; `pfcsim.rs`).
    pub mode: Option<String>,
}

/// `[[topology.rate_changes]] port = "sw->n3", at = "250ms", rate = "500Mbps"`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RateChangeCfg {
    pub port: String,
    pub at: Dur,
    pub rate: Rate,
}

/// `[qcn] rp = { ... }`: reaction points in the hosts.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct QcnCfg {
    pub rp: Option<RpCfgFile>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RpCfgFile {
    /// "flow" (default; seed 000: one RL per server, one flow each), "destination", "shared".
    pub scope: Option<String>,
    /// Ideal mode: every flow hard-limited to its destination link rate / number of flows to
    /// that destination (seed 000 Fig. 20). No QCN reaction.
    pub ideal: Option<bool>,
    /// Fixed-rate limiter instead of QCN (like `ideal`, with an explicit rate).
    pub fixed_rate: Option<Rate>,
    pub adaptive_rai: Option<bool>,
    pub gd: Option<f64>,
    pub min_rate: Option<Rate>,
    pub bc_limit: Option<Size>,
    pub timer_period: Option<Dur>,
    pub r_ai: Option<Rate>,
    pub r_hai: Option<Rate>,
    pub jitter: Option<f64>,
    pub release_at_line_rate: Option<bool>,
    /// Token-bucket depth. Default 0 (pure pacing).
    pub bucket: Option<SizeOrUnlimited>,
    /// Per-flow notification by a shared limiter cut by a CNM (slides part 2): "off"
    /// (default), "drop" (drop the flow's oldest held segment) or "ecn" (CE-mark it if ECT,
    /// else drop it).
    pub notify: Option<String>,
}

// ---------------------------------------------------------------------- build

/// What `build` needs from the scenario.
pub struct BuildArgs<'a> {
    pub cp: Option<&'a QcnCpCfg>,
    pub pause: Option<&'a PauseCfgFile>,
    pub rate_changes: &'a [RateChangeCfg],
    pub qcn: Option<&'a QcnCfg>,
    pub rp_interval: Option<SimTime>,
    pub keep_rp_series: bool,
    pub flow_rate_interval: Option<SimTime>,
}

type ErrFn<'a> = &'a dyn Fn(&str, &str, String) -> ScenarioError;

fn cp_config(c: &QcnCpCfg, err: ErrFn) -> Result<CpConfig, ScenarioError> {
    let mut cfg = CpConfig::default();
    if let Some(q) = c.q_eq {
        cfg.q_eq_bytes = q.0 .0;
    }
    if let Some(w) = c.w {
        cfg.w = w;
    }
    if let Some(j) = c.jitter {
        cfg.jitter = j;
    }
    match c.sampling.as_deref() {
        None | Some("v2.2") => cfg.sampling = Sampling::V22,
        Some("every_packet") => cfg.sampling = Sampling::EveryPacket,
        Some("nov2007") => {
            let (mut lo, mut hi) = (0.01, 0.10);
            if let Some(p) = c.nov2007_p_min {
                lo = p;
            }
            if let Some(p) = c.nov2007_p_max {
                hi = p;
            }
            cfg.sampling = Sampling::Nov2007 {
                p_min: lo,
                p_max: hi,
            };
        }
        Some(o) => {
            return Err(err(
                "topology",
                "qcn",
                format!("sampling {o:?}: expected \"v2.2\", \"nov2007\" or \"every_packet\""),
            ))
        }
    }
    cfg.detailed = c.detailed_sampling.unwrap_or(false);
    if let Some(shift) = c.quantizer_shift {
        cfg.quantizer = crate::model::l2::Quantizer::MsbShift { shift };
    }
    cfg.sample = match c.sample.as_deref() {
        None | Some("admitted") => SampleSet::Admitted,
        Some("arrivals") => SampleSet::Arrivals,
        Some(o) => {
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
    let mut r = RpConfig::default();
    if let Some(x) = c.gd {
        r.gd = x;
    }
    if let Some(x) = c.min_rate {
        r.min_rate = x.0;
    }
    if let Some(x) = c.bc_limit {
        r.bc_limit_bytes = x.0 .0;
    }
    if let Some(x) = c.timer_period {
        r.timer_period = x.0;
    }
    if let Some(x) = c.r_ai {
        r.r_ai = x.0;
    }
    if let Some(x) = c.r_hai {
        r.r_hai = x.0;
    }
    if let Some(x) = c.jitter {
        r.jitter = x;
    }
    if let Some(x) = c.release_at_line_rate {
        r.release_at_line_rate = x;
    }
    if let Some(x) = c.bucket {
        r.bucket_bytes = x.0;
    }
    r.adaptive_rai = c.adaptive_rai.unwrap_or(false);
    r
}

/// Install the L2 state described by the scenario (no-op when nothing is configured).
pub fn build(sim: &mut Sim, a: &BuildArgs, err: ErrFn) -> Result<(), ScenarioError> {
    let rp_cfg = a.qcn.and_then(|q| q.rp.as_ref());
    let cp_cfg = a.cp.filter(|c| c.enabled.unwrap_or(true));
    let pause_cfg = a.pause.filter(|c| c.enabled.unwrap_or(true));
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
            _ => u32::MAX,
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
                        p.name
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
    if let Some(t) = a.rp_interval {
        l.rp_interval = t;
    }
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
        if c.congestion_memory.unwrap_or(false) {
            if port.limit_bytes == u64::MAX {
                return Err(err(
                    "topology",
                    "qcn",
                    format!(
                        "congestion_memory needs a finite buffer on port {:?}",
                        port.name
                    ),
                ));
            }
            let mut m = CongestionMemory::new(port.limit_bytes);
            if let Some(f) = c.memory_threshold {
                m.threshold_fraction = f;
            }
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
    let mut cfg = PauseConfig::default();
    if let Some(x) = pc.hi {
        cfg.hi_bytes = x.0 .0;
    }
    if let Some(x) = pc.lo {
        cfg.lo_bytes = x.0 .0;
    }
    if let Some(q) = pc.quanta {
        if q == 0 || q > 0xFFFF {
            return Err(err(
                "topology",
                "pause",
                format!("quanta {q}: expected 1..65535"),
            ));
        }
        cfg.quanta = q as u16;
    }
    if let Some(f) = pc.refresh_fraction {
        cfg.refresh_fraction = f;
    }
    cfg.mode = match pc.mode.as_deref() {
        None | Some("pause") => PauseMode::Pause,
        Some("pfc") => PauseMode::Pfc,
        Some(o) => {
            return Err(err(
                "topology",
                "pause",
                format!("mode {o:?}: expected \"pause\" (IEEE 802.3x) or \"pfc\" (802.1Qbb)"),
            ))
        }
    };
    l.pause_mode = cfg.mode;
    l.pause_tx = vec![PauseState::new(cfg.mode); sim.net.ports.len()];
    cfg.validate().map_err(|e| err("topology", "pause", e))?;
    let switches: Vec<u32> = match &pc.switches {
        Some(list) => list
            .iter()
            .map(|n| match sim.node_by_name(n) {
                Some(id) if sim.net.nodes[id.idx()].kind == NodeKind::Switch => Ok(id),
                _ => Err(err("topology", "pause", format!("{n:?} is not a switch"))),
            })
            .collect::<Result<_, _>>()?,
        None => (0..sim.net.nodes.len() as u32)
            .filter(|&n| sim.net.nodes[n.idx()].kind == NodeKind::Switch)
            .collect(),
    };
    for n in switches {
        let rates: Vec<RateBps> = sim.net.nodes[n.idx()]
            .ports
            .iter()
            .map(|&p| sim.net.ports[p.idx()].rate)
            .collect();
        let wm = PauseWatermarks::new(cfg, &rates).map_err(|e| err("topology", "pause", e))?;
        l.pause_sw[n.idx()] = Some(SwitchPause {
            wm,
            refresh_at: SimTime::NEVER,
        });
        l.mqp.alloc_switch(sim, n);
    }
    Ok(())
}

/// QCN reaction points: one rate limiter per flow, per destination or per source host
/// (`scope`), shared by the TCP flows it covers, then limiters for the CBR sources.
fn install_rps(sim: &Sim, l: &mut L2, rc: &RpCfgFile, err: ErrFn) -> Result<(), ScenarioError> {
    let cfg = rp_config(rc);
    l.notify = match rc.notify.as_deref() {
        None | Some("off") => Notify::Off,
        Some("drop") => Notify::Drop,
        Some("ecn") => Notify::Ecn,
        Some(o) => {
            return Err(err(
                "qcn",
                "rp",
                format!("notify {o:?}: expected \"off\", \"drop\" or \"ecn\""),
            ))
        }
    };
    let scope = rc.scope.as_deref().unwrap_or("flow");
    if !matches!(scope, "flow" | "destination" | "shared") {
        return Err(err(
            "qcn",
            "rp",
            format!("scope {scope:?}: expected \"flow\", \"destination\" or \"shared\""),
        ));
    }
    let ideal = rc.ideal.unwrap_or(false);
    let mut keys: Vec<(u32, u32, u32)> = Vec::new(); // (src, dst-or-flow key, limiter)
    for fid in 0..sim.hosts.flows.len() {
        let f = &sim.hosts.flows[fid];
        let (src, dst) = (f.src, f.dst);
        let key = match scope {
            "flow" => fid as u32,
            "destination" => dst,
            _ => u32::MAX,
        };
        let found = keys.iter().find(|k| k.0 == src && k.1 == key).map(|k| k.2);
        let idx = match found {
            Some(i) => i,
            None => {
                let line = nic_rate(sim, src, dst);
                let rp = ReactionPoint::new(cfg, line).map_err(|e| err("qcn", "rp", e))?;
                let fixed = if ideal {
                    // Destination link rate / number of flows to that destination.
                    let n = sim.hosts.flows.iter().filter(|g| g.dst == dst).count() as u64;
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
                l.rls.push(Limiter::new(name, src, rp, fixed));
                let i = (l.rls.len() - 1) as u32;
                keys.push((src, key, i));
                i
            }
        };
        l.rls[idx.idx()].flows += 1;
        l.rl_of_flow[fid] = idx;
    }
    // UDP (CBR) sources get QCN limiters too (not in ideal / fixed-rate mode).
    if !ideal && rc.fixed_rate.is_none() {
        cbr_limiters(sim, l, cfg, scope, &mut keys, err)?;
    }
    Ok(())
}

/// Rate limiters of the CBR sources; `keys` holds (source, key, limiter) of those made.
fn cbr_limiters(
    sim: &Sim,
    l: &mut L2,
    cfg: RpConfig,
    scope: &str,
    keys: &mut Vec<(u32, u32, u32)>,
    err: ErrFn,
) -> Result<(), ScenarioError> {
    for (ai, app) in sim.apps.iter().enumerate() {
        let (src, dst) = match app {
            crate::engine::apps::App::Cbr(c) => (c.src, c.dst),
            _ => continue,
        };
        let key = match scope {
            "flow" => 0x8000_0000 | ai as u32,
            "destination" => dst,
            _ => u32::MAX,
        };
        let found = keys.iter().find(|k| k.0 == src && k.1 == key).map(|k| k.2);
        let idx = match found {
            Some(i) => i,
            None => {
                let rp = ReactionPoint::new(cfg, nic_rate(sim, src, dst))
                    .map_err(|e| err("qcn", "rp", e))?;
                l.rls.push(Limiter::new(format!("app{ai}"), src, rp, None));
                let i = (l.rls.len() - 1) as u32;
                keys.push((src, key, i));
                i
            }
        };
        l.rls[idx.idx()].flows += 1;
        l.rl_of_app[ai] = idx;
    }
    Ok(())
}

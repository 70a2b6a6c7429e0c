//! `[measure]`: silent-period tracker, samplers, the queue-length meter, traced flows and
//! packet captures.

use super::BuildInfo;
use crate::base::ids::{FlowId, PortId};
use crate::engine::sim::Sim;
use crate::scenario::config::MeasureCfg;
use crate::scenario::ctx::Ctx;
use crate::scenario::error::ScenarioError;

/// `[measure]`: silent-period tracker, samplers, the queue-length meter, traced flows.
pub(crate) fn build_measure(
    ctx: &Ctx,
    m: &MeasureCfg,
    sim: &mut Sim,
    info: &mut BuildInfo,
) -> Result<(), ScenarioError> {
    let port = |sim: &Sim, name: &str, key: &str| -> Result<PortId, ScenarioError> {
        sim.port_by_name(name).ok_or_else(|| {
            let names: Vec<String> = (0..sim.net.ports.len().min(4))
                .map(|i| sim.net.port_name(PortId(i as u32)))
                .collect();
            ctx.err(
                "measure",
                key,
                format!("unknown port {name:?}: ports are named \"A->B\", e.g. {names:?}"),
            )
        })
    };
    if let Some(name) = &m.silent_link {
        let pid = port(sim, name, "silent_link")?;
        sim.net.ports[pid.idx()].silent = Some(Box::new(crate::engine::net::SilentTracker {
            threshold: m.silent_threshold.0,
            ..Default::default()
        }));
    }
    if let Some(name) = &m.bottleneck {
        info.bottleneck_port = Some(port(sim, name, "bottleneck")?);
    }
    for name in &m.queue_ports {
        let pid = port(sim, name, "queue_ports")?;
        sim.obs.samplers.queue_ports.push(pid);
    }
    ctx.interval("queue_interval", m.queue_interval.0)?;
    ctx.interval("cwnd_interval", m.cwnd_interval.0)?;
    ctx.interval("rp_interval", m.rp_interval.0)?;
    for (key, d) in [
        ("throughput_interval", m.throughput_interval),
        ("flow_rate_interval", m.flow_rate_interval),
    ] {
        if let Some(d) = d {
            ctx.interval(key, d.0)?;
        }
    }
    sim.obs.samplers.queue_interval = m.queue_interval.0;
    fct_definition(ctx, m, sim)?;
    if let Some(name) = &m.mean_queue_port {
        let pid = port(sim, name, "mean_queue_port")?;
        sim.obs.queue_mean = Some(Box::new(
            crate::engine::observe::queue_mean::QueueMean::new(pid),
        ));
    }
    for &f in &m.cwnd_flows {
        if f as usize >= sim.hosts.flows.len() {
            return Err(ctx.err(
                "measure",
                "cwnd_flows",
                format!(
                    "flow {f} does not exist (the scenario has {} flows)",
                    sim.hosts.flows.len()
                ),
            ));
        }
        sim.obs.samplers.cwnd_flows.push(FlowId(f));
    }
    sim.obs.samplers.cwnd_interval = m.cwnd_interval.0;
    for &f in &m.seq_flows {
        if f as usize >= sim.hosts.flows.len() {
            return Err(ctx.err(
                "measure",
                "seq_flows",
                format!(
                    "flow {f} does not exist (the scenario has {} flows)",
                    sim.hosts.flows.len()
                ),
            ));
        }
        sim.obs.samplers.seq.enable(FlowId(f));
    }
    if let Some(d) = m.throughput_interval {
        sim.obs.samplers.tput_interval = d.0;
    }
    let cap = m.pcap_max_bytes.0 .0;
    if cap < (crate::engine::observe::pcap::FILE_HEADER_BYTES as u64) {
        return Err(ctx.err("measure", "pcap_max_bytes", "must be at least 24 bytes"));
    }
    for name in &m.pcap {
        let pid = port(sim, name, "pcap")?;
        let p = &mut sim.net.ports[pid.idx()];
        if p.pcap.is_some() {
            return Err(ctx.err("measure", "pcap", format!("port {name:?} is named twice")));
        }
        p.pcap = Some(Box::new(crate::engine::observe::pcap::PortCapture::new(
            p.node,
            p.peer_node,
            cap,
        )));
    }
    if m.fairness_after.is_some() && m.throughput_interval.is_none() {
        return Err(ctx.err(
            "measure",
            "fairness_after",
            "needs measure.throughput_interval",
        ));
    }
    Ok(())
}

/// `[measure] fct`: where a transfer's completion ends (`Hosts::fct_at_ack`).
fn fct_definition(ctx: &Ctx, m: &MeasureCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    match m.fct.as_str() {
        "delivery" => {}
        "last-ack" => {
            let apps = &ctx.loaded.scenario.apps;
            if let Some((i, a)) = apps.iter().enumerate().find(|(_, a)| !a.is_roce()) {
                return Err(ctx.err(
                    "measure",
                    "fct",
                    format!(
                        "\"last-ack\" ends a transfer at a RoCE sender's last ACK: app {i} \
                     (kind {:?}) is not transport = \"roce\"",
                        a.kind()
                    ),
                ));
            }
            sim.hosts.fct_at_ack = true;
        }
        o => {
            return Err(ctx.err(
                "measure",
                "fct",
                format!("unknown {o:?}: expected \"delivery\" or \"last-ack\""),
            ))
        }
    }
    Ok(())
}

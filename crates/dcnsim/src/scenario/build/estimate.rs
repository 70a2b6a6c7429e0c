//! Resource estimate before a run (docs/robustness.md): the memory the big
//! input-sized structures will take and an upper bound on the events, from the scenario
//! and the topology built so far. Above the memory available (Linux `MemAvailable`, or
//! `--max-memory`) the scenario is refused with the numbers and the key to change, before
//! the allocation is attempted; above half of it, and above `EVENTS_WARN` events, it is
//! warned about.
//!
//! Two checks: `before_routes` once the nodes and ports exist (routes and multi-queue ports
//! are the allocations that grow fastest: routes with the square of the node count), and
//! `after_build` for the flows and the sample tables, which grow while the run goes on.

use crate::base::packet::Packet;
use crate::base::units::size_text;
use crate::engine::net::{NodeKind, Port};
use crate::engine::sim::Sim;
use crate::model::transport::Endpoint;
use crate::scenario::config::{MeasureCfg, TopoKind, TopologyCfg};
use crate::scenario::ctx::Ctx;
use crate::scenario::error::ScenarioError;
use std::mem::size_of;

/// Events above this bound are warned about: days of wall time at the engine's few million
/// events per second (docs/performance.md). The bound is loose (every port busy for the
/// whole run), so it is set high: the shipped workload scenarios (60 s, ending when their
/// messages are done) stay below it.
pub const EVENTS_WARN: f64 = 1e12;

/// One input-sized part of the memory: what, bytes, the key that makes it smaller.
struct Part {
    what: &'static str,
    bytes: f64,
    key: String,
}

/// The memory a run may take: `--max-memory` when given, else the smaller of what the
/// kernel says is available (`MemAvailable` of /proc/meminfo) and what the process may still
/// map under its address-space limit (`ulimit -v`); None when none is known (no check).
pub fn budget(max_memory: Option<u64>) -> Option<u64> {
    max_memory.or_else(|| match (mem_available(), address_space_left()) {
        (Some(a), Some(h)) => Some(a.min(h)),
        (a, h) => a.or(h),
    })
}

fn mem_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// The soft `RLIMIT_AS` (proc(5): the "Max address space" line of /proc/self/limits, in
/// bytes or "unlimited") less the address space the process has mapped already (`VmSize`
/// of /proc/self/status). An allocation past it fails, and Rust aborts on a failed
/// allocation, so a run that would need more is refused here instead. None: no limit.
fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft: u64 = line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(soft.saturating_sub(kib.saturating_mul(1024)))
}

/// Refuse `parts` above the budget (naming the largest part's key), warn above half of it.
fn judge(ctx: &Ctx, parts: &[Part]) -> Result<(), ScenarioError> {
    let Some(budget) = ctx.loaded.budget else {
        return Ok(());
    };
    let total: f64 = parts.iter().map(|p| p.bytes).sum();
    let Some(big) = parts.iter().max_by(|a, b| a.bytes.total_cmp(&b.bytes)) else {
        return Ok(());
    };
    let (table, key) = big.key.rsplit_once('.').unwrap_or(("", &big.key));
    // The parts that matter: a tenth of the total or more (the largest always is).
    let listed: Vec<String> = parts
        .iter()
        .filter(|p| p.bytes >= total / 10.0)
        .map(|p| format!("{} {}", p.what, size_text(p.bytes)))
        .collect();
    let what = format!(
        "the run needs about {} ({}), {} available (--max-memory, ulimit -v)",
        size_text(total),
        listed.join(", "),
        size_text(budget as f64)
    );
    if total > budget as f64 {
        let msg = format!("{what}: lower {}", big.key);
        return Err(ctx.err(table, key, msg));
    }
    if total > budget as f64 / 2.0 {
        ctx.warn(table, key, &format!("{what}: over half of it"));
    }
    Ok(())
}

/// The key that sets the node count of topology kind `kind`.
pub(super) fn nodes_key(kind: TopoKind) -> &'static str {
    match kind {
        TopoKind::Star => "topology.servers",
        TopoKind::Dumbbell => "topology.left",
        TopoKind::Explicit => "topology.nodes",
        TopoKind::Leafspine => "topology.hosts_per_leaf",
        TopoKind::Fattree => "topology.k",
    }
}

/// Routes, ports and multi-queue ports, checked before they are allocated.
pub(super) fn before_routes(ctx: &Ctx, t: &TopologyCfg, sim: &Sim) -> Result<(), ScenarioError> {
    let net = &sim.net;
    let mut parts = vec![
        Part {
            what: "routes",
            bytes: crate::engine::net::route_table_bytes(&net.nodes, &net.ports) as f64,
            key: nodes_key(t.kind).to_string(),
        },
        Part {
            what: "ports",
            bytes: (net.ports.len() * size_of::<Port>()) as f64,
            key: nodes_key(t.kind).to_string(),
        },
    ];
    if let Some(q) = &t.queues {
        // At most `QUEUES_MAX` (the count is range-checked later); 16, the largest default.
        let n = u64::from(q.count.unwrap_or(16)).min(crate::base::limits::QUEUES_MAX) as f64;
        let hosts = q.hosts.unwrap_or(false);
        let ports = net
            .ports
            .iter()
            .filter(|p| hosts || net.nodes[p.node.idx()].kind == NodeKind::Switch)
            .count() as f64;
        // Each queue: its ring of `DEFAULT_QUEUE_CAPACITY` packets once used (an upper bound: a ring is allocated by its first packet) and about 128 bytes of
        // scheduler and marking state.
        let per_queue = (crate::model::mq::DEFAULT_QUEUE_CAPACITY * size_of::<Packet>()) as f64;
        parts.push(Part {
            what: "queues",
            bytes: ports * n * (per_queue + 128.0),
            key: "topology.queues.count".to_string(),
        });
    }
    judge(ctx, &parts)
}

/// Flows and the sample tables (rows of duration / interval each, kept twice: the samples
/// and the result columns), and an upper bound on the events.
pub(super) fn after_build(ctx: &Ctx, m: &MeasureCfg, sim: &Sim) -> Result<(), ScenarioError> {
    let dur = ctx.loaded.scenario.sim.duration.0.as_secs_f64();
    let flows = sim.hosts.flows.len() as f64;
    let rows = |interval: crate::base::units::SimTime| dur / interval.as_secs_f64().max(1e-12);
    let mut parts = vec![Part {
        what: "flows",
        bytes: flows * size_of::<Endpoint>() as f64,
        key: "apps.count".to_string(),
    }];
    // (what, rows per sample instant, interval, key): each row kept twice (the samples and
    // the result columns), about 32 bytes each.
    let series = [
        (
            "queue samples",
            m.queue_ports.len() as f64,
            Some(m.queue_interval),
            "queue_interval",
        ),
        (
            "cwnd samples",
            m.cwnd_flows.len() as f64,
            Some(m.cwnd_interval),
            "cwnd_interval",
        ),
        (
            "throughput samples",
            flows,
            m.throughput_interval,
            "throughput_interval",
        ),
        (
            "flow rate samples",
            flows,
            m.flow_rate_interval,
            "flow_rate_interval",
        ),
    ];
    for (what, entities, interval, key) in series {
        if let Some(i) = interval.filter(|_| entities > 0.0) {
            parts.push(Part {
                what,
                bytes: entities * rows(i.0) * 2.0 * 32.0,
                key: format!("measure.{key}"),
            });
        }
    }
    judge(ctx, &parts)?;
    // Every port busy all the time, 1500-byte frames, about two events per frame and hop
    // (end of transmission, arrival): an upper bound.
    let capacity: f64 = sim.net.ports.iter().map(|p| p.rate.0 as f64).sum();
    let events = 2.0 * capacity * dur / (8.0 * 1500.0);
    if events > EVENTS_WARN {
        let msg = format!(
            "up to {events:.1e} events ({:.0e} port-bit/s for {dur} s): days of wall time at \
             a few million events per second; shorten sim.duration or use --max-wall",
            capacity
        );
        ctx.warn("sim", "duration", &msg);
    }
    Ok(())
}

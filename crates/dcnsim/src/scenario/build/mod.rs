//! From a loaded scenario to a ready `Sim`: one builder per section, called by `build` in
//! a fixed order (which is also the order in which errors are found).

mod apps;
mod aqm;
pub(crate) mod estimate;
mod flows;
mod l2;
mod measure;
mod mq;
mod roce;
mod suspicious;
mod tcp;
mod topology;
mod workload;

use crate::base::ids::PortId;
use crate::base::units::{RateBps, SimTime};
use crate::engine::sim::Sim;
use crate::scenario::ctx::Ctx;
use crate::scenario::error::ScenarioError;
use crate::scenario::Loaded;

/// What every app builder gets besides its own table.
struct AppArgs<'a> {
    pub ctx: &'a Ctx<'a>,
    /// Index of the entry in `[[apps]]`.
    pub ai: usize,
    /// The entry's TCP configuration, shared by all its flows.
    pub tcp: &'a std::sync::Arc<crate::model::tcp::TcpConfig>,
}

/// Summary of what was built, for the results.
#[derive(Clone, Debug, Default)]
pub struct BuildInfo {
    pub servers: u32,
    pub switch_buffer_bytes: u64,
    pub bottleneck_port: Option<PortId>,
    pub bottleneck_rate: Option<RateBps>,
    /// Legal but suspicious settings, one line each (file, line, field, what), each once:
    /// for stderr and the run's metadata, never the tables.
    pub warnings: Vec<String>,
}

/// Build the simulation described by a loaded scenario: the topology, the AQMs and
/// multi-queue ports, the apps, the measurements, then layer 2, in this order (which is also
/// the order in which errors are found).
pub fn build(loaded: &Loaded) -> Result<(Sim, BuildInfo), ScenarioError> {
    let ctx = Ctx {
        loaded,
        warnings: Default::default(),
    };
    let s = &loaded.scenario;
    if crate::base::alloc::fault() == Some(crate::base::alloc::Fault::Panic) {
        panic!("fault injected by DCNSIM_FAULT=panic");
    }
    if s.sim.duration.0 == SimTime::ZERO {
        return Err(ctx.err("sim", "duration", "must be positive"));
    }
    let mut sim = Sim::new(s.sim.duration.0, s.sim.seed);
    let mut info = BuildInfo::default();
    let t = &s.topology;
    topology::build_topology(&ctx, t, &mut sim, &mut info)?;
    aqm::apply_aqm(&ctx, t, &mut sim)?;
    mq::apply(&ctx, t.queues.as_ref(), &t.queue_ports, &mut sim)?;
    apps::build_apps(&ctx, s, &mut sim)?;
    measure::build_measure(&ctx, &s.measure, &mut sim, &mut info)?;
    l2::build_l2(&ctx, s, &mut sim)?;
    estimate::after_build(&ctx, &s.measure, &sim)?;
    suspicious::suspicious(&ctx, &sim);
    info.warnings = ctx.warnings.take();
    Ok((sim, info))
}

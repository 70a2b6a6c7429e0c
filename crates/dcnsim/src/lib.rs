//! dcnsim: a packet-level simulator for datacenter congestion control.
//!
//! The engine is a plain Rust library: a scenario (TOML) is parsed and validated
//! (`scenario`), built into a `sim::Sim` of nodes, ports, flows and applications, run by a
//! discrete-event loop (`event`), and summarised as named column tables (`results`).

pub mod app;
pub mod app_schedule;
pub mod app_workload;
pub mod aqm;
pub mod ecmp;
pub mod event;
pub mod l2;
pub mod l2sim;
pub mod mq;
pub mod mqport;
pub mod net;
pub mod packet;
pub mod pfcsim;
pub mod queue_mean;
pub mod results;
pub mod results_odctcp;
pub mod rng;
pub mod scenario;
pub mod scenario_flows;
pub mod scenario_workload;
pub mod sim;
pub mod stats;
pub mod tcp;
pub mod tcp_profile;
#[cfg(test)]
pub(crate) mod testkit;
pub mod trace;
pub mod units;
pub mod workload;

pub use results::{Column, Table};
pub use scenario::ScenarioError;

/// Parse, validate, build and run a scenario given as TOML text. `file` names the source in
/// error messages. `progress` gets the fraction of simulated time done about every million
/// events; returning false stops the run (the tables then cover the time simulated).
pub fn run_text(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<Vec<Table>, ScenarioError> {
    let loaded = scenario::load(text, file, overrides)?;
    let (mut sim, info) = scenario::build(&loaded)?;
    let t0 = std::time::Instant::now();
    sim.start();
    sim.run(progress);
    let wall = t0.elapsed().as_secs_f64();
    Ok(results::collect(&loaded, &sim, &info, wall))
}

/// Parse and validate only.
pub fn validate_text(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
) -> Result<(), ScenarioError> {
    scenario::load(text, file, overrides).map(|_| ())
}

pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Human-readable description of the scenario schema.
pub fn schema() -> String {
    let mut s = include_str!("schema.txt").to_string();
    s.push_str(&tcp_profile::profile_table());
    s
}

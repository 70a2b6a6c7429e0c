//! Unit tests that need whole scenarios (they build a `Sim` from TOML and read the result
//! tables), so they sit above every layer instead of inside `engine/`, which may not name
//! `scenario` or `output`. The helpers below are shared by them.

mod aqm_recipe;
mod int;
mod l2;
mod layers;
mod mq_port;
mod nic;
mod pfc;
mod pfc_dynamic;
mod prefetch;
mod queue_mean;
mod route_hint;
mod transport;

use crate::output::{Column, Table};

/// Host "a" and host "b" on one 1 Gb/s (12 µs per 1500 B), 5 µs link, routes computed, to
/// run for `duration`; the port a→b, which holds `limit` bytes (the port b→a holds any).
pub fn two_hosts(
    duration: crate::base::units::SimTime,
    limit: u64,
) -> (crate::engine::sim::Sim, crate::base::ids::PortId) {
    use crate::base::units::{RateBps, SimTime};
    use crate::engine::net::NodeKind;
    let mut sim = crate::engine::sim::Sim::new(duration, 1);
    let a = sim.add_node("a", NodeKind::Host);
    let b = sim.add_node("b", NodeKind::Host);
    let rate = RateBps(1_000_000_000);
    let (ab, _) = sim.add_link(a, b, rate, SimTime::from_us(5), limit, u64::MAX);
    sim.finalize_routes().unwrap();
    (sim, ab)
}

/// Run a scenario given as TOML text (no overrides); panics with the error if it fails or
/// if packet conservation fails at a port after the run (`Sim::check_conservation`).
pub fn run(text: &str) -> Vec<Table> {
    let (loaded, sim, info) = run_sim(text);
    crate::output::collect(&loaded, &sim, &info)
}

/// A loaded scenario, its simulation and what building it reported.
pub type Built = (
    crate::scenario::Loaded,
    crate::engine::sim::Sim,
    crate::scenario::BuildInfo,
);

/// Load, build and run a scenario as `run_text` does and check packet conservation at
/// every port; returns the finished simulation.
pub fn run_sim(text: &str) -> Built {
    let (loaded, mut sim, info) = build_sim(text);
    sim.start();
    sim.run(&mut |_| true);
    if let Err(e) = sim.check_conservation() {
        panic!("packet conservation fails after the run: {e}");
    }
    (loaded, sim, info)
}

/// Load and build a scenario given as TOML text (no overrides), not started.
pub fn build_sim(text: &str) -> Built {
    let loaded = crate::scenario::load(text, "test.toml", &[]).expect("scenario loads");
    let (sim, info) = crate::scenario::build(&loaded).expect("scenario builds");
    (loaded, sim, info)
}

/// The single value of `table.col` as f64.
pub fn get(tables: &[Table], table: &str, col: &str) -> f64 {
    tables
        .iter()
        .find(|t| t.name == table)
        .and_then(|t| t.get_f64(col))
        .unwrap_or_else(|| panic!("{table}.{col} missing"))
}

/// A numeric column of `table` as f64 values.
pub fn col_f64(tables: &[Table], table: &str, col: &str) -> Vec<f64> {
    match tables
        .iter()
        .find(|t| t.name == table)
        .and_then(|t| t.get(col))
    {
        Some(Column::F64(v)) => v.clone(),
        Some(Column::I64(v)) => v.iter().map(|&x| x as f64).collect(),
        Some(Column::OptI64(v)) => v.iter().map(|x| x.map_or(f64::NAN, |x| x as f64)).collect(),
        _ => panic!("{table}.{col} missing"),
    }
}

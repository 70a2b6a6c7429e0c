//! Observers of a running simulation: queue means and silent periods, per-flow traces.

pub mod queue_mean;
pub mod trace;

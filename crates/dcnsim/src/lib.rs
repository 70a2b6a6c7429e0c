//! dcnsim: a packet-level simulator for datacenter congestion control.
//!
//! # Layers
//!
//! The crate is five layers, one folder each. A file names only its own layer and the
//! layers before it (`tests/layers.rs` checks this on the source text):
//!
//! 1. [`base`] — the vocabulary: `SimTime` and rates ([`base::units`]), the [`base::packet`]
//!    every element passes around, random streams, summary statistics, result tables.
//! 2. [`model`] — the protocols as pure state machines. [`model::tcp`] (NewReno, SACK,
//!    RACK-TLP, ECN, DCTCP, the stack profiles), [`model::aqm`] (RED, DCTCP step),
//!    [`model::mq`] (schedulers, shared buffers, TCN, CoDel, MQ-ECN), [`model::l2`] (QCN
//!    congestion and reaction points, PAUSE/PFC state), [`model::workload`] (flow sizes and
//!    arrivals). Each takes `now` and a packet and returns packets, verdicts, frames and
//!    deadlines; none knows the event queue.
//! 3. [`engine`] — the discrete-event simulation, itself in layers: [`engine::event`]
//!    (calendar queue in front of a 4-ary heap) and [`engine::observe`] (samplers, traces,
//!    queue means); [`engine::net`] (nodes, ports and their transmitters, links, routes,
//!    ECMP groups, the multi-queue port's state); [`engine::datapath`] (`Core`: the
//!    network, the hosts' transports, the observers and optional layer 2, and the path of a
//!    packet through ports, switches and hosts, with the layer-2 glue in
//!    [`engine::datapath::l2`]); [`engine::apps`] (applications, each driving a
//!    `&mut Core`); [`engine::sim`] (`Sim`: the core plus the applications, the event loop
//!    and dispatch). No module names a sibling that names it back (`tests/layers.rs`). The
//!    hot path: no serde, no result tables.
//! 4. [`scenario`] — TOML text → checked configuration → a ready `Sim` (errors name file,
//!    line and field).
//! 5. [`output`] — a finished `&Sim` → named column tables.
//!
//! [`run_text`] strings them together.
//!
//! # One packet through a switch
//!
//! A sender's [`model::tcp::TcpFlow`] appends a segment to an output vector;
//! `Core::host_send` offers it to the host's NIC port with `Core::enqueue`, which says what
//! became of it (`net::Enqueued`). An idle port starts sending at once
//! (`Port::begin_service` puts it on the wire); a busy one queues it, and its
//! `net::Transmitter` keeps one pending `PortTxDone` event while anything waits. When the
//! packet becomes the head of its wire, the engine computes where the next switch will forward it
//! (`engine::net::route_hint`, from the routes of `engine::net` and the ECMP groups of
//! `engine::net::ecmp`) and schedules one `LinkArrive` for the wire. On arrival at the switch,
//! `Core::receive` hands it to the layer-2 glue first when layer 2 is configured (QCN
//! sampling, PAUSE/PFC thresholds, `engine::datapath::l2`), then enqueues it at the egress
//! port: the port's AQM or multi-queue model decides pass, mark or drop, the byte limit or
//! the shared buffer admits it or drops it, and the scheduler picks the next packet when the
//! port finishes a transmission. At the receiving host, `Core::host_receive` gives it to the
//! flow's receiver, whose ACK takes the same path back (a finished transfer is queued for
//! its application, which `Sim` calls as soon as the delivery returns); the flow's timers (RTO, delayed
//! ACK, RACK and TLP share the retransmission timer) are armed lazily, one pending event per
//! timer.

pub mod base;
pub mod engine;
pub mod model;
pub mod output;
pub mod scenario;
#[cfg(test)]
mod tests;

pub use base::table::{Column, Table};
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
    run_text_captured(text, file, overrides, progress).map(|r| r.tables)
}

/// What a run produces: the result tables and the packet captures of `[measure] pcap`.
pub struct RunOutput {
    pub tables: Vec<Table>,
    /// (port name, libpcap file bytes), in port order.
    pub captures: Vec<(String, Vec<u8>)>,
}

/// As [`run_text`], keeping the packet captures.
pub fn run_text_captured(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, ScenarioError> {
    let loaded = scenario::load(text, file, overrides)?;
    let (mut sim, info) = scenario::build(&loaded)?;
    sim.start();
    sim.run(progress);
    // No wall-clock time in the tables: the same scenario and seed give identical tables
    // (the caller times the run and keeps it with the run's metadata).
    let tables = output::collect(&loaded, &sim, &info);
    let captures = output::observe::take_captures(&mut sim);
    Ok(RunOutput { tables, captures })
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
    s.push_str(&model::tcp::profile::profile_table());
    s
}

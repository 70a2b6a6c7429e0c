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
//! (`engine::net::routing::Routing::hint`, from the dense routes of `engine::net::routing`
//! and the ECMP groups of `engine::net::ecmp`) and schedules one `LinkArrive` for the wire. On arrival at the switch,
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
/// error messages. `progress` gets 0.0 once the run is built, before its first event, then
/// the fraction of simulated time done about every million events; returning false stops
/// the run (the tables then cover the time simulated).
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
    /// Legal but suspicious settings (`scenario::build`), one line each: for stderr and the
    /// run's metadata, never the tables.
    pub warnings: Vec<String>,
    /// Why the run stopped before its end (`--max-events`, `--max-wall`, the progress
    /// callback); None for a complete run. The tables then cover the time simulated and
    /// `summary` says so (`partial`, `simulated_s`).
    pub stopped: Option<String>,
    /// With `RunOptions::check`: the self-checks that failed (`Sim::check_run`), naming the
    /// ports and flows; None when they passed or were not asked for.
    pub check_failed: Option<String>,
}

/// How `RunOutput::stopped` starts when the run stopped because memory ran out
/// (`base::alloc::WithReserve`).
pub const OUT_OF_MEMORY: &str = "out of memory";

/// Limits and checks of one run (`dcnsim run --check --max-events --max-wall
/// --max-memory`); the default is none of them.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// After the run, check packet conservation and buffer bounds (`Sim::check_run`); a
    /// violation is an error naming the port or flow.
    pub check: bool,
    /// Stop cleanly after this many events (checked about every million events).
    pub max_events: Option<u64>,
    /// Stop cleanly after this much wall-clock time (checked as `max_events`).
    pub max_wall: Option<std::time::Duration>,
    /// Refuse the run when its estimated memory (`scenario::estimate`) is above this many
    /// bytes.
    pub max_memory: Option<u64>,
}

/// As [`run_text`], keeping the packet captures.
pub fn run_text_captured(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, ScenarioError> {
    run_text_with(text, file, overrides, &RunOptions::default(), progress)
}

/// An error about the scenario as a whole (no line or field).
fn whole_file_error(file: &str, message: String) -> ScenarioError {
    ScenarioError {
        file: file.to_string(),
        line: None,
        column: None,
        field: None,
        message,
    }
}

/// As [`run_text_captured`], with the limits and checks of `opts`.
pub fn run_text_with(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    opts: &RunOptions,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, ScenarioError> {
    let budget = scenario::estimate_budget(opts.max_memory);
    let loaded = scenario::load_with_budget(text, file, overrides, budget)?;
    // The emergency reserve (`base::alloc::WithReserve`): without it there is no room to
    // stop cleanly when memory runs out.
    let epoch = base::alloc::exhausted();
    let Some(_reserve) = base::alloc::enter_run() else {
        return Err(whole_file_error(
            file,
            format!(
                "{OUT_OF_MEMORY}: not even {} left to start a run (ulimit -v?)",
                base::units::size_text(base::alloc::RESERVE_BYTES as f64)
            ),
        ));
    };
    let (mut sim, info) = scenario::build(&loaded)?;
    if base::alloc::exhausted() != epoch {
        return Err(whole_file_error(
            file,
            format!(
                "{OUT_OF_MEMORY}: the system refused memory while the network and flows were \
                 built (ulimit -v, or other processes); make the scenario smaller"
            ),
        ));
    }
    let started = std::time::Instant::now();
    // The run is built and valid: one call before the first event tells the caller that
    // the simulation starts (`dcnsim run` loads its store's writer meanwhile).
    let go = progress(0.0);
    let mut stopped = (!go).then(|| "interrupted".to_string());
    let mut watch = |f: f64, events: u64| -> bool {
        if base::alloc::exhausted() != epoch {
            stopped = Some(format!(
                "{OUT_OF_MEMORY}: the system refused memory after {events} events (ulimit -v, \
                 or other processes); the tables cover the time simulated"
            ));
            return false;
        }
        if let Some(max) = opts.max_events.filter(|&m| events >= m) {
            stopped = Some(format!(
                "max_events: stopped after {events} events (limit {max})"
            ));
            return false;
        }
        if let Some(max) = opts.max_wall.filter(|&m| started.elapsed() >= m) {
            let s = max.as_secs_f64();
            stopped = Some(format!("max_wall: stopped after {s} s of wall-clock time"));
            return false;
        }
        if !progress(f) {
            stopped = Some("interrupted".to_string());
            return false;
        }
        true
    };
    if go {
        sim.start();
        sim.run_watched(&mut watch);
    }
    if stopped.is_none() && base::alloc::exhausted() != epoch {
        // Memory ran out after the last look (or while building): the run is not to be
        // trusted to be whole.
        stopped = Some(format!(
            "{OUT_OF_MEMORY}: the system refused memory near the end of the run (ulimit -v, or \
             other processes)"
        ));
    }
    // No wall-clock time in the tables: the same scenario and seed give identical tables
    // (the caller times the run and keeps it with the run's metadata).
    let mut tables = output::collect(&loaded, &sim, &info);
    if stopped.is_some() {
        output::mark_partial(&mut tables, &sim);
    }
    // The checks hold at any instant, so a partial run is checked too.
    let check_failed = if opts.check {
        sim.check_run().err()
    } else {
        None
    };
    let captures = output::observe::take_captures(&mut sim);
    Ok(RunOutput {
        tables,
        captures,
        warnings: info.warnings,
        stopped,
        check_failed,
    })
}

/// Parse and validate only; returns the warnings about legal but suspicious settings.
pub fn validate_text(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
) -> Result<Vec<String>, ScenarioError> {
    scenario::load(text, file, overrides).map(|l| l.warnings)
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

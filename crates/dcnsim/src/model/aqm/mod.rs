//! Active queue management: the one family of disciplines that accept, ECN-mark or drop a
//! packet at a switch port, whether they watch the port's total backlog (`[topology] aqm`)
//! or a class queue of a multi-queue port (`marking`).
//!
//! The contract is that of ns-3's queue discs, reduced to what a decision needs (the port
//! keeps the queues; `engine/net/mq_port.rs` documents the order of the calls):
//! - [`Aqm::enqueue`]: a decision at arrival, from the queue *excluding* the arrival
//!   ([`View`]: the queue's index, its [`Backlog`], and the port's [`Signals`]);
//! - [`Aqm::dequeue`]: a decision when the scheduler takes the packet, from its sojourn
//!   (`now − enq_time`) and the queue left behind it;
//! - [`Aqm::queue_empty`]: the queue became empty (and the link goes idle at the time given);
//! - [`Aqm::departure`]: a packet left its queue (for an estimator fed by departures).
//!
//! Every decision is a [`Verdict`] (Pass, Mark, Drop) that the port applies and counts
//! under the discipline's [`MarkReason`] (`engine::net::apply_verdict`): no discipline
//! writes CE into a packet. A `Mark` says "signal congestion"; for a packet that is not
//! ECN-capable the port turns it into what the reason says ([`MarkReason::if_not_ect`]).
//!
//! One file per discipline, each with its own tests: [`step`] (DCTCP), [`red`] (RED),
//! [`tcn`] (TCN and probabilistic TCN), [`codel`] (CoDel), [`mqecn`] (MQ-ECN), [`dqrate`]
//! (the departure-rate "ideal RED"). The built-ins are variants of [`Aqm`] (enum dispatch
//! on the per-packet path); a discipline defined elsewhere (a test, a user) implements
//! [`Discipline`] and runs as [`Aqm::Extension`]. [`REGISTRY`] maps each name of the
//! scenario format to the constructor that builds it from its keys ([`Keys`]).
//!
//! Attachment: a port AQM is one instance on the port's total backlog (`Port::aqm`); a
//! class-queue marking is one instance per class queue ([`Scope::PerQueue`]) or one for all
//! the queues of a port ([`Scope::Shared`]: TCN's single random stream, MQ-ECN's per-port
//! round time), told the queue's index. What a discipline needs from the scheduler or the
//! port (MQ-ECN's round-time estimate, the departure-rate estimates) is passed in
//! ([`Signals`]), not reached for.

pub mod codel;
pub mod dqrate;
pub mod mqecn;
pub mod red;
pub mod step;
pub mod tcn;

pub use red::{Red, RedParams};
pub use step::Step;

use crate::base::packet::Packet;
use crate::base::units::{parse_bytes, RateBps, SimTime};

/// Unit in which a threshold and the queue it is compared with are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueUnit {
    Bytes,
    Packets,
}

/// Parse a queue threshold: "20pkts" (also "20pkt", "20packets") or a size ("30KB").
pub fn parse_threshold(s: &str) -> Result<(u64, QueueUnit), String> {
    let t = s.trim();
    for suffix in ["packets", "pkts", "pkt"] {
        if let Some(num) = t.strip_suffix(suffix) {
            return num
                .trim()
                .parse::<u64>()
                .map(|v| (v, QueueUnit::Packets))
                .map_err(|_| format!("invalid threshold {s:?}: expected e.g. \"20pkts\""));
        }
    }
    parse_bytes(t)
        .map(|b| (b.0, QueueUnit::Bytes))
        .map_err(|e| format!("{e}, or a packet count such as \"20pkts\""))
}

/// What an AQM decided for one packet. The port acts on it (`engine::net::apply_verdict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let the packet through unchanged.
    Pass,
    /// Signal congestion: set CE if the packet is ECN-capable (otherwise the marker's rule
    /// decides, `engine::net::MarkReason::if_not_ect`).
    Mark,
    /// Discard the packet.
    Drop,
}

/// Where the port consults its AQM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AqmAt {
    #[default]
    Off,
    Enqueue,
    Dequeue,
}

/// Which discipline gave a verdict: the reason its CE marks are counted under and (through
/// [`MarkReason::if_not_ect`], and the port's `drop_reason`) what its verdict does to a
/// packet that cannot be marked and what its drops are counted as. The result tables have
/// one `marks_<name>` column per built-in reason ([`MarkReason::ALL`]); the marks of an
/// [`Aqm::Extension`] are counted under [`MarkReason::Extension`]. Its `u8` value is its
/// place in this list, from 0.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkReason {
    /// RED (`model/aqm/red.rs`), per port or per queue.
    Red,
    /// The DCTCP step marker (`model/aqm/step.rs`), per port or per queue.
    Step,
    /// TCN or probabilistic TCN (`model/aqm/tcn.rs`), at dequeue.
    Tcn,
    /// CoDel with ECN (`model/aqm/codel.rs`), at dequeue.
    Codel,
    /// MQ-ECN (`model/aqm/mqecn.rs`), at enqueue.
    MqEcn,
    /// The Algorithm-1 dequeue-rate threshold ("ideal RED", `model/aqm/dqrate.rs`).
    DqRate,
    /// A discipline outside the built-ins ([`Discipline`]).
    Extension,
}

impl MarkReason {
    /// Counters per reason (the built-ins and the extension slot).
    pub const COUNT: usize = 7;
    /// Every built-in reason, in counter order: the `marks_<name>` columns of the tables.
    pub const ALL: [MarkReason; 6] = [
        MarkReason::Red,
        MarkReason::Step,
        MarkReason::Tcn,
        MarkReason::Codel,
        MarkReason::MqEcn,
        MarkReason::DqRate,
    ];

    /// Short name (result columns `marks_<name>`).
    pub fn name(self) -> &'static str {
        match self {
            MarkReason::Red => "red",
            MarkReason::Step => "step",
            MarkReason::Tcn => "tcn",
            MarkReason::Codel => "codel",
            MarkReason::MqEcn => "mqecn",
            MarkReason::DqRate => "dqrate",
            MarkReason::Extension => "extension",
        }
    }

    /// What a `Mark` of this marker becomes for a packet that is not ECN-capable: RED
    /// drops it (RFC 3168 §5, as before); the step marker, TCN, MQ-ECN, the
    /// dequeue-rate threshold and extensions let it pass (TCN-NS2 and the ns-2 DCTCP
    /// patch: only the buffer limit applies to such packets; an extension that wants a
    /// drop answers `Drop`). CoDel never marks a packet it may not mark (its state depends
    /// on whether it dropped), so its entry is a formality.
    #[inline]
    pub fn if_not_ect(self) -> Verdict {
        match self {
            MarkReason::Red | MarkReason::Codel => Verdict::Drop,
            _ => Verdict::Pass,
        }
    }
}

/// A queue's occupancy: packets and bytes waiting (excluding the packet decided on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub pkts: u64,
    pub bytes: u64,
}

/// What a class-queue discipline may read of its port beyond its own queue: the estimates
/// the scheduler and the departures feed. A port AQM gets [`Signals::NONE`].
#[derive(Clone, Copy, Debug)]
pub struct Signals<'a> {
    /// MQ-ECN's round-time estimate, fed by the port's DWRR scheduler (`None` without one).
    pub round: Option<&'a mqecn::MqEcn>,
    /// The departure-rate estimators of the port's queues (Bai et al. 2016 Algorithm 1), fed at
    /// every departure; empty when the port keeps none.
    pub rates: &'a [dqrate::DqRate],
}

impl Signals<'_> {
    /// No estimate: a port AQM, or a port without estimators.
    pub const NONE: Signals<'static> = Signals {
        round: None,
        rates: &[],
    };
}

/// What a discipline sees when it decides: the queue (`q`: its index at the port, 0 for a
/// port AQM), the queue's backlog excluding the packet, and the port's signals.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    pub q: usize,
    pub backlog: Backlog,
    pub signals: Signals<'a>,
}

impl View<'static> {
    /// A port AQM's view of the port's total backlog `b`.
    #[inline(always)]
    pub fn port(b: Backlog) -> View<'static> {
        View {
            q: 0,
            backlog: b,
            signals: Signals::NONE,
        }
    }
}

/// The contract of a discipline outside the built-ins, run through [`Aqm::Extension`]
/// (the built-ins answer the same calls through `Aqm`'s methods). Every method but
/// `clone_box` has a default that does nothing (`Pass`), so a discipline writes only what
/// it uses. The port calls `enqueue` when the attachment decides at enqueue and `dequeue`
/// when it decides at dequeue ([`AqmAt`]), `queue_empty` when the queue the instance
/// watches empties, and `departure` on every departure when `wants_departures` says so.
pub trait Discipline: std::fmt::Debug + Send {
    /// The reason the port counts this discipline's marks and drops under.
    fn reason(&self) -> MarkReason {
        MarkReason::Extension
    }
    /// Decision for `p` arriving at `now` (the view excludes it).
    fn enqueue(&mut self, _now: SimTime, _p: &Packet, _v: View<'_>) -> Verdict {
        Verdict::Pass
    }
    /// Decision for `p` taken from its queue at `now` (the view is what stays behind).
    fn dequeue(&mut self, _now: SimTime, _p: &Packet, _v: View<'_>) -> Verdict {
        Verdict::Pass
    }
    /// The watched queue became empty; its link goes idle at `idle_at`.
    fn queue_empty(&mut self, _idle_at: SimTime) {}
    /// Whether the port must report every departure ([`Discipline::departure`]).
    fn wants_departures(&self) -> bool {
        false
    }
    /// A packet of `size` bytes left queue `q` at `now`, leaving `left_bytes` there.
    fn departure(&mut self, _now: SimTime, _q: usize, _left_bytes: u64, _size: u32) {}
    /// A copy of this discipline (ports are `Clone`).
    fn clone_box(&self) -> Box<dyn Discipline>;
}

impl Clone for Box<dyn Discipline> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// One AQM instance. The built-ins are variants (enum dispatch on the per-packet path; the
/// large ones boxed so a port's `Aqm` stays 24 bytes); anything else is an `Extension`.
#[derive(Clone, Debug, Default)]
pub enum Aqm {
    /// No AQM: tail drop only.
    #[default]
    None,
    Step(Step),
    Red(Box<Red>),
    Tcn(tcn::Tcn),
    ProbTcn(Box<tcn::ProbTcnMarker>),
    Codel(Box<codel::Codel>),
    /// MQ-ECN's marking rule; the round time is the port's ([`Signals::round`]).
    MqEcn,
    /// The departure-rate threshold; the estimates are the port's ([`Signals::rates`]).
    DqRate,
    /// A discipline outside the built-ins (boxed twice: a thin pointer keeps `Aqm` at 16
    /// bytes).
    Extension(Box<Box<dyn Discipline>>),
}

impl Aqm {
    /// Decision at arrival for `p` (the view excludes it). The answer does not depend on
    /// the packet's ECN codepoint (`Mark` means congestion).
    #[inline]
    pub fn enqueue(&mut self, now: SimTime, p: &Packet, v: View<'_>) -> Verdict {
        match self {
            Aqm::Step(s) => s.decide(p, v.backlog),
            Aqm::Red(r) => r.decide(now, v.backlog),
            Aqm::MqEcn => match v.signals.round {
                Some(m) => m.decide(v.q, v.backlog.bytes + p.size as u64),
                None => Verdict::Pass,
            },
            Aqm::DqRate => v.signals.rates[v.q].decide(v.backlog.bytes + p.size as u64),
            Aqm::Extension(e) => e.enqueue(now, p, v),
            Aqm::None | Aqm::Tcn(_) | Aqm::ProbTcn(_) | Aqm::Codel(_) => Verdict::Pass,
        }
    }

    /// Decision for `p` taken from its queue at `now` (the view is what stays behind).
    #[inline]
    pub fn dequeue(&mut self, now: SimTime, p: &Packet, v: View<'_>) -> Verdict {
        match self {
            Aqm::Step(s) => s.decide(p, v.backlog),
            Aqm::Red(r) => r.decide(now, v.backlog),
            Aqm::Tcn(t) => t.on_dequeue(p, now),
            Aqm::ProbTcn(t) => t.on_dequeue(p, now),
            Aqm::Codel(c) => c.on_dequeue(now, p, v.backlog.bytes),
            Aqm::Extension(e) => e.dequeue(now, p, v),
            Aqm::None | Aqm::MqEcn | Aqm::DqRate => Verdict::Pass,
        }
    }

    /// The watched queue became empty; the link goes idle at `idle_at`.
    #[inline]
    pub fn queue_empty(&mut self, idle_at: SimTime) {
        match self {
            Aqm::Red(r) => r.queue_empty(idle_at),
            Aqm::Codel(c) => c.on_empty(idle_at),
            Aqm::Extension(e) => e.queue_empty(idle_at),
            _ => {}
        }
    }

    /// Whether the port must call [`Aqm::departure`] on every departure.
    pub fn wants_departures(&self) -> bool {
        match self {
            Aqm::Extension(e) => e.wants_departures(),
            _ => false,
        }
    }

    /// A packet of `size` bytes left queue `q` at `now`, leaving `left_bytes` there.
    #[inline]
    pub fn departure(&mut self, now: SimTime, q: usize, left_bytes: u64, size: u32) {
        if let Aqm::Extension(e) = self {
            e.departure(now, q, left_bytes, size);
        }
    }

    /// Whether it reads the port's departure-rate estimates ([`Signals::rates`]): the port
    /// must keep one estimator per queue.
    pub fn reads_rates(&self) -> bool {
        matches!(self, Aqm::DqRate)
    }

    /// The reason its marks and drops are counted under.
    #[inline]
    pub fn reason(&self) -> MarkReason {
        match self {
            Aqm::Red(_) => MarkReason::Red,
            // `Aqm::None` never marks: any name will do.
            Aqm::Step(_) | Aqm::None => MarkReason::Step,
            Aqm::Tcn(_) | Aqm::ProbTcn(_) => MarkReason::Tcn,
            Aqm::Codel(_) => MarkReason::Codel,
            Aqm::MqEcn => MarkReason::MqEcn,
            Aqm::DqRate => MarkReason::DqRate,
            Aqm::Extension(e) => e.reason(),
        }
    }

    /// Whether this is no AQM at all.
    pub fn is_none(&self) -> bool {
        matches!(self, Aqm::None)
    }
}

/// How a class-queue marking attaches to a multi-queue port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// One instance per class queue, on that queue's backlog.
    PerQueue,
    /// One instance for all the queues of the port (told the queue's index).
    Shared,
}

/// The keys of an AQM table (`[topology] aqm`, a multi-queue port's `marking`) as the
/// scenario read them, its defaults applied, and which of them the table sets (`given`:
/// a key of another kind is an error). The defaults and their sources are the scenario's
/// (`MarkDefaults`, `schema.txt`).
#[derive(Clone, Debug, PartialEq)]
pub struct Keys {
    pub given: Vec<&'static str>,
    /// Where a step or RED instance decides.
    pub at: AqmAt,
    /// step: K.
    pub k: (u64, QueueUnit),
    /// red.
    pub min_th: (u64, QueueUnit),
    pub max_th: (u64, QueueUnit),
    pub max_p: f64,
    pub w_q: f64,
    pub gentle: bool,
    pub wait: bool,
    pub count: bool,
    pub queue: String,
    pub mean_pkt_size: u64,
    /// tcn / prob_tcn.
    pub threshold: SimTime,
    pub t_min: Option<SimTime>,
    pub t_max: Option<SimTime>,
    pub p_max: f64,
    /// codel.
    pub target: SimTime,
    pub interval: SimTime,
    pub ecn: bool,
    /// mqecn.
    pub port_thresh: f64,
    pub beta: f64,
}

impl Keys {
    /// Whether the table sets `key`.
    pub fn given(&self, key: &str) -> bool {
        self.given.contains(&key)
    }
}

/// What a constructor builds from: the keys, and the port it attaches to.
#[derive(Clone, Copy, Debug)]
pub struct Build<'a> {
    pub keys: &'a Keys,
    /// The port's link rate.
    pub rate: RateBps,
    /// The scenario's seed, and the port's index (random streams derive from both).
    pub seed: u64,
    pub port: u32,
    /// The class queue of a per-queue instance; `None` for a port AQM or a shared one.
    pub queue: Option<usize>,
    /// The DWRR quanta of the port's queues (`None`: not a DWRR scheduler).
    pub quanta: Option<&'a [u32]>,
}

/// What a constructor built: the instance, where it decides, and MQ-ECN's round-time
/// estimator for the port's scheduler to feed (`MultiQueue::set_mqecn`).
#[derive(Debug)]
pub struct Built {
    pub aqm: Aqm,
    pub at: AqmAt,
    pub round: Option<mqecn::MqEcn>,
}

impl Built {
    pub fn new(aqm: Aqm, at: AqmAt) -> Built {
        Built {
            aqm,
            at,
            round: None,
        }
    }
}

/// A key of an AQM table with a bad value, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyError {
    pub key: &'static str,
    pub msg: String,
}

impl KeyError {
    pub fn new(key: &'static str, msg: impl Into<String>) -> KeyError {
        KeyError {
            key,
            msg: msg.into(),
        }
    }
}

/// One registered discipline: its name in the scenario format, where it may attach, and
/// its constructor.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub name: &'static str,
    /// Whether it may run on a port's total backlog (`[topology] aqm`, `port_marking`).
    pub port: bool,
    /// How it attaches to class queues (`None`: not a class-queue marking).
    pub queues: Option<Scope>,
    pub build: fn(&Build) -> Result<Built, KeyError>,
}

/// `kind = "none"`: tail drop only.
pub const NONE: Entry = Entry {
    name: "none",
    port: true,
    queues: Some(Scope::Shared),
    build: |_| Ok(Built::new(Aqm::None, AqmAt::Off)),
};

/// Every discipline of the scenario format, by name: a new one is one line here.
pub const REGISTRY: &[Entry] = &[
    NONE,
    step::ENTRY,
    red::ENTRY,
    tcn::ENTRY,
    tcn::PROB_ENTRY,
    codel::ENTRY,
    mqecn::ENTRY,
    dqrate::ENTRY,
];

/// The entry named `name` that may attach per port (`port`) or to class queues, or the
/// error listing the names that may.
pub fn find(name: &str, port: bool) -> Result<&'static Entry, String> {
    let fits = |e: &&Entry| if port { e.port } else { e.queues.is_some() };
    if let Some(e) = REGISTRY.iter().filter(fits).find(|e| e.name == name) {
        return Ok(e);
    }
    let names: Vec<String> = REGISTRY
        .iter()
        .filter(fits)
        .map(|e| format!("{:?}", e.name))
        .collect();
    let (last, rest) = names.split_last().expect("registry is not empty");
    let what = if port { "AQM" } else { "marking" };
    Err(format!(
        "unknown {what} {name:?}: expected {} or {last}",
        rest.join(", ")
    ))
}

#[cfg(test)]
pub(crate) mod testutil {
    use crate::base::ids::{FlowId, NodeId};
    use crate::base::packet::{Ecn, Kind, Packet};

    /// A 1500-byte data packet with codepoint `ecn`.
    pub fn pkt(ecn: Ecn) -> Packet {
        Packet {
            ecn,
            ..Packet::new(Kind::Data, FlowId(0), (NodeId(0), NodeId(1)), 1500, 1460)
        }
    }

    /// An ECN-capable data packet of `size` bytes in class `class`.
    pub fn pkt_of(class: u8, size: u32) -> Packet {
        Packet {
            class,
            size,
            payload: size.saturating_sub(40),
            ..pkt(Ecn::Ect0)
        }
    }
}

#[cfg(test)]
mod tests;

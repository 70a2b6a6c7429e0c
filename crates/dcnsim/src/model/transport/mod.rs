//! The transport seam: the contract every host endpoint meets ([`Transport`]) and the
//! registry of the built-in kinds ([`Endpoint`], one line of [`transport_kinds!`] each).
//!
//! An endpoint is one flow's two halves, as htsim pairs a protocol's source and sink: the
//! sender at [`Transport::src`] and the receiver at [`Transport::dst`]. It is sans-IO like
//! the TCP model: the engine hands it packets and timer events with the time, and it
//! appends the packets to send to an output vector the engine owns (no allocation per
//! packet). Timers are lazy deadlines: the endpoint keeps each deadline and the time of the
//! one event the engine holds for it ([`LazyTimer`]); after every call the engine asks
//! [`Transport::next_timer`] which deadlines need a (new) event, and a timer event that
//! fires is first checked with [`Transport::timer_due`] (stale or early events do nothing).
//!
//! The engine dispatches on the kind ([`Endpoint`], an enum: no `dyn` call per packet for
//! the built-in kinds), never on what a kind does inside. A kind that is not built in (a
//! toy in a test, an experiment) goes in [`Endpoint::Ext`] behind `Box<dyn Transport>`.
//!
//! Kinds: TCP ([`tcp`], the model of `model/tcp` adapted to the contract) and UDP ([`udp`],
//! a constant-bit-rate sender paced by a timer, with a receiver that counts what arrives).
//! A rate-based sender (a RoCEv2 NIC: per-flow rate limiter, CNPs, go-back-N on NACKs)
//! fits the same contract: its pacing and retransmission deadlines are timers of its own
//! kinds, its ACKs, NACKs and CNPs come back through [`Transport::on_feedback`].

pub mod roce;
pub mod tcp;
pub mod udp;

use crate::base::ids::{FlowId, NodeId};
use crate::base::packet::Packet;
use crate::base::units::SimTime;

/// Which timer of an endpoint a timer event is for: a number the kind defines, below
/// [`TimerKind::LIMIT`] (the event queue keeps such an event inside its key).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimerKind(pub u8);

impl TimerKind {
    /// Timer kinds of one endpoint are below this.
    pub const LIMIT: u8 = 16;
}

pub use crate::base::timer::LazyTimer;

/// A value of a kind's own column in the `flows` table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell {
    I64(i64),
    F64(f64),
}

/// A flow's kind-specific cells of the `flows` table, by column name, in column order. The
/// common columns (flow, app, src, dst, delivered bytes) come from the contract's other
/// methods; a kind writes the same columns, in the same order, for each of its flows.
/// Kinds may share a column by its name (the same type in each).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowRow {
    pub cells: Vec<(&'static str, Cell)>,
}

impl FlowRow {
    pub fn i64(&mut self, name: &'static str, v: i64) -> &mut Self {
        self.cells.push((name, Cell::I64(v)));
        self
    }
    pub fn f64(&mut self, name: &'static str, v: f64) -> &mut Self {
        self.cells.push((name, Cell::F64(v)));
        self
    }
}

/// Loss-recovery counts of a flow, summed over flows in the `summary` table (zero for a
/// kind that has no such event).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounters {
    pub timeouts: u64,
    pub retransmits: u64,
    pub fast_recoveries: u64,
}

/// A window-based sender's state, for the `cwnd` sampler.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WindowSample {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// DCTCP's alpha, or -1 when the sender has none.
    pub alpha: f64,
    pub srtt: SimTime,
    pub rto: SimTime,
}

/// What a host endpoint does for the engine. Every method that takes `out` appends the
/// packets to send, in order, and the engine sends them from the host the method names
/// (the sender's for writes and feedback, the receiver's for data).
pub trait Transport: std::fmt::Debug + CloneTransport {
    /// The kind's name in the registry (the `transport` column of a mixed `flows` table).
    fn kind_name(&self) -> &'static str;
    /// The engine numbers flows as it adds them; packets carry the id.
    fn set_id(&mut self, id: FlowId);
    /// The sender's host.
    fn src(&self) -> NodeId;
    /// The receiver's host.
    fn dst(&self) -> NodeId;
    /// The traffic class of the packets sent from now on (a workload's service class).
    fn set_class(&mut self, class: u8);
    /// The receiver takes a forward packet (`Kind::Data` or `Kind::Syn`) at `now`.
    fn on_data(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>);
    /// The sender takes a packet coming back (`Kind::Ack` or `Kind::SynAck`) at `now`.
    fn on_feedback(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>);
    /// [`Transport::on_feedback`] of a reply that echoes INT hop records (`flags::INT`,
    /// `base/int.rs`); a sender that does not read them takes the plain feedback.
    fn on_feedback_int(
        &mut self,
        now: SimTime,
        p: &Packet,
        _int: &[crate::base::int::IntHop],
        out: &mut Vec<Packet>,
    ) {
        self.on_feedback(now, p, out)
    }
    /// The sending application writes `bytes` more (`u64::MAX`: an unlimited stream).
    fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>);
    /// Bytes the application has written so far (a write may round up: whole segments).
    fn written(&self) -> u64;
    /// Bytes delivered to the receiving application.
    fn delivered(&self) -> u64;
    /// Bytes the sender knows delivered (its cumulative ACK point), for transports that
    /// end a transfer at the sender's last ACK (`[measure] fct = "last-ack"`).
    fn acknowledged(&self) -> Option<u64> {
        None
    }
    /// A deadline that needs an event, noted as scheduled (`LazyTimer::take_event`); None
    /// when every timer has the event it needs. The engine asks until None.
    fn next_timer(&mut self) -> Option<(TimerKind, SimTime)>;
    /// An event for timer `kind` fired at `now`: whether its deadline is due (the engine
    /// then calls [`Transport::on_timer`]; stale or early events do nothing).
    fn timer_due(&mut self, now: SimTime, kind: TimerKind) -> bool;
    /// Run due timer `kind`; returns the host that sends what it appended to `out`.
    fn on_timer(&mut self, now: SimTime, kind: TimerKind, out: &mut Vec<Packet>) -> NodeId;
    /// Loss-recovery counts (the `summary` table's totals).
    fn counters(&self) -> FlowCounters;
    /// The sender's window state for the `cwnd` sampler; None for a sender without one.
    fn window(&self) -> Option<WindowSample> {
        None
    }
    /// The end-of-run self-check of the endpoint's state (`dcnsim run --check`).
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
    /// The kind's own cells of the flow's row in the `flows` table.
    fn row(&self, row: &mut FlowRow);
    /// A sender the NIC's transmit scheduler pulls from (RoCE, `model/roce`): the earliest
    /// time its next packet may leave (its rate limiter's), None when it has nothing it
    /// may send (no data, or its window is full). Senders that push (TCP, UDP) say None.
    fn nic_ready(&self) -> Option<SimTime> {
        None
    }
    /// Whether the NIC pulls this sender's packets (`nic_ready`/`nic_pull`) instead of the
    /// sender pushing them.
    fn pulled(&self) -> bool {
        false
    }
    /// The traffic class of a pulled sender's data packets (the NIC checks its priority's
    /// PAUSE/PFC state before pulling).
    fn nic_class(&self) -> u8 {
        0
    }
    /// How a transfer of `bytes` goes on the wire: (bytes of its first packet, bytes of
    /// all its packets, headers included), for its ideal completion time
    /// (`output::slowdown`). None: the kind does not say (no slowdown column for it).
    fn wire_bytes(&self, _bytes: u64) -> Option<(u32, u64)> {
        None
    }
    /// The NIC's port is free at `now` and `nic_ready() <= now`: build the next packet
    /// (None if there is none after all).
    fn nic_pull(&mut self, _now: SimTime) -> Option<Packet> {
        None
    }
}

/// Cloning a boxed endpoint (an [`Endpoint::Ext`]); implemented for every `Clone` kind.
pub trait CloneTransport {
    fn clone_box(&self) -> Box<dyn Transport>;
}

impl<T: Transport + Clone + 'static> CloneTransport for T {
    fn clone_box(&self) -> Box<dyn Transport> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Transport> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The registry: one line per built-in kind, `Variant(Type) = "name"`. It defines the
/// [`Endpoint`] enum (the built-in kinds and [`Endpoint::Ext`]) and its dispatch of every
/// contract method, so that a new kind is its own file plus one line here.
macro_rules! transport_kinds {
    ($($(#[$doc:meta])* $variant:ident($ty:ty) = $name:literal,)*) => {
        /// A host endpoint of any kind (see the module documentation). The smaller kinds fit
        /// beside TCP's niche: the enum is as large as a `TcpFlow` (a test checks), and a
        /// TCP flow is not boxed (one indirection less per packet).
        #[derive(Clone, Debug)]
        #[allow(clippy::large_enum_variant)]
        pub enum Endpoint {
            $($(#[$doc])* $variant($ty),)*
            /// A kind defined outside the registry (tests, experiments): a `dyn` call per
            /// method.
            Ext(Box<dyn Transport>),
        }

        /// The names of the built-in kinds, in registry order.
        pub const KINDS: &[&str] = &[$($name,)*];

        $(impl From<$ty> for Endpoint {
            fn from(e: $ty) -> Endpoint {
                Endpoint::$variant(e)
            }
        })*

        /// `each!(endpoint, e => expr)`: `expr` with `e` bound to the kind's value.
        macro_rules! each {
            ($s:expr, $e:ident => $body:expr) => {
                match $s {
                    $(Endpoint::$variant($e) => $body,)*
                    Endpoint::Ext($e) => {
                        let $e = &mut **$e;
                        $body
                    }
                }
            };
        }
        /// As `each!`, through a shared reference.
        macro_rules! each_ref {
            ($s:expr, $e:ident => $body:expr) => {
                match $s {
                    $(Endpoint::$variant($e) => $body,)*
                    Endpoint::Ext($e) => {
                        let $e = &**$e;
                        $body
                    }
                }
            };
        }
    };
}

transport_kinds! {
    /// TCP (`model/tcp`; the adapter in `tcp.rs`).
    Tcp(crate::model::tcp::TcpFlow) = "tcp",
    /// UDP constant bit rate (`udp.rs`).
    Udp(udp::UdpFlow) = "udp",
    Roce(crate::model::roce::qp::RoceFlow) = "roce",
}

impl From<Box<dyn Transport>> for Endpoint {
    fn from(f: Box<dyn Transport>) -> Endpoint {
        Endpoint::Ext(f)
    }
}

/// The contract's methods on any kind: a `match` on the kind, each arm a direct
/// (inlinable) call, and one `dyn` call for [`Endpoint::Ext`].
impl Endpoint {
    /// The TCP flow, if this is one.
    #[inline]
    pub fn tcp(&self) -> Option<&crate::model::tcp::TcpFlow> {
        match self {
            Endpoint::Tcp(f) => Some(f),
            _ => None,
        }
    }
    #[inline]
    pub fn tcp_mut(&mut self) -> Option<&mut crate::model::tcp::TcpFlow> {
        match self {
            Endpoint::Tcp(f) => Some(f),
            _ => None,
        }
    }
    pub fn kind_name(&self) -> &'static str {
        each_ref!(self, e => Transport::kind_name(e))
    }
    pub fn set_id(&mut self, id: FlowId) {
        each!(self, e => Transport::set_id(e, id))
    }
    #[inline]
    pub fn src(&self) -> NodeId {
        each_ref!(self, e => Transport::src(e))
    }
    #[inline]
    pub fn dst(&self) -> NodeId {
        each_ref!(self, e => Transport::dst(e))
    }
    pub fn set_class(&mut self, class: u8) {
        each!(self, e => Transport::set_class(e, class))
    }
    /// (Per packet: TCP tested alone first, as in [`Endpoint::arm_timers`].)
    #[inline]
    pub fn on_data(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        if let Endpoint::Tcp(f) = self {
            Transport::on_data(f, now, p, out)
        } else {
            each!(self, e => Transport::on_data(e, now, p, out))
        }
    }
    /// (Per packet: TCP tested alone first, as in [`Endpoint::arm_timers`].)
    #[inline]
    pub fn on_feedback(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        if let Endpoint::Tcp(f) = self {
            Transport::on_feedback(f, now, p, out)
        } else {
            each!(self, e => Transport::on_feedback(e, now, p, out))
        }
    }
    /// (Out of line: only RoCE queue pairs with INT reach it.)
    #[inline(never)]
    pub fn on_feedback_int(
        &mut self,
        now: SimTime,
        p: &Packet,
        int: &[crate::base::int::IntHop],
        out: &mut Vec<Packet>,
    ) {
        each!(self, e => Transport::on_feedback_int(e, now, p, int, out))
    }
    #[inline]
    pub fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>) {
        each!(self, e => Transport::app_write(e, now, bytes, out))
    }
    #[inline]
    pub fn written(&self) -> u64 {
        each_ref!(self, e => Transport::written(e))
    }
    #[inline]
    pub fn delivered(&self) -> u64 {
        each_ref!(self, e => Transport::delivered(e))
    }
    pub fn acknowledged(&self) -> Option<u64> {
        each_ref!(self, e => Transport::acknowledged(e))
    }
    #[inline]
    pub fn next_timer(&mut self) -> Option<(TimerKind, SimTime)> {
        each!(self, e => Transport::next_timer(e))
    }
    /// Call `arm` with every deadline that needs an event (`Transport::next_timer` until
    /// None), the kind dispatched once. Called after every packet a flow takes: the first
    /// kind of the registry (TCP, nearly all the packets) is tested alone, one comparison,
    /// and the others are out of line.
    #[inline]
    pub fn arm_timers(&mut self, mut arm: impl FnMut(TimerKind, SimTime)) {
        if let Endpoint::Tcp(f) = self {
            while let Some((kind, at)) = Transport::next_timer(f) {
                arm(kind, at);
            }
        } else {
            self.arm_other_timers(arm);
        }
    }
    #[inline(never)]
    fn arm_other_timers(&mut self, mut arm: impl FnMut(TimerKind, SimTime)) {
        each!(self, e => {
            while let Some((kind, at)) = Transport::next_timer(e) {
                arm(kind, at);
            }
        })
    }
    #[inline]
    pub fn timer_due(&mut self, now: SimTime, kind: TimerKind) -> bool {
        each!(self, e => Transport::timer_due(e, now, kind))
    }
    #[inline]
    pub fn on_timer(&mut self, now: SimTime, kind: TimerKind, out: &mut Vec<Packet>) -> NodeId {
        each!(self, e => Transport::on_timer(e, now, kind, out))
    }
    #[inline]
    pub fn counters(&self) -> FlowCounters {
        each_ref!(self, e => Transport::counters(e))
    }
    pub fn window(&self) -> Option<WindowSample> {
        each_ref!(self, e => Transport::window(e))
    }
    pub fn check(&self) -> Result<(), String> {
        each_ref!(self, e => Transport::check(e))
    }
    pub fn row(&self, row: &mut FlowRow) {
        each_ref!(self, e => Transport::row(e, row))
    }
    pub fn nic_ready(&self) -> Option<SimTime> {
        each_ref!(self, e => Transport::nic_ready(e))
    }
    pub fn pulled(&self) -> bool {
        each_ref!(self, e => Transport::pulled(e))
    }
    pub fn nic_class(&self) -> u8 {
        each_ref!(self, e => Transport::nic_class(e))
    }
    pub fn wire_bytes(&self, bytes: u64) -> Option<(u32, u64)> {
        each_ref!(self, e => Transport::wire_bytes(e, bytes))
    }
    pub fn nic_pull(&mut self, now: SimTime) -> Option<Packet> {
        each!(self, e => Transport::nic_pull(e, now))
    }
}

#[cfg(test)]
mod tests;

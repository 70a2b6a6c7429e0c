//! The congestion-control seam of the RoCE queue pair: the contract a rate (and optionally
//! window) controller meets ([`RateControl`]) and the registry of the built-in ones
//! ([`RoceCc`], one arm each).
//!
//! The queue pair asks its controller for the rate of its limiter and for a cap on the
//! bytes in flight, and tells it what it sees: congestion notification packets, ACKs (with
//! their ECN echo and the round-trip time measured from the NIC's timestamps), bytes sent.
//! A controller's timers are lazy deadlines as the transports' are; it numbers them from 0
//! below [`CC_TIMERS`], and the queue pair maps them onto its own timer kinds.

use crate::base::units::{RateBps, SimTime};

pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod swift;
pub mod timely;

/// A controller has at most this many timers (numbered 0..CC_TIMERS).
pub const CC_TIMERS: u8 = 4;

/// What an acknowledgement tells the controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckInfo<'a> {
    /// Bytes newly acknowledged (cumulatively).
    pub acked: u64,
    /// The ACK echoes a congestion-experienced mark (per-ACK echo, as some NICs run DCQCN).
    pub ce_echo: bool,
    /// Round-trip time of the acknowledged packet, from the sender's NIC timestamp.
    pub rtt: SimTime,
    /// The INT hop records the ACK echoes (empty without telemetry).
    pub int: &'a [crate::base::int::IntHop],
    /// The queue pair's sequence after the ACK: every byte below `snd_una` acknowledged,
    /// `snd_nxt` the next byte it will send.
    pub snd_una: u64,
    pub snd_nxt: u64,
}

/// A RoCE congestion control: the rate of the queue pair's limiter and an optional window.
/// Every method that changes the state takes `now`.
pub trait RateControl {
    /// The rate the limiter sends at now.
    fn rate(&self) -> RateBps;
    /// A cap on unacknowledged bytes (None: no window).
    fn window(&self) -> Option<u64> {
        None
    }
    /// A congestion notification packet arrived.
    fn on_cnp(&mut self, _now: SimTime) {}
    /// An acknowledgement arrived.
    fn on_ack(&mut self, _now: SimTime, _ack: &AckInfo) {}
    /// The queue pair sent a packet of `bytes` on the wire.
    fn on_sent(&mut self, _now: SimTime, _bytes: u32) {}
    /// A timer deadline that needs an engine event (`LazyTimer::take_event`), as
    /// (timer number below [`CC_TIMERS`], time); None when every timer has its event.
    fn next_timer(&mut self) -> Option<(u8, SimTime)> {
        None
    }
    /// An event for timer `t` fired at `now`: whether it is due (`LazyTimer::fire`).
    fn timer_due(&mut self, _now: SimTime, _t: u8) -> bool {
        false
    }
    /// Run due timer `t`.
    fn on_timer(&mut self, _now: SimTime, _t: u8) {}
}

/// No congestion control: the limiter sends at a fixed rate (the line rate, or a configured
/// cap), as a RoCE NIC with its congestion control turned off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FixedRate {
    pub rate: RateBps,
}

impl RateControl for FixedRate {
    fn rate(&self) -> RateBps {
        self.rate
    }
}

/// Any built-in controller (enum dispatch: no `dyn` call per packet). A new controller is
/// its own file, one variant here and one arm in each method of `RateControl for RoceCc`.
// The controllers live inline in each queue pair (no allocation per queue pair), so the
// enum is as large as the largest state (DCQCN's, with its constants: about 250 bytes;
// TIMELY's and Swift's are smaller, a test checks).
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum RoceCc {
    Fixed(FixedRate),
    /// DCQCN (`dcqcn.rs`; docs/models.md §11).
    Dcqcn(dcqcn::Dcqcn),
    /// TIMELY (`timely.rs`; docs/models.md §13).
    Timely(timely::Timely),
    /// Swift (`swift.rs`; docs/models.md §14).
    Swift(swift::Swift),
    /// HPCC (`hpcc.rs`; docs/models.md §15).
    Hpcc(hpcc::Hpcc),
    Dctcp(dctcp::DctcpRate),
}

macro_rules! each_cc {
    ($s:expr, $c:ident => $body:expr) => {
        match $s {
            RoceCc::Fixed($c) => $body,
            RoceCc::Dcqcn($c) => $body,
            RoceCc::Timely($c) => $body,
            RoceCc::Swift($c) => $body,
            RoceCc::Hpcc($c) => $body,
            RoceCc::Dctcp($c) => $body,
        }
    };
}

impl RateControl for RoceCc {
    #[inline]
    fn rate(&self) -> RateBps {
        each_cc!(self, c => c.rate())
    }
    #[inline]
    fn window(&self) -> Option<u64> {
        each_cc!(self, c => c.window())
    }
    fn on_cnp(&mut self, now: SimTime) {
        each_cc!(self, c => c.on_cnp(now))
    }
    #[inline]
    fn on_ack(&mut self, now: SimTime, ack: &AckInfo) {
        each_cc!(self, c => c.on_ack(now, ack))
    }
    #[inline]
    fn on_sent(&mut self, now: SimTime, bytes: u32) {
        each_cc!(self, c => c.on_sent(now, bytes))
    }
    #[inline]
    fn next_timer(&mut self) -> Option<(u8, SimTime)> {
        each_cc!(self, c => c.next_timer())
    }
    fn timer_due(&mut self, now: SimTime, t: u8) -> bool {
        each_cc!(self, c => c.timer_due(now, t))
    }
    fn on_timer(&mut self, now: SimTime, t: u8) {
        each_cc!(self, c => c.on_timer(now, t))
    }
}

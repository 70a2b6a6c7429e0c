//! Observers of a running simulation: queue means and silent periods, per-flow traces, packet
//! captures.

pub mod pcap;
pub mod queue_mean;
pub mod trace;

use crate::base::units::SimTime;

/// Periodic samplers.
#[derive(Clone, Debug, Default)]
pub struct Samplers {
    pub queue_ports: Vec<crate::base::ids::PortId>,
    pub queue_interval: SimTime,
    pub queue: Vec<(SimTime, crate::base::ids::PortId, u64)>,
    pub cwnd_flows: Vec<crate::base::ids::FlowId>,
    pub cwnd_interval: SimTime,
    /// (time, flow, cwnd, ssthresh, DCTCP alpha or -1)
    pub cwnd: Vec<(SimTime, crate::base::ids::FlowId, u64, u64, f64)>,
    /// (srtt, rto) of the same rows as `cwnd`.
    pub rtt: Vec<(SimTime, SimTime)>,
    /// Per-flow throughput samples (time, flow, delivered bytes) every `tput_interval`.
    pub tput_interval: SimTime,
    pub tput: Vec<(SimTime, crate::base::ids::FlowId, u64)>,
    /// Sender-side time-sequence trace (`engine/observe/trace.rs`); off unless flows are chosen.
    pub seq: crate::engine::observe::trace::SeqTrace,
}

/// Which periodic sampler an `Event::Sample` is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SampleKind {
    /// Queue length of the sampled ports.
    Queue = 0,
    /// cwnd, ssthresh, DCTCP alpha, srtt and RTO of the sampled flows.
    Cwnd = 1,
    /// Delivered bytes of every flow.
    Tput = 2,
}

impl SampleKind {
    /// The kind stored as `k as u8`.
    #[inline(always)]
    pub fn from_u8(k: u8) -> SampleKind {
        match k {
            0 => SampleKind::Queue,
            1 => SampleKind::Cwnd,
            _ => SampleKind::Tput,
        }
    }
}

/// What watches the run without changing it: periodic samplers, the sender trace, the
/// exact time-averaged queue of one port.
#[derive(Default)]
pub struct Observers {
    pub samplers: Samplers,
    /// Exact time-averaged queue of one port (`engine/observe/queue_mean.rs`, `[measure] mean_queue_port`);
    /// `None`: off (one pointer test per dequeue).
    pub queue_mean: Option<Box<crate::engine::observe::queue_mean::QueueMean>>,
}

//! FCT slowdown: a transfer's completion time over its ideal one, the completion time the
//! same transfer would have alone in the network (the metric of the RDMA congestion-control
//! papers: Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, Fig. 11 and
//! after).
//!
//! Definition used here (FCT is the receiver's: from the write to the delivery of the last
//! byte, as every dcnsim completion): along the flow's path of links i = 1..h, with
//! propagation delays dᵢ and rates rᵢ, a transfer whose first packet is w bytes on the wire
//! and all of whose packets are W bytes on the wire ideally completes in
//!
//!   ideal = Σᵢ dᵢ + Σᵢ w·8/rᵢ + (W − w)·8 / minᵢ rᵢ,
//!
//! the first packet's store-and-forward latency plus the rest at the bottleneck's rate. For
//! packets of equal size this is the pipeline's exact time (Σᵢ tᵢ + (n − 1)·maxᵢ tᵢ); a
//! lone flow sending at line rate therefore has slowdown 1. The path is the one the flow's
//! packets take (its ECMP hash included). Only transports that say how they packetise
//! (`Transport::wire_bytes`) get a value. The HPCC authors' simulator measures FCT until
//! the last ACK reaches the sender and adds one base RTT to its ideal instead of the one-way
//! latency; both definitions give 1 for a lone flow.
//!
//! With `[measure] fct = "last-ack"` (RoCE queue pairs) completions end at the sender's last
//! ACK and the ideal is that simulator's (its `qp_finish`): the base RTT, twice the path's
//! propagation plus one MTU of payload serialised at every hop, plus the message's bytes
//! with a data header per packet but no INT header at the path's slowest rate,
//!
//!   ideal = 2·Σᵢ dᵢ + Σᵢ MTU·8/rᵢ + (bytes + n·header)·8 / minᵢ rᵢ,  n = ⌈bytes/MTU⌉.

use crate::base::ids::FlowId;
use crate::base::int::INT_HEADER_BYTES;
use crate::base::packet::{Kind, Packet};
use crate::base::units::SimTime;
use crate::engine::sim::Sim;

/// The ideal completion time of a transfer of `bytes` on flow `fid` (module doc), or None
/// if its transport does not say how it packetises or its path is broken.
pub fn ideal_fct(sim: &Sim, fid: FlowId, bytes: u64) -> Option<SimTime> {
    if sim.hosts.fct_at_ack {
        return ideal_at_ack(sim, fid, bytes);
    }
    let f = &sim.hosts.flows[fid.idx()];
    let (first, total) = f.wire_bytes(bytes)?;
    let probe = Packet::new(Kind::Data, fid, (f.src(), f.dst()), first, 0);
    let (mut delay, mut first_tx, mut min_rate) = (0u64, 0u64, u64::MAX);
    for pid in sim.net.path(&probe)? {
        let port = &sim.net.ports[pid.idx()];
        delay += port.delay.0;
        first_tx += port.rate.tx_time(first).0;
        min_rate = min_rate.min(port.rate.0.max(1));
    }
    let rest = total.saturating_sub(first as u64) as u128;
    let rest_ps = (rest * 8 * SimTime::PS_PER_S as u128).div_ceil(min_rate as u128) as u64;
    Some(SimTime(delay + first_tx + rest_ps))
}

/// The ideal of `[measure] fct = "last-ack"` (module doc), for a RoCE queue pair.
fn ideal_at_ack(sim: &Sim, fid: FlowId, bytes: u64) -> Option<SimTime> {
    let crate::model::transport::Endpoint::Roce(f) = &sim.hosts.flows[fid.idx()] else {
        return None;
    };
    let c = &f.cfg;
    let header = c.data_header - if c.int { INT_HEADER_BYTES } else { 0 };
    let probe = Packet::new(Kind::Data, fid, (f.src, f.dst), c.mtu + c.data_header, 0);
    let (mut delay, mut mtu_tx, mut min_rate) = (0u64, 0u64, u64::MAX);
    for pid in sim.net.path(&probe)? {
        let port = &sim.net.ports[pid.idx()];
        delay += port.delay.0;
        mtu_tx += port.rate.tx_time(c.mtu).0;
        min_rate = min_rate.min(port.rate.0.max(1));
    }
    let n = bytes.div_ceil(c.mtu.max(1) as u64).max(1);
    let total = (bytes + n * header as u64) as u128;
    let total_ps = (total * 8 * SimTime::PS_PER_S as u128).div_ceil(min_rate as u128) as u64;
    Some(SimTime(2 * delay + mtu_tx + total_ps))
}

/// Per completion: (ideal FCT in seconds, slowdown), NaN where there is no ideal; None when
/// no completion has one (the `completions` table then has no such columns).
pub fn columns(sim: &Sim) -> Option<(Vec<f64>, Vec<f64>)> {
    let c = &sim.hosts.completions;
    let ideal: Vec<Option<SimTime>> = c.iter().map(|x| ideal_fct(sim, x.flow, x.bytes)).collect();
    if ideal.iter().all(|x| x.is_none()) {
        return None;
    }
    let secs: Vec<f64> = ideal
        .iter()
        .map(|x| x.map_or(f64::NAN, |t| t.as_secs_f64()))
        .collect();
    let slow = c
        .iter()
        .zip(&secs)
        .map(|(x, &i)| (x.end.0 - x.start.0) as f64 / 1e12 / i)
        .collect();
    Some((secs, slow))
}

/// Summary columns when some completion has a slowdown: `slowdown_mean`, `slowdown_p50`,
/// `slowdown_p95`, `slowdown_p99` over those completions (the percentile of the sorted
/// values at ⌊q·n⌋, capped at the last).
pub fn summary(sim: &Sim, summary: &mut crate::base::table::Table) {
    let Some((_, slow)) = columns(sim) else {
        return;
    };
    let mut v: Vec<f64> = slow.into_iter().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return;
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((q * v.len() as f64) as usize).min(v.len() - 1)];
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    summary
        .f64("slowdown_mean", vec![mean])
        .f64("slowdown_p50", vec![at(0.50)])
        .f64("slowdown_p95", vec![at(0.95)])
        .f64("slowdown_p99", vec![at(0.99)]);
}

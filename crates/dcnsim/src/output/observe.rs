//! Summary columns of the observers (the queue-length meter).

use crate::base::table::Table;
use crate::engine::sim::Sim;

/// Summary columns `mean_queue_bytes` and `mean_queue_pkts` when the meter is on. Packets
/// still waiting at the end are counted up to the end on single-FIFO ports (on multi-queue
/// ports only the packets that left are counted).
pub fn summary_columns(sim: &Sim, t: &mut Table) {
    if let Some(m) = sim.obs.queue_mean.as_ref() {
        let port = &sim.net.ports[m.port.idx()];
        let (bytes, pkts) = m.means(sim.end, port.queue.iter().map(|w| &sim.net.packets[w.h]));
        t.f64("mean_queue_bytes", vec![bytes])
            .f64("mean_queue_pkts", vec![pkts]);
    }
}

/// Table `pcap` when `[measure] pcap` names ports: per captured port, the frames captured,
/// the capture's bytes (the libpcap file's size) and the frames missed past
/// `pcap_max_bytes`.
pub fn pcap_table(sim: &Sim) -> Option<Table> {
    let caps: Vec<(String, &crate::engine::observe::pcap::PortCapture)> = sim
        .net
        .ports
        .iter()
        .filter_map(|p| {
            let c = p.pcap.as_deref()?;
            Some((crate::engine::net::port_name(&sim.net.nodes, p), c))
        })
        .collect();
    if caps.is_empty() {
        return None;
    }
    let mut t = Table::new("pcap");
    t.str("port", caps.iter().map(|c| c.0.clone()).collect())
        .i64("frames", caps.iter().map(|c| c.1.frames as i64).collect())
        .i64(
            "bytes",
            caps.iter().map(|c| c.1.bytes().len() as i64).collect(),
        )
        .i64(
            "not_captured",
            caps.iter().map(|c| c.1.not_captured as i64).collect(),
        );
    Some(t)
}

/// The captures of a finished simulation as (port name, libpcap file), taken out of it.
pub fn take_captures(sim: &mut Sim) -> Vec<(String, Vec<u8>)> {
    let net = &mut sim.net;
    let nodes = &net.nodes;
    net.ports
        .iter_mut()
        .filter_map(|p| {
            let c = p.pcap.take()?;
            Some((crate::engine::net::port_name(nodes, p), c.into_bytes()))
        })
        .collect()
}

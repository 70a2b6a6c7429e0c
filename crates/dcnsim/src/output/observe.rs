//! Summary columns of the observers (the queue-length meter).

use crate::base::table::Table;
use crate::engine::sim::Sim;

/// Summary columns `mean_queue_bytes` and `mean_queue_pkts` when the meter is on. Packets
/// still waiting at the end are counted up to the end on single-FIFO ports (on multi-queue
/// ports only the packets that left are counted).
pub fn summary_columns(sim: &Sim, t: &mut Table) {
    if let Some(m) = sim.obs.queue_mean.as_ref() {
        let port = &sim.net.ports[m.port as usize];
        let (bytes, pkts) = m.means(sim.end, port.queue.iter());
        t.f64("mean_queue_bytes", vec![bytes])
            .f64("mean_queue_pkts", vec![pkts]);
    }
}

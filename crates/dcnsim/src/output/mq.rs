//! Result tables of multi-queue ports: `queues` and `estimates`.

use crate::base::table::Table;
use crate::engine::sim::Sim;

/// Result tables of multi-queue ports: `queues` (one row per port and queue; after the
/// totals, the queue's drops and marks by reason, `drops_<reason>` / `marks_<reason>`) and, when
/// estimators were recorded, `estimates` (Algorithm-1 samples over time). Empty when no
/// port has queues.
pub fn result_tables(sim: &Sim) -> Vec<Table> {
    let mut out = Vec::new();
    let mut port = Vec::new();
    let mut queue = Vec::new();
    let mut cols: [Vec<i64>; 6] = Default::default();
    let mut reasons = Vec::new();
    let mut est = Table::new("estimates");
    let (mut et, mut ep, mut eq, mut es, mut ea) = (vec![], vec![], vec![], vec![], vec![]);
    for p in &sim.net.ports {
        let Some(m) = p.mq.as_ref() else { continue };
        let name = crate::engine::net::port_name(&sim.net.nodes, p);
        for (i, s) in m.qstats.iter().enumerate() {
            port.push(name.clone());
            queue.push(i as i64);
            cols[0].push(s.tx_pkts as i64);
            cols[1].push(s.tx_bytes as i64);
            cols[2].push(s.tx_payload as i64);
            cols[3].push(s.drops() as i64);
            cols[4].push(s.marks() as i64);
            cols[5].push(s.max_bytes as i64);
            reasons.push(&s.by);
        }
        for &(t, q, sample, avg) in &m.estimates {
            et.push(t.as_secs_f64());
            ep.push(name.clone());
            eq.push(q as i64);
            es.push(sample);
            ea.push(avg);
        }
    }
    if port.is_empty() {
        return out;
    }
    let mut t = Table::new("queues");
    let [a, b, c, d, e, f] = cols;
    t.str("port", port)
        .i64("queue", queue)
        .i64("tx_pkts", a)
        .i64("tx_bytes", b)
        .i64("tx_payload_bytes", c)
        .i64("drops", d)
        .i64("marks", e)
        .i64("max_bytes", f);
    super::reason_columns(&mut t, reasons.into_iter());
    out.push(t);
    if !et.is_empty() {
        est.f64("time_s", et)
            .str("port", ep)
            .i64("queue", eq)
            .f64("sample_bps", es)
            .f64("avg_bps", ea);
        out.push(est);
    }
    out
}

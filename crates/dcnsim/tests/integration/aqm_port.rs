//! AQM at a port driven with scripted packets: which packets the step marker marks at
//! enqueue and at dequeue, RED dropping non-ECT packets, and the per-port counters.

use crate::helpers::udp;
use dcnsim::base::packet::{Ecn, Packet};
use dcnsim::base::rng::Rng;
use dcnsim::base::units::{RateBps, SimTime};
use dcnsim::engine::net::NodeKind;
use dcnsim::engine::sim::Sim;
use dcnsim::model::aqm::{Aqm, AqmAt, QueueUnit, Red, RedParams, Step};

/// A switch port (1 Gb/s, 1 ms delay) offered `n` packets at t = 0; returns the ECN
/// codepoints of the packets as they left, in order, and the port.
fn offer(aqm: Aqm, at: AqmAt, ecn: &[Ecn]) -> (Vec<(u64, Ecn)>, dcnsim::engine::net::PortStats) {
    let mut sim = Sim::new(SimTime::from_ms(10), 1);
    let a = sim.add_node("a", NodeKind::Switch);
    let b = sim.add_node("b", NodeKind::Host);
    let (ab, _) = sim.add_link(
        a,
        b,
        RateBps(1_000_000_000),
        SimTime::from_ms(1),
        u64::MAX,
        u64::MAX,
    );
    sim.finalize_routes().unwrap();
    sim.net.ports[ab.idx()].aqm = aqm;
    sim.net.ports[ab.idx()].aqm_at = at;
    for (i, &e) in ecn.iter().enumerate() {
        let p = Packet {
            ecn: e,
            ..udp(i as u64, 1500, b)
        };
        sim.enqueue(ab, p);
    }
    // 12 us per packet: all are on the 1 ms wire before the first arrives.
    while sim.net.ports[ab.idx()].wire.len() + (sim.net.ports[ab.idx()].stats.drops() as usize)
        < ecn.len()
    {
        sim.step().unwrap();
    }
    let p = &sim.net.ports[ab.idx()];
    (
        p.wire
            .iter()
            .map(|e| (sim.net.packets[e.h].seq, sim.net.packets[e.h].ecn))
            .collect(),
        p.stats.clone(),
    )
}

fn step(k: u64) -> Aqm {
    Aqm::Step(Step {
        k,
        unit: QueueUnit::Packets,
    })
}

#[test]
fn step_marks_at_enqueue_the_arrivals_that_find_the_queue_above_k() {
    use Ecn::*;
    // Packet 0 goes straight to the wire (queue 0 + itself = 1); 1, 2, 3 find 0, 1, 2
    // waiting: including themselves 1, 2, 3. K = 1 → 2 and 3 are marked.
    let (out, st) = offer(step(1), AqmAt::Enqueue, &[Ect0; 4]);
    assert_eq!(out, vec![(0, Ect0), (1, Ect0), (2, Ce), (3, Ce)]);
    assert_eq!(st.marks(), 2);
    // Non-ECT packets are neither marked nor dropped by the step marker.
    let (out, st) = offer(step(1), AqmAt::Enqueue, &[NotEct; 4]);
    assert!(out.iter().all(|x| x.1 == NotEct));
    assert_eq!((st.marks(), st.drops()), (0, 0));
}

#[test]
fn step_marks_at_dequeue_by_the_queue_left_behind() {
    use Ecn::*;
    // At dequeue: packet 0 leaves an empty queue (1 with itself); 1 leaves 2 and 3 behind
    // (3), 2 leaves 3 (2), 3 leaves nothing (1). K = 1 → 1 and 2 are marked.
    let (out, st) = offer(step(1), AqmAt::Dequeue, &[Ect0; 4]);
    assert_eq!(out, vec![(0, Ect0), (1, Ce), (2, Ce), (3, Ect0)]);
    assert_eq!(st.marks(), 2);
}

#[test]
fn red_instantaneous_marks_ect_and_drops_non_ect_above_max() {
    use Ecn::*;
    let red = || {
        Aqm::Red(Box::new(Red::new(
            RedParams {
                min_th: 1.0,
                max_th: 1.0,
                unit: QueueUnit::Packets,
                max_p: 1.0,
                w_q: 1.0,
                gentle: false,
                wait: true,
                instantaneous: true,
                count: true,
                mean_pkt_time: SimTime::from_us(12),
            },
            Rng::new(1, 0),
        )))
    };
    // Queues found by the arrivals: 0, 0, 1, 1 (packet 2 is dropped): 2 and 3 reach max_th.
    let (out, st) = offer(red(), AqmAt::Enqueue, &[Ect0, NotEct, NotEct, Ect0]);
    assert_eq!(out, vec![(0, Ect0), (1, NotEct), (3, Ce)]);
    assert_eq!((st.marks(), st.drops(), st.aqm_drops()), (1, 1, 1));
}

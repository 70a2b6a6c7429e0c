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

#[test]
fn per_rate_thresholds_scale_with_each_ports_rate() {
    // A dumbbell: 10 Gb/s host links, a 40 Gb/s bottleneck. K = 100 KB for a 10 Gb/s port.
    let text = |aqm: &str| {
        format!(
            "[sim]\nduration = \"1ms\"\n[topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\n\
             link_rate = \"10Gbps\"\nbottleneck_rate = \"40Gbps\"\naqm = {aqm}\n\
             [[apps]]\nkind = \"flows\"\nsrcs = [\"left1\"]\ndst = \"right1\"\nsize = \"1KB\"\n"
        )
    };
    let k_of = |aqm: &str| {
        let l = dcnsim::scenario::load(&text(aqm), "x.toml", &[]).expect("loads");
        let (sim, _) = dcnsim::scenario::build(&l).expect("builds");
        let k = |name: &str| match &sim.net.ports[sim.port_by_name(name).unwrap().idx()].aqm {
            Aqm::Step(s) => (s.k, s.unit),
            other => panic!("{other:?}"),
        };
        (k("swL->swR"), k("swR->right1"))
    };
    let scaled = k_of("{ kind = \"step\", k = \"100KB\", per_rate = \"10Gbps\" }");
    assert_eq!(scaled.0, (400_000, QueueUnit::Bytes));
    assert_eq!(scaled.1, (100_000, QueueUnit::Bytes));
    // Packets scale too (rounded down); without per_rate every port has the value given.
    let pk = k_of("{ kind = \"step\", k = \"65pkts\", per_rate = \"30Gbps\" }");
    assert_eq!((pk.0 .0, pk.1 .0), (86, 21));
    let flat = k_of("{ kind = \"step\", k = \"100KB\" }");
    assert_eq!((flat.0 .0, flat.1 .0), (100_000, 100_000));
    // Only thresholds scale: a kind without them refuses the key, and a zero rate is refused.
    for (aqm, want, field) in [
        (
            "{ kind = \"none\", per_rate = \"10Gbps\" }",
            "only \"step\" and \"red\" take it",
            "topology.aqm.per_rate",
        ),
        (
            "{ kind = \"step\", per_rate = \"0Gbps\" }",
            "out of range",
            "topology.aqm",
        ),
    ] {
        let l = dcnsim::scenario::load(&text(aqm), "x.toml", &[]);
        let e = match l {
            Ok(l) => dcnsim::scenario::build(&l).err().expect("refused"),
            Err(e) => e,
        };
        assert!(e.to_string().contains(want), "{e}");
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
        assert_eq!(e.line, Some(9), "{e}");
    }
}

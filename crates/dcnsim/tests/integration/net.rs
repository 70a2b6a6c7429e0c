//! Links and queues driven with scripted packets: exact serialization and delivery times,
//! DropTail at the byte limit, FIFO order, lazy transmission events.

use crate::helpers::udp as pkt;
use dcnsim::base::ids::NodeId;
use dcnsim::base::units::{RateBps, SimTime};
use dcnsim::engine::event::Event;
use dcnsim::engine::net::NodeKind;
use dcnsim::engine::sim::Sim;

/// h1 --(1 Gb/s, 5 us)--> sw --(1 Gb/s, 5 us)--> h2 with a `limit`-byte switch buffer.
fn line(limit: u64) -> (Sim, dcnsim::base::ids::PortId, NodeId) {
    let mut sim = Sim::new(SimTime::from_ms(100), 1);
    let h1 = sim.add_node("h1", NodeKind::Host);
    let sw = sim.add_node("sw", NodeKind::Switch);
    let h2 = sim.add_node("h2", NodeKind::Host);
    let g = RateBps(1_000_000_000);
    sim.add_link(h1, sw, g, SimTime::from_us(5), u64::MAX, limit);
    let (_, sw_h2) = sim.add_link(h2, sw, g, SimTime::from_us(5), u64::MAX, limit);
    sim.finalize_routes().unwrap();
    (sim, sw_h2, h2)
}

#[test]
fn serialization_and_propagation_are_exact() {
    let (mut sim, sw_h2, h2) = line(u64::MAX);
    sim.host_send(NodeId(0), pkt(0, 1500, h2));
    // h1 port: 12 us serialization + 5 us propagation.
    let (t1, e1) = sim.step().unwrap();
    assert_eq!(t1, SimTime::from_us(17));
    assert!(matches!(e1, Event::LinkArrive(_)));
    // The switch port was idle: transmission starts at once, no PortTxDone event.
    let (t2, e2) = sim.step().unwrap();
    assert_eq!(t2, SimTime::from_us(34));
    assert_eq!(e2, Event::LinkArrive(sw_h2));
    assert_eq!(sim.net.absorbed, 1);
    assert!(sim.step().is_none());
}

#[test]
fn back_to_back_packets_are_spaced_by_serialization() {
    let (mut sim, _, h2) = line(u64::MAX);
    for i in 0..3 {
        sim.host_send(NodeId(0), pkt(i, 1500, h2));
    }
    let mut arrivals = Vec::new();
    while let Some((t, e)) = sim.step() {
        if let Event::LinkArrive(p) = e {
            if sim.net.ports[p.idx()].peer_node == h2 {
                arrivals.push(t);
            }
        }
    }
    assert_eq!(
        arrivals,
        vec![
            SimTime::from_us(34),
            SimTime::from_us(46),
            SimTime::from_us(58)
        ]
    );
}

#[test]
fn droptail_drops_exactly_at_the_byte_limit() {
    // The packet in transmission has left the queue; three 1500-B packets wait in 4500 B.
    for (limit, expect_drops) in [(4500u64, 1u64), (4499, 2), (6000, 0)] {
        let mut sim = Sim::new(SimTime::from_ms(10), 1);
        let a = sim.add_node("a", NodeKind::Switch);
        let b = sim.add_node("b", NodeKind::Host);
        let (ab, _) = sim.add_link(a, b, RateBps(1_000_000_000), SimTime::ZERO, limit, u64::MAX);
        sim.finalize_routes().unwrap();
        for i in 0..5 {
            sim.enqueue(ab, pkt(i, 1500, b));
        }
        let p = &sim.net.ports[ab.idx()];
        assert_eq!(p.stats.drops(), expect_drops, "limit {limit}");
        assert!(p.queued_bytes <= limit);
        assert_eq!(p.stats.max_queue_bytes, p.queued_bytes);
    }
}

#[test]
fn queue_is_fifo_and_keeps_one_pending_tx_event() {
    let mut sim = Sim::new(SimTime::from_ms(10), 1);
    let a = sim.add_node("a", NodeKind::Switch);
    let b = sim.add_node("b", NodeKind::Host);
    let (ab, _) = sim.add_link(
        a,
        b,
        RateBps(1_000_000_000),
        SimTime::ZERO,
        u64::MAX,
        u64::MAX,
    );
    sim.finalize_routes().unwrap();
    for i in 0..10 {
        sim.enqueue(ab, pkt(i, 1000 + i as u32, b));
    }
    // One PortTxDone and one LinkArrive pending, whatever the backlog.
    assert_eq!(sim.events.len(), 2);
    let back = sim.net.ports[ab.idx()].wire.back().unwrap().h;
    let mut order = vec![sim.net.packets[back].seq];
    while sim.step().is_some() {
        if let Some(e) = sim.net.ports[ab.idx()].wire.back() {
            let p = sim.net.packets[e.h];
            if order.last() != Some(&p.seq) {
                order.push(p.seq);
            }
        }
        assert!(sim.events.len() <= 2);
    }
    assert_eq!(order, (0..10).collect::<Vec<_>>());
    assert_eq!(sim.net.ports[ab.idx()].stats.tx_pkts, 10);
}

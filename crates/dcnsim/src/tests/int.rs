//! INT end to end (`base/int.rs`): a RoCE queue pair under HPCC on a line of two switches;
//! the records its controller receives are checked against the exact transmission starts,
//! byte counts and queues of the switch egresses, and the INT header against the wire.

use crate::base::ids::{AppId, NodeId};
use crate::base::int::{IntHop, INT_HEADER_BYTES};
use crate::base::units::{RateBps, SimTime};
use crate::engine::apps::{App, Bulk};
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::roce::cc::hpcc::{Hpcc, HpccConfig};
use crate::model::roce::cc::RoceCc;
use crate::model::roce::qp::{RoceConfig, RoceFlow, ACK_SIZE, DATA_HEADER};
use crate::model::transport::Endpoint;

const G: u64 = 1_000_000_000;
const D: SimTime = SimTime::from_us(1);
/// A data packet: 1 000 B of payload, the RoCEv2 headers and the INT header.
const DATA: u64 = 1000 + DATA_HEADER as u64 + INT_HEADER_BYTES as u64;
const ACK: u64 = ACK_SIZE as u64 + INT_HEADER_BYTES as u64;

fn ns(x: f64) -> SimTime {
    SimTime((x * 1000.0).round() as u64)
}

/// h1 --100 G-- sw1 --10 G-- sw2 --10 G-- h2, 1 µs links; three 1 000-byte packets.
fn run(until: SimTime) -> (Sim, NodeId, NodeId) {
    let mut sim = Sim::new(until, 1);
    let h1 = sim.add_node("h1", NodeKind::Host);
    let s1 = sim.add_node("sw1", NodeKind::Switch);
    let s2 = sim.add_node("sw2", NodeKind::Switch);
    let h2 = sim.add_node("h2", NodeKind::Host);
    sim.add_link(h1, s1, RateBps(100 * G), D, u64::MAX, u64::MAX);
    sim.add_link(s1, s2, RateBps(10 * G), D, u64::MAX, u64::MAX);
    sim.add_link(s2, h2, RateBps(10 * G), D, u64::MAX, u64::MAX);
    sim.finalize_routes().unwrap();
    let q = RoceConfig {
        int: true,
        data_header: DATA_HEADER + INT_HEADER_BYTES,
        ack_size: ACK_SIZE + INT_HEADER_BYTES,
        ..RoceConfig::default()
    };
    let cc = Hpcc::new(HpccConfig::hpcc_fork(
        RateBps(100 * G),
        SimTime::from_us(10),
    ));
    let f = sim.add_flow(RoceFlow::new(h1, h2, q, RoceCc::Hpcc(cc)), AppId(0));
    sim.apps.push(App::Bulk(Bulk {
        flow: f,
        bytes: 3000,
        start: SimTime::ZERO,
        finished: None,
    }));
    sim.start();
    sim.run(&mut |_| true);
    (sim, h1, h2)
}

fn hpcc(sim: &Sim) -> Hpcc {
    match &sim.hosts.flows[0] {
        Endpoint::Roce(f) => match &*f.cc {
            RoceCc::Hpcc(h) => h.clone(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

fn hop(ts: SimTime, tx_bytes: u64, qlen: u64) -> IntHop {
    IntHop {
        rate_bps: 10 * G,
        ts,
        tx_bytes,
        qlen,
    }
}

#[test]
fn each_switch_egress_records_and_the_ack_echoes() {
    // At 100 G the packets leave h1 88.32 ns apart and reach sw1 1 µs later; sw1 sends each
    // at 10 G (883.2 ns): packet 1 at 1 088.32 ns, packet 2 (queued) at 1 971.52 ns with
    // packet 3 behind it, packet 3 at 2 854.72 ns; each reaches sw2 1 883.2 ns after its
    // start at sw1 and leaves at once.
    let s1 = [ns(1088.32), ns(1971.52), ns(2854.72)];
    let s2: Vec<SimTime> = s1.iter().map(|&t| t + ns(1883.2)).collect();
    // Stopped after packet 2's ACK (8.92 µs) and before packet 3's (9.80 µs): the
    // controller holds packet 2's records as its ACK echoed them.
    let (sim, _, _) = run(SimTime::from_us(9));
    let h = hpcc(&sim);
    assert_eq!(h.nhops, 2);
    assert_eq!(h.prev[0], hop(s1[1], DATA, DATA));
    assert_eq!(h.prev[1], hop(s2[1], DATA, 0));
    // Packet 1's ACK only stored its records; packet 2's measured both hops at exactly
    // 10 G (1 104 B in 883.2 ns) with no queue both saw: U' = 1, τ = 883.2 ns of T = 10 µs.
    let tau = 883.2e-9 / 10e-6;
    assert!((h.u - tau).abs() < 1e-9, "{}", h.u);
    assert_eq!(h.rate, 100e9, "far below η: the line rate");

    let (sim, h1, h2) = run(SimTime::from_ms(1));
    let h = hpcc(&sim);
    assert_eq!(h.prev[0], hop(s1[2], 2 * DATA, 0));
    assert_eq!(h.prev[1], hop(s2[2], 2 * DATA, 0));
    // The INT header is on the wire: three data packets out of h1, three ACKs out of h2.
    let port = |n: NodeId| &sim.net.ports[sim.net.nodes[n.idx()].ports[0].idx()].stats;
    assert_eq!(port(h1).tx_bytes, 3 * DATA);
    assert_eq!(port(h2).tx_bytes, 3 * ACK);
    assert_eq!(sim.check_run(), Ok(()));
}

/// The same line built from a scenario, with PFC on: layer 2 takes each frame out of the
/// packet store at every switch and puts it back, and its records must go with it.
#[test]
fn records_survive_the_layer_2_path() {
    let text = r#"
[sim]
duration = "1ms"
[topology]
kind = "explicit"
link_delay = "1us"
switch_buffer = "32MB"
pause = { mode = "pfc", hi = "400KB", lo = "370KB" }
queues = { count = 2, scheduler = "sp", hosts = true }
[[topology.nodes]]
name = "h1"
kind = "host"
[[topology.nodes]]
name = "sw1"
kind = "switch"
[[topology.nodes]]
name = "sw2"
kind = "switch"
[[topology.nodes]]
name = "h2"
kind = "host"
[[topology.links]]
a = "h1"
b = "sw1"
rate = "100Gbps"
[[topology.links]]
a = "sw1"
b = "sw2"
rate = "10Gbps"
[[topology.links]]
a = "sw2"
b = "h2"
rate = "10Gbps"
[roce]
cc = "hpcc-fork"
[[apps]]
kind = "flows"
srcs = ["h1"]
dst = "h2"
size = "3000B"
transport = "roce"
"#;
    let loaded = crate::scenario::load(text, "int.toml", &[]).expect("loads");
    let (mut sim, _) = crate::scenario::build(&loaded).expect("builds");
    sim.start();
    sim.run(&mut |_| true);
    assert!(sim.l2.is_some(), "layer 2 on");
    let h = hpcc(&sim);
    let s1 = ns(2854.72);
    assert_eq!(h.nhops, 2);
    assert_eq!(h.prev[0], hop(s1, 2 * DATA, 0));
    assert_eq!(h.prev[1], hop(s1 + ns(1883.2), 2 * DATA, 0));
}

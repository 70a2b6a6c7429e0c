//! The NIC scheduler of pulled senders (`engine/datapath/nic.rs`) end to end, with a toy
//! pulled transport: a sender whose rate limiter spaces its packets `gap` apart and whose
//! receiver acknowledges each packet. Checks exact departure times, the round robin between
//! two senders of one host, that nothing waits in the host's queue, and that a pause holds
//! the scheduler back until it ends.

use crate::base::ids::{AppId, FlowId, NodeId};
use crate::base::packet::{Kind, Packet};
use crate::base::units::{RateBps, SimTime};
use crate::engine::apps::{App, Bulk};
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::transport::udp::UdpFlow;
use crate::model::transport::{FlowCounters, FlowRow, TimerKind, Transport};

const PAYLOAD: u32 = 1000;
const HEADER: u32 = 40;
/// 1 040 bytes at 1 Gb/s.
const TX: SimTime = SimTime(8_320_000);
const HOP: SimTime = SimTime::from_us(5);

/// h1 --(1 Gb/s, 5 µs)-- sw --(1 Gb/s, 5 µs)-- h2, unlimited buffers.
fn two_hosts() -> (Sim, NodeId, NodeId) {
    let mut sim = Sim::new(SimTime::from_ms(10), 1);
    let h1 = sim.add_node("h1", NodeKind::Host);
    let sw = sim.add_node("sw", NodeKind::Switch);
    let h2 = sim.add_node("h2", NodeKind::Host);
    let g = RateBps(1_000_000_000);
    sim.add_link(h1, sw, g, HOP, u64::MAX, u64::MAX);
    sim.add_link(h2, sw, g, HOP, u64::MAX, u64::MAX);
    sim.finalize_routes().unwrap();
    (sim, h1, h2)
}

fn bulk(sim: &mut Sim, flow: FlowId, bytes: u64, start: SimTime) {
    sim.apps.push(App::Bulk(Bulk {
        flow,
        bytes,
        start,
        finished: None,
    }));
}

/// A pulled sender: `nic_ready` is the last packet's start plus `gap`; the receiver
/// records when each packet arrived.
#[derive(Clone, Debug)]
struct Paced {
    id: FlowId,
    src: NodeId,
    dst: NodeId,
    gap: SimTime,
    written: u64,
    sent: u64,
    received: u64,
    next_avail: SimTime,
    log: Shared,
}

impl Paced {
    fn new(src: NodeId, dst: NodeId, gap: SimTime, log: &Shared) -> Paced {
        Paced {
            id: FlowId(0),
            src,
            dst,
            gap,
            written: 0,
            sent: 0,
            received: 0,
            next_avail: SimTime::ZERO,
            log: log.clone(),
        }
    }
}

impl Transport for Paced {
    fn kind_name(&self) -> &'static str {
        "paced"
    }
    fn set_id(&mut self, id: FlowId) {
        self.id = id;
    }
    fn src(&self) -> NodeId {
        self.src
    }
    fn dst(&self) -> NodeId {
        self.dst
    }
    fn set_class(&mut self, _: u8) {}
    fn on_data(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        self.received += p.payload as u64;
        self.log.lock().unwrap().arrivals.push(now);
        out.push(Packet::new(
            Kind::Ack,
            self.id,
            (self.dst, self.src),
            HEADER,
            0,
        ));
    }
    fn on_feedback(&mut self, _: SimTime, _: &Packet, _: &mut Vec<Packet>) {}
    fn app_write(&mut self, _: SimTime, bytes: u64, _: &mut Vec<Packet>) {
        self.written += bytes;
    }
    fn written(&self) -> u64 {
        self.written
    }
    fn delivered(&self) -> u64 {
        self.received
    }
    fn next_timer(&mut self) -> Option<(TimerKind, SimTime)> {
        None
    }
    fn timer_due(&mut self, _: SimTime, _: TimerKind) -> bool {
        false
    }
    fn on_timer(&mut self, _: SimTime, _: TimerKind, _: &mut Vec<Packet>) -> NodeId {
        self.src
    }
    fn counters(&self) -> FlowCounters {
        FlowCounters::default()
    }
    fn row(&self, _: &mut FlowRow) {}
    fn nic_ready(&self) -> Option<SimTime> {
        (self.sent < self.written).then_some(self.next_avail)
    }
    fn pulled(&self) -> bool {
        true
    }
    fn wire_bytes(&self, bytes: u64) -> Option<(u32, u64)> {
        let n = bytes.div_ceil(PAYLOAD as u64);
        Some((
            bytes.min(PAYLOAD as u64) as u32 + HEADER,
            bytes + n * HEADER as u64,
        ))
    }
    fn nic_pull(&mut self, now: SimTime) -> Option<Packet> {
        assert!(now >= self.next_avail, "pulled before its limiter allowed");
        let payload = (self.written - self.sent).min(PAYLOAD as u64) as u32;
        let p = Packet {
            seq: self.sent,
            sent_time: now,
            ..Packet::new(
                Kind::Data,
                self.id,
                (self.src, self.dst),
                HEADER + payload,
                payload,
            )
        };
        self.sent += payload as u64;
        self.next_avail = now + self.gap;
        self.log.lock().unwrap().pulls.push(now);
        Some(p)
    }
}

/// The toy's log, shared with the test (an endpoint is moved into the simulation).
#[derive(Debug, Default)]
struct Log {
    pulls: Vec<SimTime>,
    arrivals: Vec<SimTime>,
}

type Shared = std::sync::Arc<std::sync::Mutex<Log>>;

/// Add a toy sender from `src` to `dst` with limiter gap `gap`; returns its flow and log.
fn add(sim: &mut Sim, (src, dst): (NodeId, NodeId), gap: SimTime) -> (FlowId, Shared) {
    let log = Shared::default();
    let b: Box<dyn Transport> = Box::new(Paced::new(src, dst, gap, &log));
    (sim.add_flow(b, AppId(0)), log)
}

fn pulls(log: &Shared) -> Vec<SimTime> {
    log.lock().unwrap().pulls.clone()
}

#[test]
fn a_pulled_sender_leaves_at_its_limiters_times_and_never_queues_at_the_host() {
    let (mut sim, h1, h2) = two_hosts();
    // A limiter at a quarter of the line rate: one packet per 4 serialisations.
    let (fid, log) = add(&mut sim, (h1, h2), SimTime(4 * TX.0));
    bulk(&mut sim, fid, 5 * PAYLOAD as u64, SimTime::ZERO);
    sim.start();
    sim.run(&mut |_| true);
    let want: Vec<SimTime> = (0..5).map(|k| SimTime(4 * k * TX.0)).collect();
    assert_eq!(pulls(&log), want);
    // Each arrives two serialisations and two hops after it was pulled.
    let arr: Vec<SimTime> = want.iter().map(|&t| t + TX + TX + HOP + HOP).collect();
    assert_eq!(log.lock().unwrap().arrivals, arr);
    let nic = sim.net.ports[sim.net.nodes[h1.idx()].ports[0].idx()]
        .stats
        .max_queue_bytes;
    assert_eq!(nic, 0, "nothing waits in the host's queue");
    assert_eq!(sim.hosts.nics.as_ref().unwrap().pulled, 5);
    assert_eq!(sim.check_run(), Ok(()));
}

#[test]
fn two_senders_of_one_host_take_turns_at_line_rate() {
    let (mut sim, h1, h2) = two_hosts();
    let (a, la) = add(&mut sim, (h1, h2), TX);
    let (b, lb) = add(&mut sim, (h1, h2), TX);
    bulk(&mut sim, a, 3 * PAYLOAD as u64, SimTime::ZERO);
    bulk(&mut sim, b, 3 * PAYLOAD as u64, SimTime::ZERO);
    sim.start();
    sim.run(&mut |_| true);
    // Back to back, alternating: a at 0, 2, 4 serialisations, b at 1, 3, 5.
    let at = |ks: [u64; 3]| ks.map(|k| SimTime(k * TX.0)).to_vec();
    assert_eq!(pulls(&la), at([0, 2, 4]));
    assert_eq!(pulls(&lb), at([1, 3, 5]));
    assert_eq!(sim.check_run(), Ok(()));
}

#[test]
fn a_pushed_sender_at_the_same_rate_would_have_queued() {
    // The contrast of the first test: a UDP sender at twice the line rate pushes its
    // datagrams into the host's queue.
    let (mut sim, h1, h2) = two_hosts();
    let udp = UdpFlow::new(h1, h2, RateBps(2_000_000_000), HEADER + PAYLOAD, HEADER);
    let fid = sim.add_flow(udp, AppId(0));
    bulk(&mut sim, fid, 5 * PAYLOAD as u64, SimTime::ZERO);
    sim.start();
    sim.run(&mut |_| true);
    let nic = sim.net.ports[sim.net.nodes[h1.idx()].ports[0].idx()]
        .stats
        .max_queue_bytes;
    assert!(nic > 0);
    assert!(
        sim.hosts.nics.is_none(),
        "no scheduler without pulled senders"
    );
}

#[test]
fn a_paused_port_holds_the_scheduler_until_the_pause_ends() {
    let (mut sim, h1, h2) = two_hosts();
    let (fid, log) = add(&mut sim, (h1, h2), TX);
    bulk(&mut sim, fid, 2 * PAYLOAD as u64, SimTime::ZERO);
    let nic = sim.net.nodes[h1.idx()].ports[0];
    sim.net.ports[nic.idx()].paused_until = SimTime::from_us(30);
    sim.start();
    sim.run(&mut |_| true);
    let t0 = SimTime::from_us(30);
    assert_eq!(pulls(&log), vec![t0, t0 + TX]);
    assert_eq!(sim.check_run(), Ok(()));
}

#[test]
fn a_lone_sender_at_line_rate_has_slowdown_one_and_a_slower_one_more() {
    let (mut sim, h1, h2) = two_hosts();
    // 5 packets back to back, then (a second flow, later) 5 at a quarter of the rate.
    let (fast, _) = add(&mut sim, (h1, h2), TX);
    let (slow, _) = add(&mut sim, (h1, h2), SimTime(4 * TX.0));
    bulk(&mut sim, fast, 4_500, SimTime::ZERO);
    bulk(&mut sim, slow, 5_000, SimTime::from_ms(1));
    sim.start();
    sim.run(&mut |_| true);
    let comp = crate::output::completions(&sim);
    let col = |n: &str| match comp.get(n) {
        Some(crate::base::table::Column::F64(v)) => v.clone(),
        other => panic!("{n}: {other:?}"),
    };
    // Ideal of the first: 2 hops of 5 µs, its first packet (1 040 B) stored and forwarded
    // twice, then the rest of its 4 700 bytes on the wire (4 500 B in 5 packets) at 1 Gb/s.
    let first = 2.0 * 5e-6 + 2.0 * 8.32e-6 + (4_700.0 - 1_040.0) * 8.0 / 1e9;
    let (ideal, slowdown) = (col("ideal_s"), col("slowdown"));
    assert!((ideal[0] - first).abs() < 1e-12, "{} vs {first}", ideal[0]);
    assert!((slowdown[0] - 1.0).abs() < 1e-9, "{}", slowdown[0]);
    // The second's packets leave 4 serialisations apart: 4 gaps more than ideal.
    let fct = 4.0 * 4.0 * 8.32e-6 + 2.0 * 8.32e-6 + 2.0 * 5e-6;
    let ideal1 = 2.0 * 5e-6 + 2.0 * 8.32e-6 + 4.0 * 8.32e-6;
    assert!((slowdown[1] - fct / ideal1).abs() < 1e-9, "{}", slowdown[1]);
}

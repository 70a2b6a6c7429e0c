//! The transport seam end to end (`model/transport`): endpoints of every kind on a small
//! network built with the engine's API, their timers firing through `Event::Timer`, their
//! transfers completing, and their rows in the `flows` table.
//!
//! The recipe test: a toy transport defined here (a fixed-gap sender without congestion
//! control whose receiver acknowledges every packet) runs through the seam as an
//! `Endpoint::Ext`, beside a TCP flow.

use crate::base::ids::{AppId, FlowId, NodeId};
use crate::base::packet::{Kind, Packet};
use crate::base::table::Column;
use crate::base::units::{RateBps, SimTime};
use crate::engine::apps::{App, Bulk};
use crate::engine::event::Event;
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::tcp::{TcpConfig, TcpFlow};
use crate::model::transport::udp::UdpFlow;
use crate::model::transport::{Endpoint, FlowCounters, FlowRow, LazyTimer, TimerKind, Transport};

/// h1 --(1 Gb/s, 5 µs)-- sw --(1 Gb/s, 5 µs)-- h2, unlimited buffers.
fn two_hosts() -> (Sim, NodeId, NodeId) {
    let mut sim = Sim::new(SimTime::from_ms(10), 1);
    let h1 = sim.add_node("h1", NodeKind::Host);
    let sw = sim.add_node("sw", NodeKind::Switch);
    let h2 = sim.add_node("h2", NodeKind::Host);
    let (g, d) = (RateBps(1_000_000_000), SimTime::from_us(5));
    sim.add_link(h1, sw, g, d, u64::MAX, u64::MAX);
    sim.add_link(h2, sw, g, d, u64::MAX, u64::MAX);
    sim.finalize_routes().unwrap();
    (sim, h1, h2)
}

/// An app that writes `bytes` on `flow` at `start` and waits for their delivery.
fn bulk(sim: &mut Sim, flow: FlowId, bytes: u64, start: SimTime) {
    sim.apps.push(App::Bulk(Bulk {
        flow,
        bytes,
        start,
        finished: None,
    }));
}

fn column<'a>(t: &'a crate::base::table::Table, name: &str) -> &'a Column {
    t.get(name)
        .unwrap_or_else(|| panic!("flows.{name} missing"))
}

fn names(t: &crate::base::table::Table) -> Vec<&str> {
    t.columns.iter().map(|(n, _)| n.as_str()).collect()
}

// ------------------------------------------------------------------- the toy

/// The toy's send timer (any number below `TimerKind::LIMIT` the kind picks).
const SEND: TimerKind = TimerKind(7);
const PAYLOAD: u32 = 1000;
const HEADER: u32 = 40;

/// Sends one `PAYLOAD`-byte packet every `gap` while written packets remain; its receiver
/// acknowledges each; the sender counts the acknowledgements.
#[derive(Clone, Debug)]
struct Probe {
    id: FlowId,
    src: NodeId,
    dst: NodeId,
    gap: SimTime,
    written: u64,
    sent: u64,
    received: u64,
    acks: u64,
    next: LazyTimer,
}

impl Probe {
    fn new(src: NodeId, dst: NodeId, gap: SimTime) -> Probe {
        Probe {
            id: FlowId(0),
            src,
            dst,
            gap,
            written: 0,
            sent: 0,
            received: 0,
            acks: 0,
            next: LazyTimer::default(),
        }
    }

    fn packet(&self, now: SimTime, kind: Kind, payload: u32) -> Packet {
        let (src, dst) = if kind == Kind::Data {
            (self.src, self.dst)
        } else {
            (self.dst, self.src)
        };
        Packet {
            seq: self.sent,
            ack: self.received,
            enq_time: now,
            sent_time: now,
            ..Packet::new(kind, self.id, (src, dst), HEADER + payload, payload)
        }
    }

    fn send(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        out.push(self.packet(now, Kind::Data, PAYLOAD));
        self.sent += PAYLOAD as u64;
        if self.sent < self.written {
            self.next.set(now + self.gap);
        }
    }
}

impl Transport for Probe {
    fn kind_name(&self) -> &'static str {
        "probe"
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
        out.push(self.packet(now, Kind::Ack, 0));
    }
    fn on_feedback(&mut self, _: SimTime, _: &Packet, _: &mut Vec<Packet>) {
        self.acks += 1;
    }
    fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>) {
        let idle = self.sent == self.written;
        self.written += bytes / PAYLOAD as u64 * PAYLOAD as u64;
        if idle && self.sent < self.written {
            self.send(now, out);
        }
    }
    fn written(&self) -> u64 {
        self.written
    }
    fn delivered(&self) -> u64 {
        self.received
    }
    fn next_timer(&mut self) -> Option<(TimerKind, SimTime)> {
        self.next.take_event().map(|at| (SEND, at))
    }
    fn timer_due(&mut self, now: SimTime, kind: TimerKind) -> bool {
        kind == SEND && self.next.fire(now)
    }
    fn on_timer(&mut self, now: SimTime, _: TimerKind, out: &mut Vec<Packet>) -> NodeId {
        self.send(now, out);
        self.src
    }
    fn counters(&self) -> FlowCounters {
        FlowCounters::default()
    }
    fn row(&self, row: &mut FlowRow) {
        row.i64("probe_acks", self.acks as i64);
    }
}

#[test]
fn a_toy_transport_runs_through_the_seam_beside_tcp() {
    let (mut sim, h1, h2) = two_hosts();
    // Flow 0: TCP h2 -> h1, 10 000 bytes from 1 ms (after the toy is done).
    let tcp = sim.add_flow(
        TcpFlow::new(FlowId(0), h2, h1, TcpConfig::default()),
        AppId(0),
    );
    bulk(&mut sim, tcp, 10_000, SimTime::from_ms(1));
    // Flow 1: the toy h1 -> h2, five packets 100 µs apart.
    let toy = Box::new(Probe::new(h1, h2, SimTime::from_us(100))) as Box<dyn Transport>;
    let fid = sim.add_flow(toy, AppId(1));
    bulk(&mut sim, fid, 5_000, SimTime::ZERO);
    assert_eq!(fid, FlowId(1));
    sim.start();
    let mut timers = Vec::new();
    while let Some((t, e)) = sim.step() {
        if let Event::Timer { flow, kind } = e {
            if flow == fid {
                timers.push((t, kind));
            }
        }
    }
    // The first packet went with the write; the timer sent the other four.
    let at = |us| (SimTime::from_us(us), SEND);
    assert_eq!(timers, vec![at(100), at(200), at(300), at(400)]);
    // 1 040 bytes take 8.32 µs per hop, plus 5 µs of wire: the fifth packet, sent at
    // 400 µs, is delivered 26.64 µs later.
    let done = sim
        .hosts
        .completions
        .iter()
        .find(|c| c.flow == fid)
        .unwrap();
    assert_eq!(
        (done.bytes, done.start, done.end),
        (5_000, SimTime::ZERO, SimTime(426_640_000))
    );
    assert_eq!(sim.check_run(), Ok(()));

    let t = crate::output::flows(&sim);
    let mut want = vec!["flow", "app", "src", "dst", "transport", "delivered_bytes"];
    want.extend(["segs_sent", "retransmits", "timeouts", "fast_recoveries"]);
    want.extend([
        "dup_acks_sent",
        "srtt_s",
        "cwnd_bytes",
        "ece_received",
        "cwr_sent",
    ]);
    want.extend(["ecn_reductions", "ce_received", "alpha", "probe_acks"]);
    assert_eq!(names(&t), want);
    let s = |v: &[&str]| Column::Str(v.iter().map(|x| x.to_string()).collect());
    assert_eq!(column(&t, "transport"), &s(&["tcp", "probe"]));
    assert_eq!(column(&t, "src"), &s(&["h2", "h1"]));
    assert_eq!(column(&t, "app"), &Column::I64(vec![0, 1]));
    assert_eq!(
        column(&t, "delivered_bytes"),
        &Column::I64(vec![10_000, 5_000])
    );
    assert_eq!(
        column(&t, "probe_acks"),
        &Column::OptI64(vec![None, Some(5)])
    );
    assert_eq!(
        column(&t, "segs_sent"),
        &Column::OptI64(vec![Some(7), None])
    );
    match column(&t, "alpha") {
        Column::F64(v) => assert!(v[0] == -1.0 && v[1].is_nan()),
        c => panic!("alpha: {c:?}"),
    }
}

#[test]
fn a_table_of_tcp_flows_alone_keeps_its_columns() {
    let (mut sim, h1, h2) = two_hosts();
    let f = sim.add_flow(
        TcpFlow::new(FlowId(0), h1, h2, TcpConfig::default()),
        AppId(0),
    );
    bulk(&mut sim, f, 3_000, SimTime::ZERO);
    sim.start();
    sim.run(&mut |_| true);
    let t = crate::output::flows(&sim);
    assert!(!names(&t).contains(&"transport"));
    assert_eq!(names(&t).len(), 17);
    assert_eq!(column(&t, "segs_sent"), &Column::I64(vec![3]));
    assert_eq!(column(&t, "flow"), &Column::I64(vec![0]));
}

#[test]
fn a_udp_flow_is_paced_at_its_rate_and_completes() {
    let (mut sim, h1, h2) = two_hosts();
    let tcp = sim.add_flow(
        TcpFlow::new(FlowId(0), h1, h2, TcpConfig::default()),
        AppId(0),
    );
    bulk(&mut sim, tcp, 10_000, SimTime::from_ms(5));
    // 10 datagrams of 1 472 bytes (1 500 on the wire) at 100 Mb/s: one per 120 µs.
    let udp = UdpFlow::new(h1, h2, RateBps(100_000_000), 1500, 28);
    let fid = sim.add_flow(udp, AppId(1));
    bulk(&mut sim, fid, 14_720, SimTime::ZERO);
    sim.start();
    sim.run(&mut |_| true);
    // The tenth leaves at 1 080 µs and takes 2 · (12 + 5) µs to arrive.
    let done = sim
        .hosts
        .completions
        .iter()
        .find(|c| c.flow == fid)
        .unwrap();
    assert_eq!(done.end, SimTime::from_us(1_114));
    let Endpoint::Udp(u) = &sim.hosts.flows[fid.0 as usize] else {
        panic!("a UDP endpoint")
    };
    assert_eq!(
        (u.datagrams_sent, u.datagrams_received, u.received),
        (10, 10, 14_720)
    );
    assert_eq!(sim.check_run(), Ok(()));
    let t = crate::output::flows(&sim);
    let s = |v: &[&str]| Column::Str(v.iter().map(|x| x.to_string()).collect());
    assert_eq!(column(&t, "transport"), &s(&["tcp", "udp"]));
    // TCP and UDP share `segs_sent`; `datagrams_received` is UDP's own.
    assert_eq!(column(&t, "segs_sent"), &Column::I64(vec![7, 10]));
    assert_eq!(
        column(&t, "datagrams_received"),
        &Column::OptI64(vec![None, Some(10)])
    );
    assert_eq!(column(&t, "timeouts"), &Column::OptI64(vec![Some(0), None]));
}

#[test]
fn a_table_without_flows_has_the_tcp_columns() {
    let (sim, _, _) = two_hosts();
    let t = crate::output::flows(&sim);
    assert_eq!(names(&t).len(), 17);
    assert_eq!(names(&t)[4..6], ["delivered_bytes", "segs_sent"]);
    assert_eq!(column(&t, "alpha"), &Column::F64(vec![]));
    assert!(t.columns.iter().all(|(_, c)| c.is_empty()));
}

//! Tests of the transport seam: the lazy timer, the TCP and UDP kinds driven through the
//! contract with scripted packets and times, and the dispatch of [`Endpoint`].

use super::*;
use crate::base::packet::Kind;
use crate::base::units::RateBps;
use crate::model::tcp::{TcpConfig, TcpFlow};

fn us(n: u64) -> SimTime {
    SimTime::from_us(n)
}

#[test]
fn the_endpoint_enum_is_no_larger_than_a_tcp_flow() {
    // The hot path indexes `Hosts::flows` by flow id: the kinds beside TCP must not widen
    // its stride (the UDP flow and the extension box fit beside TCP's niche).
    assert_eq!(
        std::mem::size_of::<Endpoint>(),
        std::mem::size_of::<TcpFlow>()
    );
    assert!(std::mem::size_of::<udp::UdpFlow>() < std::mem::size_of::<TcpFlow>());
}

#[test]
fn a_lazy_timer_holds_one_event_and_ignores_stale_and_early_ones() {
    let mut t = LazyTimer::default();
    assert_eq!(t.take_event(), None, "disarmed: no event");
    t.set(us(10));
    assert_eq!(t.take_event(), Some(us(10)));
    assert_eq!(t.take_event(), None, "one event per deadline");
    // Later deadline: the event at 10 stays, fires early and asks for a new one.
    t.set(us(15));
    assert_eq!(t.take_event(), None);
    assert!(!t.fire(us(10)));
    assert_eq!(t.take_event(), Some(us(15)));
    // Earlier deadline: a new event; the one at 15 is then stale.
    t.set(us(12));
    assert_eq!(t.take_event(), Some(us(12)));
    assert!(t.fire(us(12)));
    assert!(!t.armed());
    assert!(!t.fire(us(15)), "stale");
    assert_eq!(t.take_event(), None);
}

fn udp_flow() -> udp::UdpFlow {
    // 1 500-byte datagrams (28 of headers) at 100 Mb/s: one per 120 µs.
    let mut f = udp::UdpFlow::new(NodeId(0), NodeId(2), RateBps(100_000_000), 1500, 28);
    Transport::set_id(&mut f, FlowId(3));
    f
}

#[test]
fn a_udp_sender_paces_what_is_written_and_the_last_datagram_is_short() {
    let mut f = udp_flow();
    let mut out = Vec::new();
    f.app_write(us(0), 3000, &mut out);
    assert_eq!(out.len(), 1, "an idle sender sends at once");
    let p = out[0];
    assert_eq!(
        (p.flow, p.src, p.dst, p.kind),
        (FlowId(3), NodeId(0), NodeId(2), Kind::Data)
    );
    assert_eq!((p.seq, p.size, p.payload), (0, 1500, 1472));
    assert_eq!(f.next_timer(), Some((udp::PACE, us(120))));
    assert_eq!(f.next_timer(), None);
    out.clear();
    assert!(!f.timer_due(us(100), udp::PACE), "not the event's time");
    assert!(f.timer_due(us(120), udp::PACE));
    assert_eq!(f.on_timer(us(120), udp::PACE, &mut out), NodeId(0));
    assert_eq!((out[0].seq, out[0].payload), (1472, 1472));
    assert_eq!(f.next_timer(), Some((udp::PACE, us(240))));
    out.clear();
    assert!(f.timer_due(us(240), udp::PACE));
    f.on_timer(us(240), udp::PACE, &mut out);
    // 3000 - 2·1472 = 56 bytes left: a 84-byte datagram, 6.72 µs at 100 Mb/s.
    assert_eq!((out[0].seq, out[0].size, out[0].payload), (2944, 84, 56));
    assert_eq!(f.next_timer(), None, "nothing left to send");
    assert_eq!((f.written(), f.sent, f.datagrams_sent), (3000, 3000, 3));
    assert_eq!(f.next_send, us(240) + SimTime(6_720_000));
    // A write while the last datagram's pacing runs waits for it.
    out.clear();
    f.app_write(us(241), 10, &mut out);
    assert!(out.is_empty());
    assert_eq!(f.next_timer(), Some((udp::PACE, SimTime(246_720_000))));
}

#[test]
fn a_udp_receiver_counts_what_arrives_and_sends_nothing_back() {
    let mut s = udp_flow();
    let mut r = udp_flow();
    let mut out = Vec::new();
    s.app_write(us(0), 2000, &mut out);
    s.pacing.fire(us(0));
    let mut back = Vec::new();
    r.on_data(us(30), &out[0], &mut back);
    assert!(back.is_empty());
    assert_eq!(r.delivered(), 1472);
    r.on_feedback(us(31), &out[0], &mut back);
    assert!(back.is_empty());
    assert_eq!(r.counters(), FlowCounters::default());
    assert_eq!(r.window(), None);
    let mut row = FlowRow::default();
    Transport::row(&r, &mut row);
    assert_eq!(
        row.cells,
        vec![
            ("segs_sent", Cell::I64(0)),
            ("datagrams_received", Cell::I64(1))
        ]
    );
    // The receiver's copy got more than its own sender sent: the self-check says so.
    assert!(r
        .check()
        .unwrap_err()
        .starts_with("flow 3: received 1472 sent 0"));
    assert_eq!(s.check(), Ok(()));
}

fn tcp_flow() -> Endpoint {
    let mut e = Endpoint::from(TcpFlow::new(
        FlowId(0),
        NodeId(0),
        NodeId(1),
        TcpConfig::default(),
    ));
    e.set_id(FlowId(5));
    e
}

#[test]
fn tcp_through_the_contract_arms_its_retransmission_timer_and_names_its_hosts() {
    let mut e = tcp_flow();
    assert_eq!(e.kind_name(), "tcp");
    assert_eq!((e.src(), e.dst()), (NodeId(0), NodeId(1)));
    let mut out = Vec::new();
    e.app_write(SimTime::ZERO, 3000, &mut out);
    assert!(!out.is_empty() && out.iter().all(|p| p.flow == FlowId(5)));
    assert_eq!(e.written(), 3000);
    let rto = e.tcp().unwrap().snd.rto;
    assert_eq!(e.next_timer(), Some((tcp::RTO, rto)));
    assert_eq!(e.next_timer(), None);
    // The first segment reaches the receiver: its ACK is delayed or sent at once; either
    // way the contract reports what the receiver holds.
    let mut back = Vec::new();
    e.on_data(us(10), &out[0], &mut back);
    assert_eq!(e.delivered(), out[0].payload as u64);
    // The RTO fires at its time: run through the contract, sent from the sender's host.
    assert!(!e.timer_due(rto - SimTime(1), tcp::RTO));
    assert!(e.timer_due(rto, tcp::RTO));
    let mut rtx = Vec::new();
    assert_eq!(e.on_timer(rto, tcp::RTO, &mut rtx), NodeId(0));
    assert_eq!(e.counters().timeouts, 1);
    assert_eq!(rtx[0].seq, 0, "the timeout resends from snd_una");
    let w = e.window().unwrap();
    assert_eq!((w.cwnd, w.alpha), (e.tcp().unwrap().snd.cwnd, -1.0));
    assert_eq!(e.check(), Ok(()));
}

#[test]
fn tcp_reports_its_columns_of_the_flows_table_in_order() {
    let e = tcp_flow();
    let mut row = FlowRow::default();
    e.row(&mut row);
    let names: Vec<&str> = row.cells.iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        [
            "segs_sent",
            "retransmits",
            "timeouts",
            "fast_recoveries",
            "dup_acks_sent",
            "srtt_s",
            "cwnd_bytes",
            "ece_received",
            "cwr_sent",
            "ecn_reductions",
            "ce_received",
            "alpha"
        ]
    );
    assert_eq!(row.cells[6].1, Cell::I64(2 * 1460));
    assert_eq!(row.cells[11].1, Cell::F64(-1.0));
}

/// A kind outside the registry: one packet per write, no timers.
#[derive(Clone, Debug, Default)]
struct Echo {
    id: FlowId,
    got: u64,
}

impl Transport for Echo {
    fn kind_name(&self) -> &'static str {
        "echo"
    }
    fn set_id(&mut self, id: FlowId) {
        self.id = id;
    }
    fn src(&self) -> NodeId {
        NodeId(7)
    }
    fn dst(&self) -> NodeId {
        NodeId(8)
    }
    fn set_class(&mut self, _: u8) {}
    fn on_data(&mut self, _: SimTime, p: &Packet, _: &mut Vec<Packet>) {
        self.got += p.payload as u64;
    }
    fn on_feedback(&mut self, _: SimTime, _: &Packet, _: &mut Vec<Packet>) {}
    fn app_write(&mut self, _: SimTime, _: u64, _: &mut Vec<Packet>) {}
    fn written(&self) -> u64 {
        0
    }
    fn delivered(&self) -> u64 {
        self.got
    }
    fn next_timer(&mut self) -> Option<(TimerKind, SimTime)> {
        None
    }
    fn timer_due(&mut self, _: SimTime, _: TimerKind) -> bool {
        false
    }
    fn on_timer(&mut self, _: SimTime, _: TimerKind, _: &mut Vec<Packet>) -> NodeId {
        NodeId(7)
    }
    fn counters(&self) -> FlowCounters {
        FlowCounters {
            timeouts: self.id.0 as u64,
            ..FlowCounters::default()
        }
    }
    fn row(&self, row: &mut FlowRow) {
        row.i64("echoed", self.got as i64);
    }
}

#[test]
fn an_extension_kind_dispatches_through_the_box_and_clones() {
    let mut e = Endpoint::from(Box::new(Echo::default()) as Box<dyn Transport>);
    e.set_id(FlowId(9));
    assert_eq!(
        (e.kind_name(), e.src(), e.dst()),
        ("echo", NodeId(7), NodeId(8))
    );
    assert!(e.tcp().is_none());
    let mut p = udp_flow();
    let mut out = Vec::new();
    p.app_write(SimTime::ZERO, 100, &mut out);
    e.on_data(SimTime::ZERO, &out[0], &mut Vec::new());
    let copy = e.clone();
    e.on_data(SimTime::ZERO, &out[0], &mut Vec::new());
    assert_eq!((copy.delivered(), e.delivered()), (100, 200));
    assert_eq!(e.counters().timeouts, 9);
    let mut row = FlowRow::default();
    e.row(&mut row);
    assert_eq!(row.cells, vec![("echoed", Cell::I64(200))]);
    assert_eq!(KINDS, ["tcp", "udp", "roce"]);
}

//! Packet-script tests of the RoCEv2 queue pair: the NIC's pulls, the responder's ACKs,
//! NACKs and CNPs, and the requester's recovery, with exact times and values.

use super::cc::{FixedRate, RateControl, RoceCc};
use super::qp::*;
use crate::base::ids::{FlowId, NodeId};
use crate::base::packet::{flags, Ecn, Kind, Packet};
use crate::base::units::{RateBps, SimTime};
use crate::model::transport::roce::{cc_timer, RTO};
use crate::model::transport::{Endpoint, FlowRow, TimerKind, Transport};

fn ns(n: u64) -> SimTime {
    SimTime::from_ns(n)
}

fn us(n: u64) -> SimTime {
    SimTime::from_us(n)
}

/// 8 Gb/s: one byte per nanosecond, a full packet (1000 + 62 bytes) in 1062 ns.
const RATE: RateBps = RateBps(8_000_000_000);

fn flow(cfg: RoceConfig) -> RoceFlow {
    let cc = RoceCc::Fixed(FixedRate { rate: RATE });
    let mut f = RoceFlow::new(NodeId(0), NodeId(5), cfg, cc);
    f.set_id(FlowId(7));
    f
}

/// Write `bytes` as one message and let the NIC pull every packet it may, each as soon as
/// the limiter allows from `start` on; returns the packets.
fn pull_all(f: &mut RoceFlow, start: SimTime) -> Vec<Packet> {
    let mut v = Vec::new();
    while let Some(t) = f.nic_ready() {
        let p = f.nic_pull(t.max(start)).expect("ready means a packet");
        v.push(p);
    }
    v
}

/// The responder takes `pkts` at `now`; returns what it sends back.
fn deliver(f: &mut RoceFlow, now: SimTime, pkts: &[Packet]) -> Vec<Packet> {
    let mut out = Vec::new();
    for p in pkts {
        f.on_data(now, p, &mut out);
    }
    out
}

fn feedback(f: &mut RoceFlow, now: SimTime, pkts: &[Packet]) {
    let mut out = Vec::new();
    for p in pkts {
        f.on_feedback(now, p, &mut out);
    }
    assert!(out.is_empty(), "the requester sends only when pulled");
}

#[test]
fn a_message_leaves_at_line_rate_spaced_by_the_limiter() {
    let mut f = flow(RoceConfig::default());
    assert_eq!(f.nic_ready(), None, "nothing written");
    let mut out = Vec::new();
    f.app_write(us(0), 3500, &mut out);
    assert!(out.is_empty(), "a write sends nothing by itself");
    assert_eq!(f.nic_ready(), Some(SimTime::ZERO));
    let mut got = Vec::new();
    let mut t = SimTime::ZERO;
    while let Some(ready) = f.nic_ready() {
        assert_eq!(ready, t);
        if t > SimTime::ZERO {
            assert_eq!(f.nic_pull(t - SimTime(1)), None, "the limiter holds it");
        }
        let p = f.nic_pull(t).unwrap();
        t = t + RATE.tx_time(p.size);
        got.push(p);
    }
    let fields: Vec<_> = got
        .iter()
        .map(|p| (p.seq, p.payload, p.size, p.flags))
        .collect();
    assert_eq!(
        fields,
        vec![
            (0, 1000, 1062, 0),
            (1000, 1000, 1062, 0),
            (2000, 1000, 1062, 0),
            (3000, 500, 562, flags::FIN),
        ]
    );
    let starts: Vec<_> = got.iter().map(|p| p.sent_time).collect();
    assert_eq!(starts, vec![ns(0), ns(1062), ns(2124), ns(3186)]);
    for p in &got {
        assert_eq!((p.kind, p.ecn, p.class), (Kind::Data, Ecn::Ect0, 1));
        assert_eq!((p.flow, p.src, p.dst), (FlowId(7), NodeId(0), NodeId(5)));
    }
    assert_eq!(f.sender.segs_sent, 4);
    // Two messages: a packet never spans both, the first one's last packet is marked.
    let mut f = flow(RoceConfig::default());
    f.app_write(us(0), 1500, &mut out);
    f.app_write(us(0), 700, &mut out);
    let got = pull_all(&mut f, SimTime::ZERO);
    let fields: Vec<_> = got.iter().map(|p| (p.seq, p.payload, p.flags)).collect();
    assert_eq!(
        fields,
        vec![
            (0, 1000, 0),
            (1000, 500, flags::FIN),
            (1500, 700, flags::FIN)
        ]
    );
}

#[test]
fn the_responder_acks_each_packet_or_every_n_and_always_a_message_end() {
    let mut f = flow(RoceConfig::default());
    f.app_write(us(0), 3000, &mut Vec::new());
    let pkts = pull_all(&mut f, SimTime::ZERO);
    let acks = deliver(&mut f, us(3), &pkts);
    let fields: Vec<_> = acks.iter().map(|a| (a.ack, a.seq, a.flags)).collect();
    // Each ACK echoes its packet's transmit timestamp (in ps) in `seq`.
    assert_eq!(
        fields,
        vec![(1000, 0, 0), (2000, 1_062_000, 0), (3000, 2_124_000, 0)]
    );
    for a in &acks {
        assert_eq!((a.kind, a.size, a.class), (Kind::Ack, ACK_SIZE, 0));
        assert_eq!((a.src, a.dst, a.sent_time), (NodeId(5), NodeId(0), us(3)));
    }
    feedback(&mut f, us(4), &acks[..1]);
    assert_eq!((f.sender.snd_una, f.sender.last_rtt), (1000, us(4)));
    feedback(&mut f, us(4), &acks[1..]);
    assert_eq!(f.sender.snd_una, 3000);
    assert_eq!(f.sender.last_rtt, us(4) - ns(2124));
    assert_eq!(f.sender.rto.deadline, SimTime::NEVER, "all acknowledged");
    // Every 2 packets: 5 packets give ACKs after the 2nd, the 4th and the last.
    let mut f = flow(RoceConfig {
        ack_every: 2,
        ..RoceConfig::default()
    });
    f.app_write(us(0), 5000, &mut Vec::new());
    let pkts = pull_all(&mut f, SimTime::ZERO);
    let mut acked = Vec::new();
    for p in &pkts {
        let a = deliver(&mut f, us(9), std::slice::from_ref(p));
        acked.push(a.first().map(|a| a.ack));
    }
    assert_eq!(acked, vec![None, Some(2000), None, Some(4000), Some(5000)]);
    assert_eq!((f.delivered(), f.receiver.acks_sent), (5000, 3));
    assert_eq!(f.check(), Ok(()));
}

#[test]
fn go_back_n_nacks_a_gap_once_and_resends_from_the_hole() {
    let mut f = flow(RoceConfig::default());
    f.app_write(us(0), 5000, &mut Vec::new());
    let pkts = pull_all(&mut f, SimTime::ZERO);
    assert_eq!(pkts.len(), 5);
    // Packet 1 (bytes 1000..2000) is lost.
    let back = deliver(&mut f, us(5), &[pkts[0], pkts[2], pkts[3], pkts[4]]);
    let fields: Vec<_> = back.iter().map(|a| (a.ack, a.flags)).collect();
    assert_eq!(
        fields,
        vec![(1000, 0), (1000, flags::NACK)],
        "one NACK per gap"
    );
    assert_eq!(back[1].seq, pkts[2].sent_time.ps());
    assert_eq!((f.delivered(), f.receiver.ooo_received), (1000, 3));
    assert_eq!(f.receiver.nacks_sent, 1);
    feedback(&mut f, us(6), &back);
    assert_eq!((f.sender.snd_una, f.sender.snd_nxt), (1000, 1000));
    assert_eq!(
        f.nic_ready(),
        Some(ns(5 * 1062)),
        "the limiter still counts"
    );
    let resent = pull_all(&mut f, us(6));
    let seqs: Vec<_> = resent.iter().map(|p| p.seq).collect();
    assert_eq!(
        seqs,
        vec![1000, 2000, 3000, 4000],
        "everything from the hole"
    );
    assert_eq!(resent[0].sent_time, us(6));
    assert_eq!(resent[1].sent_time, us(6) + ns(1062));
    // Each byte is delivered once, in order.
    let mut delivered = vec![f.delivered()];
    for p in &resent {
        let a = deliver(&mut f, us(8), std::slice::from_ref(p));
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].ack, a[0].flags), (p.seq + 1000, 0));
        delivered.push(f.delivered());
    }
    assert_eq!(delivered, vec![1000, 2000, 3000, 4000, 5000]);
    assert_eq!(f.receiver.dup_received, 0);
    let c = f.counters();
    assert_eq!((c.retransmits, c.fast_recoveries, c.timeouts), (4, 1, 0));
    assert_eq!(f.sender.segs_sent, 9);
    assert_eq!(f.check(), Ok(()));
}

fn selective() -> RoceConfig {
    RoceConfig {
        recovery: LossRecovery::SelectiveRepeat,
        ..RoceConfig::default()
    }
}

#[test]
fn selective_repeat_resends_only_the_hole() {
    let mut f = flow(selective());
    f.app_write(us(0), 5000, &mut Vec::new());
    let pkts = pull_all(&mut f, SimTime::ZERO);
    let back = deliver(&mut f, us(5), &[pkts[0], pkts[2], pkts[3], pkts[4]]);
    let fields: Vec<_> = back
        .iter()
        .map(|a| (a.ack, a.flags, a.sack.decode(a.ack).collect::<Vec<_>>()))
        .collect();
    // A NACK for each out-of-order packet, its own block first.
    assert_eq!(
        fields,
        vec![
            (1000, 0, vec![]),
            (1000, flags::NACK, vec![(2000, 3000)]),
            (1000, flags::NACK, vec![(2000, 4000)]),
            (1000, flags::NACK, vec![(2000, 5000)]),
        ]
    );
    assert_eq!(
        (f.delivered(), &f.receiver.ooo[..]),
        (1000, &[(2000, 5000)][..])
    );
    feedback(&mut f, us(6), &back);
    assert!(f.sender.in_recovery);
    assert_eq!(f.sender.sacked, vec![(2000, 5000)]);
    let resent = pull_all(&mut f, us(6));
    assert_eq!(resent.len(), 1, "only the hole");
    assert_eq!((resent[0].seq, resent[0].payload), (1000, 1000));
    let a = deliver(&mut f, us(7), &resent);
    assert_eq!((a.len(), a[0].ack, a[0].flags), (1, 5000, 0));
    assert!(a[0].sack.is_empty());
    assert_eq!(f.delivered(), 5000);
    feedback(&mut f, us(8), &a);
    assert!(!f.sender.in_recovery);
    assert_eq!((f.sender.snd_una, f.sender.sacked.len()), (5000, 0));
    let c = f.counters();
    assert_eq!((c.retransmits, c.fast_recoveries, c.timeouts), (1, 1, 0));
    assert_eq!(f.check(), Ok(()));
}

#[test]
fn a_lost_last_packet_is_recovered_by_the_timeout() {
    for cfg in [RoceConfig::default(), selective()] {
        let mut f = flow(cfg);
        f.app_write(us(0), 2000, &mut Vec::new());
        let pkts = pull_all(&mut f, SimTime::ZERO);
        // Armed when the first packet left; restarted by the ACK of the first.
        let first = if cfg.recovery == LossRecovery::GoBackN {
            cfg.rto
        } else {
            cfg.irn.low
        };
        assert_eq!(f.next_timer(), Some((RTO, first)));
        let a = deliver(&mut f, us(3), &pkts[..1]);
        feedback(&mut f, us(4), &a);
        let at = us(4) + first;
        assert_eq!(f.sender.rto.deadline, at);
        assert_eq!(f.next_timer(), None, "the event at `first` stands");
        assert_eq!(f.nic_ready(), None, "all sent, nothing to resend yet");
        assert!(
            !f.timer_due(first, RTO),
            "the moved deadline: an early event"
        );
        assert_eq!(f.next_timer(), Some((RTO, at)));
        assert!(f.timer_due(at, RTO));
        let mut out = Vec::new();
        assert_eq!(f.on_timer(at, RTO, &mut out), NodeId(0));
        assert!(out.is_empty());
        let resent = pull_all(&mut f, at);
        let fields: Vec<_> = resent
            .iter()
            .map(|p| (p.seq, p.flags, p.sent_time))
            .collect();
        assert_eq!(fields, vec![(1000, flags::FIN, at)]);
        let a = deliver(&mut f, at + us(2), &resent);
        assert_eq!(a[0].ack, 2000);
        feedback(&mut f, at + us(3), &a);
        assert_eq!((f.delivered(), f.sender.snd_una), (2000, 2000));
        let c = f.counters();
        assert_eq!((c.timeouts, c.retransmits), (1, 1));
        assert_eq!(f.check(), Ok(()));
    }
}

#[test]
fn irn_times_out_high_with_more_than_n_packets_outstanding() {
    let mut f = flow(selective());
    f.app_write(us(0), 10_000, &mut Vec::new());
    let pkts = pull_all(&mut f, SimTime::ZERO);
    assert_eq!(
        f.next_timer(),
        Some((RTO, us(100))),
        "one packet out: RTO_low"
    );
    let a = deliver(&mut f, us(20), &pkts[..1]);
    feedback(&mut f, us(20), &a);
    // 9 packets outstanding > N = 3: RTO_high.
    assert_eq!(f.sender.rto.deadline, us(340));
    // 3 outstanding: RTO_low again.
    let a = deliver(&mut f, us(30), &pkts[1..7]);
    feedback(&mut f, us(30), &a[5..]);
    assert_eq!((f.sender.snd_una, f.sender.rto.deadline), (7000, us(130)));
}

#[test]
fn a_window_cap_stops_the_nic() {
    let mut f = flow(RoceConfig {
        window: Some(2000),
        ..RoceConfig::default()
    });
    f.app_write(us(0), 5000, &mut Vec::new());
    let pkts = pull_all(&mut f, SimTime::ZERO);
    assert_eq!(pkts.len(), 2);
    assert_eq!((f.in_flight(), f.nic_ready()), (2000, None));
    assert_eq!(f.nic_pull(us(50)), None);
    let a = deliver(&mut f, us(3), &pkts[..1]);
    feedback(&mut f, us(4), &a);
    assert_eq!(
        f.nic_ready(),
        Some(ns(2124)),
        "a slot opened; the limiter allows it"
    );
    assert_eq!(f.nic_pull(us(4)).map(|p| p.seq), Some(2000));
    assert_eq!(f.nic_ready(), None);
}

#[test]
fn a_rate_scaled_window_follows_the_limiter() {
    // One BDP of 4 000 B at the 8 Gb/s line rate; the controller at a quarter of it allows
    // 1 000 B in flight (the HPCC authors' simulator's VAR_WIN: window × rate / line rate).
    let mut f = flow(RoceConfig {
        window: Some(4000),
        window_line: Some(RATE),
        ..RoceConfig::default()
    });
    assert_eq!(f.window_cap(), Some(4000));
    *f.cc = RoceCc::Fixed(FixedRate {
        rate: RateBps(2_000_000_000),
    });
    assert_eq!(f.window_cap(), Some(1000));
    f.app_write(us(0), 5000, &mut Vec::new());
    let pkts = pull_all(&mut f, SimTime::ZERO);
    assert_eq!((pkts.len(), f.in_flight()), (1, 1000));
    // A fixed window does not move with the rate.
    f.cfg.window_line = None;
    assert_eq!(f.window_cap(), Some(4000));
}

fn ce(mut p: Packet) -> Packet {
    p.ecn = Ecn::Ce;
    p
}

#[test]
fn cnps_go_at_most_once_per_interval() {
    for (gap, cnps) in [(10, 1), (60, 2)] {
        let mut f = flow(RoceConfig::default());
        f.app_write(us(0), 2000, &mut Vec::new());
        let pkts = pull_all(&mut f, SimTime::ZERO);
        let mut back = deliver(&mut f, us(1), &[ce(pkts[0])]);
        back.extend(deliver(&mut f, us(1 + gap), &[ce(pkts[1])]));
        let cnp: Vec<_> = back.iter().filter(|p| p.flags & flags::CNP != 0).collect();
        assert_eq!(cnp.len(), cnps, "CE packets {gap} µs apart");
        let c = cnp[0];
        assert_eq!((c.kind, c.size, c.class), (Kind::Ack, CNP_SIZE, 0));
        assert_eq!((c.src, c.dst, c.sent_time), (NodeId(5), NodeId(0), us(1)));
        assert!(back.iter().all(|p| p.flags & flags::ECE == 0));
        assert_eq!(f.receiver.ce_received, 2);
        feedback(&mut f, us(80), &back);
        assert_eq!(f.sender.cnps_received, cnps as u64);
        assert_eq!((f.sender.acks_received, f.sender.snd_una), (2, 2000));
    }
}

#[test]
fn per_ack_policy_echoes_ce_on_the_next_ack() {
    let mut f = flow(RoceConfig {
        cnp: CnpPolicy::PerAck,
        ..RoceConfig::default()
    });
    f.app_write(us(0), 2000, &mut Vec::new());
    let pkts = pull_all(&mut f, SimTime::ZERO);
    let back = deliver(&mut f, us(1), &[ce(pkts[0]), pkts[1]]);
    let fields: Vec<_> = back.iter().map(|a| (a.ack, a.flags)).collect();
    assert_eq!(
        fields,
        vec![(1000, flags::ECE), (2000, 0)],
        "no CNP, the ACK echoes"
    );
    assert_eq!(f.receiver.cnps_sent, 0);
}

#[test]
fn stale_acks_and_nacks_are_ignored() {
    let mut f = flow(RoceConfig::default());
    f.app_write(us(0), 4000, &mut Vec::new());
    let pkts = pull_all(&mut f, SimTime::ZERO);
    let a = deliver(&mut f, us(2), &pkts[..2]);
    let nack = deliver(&mut f, us(2), &pkts[3..4]);
    assert_eq!((nack[0].ack, nack[0].flags), (2000, flags::NACK));
    // The ACKs arrive reordered: the later one first, the earlier is then stale.
    feedback(&mut f, us(3), &[a[1], a[0]]);
    assert_eq!((f.sender.snd_una, f.sender.stale_feedback), (2000, 1));
    feedback(&mut f, us(3), &nack);
    assert_eq!(
        (f.sender.snd_nxt, f.sender.went_back_to),
        (2000, Some(2000))
    );
    let before = f.sender.clone();
    // The same NACK again (the sender already went back there), an ACK for bytes never
    // sent, a NACK below the cumulative point, a duplicate's re-ACK.
    let mut bogus = nack[0];
    bogus.ack = 9000;
    let mut old = nack[0];
    old.ack = 1000;
    let dup = deliver(&mut f, us(4), &pkts[..1]);
    assert_eq!(
        (dup[0].ack, dup[0].flags),
        (2000, 0),
        "a duplicate is re-acknowledged"
    );
    assert_eq!(f.receiver.dup_received, 1);
    feedback(&mut f, us(5), &[nack[0], bogus, old, dup[0]]);
    assert_eq!(f.sender.stale_feedback, before.stale_feedback + 4);
    let mut s = f.sender.clone();
    s.stale_feedback = before.stale_feedback;
    assert_eq!(s, before, "nothing else changed");
    assert_eq!(f.counters().fast_recoveries, 1);
}

#[test]
fn the_limiter_follows_the_controllers_rate() {
    let mut f = flow(RoceConfig::default());
    f.app_write(us(0), 3000, &mut Vec::new());
    assert!(f.nic_pull(SimTime::ZERO).is_some());
    assert_eq!(f.nic_ready(), Some(ns(1062)));
    // Half the rate: the pending start moves to twice the spacing.
    *f.cc = RoceCc::Fixed(FixedRate {
        rate: RateBps(4_000_000_000),
    });
    assert_eq!(f.nic_ready(), Some(ns(2124)));
    assert_eq!(f.nic_pull(ns(1062)), None);
    let p = f.nic_pull(ns(2124)).unwrap();
    assert_eq!((p.seq, p.sent_time), (1000, ns(2124)));
    assert_eq!(f.nic_ready(), Some(ns(4248)));
}

#[test]
fn the_queue_pair_fits_beside_a_tcp_flow() {
    let (roce, tcp) = (
        std::mem::size_of::<RoceFlow>(),
        std::mem::size_of::<crate::model::tcp::TcpFlow>(),
    );
    assert!(roce < tcp, "queue pair {roce} B, TCP flow {tcp} B");
}

#[test]
fn the_queue_pair_is_a_registered_transport_kind() {
    let mut e = Endpoint::from(flow(RoceConfig::default()));
    assert_eq!(e.kind_name(), "roce");
    assert!(crate::model::transport::KINDS.contains(&"roce"));
    e.app_write(us(0), 1000, &mut Vec::new());
    assert_eq!(e.nic_ready(), Some(SimTime::ZERO));
    assert_eq!(e.nic_pull(SimTime::ZERO).map(|p| p.payload), Some(1000));
    assert_eq!(e.next_timer().map(|t| t.0), Some(RTO));
    assert!(
        !e.timer_due(us(1), cc_timer(0)),
        "a fixed rate has no timers"
    );
    assert!(e.pulled());
    assert_eq!(e.nic_class(), 1);
    // 3500 bytes: packets of 1000, 1000, 1000 and 500 bytes, 62 bytes of headers each.
    assert_eq!(e.wire_bytes(3500), Some((1062, 3748)));
    assert_eq!(e.wire_bytes(400), Some((462, 462)));
    let mut row = FlowRow::default();
    e.row(&mut row);
    let names: Vec<_> = row.cells.iter().map(|c| c.0).collect();
    assert_eq!(
        names,
        vec![
            "segs_sent",
            "retransmits",
            "timeouts",
            "fast_recoveries",
            "nacks_sent",
            "ce_received",
            "cnps_sent",
            "cnps_received",
            "rtt_s",
            "rate_mbps"
        ]
    );
    assert_eq!(e.check(), Ok(()));
}

#[test]
fn selective_repeat_resends_a_lost_retransmission_on_the_timeout_only() {
    let mut f = flow(selective());
    f.app_write(us(0), 6000, &mut Vec::new());
    let pkts = pull_all(&mut f, SimTime::ZERO);
    assert_eq!(f.next_timer(), Some((RTO, us(100))));
    // Packets 1 and 3 are lost: two holes, each resent once.
    let back = deliver(&mut f, us(5), &[pkts[0], pkts[2], pkts[4], pkts[5]]);
    let last = back.last().unwrap();
    let blocks: Vec<_> = last.sack.decode(last.ack).collect();
    assert_eq!(blocks, vec![(4000, 6000), (2000, 3000)]);
    feedback(&mut f, us(6), &back);
    let resent = pull_all(&mut f, us(6));
    let seqs: Vec<_> = resent.iter().map(|p| p.seq).collect();
    assert_eq!(seqs, vec![1000, 3000]);
    // The first retransmission arrives, the second is lost again: no third send until
    // the timeout (RTO_low: one packet outstanding), which resends only that hole.
    let a = deliver(&mut f, us(8), &resent[..1]);
    assert_eq!((a[0].ack, a[0].flags), (3000, 0));
    feedback(&mut f, us(9), &a);
    assert_eq!(f.nic_ready(), None);
    assert_eq!(f.sender.rto.deadline, us(109));
    assert_eq!(f.next_timer(), None, "the event at 100 µs stands");
    assert!(!f.timer_due(us(100), RTO), "early");
    let fired = us(109);
    assert_eq!(f.next_timer(), Some((RTO, fired)));
    assert!(f.timer_due(fired, RTO));
    f.on_timer(fired, RTO, &mut Vec::new());
    let again = pull_all(&mut f, fired);
    let seqs: Vec<_> = again.iter().map(|p| (p.seq, p.sent_time)).collect();
    assert_eq!(seqs, vec![(3000, fired)]);
    let a = deliver(&mut f, fired + us(2), &again);
    assert_eq!((a[0].ack, f.delivered()), (6000, 6000));
    let c = f.counters();
    assert_eq!((c.retransmits, c.timeouts, c.fast_recoveries), (3, 1, 1));
    assert_eq!(f.check(), Ok(()));
}

/// A queue pair over a lossy path (2 µs each way, data and feedback dropped by a fixed
/// pseudo-random pattern) finishes every message, whatever the recovery, ACK policy and
/// window, and its state stays consistent throughout.
#[test]
fn every_byte_arrives_over_a_lossy_path() {
    let configs = [
        (LossRecovery::GoBackN, 1, None),
        (LossRecovery::GoBackN, 3, Some(8000)),
        (LossRecovery::SelectiveRepeat, 1, None),
        (LossRecovery::SelectiveRepeat, 2, Some(8000)),
    ];
    for (recovery, ack_every, window) in configs {
        let cfg = RoceConfig {
            recovery,
            ack_every,
            window,
            ..RoceConfig::default()
        };
        let mut f = flow(cfg);
        for m in [30_000, 1, 4500, 12_345] {
            f.app_write(SimTime::ZERO, m, &mut Vec::new());
        }
        let written = f.written();
        let mut rng = 12345u64;
        let mut lost = |pct: u64| {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng >> 33) % 100 < pct
        };
        // (arrival, to the responder?, packet)
        let mut wire: Vec<(SimTime, bool, Packet)> = Vec::new();
        let mut timers: Vec<(TimerKind, SimTime)> = Vec::new();
        let mut now = SimTime::ZERO;
        let mut delivered = 0;
        for _ in 0..100_000 {
            if f.delivered() == written {
                break;
            }
            while let Some(t) = f.next_timer() {
                timers.push(t);
            }
            if f.nic_ready().is_some_and(|t| t <= now) {
                let p = f.nic_pull(now).unwrap();
                if !lost(10) {
                    wire.push((now + us(2), true, p));
                }
            }
            let mut back = Vec::new();
            let mut i = 0;
            while i < wire.len() {
                if wire[i].0 > now {
                    i += 1;
                    continue;
                }
                let (_, fwd, p) = wire.swap_remove(i);
                if fwd {
                    f.on_data(now, &p, &mut back);
                } else {
                    f.on_feedback(now, &p, &mut Vec::new());
                }
            }
            for p in back {
                if !lost(5) {
                    wire.push((now + us(2), false, p));
                }
            }
            let due: Vec<_> = timers.iter().filter(|t| t.1 <= now).copied().collect();
            timers.retain(|t| t.1 > now);
            for (k, at) in due {
                if f.timer_due(at, k) {
                    f.on_timer(at, k, &mut Vec::new());
                }
            }
            assert_eq!(f.check(), Ok(()));
            assert!(f.delivered() >= delivered, "in order, never backwards");
            delivered = f.delivered();
            while let Some(t) = f.next_timer() {
                timers.push(t);
            }
            // The next moment something happens.
            let next = [f.nic_ready().map(|t| t.max(now + SimTime(1)))]
                .into_iter()
                .flatten()
                .chain(wire.iter().map(|w| w.0))
                .chain(timers.iter().map(|t| t.1))
                .min();
            now = next.expect("something pending until all is delivered");
        }
        assert_eq!(f.delivered(), written, "{recovery:?} every {ack_every}");
        let c = f.counters();
        assert!(c.retransmits > 0 && c.fast_recoveries > 0, "{c:?}");
    }
}

#[test]
fn a_controllers_timers_and_rate_reach_the_queue_pair() {
    use super::cc::dcqcn::{Dcqcn, DcqcnConfig};
    let cc = RoceCc::Dcqcn(Dcqcn::new(DcqcnConfig::paper(RATE)));
    let mut f = RoceFlow::new(NodeId(0), NodeId(5), RoceConfig::default(), cc);
    f.app_write(us(0), 10_000, &mut Vec::new());
    f.nic_pull(SimTime::ZERO).unwrap();
    let mut cnp = f.nic_pull(ns(1062)).unwrap();
    (cnp.kind, cnp.flags) = (Kind::Ack, flags::CNP);
    f.on_feedback(us(3), &cnp, &mut Vec::new());
    assert_eq!(f.sender.cnps_received, 1);
    let rate = f.cc.rate();
    assert!(rate < RATE, "a CNP cuts DCQCN's rate");
    assert_eq!(f.nic_ready(), Some(ns(1062) + rate.tx_time(1062)));
    // The retransmission timer, then the controller's, as kinds 8 + t.
    let mut kinds = Vec::new();
    while let Some((k, at)) = f.next_timer() {
        kinds.push((k, at));
    }
    assert_eq!(kinds[0].0, RTO);
    let cc_kinds: Vec<_> = kinds[1..].iter().filter(|k| k.0 .0 >= 8).collect();
    assert!(
        !cc_kinds.is_empty() && cc_kinds.len() == kinds.len() - 1,
        "{kinds:?}"
    );
    let (k, at) = *cc_kinds[0];
    assert!(k.0 < 8 + super::cc::CC_TIMERS);
    assert!(f.timer_due(at, k));
    assert_eq!(f.on_timer(at, k, &mut Vec::new()), NodeId(0));
}

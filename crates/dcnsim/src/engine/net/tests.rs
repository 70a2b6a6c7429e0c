//! Tests of the network elements: port layout and serialisation times, the transmitter's
//! one event, and how a port applies and counts AQM verdicts.

mod port_rate_tests {
    use super::super::*;

    #[test]
    fn port_fields_a_hop_reads_come_first() {
        use std::mem::{offset_of, size_of};
        // The wire, transmitter, queue state and serialisation fields, then the counters
        // each packet updates: within the first three cache lines of a port.
        assert_eq!(offset_of!(Port, wire), 0);
        for end in [
            offset_of!(Port, tx) + size_of::<Transmitter>(),
            offset_of!(Port, mq) + 8,
            offset_of!(Port, head_out) + 4,
            offset_of!(Port, head_h) + 4,
            offset_of!(Port, peer_node) + 4,
            offset_of!(Port, aqm_at) + 1,
            offset_of!(Port, stats) + offset_of!(PortStats, max_queue_bytes) + 8,
        ] {
            assert!(end <= PORT_HOT_BYTES, "{end}");
        }
        // The rest is not bigger than before the reordering (336 bytes), plus the wire
        // head's handle and its padding.
        assert!(size_of::<Port>() <= 344, "{}", size_of::<Port>());
    }

    #[test]
    fn cached_serialisation_time_equals_the_division() {
        let mut p = Port::new(NodeId(0), NodeId(1), RateBps(10_000_000_000), SimTime::ZERO);
        for r in [
            1u64,
            3,
            999_983,
            500_000_000,
            1_000_000_000,
            8_500_000_000,
            40_000_000_000,
        ] {
            p.set_rate(RateBps(r));
            for b in [0u32, 1, 64, 84, 1500, 9000, 65_535] {
                assert_eq!(p.tx_time(b), RateBps(r).tx_time(b), "rate {r} bytes {b}");
            }
        }
        p.set_rate(RateBps(10_000_000_000));
        assert_eq!(p.ps_per_byte, 800);
        p.set_rate(RateBps(8_500_000_000));
        assert_eq!(p.ps_per_byte, 0);
    }
}

mod transmitter_tests {
    use super::super::*;
    use crate::base::ids::FlowId;
    use crate::base::packet::Kind;
    use crate::engine::net::mq_port::{MqPort, QueueMark};
    use crate::engine::sim::Sim;
    use crate::model::mq::buffer::{Admission, BufferPolicy};
    use crate::model::mq::{MultiQueue, SchedConfig};

    fn udp(seq: u64, size: u32) -> Packet {
        let ends = (NodeId(0), NodeId(1));
        Packet {
            seq,
            ..Packet::new(Kind::Udp, FlowId::NONE, ends, size, size - 28)
        }
    }

    /// Two hosts on one 1 Gb/s (12 µs per 1500 B), 5 µs link, run for 10 ms; the port a→b
    /// holds `limit` bytes.
    fn pair(limit: u64) -> (Sim, PortId) {
        crate::tests::two_hosts(SimTime::from_ms(10), limit)
    }

    fn make_multi_queue(sim: &mut Sim, pid: PortId, limit: u64) {
        let mq = MultiQueue::new(2, &SchedConfig::Sp, 8).unwrap();
        let adm = Admission::new(BufferPolicy::CompleteSharing { limit }, 2).unwrap();
        sim.net.ports[pid.idx()].mq = Some(Box::new(MqPort::new(mq, adm, QueueMark::None)));
    }

    /// Run the port by hand to the end, checking after every event that the transmit event
    /// is armed exactly while packets wait; returns how many `PortTxDone` events fired.
    fn drain(sim: &mut Sim, pid: PortId) -> usize {
        let mut fired = 0;
        while let Some((_, ev)) = sim.step() {
            if ev == Event::PortTxDone(pid) {
                fired += 1;
            }
            let port = &sim.net.ports[pid.idx()];
            let waiting = port.queue.len() + port.mq.as_ref().map_or(0, |m| m.mq.len());
            assert_eq!(port.tx.armed(), waiting > 0);
            // At most one transmit event and the wire head's arrival.
            assert!(sim.events.len() <= 2);
        }
        fired
    }

    fn one_event_for_any_backlog(multi_queue: bool, pass_through: bool) {
        let (mut sim, ab) = pair(u64::MAX);
        sim.net.mq_pass_through = pass_through;
        if multi_queue {
            make_multi_queue(&mut sim, ab, u64::MAX);
        }
        assert!(sim.net.ports[ab.idx()].tx.idle(SimTime::ZERO));
        assert_eq!(sim.enqueue(ab, udp(0, 1500)), Enqueued::Started);
        // Started at once: only the arrival is pending, no transmit event.
        assert_eq!(sim.events.len(), 1);
        assert!(!sim.net.ports[ab.idx()].tx.armed());
        assert!(!sim.net.ports[ab.idx()].tx.idle(SimTime::ZERO));
        for i in 1..20 {
            assert_eq!(sim.enqueue(ab, udp(i, 1500)), Enqueued::Queued);
            assert!(sim.net.ports[ab.idx()].tx.armed());
            assert_eq!(sim.events.len(), 2, "one transmit event after {i} queued");
        }
        assert_eq!(drain(&mut sim, ab), 19);
        assert_eq!(sim.net.absorbed, 20);
        assert_eq!(sim.net.ports[ab.idx()].stats.tx_pkts, 20);
        assert!(sim.net.ports[ab.idx()].tx.idle(sim.now));
    }

    #[test]
    fn fifo_port_keeps_one_transmit_event() {
        one_event_for_any_backlog(false, true);
    }

    #[test]
    fn multi_queue_port_keeps_one_transmit_event() {
        one_event_for_any_backlog(true, true);
        one_event_for_any_backlog(true, false);
    }

    /// Offer four 1500-B packets to port `ab`, which holds 3000 B: the first is on the wire,
    /// two wait, the fourth is dropped for `reason`.
    fn offer_four_to_3000_bytes(sim: &mut Sim, ab: PortId, reason: DropReason) {
        let got: Vec<_> = (0..4).map(|i| sim.enqueue(ab, udp(i, 1500))).collect();
        let want = [
            Enqueued::Started,
            Enqueued::Queued,
            Enqueued::Queued,
            Enqueued::Dropped(reason),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn fifo_port_reports_tail_drop_at_the_byte_limit() {
        let (mut sim, ab) = pair(3000);
        offer_four_to_3000_bytes(&mut sim, ab, DropReason::Tail);
        assert_eq!(sim.net.ports[ab.idx()].stats.drops(), 1);
        assert_eq!(drain(&mut sim, ab), 2);
        // Idle again: the next packet starts at once.
        assert_eq!(sim.enqueue(ab, udp(9, 1500)), Enqueued::Started);
    }

    #[test]
    fn multi_queue_port_reports_buffer_drop() {
        let (mut sim, ab) = pair(u64::MAX);
        make_multi_queue(&mut sim, ab, 3000);
        offer_four_to_3000_bytes(&mut sim, ab, DropReason::Buffer);
        assert_eq!(drain(&mut sim, ab), 2);
    }

    #[test]
    fn a_paused_port_queues_and_arms_for_now() {
        // A PAUSE in force: the idle transmitter does not start a data frame; the frame is
        // queued and the transmit event armed for `now` (layer 2 then holds it).
        let (mut sim, ab) = pair(u64::MAX);
        sim.net.ports[ab.idx()].paused_until = SimTime::from_us(100);
        assert!(sim.net.ports[ab.idx()].tx.idle(SimTime::ZERO));
        assert!(!sim.net.ports[ab.idx()].may_start_data(SimTime::ZERO));
        assert_eq!(sim.enqueue(ab, udp(0, 1500)), Enqueued::Queued);
        assert_eq!(sim.events.len(), 1);
        assert_eq!(
            sim.events.pop(),
            Some((SimTime::ZERO, Event::PortTxDone(ab)))
        );
    }
}

mod verdict_tests {
    use super::super::*;
    use crate::base::ids::FlowId;
    use crate::base::packet::Kind;
    use crate::base::rng::Rng;
    use crate::engine::net::mq_port::{MqPort, QueueMark};
    use crate::engine::sim::Sim;
    use crate::model::aqm::codel::{Codel, CodelConfig};
    use crate::model::aqm::{QueueUnit, Red, RedParams};
    use crate::model::mq::buffer::{Admission, BufferPolicy};
    use crate::model::mq::sched::FlowKey;
    use crate::model::mq::{MultiQueue, SchedConfig};

    fn pkt(seq: u64, ecn: Ecn) -> Packet {
        let ends = (NodeId(0), NodeId(1));
        Packet {
            seq,
            ecn,
            ..Packet::new(Kind::Data, FlowId(0), ends, 1500, 1460)
        }
    }

    #[test]
    fn a_mark_sets_ce_on_ect_packets_and_follows_the_markers_rule_otherwise() {
        for by in MarkReason::ALL {
            for ecn in [Ecn::Ect0, Ecn::Ce] {
                let (mut st, mut q) = (PortStats::default(), ReasonCounts::default());
                let mut p = pkt(0, ecn);
                let v = apply_verdict(Verdict::Mark, by, &mut p, &mut st, Some(&mut q));
                assert_eq!(v, Verdict::Mark, "{by:?} {ecn:?}");
                assert_eq!(p.ecn, Ecn::Ce);
                assert_eq!(st.by.marks[by as usize], 1);
                assert_eq!((st.marks(), st.drops(), q.marks_total()), (1, 0, 1));
            }
            // Not ECN-capable: RED (and CoDel) drop, the other markers let it pass.
            let (mut st, mut q) = (PortStats::default(), ReasonCounts::default());
            let mut p = pkt(0, Ecn::NotEct);
            let v = apply_verdict(Verdict::Mark, by, &mut p, &mut st, Some(&mut q));
            assert_eq!(p.ecn, Ecn::NotEct, "{by:?}");
            assert_eq!(st.marks(), 0);
            let dropped = matches!(by, MarkReason::Red | MarkReason::Codel);
            assert_eq!(v == Verdict::Drop, dropped, "{by:?}");
            assert_eq!(v == Verdict::Pass, !dropped, "{by:?}");
            if dropped {
                assert_eq!(st.by.drops[by.drop_reason() as usize], 1);
                assert_eq!((st.drops(), st.drop_bytes, q.drops_total()), (1, 1500, 1));
                assert_eq!(st.aqm_drops(), 1);
            } else {
                assert_eq!((st.drops(), q.drops_total()), (0, 0));
            }
            // Pass changes nothing; Drop counts under the marker's drop reason.
            let mut st = PortStats::default();
            let mut p = pkt(0, Ecn::Ect0);
            assert_eq!(
                apply_verdict(Verdict::Pass, by, &mut p, &mut st, None),
                Verdict::Pass
            );
            assert_eq!((p.ecn, st.clone()), (Ecn::Ect0, PortStats::default()));
            assert_eq!(
                apply_verdict(Verdict::Drop, by, &mut p, &mut st, None),
                Verdict::Drop
            );
            assert_eq!(p.ecn, Ecn::Ect0);
            assert_eq!(st.by.drops[by.drop_reason() as usize], 1);
        }
        assert_eq!(MarkReason::Codel.drop_reason(), DropReason::Codel);
        assert_eq!(MarkReason::Red.drop_reason(), DropReason::Aqm);
    }

    #[test]
    fn reasons_are_closed_and_named_once() {
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
        for (i, r) in MarkReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
        let mut names: Vec<&str> = DropReason::ALL.iter().map(|r| r.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), DropReason::COUNT);
        let mut names: Vec<&str> = MarkReason::ALL.iter().map(|r| r.name()).collect();
        names.push(MarkReason::Extension.name());
        names.sort();
        names.dedup();
        // The built-ins' columns, and the extensions' slot after them.
        assert_eq!(names.len(), MarkReason::COUNT);
        assert_eq!(MarkReason::Extension as usize, MarkReason::ALL.len());
    }

    /// Two hosts on one 1 Gb/s (12 µs per 1500 B), 5 µs link, run for 50 ms; the port a→b
    /// holds `limit` bytes.
    fn pair(limit: u64) -> (Sim, PortId) {
        crate::tests::two_hosts(SimTime::from_ms(50), limit)
    }

    fn multi_queue(sim: &mut Sim, pid: PortId, sched: SchedConfig, limit: u64, mark: QueueMark) {
        let n = 2;
        let mq = MultiQueue::new(n, &sched, 8).unwrap();
        let adm = Admission::new(BufferPolicy::CompleteSharing { limit }, n).unwrap();
        sim.net.ports[pid.idx()].mq = Some(Box::new(MqPort::new(mq, adm, mark)));
    }

    /// Offer `n` packets at t = 0 with codepoint `ecn`, checking conservation after each
    /// offer and after every event until the port is drained; returns the port's counters.
    fn offer_and_drain(sim: &mut Sim, pid: PortId, n: u64, ecn: Ecn) -> PortStats {
        for i in 0..n {
            let p = Packet {
                flow: FlowId::NONE,
                kind: Kind::Udp,
                ..pkt(i, ecn)
            };
            sim.enqueue(pid, p);
            assert_eq!(sim.net.ports[pid.idx()].conservation(), Ok(()));
        }
        while sim.step().is_some() {
            assert_eq!(sim.check_conservation(), Ok(()));
        }
        let port = &sim.net.ports[pid.idx()];
        assert_eq!(port.queued_pkts(), 0);
        assert_eq!(port.stats.arrived, n);
        assert_eq!(port.stats.tx_pkts + port.stats.drops(), n);
        port.stats.clone()
    }

    fn only(counts: &[u64], i: usize) -> bool {
        counts.iter().enumerate().all(|(k, &c)| (k == i) == (c > 0))
    }

    #[test]
    fn conservation_holds_after_tail_drops() {
        let (mut sim, ab) = pair(3000);
        let st = offer_and_drain(&mut sim, ab, 6, Ecn::NotEct);
        // One on the wire, two wait, three dropped.
        assert_eq!(st.by.drops[DropReason::Tail as usize], 3);
        assert!(only(&st.by.drops, DropReason::Tail as usize));
    }

    #[test]
    fn conservation_holds_after_red_drops_and_marks() {
        let red = || {
            Aqm::Red(Box::new(Red::new(
                RedParams {
                    min_th: 2.0,
                    max_th: 2.0,
                    unit: QueueUnit::Packets,
                    max_p: 1.0,
                    w_q: 1.0,
                    gentle: false,
                    wait: false,
                    instantaneous: true,
                    count: true,
                    mean_pkt_time: SimTime::from_us(12),
                },
                Rng::new(1, 1),
            )))
        };
        for at in [AqmAt::Enqueue, AqmAt::Dequeue] {
            let (mut sim, ab) = pair(u64::MAX);
            sim.net.ports[ab.idx()].aqm = red();
            sim.net.ports[ab.idx()].aqm_at = at;
            let st = offer_and_drain(&mut sim, ab, 8, Ecn::NotEct);
            assert!(st.by.drops[DropReason::Aqm as usize] > 0, "{at:?}");
            assert!(only(&st.by.drops, DropReason::Aqm as usize), "{at:?}");
            assert_eq!(st.marks(), 0);
            // The same arrivals, ECN-capable: marked instead, under RED.
            let (mut sim, ab) = pair(u64::MAX);
            sim.net.ports[ab.idx()].aqm = red();
            sim.net.ports[ab.idx()].aqm_at = at;
            let ect = offer_and_drain(&mut sim, ab, 8, Ecn::Ect0);
            assert_eq!(ect.drops(), 0);
            assert_eq!(
                ect.by.marks[MarkReason::Red as usize],
                st.aqm_drops(),
                "{at:?}"
            );
            assert!(only(&ect.by.marks, MarkReason::Red as usize));
        }
    }

    #[test]
    fn conservation_holds_after_buffer_drops() {
        let (mut sim, ab) = pair(u64::MAX);
        multi_queue(&mut sim, ab, SchedConfig::Sp, 3000, QueueMark::None);
        let st = offer_and_drain(&mut sim, ab, 6, Ecn::NotEct);
        assert_eq!(st.by.drops[DropReason::Buffer as usize], 3);
        assert!(only(&st.by.drops, DropReason::Buffer as usize));
        let q = &sim.net.ports[ab.idx()].mq.as_ref().unwrap().qstats[0];
        assert_eq!(q.by.drops[DropReason::Buffer as usize], 3);
    }

    #[test]
    fn conservation_holds_after_scheduler_limit_drops() {
        let (mut sim, ab) = pair(u64::MAX);
        let drr = SchedConfig::Drr {
            quantum: 1500,
            blimit: 3000,
            key: FlowKey::Src,
        };
        multi_queue(&mut sim, ab, drr, u64::MAX, QueueMark::None);
        let st = offer_and_drain(&mut sim, ab, 6, Ecn::NotEct);
        assert!(st.by.drops[DropReason::SchedulerLimit as usize] > 0);
        assert!(only(&st.by.drops, DropReason::SchedulerLimit as usize));
    }

    #[test]
    fn conservation_holds_after_codel_drops_and_marks() {
        let codel = |ecn| {
            let cfg = CodelConfig {
                target: SimTime::from_us(1),
                interval: SimTime::from_us(10),
                ecn,
                ..CodelConfig::default()
            };
            let one = || Aqm::Codel(Box::new(Codel::new(cfg).unwrap()));
            QueueMark::PerQueue {
                aqm: vec![one(), one()],
                at: AqmAt::Dequeue,
            }
        };
        let (mut sim, ab) = pair(u64::MAX);
        multi_queue(&mut sim, ab, SchedConfig::Sp, u64::MAX, codel(false));
        let st = offer_and_drain(&mut sim, ab, 20, Ecn::Ect0);
        assert!(st.by.drops[DropReason::Codel as usize] > 0);
        assert!(only(&st.by.drops, DropReason::Codel as usize));
        assert_eq!(st.aqm_drops(), st.drops());
        // With ECN, ECT packets are marked (under CoDel) and non-ECT ones still dropped.
        let (mut sim, ab) = pair(u64::MAX);
        multi_queue(&mut sim, ab, SchedConfig::Sp, u64::MAX, codel(true));
        let st = offer_and_drain(&mut sim, ab, 20, Ecn::Ect0);
        assert_eq!(st.drops(), 0);
        assert!(st.by.marks[MarkReason::Codel as usize] > 0);
        assert!(only(&st.by.marks, MarkReason::Codel as usize));
        let (mut sim, ab) = pair(u64::MAX);
        multi_queue(&mut sim, ab, SchedConfig::Sp, u64::MAX, codel(true));
        let st = offer_and_drain(&mut sim, ab, 20, Ecn::NotEct);
        assert_eq!(st.marks(), 0);
        assert!(st.by.drops[DropReason::Codel as usize] > 0);
    }

    #[test]
    fn tcn_marks_only_ect_packets_and_counts_them_under_tcn() {
        use crate::model::aqm::tcn::Tcn;
        for (ecn, marked) in [(Ecn::Ect0, true), (Ecn::NotEct, false)] {
            let (mut sim, ab) = pair(u64::MAX);
            let tcn = QueueMark::Shared {
                aqm: Aqm::Tcn(Tcn::new(SimTime::from_us(20)).unwrap()),
                at: AqmAt::Dequeue,
            };
            multi_queue(&mut sim, ab, SchedConfig::Sp, u64::MAX, tcn);
            let st = offer_and_drain(&mut sim, ab, 6, ecn);
            // Packets 0..5 leave at 0, 12, .., 60 µs: sojourn > 20 µs for 2..5.
            let want = if marked { 4 } else { 0 };
            assert_eq!(st.by.marks[MarkReason::Tcn as usize], want, "{ecn:?}");
            assert_eq!(st.marks(), want);
            assert_eq!(st.drops(), 0);
            let q = &sim.net.ports[ab.idx()].mq.as_ref().unwrap().qstats[0];
            assert_eq!(q.marks(), want);
        }
    }
}

//! The AQM recipe of `docs/extending.md`: a discipline defined here, outside the family,
//! attached through the seam as a port AQM and as a per-queue marking, with exact checks of
//! what it marked and dropped and of the reason the counters and the tables put it under.

use std::sync::{Arc, Mutex};

use crate::base::ids::{FlowId, NodeId, PortId};
use crate::base::packet::{Ecn, Kind, Packet};
use crate::base::table::{Column, Table};
use crate::base::units::SimTime;
use crate::engine::net::mq_port::{MqPort, QueueMark};
use crate::engine::net::{DropReason, ReasonCounts};
use crate::engine::sim::Sim;
use crate::model::aqm::{Aqm, AqmAt, Discipline, MarkReason, Verdict, View};
use crate::model::mq::buffer::{Admission, BufferPolicy};
use crate::model::mq::{MultiQueue, SchedConfig};

/// The toy: at dequeue, drop every `n`-th packet it sees, else mark a packet that waited
/// longer than `limit`. Logs (packet seq, verdict) and the empty-queue notices it gets.
#[derive(Clone, Debug)]
struct Toy {
    n: u64,
    limit: SimTime,
    seen: u64,
    log: Arc<Mutex<Vec<String>>>,
}

impl Discipline for Toy {
    fn dequeue(&mut self, now: SimTime, p: &Packet, _v: View<'_>) -> Verdict {
        self.seen += 1;
        let v = if self.seen.is_multiple_of(self.n) {
            Verdict::Drop
        } else if now - p.enq_time > self.limit {
            Verdict::Mark
        } else {
            Verdict::Pass
        };
        self.log.lock().unwrap().push(format!("{} {v:?}", p.seq));
        v
    }
    fn queue_empty(&mut self, idle_at: SimTime) {
        let us = idle_at.ps() / 1_000_000;
        self.log.lock().unwrap().push(format!("empty {us}us"));
    }
    fn clone_box(&self) -> Box<dyn Discipline> {
        Box::new(self.clone())
    }
}

/// A toy instance (drop every 3rd, mark above 20 µs) and its log.
fn toy() -> (Aqm, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let t = Toy {
        n: 3,
        limit: SimTime::from_us(20),
        seen: 0,
        log: log.clone(),
    };
    (Aqm::Extension(Box::new(Box::new(t))), log)
}

/// Host a → host b at 1 Gb/s (12 µs per 1500 B); the port a→b.
fn pair() -> (Sim, PortId) {
    super::two_hosts(SimTime::from_ms(10), u64::MAX)
}

/// Offer six ECN-capable 1500-B packets at t = 0 (classes 0, 1, 0, 1, ...) and run.
fn offer_six(sim: &mut Sim, pid: PortId) {
    for seq in 0..6u64 {
        let p = Packet {
            seq,
            ecn: Ecn::Ect0,
            class: (seq % 2) as u8,
            ..Packet::new(Kind::Udp, FlowId::NONE, (NodeId(0), NodeId(1)), 1500, 1460)
        };
        sim.enqueue(pid, p);
    }
    while sim.step().is_some() {}
    sim.check_conservation().unwrap();
}

fn log(l: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    l.lock().unwrap().clone()
}

/// The `marks_extension` column `reason_columns` writes for these counters, if any.
fn extension_column(rows: &[&ReasonCounts]) -> Option<Vec<i64>> {
    let mut t = Table::new("ports");
    crate::output::reason_columns(&mut t, rows.iter().copied());
    match t.get("marks_extension") {
        Some(Column::I64(v)) => Some(v.clone()),
        _ => None,
    }
}

#[test]
fn a_toy_aqm_runs_as_a_port_aqm() {
    let (mut sim, ab) = pair();
    let (aqm, l) = toy();
    sim.net.ports[ab.idx()].aqm = aqm;
    sim.net.ports[ab.idx()].aqm_at = AqmAt::Dequeue;
    offer_six(&mut sim, ab);
    // Departures at 0, 12, 24, 24, 36, 48 µs: the 3rd and 6th seen are dropped (the
    // port takes the next one at once), 3 and 4 waited 24 and 36 µs > 20 µs. The port
    // tells it its queue is empty when each frame that leaves it empty ends (12 µs), and
    // at the end of the frame in service after the last drop (48 µs).
    assert_eq!(
        log(&l),
        [
            "0 Pass",
            "empty 12us",
            "1 Pass",
            "2 Drop",
            "3 Mark",
            "4 Mark",
            "5 Drop",
            "empty 48us"
        ]
    );
    let st = &sim.net.ports[ab.idx()].stats;
    assert_eq!(st.by.marks[MarkReason::Extension as usize], 2);
    assert_eq!(st.marks(), 2);
    assert_eq!(st.by.drops[DropReason::Aqm as usize], 2);
    assert_eq!((st.drops(), st.aqm_drops(), st.tx_pkts), (2, 2, 4));
    assert_eq!(extension_column(&[&st.by]), Some(vec![2]));
    assert_eq!(extension_column(&[&ReasonCounts::default()]), None);
}

#[test]
fn a_toy_aqm_runs_as_a_per_queue_marking() {
    let (mut sim, ab) = pair();
    let (a0, l0) = toy();
    let (a1, l1) = toy();
    let mq = MultiQueue::new(2, &SchedConfig::Sp, 0).unwrap();
    let adm = Admission::new(BufferPolicy::CompleteSharing { limit: u64::MAX }, 2).unwrap();
    let mark = QueueMark::PerQueue {
        aqm: vec![a0, a1],
        at: AqmAt::Dequeue,
    };
    sim.net.ports[ab.idx()].mq = Some(Box::new(MqPort::new(mq, adm, mark)));
    offer_six(&mut sim, ab);
    // Strict priority: 0 leaves at once (queue 0 empty behind it), then queue 0's 2 (12 µs)
    // and 4 (24 µs, its instance's 3rd: dropped, so no empty notice), then queue 1's 1, 3
    // and 5 at 24, 36, 48 µs (waited > 20 µs: marked; 5 is that instance's 3rd: dropped).
    assert_eq!(log(&l0), ["0 Pass", "empty 0us", "2 Pass", "4 Drop"]);
    assert_eq!(log(&l1), ["1 Mark", "3 Mark", "5 Drop"]);
    let port = &sim.net.ports[ab.idx()];
    let st = &port.stats;
    assert_eq!(st.by.marks[MarkReason::Extension as usize], 2);
    assert_eq!(
        (st.marks(), st.drops(), st.aqm_drops(), st.tx_pkts),
        (2, 2, 2, 4)
    );
    let q = &port.mq.as_ref().unwrap().qstats;
    assert_eq!((q[0].marks(), q[0].drops()), (0, 1));
    assert_eq!(q[1].by.marks[MarkReason::Extension as usize], 2);
    assert_eq!(q[1].by.drops[DropReason::Aqm as usize], 1);
    assert_eq!(extension_column(&[&q[0].by, &q[1].by]), Some(vec![0, 2]));
}

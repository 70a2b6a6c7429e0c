//! The family's contract and registry, driven with scripted inputs.

use super::testutil::pkt;
use super::*;
use crate::base::packet::Ecn;

#[test]
fn thresholds_parse_in_packets_or_bytes() {
    assert_eq!(parse_threshold("65pkts"), Ok((65, QueueUnit::Packets)));
    assert_eq!(parse_threshold("20 pkt"), Ok((20, QueueUnit::Packets)));
    assert_eq!(parse_threshold("30KB"), Ok((30_000, QueueUnit::Bytes)));
    assert!(parse_threshold("x pkts").is_err());
    assert!(parse_threshold("lots").is_err());
}

/// Drops every `n`-th packet it sees at dequeue, marks those that waited longer than
/// `limit`, and records the calls it gets.
#[derive(Clone, Debug, Default)]
struct Toy {
    n: u64,
    limit: SimTime,
    seen: u64,
    calls: Vec<String>,
}

impl Discipline for Toy {
    fn enqueue(&mut self, _now: SimTime, _p: &Packet, v: View<'_>) -> Verdict {
        self.calls.push(format!("enq q{} {}", v.q, v.backlog.pkts));
        Verdict::Pass
    }
    fn dequeue(&mut self, now: SimTime, p: &Packet, v: View<'_>) -> Verdict {
        self.calls.push(format!("deq q{} {}", v.q, v.backlog.bytes));
        self.seen += 1;
        if self.seen.is_multiple_of(self.n) {
            Verdict::Drop
        } else if now - p.enq_time > self.limit {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
    fn queue_empty(&mut self, idle_at: SimTime) {
        self.calls.push(format!("empty {}", idle_at.ps()));
    }
    fn clone_box(&self) -> Box<dyn Discipline> {
        Box::new(self.clone())
    }
}

#[test]
fn an_extension_runs_through_the_family() {
    let mut a = Aqm::Extension(Box::new(Box::new(Toy {
        n: 3,
        limit: SimTime::from_us(10),
        ..Toy::default()
    })));
    assert_eq!(a.reason(), MarkReason::Extension);
    assert!(!a.wants_departures() && !a.reads_rates() && !a.is_none());
    let b = |pkts: u64| Backlog {
        pkts,
        bytes: pkts * 1500,
    };
    let p0 = pkt(Ecn::Ect0);
    assert_eq!(
        a.enqueue(SimTime::ZERO, &p0, View::port(b(2))),
        Verdict::Pass
    );
    // Sojourns 5, 11, 20 µs: pass, mark, and the third is dropped whatever it waited.
    let v: Vec<Verdict> = [5u64, 11, 20]
        .iter()
        .map(|&us| a.dequeue(SimTime::from_us(us), &p0, View::port(b(1))))
        .collect();
    assert_eq!(v, [Verdict::Pass, Verdict::Mark, Verdict::Drop]);
    a.queue_empty(SimTime(7));
    let c = a.clone();
    let text = format!("{c:?}");
    assert!(text.contains("\"enq q0 2\""), "{text}");
    assert!(text.contains("\"deq q0 1500\""), "{text}");
    assert!(text.contains("\"empty 7\""), "{text}");
    assert!(text.contains("seen: 3"), "{text}");
}

#[test]
fn the_built_ins_answer_only_on_their_side() {
    // TCN decides at dequeue only, MQ-ECN and the rate threshold at enqueue only.
    let mut p = pkt(Ecn::Ect0);
    p.enq_time = SimTime::ZERO;
    let now = SimTime::from_us(100);
    let mut t = Aqm::Tcn(tcn::Tcn::new(SimTime::from_us(10)).unwrap());
    assert_eq!(
        t.enqueue(now, &p, View::port(Backlog::default())),
        Verdict::Pass
    );
    assert_eq!(
        t.dequeue(now, &p, View::port(Backlog::default())),
        Verdict::Mark
    );
    let rates = [dqrate::DqRate::new(dqrate::DqRateConfig::default()).unwrap()];
    let v = View {
        q: 0,
        // 10 Gb/s × 100 µs = 125 000 B: 124 000 queued + 1500 arriving is above.
        backlog: Backlog {
            pkts: 1,
            bytes: 124_000,
        },
        signals: Signals {
            round: None,
            rates: &rates,
        },
    };
    let mut d = Aqm::DqRate;
    assert_eq!(d.enqueue(now, &p, v), Verdict::Mark);
    assert_eq!(d.dequeue(now, &p, v), Verdict::Pass);
    // MQ-ECN without a round-time estimate passes everything.
    assert_eq!(Aqm::MqEcn.enqueue(now, &p, v), Verdict::Pass);
    assert_eq!(Aqm::None.enqueue(now, &p, v), Verdict::Pass);
    assert_eq!(Aqm::None.dequeue(now, &p, v), Verdict::Pass);
}

#[test]
fn a_port_aqm_stays_16_bytes() {
    assert_eq!(std::mem::size_of::<Aqm>(), 16);
}

fn keys() -> Keys {
    Keys {
        given: vec![],
        at: AqmAt::Enqueue,
        k: (20, QueueUnit::Packets),
        min_th: (5, QueueUnit::Packets),
        max_th: (15, QueueUnit::Packets),
        max_p: 0.02,
        w_q: 0.002,
        gentle: true,
        wait: true,
        count: true,
        queue: "average".into(),
        mean_pkt_size: 500,
        threshold: tcn::DEFAULT_T,
        t_min: None,
        t_max: None,
        p_max: 1.0,
        target: codel::DEFAULT_TARGET,
        interval: codel::DEFAULT_INTERVAL,
        ecn: true,
        port_thresh: 65.0,
        beta: 0.75,
    }
}

fn build(name: &str, port: bool, k: &Keys, rate: u64) -> Result<Built, KeyError> {
    let e = find(name, port).unwrap();
    (e.build)(&Build {
        keys: k,
        rate: RateBps(rate),
        seed: 1,
        port: 3,
        queue: None,
        quanta: None,
    })
}

#[test]
fn the_registry_names_each_discipline_once() {
    let mut names: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), REGISTRY.len());
    // Port AQMs: none, step, red; the class-queue markings: all of them.
    let port: Vec<&str> = REGISTRY.iter().filter(|e| e.port).map(|e| e.name).collect();
    assert_eq!(port, ["none", "step", "red"]);
    assert_eq!(
        find("tcn", true).unwrap_err(),
        "unknown AQM \"tcn\": expected \"none\", \"step\" or \"red\""
    );
    assert!(find("tcn", false).is_ok());
    assert!(find("x", false)
        .unwrap_err()
        .starts_with("unknown marking \"x\""));
}

#[test]
fn constructors_build_from_the_keys() {
    let k = keys();
    // Step: K from the keys.
    let b = build("step", true, &k, 1).unwrap();
    assert!(matches!(b.aqm, Aqm::Step(Step { k: 20, .. })));
    assert_eq!(b.at, AqmAt::Enqueue);
    // A RED key on a step table, and `k` on a RED one, are errors naming the key.
    let mut bad = keys();
    bad.given = vec!["w_q"];
    assert_eq!(build("step", true, &bad, 1).unwrap_err().key, "w_q");
    bad.given = vec!["k"];
    assert_eq!(build("red", true, &bad, 1).unwrap_err().key, "k");
    let b = build("red", true, &k, 1_000_000_000).unwrap();
    assert_eq!(b.aqm.reason(), MarkReason::Red);
    // TCN and CoDel decide at dequeue; prob_tcn needs its thresholds.
    assert_eq!(build("tcn", false, &k, 1).unwrap().at, AqmAt::Dequeue);
    assert_eq!(build("codel", false, &k, 1).unwrap().at, AqmAt::Dequeue);
    assert_eq!(build("prob_tcn", false, &k, 1).unwrap_err().key, "t_min");
    // MQ-ECN needs DWRR quanta; with them it hands the port a round-time estimator.
    assert_eq!(build("mqecn", false, &k, 1).unwrap_err().key, "kind");
    let e = find("mqecn", false).unwrap();
    let b = (e.build)(&Build {
        keys: &k,
        rate: RateBps(10_000_000_000),
        seed: 1,
        port: 0,
        queue: None,
        quanta: Some(&[1500, 3000]),
    })
    .unwrap();
    assert_eq!(b.round.map(|m| m.num_queues()), Some(2));
    assert!(build("dqrate", false, &k, 1).unwrap().aqm.reads_rates());
    assert!(build("none", true, &k, 1).unwrap().aqm.is_none());
}

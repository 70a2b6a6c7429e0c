//! Tests of the event queue (`engine/event/mod.rs`).

use super::*;

/// Pop every pending `PortTxDone` event as (time, port number).
fn drain_samples(q: &mut EventQueue) -> Vec<(u64, u32)> {
    std::iter::from_fn(|| q.pop())
        .map(|(t, e)| match e {
            Event::PortTxDone(PortId(i)) => (t.0, i),
            _ => unreachable!(),
        })
        .collect()
}

#[test]
fn orders_by_time_then_sequence() {
    let mut q = EventQueue::new();
    q.schedule(SimTime(5), Event::PortTxDone(PortId(1)));
    q.schedule(SimTime(3), Event::PortTxDone(PortId(2)));
    q.schedule(SimTime(5), Event::PortTxDone(PortId(3)));
    q.schedule(SimTime(3), Event::PortTxDone(PortId(4)));
    let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
    assert_eq!(
        order,
        vec![
            (SimTime(3), Event::PortTxDone(PortId(2))),
            (SimTime(3), Event::PortTxDone(PortId(4))),
            (SimTime(5), Event::PortTxDone(PortId(1))),
            (SimTime(5), Event::PortTxDone(PortId(3))),
        ]
    );
    assert_eq!(q.popped, 4);
    assert_eq!(q.peak_len, 4);
}

#[test]
fn stored_words_round_trip_every_variant() {
    let all = [
        Event::PortTxDone(PortId(u32::MAX)),
        Event::LinkArrive(PortId(7)),
        Event::Timer {
            flow: FlowId(123_456),
            kind: TimerKind(0),
        },
        Event::Timer {
            flow: FlowId(0),
            kind: TimerKind(1),
        },
        // A kind past the key's nibble waits in the slab.
        Event::Timer {
            flow: FlowId(5),
            kind: TimerKind(200),
        },
        Event::App {
            app: AppId(3),
            arg: u32::MAX - 1,
        },
        Event::Sample(SampleKind::Queue),
        Event::Sample(SampleKind::Cwnd),
        Event::Sample(SampleKind::Tput),
        Event::L2 {
            idx: 99,
            kind: L2Kind::RlRelease,
        },
        Event::L2 {
            idx: 0,
            kind: L2Kind::RlTimer,
        },
        Event::L2 {
            idx: 1,
            kind: L2Kind::PauseRefresh,
        },
        Event::L2 {
            idx: 2,
            kind: L2Kind::RateChange,
        },
        Event::L2 {
            idx: 3,
            kind: L2Kind::SampleRp,
        },
        Event::L2 {
            idx: 4,
            kind: L2Kind::SampleFlow,
        },
        Event::Stop,
    ];
    let mut q = EventQueue::new();
    for (i, e) in all.iter().enumerate() {
        assert_eq!(Event::decode(e.encode()), *e);
        q.schedule(SimTime(100 - i as u64), *e);
    }
    for e in all.iter().rev() {
        assert_eq!(q.pop().unwrap().1, *e);
    }
}

/// Events that travel in their key and events that wait in the slab (an `App` event
/// with its argument) interleave in exact (time, scheduling) order, through a
/// renumbering, and the slab's slots are reused.
#[test]
fn key_and_slab_events_keep_one_order() {
    let mut q = EventQueue::new();
    let mut want = Vec::new();
    for i in 0..3000u32 {
        let t = SimTime((i as u64 * 7919) % 500);
        let e = match i % 3 {
            0 => Event::App {
                app: AppId(i),
                arg: i + 1,
            },
            1 => Event::LinkArrive(PortId(u32::MAX - i)),
            _ => Event::Timer {
                flow: FlowId(i),
                kind: TimerKind(1),
            },
        };
        if i == 1500 {
            q.seq = SEQ_LIMIT; // renumber halfway
        }
        q.schedule(t, e);
        want.push((t, i, e));
    }
    want.sort_by_key(|&(t, i, _)| (t, i));
    let got: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
    let want: Vec<_> = want.into_iter().map(|(t, _, e)| (t, e)).collect();
    assert_eq!(got, want);
    // 1000 slab events were pending at once; popping and scheduling again reuses slots.
    assert_eq!(q.slab.len(), 1000);
    for i in 0..1000u32 {
        q.schedule(
            SimTime(600),
            Event::App {
                app: AppId(i),
                arg: 7,
            },
        );
        assert_eq!(
            q.pop().map(|(_, e)| e),
            Some(Event::App {
                app: AppId(i),
                arg: 7
            })
        );
    }
    assert_eq!(q.slab.len(), 1000);
}

#[test]
fn renumbering_keeps_the_order() {
    let mut q = EventQueue::new();
    for i in 0..50u32 {
        q.schedule(SimTime((i % 7) as u64), Event::PortTxDone(PortId(i)));
    }
    q.seq = SEQ_LIMIT; // the next schedule renumbers first
    q.schedule(SimTime(3), Event::PortTxDone(PortId(50)));
    q.schedule(SimTime(0), Event::PortTxDone(PortId(51)));
    let mut expect: Vec<(u64, u32)> = (0..50u32).map(|i| ((i % 7) as u64, i)).collect();
    expect.sort_by_key(|&(t, i)| (t, i));
    // Same time: scheduling order, the renumbered ones before the two new ones.
    let mut all = expect.clone();
    all.push((3, 50));
    all.push((0, 51));
    all.sort_by_key(|&(t, i)| (t, if i >= 50 { 1 } else { 0 }, i));
    let got: Vec<(u64, u32)> = drain_samples(&mut q);
    assert_eq!(got, all);
    assert!(q.seq < 100);
}

#[test]
fn calendar_and_heap_together_keep_the_total_order_at_every_time_scale() {
    // Offsets from picoseconds (same bucket: overflow into the heap) over bucket widths
    // to beyond the calendar's span (heap), with ties, against a sorted reference.
    let mut rng = crate::base::rng::Rng::new(4, 2);
    let mut q = EventQueue::new();
    let mut reference: std::collections::BTreeSet<(u64, u32)> = Default::default();
    let mut seq = 0u32;
    let mut now = 0u64;
    let span = (BUCKETS as u64) << BUCKET_SHIFT;
    for step in 0..200_000 {
        let push = reference.len() < 50 || (reference.len() < 3000 && rng.uniform() < 0.5);
        if push {
            let off = match rng.below(6) {
                0 => rng.below(1000),
                1 => rng.below(1 << BUCKET_SHIFT) * 3,
                2 => rng.below(span),
                3 => span - 1 + rng.below(3),
                4 => rng.below(span * 50),
                _ => 0,
            };
            q.schedule(SimTime(now + off), Event::PortTxDone(PortId(seq)));
            reference.insert((now + off, seq));
            seq += 1;
        } else {
            let (t, s) = reference.pop_first().unwrap();
            if step % 7 == 0 {
                assert_eq!(q.peek_time(), Some(SimTime(t)));
            }
            assert_eq!(q.pop().unwrap(), (SimTime(t), Event::PortTxDone(PortId(s))));
            now = t;
        }
        assert_eq!(q.len(), reference.len());
    }
    while let Some((t, s)) = reference.pop_first() {
        assert_eq!(q.pop().unwrap(), (SimTime(t), Event::PortTxDone(PortId(s))));
    }
    assert!(q.pop().is_none());
}

#[test]
fn keys_between_the_popped_and_the_staged_event_go_to_the_calendar_in_order() {
    // After the pop of slot 10 stages S (slot 20), K (slot 12) and K2 (slot 15) take
    // the two staged places before it, and K3 (slot 17) lies between them and S; F,
    // one slot short of a full lap after S, shares a bucket index just below S's. The
    // calendar must not start past K3, nor scan F's bucket before S's. K3 and S are
    // near events and belong in the calendar (F, beyond its span, in the heap): when
    // the calendar started at the staged event's slot, such keys went to the heap.
    let at = |slot: u64| SimTime(slot << BUCKET_SHIFT);
    let mut q = EventQueue::new();
    q.schedule(at(10), Event::PortTxDone(PortId(0)));
    q.schedule(at(20), Event::PortTxDone(PortId(1)));
    assert_eq!(q.pop().unwrap(), (at(10), Event::PortTxDone(PortId(0))));
    q.schedule(at(12), Event::PortTxDone(PortId(2)));
    q.schedule(at(15), Event::PortTxDone(PortId(3)));
    q.schedule(at(17), Event::PortTxDone(PortId(5)));
    q.schedule(
        at(20 + DEFAULT_BUCKETS as u64 - 1),
        Event::PortTxDone(PortId(4)),
    );
    assert_eq!(q.peek_time(), Some(at(12)));
    assert_eq!(
        q.peek2_raw().map(Event::decode),
        Some(Event::PortTxDone(PortId(3)))
    );
    assert_eq!((q.cal.len, q.heap.len), (2, 1));
    assert_eq!(
        q.heap.peek().map(|k| k.time),
        Some(at(20 + DEFAULT_BUCKETS as u64 - 1).0)
    );
    let got: Vec<(u64, u32)> = drain_samples(&mut q);
    let slots: Vec<(u64, u32)> = got.iter().map(|&(t, i)| (t >> BUCKET_SHIFT, i)).collect();
    assert_eq!(slots, vec![(12, 2), (15, 3), (17, 5), (20, 1), (4115, 4)]);
}

#[test]
fn a_calendar_smaller_than_its_arrays_scans_one_whole_lap() {
    // 128 buckets of 2⁸ ps (two bitmap words) inside arrays sized for 4 096. The next
    // key can sit in the bucket just before the calendar's start, in the same bitmap
    // word: the scan must run over that word's high bits, the other word and the first
    // word's low bits, all within the 128 buckets in use.
    let mut q = EventQueue::new();
    q.set_horizon(SimTime(1), 128);
    assert_eq!((q.cal.buckets(), q.cal.shift), (128, MIN_SHIFT));
    let w = 1u64 << MIN_SHIFT;
    let ev = |i| Event::PortTxDone(PortId(i));
    q.schedule(SimTime(246 * w), ev(0));
    q.schedule(SimTime(247 * w), ev(1));
    q.schedule(SimTime(247 * w), ev(3));
    assert_eq!(q.pop(), Some((SimTime(246 * w), ev(0))));
    // The calendar starts at slot 246 (bucket 118); slot 373 is its last (bucket 117).
    // (The two events of slot 247 are the staged ones.)
    q.schedule(SimTime(373 * w), ev(2));
    assert_eq!((q.cal.len, q.heap.len), (1, 0));
    assert_eq!(q.pop(), Some((SimTime(247 * w), ev(1))));
    assert_eq!(q.pop(), Some((SimTime(247 * w), ev(3))));
    assert_eq!(q.pop(), Some((SimTime(373 * w), ev(2))));
    assert_eq!(q.pop(), None);
}

/// A queue kept busy with near events, checked against a reference ordered by (time,
/// scheduling order) at every pop.
struct Churn {
    q: EventQueue,
    reference: std::collections::BTreeMap<(u64, u64), u32>,
    next: u64,
    rng: crate::base::rng::Rng,
    span: u64,
    /// Keys scheduled at each drawn time.
    cluster: u64,
}

impl Churn {
    fn new(q: EventQueue, seed: u64, span: u64) -> Churn {
        Churn {
            q,
            reference: Default::default(),
            next: 0,
            rng: crate::base::rng::Rng::new(seed, 0),
            span,
            cluster: 1,
        }
    }

    /// `schedules` more schedules, each pop followed by schedules at `now` plus up to
    /// `span` until `pending` events wait again.
    fn run(&mut self, pending: usize, schedules: u64) {
        let mut now = self.q.peek_time().map_or(0, |t| t.0);
        let end = self.next + schedules;
        while self.next < end {
            while self.reference.len() < pending {
                let t = now + self.rng.below(self.span);
                for _ in 0..self.cluster {
                    let i = self.next as u32;
                    self.q.schedule(SimTime(t), Event::PortTxDone(PortId(i)));
                    self.reference.insert((t, self.next), i);
                    self.next += 1;
                }
            }
            now = self.pop_one();
        }
    }

    /// Pop the reference's first event from the queue too; its time.
    fn pop_one(&mut self) -> u64 {
        let ((t, _), i) = self.reference.pop_first().unwrap();
        assert_eq!(
            self.q.pop(),
            Some((SimTime(t), Event::PortTxDone(PortId(i))))
        );
        t
    }

    fn drain(&mut self) {
        while !self.reference.is_empty() {
            self.pop_one();
        }
        assert_eq!(self.q.pop(), None);
    }
}

#[test]
fn the_calendar_shrinks_to_the_keys_it_holds_and_grows_back_in_order() {
    // A network sized for 1 024 buckets over 26.2 µs that keeps 4 events pending, 3 in
    // the calendar (the next one is held apart): the reviews (every 8 192 schedules, a
    // decision per 16) halve the calendar while it has more than 2 · 16 · 3 = 96
    // buckets, widening them so that it spans as much, down to 64. With 300 pending it
    // doubles back, but not past the 1 024 it was given. Every pop meanwhile is the
    // reference's.
    let span = 26_200_000;
    let mut q = EventQueue::new();
    q.set_horizon(SimTime(span), 1024);
    assert_eq!((q.cal.buckets(), q.cal.shift), (1024, 15));
    let mut c = Churn::new(q, 7, span);
    let per_decision = REVIEW_EVERY * REVIEWS_PER_DECISION as u64;
    c.run(4, per_decision - 10);
    assert_eq!(c.q.cal.buckets(), 1024, "no decision before 16 reviews");
    c.run(4, 6 * per_decision);
    assert_eq!((c.q.cal.buckets(), c.q.cal.shift), (64, 19));
    c.run(300, 6 * per_decision);
    assert_eq!((c.q.cal.buckets(), c.q.cal.shift), (1024, 15));
    let stored = c.q.cal.len + c.q.heap.len;
    assert_eq!(stored, 297, "299 wait, two of them staged");
    c.drain();
}

#[test]
fn allowed_to_the_calendar_grows_past_its_start_only_where_keys_crowd() {
    // As above, with growth allowed to 8 192 buckets. 300 keys pending one by one want
    // 16 · 297 = 4 752 buckets, but spread over 1 024 they rarely fill one: the calendar
    // stays at the 1 024 it started with.
    let span = 26_200_000;
    let per_decision = REVIEW_EVERY * REVIEWS_PER_DECISION as u64;
    let grown = |cluster: u64| {
        let mut q = EventQueue::new();
        q.set_horizon(SimTime(span), 1024);
        q.allow_growth_to(5000);
        assert_eq!(q.max_buckets, 8192);
        let mut c = Churn::new(q, 11, span);
        c.cluster = cluster;
        c.run(300, 6 * per_decision);
        let g = (c.q.cal.buckets(), c.q.cal.shift);
        c.drain();
        g
    };
    assert_eq!(grown(1), (1024, 15));
    // In clusters of 12 keys at one instant, each cluster overflows its bucket by four (a
    // third of the keys wait in the heap): the calendar doubles while it has fewer than half
    // the buckets the ~200 keys it holds want (16 each), 1 024 -> 2 048.
    assert_eq!(grown(12), (2048, 14));
    // Growth is only ever allowed, never taken back below the start.
    let mut q = EventQueue::new();
    q.set_horizon(SimTime(span), 1024);
    q.allow_growth_to(5000);
    q.allow_growth_to(64);
    assert_eq!(q.max_buckets, 8192);
}

#[test]
fn a_queue_without_a_horizon_keeps_its_geometry() {
    // `EventQueue::new` alone (tests, tools): no span to keep, so no reviews.
    let mut c = Churn::new(EventQueue::new(), 3, 1 << 20);
    c.run(4, 2 * REVIEW_EVERY * REVIEWS_PER_DECISION as u64);
    assert_eq!(
        (c.q.cal.buckets(), c.q.cal.shift),
        (DEFAULT_BUCKETS, BUCKET_SHIFT)
    );
    c.drain();
}

#[test]
fn the_horizon_picks_the_narrowest_bucket_that_covers_it() {
    let shift_for = |ps: u64| {
        let mut q = EventQueue::new();
        q.set_horizon(SimTime(ps), DEFAULT_BUCKETS);
        q.cal.shift
    };
    // 4 096 buckets: 2.2 µs (1 µs link + 1 500 B at 10 Gb/s) needs 1.02 ns buckets
    // (2¹⁰ ps), 26.2 µs (25 µs + 1.2 µs) 8.2 ns, 37 µs (25 µs + 12 µs at 1 Gb/s)
    // 16.4 ns; nothing below 2⁶ ps.
    assert_eq!(shift_for(2_200_000), 10);
    assert_eq!(shift_for(26_200_000), 13);
    assert_eq!(shift_for((DEFAULT_BUCKETS as u64) << 13), 13);
    assert_eq!(shift_for(37_000_000), 14);
    assert_eq!(shift_for(1), MIN_SHIFT);
    // Fewer buckets, wider ones: 128 buckets over 26.2 µs are 262 ns (2¹⁸ ps) wide.
    let mut q = EventQueue::new();
    q.set_horizon(SimTime(26_200_000), 100);
    assert_eq!((q.cal.buckets(), q.cal.shift), (128, 18));
    q.set_horizon(SimTime(26_200_000), 1);
    assert_eq!(q.cal.buckets(), MIN_BUCKETS);
}

#[test]
fn changing_the_horizon_with_keys_pending_keeps_the_total_order() {
    // Random keys at every time scale, the bucket width changed now and then (from
    // below the narrowest to wider than any offset), against a sorted reference.
    let mut rng = crate::base::rng::Rng::new(9, 3);
    let mut q = EventQueue::new();
    let mut reference: std::collections::BTreeSet<(u64, u32)> = Default::default();
    let mut now = 0u64;
    for seq in 0..60_000u32 {
        if seq % 997 == 0 {
            let buckets = 1 << rng.below(14);
            q.set_horizon(SimTime(1 << rng.below(36)), buckets as usize);
        }
        if reference.len() < 40 || rng.uniform() < 0.5 {
            let off = match rng.below(4) {
                0 => rng.below(2000),
                1 => rng.below(1 << 22),
                2 => rng.below(1 << 30),
                _ => 0,
            };
            q.schedule(SimTime(now + off), Event::PortTxDone(PortId(seq)));
            reference.insert((now + off, seq));
        } else {
            let (t, s) = reference.pop_first().unwrap();
            assert_eq!(q.pop().unwrap(), (SimTime(t), Event::PortTxDone(PortId(s))));
            now = t;
        }
    }
    while let Some((t, s)) = reference.pop_first() {
        assert_eq!(q.pop().unwrap(), (SimTime(t), Event::PortTxDone(PortId(s))));
    }
    assert!(q.pop().is_none());
}

#[test]
fn renumbering_with_keys_in_calendar_and_heap_keeps_the_order() {
    let mut q = EventQueue::new();
    let far = (BUCKETS as u64) << (BUCKET_SHIFT + 1);
    for i in 0..40u32 {
        // Same-bucket ties (calendar, then heap overflow) and far keys (heap).
        let t = if i % 3 == 0 {
            far + (i % 5) as u64
        } else {
            (i % 4) as u64
        };
        q.schedule(SimTime(t), Event::PortTxDone(PortId(i)));
    }
    q.seq = SEQ_LIMIT;
    q.schedule(SimTime(2), Event::PortTxDone(PortId(40)));
    let mut expect: Vec<(u64, u32)> = (0..40u32)
        .map(|i| {
            (
                if i % 3 == 0 {
                    far + (i % 5) as u64
                } else {
                    (i % 4) as u64
                },
                i,
            )
        })
        .collect();
    expect.push((2, 40));
    expect.sort();
    let got: Vec<(u64, u32)> = drain_samples(&mut q);
    assert_eq!(got, expect);
}

#[test]
fn interleaved_pushes_and_pops_come_out_in_total_order() {
    // A reference model: every pending (time, seq) in a sorted vector.
    let mut rng = crate::base::rng::Rng::new(9, 1);
    let mut q = EventQueue::new();
    let mut reference: Vec<(u64, u32)> = Vec::new();
    let mut seq = 0u32;
    let mut now = 0u64;
    for _ in 0..20_000 {
        if rng.uniform() < 0.55 || reference.is_empty() {
            let t = now + rng.below(1000);
            q.schedule(SimTime(t), Event::PortTxDone(PortId(seq)));
            reference.push((t, seq));
            seq += 1;
        } else {
            reference.sort();
            let (t, s) = reference.remove(0);
            let (qt, qe) = q.pop().unwrap();
            assert_eq!((qt, qe), (SimTime(t), Event::PortTxDone(PortId(s))));
            now = t;
        }
        assert_eq!(q.len(), reference.len());
    }
}

#[test]
fn keys_before_the_next_one_take_the_lane_in_order() {
    let tx = |i| Event::PortTxDone(PortId(i));
    let peeks = |q: &EventQueue| {
        (
            q.peek_raw().map(Event::decode),
            q.peek2_raw().map(Event::decode),
        )
    };
    let mut q = EventQueue::new();
    for (t, i) in [(10, 1), (20, 2), (30, 3)] {
        q.schedule(SimTime(t), tx(i));
    }
    assert_eq!(q.pop(), Some((SimTime(10), tx(1))));
    // At t = 10, two keys before the next pending one (20): the first takes the lane,
    // the second is staged; the lane's, scheduled first, comes out first.
    q.schedule_soon(SimTime(10), tx(4));
    q.schedule_soon(SimTime(10), tx(5));
    assert_eq!(q.peek_time(), Some(SimTime(10)));
    assert_eq!(peeks(&q), (Some(tx(4)), Some(tx(5))));
    assert_eq!(q.len(), 4);
    // A lane key later than a key scheduled after it: the staged one comes first.
    assert_eq!(q.pop(), Some((SimTime(10), tx(4))));
    assert_eq!(q.pop(), Some((SimTime(10), tx(5))));
    q.schedule_soon(SimTime(15), tx(6)); // the lane (before 20)
    q.schedule(SimTime(12), tx(7)); // staged first
    assert_eq!(peeks(&q), (Some(tx(7)), Some(tx(6))));
    // With the lane full, renumbering keeps every key and the order.
    q.renumber();
    assert_eq!(q.len(), 4);
    assert_eq!(
        drain_samples(&mut q),
        vec![(12, 7), (15, 6), (20, 2), (30, 3)]
    );
    assert_eq!(q.popped, 7);
    assert_eq!(q.peak_len, 4);
}

//! The pending-event set: a 4-ary min-heap ordered by (time, insertion sequence).
//!
//! Ties in time are broken by the order of scheduling, so a run is a pure function of the
//! scenario and its seed. Events are small plain values that name their target by index.

use crate::units::SimTime;

/// What happens when an event fires. Targets are indices into the simulation's arenas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port finished serializing a packet and may start the next one from its queue.
    PortTxDone(u32),
    /// The packet at the head of a port's wire (its in-flight FIFO) reaches the far end.
    LinkArrive(u32),
    /// A TCP timer of a flow (lazy deadline; see `tcp::Timer`).
    TcpTimer { flow: u32, kind: u8 },
    /// An application event (start of a flow, next request, next CBR packet, ...).
    App { app: u32, arg: u32 },
    /// A periodic measurement sample.
    Sample(u32),
    /// A layer-2 event (`l2sim.rs`): rate-limiter release or timer, PAUSE refresh, service
    /// rate change, L2 sampler. `kind` says which, `idx` names the target.
    L2 { idx: u32, kind: u8 },
    /// End of the simulation.
    Stop,
}

/// An event as the slab stores it: three plain words. Moving the `Event` enum itself
/// between the scheduler, the slab and `Sim::dispatch` made rustc copy it with overlapping
/// loads and stores of mixed widths, which defeat store-to-load forwarding; profiles put
/// about a fifth of the leaf-spine run's time on those stalls. The words are built and
/// read field by field, and cross function boundaries as scalars in registers.
#[derive(Clone, Copy, Debug, Default)]
pub struct RawEvent {
    /// Variant in the low byte, a `kind` byte above it.
    pub head: u32,
    pub a: u32,
    pub b: u32,
}

impl Event {
    #[inline(always)]
    pub fn encode(self) -> RawEvent {
        let (head, a, b) = match self {
            Event::PortTxDone(p) => (0, p, 0),
            Event::LinkArrive(p) => (1, p, 0),
            Event::TcpTimer { flow, kind } => (2 | (kind as u32) << 8, flow, 0),
            Event::App { app, arg } => (3, app, arg),
            Event::Sample(k) => (4, k, 0),
            Event::L2 { idx, kind } => (5 | (kind as u32) << 8, idx, 0),
            Event::Stop => (6, 0, 0),
        };
        RawEvent { head, a, b }
    }

    #[inline(always)]
    pub fn decode(r: RawEvent) -> Event {
        let kind = (r.head >> 8) as u8;
        match r.head & 0xff {
            0 => Event::PortTxDone(r.a),
            1 => Event::LinkArrive(r.a),
            2 => Event::TcpTimer { flow: r.a, kind },
            3 => Event::App { app: r.a, arg: r.b },
            4 => Event::Sample(r.a),
            5 => Event::L2 { idx: r.a, kind },
            _ => Event::Stop,
        }
    }
}

/// Bits of a key's `tag` that hold the event's slab slot; the insertion sequence number is
/// in the bits above (40 bits: renumbered in order before it would overflow).
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
const SEQ_LIMIT: u64 = 1 << (64 - SLOT_BITS);

/// A heap key: 16 bytes, four to a cache line. `(time, tag)` orders like `(time, seq)`
/// because the sequence number occupies the high bits of `tag` and is unique.
#[derive(Clone, Copy, Debug, Default)]
struct Key {
    time: u64,
    tag: u64,
}

impl Key {
    #[inline(always)]
    fn before(self, o: Key) -> bool {
        ((self.time as u128) << 64 | self.tag as u128) < ((o.time as u128) << 64 | o.tag as u128)
    }
    #[inline(always)]
    fn slot(self) -> usize {
        (self.tag & SLOT_MASK) as usize
    }
}

/// Four keys on one 64-byte cache line: the four children of a heap node share a line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Line([Key; 4]);

/// The pending-event set: a 4-ary min-heap of 16-byte keys laid out so that each node's
/// children are one cache line, with the events themselves in a slab that never moves.
/// A pop therefore touches about log4(n) lines instead of a binary heap of 32-byte entries'
/// log2(n); the order is exactly (time, scheduling order), as before.
pub struct EventQueue {
    /// Heap node `h` lives at position `h + 3` (children `4h + 1 ..= 4h + 4` at positions
    /// `4h + 4 ..= 4h + 7`: one aligned line).
    lines: Vec<Line>,
    len: usize,
    slab: Vec<RawEvent>,
    free: Vec<u32>,
    seq: u64,
    pub popped: u64,
    pub peak_len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            lines: vec![Line::default(); 256],
            len: 0,
            slab: Vec::with_capacity(1024),
            free: Vec::with_capacity(1024),
            seq: 0,
            popped: 0,
            peak_len: 0,
        }
    }

    #[inline(always)]
    fn get(&self, h: usize) -> Key {
        let p = h + 3;
        self.lines[p >> 2].0[p & 3]
    }
    #[inline(always)]
    fn set(&mut self, h: usize, k: Key) {
        let p = h + 3;
        self.lines[p >> 2].0[p & 3] = k;
    }

    /// Schedule `ev` at `at`. Inlined so that the event's words are built in registers at
    /// the call site; the heap work is in `push`.
    #[inline(always)]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        let r = ev.encode();
        self.push(at.0, r.head, r.a, r.b);
    }

    #[inline(never)]
    fn push(&mut self, at: u64, head: u32, a: u32, b: u32) {
        let ev = RawEvent { head, a, b };
        if self.seq == SEQ_LIMIT {
            self.renumber();
        }
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = ev;
                s as u64
            }
            None => {
                assert!(
                    (self.slab.len() as u64) < SLOT_MASK,
                    "more than {SLOT_MASK} events pending at once"
                );
                self.slab.push(ev);
                (self.slab.len() - 1) as u64
            }
        };
        let key = Key {
            time: at,
            tag: (self.seq << SLOT_BITS) | slot,
        };
        self.seq += 1;
        if (self.len + 3) >> 2 >= self.lines.len() {
            let n = self.lines.len();
            self.lines.resize(n * 2, Line::default());
        }
        // Sift up from the new leaf, moving parents down into the hole.
        let mut h = self.len;
        self.len += 1;
        while h > 0 {
            let parent = (h - 1) >> 2;
            let pk = self.get(parent);
            if !key.before(pk) {
                break;
            }
            self.set(h, pk);
            h = parent;
        }
        self.set(h, key);
        if self.len > self.peak_len {
            self.peak_len = self.len;
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.pop_raw().map(|(t, r)| (t, Event::decode(r)))
    }

    /// The earliest event in its stored form (`Sim::run` dispatches it without rebuilding
    /// the enum).
    #[inline]
    pub fn pop_raw(&mut self) -> Option<(SimTime, RawEvent)> {
        if self.len == 0 {
            return None;
        }
        let top = self.get(0);
        self.len -= 1;
        let n = self.len;
        if n > 0 {
            // Move the last key into the root's hole and sift it down: at each level pick the
            // smallest of up to four children (one cache line).
            let last = self.get(n);
            let mut h = 0usize;
            loop {
                let c = 4 * h + 1;
                if c >= n {
                    break;
                }
                let (best, bk) = if c + 4 <= n {
                    // All four children: they are exactly line (c + 3) / 4.
                    // Branch-free: the comparisons pick indices, not code paths (the
                    // outcomes are data-dependent and would mispredict half the time).
                    let l = &self.lines[(c + 3) >> 2].0;
                    let i01 = l[1].before(l[0]) as usize;
                    let i23 = 2 + l[3].before(l[2]) as usize;
                    let i = if l[i23].before(l[i01]) { i23 } else { i01 };
                    (c + i, l[i & 3])
                } else {
                    let mut best = c;
                    let mut bk = self.get(c);
                    for i in c + 1..n {
                        let k = self.get(i);
                        if k.before(bk) {
                            best = i;
                            bk = k;
                        }
                    }
                    (best, bk)
                };
                if !bk.before(last) {
                    break;
                }
                self.set(h, bk);
                h = best;
            }
            self.set(h, last);
        }
        let slot = top.slot();
        let ev = self.slab[slot];
        self.free.push(slot as u32);
        self.popped += 1;
        Some((SimTime(top.time), ev))
    }

    pub fn peek_time(&self) -> Option<SimTime> {
        (self.len > 0).then(|| SimTime(self.get(0).time))
    }

    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Give the pending keys new sequence numbers 0, 1, … in their current order (same
    /// relative order, so the run is unchanged); called before the 40-bit counter wraps.
    fn renumber(&mut self) {
        let mut keys: Vec<Key> = (0..self.len).map(|h| self.get(h)).collect();
        keys.sort_by_key(|k| (k.time, k.tag));
        for (i, k) in keys.iter_mut().enumerate() {
            k.tag = ((i as u64) << SLOT_BITS) | (k.tag & SLOT_MASK);
        }
        // A sorted array is a valid heap.
        for (h, k) in keys.into_iter().enumerate() {
            self.set(h, k);
        }
        self.seq = self.len as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_sequence() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), Event::Sample(1));
        q.schedule(SimTime(3), Event::Sample(2));
        q.schedule(SimTime(5), Event::Sample(3));
        q.schedule(SimTime(3), Event::Sample(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (SimTime(3), Event::Sample(2)),
                (SimTime(3), Event::Sample(4)),
                (SimTime(5), Event::Sample(1)),
                (SimTime(5), Event::Sample(3)),
            ]
        );
        assert_eq!(q.popped, 4);
        assert_eq!(q.peak_len, 4);
    }

    #[test]
    fn stored_words_round_trip_every_variant() {
        let all = [
            Event::PortTxDone(u32::MAX),
            Event::LinkArrive(7),
            Event::TcpTimer {
                flow: 123_456,
                kind: 255,
            },
            Event::App {
                app: 3,
                arg: u32::MAX - 1,
            },
            Event::Sample(2),
            Event::L2 { idx: 99, kind: 4 },
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

    #[test]
    fn renumbering_keeps_the_order() {
        let mut q = EventQueue::new();
        for i in 0..50u32 {
            q.schedule(SimTime((i % 7) as u64), Event::Sample(i));
        }
        q.seq = SEQ_LIMIT; // the next schedule renumbers first
        q.schedule(SimTime(3), Event::Sample(50));
        q.schedule(SimTime(0), Event::Sample(51));
        let mut expect: Vec<(u64, u32)> = (0..50u32).map(|i| ((i % 7) as u64, i)).collect();
        expect.sort_by_key(|&(t, i)| (t, i));
        // Same time: scheduling order, the renumbered ones before the two new ones.
        let mut all = expect.clone();
        all.push((3, 50));
        all.push((0, 51));
        all.sort_by_key(|&(t, i)| (t, if i >= 50 { 1 } else { 0 }, i));
        let got: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| match e {
                Event::Sample(i) => (t.0, i),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(got, all);
        assert!(q.seq < 100);
    }

    #[test]
    fn interleaved_pushes_and_pops_come_out_in_total_order() {
        // A reference model: every pending (time, seq) in a sorted vector.
        let mut rng = crate::rng::Rng::new(9, 1);
        let mut q = EventQueue::new();
        let mut reference: Vec<(u64, u32)> = Vec::new();
        let mut seq = 0u32;
        let mut now = 0u64;
        for _ in 0..20_000 {
            if rng.uniform() < 0.55 || reference.is_empty() {
                let t = now + rng.below(1000);
                q.schedule(SimTime(t), Event::Sample(seq));
                reference.push((t, seq));
                seq += 1;
            } else {
                reference.sort();
                let (t, s) = reference.remove(0);
                let (qt, qe) = q.pop().unwrap();
                assert_eq!((qt, qe), (SimTime(t), Event::Sample(s)));
                now = t;
            }
            assert_eq!(q.len(), reference.len());
        }
    }
}

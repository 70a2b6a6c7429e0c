//! The pending-event set, ordered by (time, insertion sequence): the next event held apart,
//! a calendar of near-future buckets and a 4-ary min-heap behind it (see [`EventQueue`]).
//!
//! Ties in time are broken by the order of scheduling, so a run is a pure function of the
//! scenario and its seed. Events are small plain values that name their target by index.

use crate::base::ids::{AppId, FlowId, PortId};
use crate::base::units::SimTime;
use crate::engine::observe::SampleKind;
use crate::model::transport::TimerKind;

/// What happens when an event fires. Targets are indices into the simulation's arenas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port finished serializing a packet and may start the next one from its queue.
    PortTxDone(PortId),
    /// The packet at the head of a port's wire (its in-flight FIFO) reaches the far end.
    LinkArrive(PortId),
    /// A timer of a flow's transport endpoint (a lazy deadline, `model/transport`): `kind`
    /// is the endpoint's own number for it.
    Timer { flow: FlowId, kind: TimerKind },
    /// An application event (start of a flow, next request, next CBR packet, ...).
    App { app: AppId, arg: u32 },
    /// A periodic measurement sample.
    Sample(SampleKind),
    /// A layer-2 event (`engine/datapath/l2/mod.rs`): rate-limiter release or timer, PAUSE refresh, service
    /// rate change, L2 sampler. `kind` says which, `idx` names the target.
    L2 { idx: u32, kind: L2Kind },
    /// The NIC scheduler of a port may pull its next packet (`engine/datapath/nic.rs`).
    Nic(PortId),
    /// End of the simulation.
    Stop,
}

/// Which layer-2 event an `Event::L2` is (`engine/datapath/l2`); `idx` names its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum L2Kind {
    /// A rate limiter may release its next frame (`idx`: limiter).
    RlRelease = 0,
    /// A QCN reaction point's timer (`idx`: limiter).
    RlTimer = 1,
    /// A switch re-sends PAUSE frames that are still needed (`idx`: switch node).
    PauseRefresh = 2,
    /// A scheduled link-rate change (`idx`: entry of the change list).
    RateChange = 3,
    /// Sample the reaction points' rates.
    SampleRp = 4,
    /// Sample per-flow and per-CBR-app delivered rates.
    SampleFlow = 5,
}

impl L2Kind {
    /// The kind stored as `k as u8`.
    #[inline(always)]
    pub fn from_u8(k: u8) -> L2Kind {
        match k {
            0 => L2Kind::RlRelease,
            1 => L2Kind::RlTimer,
            2 => L2Kind::PauseRefresh,
            3 => L2Kind::RateChange,
            4 => L2Kind::SampleRp,
            _ => L2Kind::SampleFlow,
        }
    }
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
            Event::PortTxDone(p) => (0, p.0, 0),
            Event::LinkArrive(p) => (1, p.0, 0),
            Event::Timer { flow, kind } => (2 | (kind.0 as u32) << 8, flow.0, 0),
            Event::App { app, arg } => (3, app.0, arg),
            Event::Sample(k) => (4, k as u32, 0),
            Event::L2 { idx, kind } => (5 | (kind as u32) << 8, idx, 0),
            Event::Stop => (6, 0, 0),
            Event::Nic(p) => (7, p.0, 0),
        };
        RawEvent { head, a, b }
    }

    #[inline(always)]
    pub fn decode(r: RawEvent) -> Event {
        let kind = (r.head >> 8) as u8;
        match r.head & 0xff {
            0 => Event::PortTxDone(PortId(r.a)),
            1 => Event::LinkArrive(PortId(r.a)),
            2 => Event::Timer {
                flow: FlowId(r.a),
                kind: TimerKind(kind),
            },
            3 => Event::App {
                app: AppId(r.a),
                arg: r.b,
            },
            4 => Event::Sample(SampleKind::from_u8(r.a as u8)),
            5 => Event::L2 {
                idx: r.a,
                kind: L2Kind::from_u8(kind),
            },
            7 => Event::Nic(PortId(r.a)),
            _ => Event::Stop,
        }
    }
}

/// Bits of a key's `tag` that hold the event itself; the insertion sequence number is in
/// the 24 bits above (renumbered in order before it would overflow, every 16.7 M
/// schedules: a sort of the pending keys, negligible beside the events run meanwhile).
///
/// The 40 bits are the variant (4 bits), its `kind` byte's low 4 bits and the word `a`: every
/// event but `App` (whose `b` carries an argument) travels inside its key, so scheduling and
/// popping it touch no other memory. The others are stored in the slab, and the key holds
/// [`IN_SLAB`] and their slot.
const PAYLOAD_BITS: u32 = 40;
const PAYLOAD_MASK: u64 = (1 << PAYLOAD_BITS) - 1;
const SEQ_LIMIT: u64 = 1 << (64 - PAYLOAD_BITS);
/// Where the variant sits in the payload (above the `kind` nibble and the 32-bit word).
const VARIANT_SHIFT: u32 = 36;
/// Variant bits of a key whose event is in the slab (`a` is the slot).
const IN_SLAB: u64 = 0xf;

/// The 40 payload bits of an event that fits in its key (`b` zero, a variant and `kind`
/// below 16), else None.
#[inline(always)]
fn inline_payload(head: u32, a: u32, b: u32) -> Option<u64> {
    let (variant, kind) = (head & 0xff, head >> 8);
    (b == 0 && (variant as u64) < IN_SLAB && kind < 16)
        .then_some((variant as u64) << VARIANT_SHIFT | (kind as u64) << 32 | a as u64)
}

/// A key: 16 bytes, four to a cache line. `(time, tag)` orders like `(time, seq)`
/// because the sequence number occupies the high bits of `tag` and is unique, so every
/// pending key is distinct and "the smallest key" names one event whatever structure holds
/// it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Key {
    time: u64,
    tag: u64,
}

impl Key {
    #[inline(always)]
    fn before(self, o: Key) -> bool {
        ((self.time as u128) << 64 | self.tag as u128) < ((o.time as u128) << 64 | o.tag as u128)
    }
    /// The slab slot of a key whose event waits in the slab (None: the event is in the key).
    #[inline(always)]
    fn slab_slot(self) -> Option<usize> {
        let p = self.tag & PAYLOAD_MASK;
        (p >> VARIANT_SHIFT == IN_SLAB).then_some(p as u32 as usize)
    }
}

/// Four keys on one 64-byte cache line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Line([Key; 4]);

/// A 4-ary min-heap of keys laid out so that each node's children are one cache line: a
/// pop touches about log4(n) lines.
struct Heap {
    /// Node `h` lives at position `h + 3` (children `4h + 1 ..= 4h + 4` at positions
    /// `4h + 4 ..= 4h + 7`: one aligned line).
    lines: Vec<Line>,
    len: usize,
}

impl Heap {
    fn new() -> Self {
        Heap {
            lines: vec![Line::default(); 64],
            len: 0,
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

    #[inline(always)]
    fn peek(&self) -> Option<Key> {
        (self.len > 0).then(|| self.get(0))
    }

    /// (Out of line, like [`Heap::pop`]: the heap takes the rare far or overflowing key,
    /// and its loop inlined would make every schedule and pop save registers for it.)
    #[inline(never)]
    fn push(&mut self, key: Key) {
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
    }

    /// Remove the root (the caller checked that the heap is not empty).
    #[inline(never)]
    fn pop(&mut self) -> Key {
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
        top
    }

    fn drain_keys(&mut self, out: &mut Vec<Key>) {
        out.extend((0..self.len).map(|h| self.get(h)));
        self.len = 0;
    }
}

/// log2 of the calendar's bucket width in picoseconds until the simulation sets its horizon
/// ([`EventQueue::set_horizon`]): 8.2 ns.
const BUCKET_SHIFT: u32 = 13;
/// Buckets in the calendar until the simulation sets its horizon (a power of two; 64 per
/// bitmap word). The calendar covers its buckets' widths ahead of the last popped time
/// (33.5 µs by default): serialisations, link delays and short timers. Later events wait
/// in the heap.
const DEFAULT_BUCKETS: usize = 4096;
/// The most buckets the calendar has (the length of its arrays). A 320-host fat-tree of
/// 100 and 400 Gb/s links keeps about 13 events per simulated nanosecond coming; on 4 096
/// buckets (0.5 ns each over its 1.1 µs hop) one schedule in twelve found its bucket's
/// eight keys taken and went to the heap, on 8 192 one in 130 (docs/performance.md; 16 384
/// halved that again and saved no time, and cost every run's start the writes of 2 MiB).
const BUCKETS: usize = 8192;
/// The fewest buckets [`EventQueue::set_horizon`] picks (one bitmap word).
const MIN_BUCKETS: usize = 64;
/// The narrowest bucket [`EventQueue::set_horizon`] picks: 2⁶ ps = 64 ps.
const MIN_SHIFT: u32 = 6;
/// Schedules between two reviews of the calendar's geometry (`EventQueue::checkpoint`).
const REVIEW_EVERY: u64 = 1 << 13;
/// Reviews whose calendar sizes are averaged before the calendar is resized.
const REVIEWS_PER_DECISION: u32 = 16;
/// Buckets per key held that the reviews aim at (within a factor of two either way).
const BUCKETS_PER_KEY: u64 = 16;
/// Keys a bucket holds (two cache lines); a ninth key for the same bucket goes to the heap.
const BUCKET_KEYS: usize = 8;
/// A calendar is crowded when more than one schedule in this many found its bucket full
/// (between two decisions of the reviews); only then does it grow past its starting count.
const CROWDED: u64 = 64;

/// One calendar bucket: `BUCKET_KEYS` keys on whole cache lines.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Bucket([Key; BUCKET_KEYS]);

/// A calendar of time buckets for the near future: bucket `(t >> shift) % buckets`
/// holds up to `BUCKET_KEYS` keys of events due in its slot, unsorted. Only events due before
/// `base + buckets` slots are put here, where `base` is the slot of the last popped event,
/// so the buckets from `base`'s onwards, taken cyclically, are in time order.
///
/// The arrays have the largest geometry's length whatever the network's (`BUCKETS`; only
/// the first `buckets` entries are used), so that an index masked to the geometry is also
/// provably inside the array: a schedule and a pop then carry no bounds checks (the event
/// queue was a third of the star incast's instructions; docs/performance.md, "Where the
/// time goes").
struct Calendar {
    lines: Box<[Bucket; BUCKETS]>,
    counts: Box<[u8; BUCKETS]>,
    /// Bit `b % 64` of word `b / 64`: bucket `b` holds a key.
    bits: Box<[u64; BUCKETS / 64]>,
    /// Slot (time >> shift) of the last popped event: no pending event is earlier.
    base: u64,
    /// Buckets in use minus one (a power of two minus one, below `BUCKETS`).
    mask: usize,
    /// log2 of the bucket width in picoseconds.
    shift: u32,
    len: usize,
    /// Keys due within the span that found their bucket full (counted for the reviews).
    full: u64,
}

/// A boxed array of `N` default values, built on the heap.
fn boxed_array<T: Clone + Default, const N: usize>() -> Box<[T; N]> {
    match vec![T::default(); N].into_boxed_slice().try_into() {
        Ok(a) => a,
        Err(_) => unreachable!("a vector of N elements"),
    }
}

impl Calendar {
    fn new(buckets: usize, shift: u32) -> Self {
        debug_assert!(buckets.is_power_of_two() && (MIN_BUCKETS..=BUCKETS).contains(&buckets));
        Calendar {
            lines: boxed_array(),
            counts: boxed_array(),
            bits: boxed_array(),
            base: 0,
            mask: buckets - 1,
            shift,
            len: 0,
            full: 0,
        }
    }

    #[inline(always)]
    fn buckets(&self) -> usize {
        self.mask + 1
    }

    /// The bucket of slot `slot` (masked twice: to the geometry, and to the arrays' length,
    /// which the geometry never exceeds, so that the compiler sees the index in bounds).
    #[inline(always)]
    fn bucket_of(&self, slot: u64) -> usize {
        slot as usize & self.mask & (BUCKETS - 1)
    }

    /// Store `key` if it is due within the calendar's span and its bucket has room.
    #[inline(always)]
    fn try_push(&mut self, key: Key) -> bool {
        let slot = key.time >> self.shift;
        if slot.wrapping_sub(self.base) > self.mask as u64 {
            return false;
        }
        let b = self.bucket_of(slot);
        let n = self.counts[b] as usize;
        if n >= BUCKET_KEYS {
            self.full += 1;
            return false;
        }
        self.lines[b].0[n] = key;
        self.counts[b] = n as u8 + 1;
        self.bits[b >> 6] |= 1 << (b & 63);
        self.len += 1;
        true
    }

    /// The first non-empty bucket in time order (the caller checked `len > 0`).
    #[inline(always)]
    fn first_bucket(&self) -> usize {
        let start = self.bucket_of(self.base);
        let wmask = (self.mask >> 6) & (BUCKETS / 64 - 1);
        let mut w = start >> 6;
        let mut word = self.bits[w] & (!0u64 << (start & 63));
        // At most one full lap over the words (plus the start word's low bits at the end).
        for _ in 0..=wmask + 1 {
            if word != 0 {
                return (w << 6) | word.trailing_zeros() as usize;
            }
            w = (w + 1) & wmask;
            word = self.bits[w];
        }
        unreachable!("calendar count and bitmap disagree")
    }

    /// The smallest key of bucket `b` (below `BUCKETS`) and its index in the bucket.
    #[inline(always)]
    fn min_in(&self, b: usize) -> (usize, Key) {
        let b = b & (BUCKETS - 1);
        let l = &self.lines[b].0;
        let n = (self.counts[b] as usize).min(BUCKET_KEYS);
        let mut i = 0;
        for j in 1..n {
            if l[j].before(l[i]) {
                i = j;
            }
        }
        (i, l[i])
    }

    /// Remove key `i` of bucket `b` (the last key takes its place).
    #[inline(always)]
    fn remove(&mut self, b: usize, i: usize) {
        let b = b & (BUCKETS - 1);
        let n = self.counts[b].wrapping_sub(1);
        let l = &mut self.lines[b].0;
        l[i % BUCKET_KEYS] = l[n as usize % BUCKET_KEYS];
        self.counts[b] = n;
        if n == 0 {
            self.bits[b >> 6] &= !(1 << (b & 63));
        }
        self.len -= 1;
    }

    /// Move every key to `out`, leaving the calendar empty.
    fn drain_keys(&mut self, out: &mut Vec<Key>) {
        for b in 0..self.buckets() {
            let n = self.counts[b] as usize;
            out.extend_from_slice(&self.lines[b].0[..n]);
            self.counts[b] = 0;
        }
        self.bits.iter_mut().for_each(|w| *w = 0);
        self.len = 0;
    }

    /// A new geometry for the empty calendar: `buckets` buckets (a power of two,
    /// `MIN_BUCKETS..=BUCKETS`) of `2^shift` ps from slot `base`.
    fn reshape(&mut self, buckets: usize, shift: u32, base: u64) {
        debug_assert!(self.len == 0 && buckets.is_power_of_two());
        debug_assert!((MIN_BUCKETS..=BUCKETS).contains(&buckets));
        self.mask = buckets - 1;
        self.shift = shift;
        self.base = base;
    }
}

/// The pending-event set, popped in exact (time, scheduling order). Near-future events
/// (the great majority: packet arrivals and ends of serialisation) sit in a calendar of
/// narrow buckets sized to the network, where a push and a pop cost a few loads on lines that are read in time
/// order; later events, and the rare ninth event in one bucket, wait in a 4-ary heap. A pop
/// takes the smaller of the two candidates' keys. An event travels inside its key, except
/// an `App` event with its argument, which waits in a slab that never moves (the key names
/// its slot; `PAYLOAD_BITS`). The two smallest keys are kept apart (`staged`): the caller
/// can see the next two events ([`EventQueue::peek_raw`], [`EventQueue::peek2_raw`]) while
/// it handles the current one, and prefetch.
pub struct EventQueue {
    /// The two smallest pending keys, held outside the calendar and the heap, smallest
    /// first (the first `staged_n` are valid; they are the minima of everything pending).
    /// Knowing the next two events lets `Sim::run` prefetch the memory they will touch in
    /// two steps: the second event's port now, and through that port, already in the
    /// cache, the next event's packet (docs/performance.md, "How the speed is obtained").
    staged: [Key; 2],
    staged_n: u8,
    /// One more key, held apart because it came before `staged[0]` when it was scheduled
    /// by [`Self::schedule_soon`] (valid while `lane_full`): most often a port's transmit
    /// event at the current time, scheduled and popped within the same instant. Kept here it neither pushes
    /// `staged[1]` into the calendar nor makes the pop refill from it. A pop takes the
    /// smaller of it and `staged[0]`, so the order stays exact.
    lane: Key,
    lane_full: bool,
    cal: Calendar,
    heap: Heap,
    slab: Vec<RawEvent>,
    free: Vec<u32>,
    seq: u64,
    /// The sequence number at which a schedule takes the cold path first
    /// ([`Self::checkpoint`]: renumbering at `SEQ_LIMIT`, a review of the calendar's
    /// geometry every [`REVIEW_EVERY`] schedules). The hot path compares `seq` with it as it
    /// compared with `SEQ_LIMIT` before, so the reviews cost it nothing.
    check_at: u64,
    /// What the reviews need: the span that `set_horizon` was given (0: never set, no
    /// reviews), its bucket count (the most a review grows to), and the co-residency seen so
    /// far (`Calendar::co_residency`, summed over the reviews since the last decision).
    span: u64,
    max_buckets: usize,
    /// The count `set_horizon` gave: past it the reviews grow the calendar only while its
    /// buckets overflow ([`CROWDED`]).
    start_buckets: usize,
    seen: u64,
    reviews: u32,
    /// Keys pending (staged, calendar and heap).
    len: usize,
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
            staged: [Key::default(); 2],
            staged_n: 0,
            lane: Key::default(),
            lane_full: false,
            cal: Calendar::new(DEFAULT_BUCKETS, BUCKET_SHIFT),
            heap: Heap::new(),
            slab: Vec::with_capacity(1024),
            free: Vec::with_capacity(1024),
            seq: 0,
            check_at: REVIEW_EVERY,
            span: 0,
            max_buckets: DEFAULT_BUCKETS,
            start_buckets: DEFAULT_BUCKETS,
            seen: 0,
            reviews: 0,
            len: 0,
            popped: 0,
            peak_len: 0,
        }
    }

    /// Schedule `ev` at `at`. Inlined so that the event's words are built in registers at
    /// the call site, where the variant is a constant: whether the event fits in its key,
    /// and its payload bits, are then mostly worked out by the compiler. The queue work is
    /// in `push_inline` (the common case) and `push_general`.
    #[inline(always)]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        let r = ev.encode();
        match inline_payload(r.head, r.a, r.b) {
            Some(payload) => self.push_inline(at.0, payload),
            None => self.push_general(at.0, r.head, r.a, r.b),
        }
    }

    /// The common case: an event that fits in its key (`payload`), with something pending
    /// and a counter that need not be renumbered; anything else goes to
    /// [`Self::push_general`]. Keeping this path free of those calls spares it saving
    /// registers.
    #[inline(never)]
    fn push_inline(&mut self, at: u64, payload: u64) {
        if self.staged_n < 2 || self.seq >= self.check_at {
            return self.push_payload(at, payload);
        }
        let key = self.next_key(at, payload);
        let key = self.stage(key);
        self.store(key);
    }

    /// [`Self::schedule`] of an event that is likely due before every pending one (a
    /// port's transmit when its frame in service ends, often at the current instant): if
    /// it is due earlier in time than the first staged key and the lane is free, it waits
    /// in the lane. Only such call sites pay for the test.
    #[inline(always)]
    pub fn schedule_soon(&mut self, at: SimTime, ev: Event) {
        let r = ev.encode();
        match inline_payload(r.head, r.a, r.b) {
            // (`seq < check_at`: the sequence number must not pass its limit unrenumbered.)
            Some(payload)
                if self.staged_n == 2
                    && at.0 < self.staged[0].time
                    && !self.lane_full
                    && self.seq < self.check_at =>
            {
                self.lane = self.next_key(at.0, payload);
                self.lane_full = true;
            }
            Some(payload) => self.push_inline(at.0, payload),
            None => self.push_general(at.0, r.head, r.a, r.b),
        }
    }

    /// With two keys staged: put `key` in its place among them and return the largest of
    /// the three (the one to store).
    #[inline(always)]
    fn stage(&mut self, key: Key) -> Key {
        if !key.before(self.staged[1]) {
            return key;
        }
        let mut second = key;
        if key.before(self.staged[0]) {
            second = std::mem::replace(&mut self.staged[0], key);
        }
        std::mem::replace(&mut self.staged[1], second)
    }

    /// Any event: [`Self::push_payload`] of its payload, which points to the slab when the
    /// event does not fit in its key.
    #[cold]
    #[inline(never)]
    fn push_general(&mut self, at: u64, head: u32, a: u32, b: u32) {
        let payload = match inline_payload(head, a, b) {
            Some(p) => p,
            None => IN_SLAB << VARIANT_SHIFT | self.put_in_slab(RawEvent { head, a, b }),
        };
        self.push_payload(at, payload);
    }

    /// Schedule the event of `payload` (its bits, or its slab slot) at `at`, in every case.
    #[cold]
    #[inline(never)]
    fn push_payload(&mut self, at: u64, payload: u64) {
        if self.seq >= self.check_at {
            self.checkpoint();
        }
        let key = self.next_key(at, payload);
        match self.staged_n {
            0 => {
                // Nothing pending: the new key is the minimum.
                self.staged[0] = key;
                self.staged_n = 1;
            }
            1 => {
                // Nothing stored: the two keys are the two smallest.
                self.staged[1] = key;
                if key.before(self.staged[0]) {
                    self.staged.swap(0, 1);
                }
                self.staged_n = 2;
            }
            _ => {
                let k = self.stage(key);
                self.store(k);
            }
        }
    }

    /// The key of a new event (`payload` at `at`, the next sequence number), now counted
    /// as pending.
    #[inline(always)]
    fn next_key(&mut self, at: u64, payload: u64) -> Key {
        let key = Key {
            time: at,
            tag: (self.seq << PAYLOAD_BITS) | payload,
        };
        self.seq += 1;
        self.len += 1;
        if self.len > self.peak_len {
            self.peak_len = self.len;
        }
        key
    }

    /// Store an event that does not fit in its key; returns its slot.
    #[cold]
    fn put_in_slab(&mut self, ev: RawEvent) -> u64 {
        match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = ev;
                s as u64
            }
            None => {
                assert!(
                    (self.slab.len() as u64) < u32::MAX as u64,
                    "more than {} events pending at once",
                    u32::MAX
                );
                self.slab.push(ev);
                (self.slab.len() - 1) as u64
            }
        }
    }

    /// The event of key `k` (from the key itself, or from the slab).
    #[inline(always)]
    fn event_of(&self, k: Key) -> RawEvent {
        if let Some(slot) = k.slab_slot() {
            return self.slab[slot];
        }
        let p = k.tag & PAYLOAD_MASK;
        RawEvent {
            head: (p >> VARIANT_SHIFT | ((p >> 32) & 0xf) << 8) as u32,
            a: p as u32,
            b: 0,
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        self.pop_raw().map(|(t, r)| (t, Event::decode(r)))
    }

    /// Put a key that is not the minimum into the calendar or the heap.
    #[inline(always)]
    fn store(&mut self, key: Key) {
        if !self.cal.try_push(key) {
            self.heap.push(key);
        }
    }

    /// Remove and return the smallest key of the calendar and the heap.
    #[inline(always)]
    fn take_min(&mut self) -> Option<Key> {
        let k = if self.cal.len > 0 {
            let b = self.cal.first_bucket();
            let (i, k) = self.cal.min_in(b);
            match self.heap.peek() {
                Some(h) if h.before(k) => self.heap.pop(),
                _ => {
                    self.cal.remove(b, i);
                    k
                }
            }
        } else if self.heap.len > 0 {
            self.heap.pop()
        } else {
            return None;
        };
        Some(k)
    }

    /// The earliest event in its stored form (`Sim::run` dispatches it without rebuilding
    /// the enum).
    #[inline]
    pub fn pop_raw(&mut self) -> Option<(SimTime, RawEvent)> {
        if self.lane_first() {
            // Popped from the lane: the staged keys and the calendar are untouched (the
            // lane holds only keys with their event inside).
            self.lane_full = false;
            let top = self.lane;
            self.len -= 1;
            self.popped += 1;
            return Some((SimTime(top.time), self.event_of(top)));
        }
        if self.staged_n == 0 {
            return None;
        }
        let top = self.staged[0];
        // The calendar starts at the slot of the event being popped, the simulation's new
        // `now`: no pending key is earlier, and every key scheduled while it is handled
        // (at `now` or later) finds its bucket. Starting it at the next event's slot
        // instead (as before) sent every key due between the two to the heap: on a 10 Gb/s
        // star where eight senders run in step, nearly every key.
        self.cal.base = self.cal.base.max(top.time >> self.cal.shift);
        self.staged[0] = self.staged[1];
        if self.staged_n == 2 {
            match self.take_min() {
                Some(k) => self.staged[1] = k,
                None => self.staged_n = 1,
            }
        } else {
            self.staged_n = 0;
        }
        let ev = self.event_of(top);
        if let Some(slot) = top.slab_slot() {
            self.free.push(slot as u32);
        }
        self.len -= 1;
        self.popped += 1;
        Some((SimTime(top.time), ev))
    }

    /// The event that `pop_raw` will return next if nothing earlier is scheduled first
    /// (for prefetching; it stays pending).
    #[inline(always)]
    pub fn peek_raw(&self) -> Option<RawEvent> {
        if !self.lane_full {
            return (self.staged_n > 0).then(|| self.event_of(self.staged[0]));
        }
        self.next_two()[0].map(|k| self.event_of(k))
    }

    /// The event after that one, likewise (for prefetching two events ahead).
    #[inline(always)]
    pub fn peek2_raw(&self) -> Option<RawEvent> {
        if !self.lane_full {
            return (self.staged_n > 1).then(|| self.event_of(self.staged[1]));
        }
        self.next_two()[1].map(|k| self.event_of(k))
    }

    pub fn peek_time(&self) -> Option<SimTime> {
        self.next_two()[0].map(|k| SimTime(k.time))
    }

    /// Whether the lane holds the smallest pending key.
    #[inline(always)]
    fn lane_first(&self) -> bool {
        self.lane_full && (self.staged_n == 0 || self.lane.before(self.staged[0]))
    }

    /// The two smallest pending keys, in order.
    #[inline(always)]
    fn next_two(&self) -> [Option<Key>; 2] {
        let s0 = (self.staged_n > 0).then_some(self.staged[0]);
        let s1 = (self.staged_n > 1).then_some(self.staged[1]);
        if !self.lane_full {
            return [s0, s1];
        }
        if self.lane_first() {
            return [Some(self.lane), s0];
        }
        // staged[0] first; the lane came after it, but may come before staged[1].
        match s1 {
            Some(k) if k.before(self.lane) => [s0, s1],
            _ => [s0, Some(self.lane)],
        }
    }

    pub fn len(&self) -> usize {
        debug_assert_eq!(
            self.len,
            self.cal.len + self.heap.len + self.staged_n as usize + self.lane_full as usize
        );
        self.len
    }

    /// Bytes of the calendar's buckets, counts and bitmap (the part every schedule and pop
    /// touches).
    pub fn calendar_bytes(&self) -> usize {
        let b = self.cal.buckets();
        b * (std::mem::size_of::<Bucket>() + 1) + b / 8
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Move every key of the calendar and the heap (not the staged one) to `keys`; the
    /// caller puts them back (`store`) under a new geometry or numbering.
    fn drain_stored(&mut self, keys: &mut Vec<Key>) {
        self.cal.drain_keys(keys);
        self.heap.drain_keys(keys);
    }

    /// Size the calendar for the simulation: it covers `span` ahead of the current time
    /// (the longest a packet takes from the start of its serialisation to its arrival at
    /// the next node; `Sim::start` passes the largest link delay plus a 1500-byte frame's
    /// serialisation) with `buckets` buckets (rounded up to a power of two, 64 ..= 8 192),
    /// each of the narrowest width that covers the span. A small network keeps few near
    /// events pending, and a calendar sized to it stays in the nearest cache (every push
    /// writes a bucket line that was last touched a lap earlier); a large one needs more
    /// buckets, so that fewer events share one and overflow into the heap. Order is
    /// unchanged: pending keys are put back where the new geometry says, and every
    /// structure keeps the exact (time, scheduling order).
    ///
    /// That count is a ceiling: while the calendar runs, [`Self::checkpoint`] halves it
    /// when its keys rarely share a bucket and doubles it back when they crowd
    /// (`review_geometry`).
    pub fn set_horizon(&mut self, span: SimTime, buckets: usize) {
        let buckets = buckets.clamp(MIN_BUCKETS, BUCKETS).next_power_of_two();
        self.span = span.0;
        self.max_buckets = buckets;
        self.start_buckets = buckets;
        self.regeometry(buckets);
    }

    /// Let the reviews grow the calendar up to `buckets` buckets (rounded up to a power of
    /// two, at most 8 192), beyond the count [`Self::set_horizon`] started it with, while
    /// more than one schedule in [`CROWDED`] finds its bucket full.
    pub fn allow_growth_to(&mut self, buckets: usize) {
        let b = buckets.clamp(MIN_BUCKETS, BUCKETS).next_power_of_two();
        self.max_buckets = self.max_buckets.max(b);
    }

    /// Put the calendar on `buckets` buckets (a power of two in `MIN_BUCKETS..=BUCKETS`) of
    /// the narrowest width that covers `self.span`, and the stored keys back where the new
    /// geometry says (the order is unchanged).
    fn regeometry(&mut self, buckets: usize) {
        let mut shift = MIN_SHIFT;
        while shift < 40 && ((buckets as u64) << shift) < self.span {
            shift += 1;
        }
        if shift == self.cal.shift && buckets == self.cal.buckets() {
            return;
        }
        let now = self.cal.base << self.cal.shift;
        let mut keys = Vec::with_capacity(self.len());
        self.drain_stored(&mut keys);
        self.cal.reshape(buckets, shift, now >> shift);
        for k in keys {
            self.store(k);
        }
    }

    /// The cold part of a schedule whose sequence number reached `check_at`: renumber the
    /// keys if the counter is at its limit, else review the calendar's geometry; then set
    /// the next checkpoint.
    #[cold]
    #[inline(never)]
    fn checkpoint(&mut self) {
        if self.seq >= SEQ_LIMIT {
            self.renumber();
        } else if self.span > 0 {
            self.review_geometry();
        }
        self.check_at = (self.seq + REVIEW_EVERY).min(SEQ_LIMIT);
    }

    /// Every [`REVIEWS_PER_DECISION`] reviews, resize the calendar by the keys it held at
    /// the reviews (their mean, `k`): halve it while it has more than twice
    /// [`BUCKETS_PER_KEY`] · k buckets, double it (up to the `set_horizon` count) while it
    /// has fewer than half as many. The count that `set_horizon` gets is right for a network
    /// whose ports are all busy; a star's senders take turns, and there a smaller calendar
    /// holds the same keys on fewer cache lines (docs/performance.md, "How the speed is
    /// obtained"). The width doubles as the count halves, so the calendar spans what it
    /// spanned; the order of events is the same whatever the geometry, and outputs do not
    /// depend on these reviews.
    fn review_geometry(&mut self) {
        self.seen += self.cal.len as u64;
        self.reviews += 1;
        if self.reviews < REVIEWS_PER_DECISION {
            return;
        }
        // Buckets the keys want: BUCKETS_PER_KEY times their mean count.
        let want = self.seen * BUCKETS_PER_KEY / REVIEWS_PER_DECISION as u64;
        let crowded = self.cal.full * CROWDED > REVIEW_EVERY * REVIEWS_PER_DECISION as u64;
        (self.seen, self.reviews, self.cal.full) = (0, 0, 0);
        let b = self.cal.buckets();
        if b as u64 > 2 * want && b > MIN_BUCKETS {
            self.regeometry(b / 2);
        } else if (b as u64) < want / 2
            && b < self.max_buckets
            && (b < self.start_buckets || crowded)
        {
            self.regeometry(b * 2);
        }
    }

    /// Give the pending keys new sequence numbers 0, 1, … in their current order (same
    /// relative order, so the run is unchanged); called before the 24-bit counter wraps.
    #[cold]
    #[inline(never)]
    fn renumber(&mut self) {
        let mut keys = Vec::with_capacity(self.len());
        keys.extend_from_slice(&self.staged[..self.staged_n as usize]);
        self.staged_n = 0;
        if self.lane_full {
            keys.push(self.lane);
            self.lane_full = false;
        }
        self.drain_stored(&mut keys);
        // The sequence numbers 0..n must fit their 24 bits (the limit the slab's 24-bit
        // slots set before).
        assert!(
            (keys.len() as u64) < SEQ_LIMIT / 2,
            "more than {} events pending at once",
            SEQ_LIMIT / 2
        );
        keys.sort_by_key(|k| (k.time, k.tag));
        for (i, k) in keys.iter_mut().enumerate() {
            k.tag = ((i as u64) << PAYLOAD_BITS) | (k.tag & PAYLOAD_MASK);
        }
        self.seq = keys.len() as u64;
        // The sorted keys: the first two are staged, the rest stored.
        let n = keys.len().min(2);
        self.staged[..n].copy_from_slice(&keys[..n]);
        self.staged_n = n as u8;
        for &k in &keys[n..] {
            self.store(k);
        }
    }
}

#[cfg(test)]
mod tests;

//! The pending-event set: a binary min-heap ordered by (time, insertion sequence).
//!
//! Ties in time are broken by the order of scheduling, so a run is a pure function of the
//! scenario and its seed. Events are small plain values that name their target by index.

use crate::units::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    ev: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, we want the earliest (time, seq) first.
        o.key.cmp(&self.key)
    }
}

/// The event queue. `len()` is the size of the pending set, reported by benchmarks.
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
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
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
            popped: 0,
            peak_len: 0,
        }
    }

    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: Event) {
        let key = ((at.0 as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, ev });
        if self.heap.len() > self.peak_len {
            self.peak_len = self.heap.len();
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some((SimTime((e.key >> 64) as u64), e.ev))
    }

    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime((e.key >> 64) as u64))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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

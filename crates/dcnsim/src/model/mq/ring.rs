//! The ring buffer of a class queue: a FIFO of `Copy` entries in 24 bytes (a boxed slice,
//! a start and a length of 32 bits), where a `VecDeque` takes 32. With its byte count and
//! its counters a class queue then fills one cache line ([`super::ClassQueue`]).
//!
//! The ring allocates nothing until its first entry (then [`super::DEFAULT_QUEUE_CAPACITY`]
//! slots) and doubles when full, so it settles at the largest backlog it has held. Once it
//! drains, the next entry goes to its first slot: a queue that holds a few packets at a
//! time keeps reusing the same few lines, however long it once was.

#[derive(Clone, Debug)]
pub struct Ring<T: Copy> {
    /// The slots; those outside `head .. head + len` (cyclically) hold stale copies.
    buf: Box<[T]>,
    head: u32,
    len: u32,
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Box::default(),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy> Ring<T> {
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Slots allocated.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }
    #[inline]
    pub fn front(&self) -> Option<&T> {
        if self.len == 0 {
            None
        } else {
            self.buf.get(self.head as usize)
        }
    }
    #[inline]
    pub fn push_back(&mut self, x: T) {
        if self.len as usize == self.buf.len() {
            self.grow(x);
        }
        let cap = self.buf.len();
        let mut i = self.head as usize + self.len as usize;
        if i >= cap {
            i -= cap;
        }
        if let Some(s) = self.buf.get_mut(i) {
            *s = x;
        }
        self.len += 1;
    }
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        let x = *self.front()?;
        self.len -= 1;
        self.head = if self.len == 0 {
            // Drained: the next entry starts again at the first slot.
            0
        } else if self.head as usize + 1 == self.buf.len() {
            0
        } else {
            self.head + 1
        };
        Some(x)
    }
    /// The entries in order, front first.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        let (h, n, cap) = (self.head as usize, self.len as usize, self.buf.len());
        (0..n).map(move |k| &self.buf[(h + k) % cap])
    }

    /// Double the slots (or allocate the first ones), the entries moved to the front in
    /// order; `x` (the entry about to be pushed) fills the new slots.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, x: T) {
        let cap = (2 * self.buf.len()).max(super::DEFAULT_QUEUE_CAPACITY);
        assert!(cap <= u32::MAX as usize, "a class queue of 2³² packets");
        let mut v = Vec::with_capacity(cap);
        v.extend(self.iter().copied());
        v.resize(cap, x);
        self.buf = v.into_boxed_slice();
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;

    /// First in, first out across wrap-arounds and growth; a drained ring starts again
    /// at its first slot.
    #[test]
    fn fifo_order_through_wraps_and_growth() {
        let mut r: Ring<u32> = Ring::default();
        assert_eq!((r.capacity(), r.front()), (0, None));
        assert_eq!(r.pop_front(), None);
        let mut model = std::collections::VecDeque::new();
        let mut next = 0u32;
        // Pushes and pops in a pattern that wraps the ring and grows it while wrapped.
        for round in 0..50u32 {
            for _ in 0..(round % 7) {
                r.push_back(next);
                model.push_back(next);
                next += 1;
            }
            for _ in 0..(round % 5) {
                assert_eq!(r.pop_front(), model.pop_front());
            }
            assert_eq!(r.len(), model.len());
            assert_eq!(r.front(), model.front());
            assert!(r.iter().eq(model.iter()));
        }
        while let Some(x) = model.pop_front() {
            assert_eq!(r.pop_front(), Some(x));
        }
        assert!(r.is_empty());
        let cap = r.capacity();
        r.push_back(7);
        assert_eq!((r.head, r.capacity()), (0, cap));
    }

    #[test]
    fn the_first_entry_allocates_the_default_capacity_then_it_doubles() {
        let mut r: Ring<u64> = Ring::default();
        r.push_back(1);
        assert_eq!(r.capacity(), crate::model::mq::DEFAULT_QUEUE_CAPACITY);
        for x in 2..=5 {
            r.push_back(x);
        }
        assert_eq!(r.capacity(), 2 * crate::model::mq::DEFAULT_QUEUE_CAPACITY);
        assert_eq!(std::mem::size_of::<Ring<u64>>(), 24);
    }
}

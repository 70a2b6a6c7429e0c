//! The lazily armed timer of the transports: one pending engine event per timer, however
//! often the protocol moves its deadline.

use crate::base::units::SimTime;

/// A lazily armed timer: `deadline` is what the protocol wants, `event_at` the time of the
/// one pending event the engine holds for it (`SimTime::NEVER`: none). Moving a deadline
/// later costs nothing; the event that then fires early is ignored and re-armed. Every
/// transport's timers are of this type (TCP's as `tcp::Timer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LazyTimer {
    pub deadline: SimTime,
    pub event_at: SimTime,
}

impl Default for LazyTimer {
    fn default() -> Self {
        LazyTimer {
            deadline: SimTime::NEVER,
            event_at: SimTime::NEVER,
        }
    }
}

impl LazyTimer {
    pub fn armed(&self) -> bool {
        !self.deadline.is_never()
    }
    pub fn set(&mut self, at: SimTime) {
        self.deadline = at;
    }
    pub fn stop(&mut self) {
        self.deadline = SimTime::NEVER;
    }
    /// If the engine must schedule an event (at the deadline): note it as scheduled and
    /// return its time.
    #[inline]
    pub fn take_event(&mut self) -> Option<SimTime> {
        (self.deadline < self.event_at).then(|| {
            self.event_at = self.deadline;
            self.deadline
        })
    }
    /// An event for this timer fired at `now`: true if the deadline is due (the timer is
    /// then disarmed). A stale event (a newer one replaced it) or an early one (the deadline
    /// moved later) returns false; after an early one `take_event` re-arms.
    #[inline]
    pub fn fire(&mut self, now: SimTime) -> bool {
        if now != self.event_at {
            return false;
        }
        self.event_at = SimTime::NEVER;
        if self.deadline.is_never() || self.deadline > now {
            return false;
        }
        self.deadline = SimTime::NEVER;
        true
    }
}

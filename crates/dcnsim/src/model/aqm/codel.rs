//! CoDel, Controlled Delay AQM (RFC 8289 §5 pseudocode; docs/models.md §5.2, which checks it
//! against ns-3 `codel-queue-disc.cc` and Linux `codel.h`).
//!
//! Written as a dequeue-side decision function so any FIFO can use it: the port pops the
//! head packet and calls [`Codel::on_dequeue`] with the bytes left behind it. On
//! [`Verdict::Drop`] it drops that packet, pops the next one and asks again **at the same
//! `now`** (RFC 8289's inner loops); on [`Verdict::Pass`] / [`Verdict::Mark`] it sends
//! the packet (setting CE on a `Mark`: the model itself never writes the packet). If the
//! queue is (or becomes) empty it calls [`Codel::on_empty`].
//!
//! Details as in docs/models.md §5.2: `ok_to_drop` needs sojourn ≥ TARGET and queue bytes ≥
//! MAXPACKET (MODELS writes `bytes < MAXPACKET` → not ok; RFC 8289's text uses `≤`), and
//! `now ≥ first_above`; the drop-state re-entry takes `count = count − lastcount` when that
//! is > 1 and `now − drop_next < 16·INTERVAL`. Control law `t + INTERVAL/√count` in exact
//! integer picoseconds: `⌊√(⌊INTERVAL²/count⌋)⌋ = ⌊INTERVAL/√count⌋`, deterministic (Linux
//! and ns-3 use 1024-ns units and a Newton step; the difference is below a nanosecond).
//! With `ecn` an ECT packet is marked instead of dropped; in the dropping state a mark
//! ends the loop and reschedules `drop_next := control_law(X, count)` with X = `drop_next`
//! (Linux `codel.h`, default) or X = `now` (ns-3; option `mark_law_from_now`).

use super::{Aqm, AqmAt, Build, Built, Entry, KeyError, Scope, Verdict};
use crate::base::packet::Packet;
use crate::base::units::SimTime;

/// TARGET default 5 ms (RFC 8289; docs/models.md §5.2).
pub const DEFAULT_TARGET: SimTime = SimTime(5_000_000_000);
/// INTERVAL default 100 ms (RFC 8289; docs/models.md §5.2).
pub const DEFAULT_INTERVAL: SimTime = SimTime(100_000_000_000);
/// MAXPACKET default one MTU, 1500 B (ns-3 `minBytes`; docs/models.md §5.2).
pub const DEFAULT_MAXPACKET: u32 = 1500;

/// CoDel parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelConfig {
    /// Acceptable standing sojourn time (default 5 ms, RFC 8289).
    pub target: SimTime,
    /// Sliding window / control-law base (default 100 ms, RFC 8289).
    pub interval: SimTime,
    /// No drop while fewer bytes than this remain queued (default 1500 B, docs/models.md §5.2).
    pub maxpacket: u32,
    /// Mark ECT packets instead of dropping them (default false, RFC 8289; Bai et al. 2016's
    /// testbed marks).
    pub ecn: bool,
    /// After a mark in the dropping state, reschedule from `now` (ns-3) instead of from
    /// `drop_next` (Linux). Default false.
    pub mark_law_from_now: bool,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            target: DEFAULT_TARGET,
            interval: DEFAULT_INTERVAL,
            maxpacket: DEFAULT_MAXPACKET,
            ecn: false,
            mark_law_from_now: false,
        }
    }
}

impl CodelConfig {
    /// Bai et al. 2016 testbed setting (§6.1): target 51.2 µs, interval 1024 µs, marking.
    pub fn tcn_testbed() -> CodelConfig {
        CodelConfig {
            target: SimTime(51_200_000),
            interval: SimTime(1_024_000_000),
            ecn: true,
            ..CodelConfig::default()
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// A new dequeue request.
    Start,
    /// The packet after the drop that entered the dropping state.
    AfterEntryDrop,
    /// The packet after a drop inside the dropping-state loop.
    InDropLoop,
}

/// CoDel state of one queue.
#[derive(Clone, Debug)]
pub struct Codel {
    cfg: CodelConfig,
    first_above: Option<SimTime>,
    drop_next: SimTime,
    count: u32,
    lastcount: u32,
    dropping: bool,
    stage: Stage,
}

impl Codel {
    pub fn new(cfg: CodelConfig) -> Result<Codel, String> {
        if cfg.interval == SimTime::ZERO || cfg.interval.is_never() {
            return Err("CoDel interval must be > 0 and finite".into());
        }
        if cfg.target.is_never() {
            return Err("CoDel target must be finite".into());
        }
        Ok(Codel {
            cfg,
            first_above: None,
            drop_next: SimTime::ZERO,
            count: 0,
            lastcount: 0,
            dropping: false,
            stage: Stage::Start,
        })
    }

    pub fn config(&self) -> &CodelConfig {
        &self.cfg
    }
    pub fn dropping(&self) -> bool {
        self.dropping
    }
    pub fn count(&self) -> u32 {
        self.count
    }
    pub fn drop_next(&self) -> SimTime {
        self.drop_next
    }

    /// `t + INTERVAL/√count`, exact floor in picoseconds.
    pub fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        let i = self.cfg.interval.ps() as u128;
        let c = count.max(1) as u128;
        t + SimTime(isqrt(i * i / c) as u64)
    }

    /// RFC 8289 `dodequeue` for a popped packet: updates `first_above`, returns ok_to_drop.
    fn ok_to_drop(&mut self, now: SimTime, p: &Packet, bytes_after: u64) -> bool {
        let sojourn = now - p.enq_time;
        if sojourn < self.cfg.target || bytes_after < self.cfg.maxpacket as u64 {
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + self.cfg.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    fn can_mark(&self, p: &Packet) -> bool {
        self.cfg.ecn && p.is_ect()
    }

    /// Mark in the dropping loop and reschedule; ends the loop.
    fn mark_in_loop(&mut self, now: SimTime) -> Verdict {
        let base = if self.cfg.mark_law_from_now {
            now
        } else {
            self.drop_next
        };
        self.drop_next = self.control_law(base, self.count);
        self.stage = Stage::Start;
        Verdict::Mark
    }

    /// Decide for the packet `p` just popped at `now`, with `bytes_after` bytes still queued:
    /// `Pass` (send it), `Mark` (only for an ECN-capable packet with `ecn` on: set CE and
    /// send it) or `Drop` (drop it, pop the next packet and ask again at the same `now`).
    pub fn on_dequeue(&mut self, now: SimTime, p: &Packet, bytes_after: u64) -> Verdict {
        let ok = self.ok_to_drop(now, p, bytes_after);
        match self.stage {
            Stage::AfterEntryDrop => {
                self.stage = Stage::Start;
                Verdict::Pass
            }
            Stage::InDropLoop => {
                if !ok {
                    self.dropping = false;
                    self.stage = Stage::Start;
                    return Verdict::Pass;
                }
                self.drop_next = self.control_law(self.drop_next, self.count);
                self.drop_or_deliver_in_state(now, p)
            }
            Stage::Start => {
                if self.dropping {
                    if !ok {
                        self.dropping = false;
                        return Verdict::Pass;
                    }
                    self.drop_or_deliver_in_state(now, p)
                } else if ok {
                    self.dropping = true;
                    let delta = self.count.saturating_sub(self.lastcount);
                    let since = now.ps() as i128 - self.drop_next.ps() as i128;
                    self.count = if delta > 1 && since < 16 * self.cfg.interval.ps() as i128 {
                        delta
                    } else {
                        1
                    };
                    self.drop_next = self.control_law(now, self.count);
                    self.lastcount = self.count;
                    if self.can_mark(p) {
                        Verdict::Mark
                    } else {
                        self.stage = Stage::AfterEntryDrop;
                        Verdict::Drop
                    }
                } else {
                    Verdict::Pass
                }
            }
        }
    }

    /// In the dropping state with ok_to_drop: drop (or mark) if `now ≥ drop_next`.
    fn drop_or_deliver_in_state(&mut self, now: SimTime, p: &Packet) -> Verdict {
        if now >= self.drop_next {
            self.count = self.count.saturating_add(1);
            if self.can_mark(p) {
                return self.mark_in_loop(now);
            }
            self.stage = Stage::InDropLoop;
            Verdict::Drop
        } else {
            self.stage = Stage::Start;
            Verdict::Pass
        }
    }

    /// The queue was empty at a dequeue attempt (possibly after drops).
    pub fn on_empty(&mut self, _now: SimTime) {
        self.first_above = None;
        // RFC 8289: after the entry drop `dropping` is set regardless of what follows; in
        // every other case an empty queue means !ok_to_drop, which leaves the state.
        if self.stage != Stage::AfterEntryDrop {
            self.dropping = false;
        }
        self.stage = Stage::Start;
    }
}

/// ⌊√x⌋ for u128 (Newton iteration from a power-of-two overestimate).
fn isqrt(x: u128) -> u128 {
    if x < 2 {
        return x;
    }
    let bits = 128 - x.leading_zeros();
    let mut r: u128 = 1 << bits.div_ceil(2);
    loop {
        let y = (r + x / r) / 2;
        if y >= r {
            return r;
        }
        r = y;
    }
}

/// `kind = "codel"`: `target`, `interval`, `ecn` (the other parameters at their RFC 8289
/// defaults); one instance per class queue, deciding at dequeue.
fn build(b: &Build) -> Result<Built, KeyError> {
    let cfg = CodelConfig {
        target: b.keys.target,
        interval: b.keys.interval,
        ecn: b.keys.ecn,
        ..CodelConfig::default()
    };
    let c = Codel::new(cfg).map_err(|e| KeyError::new("interval", e))?;
    Ok(Built::new(Aqm::Codel(Box::new(c)), AqmAt::Dequeue))
}

/// Registry entry: one instance per class queue.
pub const ENTRY: Entry = Entry {
    name: "codel",
    port: false,
    queues: Some(Scope::PerQueue),
    build,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::packet::Ecn;
    use crate::model::aqm::testutil::pkt_of as pkt;

    /// A standing queue: every packet has waited 10 ms and 100 KB stay queued. Dequeue
    /// requests at `times`; returns (time, verdict) of each drop/mark.
    fn drive(c: &mut Codel, times: impl Iterator<Item = SimTime>, ect: bool) -> Vec<SimTime> {
        let mut out = vec![];
        for now in times {
            loop {
                let mut p = pkt(0, 1500);
                p.ecn = if ect { Ecn::Ect0 } else { Ecn::NotEct };
                p.enq_time = now - SimTime::from_ms(10);
                let before = p.ecn;
                let v = c.on_dequeue(now, &p, 100_000);
                // The model never writes the packet.
                assert_eq!(p.ecn, before);
                match v {
                    Verdict::Drop => {
                        out.push(now);
                    }
                    Verdict::Mark => {
                        assert!(ect, "only ECN-capable packets are marked");
                        out.push(now);
                        break;
                    }
                    Verdict::Pass => break,
                }
            }
        }
        out
    }

    /// Start of the scripted standing queue (packets have then waited 10 ms > TARGET).
    const T0: u64 = 10_000_000_000;

    /// Hand-computed with INTERVAL = 100 ms and the first request at t0 (= `T0`):
    /// first_above = t0 + 100 ms; drops at t0 + 100 ms (count 1), t0 + 200 ms
    /// (= + 100/√1, count 2), + 100/√2 = t0 + 270.710678118 ms, + 100/√3 =
    /// t0 + 328.445705036 ms, + 100/√4 = t0 + 378.445705036 ms (each step floored to the ps).
    const DROPS: [u64; 5] = [
        T0 + 100_000_000_000,
        T0 + 200_000_000_000,
        T0 + 270_710_678_118,
        T0 + 328_445_705_036,
        T0 + 378_445_705_036,
    ];

    #[test]
    fn control_law_matches_hand_computed_drop_times() {
        let mut c = Codel::new(CodelConfig::default()).unwrap();
        // Request at t0, then 1 ps before and exactly at each expected drop time.
        let mut times = vec![SimTime(T0)];
        for &d in &DROPS {
            times.push(SimTime(d - 1));
            times.push(SimTime(d));
        }
        let drops = drive(&mut c, times.into_iter(), false);
        assert_eq!(drops, DROPS.iter().map(|&d| SimTime(d)).collect::<Vec<_>>());
        assert_eq!(c.count(), 5);
        assert!(c.dropping());
    }

    #[test]
    fn control_law_on_a_1us_grid_and_in_marking_mode() {
        let grid = (T0 / 1_000_000..=T0 / 1_000_000 + 400_000).map(SimTime::from_us);
        let want: Vec<SimTime> = DROPS
            .iter()
            .map(|&d| SimTime(d.div_ceil(1_000_000) * 1_000_000))
            .collect();
        let mut c = Codel::new(CodelConfig::default()).unwrap();
        assert_eq!(drive(&mut c, grid.clone(), false), want);
        // Marking instead of dropping (Linux rescheduling from drop_next): same instants.
        let cfg = CodelConfig {
            ecn: true,
            ..CodelConfig::default()
        };
        let mut c = Codel::new(cfg).unwrap();
        assert_eq!(drive(&mut c, grid.clone(), true), want);
        // Non-ECT packets are still dropped when marking is on.
        let mut c = Codel::new(cfg).unwrap();
        assert_eq!(drive(&mut c, grid, false), want);
    }

    #[test]
    fn control_law_values() {
        let c = Codel::new(CodelConfig::default()).unwrap();
        assert_eq!(c.control_law(SimTime::ZERO, 1), SimTime(100_000_000_000));
        assert_eq!(c.control_law(SimTime::ZERO, 2), SimTime(70_710_678_118));
        assert_eq!(c.control_law(SimTime::ZERO, 3), SimTime(57_735_026_918));
        assert_eq!(c.control_law(SimTime::ZERO, 100), SimTime(10_000_000_000));
        for x in [
            0u128,
            1,
            2,
            3,
            4,
            15,
            16,
            17,
            u64::MAX as u128,
            10u128.pow(22),
        ] {
            let r = isqrt(x);
            assert!(r * r <= x && (r + 1) * (r + 1) > x, "{x}");
        }
    }

    #[test]
    fn short_queue_or_low_sojourn_never_drops() {
        let mut c = Codel::new(CodelConfig::default()).unwrap();
        for ms in 0..1000u64 {
            let now = SimTime::from_ms(ms);
            let mut p = pkt(0, 1500);
            p.enq_time = now - SimTime::from_ms(50);
            // Less than one MTU left behind the packet.
            assert_eq!(c.on_dequeue(now, &p, 1499), Verdict::Pass);
            let mut p = pkt(0, 1500);
            p.enq_time = now - SimTime(DEFAULT_TARGET.ps() - 1);
            assert_eq!(c.on_dequeue(now, &p, 1 << 20), Verdict::Pass);
        }
    }

    #[test]
    fn leaving_and_reentering_the_dropping_state() {
        let mut c = Codel::new(CodelConfig::default()).unwrap();
        let times = [10u64, 110, 210, 281, 339, 389].map(SimTime::from_ms);
        assert_eq!(drive(&mut c, times.into_iter(), false).len(), 5);
        assert_eq!(c.count(), 5);
        // The queue drains: dropping ends.
        c.on_empty(SimTime::from_ms(390));
        assert!(!c.dropping());
        // It builds again soon after: first_above = 410 + 100 ms; at 510 ms the re-entry
        // uses count = count − lastcount = 5 − 1 = 4 since now − drop_next < 16 intervals.
        let d = drive(
            &mut c,
            [410u64, 510].map(SimTime::from_ms).into_iter(),
            false,
        );
        assert_eq!(d, vec![SimTime::from_ms(510)]);
        assert_eq!(c.count(), 4);
        assert_eq!(c.drop_next(), SimTime::from_ms(560)); // 510 + 100/√4
                                                          // A packet below target leaves the dropping state.
        let mut p = pkt(0, 1500);
        p.enq_time = SimTime::from_ms(600);
        assert_eq!(
            c.on_dequeue(SimTime::from_ms(601), &p, 100_000),
            Verdict::Pass
        );
        assert!(!c.dropping());
    }

    #[test]
    fn testbed_config_and_validation() {
        let t = CodelConfig::tcn_testbed();
        assert_eq!(t.target, SimTime::from_ns(51_200));
        assert_eq!(t.interval, SimTime::from_us(1024));
        assert!(t.ecn);
        assert!(Codel::new(CodelConfig {
            interval: SimTime::ZERO,
            ..CodelConfig::default()
        })
        .is_err());
    }
}

//! DCQCN driven with scripted notifications, bytes sent and timer firings; every expected
//! value is worked out here from the equations of docs/models.md §11, step by step.

use super::*;

const G40: u64 = 40_000_000_000;
const G: f64 = 1.0 / 256.0;

fn us(x: u64) -> SimTime {
    SimTime::from_us(x)
}

/// Equal up to rounding (α from a power vs. repeated products).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

/// A controller and the engine events it asked for, fired in time order.
struct Sim {
    cc: Dcqcn,
    events: Vec<(SimTime, u8)>,
}

impl Sim {
    fn new(cfg: DcqcnConfig) -> Sim {
        Sim {
            cc: Dcqcn::new(cfg),
            events: Vec::new(),
        }
    }
    fn collect(&mut self) {
        while let Some((t, at)) = self.cc.next_timer() {
            self.events.push((at, t));
        }
    }
    fn cnp(&mut self, now: SimTime) {
        self.cc.on_cnp(now);
        self.collect();
    }
    fn sent(&mut self, now: SimTime, bytes: u32) {
        self.cc.on_sent(now, bytes);
        self.collect();
    }
    fn ack(&mut self, now: SimTime, ce_echo: bool) {
        let a = AckInfo {
            acked: 1000,
            ce_echo,
            rtt: us(10),
            int: &[],
            snd_una: 0,
            snd_nxt: 0,
        };
        self.cc.on_ack(now, &a);
        self.collect();
    }
    /// Fire every event up to `until` in time order; the (time, timer) of those that were
    /// due.
    fn run(&mut self, until: SimTime) -> Vec<(SimTime, u8)> {
        let mut fired = Vec::new();
        loop {
            self.collect();
            let Some(i) = (0..self.events.len())
                .filter(|&i| self.events[i].0 <= until)
                .min_by_key(|&i| self.events[i])
            else {
                return fired;
            };
            let (at, t) = self.events.remove(i);
            if self.cc.timer_due(at, t) {
                self.cc.on_timer(at, t);
                fired.push((at, t));
            }
        }
    }
    /// Fire the next due event (which must be timer `t`); its time.
    fn step(&mut self, t: u8) -> SimTime {
        loop {
            self.collect();
            let i = (0..self.events.len())
                .min_by_key(|&i| self.events[i])
                .expect("no due event");
            let (at, tt) = self.events.remove(i);
            if self.cc.timer_due(at, tt) {
                assert_eq!(tt, t, "timer {tt} fired at {at:?}");
                self.cc.on_timer(at, tt);
                self.collect();
                return at;
            }
        }
    }
}

fn paper() -> Sim {
    Sim::new(DcqcnConfig::paper(RateBps(G40)))
}

fn fork() -> Sim {
    Sim::new(DcqcnConfig::hpcc_fork(RateBps(G40)))
}

#[test]
fn constants_match_their_sources() {
    let p = DcqcnConfig::paper(RateBps(G40));
    assert_eq!(p.g, 1.0 / 256.0);
    assert_eq!(p.alpha_interval, us(55)); // K
    assert_eq!(p.increase_interval, us(55)); // T
    assert_eq!(p.byte_counter, Some(10_000_000)); // B = 10 MB
    assert_eq!(p.fast_recovery, 5); // F
    assert_eq!(p.r_ai, RateBps(40_000_000));
    assert_eq!(p.r_hai, RateBps(200_000_000)); // authors' ns-3 sample config
    assert_eq!(p.min_rate, RateBps(100_000_000)); // authors' ns-3 default
    assert_eq!(p.cnp_interval, us(50)); // N
    assert_eq!((p.kmin, p.kmax, p.pmax), (5_000, 200_000, 0.01));
    assert_eq!(p.decrease_interval, None);
    assert!(p.clamp_target && !p.ce_echo_is_cnp);
    assert_eq!(
        (p.alpha_rule, p.rule),
        (AlphaRule::OnCnp, IncreaseRule::Paper)
    );

    // The fork's run.py `--cc dcqcn`, at 25, 40 and 100 Gb/s.
    for (gbps, ai, hai, kmin, kmax) in [
        (25, 5, 50, 100_000, 400_000),
        (40, 8, 80, 160_000, 640_000),
        (100, 20, 200, 400_000, 1_600_000),
    ] {
        let f = DcqcnConfig::hpcc_fork(RateBps(gbps * 1_000_000_000));
        assert_eq!(f.r_ai, RateBps(ai * 1_000_000), "{gbps}");
        assert_eq!(f.r_hai, RateBps(hai * 1_000_000), "{gbps}");
        assert_eq!((f.kmin, f.kmax, f.pmax), (kmin, kmax, 0.2), "{gbps}");
    }
    let f = DcqcnConfig::hpcc_fork(RateBps(G40));
    assert_eq!(f.g, 1.0 / 256.0);
    assert_eq!(f.alpha_interval, us(1));
    assert_eq!(f.decrease_interval, Some(us(4)));
    assert_eq!(f.increase_interval, us(300));
    assert_eq!(f.byte_counter, None);
    assert_eq!(f.fast_recovery, 1);
    assert_eq!(f.min_rate, RateBps(1_000_000_000));
    assert_eq!((f.alpha_init, f.first_cnp_rate), (1.0, 1.0));
    assert!(!f.clamp_target && f.ce_echo_is_cnp);
    assert_eq!(f.cnp_interval, SimTime::ZERO);
    assert_eq!(
        (f.alpha_rule, f.rule),
        (AlphaRule::Periodic, IncreaseRule::TimerOnly)
    );
}

#[test]
fn the_controller_stays_small() {
    assert!(std::mem::size_of::<Dcqcn>() <= 320);
}

#[test]
fn before_any_cnp_it_sends_at_line_rate_with_no_timer() {
    let mut s = paper();
    assert_eq!(s.cc.rate(), RateBps(G40));
    s.sent(us(1), 1_000_000);
    s.ack(us(2), true); // the paper's RP ignores an ACK's echo
    assert_eq!(s.cc.rate(), RateBps(G40));
    assert!(s.events.is_empty());
    assert_eq!(s.cc.bc_stage, 0);
}

#[test]
fn one_cnp_from_line_rate() {
    let mut s = paper();
    s.cnp(us(10));
    // α starts at 1: R_T = R_C = 40 G, R_C = 40 G·(1 − 1/2), then α = (1 − g)·1 + g = 1.
    let line = G40 as f64;
    assert_eq!(s.cc.rt, line);
    assert_eq!(s.cc.rc, line * (1.0 - 1.0 / 2.0));
    assert_eq!(s.cc.rate(), RateBps(20_000_000_000));
    assert_eq!(s.cc.alpha(us(10)), (1.0 - G) * 1.0 + G);
    assert_eq!((s.cc.t_stage, s.cc.bc_stage), (0, 0));
    // The increase timer runs T = 55 µs from the CNP.
    assert_eq!(s.events, vec![(us(65), TIMER_INCREASE)]);
}

#[test]
fn alpha_decays_every_k_without_cnp() {
    let mut s = paper();
    s.cnp(us(0));
    let a0 = 1.0;
    assert_eq!(s.cc.alpha(SimTime(us(55).0 - 1)), a0);
    let mut want = a0;
    for k in 1..=6u64 {
        want *= 1.0 - G;
        assert!(close(s.cc.alpha(us(55 * k)), want), "period {k}");
        assert!(close(s.cc.alpha(us(55 * k + 54)), want), "period {k}");
    }
    // A CNP at 200 µs (three periods: 55, 110, 165): the cut uses α before the CNP.
    let old = a0 * (1.0 - G) * (1.0 - G) * (1.0 - G);
    let rc = s.cc.rc;
    s.cnp(us(200));
    assert_eq!(s.cc.rt, rc);
    assert!(close(s.cc.rc, rc * (1.0 - old / 2.0)));
    let new = (1.0 - G) * old + G;
    assert!(close(s.cc.alpha(us(200)), new));
    // The period restarts at the CNP: no decay at 220 µs (the old grid's point).
    assert!(close(s.cc.alpha(us(254)), new));
    assert!(close(s.cc.alpha(us(255)), new * (1.0 - G)));
    assert!(close(s.cc.alpha(us(310)), new * (1.0 - G) * (1.0 - G)));
}

#[test]
fn fast_recovery_converges_towards_the_target() {
    let mut s = paper();
    s.cnp(us(0));
    let (rt, mut rc) = (G40 as f64, G40 as f64 / 2.0);
    for k in 1..=5u32 {
        let at = s.step(TIMER_INCREASE);
        assert_eq!(at, us(55 * k as u64));
        rc = (rt + rc) / 2.0;
        assert_eq!((s.cc.rt, s.cc.rc), (rt, rc), "event {k}");
        assert_eq!(s.cc.t_stage, k);
        // The gap to R_T halves at each event.
        assert_eq!(rt - s.cc.rc, (G40 as f64 / 2.0) / f64::powi(2.0, k as i32));
    }
}

/// Two CNPs 1 µs apart leave R_T = 20 G (below the line rate) and R_C = 10 G.
fn paper_below_line() -> Sim {
    let mut s = paper();
    s.cnp(us(0));
    s.cnp(us(1)); // α is still 1: R_T = 20 G, R_C = 10 G
    assert_eq!((s.cc.rt, s.cc.rc), (20e9, 10e9));
    s
}

#[test]
fn timer_alone_reaches_additive_increase_never_hyper() {
    let mut s = paper_below_line();
    let (mut rt, mut rc) = (20e9, 10e9);
    for k in 1..=12u32 {
        let at = s.step(TIMER_INCREASE);
        assert_eq!(at, us(1 + 55 * k as u64));
        if k > 5 {
            rt += 40e6; // AI: max(T, BC) > F, min(T, BC) = BC = 0
        }
        rc = (rt + rc) / 2.0;
        assert_eq!((s.cc.rt, s.cc.rc), (rt, rc), "event {k}");
        assert_eq!((s.cc.t_stage, s.cc.bc_stage), (k, 0));
    }
}

#[test]
fn byte_counter_alone_reaches_additive_increase_never_hyper() {
    let mut s = paper_below_line();
    let (mut rt, mut rc) = (20e9, 10e9);
    for k in 1..=12u32 {
        // 10 MB in 1 MB packets; the event comes with the tenth.
        for p in 0..10 {
            assert_eq!(s.cc.bc_stage, k - 1, "packet {p}");
            s.sent(us(2), 1_000_000);
        }
        if k > 5 {
            rt += 40e6;
        }
        rc = (rt + rc) / 2.0;
        assert_eq!((s.cc.rt, s.cc.rc), (rt, rc), "event {k}");
        assert_eq!((s.cc.t_stage, s.cc.bc_stage), (0, k));
        assert_eq!(s.cc.bytes, 0);
    }
}

#[test]
fn both_counters_past_f_give_hyper_increase() {
    let mut s = paper_below_line();
    let (mut rt, mut rc) = (20e9, 10e9);
    // Alternate a byte-counter event and a timer event; after each, (T, BC) and the
    // increase the equations give: FR while max ≤ 5, HAI with i = min − 5 once min > 5.
    let mut want = Vec::new();
    for k in 1..=8u32 {
        want.push((k - 1, k));
        want.push((k, k));
    }
    for (n, &(t, bc)) in want.iter().enumerate() {
        if n % 2 == 0 {
            s.sent(us(2), 10_000_000);
        } else {
            s.step(TIMER_INCREASE);
        }
        assert_eq!((s.cc.t_stage, s.cc.bc_stage), (t, bc), "event {n}");
        let (lo, hi) = (t.min(bc), t.max(bc));
        if hi > 5 && lo <= 5 {
            rt += 40e6;
        } else if lo > 5 {
            rt += (lo - 5) as f64 * 200e6;
        }
        rc = (rt + rc) / 2.0;
        assert_eq!((s.cc.rt, s.cc.rc), (rt, rc), "event {n}");
    }
    // The last two were hyper steps with i = 3 (T = BC = 8): R_T grew by 3·R_HAI.
    assert_eq!(want.last(), Some(&(8, 8)));
}

#[test]
fn a_cnp_during_increase_resets_the_stages() {
    let mut s = paper_below_line();
    for _ in 0..7 {
        s.step(TIMER_INCREASE);
        s.sent(us(2), 10_000_000);
    }
    s.sent(us(400), 3_000_000);
    assert_eq!((s.cc.t_stage, s.cc.bc_stage, s.cc.bytes), (7, 7, 3_000_000));
    let at = us(400);
    let (rc, a) = (s.cc.rc, s.cc.alpha(at));
    s.cnp(at);
    assert_eq!((s.cc.t_stage, s.cc.bc_stage, s.cc.bytes), (0, 0, 0));
    assert_eq!(s.cc.rt, rc);
    assert!(close(s.cc.rc, rc * (1.0 - a / 2.0)));
    // The timer restarts: the next event is T after the CNP, a fast-recovery step.
    let rc = s.cc.rc;
    assert_eq!(s.step(TIMER_INCREASE), us(455));
    assert_eq!(s.cc.rc, (s.cc.rt + rc) / 2.0);
    assert_eq!(s.cc.t_stage, 1);
}

#[test]
fn the_rate_never_falls_below_min_rate() {
    let mut s = paper();
    let mut rc = G40 as f64;
    for k in 0..12u64 {
        s.cnp(SimTime(k)); // α stays 1: each CNP halves, down to 100 Mb/s
        rc = (rc * 0.5).max(100e6);
        assert_eq!(s.cc.rc, rc, "CNP {k}");
    }
    assert_eq!(s.cc.rate(), RateBps(100_000_000));
}

#[test]
fn the_rate_never_exceeds_line_rate_and_the_timer_stops_there() {
    for mut s in [paper(), fork()] {
        s.cnp(us(0));
        let line = G40 as f64;
        let mut fired = 0;
        let mut now = us(0);
        while !s.events.is_empty() || fired == 0 {
            for (at, _) in s.run(now + us(300)) {
                assert!(s.cc.rc <= line && s.cc.rt <= line, "at {at:?}");
                fired += 1;
            }
            s.sent(now, 5_000_000);
            now = now + us(300);
            assert!(fired < 10_000, "never reached the line rate");
        }
        assert_eq!(s.cc.rate(), RateBps(G40));
        assert_eq!(s.cc.next_timer(), None);
    }
}

#[test]
fn a_stale_timer_event_is_ignored() {
    let mut s = paper();
    s.cnp(us(0)); // increase timer at 55 µs
    s.cnp(us(30)); // moved to 85 µs
    assert_eq!(s.events, vec![(us(55), TIMER_INCREASE)]);
    assert!(!s.cc.timer_due(us(55), TIMER_INCREASE));
    s.events.clear();
    s.collect();
    assert_eq!(s.events, vec![(us(85), TIMER_INCREASE)]);
    assert!(s.cc.timer_due(us(85), TIMER_INCREASE));
    assert!(!s.cc.timer_due(us(85), 3));
}

#[test]
fn fork_decreases_at_its_periodic_check_with_the_updated_alpha() {
    let mut s = fork();
    let line = G40 as f64;
    s.cnp(us(10));
    // Nothing changes before the check at 10 µs + 4 µs + 1 ns.
    assert_eq!(s.cc.rate(), RateBps(G40));
    assert_eq!(
        s.events,
        vec![(us(14) + SimTime::from_ns(1), TIMER_DECREASE)]
    );
    // α = 1 at the first CNP (no rise), then decays at 11, 12, 13, 14 µs.
    let a = (1.0 - G) * (1.0 - G) * (1.0 - G) * (1.0 - G);
    assert!(close(s.cc.alpha(us(14)), a));
    // More CNPs before the check: one decrease.
    s.cnp(us(12));
    s.cnp(us(13));
    let a = {
        // 11 and 12 µs decay; 13 µs rises once (the CNP at 12 µs; the one at 13 µs came
        // after that point's update); 14 µs rises once more (the CNP at 13 µs).
        let mut a = 1.0 * (1.0 - G) * (1.0 - G);
        a = (1.0 - G) * a + G;
        (1.0 - G) * a + G
    };
    assert_eq!(s.step(TIMER_DECREASE), us(14) + SimTime::from_ns(1));
    // The stage is 0: the target is not clamped (CLAMP_TARGET_RATE 0).
    assert_eq!(s.cc.rt, line);
    assert!(close(s.cc.rc, line * (1.0 - a / 2.0)));
    assert!(close(s.cc.alpha(us(14)), a));
    // The increase timer runs 300 µs from the decrease.
    assert_eq!(
        s.events,
        vec![(us(314) + SimTime::from_ns(1), TIMER_INCREASE)]
    );
}

#[test]
fn fork_reacts_to_the_per_ack_echo_and_checks_on_its_grid() {
    let mut s = fork();
    s.ack(us(0), false);
    assert!(!s.cc.started);
    s.ack(us(0), true); // the first echo: grid origin 0 + 1 ns
    s.run(us(5));
    let rc = s.cc.rc;
    assert!(rc < G40 as f64);
    // An echo at 6.5 µs: the next check is at 8 µs + 1 ns (the grid 4k µs + 1 ns).
    s.ack(SimTime::from_ns(6_500), true);
    assert_eq!(s.step(TIMER_DECREASE), us(8) + SimTime::from_ns(1));
    assert!(s.cc.rc < rc);
    // Bytes do nothing (no byte counter).
    s.sent(us(9), 100_000_000);
    assert_eq!((s.cc.bc_stage, s.cc.bytes), (0, 0));
}

#[test]
fn fork_timer_rule_is_one_fast_recovery_one_ai_then_fixed_hai() {
    let mut s = fork();
    s.cnp(us(0));
    s.step(TIMER_DECREASE); // at 4 µs + 1 ns: R_T = 40 G, R_C below
    s.cnp(us(5));
    let before = s.cc.rc;
    s.step(TIMER_DECREASE); // at 8 µs + 1 ns: stage 0, so R_T stays 40 G
    assert_eq!(s.cc.rt, G40 as f64);
    assert!(s.cc.rc < before);
    // A timer increase, then a CNP: now the stage is 1 and the target is clamped.
    let t1 = s.step(TIMER_INCREASE);
    assert_eq!(t1, us(308) + SimTime::from_ns(1));
    assert_eq!(s.cc.t_stage, 1);
    s.cnp(us(310));
    let rc = s.cc.rc;
    s.step(TIMER_DECREASE);
    assert_eq!(s.cc.rt, rc);
    assert_eq!(s.cc.t_stage, 0);
    // Events: T = 1 fast recovery (F = 1), T = 2 additive (+8 Mb/s at 40 G), then hyper
    // (+80 Mb/s each, not scaled by the stage).
    let (mut rt, mut rc) = (s.cc.rt, s.cc.rc);
    for k in 1..=6u32 {
        s.step(TIMER_INCREASE);
        match k {
            1 => {}
            2 => rt += 8e6,
            _ => rt += 80e6,
        }
        rc = (rt + rc) / 2.0;
        assert_eq!((s.cc.rt, s.cc.rc, s.cc.t_stage), (rt, rc, k), "event {k}");
    }
}

#[test]
fn the_paper_profile_decreases_at_once_and_the_fork_at_its_check() {
    let mut p = paper();
    let mut f = fork();
    p.cnp(us(3));
    f.cnp(us(3));
    assert!(p.cc.rate() < RateBps(G40));
    assert_eq!(f.cc.rate(), RateBps(G40));
}

#[test]
fn roce_cc_dispatches_to_dcqcn() {
    use super::super::RoceCc;
    let mut c = RoceCc::Dcqcn(Dcqcn::new(DcqcnConfig::paper(RateBps(G40))));
    c.on_cnp(us(1));
    assert_eq!(c.rate(), RateBps(20_000_000_000));
    assert_eq!(c.next_timer(), Some((TIMER_INCREASE, us(56))));
    assert!(c.timer_due(us(56), TIMER_INCREASE));
    c.on_timer(us(56), TIMER_INCREASE);
    assert_eq!(c.rate(), RateBps(30_000_000_000));
    assert_eq!(c.window(), None);
}

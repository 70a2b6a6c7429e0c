//! The simulation: the [`Core`] (`engine/datapath`) and the applications that drive it
//! (`engine/apps`); the event loop and the dispatch of each event to its handler.

use crate::base::ids::AppId;
use crate::base::units::SimTime;
use crate::engine::apps::{App, AppEvent};
use crate::engine::datapath::{Core, Hosts};
use crate::engine::event::{Event, EventQueue};
use crate::engine::net::{Network, Port};
use crate::engine::observe::{Observers, SampleKind};
use crate::model::transport::Endpoint;

/// Hint the CPU to bring the cache line at `p` closer (no effect on results; a no-op on
/// targets without a prefetch instruction).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and reads nothing the program can observe.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// [`prefetch`] the lines of a port that a packet hop reads (`PORT_HOT_BYTES`: three, or
/// four when the port does not start a line).
#[inline(always)]
fn prefetch_port(port: &Port) {
    let base = port as *const Port as *const u8;
    let hot = crate::engine::net::PORT_HOT_BYTES;
    let mut off = 0;
    while off < hot {
        prefetch(base.wrapping_add(off));
        off += 64;
    }
    // A port need not start a line: its last hot byte may be on one more.
    prefetch(base.wrapping_add(hot - 1));
}

/// The simulation: the [`Core`] and the applications that drive it. `Sim` dereferences to
/// its core, so `sim.net.ports` or `sim.now` read the same through either.
pub struct Sim {
    pub core: Core,
    pub apps: Vec<App>,
    /// Whether the event loop prefetches the next event's memory (`prefetch_for`): set by
    /// [`Sim::start`] when the per-packet state outgrows the L2 cache ([`prefetch_pays`]),
    /// and reviewed as the run goes ([`Sim::review_prefetch`]).
    pub prefetch: bool,
    /// What [`Sim::review_prefetch`] compares the state with: the L2 cache's bytes (`None`:
    /// unknown), or no review at all when `DCNSIM_PREFETCH` forced the choice.
    pub prefetch_review: Option<Option<u64>>,
}

impl std::ops::Deref for Sim {
    type Target = Core;
    #[inline(always)]
    fn deref(&self) -> &Core {
        &self.core
    }
}

impl std::ops::DerefMut for Sim {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Core {
        &mut self.core
    }
}

impl Sim {
    pub fn new(end: SimTime, seed: u64) -> Sim {
        Sim {
            core: Core {
                now: SimTime::ZERO,
                end,
                seed,
                events: EventQueue::new(),
                net: Network {
                    nodes: Vec::new(),
                    routing: Default::default(),
                    ports: Vec::new(),
                    packets: crate::base::packet::PacketArena::default(),
                    pools: Vec::new(),
                    ecmp: crate::engine::net::ecmp::EcmpGroups::default(),
                    mq_pass_through: true,
                    injected: 0,
                    absorbed: 0,
                    unroutable: 0,
                },
                hosts: Hosts::new(),
                obs: Observers::default(),
                l2: None,
            },
            apps: Vec::new(),
            prefetch: true,
            prefetch_review: None,
        }
    }
}

impl Sim {
    /// Start loading the memory the next event will read (its port's wire head packet, or
    /// its port and queues) while the current one is handled: on the 144-host fabric the
    /// wire head is read ~20 µs of simulated time after it was written and is no longer in
    /// the nearer caches. A hint only: it changes no state.
    #[inline(always)]
    fn prefetch_for(&self, n: crate::engine::event::RawEvent) {
        let kind = n.head & 0xff;
        if kind > 1 {
            return;
        }
        let Some(port) = self.net.ports.get(n.a as usize) else {
            return;
        };
        if kind == 1 {
            if let Some(e) = port.wire.front() {
                // The arriving packet's slot (80 bytes, on one or two lines), through the
                // port's copy of its handle, and its wire entry (by address: not read here).
                let at = self.net.packets.addr(port.head_h);
                prefetch(at);
                prefetch(at.wrapping_add(79));
                prefetch(e as *const _ as *const u8);
                if let Some(r) = self.net.packets.int_addr(port.head_h) {
                    // Its INT records (HPCC runs): the next switch appends one.
                    prefetch(r);
                    prefetch(r.wrapping_add(std::mem::size_of::<crate::base::int::IntStack>() - 1));
                }
            }
            if let Some(o) = self.net.ports.get(port.head_out.idx()) {
                // The output port's hot part and its multi-queue state.
                prefetch_port(o);
                if let Some(m) = o.mq.as_deref() {
                    prefetch(m as *const _ as *const u8);
                }
            }
        } else if let Some(m) = port.mq.as_deref() {
            prefetch(m as *const _ as *const u8);
        }
    }

    /// The first step of prefetching the event after next (`n`): its port's hot lines, so
    /// that [`Self::prefetch_for`], one event later, reads the port from the cache and
    /// loads what it points to (the wire's head packet, the output port) without waiting.
    #[inline(always)]
    fn prefetch_port_of(&self, n: crate::engine::event::RawEvent) {
        if n.head & 0xff > 1 {
            return;
        }
        if let Some(port) = self.net.ports.get(n.a as usize) {
            prefetch_port(port);
        }
    }

    // -------------------------------------------------------------------- apps

    fn app_event(&mut self, app: AppId, ev: AppEvent) {
        if let Some(a) = self.apps.get_mut(app.idx()) {
            a.handle(&mut self.core, app, ev);
        }
    }

    /// Hand the applications the events that the last delivery raised (`Hosts::app_calls`).
    #[inline]
    fn deliver_app_calls(&mut self) {
        if self.core.hosts.app_calls.is_empty() {
            return;
        }
        let mut i = 0;
        while i < self.core.hosts.app_calls.len() {
            let (app, ev) = self.core.hosts.app_calls[i];
            self.app_event(app, ev);
            i += 1;
        }
        self.core.hosts.app_calls.clear();
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        let r = ev.encode();
        self.dispatch_raw(r.head, r.a, r.b);
    }

    /// Handle one event given as its stored words (see `event::RawEvent`). Inlined into the
    /// event loop: as a call, its entry and exit saved and restored the registers of the
    /// whole inlined packet path once per event (17 of the 8-sender star's ~480 instructions
    /// per event; docs/performance.md, "How the speed is obtained").
    #[inline(always)]
    fn dispatch_raw(&mut self, head: u32, a: u32, b: u32) {
        match Event::decode(crate::engine::event::RawEvent { head, a, b }) {
            Event::PortTxDone(p) => {
                self.on_port_tx_done(p);
                debug_assert_eq!(self.net.ports[p.idx()].conservation(), Ok(()));
                if self.core.hosts.nics.is_some() {
                    self.core.nic_after_port(p);
                }
            }
            Event::Nic(p) => self.core.on_nic_wake(p),
            Event::LinkArrive(p) => {
                self.core.on_link_arrive(p);
                self.deliver_app_calls();
            }
            Event::Timer { flow, kind } => self.core.on_timer(flow, kind),
            Event::App { app, arg } => self.app_event(app, AppEvent::Timer(arg)),
            Event::Sample(k) => self.core.on_sample(k),
            Event::L2 { idx, kind } => {
                crate::engine::datapath::l2::on_event(&mut self.core, idx, kind);
                self.deliver_app_calls();
            }
            Event::Stop => {}
        }
        // Only a delivery raises events for applications.
        debug_assert!(self.core.hosts.app_calls.is_empty());
    }

    /// Process the next event (tests and debugging); returns it with its time.
    pub fn step(&mut self) -> Option<(SimTime, Event)> {
        let (t, ev) = self.events.pop()?;
        self.now = t;
        self.dispatch(ev);
        Some((t, ev))
    }

    /// Packet conservation at every port (`Port::conservation`: arrived equals dropped plus
    /// queued plus sent), and in the packet arena (every stored packet is in a queue or on
    /// a wire: none leaked, none freed twice); `Err` lists the ports where it fails.
    /// Whole-scenario tests call it after each run.
    pub fn check_conservation(&self) -> Result<(), String> {
        let mut bad: Vec<String> = self
            .net
            .ports
            .iter()
            .filter_map(|p| {
                let e = p.conservation().err()?;
                Some(format!(
                    "port {}: {e}",
                    crate::engine::net::port_name(&self.net.nodes, p)
                ))
            })
            .collect();
        bad.extend(self.arena_check().err());
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad.join("; "))
        }
    }

    /// Every packet in the arena (`Network::packets`) is in a port's queues or on a wire.
    fn arena_check(&self) -> Result<(), String> {
        let (stored, held) = (self.net.packets.live() as u64, self.packets_in_network());
        if stored == held {
            Ok(())
        } else {
            Err(format!(
                "{stored} packets stored != {held} in queues and on wires"
            ))
        }
    }

    /// The end-of-run self-checks of `dcnsim run --check`, in release builds too:
    /// - per port, packet conservation (`Port::conservation`: arrived = dropped + queued +
    ///   sent) and the buffer bound of a single-FIFO port (the largest backlog seen,
    ///   `max_queue_bytes`, and the backlog now are at most the port's byte limit);
    /// - every packet stored in the arena is in a queue or on a wire;
    /// - per flow, its endpoint's own check (`Transport::check`; for TCP the sequence
    ///   space: acknowledged <= delivered in order at the receiver <= sent, `snd_una <=
    ///   rcv_nxt <= snd_max`, and `snd_una <= snd_nxt <= snd_max`).
    ///
    /// `Err` names the first ports and flows that fail (at most 4, then how many more).
    pub fn check_run(&self) -> Result<(), String> {
        let mut bad: Vec<String> = Vec::new();
        for p in &self.net.ports {
            let name = || crate::engine::net::port_name(&self.net.nodes, p);
            if let Err(e) = p.conservation() {
                bad.push(format!("port {}: {e}", name()));
            }
            let limit = p.limit_bytes;
            let peak = p.stats.max_queue_bytes.max(p.queued_bytes);
            if p.mq.is_none() && peak > limit {
                bad.push(format!(
                    "port {}: backlog {peak} bytes above its buffer of {limit} bytes",
                    name()
                ));
            }
        }
        bad.extend(self.arena_check().err());
        bad.extend(self.hosts.flows.iter().filter_map(|f| f.check().err()));
        match bad.len() {
            0 => Ok(()),
            n if n <= 4 => Err(bad.join("; ")),
            n => Err(format!("{} (and {} more)", bad[..4].join("; "), n - 4)),
        }
    }

    /// Packets waiting in queues or on wires.
    pub fn packets_in_network(&self) -> u64 {
        self.net
            .ports
            .iter()
            .map(|p| {
                (p.queue.len() + p.wire.len() + p.mq.as_ref().map_or(0, |m| m.mq.len())) as u64
            })
            .sum()
    }

    /// Start the applications and samplers (called once before `run`).
    pub fn start(&mut self) {
        // The calendar of near events covers the longest hop, a 1500-byte frame's
        // serialisation and the link delay, with buckets for four near events per port (at
        // most one end of serialisation and one wire head pending per port, and as many
        // again for the bursts where they coincide) (`EventQueue::set_horizon`). Its reviews
        // may grow it to four times that where the keys crowd its buckets: a fabric whose
        // ports run in step brings many keys into the same nanosecond.
        let hop = self
            .net
            .ports
            .iter()
            .map(|p| {
                (p.delay
                    + if p.rate.0 == 0 {
                        SimTime::ZERO
                    } else {
                        p.tx_time(1500)
                    })
                .0
            })
            .max()
            .unwrap_or(0);
        let ports = self.net.ports.len();
        self.core.events.set_horizon(SimTime(hop), 4 * ports);
        self.core.events.allow_growth_to(16 * ports);
        let forced = std::env::var("DCNSIM_PREFETCH").ok();
        let l2 = l2_cache_bytes();
        self.prefetch = prefetch_choice(forced.as_deref(), self.state_bytes(), l2);
        self.prefetch_review = prefetch_forced(forced.as_deref()).is_none().then_some(l2);
        crate::engine::datapath::l2::start(self);
        for i in 0..self.apps.len() {
            self.app_event(AppId(i as u32), AppEvent::Start);
        }
        if !self.obs.samplers.queue_ports.is_empty()
            && self.obs.samplers.queue_interval > SimTime::ZERO
        {
            self.events
                .schedule(SimTime::ZERO, Event::Sample(SampleKind::Queue));
        }
        if !self.obs.samplers.cwnd_flows.is_empty()
            && self.obs.samplers.cwnd_interval > SimTime::ZERO
        {
            self.events
                .schedule(SimTime::ZERO, Event::Sample(SampleKind::Cwnd));
        }
        if self.obs.samplers.tput_interval > SimTime::ZERO {
            self.events
                .schedule(SimTime::ZERO, Event::Sample(SampleKind::Tput));
        }
    }

    /// Run until `end`. `progress` is called about every million events with the fraction
    /// of simulated time done; returning false stops the run early.
    pub fn run(&mut self, progress: &mut dyn FnMut(f64) -> bool) -> bool {
        self.run_watched(&mut |f, _| progress(f))
    }

    /// As `run`; `watch` also gets the number of events done so far.
    pub fn run_watched(&mut self, watch: &mut dyn FnMut(f64, u64) -> bool) -> bool {
        loop {
            let ran = if self.prefetch {
                self.run_events::<true>(watch)
            } else {
                self.run_events::<false>(watch)
            };
            match ran {
                Ran::Finished => break,
                Ran::Stopped => return false,
                // The choice changed: go on in the other copy of the loop.
                Ran::Switch => continue,
            }
        }
        self.finish_run();
        true
    }

    /// Review the prefetch choice against the state as it is now (`DCNSIM_PREFETCH` unset):
    /// a workload opens its flows as messages come, so a fabric that starts with its state
    /// inside the L2 cache can outgrow it within the first simulated milliseconds. Returns
    /// whether the choice changed. The event loop calls it about every million events;
    /// prefetching is a hint, so no result depends on it.
    pub fn review_prefetch(&mut self) -> bool {
        let Some(l2) = self.prefetch_review else {
            return false;
        };
        let want = prefetch_pays(self.state_bytes(), l2);
        let changed = want != self.prefetch;
        self.prefetch = want;
        changed
    }

    /// The event loop, in two copies: with `PREFETCH`, the memory of the next event is
    /// requested while the current one runs. Every 2²⁰ events it reports progress to
    /// `watch` and reviews the prefetch choice, and returns to switch copies if it changed.
    fn run_events<const PREFETCH: bool>(&mut self, watch: &mut dyn FnMut(f64, u64) -> bool) -> Ran {
        let end = self.end;
        let mut budget: u32 = 1 << 20;
        while let Some((t, r)) = self.events.pop_raw() {
            if t > end || Event::decode(r) == Event::Stop {
                break;
            }
            self.now = t;
            if PREFETCH {
                if let Some(n) = self.events.peek_raw() {
                    self.prefetch_for(n);
                }
                if let Some(n) = self.events.peek2_raw() {
                    self.prefetch_port_of(n);
                }
            }
            self.dispatch_raw(r.head, r.a, r.b);
            budget -= 1;
            if budget == 0 {
                budget = 1 << 20;
                let f = t.as_secs_f64() / end.as_secs_f64().max(1e-12);
                if !watch(f, self.events.popped) {
                    return Ran::Stopped;
                }
                if self.review_prefetch() {
                    return Ran::Switch;
                }
            }
        }
        Ran::Finished
    }

    /// The end of a run that reached its end time (or ran out of events).
    fn finish_run(&mut self) {
        let end = self.end;
        self.now = end;
        crate::engine::datapath::l2::finish(self);
        for p in self.net.ports.iter_mut() {
            if let Some(s) = p.silent.as_mut() {
                s.finish(end);
            }
        }
    }

    /// Bytes of the state that packet hops read and write: ports (with their multi-queue
    /// state), the flows' endpoints built so far and the event calendar. An estimate of the working
    /// set for [`prefetch_pays`] (rings, scoreboards, routes and flows opened later by a
    /// workload left out).
    pub fn state_bytes(&self) -> u64 {
        let mq = std::mem::size_of::<crate::engine::net::mq_port::MqPort>();
        let ports: usize = (self.net.ports.iter())
            .map(|p| std::mem::size_of::<Port>() + p.mq.as_ref().map_or(0, |_| mq))
            .sum();
        let flows = self.hosts.flows.len() * std::mem::size_of::<Endpoint>();
        (ports + flows + self.events.calendar_bytes()) as u64
    }
}

/// Whether prefetching one event ahead pays: only when the per-packet state (`state` bytes,
/// [`Sim::state_bytes`] at the start) is larger than the L2 cache (`l2` bytes; None:
/// unknown, prefetch as the loop always did). A state that fits in L2 is reached in about
/// 14 cycles, which out-of-order execution mostly hides, and the prefetch's own loads of the
/// next event's port then cost more than they save. Measured on a 2 MiB-L2 Intel Xeon:
/// star incasts of 8 and 64 senders 2–6 % faster without; the 144-host fabric (0.9 MB at
/// the start) the same either way. On an AMD EPYC with a 512 KiB L2 the prefetch saved
/// 4–5 % on that fabric (docs/performance.md, "How the speed is obtained").
pub fn prefetch_pays(state: u64, l2: Option<u64>) -> bool {
    l2.is_none_or(|l2| state > l2)
}

/// How a copy of the event loop ended.
enum Ran {
    /// At the end time, or out of events.
    Finished,
    /// `watch` asked to stop.
    Stopped,
    /// The prefetch choice changed ([`Sim::review_prefetch`]): run the other copy.
    Switch,
}

/// The choice `DCNSIM_PREFETCH` forces: "on" or "off"; anything else or unset: none.
pub fn prefetch_forced(forced: Option<&str>) -> Option<bool> {
    match forced {
        Some("on") => Some(true),
        Some("off") => Some(false),
        _ => None,
    }
}

/// The event loop's choice: `forced` is the environment's `DCNSIM_PREFETCH`, "on" or "off"
/// to force it (profile training runs every scenario both ways, `scripts/pgo-train.sh`, so
/// that both copies of the loop are trained whatever the training machine's L2; a user can
/// pin it too), anything else or unset: [`prefetch_pays`].
pub fn prefetch_choice(forced: Option<&str>, state: u64, l2: Option<u64>) -> bool {
    prefetch_forced(forced).unwrap_or_else(|| prefetch_pays(state, l2))
}

/// The L2 cache of the CPU this process runs on, from Linux's sysfs (`cpu0/cache/index*/`:
/// `level` 2, `type` Unified or Data, `size` such as "2048K"); None elsewhere.
pub fn l2_cache_bytes() -> Option<u64> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let d = e.path();
        let level = read(d.join("level"))?;
        let kind = read(d.join("type"))?;
        if level.trim() != "2" || !matches!(kind.trim(), "Unified" | "Data") {
            return None;
        }
        parse_cache_size(&read(d.join("size"))?)
    })
}

/// A sysfs cache size ("48K", "2048K", "1M", "512"): bytes, or None.
pub fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mul)
}

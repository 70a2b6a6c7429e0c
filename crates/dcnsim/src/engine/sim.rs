//! The simulation: arenas of nodes, ports, flows and applications, the event loop, and the
//! dispatch of events to components. Zero-delay hand-offs (transport → NIC, switch input →
//! output queue) are direct calls; only time-consuming steps become events.

use crate::base::packet::{Kind, Packet};
use crate::base::units::SimTime;
use crate::engine::apps::{App, AppEvent};
use crate::engine::event::{Event, EventQueue};
use crate::engine::net::{
    apply_verdict, aqm_reason, resolve, DropReason, Enqueued, Fabric, Node, NodeKind, Port,
};
use crate::model::aqm::{AqmAt, Verdict};
use crate::model::tcp::{TcpFlow, TIMER_DELACK, TIMER_RTO};

/// What a flow's receiver is waiting for, and who to tell.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowTarget {
    /// Owning application (u32::MAX: none).
    pub app: u32,
    /// Delivered-bytes mark at which the app is told (u64::MAX: nothing pending).
    pub target: u64,
    /// Time the current transfer started (for completion times).
    pub started: SimTime,
    /// Size of the current transfer.
    pub bytes: u64,
}

/// A completed transfer (one message / SRU / flow).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Completion {
    pub flow: u32,
    pub bytes: u64,
    pub start: SimTime,
    pub end: SimTime,
}

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

/// Where switch `node` forwards `p`: its route entry, resolved by the ECMP hash when the
/// entry is a group; u32::MAX when `node` is a host or has no route. Routes are static and
/// the hash is a pure function of the packet and the switch, so this may be computed any
/// time before the packet arrives.
#[inline]
pub(crate) fn route_hint(
    nodes: &[Node],
    ecmp: &crate::engine::ecmp::EcmpGroups,
    node: u32,
    p: &Packet,
) -> u32 {
    let n = &nodes[node as usize];
    if n.kind != NodeKind::Switch {
        return u32::MAX;
    }
    let out = n.route[p.dst as usize];
    if crate::engine::ecmp::EcmpGroups::is_group(out) {
        ecmp.pick(out, p, node)
    } else {
        out
    }
}

/// Periodic samplers.
#[derive(Clone, Debug, Default)]
pub struct Samplers {
    pub queue_ports: Vec<u32>,
    pub queue_interval: SimTime,
    pub queue: Vec<(SimTime, u32, u64)>,
    pub cwnd_flows: Vec<u32>,
    pub cwnd_interval: SimTime,
    /// (time, flow, cwnd, ssthresh, DCTCP alpha or -1)
    pub cwnd: Vec<(SimTime, u32, u64, u64, f64)>,
    /// (srtt, rto) of the same rows as `cwnd`.
    pub rtt: Vec<(SimTime, SimTime)>,
    /// Per-flow throughput samples (time, flow, delivered bytes) every `tput_interval`.
    pub tput_interval: SimTime,
    pub tput: Vec<(SimTime, u32, u64)>,
    /// Sender-side time-sequence trace (`engine/observe/trace.rs`); off unless flows are chosen.
    pub seq: crate::engine::observe::trace::SeqTrace,
}

pub const SAMPLE_QUEUE: u32 = 0;
pub const SAMPLE_CWND: u32 = 1;
pub const SAMPLE_TPUT: u32 = 2;

/// The network: nodes with their route tables, ports (queues, transmitters, wires), the
/// switches' shared buffer pools, ECMP groups, and the packet counters of the whole fabric.
pub struct Network {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    /// Switch-wide shared buffer pools (dynamic-threshold multi-queue ports, `engine/mq_port.rs`).
    pub pools: Vec<crate::model::mq::buffer::SharedPool>,
    /// ECMP groups named by switch route entries with `ecmp::ECMP_BIT` (`engine/ecmp.rs`).
    pub ecmp: crate::engine::ecmp::EcmpGroups,
    /// Let a packet that finds a multi-queue port idle and empty skip the FIFO round trip
    /// (`engine/mq_port.rs`; results are identical either way — tested). Default true.
    pub mq_pass_through: bool,
    /// Packets handed to the network by hosts, and packets absorbed by hosts.
    pub injected: u64,
    pub absorbed: u64,
    /// Packets discarded because no route led to their destination.
    pub unroutable: u64,
}

/// The hosts' transport state: TCP flows, what each flow's receiver waits for, finished
/// transfers, and the notifications owed to applications.
#[derive(Default)]
pub struct Hosts {
    pub flows: Vec<TcpFlow>,
    pub targets: Vec<FlowTarget>,
    pub completions: Vec<Completion>,
    /// Two-priority PIAS tags per flow (`engine/apps/workload.rs`); empty: PIAS off.
    pub pias: Vec<crate::engine::apps::workload::PiasTag>,
    /// (index into `completions`, service) of workload messages (`engine/apps/workload.rs`).
    pub completion_service: Vec<(u32, u32)>,
    /// Events for applications raised while a packet was delivered (a transfer done, a
    /// datagram or ping reply received). [`Sim`] hands them to the applications, in order,
    /// as soon as the delivery returns: the same instant and order as a direct call.
    pub(crate) app_calls: Vec<(u32, AppEvent)>,
    /// Scratch buffer for packets produced by a transport call.
    out: Vec<Packet>,
}

/// What watches the run without changing it: periodic samplers, the sender trace, the
/// exact time-averaged queue of one port.
#[derive(Default)]
pub struct Observers {
    pub samplers: Samplers,
    /// Exact time-averaged queue of one port (`engine/observe/queue_mean.rs`, `[measure] mean_queue_port`);
    /// `None`: off (one pointer test per dequeue).
    pub queue_mean: Option<Box<crate::engine::observe::queue_mean::QueueMean>>,
}

/// Everything applications and layer-2 glue drive: the clock, the event queue, the network,
/// the hosts' transports, the observers and optional layer 2 — the simulation without its
/// application arena. Applications get `&mut Core`, so none needs the whole [`Sim`].
pub struct Core {
    pub now: SimTime,
    pub end: SimTime,
    pub seed: u64,
    pub events: EventQueue,
    pub net: Network,
    pub hosts: Hosts,
    pub obs: Observers,
    /// Layer-2 congestion management (QCN CP/RP, PAUSE, rate changes; `engine/l2.rs`). `None`
    /// when the scenario uses none of it: the hot paths then test one pointer.
    pub l2: Option<Box<crate::engine::l2::L2>>,
}

/// The simulation: the [`Core`] and the applications that drive it. `Sim` dereferences to
/// its core, so `sim.net.ports` or `sim.now` read the same through either.
pub struct Sim {
    pub core: Core,
    pub apps: Vec<App>,
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
                    ports: Vec::new(),
                    pools: Vec::new(),
                    ecmp: crate::engine::ecmp::EcmpGroups::default(),
                    mq_pass_through: true,
                    injected: 0,
                    absorbed: 0,
                    unroutable: 0,
                },
                hosts: Hosts {
                    out: Vec::with_capacity(64),
                    ..Hosts::default()
                },
                obs: Observers::default(),
                l2: None,
            },
            apps: Vec::new(),
        }
    }
}

impl Core {
    pub fn add_node(&mut self, name: &str, kind: NodeKind) -> u32 {
        self.net.nodes.push(Node {
            name: name.to_string(),
            kind,
            ports: Vec::new(),
            route: Vec::new(),
        });
        (self.net.nodes.len() - 1) as u32
    }

    /// Add a full-duplex link; returns the two ports (a→b, b→a).
    pub fn add_link(
        &mut self,
        a: u32,
        b: u32,
        rate: crate::base::units::RateBps,
        delay: SimTime,
        limit_ab: u64,
        limit_ba: u64,
    ) -> (u32, u32) {
        let pa = self.net.ports.len() as u32;
        let pb = pa + 1;
        let name_ab = format!(
            "{}->{}",
            self.net.nodes[a as usize].name, self.net.nodes[b as usize].name
        );
        let name_ba = format!(
            "{}->{}",
            self.net.nodes[b as usize].name, self.net.nodes[a as usize].name
        );
        let mut port_a = Port::new(name_ab, a, b, rate, delay);
        let mut port_b = Port::new(name_ba, b, a, rate, delay);
        port_a.peer_port = pb;
        port_b.peer_port = pa;
        port_a.limit_bytes = limit_ab;
        port_b.limit_bytes = limit_ba;
        self.net.ports.push(port_a);
        self.net.ports.push(port_b);
        self.net.nodes[a as usize].ports.push(pa);
        self.net.nodes[b as usize].ports.push(pb);
        (pa, pb)
    }

    pub fn finalize_routes(&mut self) {
        crate::engine::net::compute_routes(&mut self.net.nodes, &self.net.ports);
    }

    pub fn port_by_name(&self, name: &str) -> Option<u32> {
        self.net
            .ports
            .iter()
            .position(|p| p.name == name)
            .map(|i| i as u32)
    }

    pub fn node_by_name(&self, name: &str) -> Option<u32> {
        self.net
            .nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as u32)
    }

    pub fn add_flow(&mut self, mut f: TcpFlow, app: u32) -> u32 {
        let id = self.hosts.flows.len() as u32;
        f.id = id;
        self.hosts.flows.push(f);
        self.hosts.targets.push(FlowTarget {
            app,
            target: u64::MAX,
            started: SimTime::ZERO,
            bytes: 0,
        });
        id
    }

    // ------------------------------------------------------------------ queues

    /// Offer a packet to a port's egress queue at `now` (AQM at enqueue if configured,
    /// then tail drop at the byte limit); says whether it started at once, was queued or
    /// was dropped (and why).
    #[inline]
    pub fn enqueue(&mut self, pid: u32, p: Packet) -> Enqueued {
        self.enqueue_from(pid, p, u32::MAX)
    }

    /// [`Sim::enqueue`] of a packet that a switch received on its port `input` (u32::MAX: not
    /// from a switch input). Only the PAUSE/PFC accounting of multi-queue ports uses `input`.
    #[inline]
    pub(crate) fn enqueue_from(&mut self, pid: u32, p: Packet, input: u32) -> Enqueued {
        let r = if self.net.ports[pid as usize].mq.is_some() {
            self.mq_enqueue(pid, p, input)
        } else {
            self.fifo_enqueue(pid, p)
        };
        debug_assert_eq!(self.net.ports[pid as usize].conservation(), Ok(()));
        r
    }

    /// `enqueue` on a single-FIFO port. An enqueue-side `Drop` takes effect before the
    /// buffer check, a `Mark` only on a packet the buffer admits (a marked packet that is
    /// then tail-dropped counts as a tail drop, not a mark).
    fn fifo_enqueue(&mut self, pid: u32, mut p: Packet) -> Enqueued {
        let now = self.now;
        let port = &mut self.net.ports[pid as usize];
        port.stats.arrived += 1;
        // The enqueue-side verdict, resolved for this packet (Pass or Mark past the drop).
        let mut v = Verdict::Pass;
        if port.aqm_at != AqmAt::Off {
            if port.aqm_at == AqmAt::Enqueue {
                let q = port.queue.len() as u64;
                let by = aqm_reason(&port.aqm);
                v = resolve(port.aqm.decide(now, &p, q, port.queued_bytes), by, &p);
                if v == Verdict::Drop {
                    apply_verdict(v, by, &mut p, &mut port.stats, None);
                    return Enqueued::Dropped(by.drop_reason());
                }
            }
            if port.queue.is_empty() && port.may_start_data(now) {
                // Straight to the wire: at dequeue the queue behind it is empty.
                if port.aqm_at == AqmAt::Dequeue {
                    v = port.aqm.decide(now, &p, 0, 0);
                }
                let by = aqm_reason(&port.aqm);
                if apply_verdict(v, by, &mut p, &mut port.stats, None) == Verdict::Drop {
                    return Enqueued::Dropped(by.drop_reason());
                }
                port.aqm.on_queue_empty(now + port.tx_time(p.size));
                port.begin_service(
                    pid,
                    now,
                    p,
                    false,
                    Fabric {
                        events: &mut self.events,
                        nodes: &self.net.nodes,
                        ecmp: &self.net.ecmp,
                    },
                );
                return Enqueued::Started;
            }
        } else if port.queue.is_empty() && port.may_start_data(now) {
            port.begin_service(
                pid,
                now,
                p,
                false,
                Fabric {
                    events: &mut self.events,
                    nodes: &self.net.nodes,
                    ecmp: &self.net.ecmp,
                },
            );
            return Enqueued::Started;
        }
        if port.queued_bytes + p.size as u64 > port.limit_bytes
            || port.queue.len() as u64 >= port.limit_pkts
        {
            port.stats.count_drop(DropReason::Tail, p.size);
            return Enqueued::Dropped(DropReason::Tail);
        }
        if v == Verdict::Mark {
            apply_verdict(v, aqm_reason(&port.aqm), &mut p, &mut port.stats, None);
        }
        p.enq_time = now;
        port.queued_bytes += p.size as u64;
        port.queue.push_back(p);
        if port.queued_bytes > port.stats.max_queue_bytes {
            port.stats.max_queue_bytes = port.queued_bytes;
        }
        port.tx.arm(&mut self.events, pid, now);
        Enqueued::Queued
    }

    /// The transmit event of port `pid` fired: its transmitter is free. Serve the next
    /// packet (dequeue-side AQM first), which re-arms the event if more wait.
    fn on_port_tx_done(&mut self, pid: u32) {
        if self.l2.is_some() && crate::engine::l2::tx_gate(self, pid) {
            return;
        }
        let now = self.now;
        let port = &mut self.net.ports[pid as usize];
        port.tx.fired();
        if port.mq.is_some() {
            let _ = self.mq_send_next(pid);
            return;
        }
        while let Some(mut p) = port.queue.pop_front() {
            port.queued_bytes -= p.size as u64;
            if let Some(m) = self.obs.queue_mean.as_mut() {
                m.on_leave(pid, now, &p);
            }
            if port.aqm_at != AqmAt::Off {
                if port.aqm_at == AqmAt::Dequeue {
                    let q = port.queue.len() as u64;
                    let v = port.aqm.decide(now, &p, q, port.queued_bytes);
                    let by = aqm_reason(&port.aqm);
                    if apply_verdict(v, by, &mut p, &mut port.stats, None) == Verdict::Drop {
                        if port.queue.is_empty() {
                            port.aqm.on_queue_empty(now.max(port.tx.busy_until()));
                        }
                        continue;
                    }
                }
                if port.queue.is_empty() {
                    let idle_at = now + port.tx_time(p.size);
                    port.aqm.on_queue_empty(idle_at);
                }
            }
            let more = !port.queue.is_empty();
            port.begin_service(
                pid,
                now,
                p,
                more,
                Fabric {
                    events: &mut self.events,
                    nodes: &self.net.nodes,
                    ecmp: &self.net.ecmp,
                },
            );
            break;
        }
    }

    fn on_link_arrive(&mut self, pid: u32) {
        let port = &mut self.net.ports[pid as usize];
        let (_, p) = port
            .wire
            .pop_front()
            .expect("arrival event with an empty wire");
        let out = port.head_out;
        if let Some((next, np)) = port.wire.front() {
            port.head_out = route_hint(&self.net.nodes, &self.net.ecmp, port.peer_node, np);
            self.events.schedule(*next, Event::LinkArrive(pid));
        }
        let node = port.peer_node;
        self.receive(node, p, out, pid);
    }

    /// A packet has fully arrived at `node` over the wire of port `link` (of the upstream
    /// node); `out` is where a switch forwards it ([`route_hint`], computed when the packet
    /// became its wire's head).
    #[inline]
    fn receive(&mut self, node: u32, p: Packet, out: u32, link: u32) {
        debug_assert_eq!(out, route_hint(&self.net.nodes, &self.net.ecmp, node, &p));
        if self.l2.is_some() && crate::engine::l2::receive(self, node, p, out, link) {
            return;
        }
        let n = &self.net.nodes[node as usize];
        match n.kind {
            NodeKind::Switch => {
                if out != u32::MAX {
                    self.enqueue(out, p);
                } else {
                    self.net.unroutable += 1;
                }
            }
            NodeKind::Host => {
                self.net.absorbed += 1;
                self.host_receive(node, p)
            }
        }
    }

    // ------------------------------------------------------------------- hosts

    /// Send packets produced by a host's transport or application.
    #[inline]
    pub fn host_send(&mut self, host: u32, mut p: Packet) {
        self.net.injected += 1;
        if !self.hosts.pias.is_empty() {
            crate::engine::apps::workload::pias_tag(&self.hosts.pias, &mut p);
        }
        if self.obs.samplers.seq.on && p.kind == Kind::Data {
            self.obs.samplers.seq.on_data_sent(self.now, &p);
        }
        if self.l2.is_some() && crate::engine::l2::host_send(self, host, &p) {
            return;
        }
        let out = self.net.nodes[host as usize].route[p.dst as usize];
        if out != u32::MAX {
            self.enqueue(out, p);
        } else {
            self.net.unroutable += 1;
        }
    }

    /// Send what the last transport call put in `hosts.out`, in order (nothing that
    /// `host_send` calls produces transport output, so the buffer stays put meanwhile).
    fn flush_out(&mut self, host: u32) {
        let mut i = 0;
        while i < self.hosts.out.len() {
            let p = self.hosts.out[i];
            self.host_send(host, p);
            i += 1;
        }
        self.hosts.out.clear();
    }

    /// Arm the flow's timers after a call into the TCP code (one pending event per timer).
    fn sync_timers(&mut self, fid: u32) {
        let f = &mut self.hosts.flows[fid as usize];
        if f.snd.rto_timer.needs_event() {
            let at = f.snd.rto_timer.deadline;
            f.snd.rto_timer.event_at = at;
            self.events.schedule(
                at,
                Event::TcpTimer {
                    flow: fid,
                    kind: TIMER_RTO,
                },
            );
        }
        if f.rcv.delack_timer.needs_event() {
            let at = f.rcv.delack_timer.deadline;
            f.rcv.delack_timer.event_at = at;
            self.events.schedule(
                at,
                Event::TcpTimer {
                    flow: fid,
                    kind: TIMER_DELACK,
                },
            );
        }
    }

    fn host_receive(&mut self, host: u32, p: Packet) {
        let now = self.now;
        match p.kind {
            Kind::Data | Kind::Syn => {
                let fid = p.flow;
                let h = &mut self.hosts;
                let f = &mut h.flows[fid as usize];
                f.on_segment(now, &p, &mut h.out);
                let delivered = f.delivered();
                self.flush_out(host);
                self.sync_timers(fid);
                let t = self.hosts.targets[fid as usize];
                if delivered >= t.target {
                    self.hosts.targets[fid as usize].target = u64::MAX;
                    self.hosts.completions.push(Completion {
                        flow: fid,
                        bytes: t.bytes,
                        start: t.started,
                        end: now,
                    });
                    if t.app != u32::MAX {
                        self.hosts.app_calls.push((t.app, AppEvent::FlowDone(fid)));
                    }
                }
            }
            Kind::Ack | Kind::SynAck => {
                let fid = p.flow;
                if self.obs.samplers.seq.on {
                    self.obs.samplers.seq.on_ack_received(now, &p);
                }
                let h = &mut self.hosts;
                h.flows[fid as usize].on_ack(now, &p, &mut h.out);
                self.flush_out(host);
                self.sync_timers(fid);
            }
            Kind::Udp
                if p.flags
                    & (crate::base::packet::flags::PING_REQ
                        | crate::base::packet::flags::PING_REPLY)
                    != 0 =>
            {
                self.ping_receive(host, p);
            }
            Kind::Cnm | Kind::Pause => {}
            Kind::Udp => {
                let ev = AppEvent::UdpReceived(p.payload as u64);
                self.hosts.app_calls.push((p.flow, ev));
            }
        }
    }

    /// Let a flow's application write `bytes` and wait until they are delivered.
    pub fn flow_write(&mut self, fid: u32, bytes: u64, notify: bool) {
        let now = self.now;
        let h = &mut self.hosts;
        let f = &mut h.flows[fid as usize];
        let base = f.snd.app_limit;
        f.app_write(now, bytes, &mut h.out);
        // What the write put on the connection (`whole_segments` may round it up).
        let bytes = if bytes == u64::MAX {
            bytes
        } else {
            f.snd.app_limit - base
        };
        let src = f.src;
        if notify {
            let t = &mut h.targets[fid as usize];
            t.target = base + bytes;
            t.started = now;
            t.bytes = bytes;
        }
        self.flush_out(src);
        self.sync_timers(fid);
    }

    /// Like [`Sim::flow_write`] with notification, but the transfer's completion record
    /// starts at `started` (a message that waited behind earlier ones, `engine/apps/workload.rs`).
    pub fn flow_write_at(&mut self, fid: u32, bytes: u64, started: SimTime) {
        self.flow_write(fid, bytes, true);
        self.hosts.targets[fid as usize].started = started;
    }

    fn on_tcp_timer(&mut self, fid: u32, kind: u8) {
        let now = self.now;
        let f = &mut self.hosts.flows[fid as usize];
        let due = if kind == TIMER_RTO {
            f.snd.rto_timer.fire(now)
        } else {
            f.rcv.delack_timer.fire(now)
        };
        // QCN limiters: note whether the segment at snd_una is still held in the flow's
        // limiter (the RTO is then caused by pacing, not by a loss; engine/l2.rs).
        let held = due
            && kind == TIMER_RTO
            && self.l2.is_some()
            && crate::engine::l2::una_held_in_limiter(self, fid);
        let h = &mut self.hosts;
        let f = &mut h.flows[fid as usize];
        let timeouts0 = f.stats.timeouts;
        if due {
            let host = if kind == TIMER_RTO {
                f.on_rto(now, &mut h.out);
                f.src
            } else {
                f.on_delack(now, &mut h.out);
                f.dst
            };
            self.flush_out(host);
            if held && self.hosts.flows[fid as usize].stats.timeouts > timeouts0 {
                crate::engine::l2::count_held_rto(self, fid);
            }
        }
        self.sync_timers(fid);
    }

    fn on_sample(&mut self, kind: u32) {
        let now = self.now;
        match kind {
            SAMPLE_QUEUE => {
                for &pid in &self.obs.samplers.queue_ports {
                    let q = self.net.ports[pid as usize].queued_bytes;
                    self.obs.samplers.queue.push((now, pid, q));
                }
                let next = now + self.obs.samplers.queue_interval;
                self.events.schedule(next, Event::Sample(SAMPLE_QUEUE));
            }
            SAMPLE_CWND => {
                for &fid in &self.obs.samplers.cwnd_flows {
                    let f = &self.hosts.flows[fid as usize];
                    self.obs.samplers.cwnd.push((
                        now,
                        fid,
                        f.snd.cwnd,
                        f.snd.ssthresh,
                        f.alpha_or_none(),
                    ));
                    self.obs.samplers.rtt.push((f.snd.srtt, f.snd.rto));
                }
                let next = now + self.obs.samplers.cwnd_interval;
                self.events.schedule(next, Event::Sample(SAMPLE_CWND));
            }
            SAMPLE_TPUT => {
                for (fid, f) in self.hosts.flows.iter().enumerate() {
                    self.obs
                        .samplers
                        .tput
                        .push((now, fid as u32, f.delivered()));
                }
                let next = now + self.obs.samplers.tput_interval;
                self.events.schedule(next, Event::Sample(SAMPLE_TPUT));
            }
            _ => {}
        }
    }

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
            if let Some(w) = port.wire.front() {
                prefetch(w as *const _ as *const u8);
                prefetch((w as *const _ as *const u8).wrapping_add(64));
            }
            if let Some(o) = self.net.ports.get(port.head_out as usize) {
                // The whole output port (a few lines) and its multi-queue state.
                let base = o as *const Port as *const u8;
                let mut off = 0;
                while off < std::mem::size_of::<Port>() {
                    prefetch(base.wrapping_add(off));
                    off += 64;
                }
                if let Some(m) = o.mq.as_deref() {
                    prefetch(m as *const _ as *const u8);
                }
            }
        } else if let Some(m) = port.mq.as_deref() {
            prefetch(m as *const _ as *const u8);
        }
    }
}

impl Sim {
    // -------------------------------------------------------------------- apps

    fn app_event(&mut self, app: u32, ev: AppEvent) {
        if let Some(a) = self.apps.get_mut(app as usize) {
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

    /// Handle one event given as its stored words (see `event::RawEvent`).
    #[inline(never)]
    fn dispatch_raw(&mut self, head: u32, a: u32, b: u32) {
        match Event::decode(crate::engine::event::RawEvent { head, a, b }) {
            Event::PortTxDone(p) => {
                self.on_port_tx_done(p);
                debug_assert_eq!(self.net.ports[p as usize].conservation(), Ok(()));
            }
            Event::LinkArrive(p) => {
                self.core.on_link_arrive(p);
                self.deliver_app_calls();
            }
            Event::TcpTimer { flow, kind } => self.core.on_tcp_timer(flow, kind),
            Event::App { app, arg } => self.app_event(app, AppEvent::Timer(arg)),
            Event::Sample(k) => self.core.on_sample(k),
            Event::L2 { idx, kind } => {
                crate::engine::l2::on_event(&mut self.core, &self.apps, idx, kind);
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
    /// queued plus sent); `Err` lists the ports where it fails. Whole-scenario tests call
    /// it after each run.
    pub fn check_conservation(&self) -> Result<(), String> {
        let bad: Vec<String> = self
            .net
            .ports
            .iter()
            .filter_map(|p| p.conservation().err())
            .collect();
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad.join("; "))
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
        crate::engine::l2::start(self);
        for i in 0..self.apps.len() {
            self.app_event(i as u32, AppEvent::Start);
        }
        if !self.obs.samplers.queue_ports.is_empty()
            && self.obs.samplers.queue_interval > SimTime::ZERO
        {
            self.events
                .schedule(SimTime::ZERO, Event::Sample(SAMPLE_QUEUE));
        }
        if !self.obs.samplers.cwnd_flows.is_empty()
            && self.obs.samplers.cwnd_interval > SimTime::ZERO
        {
            self.events
                .schedule(SimTime::ZERO, Event::Sample(SAMPLE_CWND));
        }
        if self.obs.samplers.tput_interval > SimTime::ZERO {
            self.events
                .schedule(SimTime::ZERO, Event::Sample(SAMPLE_TPUT));
        }
    }

    /// Run until `end`. `progress` is called about every million events with the fraction
    /// of simulated time done; returning false stops the run early.
    pub fn run(&mut self, progress: &mut dyn FnMut(f64) -> bool) -> bool {
        let end = self.end;
        let mut budget: u32 = 1 << 20;
        while let Some((t, r)) = self.events.pop_raw() {
            if t > end || Event::decode(r) == Event::Stop {
                break;
            }
            self.now = t;
            if let Some(n) = self.events.peek_raw() {
                self.prefetch_for(n);
            }
            self.dispatch_raw(r.head, r.a, r.b);
            budget -= 1;
            if budget == 0 {
                budget = 1 << 20;
                if !progress(t.as_secs_f64() / end.as_secs_f64().max(1e-12)) {
                    return false;
                }
            }
        }
        self.now = end;
        crate::engine::l2::finish(self);
        for p in self.net.ports.iter_mut() {
            if let Some(s) = p.silent.as_mut() {
                s.finish(end);
            }
        }
        true
    }
}

//! The per-packet path: [`Core`] (the clock, the event queue, the network, the hosts'
//! transports, the observers and optional layer 2) and everything a packet meets on its way
//! from a sender's transport to a receiver's: the NIC and switch ports (FIFO ports here,
//! multi-queue ports in `mq`), forwarding, delivery to hosts' transport endpoints and their
//! timers (`model/transport`: the engine dispatches on the kind of endpoint), and the
//! layer-2 glue (`l2`: QCN, PAUSE, rate changes; `pfc`: PAUSE/PFC on multi-queue ports).
//! Zero-delay hand-offs (transport → NIC, switch input → output queue) are direct calls;
//! only time-consuming steps become events.
//!
//! The files of this folder are one unit: they add methods to `Core` and call each other
//! (a switch hop with PAUSE goes port → `pfc` → port). Everything else in the engine sits
//! on one side of it: `event`, `net` and `observe` below, `apps` and `sim` above.

pub mod l2;
mod mq;
pub mod nic;

use crate::base::ids::{AppId, FlowId, NodeId, PortId};
use crate::base::packet::{flags, Kind, Packet, PktRef};
use crate::base::units::SimTime;
use crate::engine::event::{Event, EventQueue};
use crate::engine::net::{
    apply_verdict, fabric, resolve, DropReason, Enqueued, Network, Node, NodeKind, Port, Waiting,
};
use crate::engine::observe::{Observers, SampleKind};
use crate::model::aqm::{AqmAt, Backlog, Verdict, View};
use crate::model::transport::{Endpoint, TimerKind};

/// What a flow's receiver is waiting for, and who to tell.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowTarget {
    /// Owning application (`AppId::NONE`: none).
    pub app: AppId,
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
    pub flow: FlowId,
    pub bytes: u64,
    pub start: SimTime,
    pub end: SimTime,
}

/// What an application is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppEvent {
    Start,
    /// A scheduled timer with an app-defined argument.
    Timer(u32),
    /// A flow owned by this app delivered everything written so far.
    FlowDone(FlowId),
    UdpReceived(u64),
    /// A ping reply came back after this round-trip time (`Ping`).
    PingReply(SimTime),
}

/// The hosts' transport state: the flows' endpoints (of any transport kind, indexed by
/// flow id), what each flow's receiver waits for, finished transfers, and the
/// notifications owed to applications.
#[derive(Default)]
pub struct Hosts {
    pub flows: Vec<Endpoint>,
    pub targets: Vec<FlowTarget>,
    pub completions: Vec<Completion>,
    /// Two-priority PIAS tags per flow (`engine/apps/workload.rs`); empty: PIAS off.
    pub pias: Vec<crate::model::workload::PiasTag>,
    /// (index into `completions`, service) of workload messages (`engine/apps/workload.rs`).
    pub completion_service: Vec<(u32, u32)>,
    /// Events for applications raised while a packet was delivered (a transfer done, a
    /// datagram or ping reply received). [`Sim`] hands them to the applications, in order,
    /// as soon as the delivery returns: the same instant and order as a direct call.
    pub(crate) app_calls: Vec<(AppId, AppEvent)>,
    /// Scratch buffer for packets produced by a transport call.
    out: Vec<Packet>,
    /// The NIC schedulers of pulled senders (`nic.rs`); `None` while no flow is pulled.
    pub nics: Option<Box<nic::Nics>>,
    /// A transfer completes when its sender has the ACK of its last byte, not at delivery
    /// (`[measure] fct = "last-ack"`; RoCE senders only).
    pub fct_at_ack: bool,
}

impl Hosts {
    pub fn new() -> Hosts {
        Hosts {
            out: Vec::with_capacity(64),
            ..Hosts::default()
        }
    }
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
    /// Layer-2 congestion management (QCN CP/RP, PAUSE, rate changes; `engine/datapath/l2/mod.rs`). `None`
    /// when the scenario uses none of it: the hot paths then test one pointer.
    pub l2: Option<Box<crate::engine::datapath::l2::L2>>,
}

impl Core {
    pub fn add_node(&mut self, name: &str, kind: NodeKind) -> NodeId {
        self.net.nodes.push(Node::new(name.to_string(), kind));
        NodeId((self.net.nodes.len() - 1) as u32)
    }

    /// Add a full-duplex link; returns the two ports (a→b, b→a).
    pub fn add_link(
        &mut self,
        a: NodeId,
        b: NodeId,
        rate: crate::base::units::RateBps,
        delay: SimTime,
        limit_ab: u64,
        limit_ba: u64,
    ) -> (PortId, PortId) {
        let pa = PortId(self.net.ports.len() as u32);
        let pb = PortId(pa.0 + 1);
        let mut port_a = Port::new(a, b, rate, delay);
        let mut port_b = Port::new(b, a, rate, delay);
        port_a.peer_port = pb;
        port_b.peer_port = pa;
        port_a.limit_bytes = limit_ab;
        port_b.limit_bytes = limit_ba;
        self.net.ports.push(port_a);
        self.net.ports.push(port_b);
        self.net.nodes[a.idx()].ports.push(pa);
        self.net.nodes[b.idx()].ports.push(pb);
        (pa, pb)
    }

    /// Compute every node's routes (`net::compute_routes`) and move them into the dense
    /// `Network::routing` that packets read; an `AllocError` when the tables cannot be
    /// allocated.
    pub fn finalize_routes(&mut self) -> Result<(), crate::base::alloc::AllocError> {
        let net = &mut self.net;
        crate::engine::net::compute_routes(&mut net.nodes, &net.ports)?;
        net.routing = crate::engine::net::routing::Routing::index(&mut net.nodes)?;
        Ok(())
    }

    /// As `finalize_routes`, and ECMP groups wherever a switch has several next hops
    /// (`net::compute_routes_ecmp`).
    pub fn finalize_routes_ecmp(&mut self) -> Result<(), crate::base::alloc::AllocError> {
        let net = &mut self.net;
        net.ecmp = crate::engine::net::compute_routes_ecmp(&mut net.nodes, &net.ports)?;
        net.routing = crate::engine::net::routing::Routing::index(&mut net.nodes)?;
        Ok(())
    }

    /// The first port named `name` ("A->B", `net::port_name`): for each way of splitting
    /// the name at a "->" (node names may hold one), the first port of node A towards B;
    /// the lowest such port id.
    pub fn port_by_name(&self, name: &str) -> Option<PortId> {
        let net = &self.net;
        name.match_indices("->")
            .filter_map(|(i, _)| {
                let a = self.node_by_name(&name[..i])?;
                let b = self.node_by_name(&name[i + 2..])?;
                net.nodes[a.idx()]
                    .ports
                    .iter()
                    .copied()
                    .find(|&pid| net.ports[pid.idx()].peer_node == b)
            })
            .min()
    }

    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.net
            .nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| NodeId(i as u32))
    }

    /// Room for `nodes` more nodes and `links` more links (two ports each), so that a
    /// builder that knows its size fills the arrays without regrowing them (each doubling
    /// copies the ports, and the freed copy stays in the process's heap: about 5 % of an
    /// idle flow's memory at 4 096 senders).
    pub fn reserve_topology(
        &mut self,
        nodes: usize,
        links: usize,
    ) -> Result<(), crate::base::alloc::AllocError> {
        crate::base::alloc::try_reserve(&mut self.net.nodes, nodes, "nodes")?;
        crate::base::alloc::try_reserve(&mut self.net.ports, 2 * links, "ports")
    }

    /// Room for `n` more flows (`add_flow`), or an `AllocError` when the allocator refuses.
    pub fn reserve_flows(&mut self, n: usize) -> Result<(), crate::base::alloc::AllocError> {
        crate::base::alloc::try_reserve(&mut self.hosts.flows, n, "flows")?;
        crate::base::alloc::try_reserve(&mut self.hosts.targets, n, "flows")
    }

    /// Add a flow's endpoint (of any transport kind: a `TcpFlow`, a `UdpFlow`, an
    /// `Endpoint`) owned by application `app`; its id is the next flow number.
    pub fn add_flow(&mut self, f: impl Into<Endpoint>, app: AppId) -> FlowId {
        let mut f = f.into();
        let id = FlowId(self.hosts.flows.len() as u32);
        // Through `set_id`: a TCP flow's tick-clock phase follows from its id (`TcpFlow::new`
        // was given a placeholder, so every flow had the phase of id 0 before).
        f.set_id(id);
        if f.pulled() && self.hosts.nics.is_none() {
            self.hosts.nics = Some(Box::default());
        }
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
    pub fn enqueue(&mut self, pid: PortId, p: Packet) -> Enqueued {
        self.enqueue_from(pid, p, PortId::NONE)
    }

    /// [`Core::enqueue`] of a packet that a switch received on its port `input` (`NONE`: not
    /// from a switch input). Only the PAUSE/PFC accounting of multi-queue ports uses `input`.
    #[inline]
    pub(crate) fn enqueue_from(&mut self, pid: PortId, p: Packet, input: PortId) -> Enqueued {
        let int = p.flags & flags::INT != 0;
        let h = self.net.packets.put(p);
        if int {
            if !self.net.packets.int_enabled() {
                // The run's first packet that asks for INT records: switches start writing.
                self.net.enable_int();
            }
            self.net.packets.int_begin(h);
        }
        self.enqueue_stored(pid, h, input)
    }

    /// [`Core::enqueue_from`] of packet `h`, already in `net.packets` (a switch forwarding
    /// what arrived on a wire).
    #[inline]
    pub(crate) fn enqueue_stored(&mut self, pid: PortId, h: PktRef, input: PortId) -> Enqueued {
        let r = if self.net.ports[pid.idx()].mq.is_some() {
            self.mq_enqueue(pid, h, input)
        } else {
            self.fifo_enqueue(pid, h)
        };
        debug_assert_eq!(self.net.ports[pid.idx()].conservation(), Ok(()));
        r
    }

    /// `enqueue` on a single-FIFO port of packet `h` (in `net.packets`; freed if dropped).
    /// An enqueue-side `Drop` takes effect before the buffer check, a `Mark` only on a
    /// packet the buffer admits (a marked packet that is then tail-dropped counts as a tail
    /// drop, not a mark).
    fn fifo_enqueue(&mut self, pid: PortId, h: PktRef) -> Enqueued {
        let now = self.now;
        let net = &mut self.net;
        let port = &mut net.ports[pid.idx()];
        let p = &mut net.packets[h];
        port.stats.arrived += 1;
        // The enqueue-side verdict, resolved for this packet (Pass or Mark past the drop).
        let mut v = Verdict::Pass;
        if port.aqm_at != AqmAt::Off {
            if port.aqm_at == AqmAt::Enqueue {
                let q = port.queue.len() as u64;
                let by = port.aqm.reason();
                let b = Backlog {
                    pkts: q,
                    bytes: port.queued_bytes,
                };
                v = resolve(port.aqm.enqueue(now, p, View::port(b)), by, p);
                if v == Verdict::Drop {
                    apply_verdict(v, by, p, &mut port.stats, None);
                    net.packets.free(h);
                    return Enqueued::Dropped(by.drop_reason());
                }
            }
            if port.queue.is_empty() && port.may_start_data(now) {
                // Straight to the wire: at dequeue the queue behind it is empty.
                if port.aqm_at == AqmAt::Dequeue {
                    v = port.aqm.dequeue(now, p, View::port(Backlog::default()));
                }
                let by = port.aqm.reason();
                if apply_verdict(v, by, p, &mut port.stats, None) == Verdict::Drop {
                    net.packets.free(h);
                    return Enqueued::Dropped(by.drop_reason());
                }
                port.aqm.queue_empty(now + port.tx_time(p.size));
                port.begin_service(pid, now, h, false, fabric!(&mut self.events, net));
                return Enqueued::Started;
            }
        } else if port.queue.is_empty() && port.may_start_data(now) {
            port.begin_service(pid, now, h, false, fabric!(&mut self.events, net));
            return Enqueued::Started;
        }
        if port.queued_bytes + p.size as u64 > port.limit_bytes
            || port.queue.len() as u64 >= port.limit_pkts
        {
            port.stats.count_drop(DropReason::Tail, p.size);
            net.packets.free(h);
            return Enqueued::Dropped(DropReason::Tail);
        }
        if v == Verdict::Mark {
            apply_verdict(v, port.aqm.reason(), p, &mut port.stats, None);
        }
        p.enq_time = now;
        port.queued_bytes += p.size as u64;
        let out = net.routing.hint(&net.ecmp, port.peer_node, p);
        port.queue.push_back(Waiting::new(h, p, out));
        if port.queued_bytes > port.stats.max_queue_bytes {
            port.stats.max_queue_bytes = port.queued_bytes;
        }
        port.tx.arm(&mut self.events, pid, now);
        Enqueued::Queued
    }

    /// The transmit event of port `pid` fired: its transmitter is free. Serve the next
    /// packet (dequeue-side AQM first), which re-arms the event if more wait.
    pub(crate) fn on_port_tx_done(&mut self, pid: PortId) {
        if self.l2.is_some() && crate::engine::datapath::l2::tx_gate(self, pid) {
            return;
        }
        let now = self.now;
        let net = &mut self.net;
        let port = &mut net.ports[pid.idx()];
        port.tx.fired();
        if port.mq.is_some() {
            let _ = self.mq_send_next(pid);
            return;
        }
        while let Some(w) = port.queue.pop_front() {
            crate::base::packet::reuse_ring_from_the_start(&mut port.queue);
            // The entry has what the departure needs; the packet is read only by an
            // observer or a dequeue-side AQM that asks for it.
            port.queued_bytes -= w.size as u64;
            if let Some(m) = self.obs.queue_mean.as_mut() {
                m.on_leave(pid, now, &net.packets[w.h]);
            }
            if port.aqm_at != AqmAt::Off {
                if port.aqm_at == AqmAt::Dequeue {
                    let p = &mut net.packets[w.h];
                    let q = port.queue.len() as u64;
                    let b = Backlog {
                        pkts: q,
                        bytes: port.queued_bytes,
                    };
                    let v = port.aqm.dequeue(now, p, View::port(b));
                    let by = port.aqm.reason();
                    if apply_verdict(v, by, p, &mut port.stats, None) == Verdict::Drop {
                        net.packets.free(w.h);
                        if port.queue.is_empty() {
                            port.aqm.queue_empty(now.max(port.tx.busy_until()));
                        }
                        continue;
                    }
                }
                if port.queue.is_empty() {
                    let idle_at = now + port.tx_time(w.size);
                    port.aqm.queue_empty(idle_at);
                }
            }
            let more = !port.queue.is_empty();
            port.serve(pid, now, w, more, fabric!(&mut self.events, net));
            break;
        }
    }

    pub(crate) fn on_link_arrive(&mut self, pid: PortId) {
        let net = &mut self.net;
        let port = &mut net.ports[pid.idx()];
        let h = port
            .wire
            .pop_front()
            .expect("arrival event with an empty wire")
            .h;
        let out = port.head_out;
        if let Some(&next) = port.wire.front() {
            // Its route was looked up when it left: the packet itself is not read here.
            port.head_out = next.out;
            port.head_h = next.h;
            self.events.schedule(next.at, Event::LinkArrive(pid));
        } else {
            crate::base::packet::reuse_ring_from_the_start(&mut port.wire);
        }
        let node = port.peer_node;
        self.receive(node, h, out, pid);
    }

    /// Packet `h` has fully arrived at `node` over the wire of port `link` (of the upstream
    /// node); `out` is where a switch forwards it (`Routing::hint`, computed when the packet
    /// became its wire's head).
    #[inline]
    fn receive(&mut self, node: NodeId, h: PktRef, out: PortId, link: PortId) {
        debug_assert_eq!(
            out,
            self.net
                .routing
                .hint(&self.net.ecmp, node, &self.net.packets[h])
        );
        if self.l2.is_some() {
            if !crate::engine::datapath::l2::receive(self, node, h, out, link) {
                // Layer 2 handles every frame at a switch, so this is a host.
                self.net.absorbed += 1;
                self.host_receive(node, h);
            }
            return;
        }
        match self.net.routing.kind(node) {
            Some(NodeKind::Switch) => {
                if out != PortId::NONE {
                    self.enqueue_stored(out, h, PortId::NONE);
                } else {
                    self.net.packets.free(h);
                    self.net.unroutable += 1;
                }
            }
            _ => {
                self.net.absorbed += 1;
                self.host_receive(node, h)
            }
        }
    }

    // ------------------------------------------------------------------- hosts

    /// Send packets produced by a host's transport or application.
    #[inline]
    pub fn host_send(&mut self, host: NodeId, mut p: Packet) {
        self.net.injected += 1;
        if !self.hosts.pias.is_empty() {
            crate::model::workload::pias_tag(&self.hosts.pias, &mut p);
        }
        if self.obs.samplers.seq.on && p.kind == Kind::Data {
            self.obs.samplers.seq.on_data_sent(self.now, &p);
        }
        if self.l2.is_some() && crate::engine::datapath::l2::host_send(self, host, &p) {
            return;
        }
        let out = self.net.routing.route(host, p.dst);
        if out != PortId::NONE {
            self.enqueue(out, p);
        } else {
            self.net.unroutable += 1;
        }
    }

    /// Send what the last transport call put in `hosts.out`, in order (nothing that
    /// `host_send` calls produces transport output, so the buffer stays put meanwhile).
    fn flush_out(&mut self, host: NodeId) {
        let mut i = 0;
        while i < self.hosts.out.len() {
            let p = self.hosts.out[i];
            self.host_send(host, p);
            i += 1;
        }
        self.hosts.out.clear();
    }

    /// Arm the flow's timers after a call into its endpoint: an event for each deadline that
    /// needs one (`Transport::next_timer`; one pending event per timer).
    #[inline]
    fn sync_timers(&mut self, fid: FlowId) {
        let events = &mut self.events;
        self.hosts.flows[fid.idx()].arm_timers(|kind, at| {
            events.schedule(at, Event::Timer { flow: fid, kind });
        });
    }

    /// Host `host` absorbs packet `h` (in `net.packets`, whose slot is freed): a flow's
    /// forward packet (data, SYN) goes to its endpoint's receiver, one coming back (ACK,
    /// SYN-ACK) to its sender. The packet is read where it is and its slot freed before the
    /// endpoint's replies are sent (so the first reply is written to the same slot, a line
    /// the cache holds).
    #[inline]
    fn host_receive(&mut self, host: NodeId, h: PktRef) {
        let now = self.now;
        let p = &self.net.packets[h];
        let (kind, fid) = (p.kind, p.flow);
        match kind {
            Kind::Data | Kind::Syn => {
                if p.flags & flags::INT != 0 {
                    // What the replies to this packet echo.
                    self.net.packets.int_set_echo(h);
                }
                let hs = &mut self.hosts;
                hs.flows[fid.idx()].on_data(now, p, &mut hs.out);
                self.net.packets.free(h);
                self.after_segment(host, fid);
            }
            Kind::Ack | Kind::SynAck => {
                if self.obs.samplers.seq.on {
                    self.obs.samplers.seq.on_ack_received(now, p);
                }
                let hs = &mut self.hosts;
                if p.flags & flags::INT == 0 {
                    hs.flows[fid.idx()].on_feedback(now, p, &mut hs.out);
                } else {
                    let flow = &mut hs.flows[fid.idx()];
                    let out = &mut hs.out;
                    (self.net.packets)
                        .with_int_hops(h, |hops| flow.on_feedback_int(now, p, hops, out));
                }
                self.net.packets.free(h);
                self.flush_out(host);
                self.sync_timers(fid);
                if self.hosts.nics.is_some() {
                    self.nic_kick_flow(fid);
                }
                if self.hosts.fct_at_ack {
                    self.after_ack(fid);
                }
            }
            Kind::Udp | Kind::Cnm | Kind::Pause => self.host_receive_other(host, h),
        }
    }

    /// [`Core::host_receive`] of an application's datagram or a layer-2 frame (out of the
    /// flows' path).
    #[cold]
    #[inline(never)]
    fn host_receive_other(&mut self, host: NodeId, h: PktRef) {
        let p = self.net.packets.take(h);
        match p.kind {
            Kind::Udp
                if p.flags
                    & (crate::base::packet::flags::PING_REQ
                        | crate::base::packet::flags::PING_REPLY)
                    != 0 =>
            {
                self.ping_receive(host, p);
            }
            Kind::Udp => {
                // A UDP datagram carries its application in the flow field.
                let app = AppId(p.flow.0);
                if self.l2.is_some() {
                    l2::on_udp_delivered(self, app, p.payload);
                }
                let ev = AppEvent::UdpReceived(p.payload as u64);
                self.hosts.app_calls.push((app, ev));
            }
            // Flows are read in place by `host_receive`; a CNM or PAUSE frame that reaches a
            // host's transport (layer 2 off) is absorbed.
            _ => {}
        }
    }

    /// After a flow's receiver took a packet: send its replies, arm its timers, and record
    /// a finished transfer.
    #[inline]
    fn after_segment(&mut self, host: NodeId, fid: FlowId) {
        let now = self.now;
        let delivered = self.hosts.flows[fid.idx()].delivered();
        self.flush_out(host);
        self.sync_timers(fid);
        let t = self.hosts.targets[fid.idx()];
        if delivered >= t.target && !self.hosts.fct_at_ack {
            self.complete(fid, now);
        }
    }

    /// After a sender took an ACK, with `fct_at_ack`: a transfer whose last byte it now
    /// knows delivered is complete.
    #[cold]
    #[inline(never)]
    fn after_ack(&mut self, fid: FlowId) {
        let acked = self.hosts.flows[fid.idx()].acknowledged();
        if acked.is_some_and(|a| a >= self.hosts.targets[fid.idx()].target) {
            self.complete(fid, self.now);
        }
    }

    /// Record the transfer of flow `fid` as finished at `now` and tell its application.
    fn complete(&mut self, fid: FlowId, now: SimTime) {
        let t = self.hosts.targets[fid.idx()];
        self.hosts.targets[fid.idx()].target = u64::MAX;
        self.hosts.completions.push(Completion {
            flow: fid,
            bytes: t.bytes,
            start: t.started,
            end: now,
        });
        if t.app.is_some() {
            self.hosts.app_calls.push((t.app, AppEvent::FlowDone(fid)));
        }
    }

    /// Let a flow's application write `bytes` and wait until they are delivered.
    pub fn flow_write(&mut self, fid: FlowId, bytes: u64, notify: bool) {
        let now = self.now;
        let h = &mut self.hosts;
        let f = &mut h.flows[fid.idx()];
        let base = f.written();
        f.app_write(now, bytes, &mut h.out);
        // What the write put on the connection (TCP's `whole_segments` may round it up).
        let bytes = if bytes == u64::MAX {
            bytes
        } else {
            f.written() - base
        };
        let src = f.src();
        if notify {
            let t = &mut h.targets[fid.idx()];
            t.target = base + bytes;
            t.started = now;
            t.bytes = bytes;
        }
        self.flush_out(src);
        self.sync_timers(fid);
        if self.hosts.nics.is_some() {
            self.nic_kick_flow(fid);
        }
    }

    /// Like [`Core::flow_write`] with notification, but the transfer's completion record
    /// starts at `started` (a message that waited behind earlier ones, `engine/apps/workload.rs`).
    pub fn flow_write_at(&mut self, fid: FlowId, bytes: u64, started: SimTime) {
        self.flow_write(fid, bytes, true);
        self.hosts.targets[fid.idx()].started = started;
    }

    /// Timer `kind` of flow `fid` fired (`Event::Timer`): run it if its deadline is due,
    /// send what it produced, and re-arm the flow's timers.
    pub(crate) fn on_timer(&mut self, fid: FlowId, kind: TimerKind) {
        let now = self.now;
        let due = self.hosts.flows[fid.idx()].timer_due(now, kind);
        // QCN limiters: note whether the segment a retransmission timeout resends is still
        // held in the flow's limiter (the timeout is then caused by pacing, not by a loss;
        // engine/datapath/l2/mod.rs).
        let held = due
            && self.l2.is_some()
            && crate::engine::datapath::l2::una_held_in_limiter(self, fid, kind);
        let h = &mut self.hosts;
        let f = &mut h.flows[fid.idx()];
        if due {
            let timeouts0 = if held { f.counters().timeouts } else { 0 };
            let host = f.on_timer(now, kind, &mut h.out);
            self.flush_out(host);
            if held && self.hosts.flows[fid.idx()].counters().timeouts > timeouts0 {
                crate::engine::datapath::l2::count_held_rto(self, fid);
            }
        }
        self.sync_timers(fid);
        if self.hosts.nics.is_some() {
            self.nic_kick_flow(fid);
        }
    }

    pub(crate) fn on_sample(&mut self, kind: SampleKind) {
        let now = self.now;
        match kind {
            SampleKind::Queue => {
                for &pid in &self.obs.samplers.queue_ports {
                    let q = self.net.ports[pid.idx()].queued_bytes;
                    self.obs.samplers.queue.push((now, pid, q));
                }
                let next = now + self.obs.samplers.queue_interval;
                self.events.schedule(next, Event::Sample(SampleKind::Queue));
            }
            SampleKind::Cwnd => {
                for &fid in &self.obs.samplers.cwnd_flows {
                    // A sender without a window (not TCP) has no sample.
                    let Some(w) = self.hosts.flows[fid.idx()].window() else {
                        continue;
                    };
                    let c = (now, fid, w.cwnd, w.ssthresh, w.alpha);
                    self.obs.samplers.cwnd.push(c);
                    self.obs.samplers.rtt.push((w.srtt, w.rto));
                }
                let next = now + self.obs.samplers.cwnd_interval;
                self.events.schedule(next, Event::Sample(SampleKind::Cwnd));
            }
            SampleKind::Tput => {
                for (fid, f) in self.hosts.flows.iter().enumerate() {
                    self.obs
                        .samplers
                        .tput
                        .push((now, FlowId(fid as u32), f.delivered()));
                }
                let next = now + self.obs.samplers.tput_interval;
                self.events.schedule(next, Event::Sample(SampleKind::Tput));
            }
        }
    }
}

impl Core {
    /// A ping request or reply reached `host`: echo a request, record a reply's RTT.
    pub(crate) fn ping_receive(&mut self, host: NodeId, p: Packet) {
        use crate::base::packet::flags::{PING_REPLY, PING_REQ};
        if p.flags & PING_REQ != 0 {
            let mut r = p;
            r.src = host;
            r.dst = p.src;
            r.flags = PING_REPLY;
            self.host_send(host, r);
        } else {
            let rtt = self.now - p.sent_time;
            self.hosts
                .app_calls
                .push((AppId(p.flow.0), AppEvent::PingReply(rtt)));
        }
    }
}

//! Datacenter workload app (Bai et al. 2016 §6; docs/models.md §6): messages with sizes drawn from a
//! flow-size CDF (`model/workload.rs`), Poisson arrivals at a target load of the edge links, carried
//! by persistent TCP connections, optionally tagged with two-priority PIAS.
//!
//! - Arrivals: one merged Poisson process. Client/server: rate λ = load·C/(8·mean) of the
//!   client's edge link, each message from a uniformly chosen server to the client (the
//!   request itself is not simulated; the message "arrives" when the client issues it).
//!   All-to-all: rate N·λ (λ per host edge link), source uniform among the N hosts,
//!   destination uniform among the others. A merged process with uniform sources is the
//!   same in distribution as N independent Poisson sources of rate λ.
//! - Services: each message picks a service uniformly; a service has its own size
//!   distribution and traffic class (switch queue); `mean` in λ is the services' average
//!   mean (or the scenario's `mean_bytes` override).
//! - Connections: `connections` persistent connections per (source, destination) pair,
//!   created on first use. A message goes on the first idle connection of its pair, else
//!   behind the shortest backlog (lowest index on ties); queued messages wait for the
//!   connection. A message's FCT runs from its arrival to its full delivery, so it includes
//!   the wait behind earlier messages.
//! - PIAS (two priorities, docs/models.md §5.5): a data packet whose message has sent at most
//!   `pias_threshold` bytes before it goes to class 0; later packets to the service class;
//!   pure ACKs to class 0 (`Hosts::pias`, applied in `Core::host_send`).
//! - After `count` arrivals no more are generated; when all have completed the run stops.

use std::collections::VecDeque;

use crate::base::ids::{AppId, FlowId, Idx, NodeId};
use crate::base::rng::Rng;
use crate::base::units::SimTime;
use crate::engine::apps::AppEvent;
use crate::engine::datapath::Core;
use crate::engine::event::Event;
use crate::model::tcp::{TcpConfig, TcpFlow};
use crate::model::workload::{FlowSizeDist, PiasTag, PoissonArrivals};

/// A service: sizes and the queue its messages use.
#[derive(Clone, Debug)]
pub struct Service {
    pub dist: FlowSizeDist,
    pub class: u8,
}

#[derive(Clone, Debug)]
pub enum Pattern {
    /// Messages from a random server to the client.
    ClientServer {
        client: NodeId,
        servers: Vec<NodeId>,
    },
    /// Messages between random distinct hosts.
    AllToAll { hosts: Vec<NodeId> },
}

/// One message (one FCT record).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Message {
    pub flow: FlowId,
    pub service: u16,
    pub class: u8,
    pub bytes: u64,
    pub arrival: SimTime,
    pub end: Option<SimTime>,
    /// Retransmission timeouts of its connection while the message was in progress (from
    /// its write until the receiver had all its bytes): the per-flow count of the ns-2
    /// scripts, whose persistent connections reset it per flow. Set at completion.
    pub timeouts: u32,
    /// The connection's timeout counter when the message was written.
    timeouts_base: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Conn {
    pub flow: FlowId,
    /// Messages waiting or in progress (front: in progress when `busy`).
    pub queue: VecDeque<u32>,
    pub busy: bool,
}

#[derive(Clone, Debug)]
pub struct Workload {
    pub pattern: Pattern,
    pub services: Vec<Service>,
    pub arrivals: PoissonArrivals,
    pub connections: u32,
    pub pias_threshold: Option<u64>,
    /// One configuration shared by every connection the workload opens.
    pub tcp: std::sync::Arc<TcpConfig>,
    pub start: SimTime,
    pub limit: u64,
    pub rng: Rng,
    /// Connection index per (pair, k); u32::MAX: not created yet.
    pub pair_conns: Vec<u32>,
    pub conns: Vec<Conn>,
    /// Connection of each flow id (u32::MAX: not ours).
    pub conn_of_flow: Vec<u32>,
    pub messages: Vec<Message>,
    pub done: u64,
}

impl Workload {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        pattern: Pattern,
        services: Vec<Service>,
        arrivals: PoissonArrivals,
        connections: u32,
        pias_threshold: Option<u64>,
        tcp: TcpConfig,
        start: SimTime,
        limit: u64,
        rng: Rng,
    ) -> Workload {
        let pairs = match &pattern {
            Pattern::ClientServer { servers, .. } => servers.len(),
            Pattern::AllToAll { hosts } => hosts.len() * hosts.len(),
        };
        Workload {
            pattern,
            services,
            arrivals,
            connections,
            pias_threshold,
            tcp: std::sync::Arc::new(tcp),
            start,
            limit,
            rng,
            pair_conns: vec![u32::MAX; pairs * connections.idx()],
            conns: Vec::new(),
            conn_of_flow: Vec::new(),
            messages: Vec::new(),
            done: 0,
        }
    }

    /// Mean message size in bytes of the uniform service mix.
    pub fn mean_bytes(services: &[Service]) -> f64 {
        services.iter().map(|s| s.dist.mean_bytes()).sum::<f64>() / services.len() as f64
    }

    /// Out of line: keeps the event loop's app dispatch small for other scenarios.
    #[inline(never)]
    pub fn handle(&mut self, sim: &mut Core, id: AppId, ev: AppEvent) {
        match ev {
            AppEvent::Start => {
                if self.limit > 0 {
                    let at = self.start.max(sim.now) + self.arrivals.next_gap(&mut self.rng);
                    sim.events.schedule(at, Event::App { app: id, arg: 0 });
                }
            }
            AppEvent::Timer(_) => {
                self.arrive(sim, id);
                if (self.messages.len() as u64) < self.limit {
                    let at = sim.now + self.arrivals.next_gap(&mut self.rng);
                    sim.events.schedule(at, Event::App { app: id, arg: 0 });
                }
            }
            AppEvent::FlowDone(fid) => self.flow_done(sim, fid),
            AppEvent::UdpReceived(_) | AppEvent::PingReply(_) => {}
        }
    }

    /// A new message arrives: choose service, size, endpoints and connection.
    fn arrive(&mut self, sim: &mut Core, id: AppId) {
        let si = self.rng.below(self.services.len() as u64) as usize;
        let bytes = self.services[si].dist.sample_bytes(&mut self.rng);
        let (src, dst, pair) = match &self.pattern {
            Pattern::ClientServer { client, servers } => {
                let k = self.rng.below(servers.len() as u64) as usize;
                (servers[k], *client, k)
            }
            Pattern::AllToAll { hosts } => {
                let n = hosts.len();
                let a = self.rng.below(n as u64) as usize;
                let mut b = self.rng.below(n as u64 - 1) as usize;
                if b >= a {
                    b += 1;
                }
                (hosts[a], hosts[b], a * n + b)
            }
        };
        let ci = self.pick_conn(sim, id, pair, (src, dst));
        let mi = self.messages.len() as u32;
        self.messages.push(Message {
            flow: self.conns[ci.idx()].flow,
            service: si as u16,
            class: self.services[si].class,
            bytes,
            arrival: sim.now,
            end: None,
            timeouts: 0,
            timeouts_base: 0,
        });
        self.conns[ci.idx()].queue.push_back(mi);
        if !self.conns[ci.idx()].busy {
            self.start_next(sim, ci);
        }
    }

    fn pick_conn(
        &mut self,
        sim: &mut Core,
        id: AppId,
        pair: usize,
        (src, dst): (NodeId, NodeId),
    ) -> u32 {
        let k0 = pair * self.connections as usize;
        let mut best: Option<(usize, u32)> = None;
        for k in 0..self.connections as usize {
            let c = self.pair_conns[k0 + k];
            if c == u32::MAX {
                // Open a new connection only when every existing one is busy.
                let f = TcpFlow::new(FlowId(0), src, dst, self.tcp.clone());
                let fid = sim.add_flow(f, id);
                let ci = self.conns.len() as u32;
                self.conns.push(Conn {
                    flow: fid,
                    queue: VecDeque::new(),
                    busy: false,
                });
                if self.conn_of_flow.len() <= fid.idx() {
                    self.conn_of_flow.resize(fid.idx() + 1, u32::MAX);
                }
                self.conn_of_flow[fid.idx()] = ci;
                if self.pias_threshold.is_some() && sim.hosts.pias.len() <= fid.idx() {
                    sim.hosts.pias.resize(fid.idx() + 1, PiasTag::default());
                }
                self.pair_conns[k0 + k] = ci;
                return ci;
            }
            let backlog = self.conns[c.idx()].queue.len();
            if backlog == 0 {
                return c;
            }
            if best.is_none_or(|(b, _)| backlog < b) {
                best = Some((backlog, c));
            }
        }
        best.map(|(_, c)| c).unwrap_or(0)
    }

    /// Write the connection's next queued message.
    fn start_next(&mut self, sim: &mut Core, ci: u32) {
        let conn = &mut self.conns[ci.idx()];
        let Some(&mi) = conn.queue.front() else {
            conn.busy = false;
            return;
        };
        conn.busy = true;
        let fid = conn.flow;
        let m = self.messages[mi.idx()];
        let f = &mut sim.hosts.flows[fid.idx()];
        self.messages[mi.idx()].timeouts_base = f.counters().timeouts;
        f.set_class(m.class);
        let msg_start = f.written();
        if let Some(th) = self.pias_threshold {
            sim.hosts.pias[fid.idx()] = PiasTag {
                on: true,
                threshold: th,
                msg_start,
                service_class: m.class,
            };
        }
        sim.flow_write_at(fid, m.bytes, m.arrival);
    }

    fn flow_done(&mut self, sim: &mut Core, fid: FlowId) {
        let Some(&ci) = self.conn_of_flow.get(fid.idx()) else {
            return;
        };
        if ci == u32::MAX {
            return;
        }
        let Some(mi) = self.conns[ci.idx()].queue.pop_front() else {
            return;
        };
        let m = &mut self.messages[mi.idx()];
        m.end = Some(sim.now);
        let n = sim.hosts.flows[fid.idx()].counters().timeouts - m.timeouts_base;
        m.timeouts = n.min(u32::MAX as u64) as u32;
        sim.hosts.completion_service.push((
            sim.hosts.completions.len().saturating_sub(1) as u32,
            m.service as u32,
        ));
        self.done += 1;
        self.start_next(sim, ci);
        if self.done >= self.limit {
            // Every message finished: end the run here (durations and goodputs use it).
            sim.end = sim.now;
            sim.events.schedule(sim.now, Event::Stop);
        }
    }
}

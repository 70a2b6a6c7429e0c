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
//! - Services by pair ([`PairServices`], all-to-all only): as the TCN authors' leaf-spine
//!   script (`spine_empirical_pias_diffserv.tcl` of HKUST-SING/TCN-NS2) sets it up, every
//!   ordered host pair has one fixed service and its own Poisson process of rate
//!   load·C/(8·mean of that service)/(N − 1), so every service offers the same bytes and the
//!   services with small flows send more of them. The merged process draws the pair with
//!   probability proportional to its rate.
//! - Connections: `connections` persistent connections per (source, destination) pair,
//!   created on first use. A message goes on the first idle connection of its pair, else
//!   behind the shortest backlog (lowest index on ties); queued messages wait for the
//!   connection. A message's FCT runs from its arrival to its full delivery, so it includes
//!   the wait behind earlier messages.
//! - PIAS (two priorities, docs/models.md §5.5): a data packet whose message has sent at most
//!   `pias_threshold` bytes before it goes to class 0; later packets to the service class;
//!   pure ACKs to class 0 (`Hosts::pias`, applied in `Core::host_send`).
//! - Incast events (optional, all-to-all): a Poisson process of its own; each event picks a
//!   receiver and `senders` distinct other hosts uniformly, and each sender sends `bytes`
//!   to the receiver at that instant, on the pair's connections (service 0). The events
//!   stop with the arrivals.
//! - After `count` arrivals no more are generated; when all have completed the run stops.

use std::collections::VecDeque;

use crate::base::ids::{AppId, FlowId, Idx, NodeId};
use crate::base::rng::Rng;
use crate::base::units::SimTime;
use crate::engine::apps::AppEvent;
use crate::engine::datapath::Core;
use crate::engine::event::Event;
use crate::model::flow_file::FileFlow;
use crate::model::roce::cc::RoceCc;
use crate::model::roce::qp::{RoceConfig, RoceFlow};
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

/// Services fixed per ordered host pair (module doc): the pairs of each service and the
/// cumulative share of the merged arrival rate up to each service.
#[derive(Clone, Debug, PartialEq)]
pub struct PairServices {
    /// `pairs[s]`: the pair indices (src·N + dst over the pattern's hosts) of service s.
    pub pairs: Vec<Vec<u32>>,
    /// `cum[s]`: the share of the total rate of services 0..=s (the last is 1).
    pub cum: Vec<f64>,
}

impl PairServices {
    /// The TCN script's assignment for `n` hosts and `services` services: pair (i → j)
    /// has service `((j + 1)·n + (i + 1)) mod services` (its `service_id` minus 1); each
    /// pair's rate is proportional to 1 / `means[s]`.
    pub fn tcn_script(n: usize, means: &[f64]) -> PairServices {
        let k = means.len();
        let mut pairs = vec![Vec::new(); k];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    pairs[((j + 1) * n + (i + 1)) % k].push((i * n + j) as u32);
                }
            }
        }
        let w: Vec<f64> = (0..k).map(|s| pairs[s].len() as f64 / means[s]).collect();
        let total: f64 = w.iter().sum();
        let mut acc = 0.0;
        let mut cum: Vec<f64> = w
            .iter()
            .map(|x| {
                acc += x;
                acc / total
            })
            .collect();
        if let Some(l) = cum.last_mut() {
            *l = 1.0;
        }
        PairServices { pairs, cum }
    }

    /// The merged rate of all pairs, λ_s = `per_edge_rate(mean_s)` / (N − 1) per pair.
    pub fn total_rate(&self, n: usize, per_edge_rate: impl Fn(usize) -> f64) -> f64 {
        (0..self.pairs.len())
            .map(|s| self.pairs[s].len() as f64 * per_edge_rate(s) / (n - 1) as f64)
            .sum()
    }

    /// Draw (service, pair) for one arrival of the merged process.
    pub fn draw(&self, rng: &mut Rng) -> (usize, usize) {
        let u = rng.uniform();
        let s = self
            .cum
            .partition_point(|&c| c <= u)
            .min(self.cum.len() - 1);
        let list = &self.pairs[s];
        let k = rng.below(list.len() as u64) as usize;
        (s, list[k] as usize)
    }
}

/// The transport of a workload's connections.
#[derive(Clone, Debug)]
pub enum ConnKind {
    /// TCP connections sharing one configuration.
    Tcp(std::sync::Arc<TcpConfig>),
    /// RoCEv2 queue pairs: their constants (window included) and the controller each starts
    /// from (made for the hosts' NIC rate).
    Roce(RoceConfig, Box<RoceCc>),
}

#[derive(Clone, Debug)]
pub struct Workload {
    pub pattern: Pattern,
    pub services: Vec<Service>,
    pub arrivals: PoissonArrivals,
    pub connections: u32,
    pub pias_threshold: Option<u64>,
    /// What every connection the workload opens is.
    pub conn: ConnKind,
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
    /// Some: services fixed per pair (all-to-all only).
    pub by_pair: Option<PairServices>,
    /// Some: the flows of a flow file replace the Poisson arrivals (all-to-all only).
    pub replay: Option<Box<Replay>>,
    /// Some: incast events on top of the arrivals (all-to-all only).
    pub incast: Option<Box<IncastEvents>>,
    /// Messages of the arrival process (or the flow file) so far: incast ones not counted.
    pub arrived: u64,
}

/// Incast events (module doc): Poisson, each one `senders` distinct hosts sending `bytes`
/// each to one receiver at the same instant, all drawn uniformly from the pattern's hosts
/// with their own random stream (the background arrivals are the same with and without).
#[derive(Clone, Debug)]
pub struct IncastEvents {
    pub senders: u32,
    pub bytes: u64,
    pub arrivals: PoissonArrivals,
    pub rng: Rng,
    /// Events so far.
    pub events: u64,
}

/// `Event::App` argument of an incast event (0: an arrival).
const INCAST_EVENT: u32 = 1;

/// The flows of a flow file (`model/flow_file.rs`), in start order, each with the service
/// of its class; `next` is the next one to arrive.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    pub flows: Vec<FileFlow>,
    pub service: Vec<u16>,
    pub next: usize,
}

impl Workload {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        pattern: Pattern,
        services: Vec<Service>,
        arrivals: PoissonArrivals,
        connections: u32,
        pias_threshold: Option<u64>,
        conn: ConnKind,
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
            conn,
            start,
            limit,
            rng,
            pair_conns: vec![u32::MAX; pairs * connections.idx()],
            conns: Vec::new(),
            conn_of_flow: Vec::new(),
            messages: Vec::new(),
            done: 0,
            by_pair: None,
            replay: None,
            incast: None,
            arrived: 0,
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
            AppEvent::Start if self.replay.is_some() => self.schedule_replay(sim, id),
            AppEvent::Timer(INCAST_EVENT) => self.incast_event(sim, id),
            AppEvent::Timer(_) if self.replay.is_some() => {
                self.arrive_replayed(sim, id);
                self.schedule_replay(sim, id);
            }
            AppEvent::Start => {
                if self.limit > 0 {
                    let at = self.start.max(sim.now) + self.arrivals.next_gap(&mut self.rng);
                    sim.events.schedule(at, Event::App { app: id, arg: 0 });
                }
                if let Some(inc) = &mut self.incast {
                    let at = self.start.max(sim.now) + inc.arrivals.next_gap(&mut inc.rng);
                    let arg = INCAST_EVENT;
                    sim.events.schedule(at, Event::App { app: id, arg });
                }
            }
            AppEvent::Timer(_) => {
                self.arrive(sim, id);
                if self.arrived < self.limit {
                    let at = sim.now + self.arrivals.next_gap(&mut self.rng);
                    sim.events.schedule(at, Event::App { app: id, arg: 0 });
                }
            }
            AppEvent::FlowDone(fid) => self.flow_done(sim, fid),
            AppEvent::UdpReceived(_) | AppEvent::PingReply(_) => {}
        }
    }

    /// While the arrival process runs: one incast event, and the next one scheduled.
    fn incast_event(&mut self, sim: &mut Core, id: AppId) {
        let (Some(inc), Pattern::AllToAll { hosts }) = (&mut self.incast, &self.pattern) else {
            return;
        };
        if self.arrived >= self.limit {
            return;
        }
        inc.events += 1;
        let n = hosts.len();
        let dst = inc.rng.below(n as u64) as usize;
        // `senders` distinct hosts other than the receiver: a partial Fisher-Yates shuffle
        // of the others (the builder checks senders < n).
        let mut others: Vec<usize> = (0..n).filter(|&h| h != dst).collect();
        let k = inc.senders as usize;
        for i in 0..k {
            let j = i + inc.rng.below((others.len() - i) as u64) as usize;
            others.swap(i, j);
        }
        let bytes = inc.bytes;
        let at = sim.now + inc.arrivals.next_gap(&mut inc.rng);
        sim.events.schedule(
            at,
            Event::App {
                app: id,
                arg: INCAST_EVENT,
            },
        );
        let d = hosts[dst];
        let ends: Vec<(usize, NodeId)> = others[..k].iter().map(|&a| (a, hosts[a])).collect();
        for (a, src) in ends {
            self.push_message(sim, id, 0, bytes, a * n + dst, (src, d));
        }
    }

    /// Schedule the next flow of the flow file, at `start` + its start time.
    fn schedule_replay(&mut self, sim: &mut Core, id: AppId) {
        let Some(r) = &self.replay else { return };
        if let Some(f) = r.flows.get(r.next) {
            let at = (self.start + f.start).max(sim.now);
            sim.events.schedule(at, Event::App { app: id, arg: 0 });
        }
    }

    /// The next flow of the flow file arrives: its endpoints, size and service are given.
    fn arrive_replayed(&mut self, sim: &mut Core, id: AppId) {
        let (Some(r), Pattern::AllToAll { hosts }) = (&mut self.replay, &self.pattern) else {
            return;
        };
        let Some(&f) = r.flows.get(r.next) else {
            return;
        };
        let si = r.service[r.next] as usize;
        r.next += 1;
        self.arrived += 1;
        let n = hosts.len();
        let (a, b) = (f.src as usize, f.dst as usize);
        let ends = (hosts[a], hosts[b]);
        self.push_message(sim, id, si, f.bytes, a * n + b, ends);
    }

    /// A new message arrives: choose service, size, endpoints and connection.
    fn arrive(&mut self, sim: &mut Core, id: AppId) {
        self.arrived += 1;
        if let (Some(ps), Pattern::AllToAll { hosts }) = (&self.by_pair, &self.pattern) {
            let (si, pair) = ps.draw(&mut self.rng);
            let n = hosts.len();
            let (src, dst) = (hosts[pair / n], hosts[pair % n]);
            let bytes = self.services[si].dist.sample_bytes(&mut self.rng);
            return self.push_message(sim, id, si, bytes, pair, (src, dst));
        }
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
        self.push_message(sim, id, si, bytes, pair, (src, dst));
    }

    /// Queue a message of service `si` on a connection of `pair`, and start it if idle.
    fn push_message(
        &mut self,
        sim: &mut Core,
        id: AppId,
        si: usize,
        bytes: u64,
        pair: usize,
        (src, dst): (NodeId, NodeId),
    ) {
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
                let fid = match &self.conn {
                    ConnKind::Tcp(tcp) => {
                        sim.add_flow(TcpFlow::new(FlowId(0), src, dst, tcp.clone()), id)
                    }
                    ConnKind::Roce(q, cc) => {
                        sim.add_flow(RoceFlow::new(src, dst, *q, (**cc).clone()), id)
                    }
                };
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
        if let (ConnKind::Roce(_, cc), crate::model::transport::Endpoint::Roce(qp)) =
            (&self.conn, &mut *f)
        {
            // A message starts its queue pair's congestion control afresh, at line rate: the
            // RDMA papers' simulator opens a queue pair per flow.
            *qp.cc = (**cc).clone();
        }
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
        if self.arrived >= self.limit && self.done >= self.messages.len() as u64 {
            // Every message finished: end the run here (durations and goodputs use it).
            sim.end = sim.now;
            sim.events.schedule(sim.now, Event::Stop);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three hosts, two services of mean 1 and 2: the TCN script's `service_id` formula
    /// gives service 0 to pairs 0→2 and 2→0, service 1 to the other four; the rates 2/1 and
    /// 4/2 split the merged process evenly.
    #[test]
    fn pair_services_follow_the_tcn_script() {
        let ps = PairServices::tcn_script(3, &[1.0, 2.0]);
        assert_eq!(ps.pairs, vec![vec![2, 6], vec![1, 3, 5, 7]]);
        assert_eq!(ps.cum, vec![0.5, 1.0]);
        // Per pair λ = C/mean/(N − 1): 2·(10/1)/2 + 4·(10/2)/2 = 20.
        assert_eq!(ps.total_rate(3, |s| 10.0 / [1.0, 2.0][s]), 20.0);
    }

    #[test]
    fn pair_draws_match_the_rate_shares() {
        // Means 1 and 3 over 4 hosts: count each service's draws and each pair's.
        let ps = PairServices::tcn_script(4, &[1.0, 3.0]);
        let w0 = ps.pairs[0].len() as f64 / 1.0;
        let w1 = ps.pairs[1].len() as f64 / 3.0;
        let mut rng = Rng::new(7, 1);
        let n = 200_000;
        let mut by_service = [0u32; 2];
        for _ in 0..n {
            let (s, pair) = ps.draw(&mut rng);
            assert!(ps.pairs[s].contains(&(pair as u32)));
            assert_ne!(pair / 4, pair % 4, "no self pair");
            by_service[s] += 1;
        }
        let share0 = by_service[0] as f64 / n as f64;
        // Binomial sd at n = 200 000 is ~0.001: 0.005 is five of them.
        assert!((share0 - w0 / (w0 + w1)).abs() < 0.005, "{share0}");
    }
}

//! Applications: barrier-synchronized incast (Devkota 2010 ch. I), bulk transfers, and UDP
//! constant-bit-rate sources.

pub mod schedule;
pub mod workload;

use crate::base::ids::{AppId, FlowId, Idx, NodeId};
use crate::base::packet::{Ecn, Kind, Packet};
use crate::base::rng::Rng;
use crate::base::units::{RateBps, SimTime};
use crate::engine::datapath::Core;
use crate::engine::event::Event;

pub use crate::engine::datapath::AppEvent;

/// Barrier-synchronized reads: the client asks all servers for one SRU each; the next
/// request goes out only when every SRU of the round has arrived.
#[derive(Clone, Debug)]
pub struct Incast {
    /// One TCP connection per server (server → client), persistent across rounds.
    pub flows: Vec<FlowId>,
    pub sru: u64,
    /// Delay between the end of a round and the servers starting to answer.
    pub request_delay: SimTime,
    /// Extra random delay per server response, uniform in [0, jitter).
    pub response_jitter: SimTime,
    pub rng: Rng,
    pub rounds_done: u64,
    pub max_rounds: u64,
    pub pending: usize,
    pub round_start: SimTime,
    pub round_times: Vec<(SimTime, SimTime)>,
    pub delivered: u64,
}

/// One TCP transfer of `bytes` (u64::MAX: unlimited) starting at `start`.
#[derive(Clone, Debug)]
pub struct Bulk {
    pub flow: FlowId,
    pub bytes: u64,
    pub start: SimTime,
    pub finished: Option<SimTime>,
}

/// UDP constant bit rate from `src` to `dst` between `start` and `stop`.
#[derive(Clone, Debug)]
pub struct Cbr {
    pub src: NodeId,
    pub dst: NodeId,
    pub rate: RateBps,
    pub packet_size: u32,
    pub header: u32,
    pub start: SimTime,
    pub stop: SimTime,
    pub class: u8,
    pub sent_bytes: u64,
    pub received_bytes: u64,
}

/// Ping probes (Bai et al. 2016 Fig. 5): a small UDP request every `interval` from `src`
/// to `dst` in traffic class `class`; `dst` echoes it at once (same class, same size); the
/// RTT is the time from the request's hand-off to the NIC to the reply's arrival.
#[derive(Clone, Debug)]
pub struct Ping {
    pub src: NodeId,
    pub dst: NodeId,
    pub interval: SimTime,
    pub packet_size: u32,
    pub start: SimTime,
    pub stop: SimTime,
    pub class: u8,
    pub sent: u64,
    pub rtts: Vec<SimTime>,
}

#[derive(Clone, Debug)]
pub enum App {
    Incast(Incast),
    Bulk(Bulk),
    Cbr(Cbr),
    /// Scheduled transfers (`engine/apps/schedule.rs`).
    Schedule(crate::engine::apps::schedule::Schedule),
    Ping(Ping),
    /// Open-loop transactions on one TCP connection (`Transactions`).
    Transactions(Transactions),
    /// Poisson workload over persistent connections (`engine/apps/workload.rs`).
    Workload(Box<crate::engine::apps::workload::Workload>),
}

impl App {
    pub fn kind(&self) -> &'static str {
        match self {
            App::Incast(_) => "incast",
            App::Bulk(_) => "bulk",
            App::Cbr(_) => "cbr",
            App::Schedule(_) => "flows",
            App::Ping(_) => "ping",
            App::Transactions(_) => "transactions",
            App::Workload(_) => "workload",
        }
    }

    pub fn handle(&mut self, sim: &mut Core, id: AppId, ev: AppEvent) {
        match self {
            App::Incast(a) => a.handle(sim, id, ev),
            App::Bulk(a) => a.handle(sim, id, ev),
            App::Cbr(a) => a.handle(sim, id, ev),
            App::Schedule(a) => a.handle(sim, id, ev),
            App::Ping(a) => a.handle(sim, id, ev),
            App::Transactions(a) => a.handle(sim, id, ev),
            App::Workload(a) => a.handle(sim, id, ev),
        }
    }
}

impl Incast {
    fn request_all(&mut self, sim: &mut Core, id: AppId) {
        self.round_start = sim.now;
        self.pending = self.flows.len();
        for (i, &f) in self.flows.iter().enumerate() {
            let mut d = self.request_delay;
            if self.response_jitter > SimTime::ZERO {
                d = d + SimTime((self.rng.uniform() * self.response_jitter.0 as f64) as u64);
            }
            if d == SimTime::ZERO {
                sim.flow_write(f, self.sru, true);
            } else {
                sim.events.schedule(
                    sim.now + d,
                    Event::App {
                        app: id,
                        arg: i as u32,
                    },
                );
            }
        }
    }

    fn handle(&mut self, sim: &mut Core, id: AppId, ev: AppEvent) {
        match ev {
            AppEvent::Start => self.request_all(sim, id),
            AppEvent::Timer(i) => {
                let f = self.flows[i.idx()];
                sim.flow_write(f, self.sru, true);
            }
            AppEvent::FlowDone(_) => {
                self.pending -= 1;
                self.delivered += self.sru;
                if self.pending == 0 {
                    self.rounds_done += 1;
                    self.round_times.push((self.round_start, sim.now));
                    if self.rounds_done < self.max_rounds {
                        self.request_all(sim, id);
                    }
                }
            }
            AppEvent::UdpReceived(_) | AppEvent::PingReply(_) => {}
        }
    }
}

impl Bulk {
    fn handle(&mut self, sim: &mut Core, id: AppId, ev: AppEvent) {
        match ev {
            AppEvent::Start => {
                if self.start == SimTime::ZERO {
                    sim.flow_write(self.flow, self.bytes, self.bytes != u64::MAX);
                } else {
                    sim.events
                        .schedule(self.start, Event::App { app: id, arg: 0 });
                }
            }
            AppEvent::Timer(_) => sim.flow_write(self.flow, self.bytes, self.bytes != u64::MAX),
            AppEvent::FlowDone(_) => self.finished = Some(sim.now),
            AppEvent::UdpReceived(_) | AppEvent::PingReply(_) => {}
        }
    }
}

/// A UDP datagram of `size` bytes on the wire (`header` of them headers) sent at `now`;
/// `flow` names the sending app so the receiver can credit it.
fn udp_datagram(
    now: SimTime,
    app: AppId,
    (src, dst): (NodeId, NodeId),
    seq: u64,
    (size, header): (u32, u32),
    class: u8,
    flags: u8,
) -> Packet {
    Packet {
        flow: FlowId(app.0),
        src,
        dst,
        seq,
        ack: 0,
        size,
        payload: size.saturating_sub(header),
        kind: Kind::Udp,
        flags,
        ecn: Ecn::NotEct,
        class,
        enq_time: now,
        sent_time: now,
        sack: crate::base::packet::SackBlocks::EMPTY,
    }
}

/// The clock of a periodic UDP source (CBR, ping): `Start` arms the first tick at `start`;
/// true when a tick fires before `stop`, i.e. a datagram is due now.
fn udp_tick_due(
    sim: &mut Core,
    id: AppId,
    ev: AppEvent,
    (start, stop): (SimTime, SimTime),
) -> bool {
    match ev {
        AppEvent::Start => {
            sim.events.schedule(start, Event::App { app: id, arg: 0 });
            false
        }
        AppEvent::Timer(_) => sim.now < stop,
        _ => false,
    }
}

/// Send a periodic source's datagram and arm its next tick `interval` later.
fn udp_send_and_rearm(sim: &mut Core, id: AppId, src: NodeId, p: Packet, interval: SimTime) {
    sim.host_send(src, p);
    let next = sim.now + interval;
    sim.events.schedule(next, Event::App { app: id, arg: 0 });
}

impl Cbr {
    fn interval(&self) -> SimTime {
        self.rate.tx_time(self.packet_size)
    }

    fn handle(&mut self, sim: &mut Core, id: AppId, ev: AppEvent) {
        if let AppEvent::UdpReceived(b) = ev {
            self.received_bytes += b;
        } else if udp_tick_due(sim, id, ev, (self.start, self.stop)) {
            let p = udp_datagram(
                sim.now,
                id,
                (self.src, self.dst),
                self.sent_bytes,
                (self.packet_size, self.header),
                self.class,
                0,
            );
            self.sent_bytes += p.payload as u64;
            udp_send_and_rearm(sim, id, self.src, p, self.interval());
        }
    }
}

impl Ping {
    fn handle(&mut self, sim: &mut Core, id: AppId, ev: AppEvent) {
        if let AppEvent::PingReply(rtt) = ev {
            self.rtts.push(rtt);
        } else if udp_tick_due(sim, id, ev, (self.start, self.stop)) {
            let p = udp_datagram(
                sim.now,
                id,
                (self.src, self.dst),
                self.sent,
                (self.packet_size, 28),
                self.class,
                crate::base::packet::flags::PING_REQ,
            );
            self.sent += 1;
            udp_send_and_rearm(sim, id, self.src, p, self.interval);
        }
    }
}

/// Open-loop transactions (Atikoglu & Prabhakar slides: "9 KB transactions with Bernoulli arrivals"):
/// messages of `size` bytes written to one persistent TCP connection at exponentially
/// distributed intervals of mean `size·8 / rate` (the continuous-time limit of Bernoulli
/// arrivals), between `start` and `stop`. The connection's send buffer is unbounded.
#[derive(Clone, Debug)]
pub struct Transactions {
    pub flow: FlowId,
    pub size: u64,
    pub rate: RateBps,
    pub start: SimTime,
    pub stop: SimTime,
    pub rng: Rng,
    pub written: u64,
}

impl Transactions {
    fn handle(&mut self, sim: &mut Core, id: AppId, ev: AppEvent) {
        match ev {
            AppEvent::Start => {
                sim.events
                    .schedule(self.start, Event::App { app: id, arg: 0 });
            }
            AppEvent::Timer(_) => {
                if sim.now >= self.stop {
                    return;
                }
                sim.flow_write(self.flow, self.size, false);
                self.written += self.size;
                let mean = self.size as f64 * 8.0 / self.rate.0 as f64;
                let gap = SimTime::from_secs_f64(self.rng.exp(mean)).max(SimTime(1));
                sim.events
                    .schedule(sim.now + gap, Event::App { app: id, arg: 0 });
            }
            AppEvent::FlowDone(_) | AppEvent::UdpReceived(_) | AppEvent::PingReply(_) => {}
        }
    }
}

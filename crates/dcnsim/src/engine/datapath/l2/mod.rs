//! Layer-2 congestion management wired into the simulation: QCN congestion points on switch
//! egress queues, CNM frames, QCN reaction points (rate limiters) in hosts between the
//! transport and the NIC, IEEE 802.3x PAUSE at switches and transmitters, and service-rate
//! changes at set times. The state machines themselves are the pure modules of `l2/`; this
//! module only feeds them events and turns their outputs into frames and events.
//!
//! Conventions (documented in `docs/design.md`):
//! - CNMs and PAUSE frames are 64-byte control frames. They cross links and wait for the frame
//!   in service, are sent ahead of queued data (FIFO among control frames), bypass the buffer
//!   limit, AQM and the CP, and are never paused.
//! - The CP samples every frame admitted to a CP-enabled egress queue (data, ACKs, UDP), with
//!   the queue length in bytes after the enqueue (0 for a frame that starts at once). A CNM
//!   goes to the source host of the sampled frame, routed like any frame.
//!   With `qcn.sample = "arrivals"` frames the queue drops are offered too, with the queue
//!   length they found (`SampleSet`).
//! - A rate limiter (RL) holds the data segments of its flows in a FIFO and releases them at
//!   the RP's current rate (`ReactionPoint::next_departure`), driven by one lazy release event
//!   and one lazy RP-timer event per limiter; the byte counter is fed on release. Only TCP
//!   data segments (and SYNs) from a flow's source are limited; CNMs about ACKs or UDP are
//!   counted as ignored.
//! - PAUSE accounting counts, per switch input, the bytes of frames from that input waiting
//!   in any egress queue of the switch (frames that start at once are never counted). A paused
//!   transmitter finishes the frame in service and starts no data frame before the pause ends.

pub mod pfc;

use crate::base::ids::{AppId, FlowId, Idx, NodeId, PortId};
use crate::base::packet::{Ecn, Kind, Packet, PktRef};
use crate::base::rng::Rng;
use crate::base::units::{RateBps, SimTime};
use crate::engine::datapath::Core;
use crate::engine::event::{Event, L2Kind};
use crate::engine::net::{fabric, Enqueued, NodeKind, Waiting};
use crate::model::l2::{
    class_priority, CongestionPoint, PauseFrame, PauseMode, PauseState, PauseWatermarks,
    ReactionPoint, CNM_FRAME_BYTES, PAUSE_FRAME_BYTES,
};
use std::collections::VecDeque;

// ------------------------------------------------------------------------ state

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notify {
    Off,
    Drop,
    Ecn,
}

/// A rate limiter in a host: a QCN RP (or a fixed rate) and the FIFO of held segments.
#[derive(Clone, Debug)]
pub struct Limiter {
    pub name: String,
    pub host: NodeId,
    pub rp: ReactionPoint,
    pub fixed: Option<RateBps>,
    next_free: SimTime,
    pub fifo: VecDeque<Packet>,
    rel_at: SimTime,
    timer_at: SimTime,
    pub flows: u32,
    pub cnms: u64,
    pub notified: u64,
    pub released: u64,
    pub max_held: u64,
    /// RTOs of this limiter's flows that fired while the segment at `snd_una` was still held
    /// here (never transmitted): timeouts caused by pacing, not by a loss.
    pub rto_held: u64,
}

/// Line rate of the NIC port `src` uses towards `dst` (the RP's initial rate and cap).
pub(crate) fn nic_rate(sim: &Core, src: NodeId, dst: NodeId) -> RateBps {
    match sim.net.routing.route(src, dst) {
        PortId::NONE => RateBps(1),
        nic => sim.net.ports[nic.idx()].rate,
    }
}

impl Limiter {
    /// A new, empty limiter of `host` (pacing by `rp`, or at the `fixed` rate).
    pub(crate) fn new(
        name: String,
        host: NodeId,
        rp: ReactionPoint,
        fixed: Option<RateBps>,
    ) -> Limiter {
        Limiter {
            name,
            host,
            rp,
            fixed,
            next_free: SimTime::ZERO,
            fifo: VecDeque::new(),
            rel_at: SimTime::NEVER,
            timer_at: SimTime::NEVER,
            flows: 0,
            cnms: 0,
            notified: 0,
            released: 0,
            max_held: 0,
            rto_held: 0,
        }
    }
    fn next_departure(&self, now: SimTime, bytes: u32) -> SimTime {
        match self.fixed {
            Some(_) => self.next_free.max(now),
            None => self.rp.next_departure(now, bytes),
        }
    }
    fn on_release(&mut self, now: SimTime, bytes: u32, rng: &mut Rng) {
        self.released += 1;
        match self.fixed {
            Some(r) => self.next_free = self.next_free.max(now) + r.tx_time(bytes),
            None => self.rp.on_bytes_sent(now, bytes, rng),
        }
    }
    /// Allocated rate in bits/s (line rate while the RP has no active RL).
    pub fn rate_bps(&self) -> f64 {
        match self.fixed {
            Some(r) => r.0 as f64,
            None if self.rp.is_active() => self.rp.current_rate_bps(),
            None => self.rp.line_rate_bps(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct SwitchPause {
    pub wm: PauseWatermarks,
    pub(crate) refresh_at: SimTime,
}

#[derive(Clone, Debug)]
pub struct L2 {
    pub rng: Rng,
    /// Per port: its CP (switch egress ports only).
    pub cp: Vec<Option<CongestionPoint>>,
    pub rls: Vec<Limiter>,
    /// Per flow: its limiter (u32::MAX: none).
    pub rl_of_flow: Vec<u32>,
    /// Per app: the limiter of a UDP (CBR) source (u32::MAX: none).
    pub rl_of_app: Vec<u32>,
    pub notify: Notify,
    /// Per node: PAUSE accounting of a switch.
    pub pause_sw: Vec<Option<SwitchPause>>,
    /// Per port: its index in its node's port list.
    pub input_idx: Vec<u32>,
    /// Per port: for each queued data frame, the switch port towards the node it came from.
    pub inq: Vec<VecDeque<PortId>>,
    /// Per port: control frames at the head of the queue.
    pub ctrl_front: Vec<u32>,
    /// Per port: transmitter-side pause timer, and the time of the pending "held" event.
    pub pause_tx: Vec<PauseState>,
    pub(crate) hold_at: Vec<SimTime>,
    pub pause_sent: Vec<u64>,
    pub pause_rcvd: Vec<u64>,
    pub cnm_port: Vec<u64>,
    pub rate_changes: Vec<(SimTime, PortId, RateBps)>,
    pub rp_interval: SimTime,
    pub keep_rp_series: bool,
    pub rp_samples: Vec<(SimTime, u32, f64)>,
    pub minrate: Vec<(SimTime, f64)>,
    pub flow_interval: SimTime,
    pub flow_last: Vec<u64>,
    pub flow_samples: Vec<(SimTime, FlowId, f64)>,
    /// UDP CBR apps sampled with the flows: bytes received at the last sample, and
    /// (time, app, Mb/s received in the interval) (table `app_rate`).
    pub app_last: Vec<u64>,
    pub app_samples: Vec<(SimTime, u32, f64)>,
    pub cnm_sent: u64,
    pub cnm_received: u64,
    pub cnm_ignored: u64,
    /// 802.3x or PFC (`[topology] pause.mode`).
    pub pause_mode: PauseMode,
    /// PAUSE/PFC on multi-queue ports and per-priority counters (`engine/datapath/l2/pfc.rs`).
    pub mqp: crate::engine::datapath::l2::pfc::MqPause,
    /// Total of `Limiter::rto_held`.
    pub rto_held: u64,
    /// Source host of every UDP CBR app by app id (`NodeId::NONE`: not a CBR app), so that a CNM
    /// for a CBR source is recognised without the application arena.
    pub cbr_src: Vec<NodeId>,
    /// Bytes delivered to each CBR app so far (by app id; the `app_rate` samples).
    pub cbr_rcvd: Vec<u64>,
}

impl L2 {
    /// Layer-2 state for the network of `sim`; `cbr_src[a]` is the source host of app `a` if
    /// it is a UDP CBR app (`NodeId::NONE` otherwise).
    pub fn new(sim: &Core, cbr_src: Vec<NodeId>) -> L2 {
        let np = sim.net.ports.len();
        let mut input_idx = vec![0u32; np];
        for n in &sim.net.nodes {
            for (i, &p) in n.ports.iter().enumerate() {
                input_idx[p.idx()] = i as u32;
            }
        }
        L2 {
            rng: Rng::new(sim.seed, 0x4C32),
            cp: vec![None; np],
            rls: Vec::new(),
            rl_of_flow: vec![u32::MAX; sim.hosts.flows.len()],
            rl_of_app: vec![u32::MAX; cbr_src.len()],
            notify: Notify::Off,
            pause_sw: vec![None; sim.net.nodes.len()],
            input_idx,
            inq: vec![VecDeque::new(); np],
            ctrl_front: vec![0; np],
            pause_tx: vec![PauseState::new(PauseMode::Pause); np],
            hold_at: vec![SimTime::NEVER; np],
            pause_sent: vec![0; np],
            pause_rcvd: vec![0; np],
            cnm_port: vec![0; np],
            rate_changes: Vec::new(),
            rp_interval: SimTime::from_ms(1),
            keep_rp_series: false,
            rp_samples: Vec::new(),
            minrate: Vec::new(),
            flow_interval: SimTime::ZERO,
            flow_last: vec![0; sim.hosts.flows.len()],
            flow_samples: Vec::new(),
            app_last: Vec::new(),
            app_samples: Vec::new(),
            cnm_sent: 0,
            cnm_received: 0,
            cnm_ignored: 0,
            pause_mode: PauseMode::Pause,
            mqp: crate::engine::datapath::l2::pfc::MqPause::new(np),
            rto_held: 0,
            cbr_rcvd: vec![0; cbr_src.len()],
            cbr_src,
        }
    }

    /// Mean over the periodic samples of the minimum allocated rate across QCN RPs (Mb/s);
    /// NaN without QCN limiters.
    /// When a data frame of priority `prio` may start at port `pid` (a PAUSE or PFC frame
    /// received there; the NIC scheduler asks, `engine/datapath/nic.rs`).
    pub(crate) fn tx_paused_until(&self, pid: PortId, prio: u8) -> SimTime {
        self.pause_tx
            .get(pid.idx())
            .map_or(SimTime::ZERO, |s| s.paused_until(prio))
    }

    pub fn avg_minrate_mbps(&self) -> f64 {
        if self.minrate.is_empty() {
            return f64::NAN;
        }
        self.minrate.iter().map(|x| x.1).sum::<f64>() / self.minrate.len() as f64 / 1e6
    }
}

fn l2(sim: &mut Core) -> &mut L2 {
    sim.l2.as_mut().expect("l2 state")
}

fn is_control(k: Kind) -> bool {
    matches!(k, Kind::Cnm | Kind::Pause)
}

// ----------------------------------------------------------------------- frames

/// Send a control frame on port `pid`: at once if the port is idle, else ahead of queued
/// data (after earlier control frames); never paused, never dropped.
fn send_control(sim: &mut Core, pid: PortId, mut p: Packet) {
    let now = sim.now;
    let l2s = sim.l2.as_mut().expect("l2 state");
    let port = &mut sim.net.ports[pid.idx()];
    port.stats.arrived += 1;
    if port.queue.is_empty() && port.tx.idle(now) {
        let h = sim.net.packets.put(p);
        let fabric = fabric!(&mut sim.events, sim.net);
        port.begin_service(pid, now, h, false, fabric);
        return;
    }
    p.enq_time = now;
    if port.mq.is_none() {
        port.queued_bytes += p.size as u64;
    }
    let k = l2s.ctrl_front[pid.idx()] as usize;
    let h = sim.net.packets.put(p);
    let out = sim.net.routing.hint(&sim.net.ecmp, port.peer_node, &p);
    port.queue
        .insert(k.min(port.queue.len()), Waiting::new(h, &p, out));
    l2s.ctrl_front[pid.idx()] += 1;
    if !port.tx.armed() {
        port.tx.arm_soon(&mut sim.events, pid, now);
    } else {
        let at = port.tx.busy_until().max(now);
        let h = l2s.hold_at[pid.idx()];
        if !h.is_never() && at < h {
            // The port is held by a pause: wake it for the control frame.
            l2s.hold_at[pid.idx()] = at;
            port.tx.wake(&mut sim.events, pid, at);
        }
    }
}

pub(crate) fn send_pause(sim: &mut Core, pid: PortId, quanta: u16, prio: Option<u8>) {
    let port = &sim.net.ports[pid.idx()];
    let p = Packet::pause(
        (port.node, port.peer_node),
        PAUSE_FRAME_BYTES,
        quanta,
        prio,
        sim.now,
    );
    let l = l2(sim);
    l.pause_sent[pid.idx()] += 1;
    l.mqp.count_sent(pid, prio);
    send_control(sim, pid, p);
}

/// Called at the start of `on_port_tx_done`. Returns true when the event is consumed here:
/// a stale or duplicate wake-up, or a paused port whose head is a data frame (then held
/// until the pause ends). Otherwise the head frame is about to leave: account its departure.
pub(crate) fn tx_gate(sim: &mut Core, pid: PortId) -> bool {
    let now = sim.now;
    let l2s = sim.l2.as_mut().expect("l2 state");
    let i = pid.idx();
    let port = &mut sim.net.ports[i];
    let h = l2s.hold_at[i];
    if !h.is_never() {
        if now != h {
            return true; // superseded hold / wake-up
        }
        l2s.hold_at[i] = SimTime::NEVER;
    } else if now < port.tx.busy_until() {
        return true; // duplicate of a live wake-up
    }
    if port.mq.is_some() {
        crate::engine::datapath::l2::pfc::mq_tx(sim, pid);
        return true;
    }
    let head = match port.queue.front() {
        None => return false,
        Some(w) => sim.net.packets[w.h],
    };
    if is_control(head.kind) {
        l2s.ctrl_front[i] = l2s.ctrl_front[i].saturating_sub(1);
        return false;
    }
    let until = l2s.pause_tx[i].paused_until(class_priority(head.class));
    if now < until {
        l2s.hold_at[i] = until;
        port.tx.hold(&mut sim.events, pid, until);
        return true;
    }
    if let Some(inp) = l2s.inq[i].pop_front() {
        let node = port.node.idx();
        let ii = l2s.input_idx[inp.idx()] as usize;
        if let Some(sw) = l2s.pause_sw[node].as_mut() {
            if let Some(f) = sw
                .wm
                .on_departure(now, ii, class_priority(head.class), head.size)
            {
                send_pause(sim, inp, f.quanta, f.prio);
            }
        }
    }
    false
}

/// Frame `h` fully arrived at `node` (with L2 on) over the wire of port `link` (of the
/// upstream node; `NONE`: none). Returns true when handled here (forwarded, absorbed or
/// dropped; false leaves `h` to the host). `out` is where a switch forwards the frame
/// (`Routing::hint`, ECMP resolved), computed when the frame became its wire's head. A
/// forwarded frame stays where it is in the packet arena (its INT records with it).
pub(crate) fn receive(sim: &mut Core, node: NodeId, h: PktRef, out: PortId, link: PortId) -> bool {
    let is_switch = sim.net.routing.kind(node) == Some(NodeKind::Switch);
    match sim.net.packets[h].kind {
        Kind::Pause => {
            let p = sim.net.packets.take(h);
            on_pause_frame(sim, p, link);
            true
        }
        Kind::Cnm => {
            let p = sim.net.packets.take(h);
            if is_switch {
                if out != PortId::NONE {
                    send_control(sim, out, p);
                } else {
                    sim.net.unroutable += 1;
                }
            } else {
                on_cnm_host(sim, node, p);
            }
            true
        }
        _ if is_switch => {
            // The switch's own port at the far end of the wire: the frame's input.
            let input = if link == PortId::NONE {
                PortId::NONE
            } else {
                sim.net.ports[link.idx()].peer_port
            };
            switch_forward(sim, node, h, out, input);
            true
        }
        _ => false,
    }
}

/// Switch `node` forwards packet `h`, received on its port `input` (`NONE`: none), to
/// `out`.
fn switch_forward(sim: &mut Core, node: NodeId, h: PktRef, out: PortId, input: PortId) {
    if out == PortId::NONE {
        sim.net.packets.free(h);
        sim.net.unroutable += 1;
        return;
    }
    let oi = out.idx();
    let (pause_on, cp_on) = {
        let l2s = sim.l2.as_ref().expect("l2 state");
        (l2s.pause_sw[node.idx()].is_some(), l2s.cp[oi].is_some())
    };
    if !pause_on && !cp_on {
        sim.enqueue_stored(out, h, PortId::NONE);
        return;
    }
    if pause_on && crate::engine::datapath::l2::pfc::ingress_refused(sim, node, out, h, input) {
        return;
    }
    if pause_on && sim.net.ports[oi].mq.is_some() {
        // Multi-queue egress: the input is accounted inside `mq_enqueue` (`engine/datapath/l2/pfc.rs`).
        crate::engine::datapath::l2::pfc::switch_forward_mq(sim, out, h, input);
        return;
    }
    // The frame as it arrived (the enqueue may mark it, or drop and free it).
    let p = sim.net.packets[h];
    let outcome = sim.enqueue_stored(out, h, PortId::NONE);
    let now = sim.now;
    let accepted = !matches!(outcome, Enqueued::Dropped(_));
    let qlen = sim.net.ports[oi].queued_bytes;
    // Only frames that wait in the queue count towards the input's PAUSE threshold.
    if pause_on && outcome == Enqueued::Queued && input != PortId::NONE {
        let inp = input;
        let l2s = l2(sim);
        l2s.inq[oi].push_back(inp);
        let ii = l2s.input_idx[inp.idx()] as usize;
        let sw = l2s.pause_sw[node.idx()].as_mut().expect("pause");
        if let Some(f) = sw.wm.on_arrival(now, ii, class_priority(p.class), p.size) {
            send_pause(sim, inp, f.quanta, f.prio);
            arm_refresh(sim, node);
        }
    }
    if cp_on {
        let l2s = l2(sim);
        let cp = l2s.cp[oi].as_mut().expect("cp");
        if let Some(c) = cp.on_arrival(qlen, p.size, accepted, &mut l2s.rng) {
            l2s.cnm_sent += 1;
            l2s.cnm_port[oi] += 1;
            let cnm = Packet::cnm(&p, node, CNM_FRAME_BYTES, c.q, now);
            let back = sim.net.routing.route(node, p.src);
            if back != PortId::NONE {
                send_control(sim, back, cnm);
            }
        }
    }
}

pub(crate) fn arm_refresh(sim: &mut Core, node: NodeId) {
    let l2s = l2(sim);
    let sw = match l2s.pause_sw[node.idx()].as_mut() {
        Some(s) => s,
        None => return,
    };
    let t = sw.wm.next_refresh();
    if !t.is_never() && t < sw.refresh_at {
        sw.refresh_at = t;
        sim.events.schedule(
            t,
            Event::L2 {
                idx: node.0,
                kind: L2Kind::PauseRefresh,
            },
        );
    }
}

fn on_refresh(sim: &mut Core, node: NodeId) {
    let now = sim.now;
    {
        let sw = match l2(sim).pause_sw[node.idx()].as_mut() {
            Some(s) => s,
            None => return,
        };
        if now != sw.refresh_at {
            return;
        }
        sw.refresh_at = SimTime::NEVER;
    }
    loop {
        let f = {
            let sw = l2(sim).pause_sw[node.idx()].as_mut().expect("pause");
            sw.wm.poll_refresh(now)
        };
        match f {
            Some(f) => {
                let pid = sim.net.nodes[node.idx()].ports[f.port];
                send_pause(sim, pid, f.quanta, f.prio);
            }
            None => break,
        }
    }
    arm_refresh(sim, node);
}

/// A PAUSE/PFC frame `p` arrived over the wire of port `link`: it pauses that port (and
/// the port's NIC scheduler, if it has one, looks again: a resume may let it pull).
fn on_pause_frame(sim: &mut Core, p: Packet, link: PortId) {
    pause_port(sim, p, link);
    if link != PortId::NONE && sim.hosts.nics.is_some() {
        let target = sim.net.ports[link.idx()].peer_port;
        sim.nic_after_port(target);
    }
}

fn pause_port(sim: &mut Core, p: Packet, link: PortId) {
    let now = sim.now;
    if link == PortId::NONE {
        return;
    }
    let target = sim.net.ports[link.idx()].peer_port;
    let ti = target.idx();
    let rate = sim.net.ports[ti].rate;
    let l2s = sim.l2.as_mut().expect("l2 state");
    l2s.pause_rcvd[ti] += 1;
    let frame = PauseFrame {
        port: 0,
        prio: p.pause_priority(),
        quanta: p.pause_quanta(),
    };
    l2s.mqp.count_rcvd(target, frame.prio);
    l2s.pause_tx[ti].on_frame(now, &frame, rate);
    if l2s.pause_mode == PauseMode::Pfc || sim.net.ports[ti].mq.is_some() {
        crate::engine::datapath::l2::pfc::after_pause_frame(sim, target);
        return;
    }
    let until = l2s.pause_tx[ti].paused_until(0);
    let port = &mut sim.net.ports[ti];
    let old = port.paused_until;
    port.paused_until = until;
    if until < old {
        let h = l2s.hold_at[ti];
        let at = port.tx.busy_until().max(now);
        if !h.is_never() && at < h {
            l2s.hold_at[ti] = at;
            port.tx.wake(&mut sim.events, target, at);
        }
    }
}

// ------------------------------------------------------------------ rate limiters

fn on_cnm_host(sim: &mut Core, host: NodeId, p: Packet) {
    let now = sim.now;
    // A flow id, or an app id for a CNM about a UDP datagram.
    let fid = p.flow.idx();
    let sampled_data = p.cnm_sampled(Kind::Data) || p.cnm_sampled(Kind::Syn);
    let ok = sampled_data && fid < sim.hosts.flows.len() && sim.hosts.flows[fid].src() == host;
    let l2s = sim.l2.as_mut().expect("l2 state");
    let udp_ok = p.cnm_sampled(Kind::Udp) && l2s.cbr_src.get(fid) == Some(&host);
    l2s.cnm_received += 1;
    let idx = if ok {
        l2s.rl_of_flow[fid]
    } else if udp_ok {
        l2s.rl_of_app[fid]
    } else {
        u32::MAX
    };
    if idx == u32::MAX {
        l2s.cnm_ignored += 1;
        return;
    }
    let notify = l2s.notify;
    let rl = &mut l2s.rls[idx.idx()];
    if rl.fixed.is_some() {
        l2s.cnm_ignored += 1;
        return;
    }
    rl.cnms += 1;
    let cut = rl
        .rp
        .on_cnm(now, p.cnm_feedback().min(63) as u8, &mut l2s.rng);
    if cut && notify != Notify::Off && rl.flows > 1 {
        if let Some(k) = rl
            .fifo
            .iter()
            .position(|x| x.flow == p.flow && ok && x.kind != Kind::Udp)
        {
            rl.notified += 1;
            if notify == Notify::Ecn && rl.fifo[k].is_ect() {
                rl.fifo[k].ecn = Ecn::Ce;
            } else {
                rl.fifo.remove(k);
            }
        }
    }
    sync_rl(sim, idx);
}

/// Hand a packet from a host's transport to its limiter. Returns true if the limiter holds
/// it (it will be released to the NIC later), false if it goes to the NIC now.
pub(crate) fn host_send(sim: &mut Core, _host: NodeId, p: &Packet) -> bool {
    let now = sim.now;
    let l2s = sim.l2.as_mut().expect("l2 state");
    let table = match p.kind {
        Kind::Data | Kind::Syn => &l2s.rl_of_flow,
        Kind::Udp => &l2s.rl_of_app,
        _ => return false,
    };
    let idx = match table.get(p.flow.idx()) {
        Some(&i) if i != u32::MAX => i,
        _ => return false,
    };
    let rl = &mut l2s.rls[idx.idx()];
    if rl.fifo.is_empty() && rl.next_departure(now, p.size) <= now {
        rl.on_release(now, p.size, &mut l2s.rng);
        sync_rl(sim, idx);
        return false;
    }
    rl.fifo.push_back(*p);
    if rl.fifo.len() as u64 > rl.max_held {
        rl.max_held = rl.fifo.len() as u64;
    }
    sync_rl(sim, idx);
    true
}

/// Arm the limiter's release and RP-timer events if they are needed earlier than pending.
fn sync_rl(sim: &mut Core, idx: u32) {
    let now = sim.now;
    let rl = &mut l2(sim).rls[idx.idx()];
    let mut rel = None;
    if let Some(h) = rl.fifo.front() {
        let nd = rl.next_departure(now, h.size);
        if nd < rl.rel_at {
            rl.rel_at = nd;
            rel = Some(nd);
        }
    }
    let mut tim = None;
    if rl.fixed.is_none() {
        let d = rl.rp.next_deadline();
        if !d.is_never() && d < rl.timer_at {
            rl.timer_at = d;
            tim = Some(d);
        }
    }
    if let Some(t) = rel {
        sim.events.schedule(
            t,
            Event::L2 {
                idx,
                kind: L2Kind::RlRelease,
            },
        );
    }
    if let Some(t) = tim {
        sim.events.schedule(
            t,
            Event::L2 {
                idx,
                kind: L2Kind::RlTimer,
            },
        );
    }
}

fn on_release(sim: &mut Core, idx: u32) {
    let now = sim.now;
    {
        let rl = &mut l2(sim).rls[idx.idx()];
        if rl.rel_at != now {
            return;
        }
        rl.rel_at = SimTime::NEVER;
    }
    loop {
        let l2s = sim.l2.as_mut().expect("l2 state");
        let rl = &mut l2s.rls[idx.idx()];
        let size = match rl.fifo.front() {
            Some(h) => h.size,
            None => break,
        };
        if rl.next_departure(now, size) > now {
            break;
        }
        let p = rl.fifo.pop_front().expect("head");
        rl.on_release(now, size, &mut l2s.rng);
        let host = rl.host;
        let out = sim.net.routing.route(host, p.dst);
        if out != PortId::NONE {
            sim.enqueue(out, p);
        } else {
            sim.net.unroutable += 1;
        }
    }
    sync_rl(sim, idx);
}

fn on_rl_timer(sim: &mut Core, idx: u32) {
    let now = sim.now;
    {
        let l2s = l2(sim);
        let rl = &mut l2s.rls[idx.idx()];
        if rl.timer_at != now {
            return;
        }
        rl.timer_at = SimTime::NEVER;
        rl.rp.on_timer(now, &mut l2s.rng);
    }
    sync_rl(sim, idx);
}

/// True when timer `kind` of flow `fid` is a TCP flow's RTO, about to fire while the segment
/// at `snd_una` is still held in the flow's rate limiter (it never left the host). Called
/// only with L2 on, only for a due timer.
pub(crate) fn una_held_in_limiter(
    sim: &Core,
    fid: FlowId,
    kind: crate::model::transport::TimerKind,
) -> bool {
    let Some(f) = sim.hosts.flows[fid.idx()].tcp() else {
        return false;
    };
    if kind != crate::model::transport::tcp::RTO {
        return false;
    }
    let l = match sim.l2.as_ref() {
        Some(l) => l,
        None => return false,
    };
    let idx = match l.rl_of_flow.get(fid.idx()) {
        Some(&i) if i != u32::MAX => i,
        _ => return false,
    };
    let una = f.snd.snd_una;
    l.rls[idx.idx()]
        .fifo
        .iter()
        .any(|p| p.flow == fid && p.kind == Kind::Data && p.seq == una)
}

/// Count an RTO of flow `fid` (one that `Flow::on_rto` counted as a timeout) whose `snd_una`
/// segment was held in its limiter.
pub(crate) fn count_held_rto(sim: &mut Core, fid: FlowId) {
    let l2s = l2(sim);
    l2s.rto_held += 1;
    if let Some(&i) = l2s.rl_of_flow.get(fid.idx()) {
        if i != u32::MAX {
            l2s.rls[i.idx()].rto_held += 1;
        }
    }
}

// --------------------------------------------------------------------- events

pub(crate) fn on_event(sim: &mut Core, idx: u32, kind: L2Kind) {
    let now = sim.now;
    match kind {
        L2Kind::RlRelease => on_release(sim, idx),
        L2Kind::RlTimer => on_rl_timer(sim, idx),
        L2Kind::PauseRefresh => on_refresh(sim, NodeId(idx)),
        L2Kind::RateChange => {
            let (_, pid, r) = l2(sim).rate_changes[idx.idx()];
            sim.net.ports[pid.idx()].set_rate(r);
        }
        L2Kind::SampleRp => {
            let l2s = l2(sim);
            let mut min = f64::INFINITY;
            let keep = l2s.keep_rp_series;
            for (i, rl) in l2s.rls.iter().enumerate() {
                if rl.fixed.is_some() {
                    continue;
                }
                let r = rl.rate_bps();
                min = min.min(r);
                if keep {
                    l2s.rp_samples.push((now, i as u32, r));
                }
            }
            if min.is_finite() {
                l2s.minrate.push((now, min));
            }
            let next = now + l2s.rp_interval;
            sim.events.schedule(
                next,
                Event::L2 {
                    idx: 0,
                    kind: L2Kind::SampleRp,
                },
            );
        }
        L2Kind::SampleFlow => {
            let dt = l2(sim).flow_interval;
            for fid in 0..sim.hosts.flows.len() {
                let d = sim.hosts.flows[fid].delivered();
                let l2s = sim.l2.as_mut().expect("l2 state");
                let prev = l2s.flow_last[fid];
                l2s.flow_last[fid] = d;
                let mbps = (d - prev) as f64 * 8.0 / dt.as_secs_f64() / 1e6;
                l2s.flow_samples.push((now, FlowId(fid as u32), mbps));
            }
            sample_cbr_apps(sim, now, dt);
            sim.events.schedule(
                now + dt,
                Event::L2 {
                    idx: 0,
                    kind: L2Kind::SampleFlow,
                },
            );
        }
    }
}

/// Delivered rate of every UDP CBR app over the last `dt` (CBR traffic is not a TCP flow, so
/// `flow_rate` does not see it; Devkota 2010's baselines plot per-source CBR throughput).
fn sample_cbr_apps(sim: &mut Core, now: SimTime, dt: SimTime) {
    let l2s = sim.l2.as_mut().expect("l2 state");
    if l2s.app_last.len() != l2s.cbr_rcvd.len() {
        l2s.app_last.resize(l2s.cbr_rcvd.len(), 0);
    }
    for (i, &src) in l2s.cbr_src.iter().enumerate() {
        if src.is_some() {
            let got = l2s.cbr_rcvd[i];
            let prev = std::mem::replace(&mut l2s.app_last[i], got);
            let mbps = got.saturating_sub(prev) as f64 * 8.0 / dt.as_secs_f64() / 1e6;
            l2s.app_samples.push((now, i as u32, mbps));
        }
    }
}

/// A UDP datagram of `payload` bytes reached app `app` (counted for CBR apps).
pub(crate) fn on_udp_delivered(sim: &mut Core, app: AppId, payload: u32) {
    let l2s = sim.l2.as_mut().expect("l2 state");
    if let Some(c) = l2s.cbr_rcvd.get_mut(app.idx()) {
        *c += payload as u64;
    }
}

/// Schedule rate changes and samplers (from `Sim::start`).
pub(crate) fn start(sim: &mut Core) {
    let (changes, rp, flow) = match sim.l2.as_ref() {
        None => return,
        Some(l) => (
            l.rate_changes.iter().map(|x| x.0).collect::<Vec<_>>(),
            l.rls.iter().any(|r| r.fixed.is_none()) && l.rp_interval > SimTime::ZERO,
            l.flow_interval,
        ),
    };
    for (i, t) in changes.into_iter().enumerate() {
        sim.events.schedule(
            t,
            Event::L2 {
                idx: i as u32,
                kind: L2Kind::RateChange,
            },
        );
    }
    if rp {
        let t = l2(sim).rp_interval;
        sim.events.schedule(
            t,
            Event::L2 {
                idx: 0,
                kind: L2Kind::SampleRp,
            },
        );
    }
    if flow > SimTime::ZERO {
        sim.events.schedule(
            flow,
            Event::L2 {
                idx: 0,
                kind: L2Kind::SampleFlow,
            },
        );
    }
}

pub(crate) fn finish(_sim: &mut Core) {}

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

use crate::event::Event;
use crate::l2::{
    class_priority, CongestionMemory, CongestionPoint, CpConfig, PauseConfig, PauseFrame,
    PauseMode, PauseState, PauseWatermarks, ReactionPoint, RpConfig, SampleSet, Sampling,
    CNM_FRAME_BYTES, PAUSE_FRAME_BYTES,
};
use crate::net::NodeKind;
use crate::packet::{Ecn, Kind, Packet, SackBlocks};
use crate::rng::Rng;
use crate::scenario::{Dur, Rate, ScenarioError, Size, SizeOrUnlimited};
use crate::sim::Sim;
use crate::units::{RateBps, SimTime};
use serde::Deserialize;
use std::collections::VecDeque;

pub const EV_RL_RELEASE: u8 = 0;
pub const EV_RL_TIMER: u8 = 1;
pub const EV_PAUSE_REFRESH: u8 = 2;
pub const EV_RATE_CHANGE: u8 = 3;
pub const EV_SAMPLE_RP: u8 = 4;
pub const EV_SAMPLE_FLOW: u8 = 5;

// ------------------------------------------------------------------- scenario keys

/// `[topology] qcn = { ... }`: a QCN congestion point on every switch egress port (or on
/// `ports`). Defaults: `CpConfig::default()` (seed 000 App. A: Q_EQ 33 KB, W 2, v2.2).
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct QcnCpCfg {
    /// Default true; false removes the CPs (for sweeping QCN on/off).
    pub enabled: Option<bool>,
    pub q_eq: Option<Size>,
    pub w: Option<f64>,
    /// "v2.2" (default), "nov2007" (unverified hypothesis) or "every_packet".
    pub sampling: Option<String>,
    pub jitter: Option<f64>,
    /// M1 (seed 000 ch. IV-B-1). Default false.
    pub congestion_memory: Option<bool>,
    /// M1's QSC as a fraction of the port buffer. Default 0.9 (thesis: 90 %).
    pub memory_threshold: Option<f64>,
    /// M2 (seed 000 Table V). Default false.
    pub detailed_sampling: Option<bool>,
    pub nov2007_p_min: Option<f64>,
    pub nov2007_p_max: Option<f64>,
    /// Which frames the CP samples: "admitted" (default; frames the queue accepted, as the
    /// public software models LINUX-QCN and OMNET-QCN) or "arrivals" (every arriving frame,
    /// dropped ones included, as the Broadcom Soc_petra-B hardware CP; `SampleSet`).
    pub sample: Option<String>,
    /// Quantise |Fb| by dropping this many low-order bits (`Quantizer::MsbShift`, MODELS.md
    /// §1.2 variant Q2, as the QCN-patched Linux qdisc with 13) instead of the default linear
    /// `floor(63·|Fb|/FbMax)` (variant Q1). Default: absent (linear).
    pub quantizer_shift: Option<u32>,
    /// Only these ports ("A->B"); default every switch egress port.
    pub ports: Option<Vec<String>>,
}

/// `[topology] pause = { ... }`: IEEE 802.3x PAUSE at every switch (slides' watermarks).
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct PauseCfgFile {
    /// Default true; false disables PAUSE (for sweeping it on/off).
    pub enabled: Option<bool>,
    /// High watermark per input. Default 130 KB (slides).
    pub hi: Option<Size>,
    /// Low watermark per input. Default 110 KB (slides).
    pub lo: Option<Size>,
    /// Quanta per PAUSE frame. Default 0xFFFF (MODELS.md §2.2 implementation choice).
    pub quanta: Option<u32>,
    /// Refresh at this fraction of the pause time. Default 0.5 (MODELS.md §2.2).
    pub refresh_fraction: Option<f64>,
    /// Only these switches; default all.
    pub switches: Option<Vec<String>>,
    /// "pause" (default: IEEE 802.3x, one class per link, the slides' set-up) or "pfc"
    /// (IEEE 802.1Qbb: watermarks per input x priority, priority = class mod 8; `pfcsim.rs`).
    pub mode: Option<String>,
}

/// `[[topology.rate_changes]] port = "sw->n3", at = "250ms", rate = "500Mbps"`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RateChangeCfg {
    pub port: String,
    pub at: Dur,
    pub rate: Rate,
}

/// `[qcn] rp = { ... }`: reaction points in the hosts.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct QcnCfg {
    pub rp: Option<RpCfgFile>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RpCfgFile {
    /// "flow" (default; seed 000: one RL per server, one flow each), "destination", "shared".
    pub scope: Option<String>,
    /// Ideal mode: every flow hard-limited to its destination link rate / number of flows to
    /// that destination (seed 000 Fig. 20). No QCN reaction.
    pub ideal: Option<bool>,
    /// Fixed-rate limiter instead of QCN (like `ideal`, with an explicit rate).
    pub fixed_rate: Option<Rate>,
    pub adaptive_rai: Option<bool>,
    pub gd: Option<f64>,
    pub min_rate: Option<Rate>,
    pub bc_limit: Option<Size>,
    pub timer_period: Option<Dur>,
    pub r_ai: Option<Rate>,
    pub r_hai: Option<Rate>,
    pub jitter: Option<f64>,
    pub release_at_line_rate: Option<bool>,
    /// Token-bucket depth. Default 0 (pure pacing).
    pub bucket: Option<SizeOrUnlimited>,
    /// Per-flow notification by a shared limiter cut by a CNM (slides part 2): "off"
    /// (default), "drop" (drop the flow's oldest held segment) or "ecn" (CE-mark it if ECT,
    /// else drop it).
    pub notify: Option<String>,
}

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
    pub host: u32,
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
fn nic_rate(sim: &Sim, src: u32, dst: u32) -> RateBps {
    match sim.nodes[src as usize].route[dst as usize] {
        u32::MAX => RateBps(1),
        nic => sim.ports[nic as usize].rate,
    }
}

impl Limiter {
    /// A new, empty limiter of `host` (pacing by `rp`, or at the `fixed` rate).
    fn new(name: String, host: u32, rp: ReactionPoint, fixed: Option<RateBps>) -> Limiter {
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
    refresh_at: SimTime,
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
    pub inq: Vec<VecDeque<u32>>,
    /// Per port: control frames at the head of the queue.
    pub ctrl_front: Vec<u32>,
    /// Per port: transmitter-side pause timer, and the time of the pending "held" event.
    pub pause_tx: Vec<PauseState>,
    pub(crate) hold_at: Vec<SimTime>,
    pub pause_sent: Vec<u64>,
    pub pause_rcvd: Vec<u64>,
    pub cnm_port: Vec<u64>,
    pub rate_changes: Vec<(SimTime, u32, RateBps)>,
    pub rp_interval: SimTime,
    pub keep_rp_series: bool,
    pub rp_samples: Vec<(SimTime, u32, f64)>,
    pub minrate: Vec<(SimTime, f64)>,
    pub flow_interval: SimTime,
    pub flow_last: Vec<u64>,
    pub flow_samples: Vec<(SimTime, u32, f64)>,
    /// UDP CBR apps sampled with the flows: bytes received at the last sample, and
    /// (time, app, Mb/s received in the interval) (table `app_rate`).
    pub app_last: Vec<u64>,
    pub app_samples: Vec<(SimTime, u32, f64)>,
    pub cnm_sent: u64,
    pub cnm_received: u64,
    pub cnm_ignored: u64,
    /// 802.3x or PFC (`[topology] pause.mode`).
    pub pause_mode: PauseMode,
    /// PAUSE/PFC on multi-queue ports and per-priority counters (`pfcsim.rs`).
    pub mqp: crate::pfcsim::MqPause,
    /// Total of `Limiter::rto_held`.
    pub rto_held: u64,
}

impl L2 {
    pub fn new(sim: &Sim) -> L2 {
        let np = sim.ports.len();
        let mut input_idx = vec![0u32; np];
        for n in &sim.nodes {
            for (i, &p) in n.ports.iter().enumerate() {
                input_idx[p as usize] = i as u32;
            }
        }
        L2 {
            rng: Rng::new(sim.seed, 0x4C32),
            cp: vec![None; np],
            rls: Vec::new(),
            rl_of_flow: vec![u32::MAX; sim.flows.len()],
            rl_of_app: vec![u32::MAX; sim.apps.len()],
            notify: Notify::Off,
            pause_sw: vec![None; sim.nodes.len()],
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
            flow_last: vec![0; sim.flows.len()],
            flow_samples: Vec::new(),
            app_last: Vec::new(),
            app_samples: Vec::new(),
            cnm_sent: 0,
            cnm_received: 0,
            cnm_ignored: 0,
            pause_mode: PauseMode::Pause,
            mqp: crate::pfcsim::MqPause::new(np),
            rto_held: 0,
        }
    }

    /// Mean over the periodic samples of the minimum allocated rate across QCN RPs (Mb/s);
    /// NaN without QCN limiters.
    pub fn avg_minrate_mbps(&self) -> f64 {
        if self.minrate.is_empty() {
            return f64::NAN;
        }
        self.minrate.iter().map(|x| x.1).sum::<f64>() / self.minrate.len() as f64 / 1e6
    }
}

fn l2(sim: &mut Sim) -> &mut L2 {
    sim.l2.as_mut().expect("l2 state")
}

fn is_control(k: Kind) -> bool {
    matches!(k, Kind::Cnm | Kind::Pause)
}

// ----------------------------------------------------------------------- frames

/// Send a control frame on port `pid`: at once if the port is idle, else ahead of queued
/// data (after earlier control frames); never paused, never dropped.
fn send_control(sim: &mut Sim, pid: u32, mut p: Packet) {
    let now = sim.now;
    let l2s = sim.l2.as_mut().expect("l2 state");
    let port = &mut sim.ports[pid as usize];
    if port.queue.is_empty() && !port.tx_pending && now >= port.busy_until {
        let arrive = port.start_tx(now, p);
        crate::sim::arm_arrival(&mut sim.events, &sim.nodes, &sim.ecmp, port, pid, arrive);
        return;
    }
    p.enq_time = now;
    if port.mq.is_none() {
        port.queued_bytes += p.size as u64;
    }
    let k = l2s.ctrl_front[pid as usize] as usize;
    port.queue.insert(k.min(port.queue.len()), p);
    l2s.ctrl_front[pid as usize] += 1;
    let at = port.busy_until.max(now);
    if !port.tx_pending {
        port.tx_pending = true;
        sim.events.schedule(at, Event::PortTxDone(pid));
    } else {
        let h = l2s.hold_at[pid as usize];
        if !h.is_never() && at < h {
            // The port is held by a pause: wake it for the control frame.
            l2s.hold_at[pid as usize] = at;
            sim.events.schedule(at, Event::PortTxDone(pid));
        }
    }
}

pub(crate) fn send_pause(sim: &mut Sim, pid: u32, quanta: u16, prio: Option<u8>) {
    let port = &sim.ports[pid as usize];
    let p = Packet {
        flow: u32::MAX,
        src: port.node,
        dst: port.peer_node,
        seq: quanta as u64,
        ack: 0,
        size: PAUSE_FRAME_BYTES,
        payload: 0,
        kind: Kind::Pause,
        // PFC frames carry their priority in `class` with flag bit PFC_FRAME (`pfcsim.rs`).
        flags: if prio.is_some() {
            crate::pfcsim::PFC_FRAME
        } else {
            0
        },
        ecn: Ecn::NotEct,
        class: prio.unwrap_or(0),
        enq_time: sim.now,
        sent_time: sim.now,
        sack: SackBlocks::EMPTY,
    };
    let l = l2(sim);
    l.pause_sent[pid as usize] += 1;
    l.mqp.count_sent(pid, prio);
    send_control(sim, pid, p);
}

/// Called at the start of `on_port_tx_done`. Returns true when the event is consumed here:
/// a stale or duplicate wake-up, or a paused port whose head is a data frame (then held
/// until the pause ends). Otherwise the head frame is about to leave: account its departure.
pub(crate) fn tx_gate(sim: &mut Sim, pid: u32) -> bool {
    let now = sim.now;
    let l2s = sim.l2.as_mut().expect("l2 state");
    let i = pid as usize;
    let port = &mut sim.ports[i];
    let h = l2s.hold_at[i];
    if !h.is_never() {
        if now != h {
            return true; // superseded hold / wake-up
        }
        l2s.hold_at[i] = SimTime::NEVER;
    } else if now < port.busy_until {
        return true; // duplicate of a live wake-up
    }
    if port.mq.is_some() {
        crate::pfcsim::mq_tx(sim, pid);
        return true;
    }
    let head = match port.queue.front() {
        None => return false,
        Some(h) => *h,
    };
    if is_control(head.kind) {
        l2s.ctrl_front[i] = l2s.ctrl_front[i].saturating_sub(1);
        return false;
    }
    let until = l2s.pause_tx[i].paused_until(class_priority(head.class));
    if now < until {
        let at = until;
        port.tx_pending = true;
        l2s.hold_at[i] = at;
        sim.events.schedule(at, Event::PortTxDone(pid));
        return true;
    }
    if let Some(inp) = l2s.inq[i].pop_front() {
        let node = port.node as usize;
        let ii = l2s.input_idx[inp as usize] as usize;
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

/// A frame fully arrived at `node` (with L2 on). Returns true when handled here.
/// `out` is where a switch forwards the frame (`sim::route_hint`, ECMP resolved), computed
/// when the frame became its wire's head.
pub(crate) fn receive(sim: &mut Sim, node: u32, p: Packet, out: u32) -> bool {
    let is_switch = sim.nodes[node as usize].kind == NodeKind::Switch;
    match p.kind {
        Kind::Pause => {
            on_pause_frame(sim, p);
            true
        }
        Kind::Cnm => {
            if is_switch {
                if out != u32::MAX {
                    send_control(sim, out, p);
                } else {
                    sim.unroutable += 1;
                }
            } else {
                on_cnm_host(sim, node, p);
            }
            true
        }
        _ if is_switch => {
            switch_forward(sim, node, p, out);
            true
        }
        _ => false,
    }
}

fn switch_forward(sim: &mut Sim, node: u32, p: Packet, out: u32) {
    if out == u32::MAX {
        sim.unroutable += 1;
        return;
    }
    let oi = out as usize;
    let (pause_on, cp_on) = {
        let l2s = sim.l2.as_ref().expect("l2 state");
        (l2s.pause_sw[node as usize].is_some(), l2s.cp[oi].is_some())
    };
    if !pause_on && !cp_on {
        sim.enqueue(out, p);
        return;
    }
    if pause_on && sim.ports[oi].mq.is_some() {
        // Multi-queue egress: the input is accounted inside `mq_enqueue` (`pfcsim.rs`).
        crate::pfcsim::switch_forward_mq(sim, node, out, p);
        return;
    }
    let len0 = sim.ports[oi].queue.len();
    let drops0 = sim.ports[oi].stats.drops;
    sim.enqueue(out, p);
    let now = sim.now;
    let accepted = sim.ports[oi].stats.drops == drops0;
    let queued = sim.ports[oi].queue.len() > len0;
    let qlen = sim.ports[oi].queued_bytes;
    let in_link = sim.last_in_port;
    if pause_on && queued && in_link != u32::MAX {
        let inp = sim.ports[in_link as usize].peer_port;
        let l2s = l2(sim);
        l2s.inq[oi].push_back(inp);
        let ii = l2s.input_idx[inp as usize] as usize;
        let sw = l2s.pause_sw[node as usize].as_mut().expect("pause");
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
            let cnm = Packet {
                flow: p.flow,
                src: node,
                dst: p.src,
                seq: c.q as u64,
                ack: p.dst as u64,
                size: CNM_FRAME_BYTES,
                payload: 0,
                kind: Kind::Cnm,
                flags: p.kind as u8,
                ecn: Ecn::NotEct,
                class: p.class,
                enq_time: now,
                sent_time: now,
                sack: SackBlocks::EMPTY,
            };
            let back = sim.nodes[node as usize].route[p.src as usize];
            if back != u32::MAX {
                send_control(sim, back, cnm);
            }
        }
    }
}

pub(crate) fn arm_refresh(sim: &mut Sim, node: u32) {
    let l2s = l2(sim);
    let sw = match l2s.pause_sw[node as usize].as_mut() {
        Some(s) => s,
        None => return,
    };
    let t = sw.wm.next_refresh();
    if !t.is_never() && t < sw.refresh_at {
        sw.refresh_at = t;
        sim.events.schedule(
            t,
            Event::L2 {
                idx: node,
                kind: EV_PAUSE_REFRESH,
            },
        );
    }
}

fn on_refresh(sim: &mut Sim, node: u32) {
    let now = sim.now;
    {
        let sw = match l2(sim).pause_sw[node as usize].as_mut() {
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
            let sw = l2(sim).pause_sw[node as usize].as_mut().expect("pause");
            sw.wm.poll_refresh(now)
        };
        match f {
            Some(f) => {
                let pid = sim.nodes[node as usize].ports[f.port];
                send_pause(sim, pid, f.quanta, f.prio);
            }
            None => break,
        }
    }
    arm_refresh(sim, node);
}

fn on_pause_frame(sim: &mut Sim, p: Packet) {
    let now = sim.now;
    let link = sim.last_in_port;
    if link == u32::MAX {
        return;
    }
    let target = sim.ports[link as usize].peer_port;
    let ti = target as usize;
    let rate = sim.ports[ti].rate;
    let l2s = sim.l2.as_mut().expect("l2 state");
    l2s.pause_rcvd[ti] += 1;
    let frame = PauseFrame {
        port: 0,
        prio: crate::pfcsim::frame_priority(&p),
        quanta: p.seq.min(u16::MAX as u64) as u16,
    };
    l2s.mqp.count_rcvd(target, frame.prio);
    l2s.pause_tx[ti].on_frame(now, &frame, rate);
    if l2s.pause_mode == PauseMode::Pfc || sim.ports[ti].mq.is_some() {
        crate::pfcsim::after_pause_frame(sim, target);
        return;
    }
    let until = l2s.pause_tx[ti].paused_until(0);
    let port = &mut sim.ports[ti];
    let old = port.paused_until;
    port.paused_until = until;
    if until < old {
        let h = l2s.hold_at[ti];
        let at = port.busy_until.max(now);
        if !h.is_never() && at < h {
            l2s.hold_at[ti] = at;
            sim.events.schedule(at, Event::PortTxDone(target));
        }
    }
}

// ------------------------------------------------------------------ rate limiters

fn on_cnm_host(sim: &mut Sim, host: u32, p: Packet) {
    let now = sim.now;
    let fid = p.flow as usize;
    let sampled_data = p.flags == Kind::Data as u8 || p.flags == Kind::Syn as u8;
    let ok = sampled_data && fid < sim.flows.len() && sim.flows[fid].src == host;
    let udp_ok = p.flags == Kind::Udp as u8
        && matches!(sim.apps.get(fid), Some(crate::app::App::Cbr(c)) if c.src == host);
    let l2s = sim.l2.as_mut().expect("l2 state");
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
    let rl = &mut l2s.rls[idx as usize];
    if rl.fixed.is_some() {
        l2s.cnm_ignored += 1;
        return;
    }
    rl.cnms += 1;
    let cut = rl.rp.on_cnm(now, p.seq.min(63) as u8, &mut l2s.rng);
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
pub(crate) fn host_send(sim: &mut Sim, _host: u32, p: &Packet) -> bool {
    let now = sim.now;
    let l2s = sim.l2.as_mut().expect("l2 state");
    let table = match p.kind {
        Kind::Data | Kind::Syn => &l2s.rl_of_flow,
        Kind::Udp => &l2s.rl_of_app,
        _ => return false,
    };
    let idx = match table.get(p.flow as usize) {
        Some(&i) if i != u32::MAX => i,
        _ => return false,
    };
    let rl = &mut l2s.rls[idx as usize];
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
fn sync_rl(sim: &mut Sim, idx: u32) {
    let now = sim.now;
    let rl = &mut l2(sim).rls[idx as usize];
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
                kind: EV_RL_RELEASE,
            },
        );
    }
    if let Some(t) = tim {
        sim.events.schedule(
            t,
            Event::L2 {
                idx,
                kind: EV_RL_TIMER,
            },
        );
    }
}

fn on_release(sim: &mut Sim, idx: u32) {
    let now = sim.now;
    {
        let rl = &mut l2(sim).rls[idx as usize];
        if rl.rel_at != now {
            return;
        }
        rl.rel_at = SimTime::NEVER;
    }
    loop {
        let l2s = sim.l2.as_mut().expect("l2 state");
        let rl = &mut l2s.rls[idx as usize];
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
        let out = sim.nodes[host as usize].route[p.dst as usize];
        if out != u32::MAX {
            sim.enqueue(out, p);
        } else {
            sim.unroutable += 1;
        }
    }
    sync_rl(sim, idx);
}

fn on_rl_timer(sim: &mut Sim, idx: u32) {
    let now = sim.now;
    {
        let l2s = l2(sim);
        let rl = &mut l2s.rls[idx as usize];
        if rl.timer_at != now {
            return;
        }
        rl.timer_at = SimTime::NEVER;
        rl.rp.on_timer(now, &mut l2s.rng);
    }
    sync_rl(sim, idx);
}

/// True when the flow's RTO is about to fire while the segment at `snd_una` is still held in
/// the flow's rate limiter (it never left the host). Called only with L2 on, only at an RTO.
pub(crate) fn una_held_in_limiter(sim: &Sim, fid: u32) -> bool {
    let l = match sim.l2.as_ref() {
        Some(l) => l,
        None => return false,
    };
    let idx = match l.rl_of_flow.get(fid as usize) {
        Some(&i) if i != u32::MAX => i,
        _ => return false,
    };
    let una = sim.flows[fid as usize].snd.snd_una;
    l.rls[idx as usize]
        .fifo
        .iter()
        .any(|p| p.flow == fid && p.kind == Kind::Data && p.seq == una)
}

/// Count an RTO of flow `fid` (one that `Flow::on_rto` counted as a timeout) whose `snd_una`
/// segment was held in its limiter.
pub(crate) fn count_held_rto(sim: &mut Sim, fid: u32) {
    let l2s = l2(sim);
    l2s.rto_held += 1;
    if let Some(&i) = l2s.rl_of_flow.get(fid as usize) {
        if i != u32::MAX {
            l2s.rls[i as usize].rto_held += 1;
        }
    }
}

// --------------------------------------------------------------------- events

pub(crate) fn on_event(sim: &mut Sim, idx: u32, kind: u8) {
    let now = sim.now;
    match kind {
        EV_RL_RELEASE => on_release(sim, idx),
        EV_RL_TIMER => on_rl_timer(sim, idx),
        EV_PAUSE_REFRESH => on_refresh(sim, idx),
        EV_RATE_CHANGE => {
            let (_, pid, r) = l2(sim).rate_changes[idx as usize];
            sim.ports[pid as usize].set_rate(r);
        }
        EV_SAMPLE_RP => {
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
                    kind: EV_SAMPLE_RP,
                },
            );
        }
        EV_SAMPLE_FLOW => {
            let dt = l2(sim).flow_interval;
            for fid in 0..sim.flows.len() {
                let d = sim.flows[fid].delivered();
                let l2s = sim.l2.as_mut().expect("l2 state");
                let prev = l2s.flow_last[fid];
                l2s.flow_last[fid] = d;
                let mbps = (d - prev) as f64 * 8.0 / dt.as_secs_f64() / 1e6;
                l2s.flow_samples.push((now, fid as u32, mbps));
            }
            sample_cbr_apps(sim, now, dt);
            sim.events.schedule(
                now + dt,
                Event::L2 {
                    idx: 0,
                    kind: EV_SAMPLE_FLOW,
                },
            );
        }
        _ => {}
    }
}

/// Delivered rate of every UDP CBR app over the last `dt` (CBR traffic is not a TCP flow, so
/// `flow_rate` does not see it; seed 000's baselines plot per-source CBR throughput).
fn sample_cbr_apps(sim: &mut Sim, now: SimTime, dt: SimTime) {
    let l2s = sim.l2.as_mut().expect("l2 state");
    if l2s.app_last.len() != sim.apps.len() {
        l2s.app_last.resize(sim.apps.len(), 0);
    }
    for (i, a) in sim.apps.iter().enumerate() {
        if let crate::app::App::Cbr(c) = a {
            let prev = std::mem::replace(&mut l2s.app_last[i], c.received_bytes);
            let mbps = c.received_bytes.saturating_sub(prev) as f64 * 8.0 / dt.as_secs_f64() / 1e6;
            l2s.app_samples.push((now, i as u32, mbps));
        }
    }
}

/// Schedule rate changes and samplers (from `Sim::start`).
pub(crate) fn start(sim: &mut Sim) {
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
                kind: EV_RATE_CHANGE,
            },
        );
    }
    if rp {
        let t = l2(sim).rp_interval;
        sim.events.schedule(
            t,
            Event::L2 {
                idx: 0,
                kind: EV_SAMPLE_RP,
            },
        );
    }
    if flow > SimTime::ZERO {
        sim.events.schedule(
            flow,
            Event::L2 {
                idx: 0,
                kind: EV_SAMPLE_FLOW,
            },
        );
    }
}

pub(crate) fn finish(_sim: &mut Sim) {}

// ---------------------------------------------------------------------- build

/// What `build` needs from the scenario.
pub struct BuildArgs<'a> {
    pub cp: Option<&'a QcnCpCfg>,
    pub pause: Option<&'a PauseCfgFile>,
    pub rate_changes: &'a [RateChangeCfg],
    pub qcn: Option<&'a QcnCfg>,
    pub rp_interval: Option<SimTime>,
    pub keep_rp_series: bool,
    pub flow_rate_interval: Option<SimTime>,
}

type ErrFn<'a> = &'a dyn Fn(&str, &str, String) -> ScenarioError;

fn cp_config(c: &QcnCpCfg, err: ErrFn) -> Result<CpConfig, ScenarioError> {
    let mut cfg = CpConfig::default();
    if let Some(q) = c.q_eq {
        cfg.q_eq_bytes = q.0 .0;
    }
    if let Some(w) = c.w {
        cfg.w = w;
    }
    if let Some(j) = c.jitter {
        cfg.jitter = j;
    }
    match c.sampling.as_deref() {
        None | Some("v2.2") => cfg.sampling = Sampling::V22,
        Some("every_packet") => cfg.sampling = Sampling::EveryPacket,
        Some("nov2007") => {
            let (mut lo, mut hi) = (0.01, 0.10);
            if let Some(p) = c.nov2007_p_min {
                lo = p;
            }
            if let Some(p) = c.nov2007_p_max {
                hi = p;
            }
            cfg.sampling = Sampling::Nov2007 {
                p_min: lo,
                p_max: hi,
            };
        }
        Some(o) => {
            return Err(err(
                "topology",
                "qcn",
                format!("sampling {o:?}: expected \"v2.2\", \"nov2007\" or \"every_packet\""),
            ))
        }
    }
    cfg.detailed = c.detailed_sampling.unwrap_or(false);
    if let Some(shift) = c.quantizer_shift {
        cfg.quantizer = crate::l2::Quantizer::MsbShift { shift };
    }
    cfg.sample = match c.sample.as_deref() {
        None | Some("admitted") => SampleSet::Admitted,
        Some("arrivals") => SampleSet::Arrivals,
        Some(o) => {
            return Err(err(
                "topology",
                "qcn",
                format!("sample {o:?}: expected \"admitted\" or \"arrivals\""),
            ))
        }
    };
    Ok(cfg)
}

fn rp_config(c: &RpCfgFile) -> RpConfig {
    let mut r = RpConfig::default();
    if let Some(x) = c.gd {
        r.gd = x;
    }
    if let Some(x) = c.min_rate {
        r.min_rate = x.0;
    }
    if let Some(x) = c.bc_limit {
        r.bc_limit_bytes = x.0 .0;
    }
    if let Some(x) = c.timer_period {
        r.timer_period = x.0;
    }
    if let Some(x) = c.r_ai {
        r.r_ai = x.0;
    }
    if let Some(x) = c.r_hai {
        r.r_hai = x.0;
    }
    if let Some(x) = c.jitter {
        r.jitter = x;
    }
    if let Some(x) = c.release_at_line_rate {
        r.release_at_line_rate = x;
    }
    if let Some(x) = c.bucket {
        r.bucket_bytes = x.0;
    }
    r.adaptive_rai = c.adaptive_rai.unwrap_or(false);
    r
}

/// Install the L2 state described by the scenario (no-op when nothing is configured).
pub fn build(sim: &mut Sim, a: &BuildArgs, err: ErrFn) -> Result<(), ScenarioError> {
    let rp_cfg = a.qcn.and_then(|q| q.rp.as_ref());
    let cp_cfg = a.cp.filter(|c| c.enabled.unwrap_or(true));
    let pause_cfg = a.pause.filter(|c| c.enabled.unwrap_or(true));
    let a = &BuildArgs {
        cp: cp_cfg,
        pause: pause_cfg,
        rate_changes: a.rate_changes,
        qcn: a.qcn,
        rp_interval: a.rp_interval,
        keep_rp_series: a.keep_rp_series,
        flow_rate_interval: a.flow_rate_interval,
    };
    if a.cp.is_none()
        && a.pause.is_none()
        && a.rate_changes.is_empty()
        && rp_cfg.is_none()
        && a.flow_rate_interval.is_none()
    {
        return Ok(());
    }
    let mut l = L2::new(sim);
    let port_named = |sim: &Sim, name: &str, table: &str, key: &str| {
        sim.port_by_name(name).ok_or_else(|| {
            err(
                table,
                key,
                format!("unknown port {name:?}: ports are named \"A->B\""),
            )
        })
    };
    // Congestion points.
    if let Some(c) = a.cp {
        let base = cp_config(c, err)?;
        let ports: Vec<u32> = match &c.ports {
            Some(list) => list
                .iter()
                .map(|n| port_named(sim, n, "topology", "qcn"))
                .collect::<Result<_, _>>()?,
            None => (0..sim.ports.len() as u32)
                .filter(|&p| {
                    sim.nodes[sim.ports[p as usize].node as usize].kind == NodeKind::Switch
                })
                .collect(),
        };
        for pid in ports {
            let port = &sim.ports[pid as usize];
            let mut cfg = base;
            if c.congestion_memory.unwrap_or(false) {
                if port.limit_bytes == u64::MAX {
                    return Err(err(
                        "topology",
                        "qcn",
                        format!(
                            "congestion_memory needs a finite buffer on port {:?}",
                            port.name
                        ),
                    ));
                }
                let mut m = CongestionMemory::new(port.limit_bytes);
                if let Some(f) = c.memory_threshold {
                    m.threshold_fraction = f;
                }
                cfg.memory = Some(m);
            }
            let cp = CongestionPoint::new(cfg).map_err(|e| err("topology", "qcn", e))?;
            l.cp[pid as usize] = Some(cp);
        }
    }
    // PAUSE.
    if let Some(pc) = a.pause {
        let mut cfg = PauseConfig::default();
        if let Some(x) = pc.hi {
            cfg.hi_bytes = x.0 .0;
        }
        if let Some(x) = pc.lo {
            cfg.lo_bytes = x.0 .0;
        }
        if let Some(q) = pc.quanta {
            if q == 0 || q > 0xFFFF {
                return Err(err(
                    "topology",
                    "pause",
                    format!("quanta {q}: expected 1..65535"),
                ));
            }
            cfg.quanta = q as u16;
        }
        if let Some(f) = pc.refresh_fraction {
            cfg.refresh_fraction = f;
        }
        cfg.mode = match pc.mode.as_deref() {
            None | Some("pause") => PauseMode::Pause,
            Some("pfc") => PauseMode::Pfc,
            Some(o) => {
                return Err(err(
                    "topology",
                    "pause",
                    format!("mode {o:?}: expected \"pause\" (IEEE 802.3x) or \"pfc\" (802.1Qbb)"),
                ))
            }
        };
        l.pause_mode = cfg.mode;
        l.pause_tx = vec![PauseState::new(cfg.mode); sim.ports.len()];
        cfg.validate().map_err(|e| err("topology", "pause", e))?;
        let switches: Vec<u32> = match &pc.switches {
            Some(list) => list
                .iter()
                .map(|n| match sim.node_by_name(n) {
                    Some(id) if sim.nodes[id as usize].kind == NodeKind::Switch => Ok(id),
                    _ => Err(err("topology", "pause", format!("{n:?} is not a switch"))),
                })
                .collect::<Result<_, _>>()?,
            None => (0..sim.nodes.len() as u32)
                .filter(|&n| sim.nodes[n as usize].kind == NodeKind::Switch)
                .collect(),
        };
        for n in switches {
            let rates: Vec<RateBps> = sim.nodes[n as usize]
                .ports
                .iter()
                .map(|&p| sim.ports[p as usize].rate)
                .collect();
            let wm = PauseWatermarks::new(cfg, &rates).map_err(|e| err("topology", "pause", e))?;
            l.pause_sw[n as usize] = Some(SwitchPause {
                wm,
                refresh_at: SimTime::NEVER,
            });
            l.mqp.alloc_switch(sim, n);
        }
    }
    if a.cp.is_some() || a.pause.is_some() {
        for p in &sim.ports {
            if p.aqm_at == crate::aqm::AqmAt::Dequeue {
                return Err(err(
                    "topology",
                    if a.cp.is_some() { "qcn" } else { "pause" },
                    format!(
                        "QCN and PAUSE cannot be combined with a dequeue-time AQM (port {:?})",
                        p.name
                    ),
                ));
            }
        }
    }
    // Rate changes.
    for rc in a.rate_changes {
        let pid = port_named(sim, &rc.port, "topology.rate_changes", "port")?;
        if rc.rate.0 .0 == 0 {
            return Err(err(
                "topology.rate_changes",
                "rate",
                "a service rate must be positive".into(),
            ));
        }
        l.rate_changes.push((rc.at.0, pid, rc.rate.0));
    }
    // Reaction points.
    if let Some(rc) = rp_cfg {
        let cfg = rp_config(rc);
        l.notify = match rc.notify.as_deref() {
            None | Some("off") => Notify::Off,
            Some("drop") => Notify::Drop,
            Some("ecn") => Notify::Ecn,
            Some(o) => {
                return Err(err(
                    "qcn",
                    "rp",
                    format!("notify {o:?}: expected \"off\", \"drop\" or \"ecn\""),
                ))
            }
        };
        let scope = rc.scope.as_deref().unwrap_or("flow");
        if !matches!(scope, "flow" | "destination" | "shared") {
            return Err(err(
                "qcn",
                "rp",
                format!("scope {scope:?}: expected \"flow\", \"destination\" or \"shared\""),
            ));
        }
        let ideal = rc.ideal.unwrap_or(false);
        let mut keys: Vec<(u32, u32, u32)> = Vec::new(); // (src, dst-or-flow key, limiter)
        for fid in 0..sim.flows.len() {
            let f = &sim.flows[fid];
            let (src, dst) = (f.src, f.dst);
            let key = match scope {
                "flow" => fid as u32,
                "destination" => dst,
                _ => u32::MAX,
            };
            let found = keys.iter().find(|k| k.0 == src && k.1 == key).map(|k| k.2);
            let idx = match found {
                Some(i) => i,
                None => {
                    let line = nic_rate(sim, src, dst);
                    let rp = ReactionPoint::new(cfg, line).map_err(|e| err("qcn", "rp", e))?;
                    let fixed = if ideal {
                        // Destination link rate / number of flows to that destination.
                        let n = sim.flows.iter().filter(|g| g.dst == dst).count() as u64;
                        let down = sim.nodes[dst as usize]
                            .ports
                            .first()
                            .map(|&p| sim.ports[sim.ports[p as usize].peer_port as usize].rate)
                            .unwrap_or(line);
                        Some(RateBps((down.0 / n.max(1)).max(1)))
                    } else {
                        rc.fixed_rate.map(|r| r.0)
                    };
                    if let Some(r) = fixed {
                        if r.0 == 0 {
                            return Err(err("qcn", "rp", "fixed_rate must be positive".into()));
                        }
                    }
                    let name = match scope {
                        "flow" => format!("flow{fid}"),
                        "destination" => format!(
                            "{}->{}",
                            sim.nodes[src as usize].name, sim.nodes[dst as usize].name
                        ),
                        _ => sim.nodes[src as usize].name.clone(),
                    };
                    l.rls.push(Limiter::new(name, src, rp, fixed));
                    let i = (l.rls.len() - 1) as u32;
                    keys.push((src, key, i));
                    i
                }
            };
            l.rls[idx as usize].flows += 1;
            l.rl_of_flow[fid] = idx;
        }
        // UDP (CBR) sources get QCN limiters too (not in ideal / fixed-rate mode).
        if !ideal && rc.fixed_rate.is_none() {
            for (ai, app) in sim.apps.iter().enumerate() {
                let (src, dst) = match app {
                    crate::app::App::Cbr(c) => (c.src, c.dst),
                    _ => continue,
                };
                let key = match scope {
                    "flow" => 0x8000_0000 | ai as u32,
                    "destination" => dst,
                    _ => u32::MAX,
                };
                let found = keys.iter().find(|k| k.0 == src && k.1 == key).map(|k| k.2);
                let idx = match found {
                    Some(i) => i,
                    None => {
                        let rp = ReactionPoint::new(cfg, nic_rate(sim, src, dst))
                            .map_err(|e| err("qcn", "rp", e))?;
                        l.rls.push(Limiter::new(format!("app{ai}"), src, rp, None));
                        let i = (l.rls.len() - 1) as u32;
                        keys.push((src, key, i));
                        i
                    }
                };
                l.rls[idx as usize].flows += 1;
                l.rl_of_app[ai] = idx;
            }
        }
    }
    if let Some(t) = a.rp_interval {
        l.rp_interval = t;
    }
    l.keep_rp_series = a.keep_rp_series;
    if let Some(t) = a.flow_rate_interval {
        l.flow_interval = t;
    }
    sim.l2 = Some(Box::new(l));
    Ok(())
}

// -------------------------------------------------------------------- results

/// Summary columns and tables of the L2 features (only when they are configured).
pub fn tables(sim: &Sim) -> Vec<crate::results::Table> {
    use crate::results::Table;
    let l = match sim.l2.as_ref() {
        Some(l) => l,
        None => return Vec::new(),
    };
    let end = sim.end;
    let mut out = Vec::new();
    let mut t = Table::new("l2_ports");
    let idx: Vec<usize> = (0..sim.ports.len())
        .filter(|&i| {
            l.cp[i].is_some() || l.pause_sent[i] > 0 || l.pause_rcvd[i] > 0 || l.cnm_port[i] > 0
        })
        .collect();
    t.str(
        "port",
        idx.iter().map(|&i| sim.ports[i].name.clone()).collect(),
    )
    .i64(
        "cnms_sent",
        idx.iter().map(|&i| l.cnm_port[i] as i64).collect(),
    )
    .i64(
        "cp_samples",
        idx.iter()
            .map(|&i| {
                l.cp[i]
                    .as_ref()
                    .map(|c| c.stats.samples as i64)
                    .unwrap_or(0)
            })
            .collect(),
    )
    .i64(
        "cp_samples_dropped",
        idx.iter()
            .map(|&i| {
                l.cp[i]
                    .as_ref()
                    .map(|c| c.stats.dropped_samples as i64)
                    .unwrap_or(0)
            })
            .collect(),
    )
    .i64(
        "pause_sent",
        idx.iter().map(|&i| l.pause_sent[i] as i64).collect(),
    )
    .i64(
        "pause_received",
        idx.iter().map(|&i| l.pause_rcvd[i] as i64).collect(),
    )
    .f64(
        "paused_s",
        idx.iter()
            .map(|&i| l.pause_tx[i].paused_time_total(end).as_secs_f64())
            .collect(),
    );
    out.push(t);
    if l.pause_mode == PauseMode::Pfc {
        out.push(crate::pfcsim::priority_table(sim, l));
    }
    if !l.rls.is_empty() {
        let mut t = Table::new("limiters");
        let r = &l.rls;
        t.str("limiter", r.iter().map(|x| x.name.clone()).collect())
            .str(
                "host",
                r.iter()
                    .map(|x| sim.nodes[x.host as usize].name.clone())
                    .collect(),
            )
            .i64("flows", r.iter().map(|x| x.flows as i64).collect())
            .i64("cnms", r.iter().map(|x| x.cnms as i64).collect())
            .i64("notified", r.iter().map(|x| x.notified as i64).collect())
            .i64(
                "released_pkts",
                r.iter().map(|x| x.released as i64).collect(),
            )
            .i64(
                "max_held_pkts",
                r.iter().map(|x| x.max_held as i64).collect(),
            )
            .i64("rto_held", r.iter().map(|x| x.rto_held as i64).collect())
            .f64(
                "final_rate_mbps",
                r.iter().map(|x| x.rate_bps() / 1e6).collect(),
            );
        out.push(t);
    }
    if l.keep_rp_series {
        let s = &l.rp_samples;
        let mut t = Table::new("rp_rate");
        t.f64("time_s", s.iter().map(|x| x.0.as_secs_f64()).collect())
            .str(
                "limiter",
                s.iter().map(|x| l.rls[x.1 as usize].name.clone()).collect(),
            )
            .f64("rate_mbps", s.iter().map(|x| x.2 / 1e6).collect());
        out.push(t);
        let mut t = Table::new("minrate");
        t.f64(
            "time_s",
            l.minrate.iter().map(|x| x.0.as_secs_f64()).collect(),
        )
        .f64("rate_mbps", l.minrate.iter().map(|x| x.1 / 1e6).collect());
        out.push(t);
    }
    if l.flow_interval > SimTime::ZERO {
        let s = &l.flow_samples;
        let mut t = Table::new("flow_rate");
        t.f64("time_s", s.iter().map(|x| x.0.as_secs_f64()).collect())
            .i64("flow", s.iter().map(|x| x.1 as i64).collect())
            .f64("rate_mbps", s.iter().map(|x| x.2).collect());
        out.push(t);
        if !l.app_samples.is_empty() {
            let s = &l.app_samples;
            let ends = |x: &(SimTime, u32, f64), src: bool| -> String {
                match &sim.apps[x.1 as usize] {
                    crate::app::App::Cbr(c) => sim.nodes[if src { c.src } else { c.dst } as usize]
                        .name
                        .clone(),
                    _ => String::new(),
                }
            };
            let mut t = Table::new("app_rate");
            t.f64("time_s", s.iter().map(|x| x.0.as_secs_f64()).collect())
                .i64("app", s.iter().map(|x| x.1 as i64).collect())
                .str("src", s.iter().map(|x| ends(x, true)).collect())
                .str("dst", s.iter().map(|x| ends(x, false)).collect())
                .f64("rate_mbps", s.iter().map(|x| x.2).collect());
            out.push(t);
        }
    }
    out
}

/// Extra summary columns (appended to `summary` when L2 is configured).
pub fn summary_columns(sim: &Sim, t: &mut crate::results::Table) {
    let l = match sim.l2.as_ref() {
        Some(l) => l,
        None => return,
    };
    let end = sim.end;
    let paused: f64 = l
        .pause_tx
        .iter()
        .map(|s| s.paused_time_total(end).as_secs_f64())
        .sum();
    t.i64("cnm_sent", vec![l.cnm_sent as i64])
        .i64("cnm_received", vec![l.cnm_received as i64])
        .i64("cnm_ignored", vec![l.cnm_ignored as i64])
        .i64("timeouts_held_in_limiter", vec![l.rto_held as i64])
        .i64("pause_sent", vec![l.pause_sent.iter().sum::<u64>() as i64])
        .i64(
            "pause_received",
            vec![l.pause_rcvd.iter().sum::<u64>() as i64],
        )
        .f64("paused_s", vec![paused])
        .f64("avg_minrate_mbps", vec![l.avg_minrate_mbps()]);
}

#[cfg(test)]
mod tests {
    use crate::results::{Column, Table};
    use crate::testkit::{col_f64, get, run};

    /// Nine 1 Gb/s CBR senders into one 1 Gb/s receiver for 50 ms.
    fn nine_to_one(pause: bool, buffer: &str) -> String {
        let mut s = format!(
            "[sim]\nduration = \"50ms\"\n[topology]\nkind = \"star\"\nservers = 9\n\
             link_rate = \"1Gbps\"\nlink_delay = \"5us\"\nswitch_buffer = \"{buffer}\"\n"
        );
        if pause {
            s.push_str("pause = { hi = \"130KB\", lo = \"110KB\" }\n");
        }
        for i in 1..=9 {
            s.push_str(&format!(
                "[[apps]]\nkind = \"cbr\"\nsrc = \"server{i}\"\ndst = \"client\"\nrate = \"1Gbps\"\n\
                 packet_size = 1500\n"
            ));
        }
        s
    }

    #[test]
    fn pause_makes_a_9_to_1_overload_lossless() {
        // Per-input watermark 130 KB + in-flight: 9 inputs need < 9 x 140 KB at the output.
        let with = run(&nine_to_one(true, "1300KB"));
        assert_eq!(get(&with, "summary", "drops"), 0.0);
        assert!(get(&with, "summary", "pause_sent") > 9.0);
        assert_eq!(
            get(&with, "summary", "pause_sent"),
            get(&with, "summary", "pause_received")
        );
        // Each sender is paused about 8/9 of the time after the first ~1.2 ms.
        let paused = get(&with, "summary", "paused_s");
        assert!(paused > 9.0 * 0.05 * 0.7 && paused < 9.0 * 0.05, "{paused}");
        // The receiver link stays busy: ~1 Gb/s of 1500-B datagrams.
        let gp = get(&with, "summary", "goodput_mbps");
        assert!(gp > 900.0, "{gp}");
        let maxq = col_f64(&with, "ports", "max_queue_bytes")
            .into_iter()
            .fold(0.0, f64::max);
        assert!(maxq < 9.0 * 140_000.0, "{maxq}");
        // Without PAUSE the same buffer overflows.
        let without = run(&nine_to_one(false, "1300KB"));
        assert!(get(&without, "summary", "drops") > 1000.0);
        // With PAUSE and an unlimited buffer: no loss and the queue stays bounded.
        let unl = run(&nine_to_one(true, "unlimited"));
        assert_eq!(get(&unl, "summary", "drops"), 0.0);
        let maxq = col_f64(&unl, "ports", "max_queue_bytes")
            .into_iter()
            .fold(0.0, f64::max);
        assert!(maxq < 9.0 * 140_000.0, "{maxq}");
    }

    fn two_flows(extra: &str) -> String {
        format!(
            "[sim]\nduration = \"200ms\"\n[topology]\nkind = \"star\"\nservers = 2\n\
             link_rate = \"1Gbps\"\nlink_delay = \"25us\"\nswitch_buffer = \"unlimited\"\n{extra}\n\
             [[apps]]\nkind = \"bulk\"\nsrc = \"server1\"\ndst = \"client\"\n\
             [[apps]]\nkind = \"bulk\"\nsrc = \"server2\"\ndst = \"client\"\n"
        )
    }

    #[test]
    fn cnms_reach_the_sources_and_cut_their_limiters() {
        let t = run(&two_flows(
            "qcn = { q_eq = \"33KB\" }\n[qcn]\nrp = { scope = \"flow\" }\n[measure]\nrp_series = true",
        ));
        let sent = get(&t, "summary", "cnm_sent");
        assert!(sent > 10.0, "{sent}");
        // Every CNM crosses the network (nothing is lost with an unlimited buffer); all are
        // about data segments of flows whose source has a limiter.
        assert_eq!(get(&t, "summary", "cnm_received"), sent);
        assert_eq!(get(&t, "summary", "cnm_ignored"), 0.0);
        let cnms = col_f64(&t, "limiters", "cnms");
        assert_eq!(cnms.iter().sum::<f64>(), sent);
        assert!(cnms.iter().all(|&c| c > 0.0));
        // Allocated rates are below the line rate; the bottleneck is shared.
        let min = get(&t, "summary", "avg_minrate_mbps");
        assert!(min < 1000.0 && min > 10.0, "{min}");
        let gp = get(&t, "summary", "goodput_mbps");
        assert!(gp > 800.0, "{gp}");
        // The queue stays near Q_EQ instead of growing to the windows' worth.
        let maxq = col_f64(&t, "ports", "max_queue_bytes")
            .into_iter()
            .fold(0.0, f64::max);
        let plain = run(&two_flows(""));
        let maxq_plain = col_f64(&plain, "ports", "max_queue_bytes")
            .into_iter()
            .fold(0.0, f64::max);
        assert!(maxq < maxq_plain, "{maxq} vs {maxq_plain}");
        assert!(!col_f64(&t, "rp_rate", "rate_mbps").is_empty());
    }

    #[test]
    fn fixed_rate_limiter_is_a_physical_limit_for_tcp() {
        let t = run(&two_flows("[qcn]\nrp = { fixed_rate = \"100Mbps\" }"));
        // Two flows at 100 Mb/s of wire rate: 200 Mb/s x 1460/1500 of goodput, no loss.
        let gp = get(&t, "summary", "goodput_mbps");
        assert!((gp - 200.0 * 1460.0 / 1500.0).abs() < 5.0, "{gp}");
        assert_eq!(get(&t, "summary", "drops"), 0.0);
        let ideal = run(&two_flows("[qcn]\nrp = { ideal = true }"));
        let gp = get(&ideal, "summary", "goodput_mbps");
        assert!(gp > 900.0 && gp < 1000.0 * 1460.0 / 1500.0 + 1.0, "{gp}");
        let maxq = col_f64(&ideal, "ports", "max_queue_bytes")
            .into_iter()
            .fold(0.0, f64::max);
        assert!(maxq <= 3000.0, "{maxq}");
    }

    #[test]
    fn rate_change_slows_a_port_and_back() {
        let t = run(&two_flows(
            "[[topology.rate_changes]]\nport = \"sw->client\"\nat = \"50ms\"\nrate = \"100Mbps\"\n\
             [[topology.rate_changes]]\nport = \"sw->client\"\nat = \"150ms\"\nrate = \"1Gbps\"\n\
             [measure]\nflow_rate_interval = \"10ms\"",
        ));
        let time = col_f64(&t, "flow_rate", "time_s");
        let rate = col_f64(&t, "flow_rate", "rate_mbps");
        let total = |a: f64, b: f64| -> f64 {
            let mut s = 0.0;
            let mut k = 0.0;
            for (i, &x) in time.iter().enumerate() {
                if x > a + 1e-9 && x <= b + 1e-9 {
                    s += rate[i];
                    k += 0.5; // two flows per sample time
                }
            }
            s / k
        };
        let slow = total(70e-3, 150e-3);
        let fast = total(170e-3, 200e-3);
        assert!(slow < 100.0 && slow > 80.0, "{slow}");
        assert!(fast > 800.0, "{fast}");
    }

    #[test]
    fn bad_keys_name_their_field() {
        let e = crate::run_text(
            &two_flows("qcn = { sampling = \"v9\" }"),
            "x.toml",
            &[],
            &mut |_| true,
        )
        .unwrap_err();
        assert!(e.to_string().contains("topology.qcn"), "{e}");
        assert!(e.to_string().contains("v9"), "{e}");
        let e = crate::run_text(
            &two_flows("[qcn]\nrp = { scope = \"everything\" }"),
            "x.toml",
            &[],
            &mut |_| true,
        )
        .unwrap_err();
        assert!(e.to_string().contains("qcn.rp"), "{e}");
        let e = crate::run_text(
            &two_flows(
                "[[topology.rate_changes]]\nport = \"nope\"\nat = \"1ms\"\nrate = \"1Gbps\"",
            ),
            "x.toml",
            &[],
            &mut |_| true,
        )
        .unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
    }

    #[test]
    fn same_seed_same_result() {
        let s = two_flows("qcn = {}\n[qcn]\nrp = {}\n[measure]\nrp_series = true");
        let strip = |mut v: Vec<Table>| {
            for t in v.iter_mut() {
                t.columns.retain(|c| c.0 != "wall_s");
            }
            v
        };
        assert_eq!(strip(run(&s)), strip(run(&s)));
    }

    /// `qcn.sample = "arrivals"` offers the frames a full queue drops to the CP: a 9-to-1
    /// CBR overload of a 150 KB buffer then gets samples on dropped frames, more CNMs and
    /// fewer drops; "admitted" takes none on dropped frames.
    #[test]
    fn cp_sample_arrivals_sees_dropped_frames() {
        let scen = |sample: &str| {
            let mut s = nine_to_one(false, "150KB");
            s = s.replace(
                "switch_buffer = \"150KB\"\n",
                &format!(
                    "switch_buffer = \"150KB\"\nqcn = {{ sample = \"{sample}\" }}\n\
                     [qcn]\nrp = {{ scope = \"flow\" }}\n"
                ),
            );
            run(&s)
        };
        let adm = scen("admitted");
        let arr = scen("arrivals");
        let dropped = |t: &[Table]| {
            col_f64(t, "l2_ports", "cp_samples_dropped")
                .iter()
                .sum::<f64>()
        };
        assert_eq!(dropped(&adm), 0.0);
        assert!(dropped(&arr) > 0.0);
        assert!(get(&arr, "summary", "drops") < get(&adm, "summary", "drops"));
        // Same result as the default when the key is absent.
        let default = run(&nine_to_one(false, "150KB").replace(
            "switch_buffer = \"150KB\"\n",
            "switch_buffer = \"150KB\"\nqcn = {}\n[qcn]\nrp = { scope = \"flow\" }\n",
        ));
        assert_eq!(
            get(&default, "summary", "drops"),
            get(&adm, "summary", "drops")
        );
        assert_eq!(
            get(&default, "summary", "cnm_sent"),
            get(&adm, "summary", "cnm_sent")
        );
        let e = crate::run_text(
            &two_flows("qcn = { sample = \"some\" }"),
            "x.toml",
            &[],
            &mut |_| true,
        )
        .unwrap_err();
        assert!(e.to_string().contains("topology.qcn"), "{e}");
        assert!(e.to_string().contains("arrivals"), "{e}");
    }

    /// `qcn.quantizer_shift` selects the MSB-shift quantiser: with 13 (q <= 20) the CPs send
    /// a different number of CNMs than with the linear default on the same run.
    #[test]
    fn quantizer_shift_key_changes_the_feedback() {
        let lin = run(&two_flows("qcn = {}\n[qcn]\nrp = {}"));
        let msb = run(&two_flows("qcn = { quantizer_shift = 13 }\n[qcn]\nrp = {}"));
        assert_ne!(
            get(&lin, "summary", "cnm_sent"),
            get(&msb, "summary", "cnm_sent")
        );
        let e = crate::run_text(
            &two_flows("qcn = { quantizer_shift = 60 }"),
            "x.toml",
            &[],
            &mut |_| true,
        )
        .unwrap_err();
        assert!(e.to_string().contains("shift"), "{e}");
    }

    /// A 1 Mb/s fixed limiter holds each 1500-B segment 12 ms; with a 10 ms RTO (no backoff
    /// growth) the RTO fires while the segment at snd_una is still in the limiter: those
    /// timeouts are counted as held. At 100 Mb/s with the 200 ms default no RTO fires.
    #[test]
    fn timeouts_with_snd_una_held_in_the_limiter_are_counted() {
        let t = run(&two_flows(
            "[qcn]\nrp = { fixed_rate = \"1Mbps\" }\n[tcp]\nmin_rto = \"10ms\"\nmax_rto = \"10ms\"",
        ));
        let to = get(&t, "summary", "timeouts");
        let held = get(&t, "summary", "timeouts_held_in_limiter");
        assert!(held >= 2.0 && held <= to, "{held} {to}");
        assert_eq!(
            col_f64(&t, "limiters", "rto_held").iter().sum::<f64>(),
            held
        );
        let ok = run(&two_flows("[qcn]\nrp = { fixed_rate = \"100Mbps\" }"));
        assert_eq!(get(&ok, "summary", "timeouts"), 0.0);
        assert_eq!(get(&ok, "summary", "timeouts_held_in_limiter"), 0.0);
    }

    #[test]
    fn cbr_apps_get_a_delivered_rate_series() {
        // One 100 Mb/s CBR of 1500-B frames: one frame every 120 us, so every 6 ms window
        // holds exactly 50 arrivals (the first frame arrives well inside the first window).
        let t = run(
            "[sim]\nduration = \"40ms\"\n[topology]\nkind = \"star\"\nservers = 1\n\
             link_rate = \"1Gbps\"\nlink_delay = \"5us\"\nswitch_buffer = \"150KB\"\n\
             [[apps]]\nkind = \"cbr\"\nsrc = \"server1\"\ndst = \"client\"\nrate = \"100Mbps\"\n\
             packet_size = 1500\n[measure]\nflow_rate_interval = \"6ms\"\n",
        );
        let rate = col_f64(&t, "app_rate", "rate_mbps");
        let time = col_f64(&t, "app_rate", "time_s");
        assert!(rate.len() >= 6, "{rate:?}");
        assert!((time[0] - 0.006).abs() < 1e-12 && (time[1] - 0.012).abs() < 1e-12);
        for r in &rate {
            assert_eq!(*r, rate[0], "{rate:?}");
        }
        // 50 payloads in 6 ms: just under 100 Mb/s (headers are not payload).
        assert!(rate[0] > 95.0 && rate[0] < 100.0, "{}", rate[0]);
        let tab = t.iter().find(|x| x.name == "app_rate").expect("app_rate");
        match (tab.get("src"), tab.get("dst")) {
            (Some(Column::Str(s)), Some(Column::Str(d))) => {
                assert_eq!((s[0].as_str(), d[0].as_str()), ("server1", "client"));
            }
            other => panic!("{other:?}"),
        }
        // Without the interval: no table.
        let off = run(&nine_to_one(false, "150KB"));
        assert!(off.iter().all(|x| x.name != "app_rate"));
    }
}

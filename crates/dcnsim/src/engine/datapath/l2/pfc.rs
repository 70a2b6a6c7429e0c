//! IEEE 802.3x PAUSE and IEEE 802.1Qbb priority flow control (PFC) on multi-queue ports,
//! and per-priority PFC at any transmitter (docs/models.md §2.4). The pure state machines are
//! `l2/pause.rs`
//! ([`PauseWatermarks`](crate::model::l2::PauseWatermarks) at the switch,
//! [`PauseState`](crate::model::l2::PauseState) at the transmitter); `engine/datapath/l2/mod.rs` wires them for
//! single-FIFO ports; this module adds:
//!
//! - **Priority of a frame** = [`class_priority`]`(Packet::class)` = class mod 8, the same
//!   field the multi-queue classifier uses (`mq::class_to_queue`).
//! - **Switch side, multi-queue egress**: per egress port and class queue, a FIFO of the input
//!   ports of the frames it holds (a queue is FIFO, and every removal — transmission, a
//!   dequeue-time drop, DRR's longest-queue drop — takes its head), so each departure
//!   releases the bytes of the right input × priority. Unlike the single-FIFO path, a frame
//!   that arrives at an idle multi-queue port is counted too (it leaves within the same
//!   picosecond: the transmitter picks it in a `PortTxDone` at `now`, after the accounting).
//! - **PFC frames** are `Kind::Pause` built by `Packet::pause` with a priority (`base/packet.rs`)
//!   (802.3x frames: no flag). One priority per frame (`l2/pause.rs`).
//! - **Transmitter side**: a multi-queue port (switch or host NIC) with paused priorities
//!   passes over every queue whose head frame has a paused priority
//!   (`MultiQueue::set_paused_priorities`, `Scheduler::dequeue_eligible`) and keeps serving
//!   the others; when every backlogged queue is paused it holds with one event at the
//!   earliest end of a blocking pause (re-armed earlier by a resume, a control frame, or an
//!   arrival to an unpaused queue). A single-FIFO port under PFC holds when its *head* frame's
//!   priority is paused (head-of-line blocking, as a one-queue NIC would). Control frames
//!   (PAUSE, PFC, CNM) go first and are never paused.

use crate::base::ids::{NodeId, PortId};
use crate::base::packet::{Packet, PktRef};
use crate::base::units::SimTime;
use crate::engine::datapath::l2::{arm_refresh, send_pause, L2};
use crate::engine::datapath::Core;
use crate::engine::net::{fabric, DropReason, Enqueued};
use crate::model::l2::{class_priority, PauseFrame, PFC_PRIORITIES};
use std::collections::VecDeque;

/// State of PAUSE/PFC on multi-queue ports, and per-priority frame counters.
#[derive(Clone, Debug, Default)]
pub struct MqPause {
    /// Per port: per class queue, the input ports (of this switch) of the frames it holds.
    /// Empty for ports that are not multi-queue egress ports of a pausing switch.
    inq: Vec<Vec<VecDeque<PortId>>>,
    /// Frames produced by the accounting inside `Core::mq_enqueue` / `mq_send_next`, sent by
    /// [`flush`] once those return: (input port, frame).
    pending: Vec<(PortId, PauseFrame)>,
    /// Per port and priority: PFC frames sent / received (802.3x frames are not counted here).
    pub sent_prio: Vec<[u64; PFC_PRIORITIES]>,
    pub rcvd_prio: Vec<[u64; PFC_PRIORITIES]>,
}

impl MqPause {
    pub fn new(ports: usize) -> MqPause {
        MqPause {
            inq: vec![Vec::new(); ports],
            pending: Vec::with_capacity(8),
            sent_prio: vec![[0; PFC_PRIORITIES]; ports],
            rcvd_prio: vec![[0; PFC_PRIORITIES]; ports],
        }
    }

    /// Allocate the input FIFOs of the multi-queue ports of pausing switch `node`.
    pub(crate) fn alloc_switch(&mut self, sim: &Core, node: NodeId) {
        for &pid in &sim.net.nodes[node.idx()].ports {
            if let Some(m) = sim.net.ports[pid.idx()].mq.as_ref() {
                self.inq[pid.idx()] = vec![VecDeque::new(); m.mq.num_queues()];
            }
        }
    }

    pub(crate) fn count_sent(&mut self, pid: PortId, prio: Option<u8>) {
        if let Some(p) = prio {
            if let Some(c) = self.sent_prio.get_mut(pid.idx()) {
                c[(p as usize).min(PFC_PRIORITIES - 1)] += 1;
            }
        }
    }

    pub(crate) fn count_rcvd(&mut self, pid: PortId, prio: Option<u8>) {
        if let Some(p) = prio {
            if let Some(c) = self.rcvd_prio.get_mut(pid.idx()) {
                c[(p as usize).min(PFC_PRIORITIES - 1)] += 1;
            }
        }
    }
}

impl L2 {
    /// `Core::mq_enqueue` admitted `p`, received on switch port `inp` (`NONE`: not from a
    /// switch input), into queue `q` of port `pid` (of `node`).
    #[inline]
    pub(crate) fn mq_arrival(
        &mut self,
        now: SimTime,
        node: NodeId,
        pid: PortId,
        q: usize,
        p: &Packet,
        inp: PortId,
    ) {
        let Some(fifos) = self.mqp.inq.get_mut(pid.idx()) else {
            return;
        };
        if fifos.is_empty() || inp == PortId::NONE {
            return;
        }
        let q = q.min(fifos.len() - 1);
        fifos[q].push_back(inp);
        let ii = self.input_idx[inp.idx()] as usize;
        if let Some(sw) = self.pause_sw[node.idx()].as_mut() {
            if let Some(f) = sw.wm.on_arrival(now, ii, class_priority(p.class), p.size) {
                self.mqp.pending.push((inp, f));
            }
        }
    }

    /// Frame `p` left queue `q` of multi-queue port `pid` (transmitted or dropped).
    #[inline]
    pub(crate) fn mq_left(
        &mut self,
        now: SimTime,
        node: NodeId,
        pid: PortId,
        q: usize,
        p: &Packet,
    ) {
        let Some(fifos) = self.mqp.inq.get_mut(pid.idx()) else {
            return;
        };
        if fifos.is_empty() {
            return;
        }
        let q = q.min(fifos.len() - 1);
        let Some(inp) = fifos[q].pop_front() else {
            return; // arrived before accounting existed (cannot happen) or from a host
        };
        let ii = self.input_idx[inp.idx()] as usize;
        if let Some(sw) = self.pause_sw[node.idx()].as_mut() {
            if let Some(f) = sw.wm.on_departure(now, ii, class_priority(p.class), p.size) {
                self.mqp.pending.push((inp, f));
            }
        }
    }
}

fn l2(sim: &mut Core) -> &mut L2 {
    sim.l2.as_mut().expect("l2 state")
}

/// Send the frames the accounting produced, and arm the switches' refresh events.
fn flush(sim: &mut Core) {
    while let Some((inp, f)) = l2(sim).mqp.pending.pop() {
        send_pause(sim, inp, f.quanta, f.prio);
        let node = sim.net.ports[inp.idx()].node;
        arm_refresh(sim, node);
    }
}

/// A switch with PAUSE/PFC forwards packet `h`, received on its port `inp`, to multi-queue
/// port `out` (the input is accounted inside `Core::mq_enqueue`; the caller has checked the
/// dynamic threshold's admission, [`ingress_refused`]).
pub(crate) fn switch_forward_mq(sim: &mut Core, out: PortId, h: PktRef, inp: PortId) -> Enqueued {
    sim.enqueue_stored(out, h, inp)
}

/// Ingress admission of the dynamic pause threshold (docs/models.md §2.5): a packet `h` that
/// reached pausing switch `node` on its port `inp` and finds neither room in the shared
/// pool nor in its ingress port × priority's headroom is refused. It is then counted by the
/// switch's accounting (table `pfc_buffer`) and as a buffer drop of the egress port `out`
/// (and of the class queue it would have joined), freed, and true is returned. Always false
/// with the fixed watermarks.
pub(crate) fn ingress_refused(
    sim: &mut Core,
    node: NodeId,
    out: PortId,
    h: PktRef,
    inp: PortId,
) -> bool {
    if inp == PortId::NONE {
        return false;
    }
    let p = &sim.net.packets[h];
    let l2s = sim.l2.as_mut().expect("l2 state");
    let ii = l2s.input_idx[inp.idx()] as usize;
    let Some(sw) = l2s.pause_sw[node.idx()].as_mut() else {
        return false;
    };
    let prio = class_priority(p.class);
    if sw.wm.admit(ii, prio, p.size) {
        return false;
    }
    sw.wm.on_drop(ii, prio, p.size);
    let port = &mut sim.net.ports[out.idx()];
    port.stats.arrived += 1;
    port.stats.count_drop(DropReason::Buffer, p.size);
    if let Some(m) = port.mq.as_mut() {
        let q = m.mq.classify(p);
        m.qstats[q].by.drops[DropReason::Buffer as usize] += 1;
    }
    sim.net.packets.free(h);
    true
}

/// The end of `Core::mq_enqueue` with layer 2 on: send the frames the accounting produced and
/// make sure the transmitter looks at the new frame (at once if idle; a held port wakes when
/// the new head may start).
pub(crate) fn mq_after_enqueue(sim: &mut Core, pid: PortId) {
    flush(sim);
    let now = sim.now;
    let i = pid.idx();
    let l2s = sim.l2.as_mut().expect("l2 state");
    let port = &mut sim.net.ports[i];
    if !port.tx.armed() {
        port.tx.arm_soon(&mut sim.events, pid, now);
        return;
    }
    let at = port.tx.busy_until().max(now);
    let h = l2s.hold_at[i];
    if h.is_never() || at >= h {
        return;
    }
    let mask = l2s.pause_tx[i].paused_mask(now);
    let m = port.mq.as_mut().expect("multi-queue port");
    m.mq.set_paused_priorities(mask);
    let startable =
        (0..m.mq.num_queues()).any(|q| !m.mq.queue(q).is_empty() && !m.mq.head_paused(q));
    m.mq.set_paused_priorities(0);
    if startable {
        l2s.hold_at[i] = at;
        port.tx.wake(&mut sim.events, pid, at);
    }
}

/// `PortTxDone` of a multi-queue port with layer 2 on (after `tx_gate`'s stale-event checks):
/// control frames first, then the scheduler over the queues whose head is not paused; hold
/// until the earliest blocking pause ends if nothing may start.
pub(crate) fn mq_tx(sim: &mut Core, pid: PortId) {
    let now = sim.now;
    let i = pid.idx();
    {
        let l2s = sim.l2.as_mut().expect("l2 state");
        let port = &mut sim.net.ports[i];
        port.tx.fired();
        if let Some(c) = port.queue.pop_front() {
            l2s.ctrl_front[i] = l2s.ctrl_front[i].saturating_sub(1);
            let more = !port.queue.is_empty() || port.mq.as_ref().is_some_and(|m| !m.mq.is_empty());
            let fabric = fabric!(&mut sim.events, sim.net);
            port.serve(pid, now, c, more, fabric);
            return;
        }
        let mask = l2s.pause_tx[i].paused_mask(now);
        let m = port.mq.as_mut().expect("multi-queue port");
        m.mq.set_paused_priorities(mask);
    }
    let started = sim.mq_send_next(pid).is_ok();
    let l2s = sim.l2.as_mut().expect("l2 state");
    let port = &mut sim.net.ports[i];
    let m = port.mq.as_mut().expect("multi-queue port");
    port.queued_bytes = m.mq.bytes();
    if !started && !m.mq.is_empty() {
        // Every backlogged queue's head is paused: hold until the earliest of those ends.
        let mut t = SimTime::NEVER;
        for q in 0..m.mq.num_queues() {
            if let Some(h) = m.mq.queue(q).head() {
                let u = l2s.pause_tx[i].paused_until(class_priority(h.class));
                if u > now && u < t {
                    t = u;
                }
            }
        }
        if !t.is_never() {
            l2s.hold_at[i] = t;
            port.tx.hold(&mut sim.events, pid, t);
        }
    }
    m.mq.set_paused_priorities(0);
    flush(sim);
}

/// A PAUSE/PFC frame was applied to port `target` (PFC mode or a multi-queue port): keep
/// `Port::paused_until` as the latest pause end (the single-FIFO fast path tests it) and
/// wake a held transmitter so it re-evaluates which frames may start.
pub(crate) fn after_pause_frame(sim: &mut Core, target: PortId) {
    let now = sim.now;
    let i = target.idx();
    let l2s = sim.l2.as_mut().expect("l2 state");
    let port = &mut sim.net.ports[i];
    port.paused_until = l2s.pause_tx[i].latest_until();
    let h = l2s.hold_at[i];
    let at = port.tx.busy_until().max(now);
    if !h.is_never() && at < h {
        l2s.hold_at[i] = at;
        port.tx.wake(&mut sim.events, target, at);
    }
}

//! Multi-queue ports on the packet path: `Core::mq_enqueue` and `Core::mq_send_next` wire
//! a port's `MqPort` (`engine/net/mq_port.rs`: class queues, scheduler, buffer admission,
//! per-queue marking) into enqueue and transmit, with the PAUSE/PFC accounting of `pfc`.
//! The order of operations is documented in `engine/net/mq_port.rs`.

use crate::base::ids::{Idx, PortId};
use crate::base::packet::{PacketArena, PktRef};
use crate::engine::datapath::l2::L2;
use crate::engine::datapath::Core;
use crate::engine::net::mq_port::{MqPort, QueuedRef};
use crate::engine::net::{
    apply_verdict, fabric, resolve, DropReason, Enqueued, MarkReason, PortStats,
};
use crate::model::aqm::{AqmAt, Backlog, Verdict, View};
use crate::model::mq::buffer::SharedPool;

impl Core {
    /// Offer packet `h` (in `net.packets`; freed if dropped) to a multi-queue port (see the
    /// module documentation for the order). `input`: the switch port it arrived on, for the
    /// PAUSE/PFC accounting (`NONE`: none). The class queues hold [`QueuedRef`]s.
    /// Always inlined into its one caller (`Core::enqueue_stored`): left to the profile,
    /// the compiler once kept it out of line, and the call cost the fabric 1.8 % more
    /// instructions (docs/performance.md, "How the speed is obtained").
    #[inline(always)]
    pub(crate) fn mq_enqueue(&mut self, pid: PortId, h: PktRef, input: PortId) -> Enqueued {
        let now = self.now;
        let net = &mut self.net;
        let port = &mut net.ports[pid.idx()];
        let p = &mut net.packets[h];
        port.stats.arrived += 1;
        let m = port.mq.as_mut().expect("multi-queue port");
        // The enqueue-side mark, applied once the buffer has admitted the packet.
        let mut mark: Option<MarkReason> = None;
        if port.aqm_at == AqmAt::Enqueue {
            let by = port.aqm.reason();
            let b = Backlog {
                pkts: m.mq.len() as u64,
                bytes: m.mq.bytes(),
            };
            let v = port.aqm.enqueue(now, p, View::port(b));
            match resolve(v, by, p) {
                Verdict::Pass => {}
                Verdict::Mark => mark = Some(by),
                Verdict::Drop => {
                    apply_verdict(Verdict::Drop, by, p, &mut port.stats, None);
                    net.packets.free(h);
                    return Enqueued::Dropped(by.drop_reason());
                }
            }
        }
        let q = m.mq.classify(p);
        let (v, by) = m.enqueue_verdict(now, p, q);
        match resolve(v, by, p) {
            Verdict::Pass => {}
            Verdict::Mark => mark = mark.or(Some(by)),
            Verdict::Drop => {
                let qs = Some(&mut m.qstats[q].by);
                apply_verdict(Verdict::Drop, by, p, &mut port.stats, qs);
                net.packets.free(h);
                return Enqueued::Dropped(by.drop_reason());
            }
        }
        let pool = m.pool.and_then(|i| net.pools.get_mut(i as usize));
        let cq = m.mq.queue(q);
        if !m
            .adm
            .admit(q, p.size, cq.bytes(), m.mq.bytes(), pool.as_deref())
        {
            port.stats.count_drop(DropReason::Buffer, p.size);
            m.qstats[q].by.drops[DropReason::Buffer as usize] += 1;
            net.packets.free(h);
            return Enqueued::Dropped(DropReason::Buffer);
        }
        if let Some(pool) = pool {
            pool.take(p.size);
        }
        if let Some(by) = mark {
            let qs = Some(&mut m.qstats[q].by);
            apply_verdict(Verdict::Mark, by, p, &mut port.stats, qs);
        }
        if let Some(l) = self.l2.as_mut() {
            // PAUSE/PFC input accounting (`engine/datapath/l2/pfc.rs`).
            l.mq_arrival(now, port.node, pid, q, p, input);
        }
        p.enq_time = now;
        // Where the peer forwards it, looked up while the packet is in the cache (see
        // `engine::net::Waiting`).
        let out = net.routing.hint(&net.ecmp, port.peer_node, p);
        if net.mq_pass_through
            && self.l2.is_none()
            && m.mq.is_empty()
            && port.tx.idle(now)
            && m.mq.passes_through_when_empty()
        {
            // Idle port, empty queues, and a scheduler whose state one packet's enqueue +
            // dequeue leaves unchanged: skip the FIFO round trip. The statistics are those
            // the stored-then-dequeued packet would leave (a backlog of `p.size` for an
            // instant); `tests::pass_through_matches_the_queued_path` checks identity.
            let size = p.size as u64;
            m.qstats[q].max_bytes = m.qstats[q].max_bytes.max(size);
            port.stats.max_queue_bytes = port.stats.max_queue_bytes.max(size);
            // (The dequeue-side AQM may still drop it: say so, as the queued path does.)
            let e = QueuedRef::new(h, p, out);
            return match self.mq_transmit(pid, q, e) {
                Ok(()) => Enqueued::Started,
                Err(why) => Enqueued::Dropped(why),
            };
        }
        let dropped = m.mq.enqueue_at(q, QueuedRef::new(h, p, out), now);
        if dropped > 0 {
            let l2 = self.l2.as_deref_mut();
            let at = (now, pid, port.node);
            scheduler_drops(at, m, &mut port.stats, &mut net.packets, &mut net.pools, l2);
        }
        let qb = m.mq.queue(q).bytes();
        m.qstats[q].max_bytes = m.qstats[q].max_bytes.max(qb);
        port.queued_bytes = m.mq.bytes();
        port.stats.max_queue_bytes = port.stats.max_queue_bytes.max(port.queued_bytes);
        let outcome = if dropped > 0 {
            Enqueued::Dropped(DropReason::SchedulerLimit)
        } else {
            Enqueued::Queued
        };
        if self.l2.is_some() {
            // PAUSE/PFC: frames to send, and the transmitter decides (`engine/datapath/l2/pfc.rs`).
            crate::engine::datapath::l2::pfc::mq_after_enqueue(self, pid);
            return outcome;
        }
        if port.tx.idle(now) {
            // Without layer 2 an idle port had empty queues: the scheduler picks the arrival
            // (unless the dequeue-side AQM drops it).
            let sent = self.mq_send_next(pid);
            match (outcome, sent) {
                (Enqueued::Queued, Ok(())) => Enqueued::Started,
                (Enqueued::Queued, Err(why)) => Enqueued::Dropped(why.unwrap_or(DropReason::Aqm)),
                (o, _) => o,
            }
        } else {
            port.tx.arm(&mut self.events, pid, now);
            outcome
        }
    }

    /// The transmitter of multi-queue port `pid` is free at `now`: pick the next packet
    /// (dequeue-side marking, drops) and serve it, which arms the next `PortTxDone` if more
    /// wait. `Err` when nothing started (the queues are empty, or held nothing the
    /// dequeue-side AQM let through), with the reason of the last drop if any.
    pub(crate) fn mq_send_next(&mut self, pid: PortId) -> Result<(), Option<DropReason>> {
        let now = self.now;
        let mut last_drop = None;
        loop {
            let port = &mut self.net.ports[pid.idx()];
            let m = port.mq.as_mut().expect("multi-queue port");
            let Some((q, e)) = m.mq.dequeue(now) else {
                port.queued_bytes = 0;
                return Err(last_drop);
            };
            if let Some(m) = self.obs.queue_mean.as_mut() {
                m.on_leave(pid, now, &self.net.packets[e.h]);
            }
            if let Some(l) = self.l2.as_mut() {
                // PAUSE/PFC input accounting (`engine/datapath/l2/pfc.rs`).
                l.mq_left(now, port.node, pid, q, &self.net.packets[e.h]);
            }
            match self.mq_transmit(pid, q, e) {
                Ok(()) => return Ok(()),
                Err(why) => last_drop = Some(why),
            }
        }
    }

    /// Packet `e` of queue `q` leaves the queues of port `pid` at `now` (already removed
    /// from them): dequeue-side AQM, counters, and the start of its serialisation. `Err`
    /// (the drop reason; the packet is freed) when the dequeue-side AQM dropped it (the
    /// caller picks another packet). The packet itself is read only when a dequeue-side
    /// scheme decides on it or marks it: the entry has the rest.
    #[inline]
    fn mq_transmit(&mut self, pid: PortId, q: usize, e: QueuedRef) -> Result<(), DropReason> {
        let now = self.now;
        let net = &mut self.net;
        let port = &mut net.ports[pid.idx()];
        let m = port.mq.as_mut().expect("multi-queue port");
        if let Some(i) = m.pool {
            net.pools[i.idx()].give_back(e.size);
        }
        // Who dropped it, if a dequeue-side scheme did.
        let mut dropped_by = None;
        if m.decides_at_dequeue() || port.aqm_at == AqmAt::Dequeue {
            let p = &mut net.packets[e.h];
            let (v, mut by) = m.dequeue_verdict(now, p, q);
            let mut v = resolve(v, by, p);
            if v != Verdict::Drop && port.aqm_at == AqmAt::Dequeue {
                let port_by = port.aqm.reason();
                let b = Backlog {
                    pkts: m.mq.len() as u64,
                    bytes: m.mq.bytes(),
                };
                let pv = port.aqm.dequeue(now, p, View::port(b));
                let pv = resolve(pv, port_by, p);
                // A drop wins; a packet both mark is counted under the per-queue scheme.
                if pv == Verdict::Drop || (pv == Verdict::Mark && v == Verdict::Pass) {
                    (v, by) = (pv, port_by);
                }
            }
            let qs = Some(&mut m.qstats[q].by);
            if apply_verdict(v, by, p, &mut port.stats, qs) == Verdict::Drop {
                dropped_by = Some(by);
            }
        }
        if port.aqm_at != AqmAt::Off && m.mq.is_empty() {
            port.aqm.queue_empty(now + port.rate.tx_time(e.size));
        }
        if let Some(by) = dropped_by {
            port.queued_bytes = m.mq.bytes();
            net.packets.free(e.h);
            return Err(by.drop_reason());
        }
        m.on_departure(now, q, e.size);
        let s = &mut m.qstats[q];
        s.tx_pkts += 1;
        s.tx_bytes += e.size as u64;
        s.tx_payload += e.payload as u64;
        port.queued_bytes = m.mq.bytes();
        let more = !m.mq.is_empty();
        let fabric = fabric!(&mut self.events, net);
        port.serve(pid, now, e.waiting(), more, fabric);
        Ok(())
    }
}

/// Count and free the packets that DRR's `blimit` / SFQ's `maxqueue` rule just dropped at
/// the multi-queue port `m` (`pid` of node `node`, counters `stats`) at `now`: the arrival
/// or the longest flow's packets.
fn scheduler_drops(
    (now, pid, node): (
        crate::base::units::SimTime,
        PortId,
        crate::base::ids::NodeId,
    ),
    m: &mut MqPort,
    stats: &mut PortStats,
    packets: &mut PacketArena,
    pools: &mut [SharedPool],
    mut l2: Option<&mut L2>,
) {
    let uses_pool = m.pool.map(|i| i as usize);
    let mut tmp = std::mem::take(&mut m.scratch);
    tmp.extend(m.mq.take_dropped());
    for d in tmp.drain(..) {
        stats.count_drop(DropReason::SchedulerLimit, d.size);
        let dp = &packets[d.h];
        let dq = m.mq.classify(dp);
        m.qstats[dq].by.drops[DropReason::SchedulerLimit as usize] += 1;
        if let Some(l) = l2.as_deref_mut() {
            l.mq_left(now, node, pid, dq, dp);
        }
        if let Some(i) = uses_pool {
            pools[i].give_back(d.size);
        }
        packets.free(d.h);
    }
    m.scratch = tmp;
}

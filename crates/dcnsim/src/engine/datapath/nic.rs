//! The NIC transmit scheduler of hosts whose senders are pulled rather than pushed (RoCE
//! queue pairs, `model/roce`): a RoCE NIC keeps each queue pair's data in host memory and
//! its scheduler, whenever the port is free, picks the next queue pair whose rate limiter
//! allows a packet — in turn among the eligible ones — and only then builds the packet
//! (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, §5:
//! one rate limiter per queue pair in the NIC; the HPCC authors' ns-3 fork schedules its
//! queue pairs the same way, round robin among those whose next-available time has come).
//! Nothing of a pulled sender waits in the host's egress queue: a packet is built when it
//! can start, at the rate in force then, and a paused priority holds the queue pairs back.
//!
//! The port's own queue (ACKs, NACKs and CNPs of the host's receivers, frames of pushed
//! transports) goes first; the scheduler pulls when that queue is empty. It runs at four
//! moments: after any call into a pulled endpoint (a write, feedback, a timer), when the
//! port's transmitter has finished what it holds (the hook after `PortTxDone`), at its own
//! wake-up (`Event::Nic`: a rate limiter's time, the end of a pulled packet's
//! serialisation, the end of a pause), and after a PAUSE/PFC frame reached the port.
//!
//! Scenarios without pulled senders have no [`Nics`] (`Hosts::nics` is `None`, made by
//! `add_flow` for the first pulled flow): the packet path tests one pointer.

use crate::base::ids::{FlowId, PortId};
use crate::base::units::SimTime;
use crate::engine::datapath::Core;
use crate::engine::event::Event;
use crate::model::l2::class_priority;

/// The schedulers of the ports that carry pulled senders, and which flow belongs to which.
#[derive(Clone, Debug, Default)]
pub struct Nics {
    /// Per port: index + 1 into `nics` (0: the port has no scheduler).
    of_port: Vec<u32>,
    nics: Vec<Nic>,
    /// Per flow: the port its packets leave by (`NONE`: a pushed flow).
    port_of_flow: Vec<PortId>,
    /// Per flow: whether it is in its NIC's list of senders with something to send.
    listed: Vec<bool>,
    /// Packets pulled (every scheduler).
    pub pulled: u64,
}

/// One port's scheduler.
#[derive(Clone, Debug)]
struct Nic {
    port: PortId,
    /// Senders that had something to send when last asked, in round-robin order.
    active: Vec<FlowId>,
    /// Where the next round starts: an index into `active`, taken modulo its length (the
    /// length itself names a sender listed after the last pick).
    next: usize,
    /// Time of the earliest pending `Event::Nic` of this port (`NEVER`: none).
    wake: SimTime,
}

impl Nics {
    /// Note that flow `fid` is pulled and leaves by port `pid`.
    fn register(&mut self, fid: FlowId, pid: PortId, ports: usize) {
        if self.of_port.len() < ports {
            self.of_port.resize(ports, 0);
        }
        let i = fid.idx();
        if self.port_of_flow.len() <= i {
            self.port_of_flow.resize(i + 1, PortId::NONE);
            self.listed.resize(i + 1, false);
        }
        self.port_of_flow[i] = pid;
        if self.of_port[pid.idx()] == 0 {
            self.nics.push(Nic {
                port: pid,
                active: Vec::new(),
                next: 0,
                wake: SimTime::NEVER,
            });
            self.of_port[pid.idx()] = self.nics.len() as u32;
        }
    }

    #[inline]
    fn nic_of(&self, pid: PortId) -> Option<usize> {
        match self.of_port.get(pid.idx()) {
            Some(&n) if n > 0 => Some(n as usize - 1),
            _ => None,
        }
    }

    /// Every port with a scheduler.
    pub fn ports(&self) -> impl Iterator<Item = PortId> + '_ {
        self.nics.iter().map(|n| n.port)
    }
}

impl Core {
    /// The port flow `fid` leaves by if it is pulled: registered with that port's scheduler
    /// the first time it is asked (its route is known by then); `NONE` for a pushed flow.
    fn nic_port_of(&mut self, fid: FlowId) -> PortId {
        let ports = self.net.ports.len();
        let n = self.hosts.nics.as_deref_mut().expect("nics");
        if let Some(&p) = n.port_of_flow.get(fid.idx()) {
            if p != PortId::NONE {
                return p;
            }
        }
        let f = &self.hosts.flows[fid.idx()];
        if !f.pulled() {
            return PortId::NONE;
        }
        let pid = self.net.routing.route(f.src(), f.dst());
        if pid != PortId::NONE {
            n.register(fid, pid, ports);
        }
        pid
    }

    /// After a call into flow `fid`'s endpoint: list it if it now has something to send,
    /// and let its port's scheduler run. Out of line, as every NIC function: the packet
    /// path keeps only the `Hosts::nics` test (TCP-only runs never call here).
    #[cold]
    #[inline(never)]
    pub(crate) fn nic_kick_flow(&mut self, fid: FlowId) {
        let pid = self.nic_port_of(fid);
        if pid == PortId::NONE {
            return;
        }
        let n = self.hosts.nics.as_deref_mut().expect("nics");
        if !n.listed[fid.idx()] {
            if self.hosts.flows[fid.idx()].nic_ready().is_none() {
                return;
            }
            n.listed[fid.idx()] = true;
            let k = n.nic_of(pid).expect("registered port");
            n.nics[k].active.push(fid);
        }
        self.nic_run(pid);
    }

    /// The hook after a `PortTxDone` of port `pid` (and after a PAUSE/PFC frame reached it):
    /// if it has a scheduler, let it run.
    #[cold]
    #[inline(never)]
    pub(crate) fn nic_after_port(&mut self, pid: PortId) {
        if let Some(n) = self.hosts.nics.as_deref() {
            if n.nic_of(pid).is_some() {
                self.nic_run(pid);
            }
        }
    }

    /// `Event::Nic(pid)` fired: run the scheduler if this is its earliest wake-up (a later
    /// one that an earlier one superseded does nothing).
    #[cold]
    #[inline(never)]
    pub(crate) fn on_nic_wake(&mut self, pid: PortId) {
        let now = self.now;
        let Some(n) = self.hosts.nics.as_deref_mut() else {
            return;
        };
        let Some(k) = n.nic_of(pid) else { return };
        if n.nics[k].wake != now {
            return;
        }
        n.nics[k].wake = SimTime::NEVER;
        self.nic_run(pid);
    }

    /// Ask for a wake-up of port `pid`'s scheduler at `at` (one pending event: the earliest).
    fn nic_wake_at(&mut self, pid: PortId, at: SimTime) {
        let n = self.hosts.nics.as_deref_mut().expect("nics");
        let k = n.nic_of(pid).expect("registered port");
        if at < n.nics[k].wake {
            n.nics[k].wake = at;
            self.events.schedule(at, Event::Nic(pid));
        }
    }

    /// When a data frame of priority `prio` may start at port `pid` (PAUSE or PFC).
    fn nic_paused_until(&self, pid: PortId, prio: u8) -> SimTime {
        let port = &self.net.ports[pid.idx()];
        let l2 = self
            .l2
            .as_ref()
            .map_or(SimTime::ZERO, |l| l.tx_paused_until(pid, prio));
        port.paused_until.max(l2)
    }

    /// The scheduler of port `pid`: if the port is free and its own queue empty, pull one
    /// packet from the next eligible sender (round robin) and start it; then ask for a
    /// wake-up when the port frees or the earliest sender becomes eligible.
    fn nic_run(&mut self, pid: PortId) {
        let now = self.now;
        let port = &self.net.ports[pid.idx()];
        if !port.queue.is_empty() || port.mq.as_ref().is_some_and(|m| !m.mq.is_empty()) {
            return; // the port's transmit event is armed; the hook runs after it
        }
        if port.tx.armed() {
            return; // a transmit event (a hold, a pending pick) comes first
        }
        if port.tx.busy_until() > now {
            let at = port.tx.busy_until();
            self.nic_wake_at(pid, at);
            return;
        }
        let (pick, earliest) = self.nic_pick(pid);
        if let Some(fid) = pick {
            let f = &mut self.hosts.flows[fid.idx()];
            let host = f.src();
            if let Some(p) = f.nic_pull(now) {
                self.hosts.nics.as_deref_mut().expect("nics").pulled += 1;
                self.host_send(host, p);
            }
            self.sync_timers(fid);
            let port = &self.net.ports[pid.idx()];
            let at = port.tx.busy_until().max(now);
            if !port.tx.armed() {
                self.nic_wake_at(pid, at);
            }
        } else if !earliest.is_never() {
            self.nic_wake_at(pid, earliest);
        }
    }

    /// Round robin over port `pid`'s listed senders from where the last pick left off: the
    /// first one eligible now (its limiter's time has come and its priority is not
    /// paused), and the earliest time another becomes eligible. Senders with nothing to
    /// send leave the list (a write or feedback lists them again).
    fn nic_pick(&mut self, pid: PortId) -> (Option<FlowId>, SimTime) {
        let now = self.now;
        let n = self.hosts.nics.as_deref().expect("nics");
        let k = n.nic_of(pid).expect("registered port");
        let nic = &n.nics[k];
        let len = nic.active.len();
        let mut pick = None;
        let mut earliest = SimTime::NEVER;
        let mut gone: Vec<usize> = Vec::new();
        let start = if len == 0 { 0 } else { nic.next % len };
        for j in 0..len {
            let i = (start + j) % len;
            let fid = nic.active[i];
            let f = &self.hosts.flows[fid.idx()];
            let Some(ready) = f.nic_ready() else {
                gone.push(i);
                continue;
            };
            let at = ready.max(self.nic_paused_until(pid, class_priority(f.nic_class())));
            if at <= now && pick.is_none() {
                pick = Some((i, fid));
            } else {
                earliest = earliest.min(at.max(now));
            }
        }
        let n = self.hosts.nics.as_deref_mut().expect("nics");
        let nic = &mut n.nics[k];
        // The next round starts after the pick, counted in the list without the gone ones.
        let after = pick.map_or(start, |(i, _)| i + 1);
        let before = gone.iter().filter(|&&g| g < after).count();
        if !gone.is_empty() {
            for &g in &gone {
                n.listed[nic.active[g].idx()] = false;
            }
            let mut idx = 0;
            nic.active.retain(|_| {
                let keep = !gone.contains(&idx);
                idx += 1;
                keep
            });
        }
        // Not wrapped: a sender listed meanwhile (pushed at the end) is next in turn.
        nic.next = after - before;
        (pick.map(|(_, f)| f), earliest)
    }
}

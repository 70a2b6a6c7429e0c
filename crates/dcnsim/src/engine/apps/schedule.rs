//! Scheduled transfers: the flowgrind-style workloads of the ODCTCP thesis (§6.1):
//! flows that start together or at set times with set sizes (incast, queue build-up,
//! fairness), an application that pauses after every chunk (Fig 4.4: 1 s idle after every
//! 200 KB), and the benchmark's flows whose start times follow an inter-arrival
//! distribution (built in `scenario/build/flows.rs` from `workload::EmpiricalCdf`).
//!
//! The app owns the consecutive flows `first_flow .. first_flow + transfers.len()`; transfer
//! `i` runs on flow `first_flow + i`. Each chunk written is one completion record.

use crate::base::ids::{AppId, FlowId};
use crate::base::units::SimTime;
use crate::engine::apps::AppEvent;
use crate::engine::datapath::Core;
use crate::engine::event::Event;

/// One transfer: `bytes` (u64::MAX: unlimited) on one flow from `start`, written `chunk`
/// bytes at a time with `pause` of idle between chunks.
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    pub start: SimTime,
    pub bytes: u64,
    /// Bytes per application write (u64::MAX: everything at once).
    pub chunk: u64,
    pub pause: SimTime,
    pub written: u64,
    pub finished: Option<SimTime>,
}

#[derive(Clone, Debug)]
pub struct Schedule {
    pub first_flow: FlowId,
    pub transfers: Vec<Transfer>,
}

impl Schedule {
    fn write_next(&mut self, sim: &mut Core, i: usize) {
        let t = &mut self.transfers[i];
        let left = t.bytes.saturating_sub(t.written);
        if left == 0 {
            return;
        }
        let n = left.min(t.chunk);
        t.written = t.written.saturating_add(n);
        // An unlimited transfer is not waited for (no completion record).
        let notify = t.bytes != u64::MAX;
        sim.flow_write(FlowId(self.first_flow.0 + i as u32), n, notify);
    }

    pub fn handle(&mut self, sim: &mut Core, id: AppId, ev: AppEvent) {
        match ev {
            AppEvent::Start => {
                for i in 0..self.transfers.len() {
                    let start = self.transfers[i].start;
                    if start <= sim.now {
                        self.write_next(sim, i);
                    } else {
                        sim.events.schedule(
                            start,
                            Event::App {
                                app: id,
                                arg: i as u32,
                            },
                        );
                    }
                }
            }
            AppEvent::Timer(i) => self.write_next(sim, i as usize),
            AppEvent::FlowDone(fid) => {
                let i = fid.0.wrapping_sub(self.first_flow.0) as usize;
                let Some(t) = self.transfers.get_mut(i) else {
                    return;
                };
                if t.written >= t.bytes {
                    t.finished = Some(sim.now);
                } else if t.pause == SimTime::ZERO {
                    self.write_next(sim, i);
                } else {
                    sim.events.schedule(
                        sim.now + t.pause,
                        Event::App {
                            app: id,
                            arg: i as u32,
                        },
                    );
                }
            }
            AppEvent::UdpReceived(_) | AppEvent::PingReply(_) => {}
        }
    }

    /// Transfers finished.
    pub fn finished(&self) -> usize {
        self.transfers
            .iter()
            .filter(|t| t.finished.is_some())
            .count()
    }
}

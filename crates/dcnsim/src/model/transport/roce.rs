//! The RoCEv2 queue pair (`model/roce/qp.rs`) as a transport kind: the contract met
//! through the queue pair's public methods. The requester lives at `src` (the NIC pulls its
//! packets, ACKs, NACKs and CNPs come back to it), the responder at `dst`.

use super::{FlowCounters, FlowRow, TimerKind, Transport};
use crate::base::ids::{FlowId, NodeId};
use crate::base::packet::Packet;
use crate::base::units::SimTime;
use crate::model::roce::cc::{FixedRate, RateControl, RoceCc, CC_TIMERS};
use crate::model::roce::qp::{RoceConfig, RoceFlow, CC_TIMER_BASE, RTO_TIMER};

/// The retransmission timer (go-back-N's timeout, IRN's RTO_low / RTO_high), at the sender.
pub const RTO: TimerKind = TimerKind(RTO_TIMER);
const _: () = assert!(CC_TIMER_BASE + CC_TIMERS <= TimerKind::LIMIT);

/// The timer kind of the congestion control's timer `t` (`TimerKind(8 + t)`).
pub const fn cc_timer(t: u8) -> TimerKind {
    TimerKind(CC_TIMER_BASE + t)
}

/// The kind's columns of the `flows` table (the cells of a new flow).
pub fn columns() -> FlowRow {
    let cc = RoceCc::Fixed(FixedRate {
        rate: crate::base::units::RateBps(1),
    });
    let f = RoceFlow::new(NodeId(0), NodeId(0), RoceConfig::default(), cc);
    let mut row = FlowRow::default();
    f.row(&mut row);
    row
}

impl Transport for RoceFlow {
    fn kind_name(&self) -> &'static str {
        "roce"
    }
    fn set_id(&mut self, id: FlowId) {
        self.id = id;
    }
    fn src(&self) -> NodeId {
        self.src
    }
    fn dst(&self) -> NodeId {
        self.dst
    }
    /// The class of the data packets (ACKs, NACKs and CNPs keep `cfg.ctrl_class`).
    fn set_class(&mut self, class: u8) {
        self.cfg.data_class = class;
    }
    fn on_data(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        RoceFlow::receive_data(self, now, p, out)
    }
    fn on_feedback(&mut self, now: SimTime, p: &Packet, _out: &mut Vec<Packet>) {
        RoceFlow::receive_feedback(self, now, p)
    }
    fn on_feedback_int(
        &mut self,
        now: SimTime,
        p: &Packet,
        int: &[crate::base::int::IntHop],
        _out: &mut Vec<Packet>,
    ) {
        RoceFlow::receive_feedback_int(self, now, p, int)
    }
    /// A write is one message; nothing leaves until the NIC pulls.
    fn app_write(&mut self, _now: SimTime, bytes: u64, _out: &mut Vec<Packet>) {
        RoceFlow::write(self, bytes)
    }
    fn written(&self) -> u64 {
        self.sender.written
    }
    fn delivered(&self) -> u64 {
        self.receiver.rcv_nxt
    }
    fn acknowledged(&self) -> Option<u64> {
        Some(self.sender.snd_una)
    }
    fn next_timer(&mut self) -> Option<(TimerKind, SimTime)> {
        RoceFlow::take_timer_event(self).map(|(k, at)| (TimerKind(k), at))
    }
    fn timer_due(&mut self, now: SimTime, kind: TimerKind) -> bool {
        RoceFlow::timer_fired(self, now, kind.0)
    }
    fn on_timer(&mut self, now: SimTime, kind: TimerKind, _out: &mut Vec<Packet>) -> NodeId {
        RoceFlow::run_timer(self, now, kind.0);
        self.src
    }
    /// NACK recoveries count as fast recoveries.
    fn counters(&self) -> FlowCounters {
        let s = &self.sender;
        FlowCounters {
            timeouts: s.timeouts,
            retransmits: s.retransmits,
            fast_recoveries: s.nack_recoveries,
        }
    }
    fn check(&self) -> Result<(), String> {
        RoceFlow::self_check(self)
    }
    fn row(&self, row: &mut FlowRow) {
        let (s, r) = (&self.sender, &self.receiver);
        row.i64("segs_sent", s.segs_sent as i64)
            .i64("retransmits", s.retransmits as i64)
            .i64("timeouts", s.timeouts as i64)
            .i64("fast_recoveries", s.nack_recoveries as i64)
            .i64("nacks_sent", r.nacks_sent as i64)
            .i64("ce_received", r.ce_received as i64)
            .i64("cnps_sent", r.cnps_sent as i64)
            .i64("cnps_received", s.cnps_received as i64)
            .f64("rtt_s", s.last_rtt.as_secs_f64())
            .f64("rate_mbps", self.cc.rate().mbps());
    }
    fn nic_ready(&self) -> Option<SimTime> {
        RoceFlow::ready(self)
    }
    fn pulled(&self) -> bool {
        true
    }
    fn nic_class(&self) -> u8 {
        self.cfg.data_class
    }
    fn wire_bytes(&self, bytes: u64) -> Option<(u32, u64)> {
        Some(RoceFlow::message_wire_bytes(self, bytes))
    }
    fn nic_pull(&mut self, now: SimTime) -> Option<Packet> {
        RoceFlow::pull(self, now)
    }
}

//! TCP as a transport kind: the contract met by the model of `model/tcp` (RFC 793/9293
//! connections with the loss recovery and congestion control documented there), through
//! its public methods. The sender half lives at `src` (writes, ACKs, the retransmission
//! timer), the receiver half at `dst` (segments, the delayed-ACK timer).

use super::{FlowCounters, FlowRow, TimerKind, Transport, WindowSample};
use crate::base::ids::{FlowId, NodeId};
use crate::base::packet::Packet;
use crate::base::units::SimTime;
use crate::model::tcp::TcpFlow;

/// The retransmission timer (RTO, and the RACK reordering and TLP probe timers, which share
/// it as Linux does), at the sender.
pub const RTO: TimerKind = TimerKind(0);
/// The receiver's delayed-ACK timer (RFC 1122 §4.2.3.2).
pub const DELACK: TimerKind = TimerKind(1);

/// The kind's columns of the `flows` table (the cells of a new flow): the columns of a
/// table without flows, as before there were other kinds.
pub fn columns() -> FlowRow {
    let f = TcpFlow::new(
        FlowId(0),
        NodeId(0),
        NodeId(0),
        crate::model::tcp::TcpConfig::default(),
    );
    let mut row = FlowRow::default();
    f.row(&mut row);
    row
}

fn clamp_i64(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

impl Transport for TcpFlow {
    fn kind_name(&self) -> &'static str {
        "tcp"
    }
    #[inline]
    fn set_id(&mut self, id: FlowId) {
        TcpFlow::set_id(self, id)
    }
    #[inline]
    fn src(&self) -> NodeId {
        self.src
    }
    #[inline]
    fn dst(&self) -> NodeId {
        self.dst
    }
    fn set_class(&mut self, class: u8) {
        self.class = class;
    }
    #[inline]
    fn on_data(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        TcpFlow::on_segment(self, now, p, out)
    }
    #[inline]
    fn on_feedback(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        TcpFlow::on_ack(self, now, p, out)
    }
    #[inline]
    fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>) {
        TcpFlow::app_write(self, now, bytes, out)
    }
    #[inline]
    fn written(&self) -> u64 {
        self.snd.app_limit
    }
    #[inline]
    fn delivered(&self) -> u64 {
        TcpFlow::delivered(self)
    }
    /// The retransmission timer first, then the delayed ACK's.
    #[inline]
    fn next_timer(&mut self) -> Option<(TimerKind, SimTime)> {
        if let Some(at) = self.snd.rto_timer.take_event() {
            return Some((RTO, at));
        }
        let at = self.rcv.delack_timer.take_event()?;
        Some((DELACK, at))
    }
    #[inline]
    fn timer_due(&mut self, now: SimTime, kind: TimerKind) -> bool {
        if kind == RTO {
            self.snd.rto_timer.fire(now)
        } else {
            self.rcv.delack_timer.fire(now)
        }
    }
    #[inline]
    fn on_timer(&mut self, now: SimTime, kind: TimerKind, out: &mut Vec<Packet>) -> NodeId {
        if kind == RTO {
            TcpFlow::on_rto(self, now, out);
            self.src
        } else {
            TcpFlow::on_delack(self, now, out);
            self.dst
        }
    }
    #[inline]
    fn counters(&self) -> FlowCounters {
        FlowCounters {
            timeouts: self.stats.timeouts,
            retransmits: self.stats.retransmits,
            fast_recoveries: self.stats.fast_recoveries,
        }
    }
    fn window(&self) -> Option<WindowSample> {
        Some(WindowSample {
            cwnd: self.snd.cwnd,
            ssthresh: self.snd.ssthresh,
            alpha: self.alpha_or_none(),
            srtt: self.snd.srtt,
            rto: self.snd.rto,
        })
    }
    /// The sequence space: acknowledged <= delivered in order at the receiver <= sent
    /// (`snd_una <= rcv_nxt <= snd_max`; the bytes sent and not delivered are lost, in
    /// flight or held out of order) and `snd_una <= snd_nxt <= snd_max`.
    fn check(&self) -> Result<(), String> {
        let (s, r) = (&self.snd, &self.rcv);
        let ordered = s.snd_una <= r.rcv_nxt && r.rcv_nxt <= s.snd_max;
        if !ordered || s.snd_una > s.snd_nxt || s.snd_nxt > s.snd_max {
            return Err(format!(
                "flow {}: snd_una {} snd_nxt {} snd_max {} rcv_nxt {} out of order",
                self.id, s.snd_una, s.snd_nxt, s.snd_max, r.rcv_nxt
            ));
        }
        Ok(())
    }
    fn row(&self, row: &mut FlowRow) {
        let st = &self.stats;
        row.i64("segs_sent", st.segs_sent as i64)
            .i64("retransmits", st.retransmits as i64)
            .i64("timeouts", st.timeouts as i64)
            .i64("fast_recoveries", st.fast_recoveries as i64)
            .i64("dup_acks_sent", st.dup_acks_sent as i64)
            .f64("srtt_s", self.snd.srtt.as_secs_f64())
            .i64("cwnd_bytes", clamp_i64(self.snd.cwnd))
            .i64("ece_received", st.ece_received as i64)
            .i64("cwr_sent", st.cwr_sent as i64)
            .i64("ecn_reductions", st.ecn_reductions as i64)
            .i64("ce_received", st.ce_received as i64)
            .f64("alpha", self.alpha_or_none());
    }
}

//! Sender-side time-sequence trace (the seq/ACK plots of the ODCTCP thesis, Figs 4.1–4.4
//! and 5.x, drawn from tcpdump at the sender): one row per data segment sent and per ACK
//! received by a chosen flow, with the ECE/CWR flags. Off unless `measure.seq_flows` names
//! flows; when off the simulation pays one branch on a bool per packet sent.

use crate::base::ids::FlowId;
use crate::base::packet::{flags, Packet};
use crate::base::units::SimTime;

/// What a trace row records.
pub const SEQ_DATA: u8 = 0;
pub const SEQ_ACK: u8 = 1;

/// One row: a data segment leaving the sender or an ACK arriving at it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeqRow {
    pub time: SimTime,
    pub flow: FlowId,
    /// SEQ_DATA or SEQ_ACK.
    pub what: u8,
    /// Data: first sequence number (bytes from the flow start); ACK: cumulative ACK.
    pub seq: u64,
    /// Payload bytes of a data segment (0 for ACKs).
    pub len: u32,
    pub ece: bool,
    pub cwr: bool,
    /// Data segment below the highest sequence already sent (a retransmission).
    pub retx: bool,
}

#[derive(Clone, Debug, Default)]
pub struct SeqTrace {
    /// Any flow traced (checked first, so the trace costs one branch when off).
    pub on: bool,
    /// Per flow: traced or not (indexed by flow id).
    pub flows: Vec<bool>,
    /// Per flow: end of the highest data sent so far (retransmission detection).
    max_end: Vec<u64>,
    pub rows: Vec<SeqRow>,
}

impl SeqTrace {
    /// Trace `flow` (flow ids index `flows`; the vector grows as needed).
    pub fn enable(&mut self, flow: FlowId) {
        let i = flow.idx();
        if self.flows.len() <= i {
            self.flows.resize(i + 1, false);
            self.max_end.resize(i + 1, 0);
        }
        self.flows[i] = true;
        self.on = true;
    }

    fn traced(&self, flow: FlowId) -> bool {
        self.flows.get(flow.idx()).copied().unwrap_or(false)
    }

    pub fn on_data_sent(&mut self, now: SimTime, p: &Packet) {
        if !self.traced(p.flow) {
            return;
        }
        let i = p.flow.idx();
        let end = p.seq + p.payload as u64;
        let retx = p.seq < self.max_end[i];
        self.max_end[i] = self.max_end[i].max(end);
        self.rows.push(SeqRow {
            time: now,
            flow: p.flow,
            what: SEQ_DATA,
            seq: p.seq,
            len: p.payload,
            ece: p.flags & flags::ECE != 0,
            cwr: p.flags & flags::CWR != 0,
            retx,
        });
    }

    pub fn on_ack_received(&mut self, now: SimTime, p: &Packet) {
        if !self.traced(p.flow) {
            return;
        }
        self.rows.push(SeqRow {
            time: now,
            flow: p.flow,
            what: SEQ_ACK,
            seq: p.ack,
            len: 0,
            ece: p.flags & flags::ECE != 0,
            cwr: p.flags & flags::CWR != 0,
            retx: false,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::packet::Kind;

    fn pkt(flow: u32, kind: Kind, seq: u64, ack: u64, payload: u32, fl: u8) -> Packet {
        let ends = (crate::base::ids::NodeId(0), crate::base::ids::NodeId(1));
        Packet {
            seq,
            ack,
            flags: fl,
            ..Packet::new(kind, FlowId(flow), ends, payload + 40, payload)
        }
    }

    #[test]
    fn records_only_chosen_flows_with_flags_and_retransmissions() {
        let mut t = SeqTrace::default();
        assert!(!t.on);
        t.enable(FlowId(1));
        assert!(t.on);
        let now = SimTime::from_ms(1);
        t.on_data_sent(now, &pkt(0, Kind::Data, 0, 0, 1000, 0));
        t.on_data_sent(now, &pkt(1, Kind::Data, 0, 0, 1000, 0));
        t.on_data_sent(now, &pkt(1, Kind::Data, 1000, 0, 1000, flags::CWR));
        t.on_ack_received(now, &pkt(1, Kind::Ack, 0, 1000, 0, flags::ECE));
        t.on_data_sent(now, &pkt(1, Kind::Data, 1000, 0, 1000, 0));
        assert_eq!(t.rows.len(), 4);
        assert!(!t.rows[0].retx && !t.rows[1].retx);
        assert!(t.rows[1].cwr && !t.rows[1].ece);
        assert_eq!(t.rows[2].what, SEQ_ACK);
        assert_eq!(t.rows[2].seq, 1000);
        assert!(t.rows[2].ece);
        assert!(t.rows[3].retx);
        assert!(t.rows.iter().all(|r| r.flow == FlowId(1)));
    }
}

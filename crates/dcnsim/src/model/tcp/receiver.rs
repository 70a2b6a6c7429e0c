//! The TCP receiver: cumulative ACKs, out-of-order buffering with RFC 2018 SACK blocks and
//! RFC 2883 D-SACK, RFC 1122 §4.2.3.2 delayed ACK, RFC 7323 TS.Recent, and the ECE
//! feedback policies (`EcnRxPolicy`).

use super::sack::insert_range;
use super::{EcnRxPolicy, TcpFlow, Timer};
use crate::base::packet::{flags, Ecn, Kind, Packet, SackBlocks};
use crate::base::units::SimTime;

#[derive(Clone, Debug)]
pub struct Receiver {
    pub started: bool,
    pub rcv_nxt: u64,
    /// Out-of-order data and the SACK blocks last sent: the receiver's cold part, allocated
    /// at the first out-of-order segment (most flows never see one) and kept from then on.
    pub reorder: Option<Box<RcvReorder>>,
    /// In-order segments received since the last ACK sent.
    pub unacked_segs: u32,
    pub delack_timer: Timer,
    /// DCTCP/ODCTCP receiver: CE of the last data segment (RFC 8257 §3.2).
    pub ce_state: bool,
    /// Standard receiver: ECE latched until CWR (RFC 3168 §6.1.3).
    pub ece_latched: bool,
    /// Start of the segment that triggered the ACK being built, if it was out of order
    /// (u64::MAX: none) — its block goes first (RFC 2018 §4).
    pub sack_recent: u64,
    /// RFC 7323 §4.3 TS.Recent and Last.ACK.sent.
    pub ts_recent: SimTime,
    pub last_ack_sent: u64,
    /// A duplicate segment to report in the next ACK (RFC 2883); `(0, 0)` = none.
    pub dsack: (u64, u64),
    /// Cumulative ACK of the last ACK sent after the handshake (`dup_acks_sent`); u64::MAX:
    /// none yet (no ACK number reaches it).
    pub prev_ack: u64,
}

/// The receiver's out-of-order state ([`Receiver::reorder`]).
#[derive(Clone, Debug, Default)]
pub struct RcvReorder {
    /// Out-of-order ranges [start, end), sorted and disjoint.
    pub ooo: Vec<(u64, u64)>,
    /// The blocks of the last SACK sent, repeated in later ACKs (RFC 2018 §4).
    pub sack_last: [(u64, u64); 3],
}

impl Receiver {
    /// Out-of-order ranges [start, end), sorted and disjoint (empty: none).
    #[inline]
    pub fn ooo(&self) -> &[(u64, u64)] {
        match &self.reorder {
            Some(r) => &r.ooo,
            None => &[],
        }
    }
}

impl TcpFlow {
    /// An ACK for everything received in order, with the receiver's ECE, ECT and SACK.
    /// An ACK of data (not a SYN-ACK), counted in `dup_acks_sent` when it repeats the
    /// previous one's cumulative ACK.
    pub(super) fn data_ack(&mut self, now: SimTime) -> Packet {
        let a = self.ack_packet(now);
        if self.rcv.prev_ack == a.ack {
            self.stats.dup_acks_sent += 1;
        }
        self.rcv.prev_ack = a.ack;
        a
    }

    pub(super) fn ack_packet(&mut self, now: SimTime) -> Packet {
        let mut p = self.template(now);
        p.kind = Kind::Ack;
        p.src = self.dst;
        p.dst = self.src;
        p.ack = self.rcv.rcv_nxt;
        let ece = match self.cfg.ecn_rx {
            EcnRxPolicy::Off => false,
            EcnRxPolicy::Standard => self.rcv.ece_latched,
            EcnRxPolicy::Dctcp | EcnRxPolicy::Odctcp => {
                p.ecn = Ecn::Ect0; // a DCTCP host sets ECT on all packets
                self.rcv.ce_state
            }
        };
        if ece {
            p.flags |= flags::ECE;
        }
        if self.cfg.sack && !self.rcv.ooo().is_empty() {
            p.sack = self.sack_blocks();
        }
        if self.rcv.dsack.1 > self.rcv.dsack.0 {
            p.sack = p.sack.with_dsack(p.ack, self.rcv.dsack);
            self.rcv.dsack = (0, 0);
        }
        if self.cfg.timestamps {
            // RFC 7323 §4.3 (3): echo TS.Recent; an ACK's `seq` carries TSecr + 1.
            p.seq = self.rcv.ts_recent.0 + 1;
            self.rcv.last_ack_sent = self.rcv.rcv_nxt;
        }
        self.rcv.unacked_segs = 0;
        self.rcv.delack_timer.stop();
        self.stats.acks_sent += 1;
        p
    }

    /// RFC 2018 §4: the block holding the segment that triggered this ACK first, then the
    /// most recently reported blocks still above RCV.NXT, then other blocks in ascending
    /// order; at most three.
    pub(super) fn sack_blocks(&mut self) -> SackBlocks {
        let rcv_nxt = self.rcv.rcv_nxt;
        let sack_recent = self.rcv.sack_recent;
        let Some(r) = self.rcv.reorder.as_deref_mut() else {
            return SackBlocks::encode(rcv_nxt, &[]);
        };
        let mut b = [(0u64, 0u64); 3];
        let mut n = 0;
        // The range holding `x`: the first that ends after it, if it starts at or before
        // it (the ranges are sorted and disjoint).
        let containing = |ooo: &[(u64, u64)], x: u64| {
            let i = ooo.partition_point(|&(_, e)| e <= x);
            ooo.get(i).copied().filter(|&(s, _)| s <= x)
        };
        let push = |blk: (u64, u64), b: &mut [(u64, u64); 3], n: &mut usize| {
            if *n < 3 && !b[..*n].contains(&blk) {
                b[*n] = blk;
                *n += 1;
            }
        };
        if sack_recent != u64::MAX {
            if let Some(blk) = containing(&r.ooo, sack_recent) {
                push(blk, &mut b, &mut n);
            }
        }
        for i in 0..3 {
            let (s, e) = r.sack_last[i];
            if e > s && s >= rcv_nxt {
                if let Some(blk) = containing(&r.ooo, s) {
                    push(blk, &mut b, &mut n);
                }
            }
        }
        for &blk in &r.ooo {
            if n == 3 {
                break;
            }
            push(blk, &mut b, &mut n);
        }
        r.sack_last = b;
        SackBlocks::encode(rcv_nxt, &b[..n])
    }

    /// Process a segment arriving at the receiver; ACKs go to `out`.
    pub fn on_segment(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        if self.cfg.timestamps
            && p.seq <= self.rcv.last_ack_sent
            && p.sent_time >= self.rcv.ts_recent
        {
            // RFC 7323 §4.3 (2): TS.Recent from a segment at or below Last.ACK.sent, so a
            // delayed ACK echoes the earliest unacknowledged segment and an out-of-order
            // segment does not move it; a retransmission that fills the hole does.
            self.rcv.ts_recent = p.sent_time;
        }
        if p.kind == Kind::Syn {
            self.rcv.started = true;
            let mut a = self.ack_packet(now);
            a.kind = Kind::SynAck;
            a.flags = 0;
            out.push(a);
            return;
        }
        self.rcv.started = true;
        self.rcv.sack_recent = u64::MAX;
        let mut immediate = false;
        let ce = p.ecn == Ecn::Ce;
        if ce {
            self.stats.ce_received += 1;
        }
        match self.cfg.ecn_rx {
            EcnRxPolicy::Off => {}
            EcnRxPolicy::Standard => {
                // RFC 3168 §6.1.3: CWR clears the latch, CE sets it; CE wins (Linux, ns-2
                // process CE after CWR).
                if p.flags & flags::CWR != 0 {
                    self.rcv.ece_latched = false;
                }
                if ce {
                    self.rcv.ece_latched = true;
                }
            }
            EcnRxPolicy::Dctcp | EcnRxPolicy::Odctcp => {
                if ce != self.rcv.ce_state {
                    let keep_delack =
                        self.cfg.ecn_rx == EcnRxPolicy::Odctcp && p.flags & flags::CWR != 0;
                    if !keep_delack {
                        // RFC 8257 §3.2 with the two-ACK scheme: a pending delayed ACK goes
                        // out first with the old ECE value, then the new state at once.
                        if self.rcv.unacked_segs > 0 {
                            let a = self.data_ack(now);
                            out.push(a);
                        }
                        immediate = true;
                    }
                    self.rcv.ce_state = ce;
                }
            }
        }
        let start = p.seq;
        let end = p.seq + p.payload as u64;
        if start == self.rcv.rcv_nxt {
            self.rcv.rcv_nxt = end;
            if let Some(r) = self
                .rcv
                .reorder
                .as_deref_mut()
                .filter(|r| !r.ooo.is_empty())
            {
                // This segment fills (part of) a hole: ACK at once (RFC 5681 §4.2).
                immediate = true;
                // The ranges now at or below RCV.NXT are a prefix of the sorted list: a
                // range above it stays, and so do all after it.
                let mut k = 0;
                while let Some(&(s, e)) = r.ooo.get(k) {
                    if s > self.rcv.rcv_nxt {
                        break;
                    }
                    self.rcv.rcv_nxt = self.rcv.rcv_nxt.max(e);
                    k += 1;
                }
                r.ooo.drain(..k);
            }
        } else if start > self.rcv.rcv_nxt {
            // Out of order: buffer and send an immediate duplicate ACK.
            let r = self.rcv.reorder.get_or_insert_with(Default::default);
            if !insert_range(&mut r.ooo, start, end) && self.cfg.dsack {
                self.rcv.dsack = (start, end); // RFC 2883: a duplicate above RCV.NXT
            }
            self.rcv.sack_recent = start;
            immediate = true;
        } else {
            // Old or partly old data: ACK at once so the sender learns rcv_nxt.
            if self.cfg.dsack {
                self.rcv.dsack = (start, end.min(self.rcv.rcv_nxt)); // RFC 2883 §4
            }
            if end > self.rcv.rcv_nxt {
                self.rcv.rcv_nxt = end;
            }
            immediate = true;
        }
        self.rcv.unacked_segs += 1;
        if immediate || self.rcv.unacked_segs >= self.cfg.delack_count {
            let a = self.data_ack(now);
            out.push(a);
        } else if !self.rcv.delack_timer.armed() {
            self.rcv.delack_timer.set(now + self.cfg.delack_timeout);
        }
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.rcv.unacked_segs > 0 {
            self.rcv.sack_recent = u64::MAX;
            let a = self.data_ack(now);
            out.push(a);
        }
    }
}

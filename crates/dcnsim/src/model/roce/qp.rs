//! The RoCEv2 queue pair (reliable connection): the requester's NIC at the source, the
//! responder's NIC at the destination, and the congestion control between them
//! ([`RoceCc`]). `docs/models.md` §12 describes the model and its sources; the transport
//! contract is met in `model/transport/roce.rs`, as TCP's is.
//!
//! The sender never pushes: the NIC's transmit scheduler asks [`RoceFlow::ready`] (the
//! contract's `nic_ready`) when the queue pair's rate limiter lets its next packet go and
//! pulls it with [`RoceFlow::pull`] (`nic_pull`) when the host's port is free. The limiter
//! spaces packets by their own size at the controller's current rate: the next packet may
//! start one serialisation time (at `cc.rate()`, read when asked, so a rate change moves
//! the pending start) after the last one started.
//!
//! Fields of the packets (the engine reads only the common ones):
//! - data (`Kind::Data`): `seq` = byte offset of the first payload byte, `flags::FIN` on
//!   the last packet of a message (the BTH's "last"/"only" opcodes), ECT(0), `sent_time` =
//!   the NIC's transmit timestamp.
//! - ACK / NACK (`Kind::Ack`, `flags::NACK` on a NACK): `ack` = the next byte the responder
//!   expects (cumulative: every byte below it arrived), `seq` = the `sent_time` of the data
//!   packet that triggered it, in picoseconds (the timestamp echo the sender's RTT sample
//!   is taken from), `flags::ECE` when it echoes a CE mark (`CnpPolicy::PerAck`), `sack` =
//!   the out-of-order byte ranges the responder holds (selective repeat only).
//! - CNP (`Kind::Ack` with `flags::CNP`): no other field is read.
//!
//! Stale feedback, ignored whole (counted in `stale_feedback`): an ACK whose `ack` is not
//! above the sender's cumulative point (a re-ACK of a duplicate, or one overtaken by a
//! later ACK), a NACK whose `ack` is below it, any ACK or NACK acknowledging bytes never
//! sent, and under go-back-N a NACK for the byte the sender already went back to.

use std::collections::VecDeque;

use crate::base::ids::{FlowId, NodeId};
use crate::base::int::IntHop;
use crate::base::packet::{flags, Ecn, Kind, Packet, SackBlocks};
use crate::base::timer::LazyTimer;
use crate::base::units::{RateBps, SimTime};
use crate::model::roce::cc::{AckInfo, RateControl, RoceCc, CC_TIMERS};

/// Timer 0: the sender's retransmission timer (go-back-N's timeout, or IRN's RTO_low /
/// RTO_high).
pub const RTO_TIMER: u8 = 0;
/// Timer `t` of the congestion control is the queue pair's timer `CC_TIMER_BASE + t`.
pub const CC_TIMER_BASE: u8 = 8;

/// Bytes of a data packet besides its payload: Ethernet header 14, IPv4 20, UDP 8, BTH 12,
/// ICRC 4, Ethernet FCS 4 (InfiniBand Architecture Specification, Annex A17 (RoCEv2);
/// preamble and inter-frame gap not counted, as for every frame in dcnsim).
pub const DATA_HEADER: u32 = 62;
/// An ACK or NACK on the wire: the data packet's headers plus the 4-byte AETH.
pub const ACK_SIZE: u32 = 66;
/// A CNP on the wire: the data packet's headers plus the 16 reserved bytes after the BTH
/// (Annex A17).
pub const CNP_SIZE: u32 = 78;

/// How lost packets are recovered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossRecovery {
    /// RoCE's: the responder drops out-of-order packets and NACKs the byte it expects; the
    /// requester resends everything from there.
    GoBackN,
    /// IRN's (Mittal et al., "Revisiting Network Support for RDMA", SIGCOMM 2018): the
    /// responder keeps out-of-order packets and NACKs each, listing what it holds; the
    /// requester resends only the holes.
    SelectiveRepeat,
}

/// When the responder (the notification point) tells the requester about CE marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CnpPolicy {
    /// A CNP when CE-marked data arrives, at most one per flow per interval (DCQCN: 50 µs).
    Interval(SimTime),
    /// No CNP: the next ACK or NACK echoes the mark (`flags::ECE`).
    PerAck,
}

/// IRN's two retransmission timeouts: `low` when at most `n` packets are outstanding,
/// `high` otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IrnTimeouts {
    pub low: SimTime,
    pub high: SimTime,
    pub n: u32,
}

/// A queue pair's constants (`docs/models.md` §12 gives their sources).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoceConfig {
    /// Payload bytes of a full packet (the path MTU's payload: 1000, or 4096).
    pub mtu: u32,
    /// Wire bytes of a data packet besides the payload.
    pub data_header: u32,
    /// Wire bytes of an ACK or NACK, and of a CNP.
    pub ack_size: u32,
    pub cnp_size: u32,
    /// ACK every this many in-order packets (1: each); the last packet of a message is
    /// always acknowledged at once.
    pub ack_every: u32,
    pub recovery: LossRecovery,
    /// Cap on the bytes in flight (None: none; the comparison simulator's window is one
    /// bandwidth-delay product). The controller's own window, if any, caps too.
    pub window: Option<u64>,
    /// With `window`: scale it by the limiter's rate over this line rate (the HPCC authors'
    /// simulator's `VAR_WIN`, which its "+w" DCQCN and TIMELY runs use): the window stays one
    /// bandwidth-delay product at the current rate.
    pub window_line: Option<RateBps>,
    /// Go-back-N's retransmission timeout.
    pub rto: SimTime,
    /// Selective repeat's timeouts.
    pub irn: IrnTimeouts,
    pub cnp: CnpPolicy,
    /// Traffic class of the data packets, and of ACKs, NACKs and CNPs (a higher priority:
    /// class 0 is the strict-priority class of a multi-queue port).
    pub data_class: u8,
    pub ctrl_class: u8,
    /// Data packets collect INT hop records (`flags::INT`) and ACKs and NACKs echo them
    /// (HPCC); `data_header` and `ack_size` then include the INT header.
    pub int: bool,
}

impl Default for RoceConfig {
    fn default() -> Self {
        RoceConfig {
            mtu: 1000,
            data_header: DATA_HEADER,
            ack_size: ACK_SIZE,
            cnp_size: CNP_SIZE,
            ack_every: 1,
            recovery: LossRecovery::GoBackN,
            window: None,
            window_line: None,
            // The IBA's local ACK timeout is 4.096 µs · 2^n; n = 8.
            rto: SimTime(4_096_000 << 8),
            irn: IrnTimeouts {
                low: SimTime::from_us(100),
                high: SimTime::from_us(320),
                n: 3,
            },
            cnp: CnpPolicy::Interval(SimTime::from_us(50)),
            data_class: 1,
            ctrl_class: 0,
            int: false,
        }
    }
}

/// The requester's state (the source host's NIC).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoceSender {
    /// Bytes the application has written (`u64::MAX`: unlimited).
    pub written: u64,
    /// End offsets of the messages not yet wholly acknowledged, in order (packets never
    /// span two messages).
    pub msg_ends: VecDeque<u64>,
    /// Every byte below `snd_una` is acknowledged; `snd_nxt` is the next byte of the
    /// in-order stream to send (go-back-N moves it back); `snd_max` the highest sent.
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    /// Start and wire size of the last packet sent (size 0: none yet).
    pub last_start: SimTime,
    pub last_size: u32,
    pub rto: LazyTimer,
    /// Go-back-N: the byte the sender last went back to (a NACK for it again is stale).
    pub went_back_to: Option<u64>,
    /// Selective repeat: byte ranges above `snd_una` the responder holds, sorted, disjoint.
    pub sacked: Vec<(u64, u64)>,
    /// Selective repeat: in loss recovery until `snd_una` reaches `recover`; the holes
    /// below `lost_upto` are resent once each, in order, the next from `rexmit_next`.
    pub in_recovery: bool,
    pub recover: u64,
    pub lost_upto: u64,
    pub rexmit_next: u64,
    pub segs_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub nack_recoveries: u64,
    pub acks_received: u64,
    pub nacks_received: u64,
    pub cnps_received: u64,
    pub stale_feedback: u64,
    /// The last RTT sample (from the echoed timestamp).
    pub last_rtt: SimTime,
}

/// The responder's state (the destination host's NIC).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RoceReceiver {
    /// The next byte expected; every byte below it was delivered, in order.
    pub rcv_nxt: u64,
    /// Selective repeat: out-of-order byte ranges held, sorted, disjoint, above `rcv_nxt`.
    pub ooo: Vec<(u64, u64)>,
    /// In-order packets since the last ACK or NACK.
    pub unacked: u32,
    /// Go-back-N: the expected byte a NACK went out for (one NACK per gap).
    pub nacked: Option<u64>,
    /// A CE mark arrived since the last ACK or NACK (`CnpPolicy::PerAck`).
    pub ce_pending: bool,
    pub last_cnp: Option<SimTime>,
    pub pkts_received: u64,
    pub dup_received: u64,
    /// Out-of-order arrivals (dropped under go-back-N, held under selective repeat).
    pub ooo_received: u64,
    pub ce_received: u64,
    pub acks_sent: u64,
    pub nacks_sent: u64,
    pub cnps_sent: u64,
}

/// One RoCEv2 reliable-connection queue pair: a requester at `src`, a responder at `dst`.
#[derive(Clone, Debug, PartialEq)]
pub struct RoceFlow {
    pub id: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    pub cfg: RoceConfig,
    /// Boxed: a controller's state (DCQCN's) would make the queue pair larger than a TCP
    /// flow, the size of every endpoint (the registry's test).
    pub cc: Box<RoceCc>,
    pub sender: RoceSender,
    pub receiver: RoceReceiver,
}

/// Add `[a, b)` to sorted disjoint ranges, merging those it touches.
fn add_range(v: &mut Vec<(u64, u64)>, a: u64, b: u64) {
    let i = v.partition_point(|r| r.1 < a);
    let (mut lo, mut hi, mut j) = (a, b, i);
    while j < v.len() && v[j].0 <= hi {
        lo = lo.min(v[j].0);
        hi = hi.max(v[j].1);
        j += 1;
    }
    v.splice(i..j, [(lo, hi)]);
}

/// Drop the parts of sorted ranges below `at`.
fn trim_below(v: &mut Vec<(u64, u64)>, at: u64) {
    v.retain(|r| r.1 > at);
    if let Some(r) = v.first_mut() {
        r.0 = r.0.max(at);
    }
}

/// What the sender sends next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// A hole selective repeat resends.
    Hole(u64),
    /// The in-order stream at `snd_nxt` (a retransmission when below `snd_max`).
    Stream(u64),
}

impl RoceFlow {
    /// A queue pair from `src` to `dst`. Its id is set when the engine adds it.
    pub fn new(src: NodeId, dst: NodeId, cfg: RoceConfig, cc: RoceCc) -> Self {
        assert!(cfg.mtu > 0, "a RoCE packet carries payload");
        assert!(cfg.ack_every > 0, "ACK every 0 packets");
        assert!(cc.rate().0 > 0, "a queue pair needs a rate");
        RoceFlow {
            id: FlowId(0),
            src,
            dst,
            cfg,
            cc: Box::new(cc),
            sender: RoceSender::default(),
            receiver: RoceReceiver::default(),
        }
    }

    fn selective(&self) -> bool {
        self.cfg.recovery == LossRecovery::SelectiveRepeat
    }

    /// The end of the message byte `seq` belongs to.
    fn msg_end(&self, seq: u64) -> u64 {
        let s = &self.sender;
        let i = s.msg_ends.partition_point(|&e| e <= seq);
        s.msg_ends.get(i).copied().unwrap_or(s.written)
    }

    /// The cap on bytes in flight: the configured window and the controller's, if any.
    pub fn window_cap(&self) -> Option<u64> {
        let own = match (self.cfg.window, self.cfg.window_line) {
            (Some(w), Some(line)) => {
                let r = self.cc.rate().0 as u128;
                Some(((w as u128 * r / line.0.max(1) as u128) as u64).max(1))
            }
            (w, _) => w,
        };
        match (own, self.cc.window()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Bytes in flight for the window: the span from `snd_una` to the next new byte (as
    /// the comparison simulator and IRN's BDP cap count it).
    pub fn in_flight(&self) -> u64 {
        let s = &self.sender;
        if self.selective() {
            s.snd_max - s.snd_una
        } else {
            s.snd_nxt - s.snd_una
        }
    }

    /// Selective repeat in recovery: the next hole to resend.
    fn next_hole(&self) -> Option<u64> {
        let s = &self.sender;
        if !s.in_recovery {
            return None;
        }
        let mut at = s.rexmit_next.max(s.snd_una);
        for &(a, b) in &s.sacked {
            if b <= at {
                continue;
            }
            if a > at {
                break;
            }
            at = b;
        }
        (at < s.lost_upto).then_some(at)
    }

    /// What may be sent next, if anything: a hole first, then the stream if the window
    /// allows (holes resent under selective repeat do not widen the span in flight).
    fn next_to_send(&self) -> Option<Next> {
        if let Some(h) = self.next_hole() {
            return Some(Next::Hole(h));
        }
        let s = &self.sender;
        if s.snd_nxt >= s.written {
            return None;
        }
        if self.window_cap().is_some_and(|w| self.in_flight() >= w) {
            return None;
        }
        Some(Next::Stream(s.snd_nxt))
    }

    /// When the rate limiter lets the next packet start.
    pub fn limiter_free(&self) -> SimTime {
        let s = &self.sender;
        if s.last_size == 0 {
            return SimTime::ZERO;
        }
        s.last_start + self.cc.rate().tx_time(s.last_size)
    }

    /// Outstanding packets not known to have arrived (IRN's timeout choice).
    fn outstanding_pkts(&self) -> u64 {
        let s = &self.sender;
        let held: u64 = s.sacked.iter().map(|r| r.1 - r.0).sum();
        (s.snd_max - s.snd_una - held).div_ceil(self.cfg.mtu as u64)
    }

    fn arm_rto(&mut self, now: SimTime) {
        let d = if self.selective() {
            let irn = self.cfg.irn;
            if self.outstanding_pkts() <= irn.n as u64 {
                irn.low
            } else {
                irn.high
            }
        } else {
            self.cfg.rto
        };
        self.sender.rto.set(now + d);
    }

    /// The retransmission timer fired: go back to `snd_una` (go-back-N), or resend every
    /// byte not known to have arrived (selective repeat).
    fn on_rto(&mut self) {
        let s = &mut self.sender;
        if s.snd_una >= s.snd_max {
            return;
        }
        s.timeouts += 1;
        if self.cfg.recovery == LossRecovery::SelectiveRepeat {
            s.in_recovery = true;
            s.recover = s.snd_max;
            s.lost_upto = s.snd_max;
            s.rexmit_next = s.snd_una;
        } else {
            s.snd_nxt = s.snd_una;
            s.went_back_to = Some(s.snd_una);
        }
    }

    /// Whether feedback carrying `ack` is stale (module documentation).
    fn is_stale(&self, ack: u64, nack: bool) -> bool {
        let s = &self.sender;
        if ack > s.snd_max || ack < s.snd_una {
            return true;
        }
        if !nack {
            return ack == s.snd_una;
        }
        !self.selective() && s.went_back_to == Some(ack)
    }

    /// The cumulative point moved to `ack` (above `snd_una`).
    fn advance(&mut self, now: SimTime, ack: u64) {
        let sel = self.selective();
        let s = &mut self.sender;
        s.snd_una = ack;
        s.snd_nxt = s.snd_nxt.max(ack);
        while s.msg_ends.front().is_some_and(|&e| e <= ack) {
            s.msg_ends.pop_front();
        }
        if sel {
            trim_below(&mut s.sacked, ack);
            if s.in_recovery && ack >= s.recover {
                s.in_recovery = false;
            }
        }
        if s.snd_una >= s.snd_max {
            s.rto.stop();
        } else {
            self.arm_rto(now);
        }
    }

    /// A NACK (already checked not stale, its cumulative part taken).
    fn on_nack(&mut self, p: &Packet) {
        let s = &mut self.sender;
        s.nacks_received += 1;
        if self.cfg.recovery == LossRecovery::GoBackN {
            s.snd_nxt = p.ack;
            s.went_back_to = Some(p.ack);
            s.nack_recoveries += 1;
            return;
        }
        let highest = s.sacked.last().map_or(s.snd_una, |r| r.1);
        if !s.in_recovery {
            s.in_recovery = true;
            s.recover = s.snd_max;
            s.rexmit_next = s.snd_una;
            s.lost_upto = highest;
            s.nack_recoveries += 1;
        }
        s.lost_upto = s.lost_upto.max(highest);
    }

    /// Build the ACK or NACK for data packet `p` (responder side).
    fn send_ack(&mut self, now: SimTime, p: &Packet, nack: bool, out: &mut Vec<Packet>) {
        let r = &mut self.receiver;
        let mut fl = if nack { flags::NACK } else { 0 };
        if r.ce_pending {
            fl |= flags::ECE;
        }
        let sack = if r.ooo.is_empty() {
            SackBlocks::EMPTY
        } else {
            // The block holding the packet that triggered it first, then the others.
            let seq = p.seq;
            let first = r.ooo.iter().copied().find(|b| b.0 <= seq && seq < b.1);
            let mut blocks = [(0, 0); 3];
            let mut n = 0;
            for b in first.into_iter().chain(r.ooo.iter().copied()) {
                if n == 3 || (n > 0 && Some(b) == first) {
                    continue;
                }
                blocks[n] = b;
                n += 1;
            }
            SackBlocks::encode(r.rcv_nxt, &blocks[..n])
        };
        let fl = fl | self.int_flag();
        let r = &mut self.receiver;
        out.push(Packet {
            seq: p.sent_time.ps(),
            ack: r.rcv_nxt,
            flags: fl,
            class: self.cfg.ctrl_class,
            enq_time: now,
            sent_time: now,
            sack,
            ..Packet::new(
                Kind::Ack,
                self.id,
                (self.dst, self.src),
                self.cfg.ack_size,
                0,
            )
        });
        if nack {
            r.nacks_sent += 1;
        } else {
            r.acks_sent += 1;
        }
        r.unacked = 0;
        r.ce_pending = false;
    }

    /// `flags::INT` when the queue pair collects INT records, else 0.
    #[inline]
    fn int_flag(&self) -> u8 {
        if self.cfg.int {
            flags::INT
        } else {
            0
        }
    }

    /// A CE-marked data packet arrived at the responder.
    fn on_ce(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let r = &mut self.receiver;
        r.ce_received += 1;
        match self.cfg.cnp {
            CnpPolicy::PerAck => r.ce_pending = true,
            CnpPolicy::Interval(t) => {
                if r.last_cnp.is_some_and(|l| now < l + t) {
                    return;
                }
                r.last_cnp = Some(now);
                r.cnps_sent += 1;
                out.push(Packet {
                    flags: flags::CNP,
                    class: self.cfg.ctrl_class,
                    enq_time: now,
                    sent_time: now,
                    ..Packet::new(
                        Kind::Ack,
                        self.id,
                        (self.dst, self.src),
                        self.cfg.cnp_size,
                        0,
                    )
                });
            }
        }
    }

    /// The responder takes the next in-order packet `p`.
    fn in_order(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        let r = &mut self.receiver;
        let filled = !r.ooo.is_empty();
        r.rcv_nxt = p.seq + p.payload as u64;
        while r.ooo.first().is_some_and(|b| b.0 <= r.rcv_nxt) {
            r.rcv_nxt = r.rcv_nxt.max(r.ooo.remove(0).1);
        }
        r.unacked += 1;
        if filled || p.flags & flags::FIN != 0 || r.unacked >= self.cfg.ack_every {
            self.send_ack(now, p, false, out);
        }
    }

    /// The responder takes `p`, above the byte it expects.
    fn out_of_order(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        let r = &mut self.receiver;
        r.ooo_received += 1;
        if self.cfg.recovery == LossRecovery::GoBackN {
            // Dropped; one NACK per expected byte, until it arrives.
            if r.nacked != Some(r.rcv_nxt) {
                r.nacked = Some(r.rcv_nxt);
                self.send_ack(now, p, true, out);
            }
            return;
        }
        add_range(&mut r.ooo, p.seq, p.seq + p.payload as u64);
        self.send_ack(now, p, true, out);
    }

    fn check_ranges(v: &[(u64, u64)], above: u64, what: &str) -> Result<(), String> {
        let mut prev = above;
        for &(a, b) in v {
            if a < prev || b <= a {
                return Err(format!("{what} ranges {v:?} not sorted above {above}"));
            }
            prev = b + 1;
        }
        Ok(())
    }
}

/// What the transport contract (`model/transport/roce.rs`) calls.
impl RoceFlow {
    /// The responder takes a data packet (`Kind::Data`; others are ignored) at `now`;
    /// its ACK, NACK or CNP go to `out`, to be sent from `dst`.
    pub fn receive_data(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        if p.kind != Kind::Data {
            return;
        }
        self.receiver.pkts_received += 1;
        if p.ecn == Ecn::Ce {
            self.on_ce(now, out);
        }
        let expected = self.receiver.rcv_nxt;
        if p.seq == expected {
            self.in_order(now, p, out);
        } else if p.seq > expected {
            self.out_of_order(now, p, out);
        } else {
            self.receiver.dup_received += 1;
            self.send_ack(now, p, false, out);
        }
    }

    /// The requester takes an ACK, NACK or CNP at `now` (it sends nothing in reply: the
    /// NIC pulls).
    pub fn receive_feedback(&mut self, now: SimTime, p: &Packet) {
        self.receive_feedback_int(now, p, &[])
    }

    /// [`RoceFlow::receive_feedback`] of an ACK that echoes INT hop records (`int`).
    pub fn receive_feedback_int(&mut self, now: SimTime, p: &Packet, int: &[IntHop]) {
        if p.kind != Kind::Ack {
            return;
        }
        if p.flags & flags::CNP != 0 {
            self.sender.cnps_received += 1;
            self.cc.on_cnp(now);
            return;
        }
        let nack = p.flags & flags::NACK != 0;
        if self.is_stale(p.ack, nack) {
            self.sender.stale_feedback += 1;
            return;
        }
        let acked = p.ack - self.sender.snd_una;
        if acked > 0 {
            self.advance(now, p.ack);
        }
        if self.selective() {
            let s = &mut self.sender;
            for (a, b) in p.sack.decode(p.ack) {
                if b <= s.snd_max {
                    add_range(&mut s.sacked, a, b);
                }
            }
        }
        if nack {
            self.on_nack(p);
        } else {
            self.sender.acks_received += 1;
        }
        let rtt = now - SimTime(p.seq);
        self.sender.last_rtt = rtt;
        let ce_echo = p.flags & flags::ECE != 0;
        self.cc.on_ack(
            now,
            &AckInfo {
                acked,
                ce_echo,
                rtt,
                int,
                snd_una: self.sender.snd_una,
                snd_nxt: self.sender.snd_nxt,
            },
        );
    }

    /// The application posts a message of `bytes` (`u64::MAX`: an unlimited stream).
    pub fn write(&mut self, bytes: u64) {
        let s = &mut self.sender;
        if bytes == 0 || s.written == u64::MAX {
            return;
        }
        s.written = s.written.saturating_add(bytes);
        s.msg_ends.push_back(s.written);
    }

    /// A timer deadline that needs an engine event, as (timer number, time): the
    /// retransmission timer ([`RTO_TIMER`]) first, then the controller's
    /// (`CC_TIMER_BASE + t`).
    pub fn take_timer_event(&mut self) -> Option<(u8, SimTime)> {
        if let Some(at) = self.sender.rto.take_event() {
            return Some((RTO_TIMER, at));
        }
        self.cc.next_timer().map(|(t, at)| (CC_TIMER_BASE + t, at))
    }

    /// An event for timer `k` fired at `now`: whether it is due.
    pub fn timer_fired(&mut self, now: SimTime, k: u8) -> bool {
        match k {
            RTO_TIMER => self.sender.rto.fire(now),
            _ if (CC_TIMER_BASE..CC_TIMER_BASE + CC_TIMERS).contains(&k) => {
                self.cc.timer_due(now, k - CC_TIMER_BASE)
            }
            _ => false,
        }
    }

    /// Run due timer `k` (it sends nothing itself: a timeout changes what the NIC pulls).
    pub fn run_timer(&mut self, now: SimTime, k: u8) {
        match k {
            RTO_TIMER => self.on_rto(),
            _ if k >= CC_TIMER_BASE => self.cc.on_timer(now, k - CC_TIMER_BASE),
            _ => {}
        }
    }

    /// When the next packet may leave (the rate limiter's time), None if none may.
    pub fn ready(&self) -> Option<SimTime> {
        self.next_to_send()?;
        Some(self.limiter_free())
    }

    /// The NIC's port is free at `now`: the next packet, if one may leave now.
    pub fn pull(&mut self, now: SimTime) -> Option<Packet> {
        if now < self.limiter_free() {
            return None;
        }
        let next = self.next_to_send()?;
        let seq = match next {
            Next::Hole(q) | Next::Stream(q) => q,
        };
        let msg_end = self.msg_end(seq);
        let payload = (msg_end - seq).min(self.cfg.mtu as u64) as u32;
        let size = payload + self.cfg.data_header;
        let end = seq + payload as u64;
        let s = &mut self.sender;
        let resend = match next {
            Next::Hole(_) => {
                s.rexmit_next = end;
                true
            }
            Next::Stream(_) => {
                s.snd_nxt = end;
                let resend = seq < s.snd_max;
                s.snd_max = s.snd_max.max(end);
                resend
            }
        };
        s.segs_sent += 1;
        s.retransmits += resend as u64;
        (s.last_start, s.last_size) = (now, size);
        if !s.rto.armed() {
            self.arm_rto(now);
        }
        self.cc.on_sent(now, size);
        Some(Packet {
            seq,
            flags: if end == msg_end { flags::FIN } else { 0 } | self.int_flag(),
            ecn: Ecn::Ect0,
            class: self.cfg.data_class,
            enq_time: now,
            sent_time: now,
            ..Packet::new(Kind::Data, self.id, (self.src, self.dst), size, payload)
        })
    }

    /// A message of `bytes` on the wire: (bytes of its first packet, bytes of all its
    /// packets), headers included.
    pub fn message_wire_bytes(&self, bytes: u64) -> (u32, u64) {
        let (mtu, h) = (self.cfg.mtu as u64, self.cfg.data_header as u64);
        if bytes == 0 {
            return (0, 0);
        }
        ((bytes.min(mtu) + h) as u32, bytes + bytes.div_ceil(mtu) * h)
    }

    /// The sequence spaces: `snd_una <= snd_nxt <= snd_max <= written`, acknowledged <=
    /// delivered in order <= sent, and the held ranges sorted and disjoint above the
    /// cumulative points.
    pub fn self_check(&self) -> Result<(), String> {
        let (s, r) = (&self.sender, &self.receiver);
        let order = [s.snd_una, s.snd_nxt, s.snd_max, s.written];
        if order.windows(2).any(|w| w[0] > w[1]) {
            return Err(format!(
                "flow {}: snd_una {} snd_nxt {} snd_max {} written {} out of order",
                self.id, order[0], order[1], order[2], order[3]
            ));
        }
        if r.rcv_nxt < s.snd_una || r.rcv_nxt > s.snd_max {
            return Err(format!(
                "flow {}: delivered {} outside [{}, {}]",
                self.id, r.rcv_nxt, s.snd_una, s.snd_max
            ));
        }
        Self::check_ranges(&s.sacked, s.snd_una, "sacked")?;
        Self::check_ranges(&r.ooo, r.rcv_nxt + 1, "out-of-order")
    }
}

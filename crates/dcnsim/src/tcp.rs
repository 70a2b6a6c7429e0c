//! TCP endpoints: a sender with NewReno loss recovery and a receiver with cumulative ACKs,
//! out-of-order buffering and optional delayed ACK.
//!
//! Implements RFC 5681 (slow start, congestion avoidance, fast retransmit), RFC 6582
//! (NewReno partial ACKs, the `recover` variable, "impatient" timer restart on the first
//! partial ACK), RFC 6298 (SRTT/RTTVAR, min/max RTO, granularity G, exponential backoff,
//! Karn's rule by timing one segment at a time) and RFC 1122 §4.2.3.2 delayed ACK.
//!
//! Sequence numbers are byte offsets from 0 (64-bit, no wrap). As in smoltcp, the protocol
//! code never reads a clock: every entry point takes `now`, appends the packets to send to
//! `out` and leaves its timer deadlines in the endpoint for the simulation to arm.

use crate::packet::{Ecn, Kind, Packet};
use crate::units::SimTime;

/// Congestion-control algorithm of a sender: hooks called by the loss-recovery core.
/// Dispatched through an enum (not `Box<dyn>`), one variant per algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcAlgo {
    /// RFC 5681 / RFC 6582.
    NewReno,
}

/// How a receiver turns CE marks into ECE feedback. Chosen apart from the sender's
/// algorithm because seed 001 mixes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnRxPolicy {
    /// Not ECN-capable: ECE is never set.
    Off,
}

/// Per-flow TCP parameters (defaults and their sources in `scenario.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    pub cc: CcAlgo,
    pub ecn_rx: EcnRxPolicy,
    /// Maximum segment size (payload bytes).
    pub mss: u32,
    /// TCP/IP header bytes added to every segment.
    pub header: u32,
    /// Initial congestion window in segments.
    pub init_cwnd: u32,
    /// Initial slow-start threshold in bytes (u64::MAX = unlimited).
    pub init_ssthresh: u64,
    pub min_rto: SimTime,
    pub max_rto: SimTime,
    pub initial_rto: SimTime,
    /// Clock granularity G of RFC 6298.
    pub rto_granularity: SimTime,
    /// ACK every `delack_count` in-order full segments (1 = no delayed ACK).
    pub delack_count: u32,
    pub delack_timeout: SimTime,
    /// Receiver window in bytes (u64::MAX = unlimited).
    pub rwnd: u64,
    /// Three-way handshake before data.
    pub handshake: bool,
    pub dupack_threshold: u32,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            cc: CcAlgo::NewReno,
            ecn_rx: EcnRxPolicy::Off,
            mss: 1460,
            header: 40,
            init_cwnd: 2,
            init_ssthresh: u64::MAX,
            min_rto: SimTime::from_ms(200),
            max_rto: SimTime::from_ms(60_000),
            initial_rto: SimTime::from_ms(1000),
            rto_granularity: SimTime::from_us(1),
            delack_count: 1,
            delack_timeout: SimTime::from_ms(40),
            rwnd: u64::MAX,
            handshake: false,
            dupack_threshold: 3,
        }
    }
}

/// A lazily armed timer: `deadline` is what the protocol wants; `event_at` is the time of
/// the one pending event the simulation holds for it (see DESIGN.md, "Where the time goes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer {
    pub deadline: SimTime,
    pub event_at: SimTime,
}

impl Default for Timer {
    fn default() -> Self {
        Timer {
            deadline: SimTime::NEVER,
            event_at: SimTime::NEVER,
        }
    }
}

impl Timer {
    pub fn armed(&self) -> bool {
        !self.deadline.is_never()
    }
    pub fn set(&mut self, at: SimTime) {
        self.deadline = at;
    }
    pub fn stop(&mut self) {
        self.deadline = SimTime::NEVER;
    }
    /// Whether the simulation must schedule a new event (at `deadline`).
    pub fn needs_event(&self) -> bool {
        self.deadline < self.event_at
    }
    /// Called when an event for this timer fires at `now`. Returns true if the timer is due
    /// (the handler should run). Stale events and early events (the deadline moved later)
    /// return false; for the latter `needs_event` becomes true so the caller re-arms.
    pub fn fire(&mut self, now: SimTime) -> bool {
        if now != self.event_at {
            return false; // stale: a newer, earlier event replaced this one
        }
        self.event_at = SimTime::NEVER;
        if self.deadline.is_never() || self.deadline > now {
            return false;
        }
        self.deadline = SimTime::NEVER;
        true
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SndState {
    /// Not started (no data written yet and no handshake).
    Closed,
    SynSent,
    Established,
}

/// Per-flow counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TcpStats {
    pub segs_sent: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub acks_sent: u64,
    pub acks_received: u64,
}

#[derive(Clone, Debug)]
pub struct Sender {
    pub state: SndState,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest sequence number sent + 1.
    pub snd_max: u64,
    /// Bytes the application has written (absolute sequence bound).
    pub app_limit: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub dupacks: u32,
    pub in_recovery: bool,
    /// RFC 6582 `recover`, kept exclusive: the `snd_max` at the time recovery was entered.
    pub recover: u64,
    /// Whether the current recovery has seen its first partial ACK (timer restart rule).
    pub partial_seen: bool,
    pub srtt: SimTime,
    pub rttvar: SimTime,
    pub have_rtt: bool,
    pub rto: SimTime,
    pub rtt_active: bool,
    pub rtt_seq: u64,
    pub rtt_time: SimTime,
    pub rto_timer: Timer,
    pub syn_time: SimTime,
    pub syn_retx: bool,
}

#[derive(Clone, Debug)]
pub struct Receiver {
    pub started: bool,
    pub rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted and disjoint.
    pub ooo: Vec<(u64, u64)>,
    /// In-order segments received since the last ACK sent.
    pub unacked_segs: u32,
    pub delack_timer: Timer,
    pub ce_state: bool,
}

/// A TCP connection: the sender lives at `src`, the receiver at `dst`.
#[derive(Clone, Debug)]
pub struct TcpFlow {
    pub id: u32,
    pub src: u32,
    pub dst: u32,
    pub cfg: TcpConfig,
    pub snd: Sender,
    pub rcv: Receiver,
    pub stats: TcpStats,
    pub class: u8,
}

/// Timer kinds carried in `Event::TcpTimer`.
pub const TIMER_RTO: u8 = 0;
pub const TIMER_DELACK: u8 = 1;

impl TcpFlow {
    pub fn new(id: u32, src: u32, dst: u32, cfg: TcpConfig) -> TcpFlow {
        let init_cwnd = cfg.init_cwnd as u64 * cfg.mss as u64;
        let rto = cfg.initial_rto;
        TcpFlow {
            id,
            src,
            dst,
            snd: Sender {
                state: SndState::Closed,
                snd_una: 0,
                snd_nxt: 0,
                snd_max: 0,
                app_limit: 0,
                cwnd: init_cwnd,
                ssthresh: cfg.init_ssthresh,
                dupacks: 0,
                in_recovery: false,
                recover: 0,
                partial_seen: false,
                srtt: SimTime::ZERO,
                rttvar: SimTime::ZERO,
                have_rtt: false,
                rto,
                rtt_active: false,
                rtt_seq: 0,
                rtt_time: SimTime::ZERO,
                rto_timer: Timer::default(),
                syn_time: SimTime::ZERO,
                syn_retx: false,
            },
            rcv: Receiver {
                started: false,
                rcv_nxt: 0,
                ooo: Vec::new(),
                unacked_segs: 0,
                delack_timer: Timer::default(),
                ce_state: false,
            },
            stats: TcpStats::default(),
            cfg,
            class: 0,
        }
    }

    fn mss(&self) -> u64 {
        self.cfg.mss as u64
    }

    /// Bytes in flight (RFC 5681 FlightSize).
    pub fn flight(&self) -> u64 {
        self.snd.snd_max - self.snd.snd_una
    }

    /// Bytes delivered in order to the receiving application.
    pub fn delivered(&self) -> u64 {
        self.rcv.rcv_nxt
    }

    fn template(&self, now: SimTime) -> Packet {
        Packet {
            flow: self.id,
            src: self.src,
            dst: self.dst,
            seq: 0,
            ack: 0,
            size: self.cfg.header,
            payload: 0,
            kind: Kind::Data,
            flags: 0,
            ecn: Ecn::NotEct,
            class: self.class,
            enq_time: now,
            sent_time: now,
        }
    }

    // ------------------------------------------------------------------ sender

    /// The application writes `bytes` more to the connection.
    pub fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>) {
        self.snd.app_limit = self.snd.app_limit.saturating_add(bytes);
        match self.snd.state {
            SndState::Closed => {
                if self.cfg.handshake {
                    self.snd.state = SndState::SynSent;
                    self.send_syn(now, out);
                } else {
                    self.snd.state = SndState::Established;
                    self.try_send(now, out);
                }
            }
            SndState::SynSent => {}
            SndState::Established => self.try_send(now, out),
        }
    }

    fn send_syn(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let mut p = self.template(now);
        p.kind = Kind::Syn;
        out.push(p);
        self.snd.syn_time = now;
        self.stats.segs_sent += 1;
        self.snd.rto_timer.set(now + self.snd.rto);
    }

    /// Send as much new (or go-back-N retransmitted) data as the window allows.
    pub fn try_send(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.snd.state != SndState::Established {
            return;
        }
        let mss = self.mss();
        let wnd = self.snd.cwnd.min(self.cfg.rwnd);
        loop {
            let nxt = self.snd.snd_nxt;
            if nxt >= self.snd.app_limit {
                break;
            }
            let len = mss.min(self.snd.app_limit - nxt);
            // Send only whole segments that fit in the window (packet-counting TCPs).
            if nxt + len - self.snd.snd_una > wnd {
                break;
            }
            self.emit_segment(now, nxt, len, out);
            self.snd.snd_nxt = nxt + len;
            if self.snd.snd_nxt > self.snd.snd_max {
                self.snd.snd_max = self.snd.snd_nxt;
            }
        }
    }

    fn emit_segment(&mut self, now: SimTime, seq: u64, len: u64, out: &mut Vec<Packet>) {
        let mut p = self.template(now);
        p.seq = seq;
        p.payload = len as u32;
        p.size = self.cfg.header + len as u32;
        let retx = seq < self.snd.snd_max;
        if retx {
            self.stats.retransmits += 1;
            // Karn: a retransmission invalidates the running RTT measurement.
            if self.snd.rtt_active && self.snd.rtt_seq >= seq {
                self.snd.rtt_active = false;
            }
        } else if !self.snd.rtt_active {
            self.snd.rtt_active = true;
            self.snd.rtt_seq = seq;
            self.snd.rtt_time = now;
        }
        self.stats.segs_sent += 1;
        self.stats.bytes_sent += len;
        out.push(p);
        // RFC 6298 (5.1): start the timer when sending data if it is not running.
        if !self.snd.rto_timer.armed() {
            self.snd.rto_timer.set(now + self.snd.rto);
        }
    }

    fn retransmit_una(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let seq = self.snd.snd_una;
        let len = self.mss().min(self.snd.snd_max - seq);
        if len > 0 {
            self.emit_segment(now, seq, len, out);
        }
    }

    fn rtt_sample(&mut self, r: SimTime) {
        let s = &mut self.snd;
        if !s.have_rtt {
            s.srtt = r;
            s.rttvar = SimTime(r.0 / 2);
            s.have_rtt = true;
        } else {
            let diff = s.srtt.0.abs_diff(r.0);
            s.rttvar = SimTime((3 * s.rttvar.0 + diff) / 4);
            s.srtt = SimTime((7 * s.srtt.0 + r.0) / 8);
        }
        self.snd.rto = self.compute_rto();
    }

    /// RTO := SRTT + max(G, 4·RTTVAR), clamped to [min_rto, max_rto], rounded up to G.
    pub fn compute_rto(&self) -> SimTime {
        let g = self.cfg.rto_granularity.0.max(1);
        let raw = self.snd.srtt.0 + g.max(4 * self.snd.rttvar.0);
        let rounded = raw.div_ceil(g) * g;
        SimTime(rounded.max(self.cfg.min_rto.0).min(self.cfg.max_rto.0))
    }

    /// Process an ACK arriving at the sender.
    pub fn on_ack(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        self.stats.acks_received += 1;
        if p.kind == Kind::SynAck {
            if self.snd.state == SndState::SynSent {
                if !self.snd.syn_retx {
                    self.rtt_sample(now - self.snd.syn_time);
                }
                self.snd.state = SndState::Established;
                self.snd.rto_timer.stop();
                self.try_send(now, out);
            }
            return;
        }
        if self.snd.state != SndState::Established {
            return;
        }
        let a = p.ack;
        let mss = self.mss();
        if a > self.snd.snd_max {
            return; // acknowledges data never sent: ignore (RFC 793)
        }
        if a > self.snd.snd_una {
            let acked = a - self.snd.snd_una;
            if self.snd.rtt_active && a > self.snd.rtt_seq {
                self.snd.rtt_active = false;
                let r = now - self.snd.rtt_time;
                self.rtt_sample(r);
            }
            self.snd.snd_una = a;
            if self.snd.snd_nxt < a {
                self.snd.snd_nxt = a;
            }
            if self.snd.in_recovery {
                if a >= self.snd.recover {
                    // Full ACK (RFC 6582 §3.2 step 3): deflate the window.
                    let flight = self.flight();
                    self.snd.cwnd = self.snd.ssthresh.min(flight.max(mss) + mss);
                    self.snd.in_recovery = false;
                    self.snd.dupacks = 0;
                } else {
                    // Partial ACK: retransmit the next hole, deflate by the amount acked.
                    self.retransmit_una(now, out);
                    self.snd.cwnd = self.snd.cwnd.saturating_sub(acked);
                    if acked >= mss {
                        self.snd.cwnd += mss;
                    }
                    self.snd.cwnd = self.snd.cwnd.max(mss);
                    if !self.snd.partial_seen {
                        self.snd.partial_seen = true;
                        self.snd.rto_timer.set(now + self.snd.rto);
                    }
                    self.try_send(now, out);
                    return;
                }
            } else {
                self.snd.dupacks = 0;
                self.cc_on_ack(acked);
            }
            // RFC 6298 (5.2, 5.3): stop the timer when all data is acked, else restart it.
            if self.snd.snd_una >= self.snd.snd_max {
                self.snd.rto_timer.stop();
            } else {
                self.snd.rto_timer.set(now + self.snd.rto);
            }
            self.try_send(now, out);
        } else if a == self.snd.snd_una && self.snd.snd_max > self.snd.snd_una && p.payload == 0 {
            // Duplicate ACK (RFC 5681 §2).
            self.snd.dupacks += 1;
            if self.snd.in_recovery {
                self.snd.cwnd += mss; // window inflation
                self.try_send(now, out);
            } else if self.snd.dupacks == self.cfg.dupack_threshold && a >= self.snd.recover {
                // Fast retransmit (RFC 6582 §3.2 step 2).
                self.snd.fast_recovery_enter();
                self.stats.fast_recoveries += 1;
                let flight = self.flight();
                self.snd.ssthresh = self.cc_ssthresh_on_loss(flight);
                self.snd.recover = self.snd.snd_max;
                self.retransmit_una(now, out);
                self.snd.cwnd = self.snd.ssthresh + self.cfg.dupack_threshold as u64 * mss;
                self.try_send(now, out);
            }
        }
    }

    fn cc_on_ack(&mut self, acked: u64) {
        let mss = self.mss();
        match self.cfg.cc {
            CcAlgo::NewReno => {
                if self.snd.cwnd < self.snd.ssthresh {
                    // Slow start: one MSS per ACK (RFC 5681 eq. 2, L = 1 SMSS).
                    self.snd.cwnd += acked.min(mss);
                } else {
                    // Congestion avoidance (RFC 5681 eq. 3).
                    self.snd.cwnd += (mss * mss / self.snd.cwnd).max(1);
                }
            }
        }
    }

    fn cc_ssthresh_on_loss(&self, flight: u64) -> u64 {
        match self.cfg.cc {
            CcAlgo::NewReno => (flight / 2).max(2 * self.mss()),
        }
    }

    /// The retransmission timer expired (called by the simulation when due).
    pub fn on_rto(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        match self.snd.state {
            SndState::SynSent => {
                self.stats.timeouts += 1;
                self.snd.syn_retx = true;
                self.snd.rto = SimTime((self.snd.rto.0 * 2).min(self.cfg.max_rto.0));
                self.send_syn(now, out);
            }
            SndState::Established if self.snd.snd_una < self.snd.snd_max => {
                self.stats.timeouts += 1;
                let mss = self.mss();
                let flight = self.flight();
                self.snd.ssthresh = self.cc_ssthresh_on_loss(flight);
                self.snd.cwnd = mss; // loss window (RFC 5681 §3.1)
                self.snd.in_recovery = false;
                self.snd.dupacks = 0;
                self.snd.recover = self.snd.snd_max;
                self.snd.rtt_active = false;
                // Exponential backoff (RFC 6298 5.5).
                self.snd.rto = SimTime((self.snd.rto.0 * 2).min(self.cfg.max_rto.0));
                // Go back N: resend from snd_una as the window opens again.
                self.snd.snd_nxt = self.snd.snd_una;
                self.snd.rto_timer.stop();
                self.try_send(now, out);
                if !self.snd.rto_timer.armed() {
                    self.snd.rto_timer.set(now + self.snd.rto);
                }
            }
            _ => {}
        }
    }

    // ---------------------------------------------------------------- receiver

    fn ack_packet(&mut self, now: SimTime) -> Packet {
        let mut p = self.template(now);
        p.kind = Kind::Ack;
        p.src = self.dst;
        p.dst = self.src;
        p.ack = self.rcv.rcv_nxt;
        self.rcv.unacked_segs = 0;
        self.rcv.delack_timer.stop();
        self.stats.acks_sent += 1;
        p
    }

    /// Process a segment arriving at the receiver; ACKs go to `out`.
    pub fn on_segment(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        if p.kind == Kind::Syn {
            self.rcv.started = true;
            let mut a = self.ack_packet(now);
            a.kind = Kind::SynAck;
            out.push(a);
            return;
        }
        self.rcv.started = true;
        let start = p.seq;
        let end = p.seq + p.payload as u64;
        let mut immediate = false;
        if start == self.rcv.rcv_nxt {
            self.rcv.rcv_nxt = end;
            if !self.rcv.ooo.is_empty() {
                // This segment fills (part of) a hole: ACK at once (RFC 5681 §4.2).
                immediate = true;
                let mut i = 0;
                while i < self.rcv.ooo.len() {
                    let (s, e) = self.rcv.ooo[i];
                    if s <= self.rcv.rcv_nxt {
                        if e > self.rcv.rcv_nxt {
                            self.rcv.rcv_nxt = e;
                        }
                        self.rcv.ooo.remove(i);
                    } else {
                        i += 1;
                    }
                }
            }
        } else if start > self.rcv.rcv_nxt {
            // Out of order: buffer and send an immediate duplicate ACK.
            insert_range(&mut self.rcv.ooo, start, end);
            immediate = true;
        } else {
            // Old or partly old data: ACK at once so the sender learns rcv_nxt.
            if end > self.rcv.rcv_nxt {
                self.rcv.rcv_nxt = end;
            }
            immediate = true;
        }
        self.rcv.unacked_segs += 1;
        if immediate || self.rcv.unacked_segs >= self.cfg.delack_count {
            let a = self.ack_packet(now);
            out.push(a);
        } else if !self.rcv.delack_timer.armed() {
            self.rcv.delack_timer.set(now + self.cfg.delack_timeout);
        }
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.rcv.unacked_segs > 0 {
            let a = self.ack_packet(now);
            out.push(a);
        }
    }
}

impl Sender {
    fn fast_recovery_enter(&mut self) {
        self.in_recovery = true;
        self.partial_seen = false;
    }
}

/// Insert [s, e) into a sorted list of disjoint ranges, merging overlaps.
fn insert_range(v: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let mut s = s;
    let mut e = e;
    let mut i = 0;
    while i < v.len() && v[i].1 < s {
        i += 1;
    }
    while i < v.len() && v[i].0 <= e {
        s = s.min(v[i].0);
        e = e.max(v[i].1);
        v.remove(i);
    }
    v.insert(i, (s, e));
}

#[cfg(test)]
#[path = "tcp_tests.rs"]
mod tests;

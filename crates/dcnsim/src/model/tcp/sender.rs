//! The TCP sender: sending within the window, ACK processing, NewReno (RFC 6582) fast
//! retransmit and recovery, limited transmit, the RFC 3168 ECN bookkeeping and the
//! retransmission timeout. Window sizes are the congestion controller's (`cc/`).

use super::cc::{loss_ssthresh, CongestionControl};
use super::sack::sack_prune;
use super::{Sender, SndState, TcpFlow};
use crate::base::packet::{flags, Ecn, Kind, Packet};
use crate::base::units::SimTime;

impl TcpFlow {
    /// The bytes a write of `bytes` puts on the connection (`whole_segments` rounds up).
    pub fn write_size(&self, bytes: u64) -> u64 {
        if self.cfg.whole_segments && bytes != u64::MAX {
            bytes.div_ceil(self.mss()).saturating_mul(self.mss())
        } else {
            bytes
        }
    }

    /// The application writes `bytes` more to the connection.
    pub fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>) {
        self.app_write_core(now, bytes, out);
        if self.cfg.rack {
            self.rack_rearm(now);
        }
    }

    pub(super) fn app_write_core(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>) {
        let bytes = self.write_size(bytes);
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

    pub(super) fn send_syn(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let mut p = self.template(now);
        p.kind = Kind::Syn;
        if self.cc.ect_on_syn() && self.ecn_active() {
            p.ecn = Ecn::Ect0; // e.g. DCTCP: ECT on all packets (docs/models.md §3.2)
        }
        out.push(p);
        self.snd.syn_time = now;
        self.stats.segs_sent += 1;
        self.snd.rto_timer.set(now + self.snd.rto);
    }

    /// Send as much new (or go-back-N retransmitted) data as the window allows.
    pub fn try_send(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.send_burst(now, out, u32::MAX);
    }

    /// NewReno fast recovery: at most `recovery_maxburst` segments per ACK (ns-2's
    /// `send_much(0, 0, 2)` while `dupacks_` ≥ DupThresh), else as many as the window allows.
    pub(super) fn send_in_recovery(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let max = match self.cfg.recovery_maxburst {
            0 => u32::MAX,
            m => m,
        };
        self.send_burst(now, out, max);
    }

    /// `try_send` with at most `max` segments.
    pub(super) fn send_burst(&mut self, now: SimTime, out: &mut Vec<Packet>, max: u32) {
        if self.snd.state != SndState::Established {
            return;
        }
        if self.snd.snd_una == self.snd.snd_max
            && self.snd.snd_max > 0
            && (self.cfg.idle_restart || self.cc.acts_after_idle())
            && now - self.snd.last_send > self.snd.rto
        {
            self.after_idle(now);
        }
        if self.cfg.idle_rto_reset
            && self.snd.snd_una == self.snd.snd_max
            && self.snd.snd_max > 0
            && now - self.snd.last_ack_time >= self.snd.rto
        {
            // ns-2 `timeout()` with no outstanding data: CLOSE_CWND_ONE.
            self.snd.cwnd = self.mss();
        }
        let mss = self.mss();
        let wnd = self.snd.cwnd.min(self.cfg.rwnd);
        let mut sent = 0;
        loop {
            let nxt = self.snd.snd_nxt;
            if nxt >= self.snd.app_limit || sent == max {
                break;
            }
            let len = mss.min(self.snd.app_limit - nxt);
            // Send only whole segments that fit in the window (packet-counting TCPs).
            if nxt + len - self.snd.snd_una > wnd {
                break;
            }
            self.emit_segment(now, nxt, len, out);
            sent += 1;
            self.snd.snd_nxt = nxt + len;
            if self.snd.snd_nxt > self.snd.snd_max {
                self.snd.snd_max = self.snd.snd_nxt;
            }
        }
    }

    /// Nothing outstanding and nothing sent for longer than the RTO.
    pub(super) fn after_idle(&mut self, _now: SimTime) {
        if self.cfg.idle_restart {
            // RFC 5681 §4.1: cwnd := min(cwnd, RW), RW = the initial window.
            let iw = self.cfg.init_cwnd as u64 * self.mss();
            self.snd.cwnd = self.snd.cwnd.min(iw);
        }
        // The controller's own restart (DCTCP: FreeBSD `dctcp_after_idle`).
        self.cc.after_idle(&self.snd);
    }

    pub(super) fn emit_segment(&mut self, now: SimTime, seq: u64, len: u64, out: &mut Vec<Packet>) {
        let mut p = self.template(now);
        p.seq = seq;
        p.payload = len as u32;
        p.size += len as u32;
        let retx = seq < self.snd.snd_max;
        if self.ecn_active() {
            // RFC 3168 §6.1.5: no ECT on retransmissions; DCTCP: ECT on all packets.
            if !retx || self.cc.ect_on_retransmit() {
                p.ecn = Ecn::Ect0;
            }
            // RFC 3168 §6.1.2 (erratum 5966): CWR on the next *new* data segment.
            if !retx && self.snd.cwr_pending {
                p.flags |= flags::CWR;
                self.snd.cwr_pending = false;
                self.stats.cwr_sent += 1;
            }
        }
        self.snd.last_send = now;
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
        if self.snd.rack.is_some() {
            self.rack_on_send(now, seq, len, retx);
        }
        out.push(p);
        // RFC 6298 (5.1): start the timer when sending data if it is not running.
        if !self.snd.rto_timer.armed() {
            self.snd.rto_timer.set(now + self.snd.rto);
        }
    }

    pub(super) fn retransmit_una(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let seq = self.snd.snd_una;
        let len = self.mss().min(self.snd.snd_max - seq);
        if len > 0 {
            self.emit_segment(now, seq, len, out);
        }
    }

    /// Process an ACK arriving at the sender.
    pub fn on_ack(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        self.on_ack_core(now, p, out);
        if self.cfg.rack {
            self.rack_rearm(now);
        }
    }

    pub(super) fn on_ack_core(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        self.stats.acks_received += 1;
        if p.kind == Kind::SynAck {
            if self.snd.state == SndState::SynSent {
                if !self.snd.syn_retx {
                    self.rtt_sample(self.snd.syn_time, now);
                }
                self.snd.state = SndState::Established;
                self.snd.rto_timer.stop();
                self.cc.on_connected(&self.snd);
                self.try_send(now, out);
            }
            return;
        }
        if self.snd.state != SndState::Established {
            return;
        }
        let a = p.ack;
        if a > self.snd.snd_max {
            return; // acknowledges data never sent: ignore (RFC 793)
        }
        let ece = p.flags & flags::ECE != 0;
        if ece {
            self.stats.ece_received += 1;
        }
        if self.ecn_active() {
            self.cc.on_ack_ecn(&self.snd, &self.cfg, a, ece);
            // RFC 3168 §6.1.2: react to ECE at most once per window of data, and not during
            // loss recovery (loss and ECE in one window: one reduction). The check uses
            // SND.UNA before this ACK, as FreeBSD signals ECE before processing the ACK.
            if ece
                && !self.snd.in_recovery
                && (self.snd.snd_una >= self.snd.recover_ecn || !self.cc.cuts_once_per_window())
            {
                self.ecn_reduce();
            }
        }
        let new_sack = self.cfg.sack && self.sack_update(p);
        if self.cfg.rack {
            let pure_dup = a == self.snd.snd_una && !new_sack && p.payload == 0;
            self.rack_on_ack(now, p, a, pure_dup);
        }
        if a > self.snd.snd_una {
            self.on_new_ack(now, p, a, out);
        } else if a == self.snd.snd_una && self.snd.snd_max > self.snd.snd_una && p.payload == 0 {
            self.on_dup_ack(now, a, new_sack, out);
        }
    }

    /// An ACK that acknowledges new data: RTT sample, window growth or the recovery steps,
    /// the retransmission timer, then new data.
    pub(super) fn on_new_ack(&mut self, now: SimTime, p: &Packet, a: u64, out: &mut Vec<Packet>) {
        let mss = self.mss();
        let acked = a - self.snd.snd_una;
        self.snd.lt_bytes = 0;
        self.snd.last_ack_time = now;
        if self.cfg.rto_reset_on_ack && self.snd.have_rtt {
            self.snd.rto = self.compute_rto();
        }
        if self.cfg.timestamps {
            // RFC 7323 §4.1: every ACK of new data gives a sample from its TSecr
            // (carried in the ACK's `seq` as TSecr + 1; 0 = no echo).
            if p.seq > 0 {
                self.rtt_sample(SimTime(p.seq - 1), now);
            }
        } else if self.snd.rtt_active && a > self.snd.rtt_seq {
            self.snd.rtt_active = false;
            let sent = self.snd.rtt_time;
            self.rtt_sample(sent, now);
        }
        self.snd.snd_una = a;
        if self.snd.snd_nxt < a {
            self.snd.snd_nxt = a;
        }
        if self.cfg.sack {
            if let Some(sb) = self.snd.scoreboard.as_deref_mut() {
                sack_prune(&mut sb.sacked, a);
            }
        }
        if self.snd.in_recovery {
            if a >= self.snd.recover {
                // Full ACK: leave recovery.
                if !self.cfg.sack {
                    // RFC 6582 §3.2 step 3: deflate the window, option (1)
                    // min(ssthresh, max(FlightSize, SMSS) + SMSS) or option (2) ssthresh.
                    let flight = self.flight();
                    self.snd.cwnd = if self.cfg.exit_cwnd_ns2 {
                        self.snd.ns2_cwnd
                    } else {
                        self.snd.ssthresh.min(flight.max(mss) + mss)
                    };
                }
                // RFC 6675: cwnd stayed at ssthresh during recovery; nothing to undo.
                self.snd.in_recovery = false;
                self.snd.dupacks = 0;
                self.cc.on_recovery_exit(&mut self.snd, &self.cfg);
            } else if self.cfg.sack {
                // RFC 6675 §5 (B), (C); RFC 6298 (5.3) restarts the timer.
                self.snd.rto_timer.set(now + self.snd.rto);
                self.sack_send(now, out);
                return;
            } else {
                // Partial ACK: retransmit the next hole, deflate by the amount acked.
                self.retransmit_una(now, out);
                self.snd.cwnd = self.snd.cwnd.saturating_sub(acked);
                if acked >= mss {
                    self.snd.cwnd += mss;
                }
                self.snd.cwnd = self.snd.cwnd.max(mss);
                // ns-2's cwnd_ (the part of the window that is not inflation).
                self.snd.ns2_cwnd = self.snd.ns2_cwnd.min(self.snd.cwnd - mss).max(mss);
                if !self.snd.partial_seen {
                    self.snd.partial_seen = true;
                    self.snd.rto_timer.set(now + self.snd.rto);
                }
                self.send_in_recovery(now, out);
                return;
            }
        } else {
            self.snd.dupacks = 0;
            // During an ECE reduction window cwnd does not grow (RFC 3168 senders as in
            // Linux's CWR state and FreeBSD's congestion recovery; DCTCP with its
            // `recovery_mode`). The ACK that closes the window does not grow it.
            // A controller may also refuse growth on each ACK that carries ECE (RFC 3168
            // §6.1.2 read per ACK, as ns-2's FullTcp does).
            let frozen = (self.snd.in_cwr && self.cc.holds_window_after_ece())
                || (p.flags & flags::ECE != 0 && !self.cc.grows_on_ece_ack());
            if a >= self.snd.recover_ecn {
                self.snd.in_cwr = false;
            }
            if !frozen {
                self.cc.on_ack(&mut self.snd, &self.cfg, acked);
            }
        }
        // RFC 6298 (5.2, 5.3): stop the timer when all data is acked, else restart it.
        if self.snd.snd_una >= self.snd.snd_max {
            self.snd.rto_timer.stop();
        } else {
            self.snd.rto_timer.set(now + self.snd.rto);
        }
        if self.cfg.rack
            && !self.snd.in_recovery
            && a >= self.snd.recover
            && self.rack_lost_pending()
        {
            // RFC 8985: RACK found a loss on an ACK of new data.
            self.rack_enter_recovery(now, out);
            return;
        }
        self.try_send(now, out);
    }

    /// A duplicate ACK (RFC 5681 §2): limited transmit, fast retransmit or, in recovery,
    /// window inflation (NewReno) or the SACK pipe (RFC 6675).
    pub(super) fn on_dup_ack(
        &mut self,
        now: SimTime,
        a: u64,
        new_sack: bool,
        out: &mut Vec<Packet>,
    ) {
        let mss = self.mss();
        // Duplicate ACK (RFC 5681 §2).
        self.snd.dupacks += 1;
        if self.snd.in_recovery {
            if self.cfg.sack {
                self.sack_send(now, out); // RFC 6675 §5 (B), (C)
            } else {
                self.snd.cwnd += mss; // window inflation
                self.send_in_recovery(now, out);
            }
        } else if self.cfg.rack {
            // RFC 8985: RACK's marks, not DupThresh, start recovery.
            if a >= self.snd.recover && self.rack_lost_pending() {
                self.rack_enter_recovery(now, out);
            } else if self.snd.dupacks < self.cfg.dupack_threshold && new_sack {
                self.limited_transmit(now, out);
            }
        } else if self.cfg.sack {
            // RFC 6675 §5 steps (2)–(4): DupThresh duplicates, or IsLost(HighACK + 1).
            if a >= self.snd.recover
                && (self.snd.dupacks >= self.cfg.dupack_threshold
                    || self.snd.snd_una < self.lost_boundary())
            {
                self.sack_enter_recovery(now, out);
            } else if self.snd.dupacks < self.cfg.dupack_threshold && new_sack {
                // RFC 6675 §5 step (2): limited transmit while IsLost(HighACK + 1) is
                // false; RFC 5681 §3.2: with SACK only on an ACK with new SACK information.
                self.limited_transmit(now, out);
            }
        } else if self.snd.dupacks < self.cfg.dupack_threshold {
            self.limited_transmit(now, out);
        } else if self.snd.dupacks == self.cfg.dupack_threshold && self.recovered(a) {
            // Fast retransmit (RFC 6582 §3.2 step 2).
            self.snd.fast_recovery_enter();
            self.stats.fast_recoveries += 1;
            // ns-2 `slowdown(CLOSE_CWND_HALF)`: cwnd_ = half of min(cwnd_, window_)
            // exactly (ssthresh_ is that half rounded down to packets).
            let half = self.snd.cwnd.min(self.cfg.rwnd) / 2;
            self.loss_reduce();
            let base = if self.cfg.ssthresh_from_cwnd {
                half.max(mss)
            } else {
                self.snd.ssthresh
            };
            self.snd.recover = self.snd.snd_max;
            self.retransmit_una(now, out);
            self.snd.cwnd = base + self.cfg.dupack_threshold as u64 * mss;
            self.snd.ns2_cwnd = base;
            self.send_in_recovery(now, out);
        }
    }

    /// RFC 6582 §3.2 step 2: a fast retransmit only if the ACK covers `recover` (all data
    /// sent when the last recovery or timeout began). With `recover_strict`, ns-2's
    /// Agent/TCP/Newreno test `highest_ack_ > recover_` (`bugFix_ true`, `less_careful_
    /// false`): the ACK must cover one segment more, except before any data is acked
    /// (`bugfix_ss_`).
    pub(super) fn recovered(&self, a: u64) -> bool {
        if self.cfg.recover_strict {
            a > self.snd.recover || a == 0
        } else {
            a >= self.snd.recover
        }
    }

    /// RFC 3042 §2 (RFC 5681 §3.2): on each of the first DupThresh − 1 duplicate ACKs send
    /// one segment of previously unsent data if the receiver window allows and the
    /// outstanding data stays within cwnd + 2·SMSS; cwnd is not changed. Off with
    /// `limited_transmit = false`. Nothing is sent while a go-back-N after an RTO has not
    /// reached SND.MAX (that data is not new).
    pub(super) fn limited_transmit(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let s = &self.snd;
        if !self.cfg.limited_transmit || s.snd_nxt != s.snd_max || s.snd_max >= s.app_limit {
            return;
        }
        let mss = self.mss();
        let nxt = s.snd_max;
        let len = mss.min(s.app_limit - nxt);
        let outstanding = nxt + len - s.snd_una;
        if outstanding > self.cfg.rwnd || outstanding > s.cwnd + 2 * mss {
            return;
        }
        self.emit_segment(now, nxt, len, out);
        self.snd.snd_nxt = nxt + len;
        self.snd.snd_max = nxt + len;
        self.snd.lt_bytes += len;
    }

    /// Window reduction on ECE (the caller checks eligibility): the controller's
    /// reaction, then the RFC 3168 §6.1.2 bookkeeping (no new reduction before SND.UNA
    /// passes SND.MAX of now; CWR on the next new segment).
    pub(super) fn ecn_reduce(&mut self) {
        self.cc.on_ece(&mut self.snd, &self.cfg);
        self.snd.recover_ecn = self.snd.snd_max;
        self.snd.in_cwr = true;
        self.stats.ecn_reductions += 1;
        if self.sets_cwr() {
            self.snd.cwr_pending = true;
        }
    }

    /// ssthresh on entering loss recovery: one reduction per window also across ECN — if
    /// an ECE reduction already covers this window, ssthresh stays, unless the controller
    /// reduces again ([`CongestionControl::reduces_again_on_loss`]).
    pub(super) fn loss_reduce(&mut self) {
        if !self.snd.in_cwr || self.cc.reduces_again_on_loss() {
            let flight = self.flight() - self.snd.lt_bytes.min(self.flight());
            self.snd.ssthresh = self.cc_ssthresh_on_loss(flight);
            if self.sets_cwr() {
                // Linux `tcp_init_cwnd_reduction`, ns-2 `slowdown`: CWR after any cut.
                self.snd.cwr_pending = true;
            }
        }
        self.snd.in_cwr = false;
        if self.ecn_active() {
            self.snd.recover_ecn = self.snd.snd_max;
        }
    }

    /// ssthresh after a loss (`cc::loss_ssthresh`: ns-2's `slowdown` or the controller's).
    #[inline]
    pub(super) fn cc_ssthresh_on_loss(&self, flight: u64) -> u64 {
        loss_ssthresh(&self.cc, &self.snd, &self.cfg, flight)
    }

    /// The retransmission timer expired (called by the simulation when due). With RACK-TLP
    /// the timer may hold the reordering timer or the loss probe instead (`model/tcp/rack.rs`).
    pub fn on_rto(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if !(self.cfg.rack && self.rack_on_timer(now, out)) {
            self.on_rto_core(now, out);
        }
        if self.cfg.rack {
            self.rack_rearm(now);
        }
    }

    pub(super) fn on_rto_core(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        match self.snd.state {
            SndState::SynSent => {
                self.stats.timeouts += 1;
                self.snd.syn_retx = true;
                self.backoff_rto();
                self.send_syn(now, out);
            }
            SndState::Established if self.snd.snd_una < self.snd.snd_max => {
                self.stats.timeouts += 1;
                let mss = self.mss();
                let flight = self.flight();
                self.snd.ssthresh = self.cc_ssthresh_on_loss(flight);
                self.snd.cwnd = mss; // loss window (RFC 5681 §3.1)
                self.cc.on_rto(&mut self.snd, &self.cfg);
                self.snd.in_recovery = false;
                self.snd.dupacks = 0;
                self.snd.lt_bytes = 0;
                self.snd.recover = self.snd.snd_max;
                self.snd.rtt_active = false;
                if self.ecn_active() {
                    self.snd.in_cwr = false;
                    self.snd.recover_ecn = self.snd.snd_max;
                    if self.sets_cwr() {
                        self.snd.cwr_pending = true;
                    }
                }
                // RFC 2018 §8: after a timeout, ignore prior SACK information.
                if let Some(sb) = self.snd.scoreboard.as_deref_mut() {
                    sb.sacked.clear();
                }
                if self.cfg.rack {
                    self.rack_on_timeout();
                }
                let una = self.snd.snd_una;
                self.snd.sb_mut().high_rxt = una;
                // Exponential backoff (RFC 6298 5.5).
                self.backoff_rto();
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
}

impl Sender {
    pub(super) fn fast_recovery_enter(&mut self) {
        self.in_recovery = true;
        self.partial_seen = false;
    }
}

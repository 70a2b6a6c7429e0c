//! RACK-TLP (RFC 8985): time-based loss detection and the tail loss probe, an option of the
//! SACK sender (`tcp.rack`, `tcp.tlp`; on in the `linux` profile, as Linux's defaults
//! `net.ipv4.tcp_recovery = 1` and `net.ipv4.tcp_early_retrans = 3` have them).
//!
//! **RACK** (§6) keeps the transmit time of every outstanding segment. On each ACK it takes
//! the most recently *sent* segment that the ACK newly delivered (cumulatively or by SACK)
//! and declares lost every unSACKed segment sent more than `RACK.rtt + RACK.reo_wnd`
//! before it. A retransmission gets a new transmit time, so a lost retransmission is found
//! the same way, without waiting for the RTO — the case NewReno and RFC 6675 cannot repair
//! by themselves. RACK replaces the DupThresh rule as the trigger of fast recovery (as in
//! Linux, where `tcp_time_to_recover` then looks only at RACK's marks); in recovery the
//! sender retransmits the segments RACK marked, lowest first, then new data (RFC 6675
//! `NextSeg` rules 1 and 2 with RACK's `IsLost`; Linux has no rules 3 and 4 — TLP covers
//! the tail). The reordering window is RFC 8985 §6.2 step 4: 0 in recovery or once DupThresh segments are SACKed, unless reordering was seen; else
//! min(RACK.reo_wnd_mult · RACK.min_RTT / 4, SRTT), the multiplier growing by one per
//! round trip with a D-SACK (RFC 2883, `tcp.dsack`) and reset after 16 recoveries without.
//! A segment not yet due arms the reordering timer (§6.3).
//!
//! **TLP** (§7): with data outstanding, not in recovery, nothing SACKed and no probe
//! outstanding, a probe timeout PTO = 2·SRTT (plus WCDelAckT = 200 ms when one segment is
//! outstanding; 1 s before any RTT sample), never later than the RTO, replaces the RTO
//! timer after new data is sent or new data is acknowledged. When it fires the sender sends
//! one new segment if the window of the receiver allows, else retransmits the last one, and
//! re-arms the RTO. If the probe was a retransmission and a later ACK acknowledges beyond
//! it and no D-SACK reported the probe as a duplicate, the probe repaired a loss: ssthresh
//! and cwnd are reduced as for fast recovery (§7.4.2; Linux `tcp_process_tlp_ack`). A
//! D-SACK of the probe, or a pure duplicate ACK, means the original and the probe both
//! arrived (no reduction).
//!
//! The RTO, the reordering timer and the PTO share the one retransmission timer of the flow
//! (as Linux's `icsk_retransmit_timer` with its pending kind): `Rack::timer` says which one
//! `rto_timer` holds, and `on_rto` dispatches on it. Nothing here runs, and nothing is
//! allocated, for a flow without `rack`.

use super::{Seg, TcpFlow};
use crate::base::packet::Packet;
use crate::base::units::SimTime;
use std::collections::VecDeque;

/// RFC 8985 §7.2 WCDelAckT: the worst-case delayed-ACK time added to the PTO when only one
/// segment is outstanding (200 ms; Linux adds `TCP_RTO_MIN` = 200 ms).
pub const WC_DELACK: SimTime = SimTime::from_ms(200);
/// RFC 8985 §7.2: the PTO before any RTT sample (Linux `TCP_TIMEOUT_INIT` = 1 s).
pub const PTO_NO_RTT: SimTime = SimTime::from_ms(1000);

/// What the flow's retransmission timer (`Sender::rto_timer`) stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    Rto,
    Reorder,
    Probe,
}

/// One transmitted, not yet cumulatively acknowledged segment (RFC 8985 §5.2 per-segment
/// state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegRec {
    pub start: u64,
    pub end: u64,
    /// Time of the last (re)transmission.
    pub xmit: SimTime,
    pub retransmitted: bool,
    pub lost: bool,
    pub sacked: bool,
}

/// RACK and TLP state of one sender (RFC 8985 §5.2, §5.3).
#[derive(Clone, Debug)]
pub struct Rack {
    /// Outstanding segments in sequence order.
    pub segs: VecDeque<SegRec>,
    /// RACK.xmit_ts, RACK.end_seq: the most recently sent segment known delivered.
    pub xmit_ts: SimTime,
    pub end_seq: u64,
    /// RACK.rtt: the RTT of that segment.
    pub rtt: SimTime,
    /// RACK.fack: the highest end sequence delivered.
    pub fack: u64,
    /// RACK.reordering_seen.
    pub reord: bool,
    /// RACK.min_RTT (`SimTime::NEVER` before the first sample).
    pub min_rtt: SimTime,
    /// RACK.reo_wnd_mult, RACK.reo_wnd_persist and RACK.dsack_round (`u64::MAX` = None):
    /// the D-SACK adaptation of the reordering window (§6.2 step 4).
    pub reo_wnd_mult: u32,
    pub reo_wnd_persist: u32,
    pub dsack_round: u64,
    /// When the reordering timer is due (`NEVER` = not needed).
    pub reo_at: SimTime,
    /// TLP.end_seq (`u64::MAX` = no probe outstanding) and TLP.is_retrans.
    pub tlp_end: u64,
    pub tlp_retrans: bool,
    /// New data was sent or acknowledged since the PTO was last armed (§7.2).
    pub pto_rearm: bool,
    /// What `rto_timer` holds; when it holds the reordering timer or the PTO, `rto_at` is
    /// the RTO deadline it stands in for and `held_at` the deadline put in its place.
    pub timer: TimerKind,
    pub rto_at: SimTime,
    pub held_at: SimTime,
}

impl Rack {
    pub fn new() -> Rack {
        Rack {
            segs: VecDeque::new(),
            xmit_ts: SimTime::ZERO,
            end_seq: 0,
            rtt: SimTime::ZERO,
            fack: 0,
            reord: false,
            min_rtt: SimTime::NEVER,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            dsack_round: u64::MAX,
            reo_at: SimTime::NEVER,
            tlp_end: u64::MAX,
            tlp_retrans: false,
            pto_rearm: false,
            timer: TimerKind::Rto,
            rto_at: SimTime::NEVER,
            held_at: SimTime::NEVER,
        }
    }
}

impl Default for Rack {
    fn default() -> Self {
        Rack::new()
    }
}

/// RFC 8985 §6.2 `RACK_sent_after`: sent later, or at the same time with a higher end.
fn sent_after(t1: SimTime, seq1: u64, t2: SimTime, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl TcpFlow {
    fn rack(&mut self) -> &mut Rack {
        self.snd
            .rack
            .as_mut()
            .expect("rack state exists when cfg.rack")
    }

    /// Record a transmission of [seq, seq + len) (called for every data segment sent).
    pub(super) fn rack_on_send(&mut self, now: SimTime, seq: u64, len: u64, retx: bool) {
        let r = self.rack();
        if !retx {
            r.segs.push_back(SegRec {
                start: seq,
                end: seq + len,
                xmit: now,
                retransmitted: false,
                lost: false,
                sacked: false,
            });
            r.pto_rearm = true;
            return;
        }
        let end = seq + len;
        for s in r.segs.iter_mut() {
            if s.start >= end {
                break;
            }
            if s.end > seq {
                s.xmit = now;
                s.retransmitted = true;
            }
        }
    }

    /// A new RTT sample (RFC 6298 or RFC 7323) updates RACK.min_RTT (§6.2 step 1).
    pub(super) fn rack_on_rtt(&mut self, rtt: SimTime) {
        if let Some(r) = self.snd.rack.as_mut() {
            r.min_rtt = r.min_rtt.min(rtt);
        }
    }

    /// RFC 8985 §6.2 steps 2–5 for an ACK whose scoreboard update is done (the sender's
    /// `sacked` holds its SACK blocks) and whose cumulative ACK is `a`; §7.4 TLP episode check.
    /// `pure_dup`: the ACK acknowledges nothing new and carries no new SACK information.
    pub(super) fn rack_on_ack(&mut self, now: SimTime, p: &Packet, a: u64, pure_dup: bool) {
        let tsecr = (self.cfg.timestamps && p.seq > 0).then(|| SimTime(p.seq - 1));
        let dsack = if self.cfg.dsack {
            p.sack.dsack(a)
        } else {
            None
        };
        let exits_recovery = self.snd.snd_una < self.snd.recover && a >= self.snd.recover;
        let snd_nxt = self.snd.snd_nxt;
        let sacked = match self.snd.scoreboard.as_deref_mut() {
            Some(sb) => std::mem::take(&mut sb.sacked),
            None => Vec::new(),
        };
        let r = self.rack();
        // Step 2: the most recently sent segment among those this ACK delivers, skipping
        // retransmissions whose sample is ambiguous (TSecr before the retransmission, or
        // an RTT below min_RTT).
        let mut newest: Option<(SimTime, u64)> = None;
        let mut deliver = |s: &SegRec, r_min: SimTime, fack: &mut u64, reord: &mut bool| {
            // Step 3: reordering when a segment below RACK.fack is delivered first time.
            if s.end < *fack && !s.retransmitted {
                *reord = true;
            } else if s.end > *fack {
                *fack = s.end;
            }
            if s.retransmitted {
                let early = tsecr.is_some_and(|t| t < s.xmit);
                if early || now - s.xmit < r_min {
                    return;
                }
            }
            if newest.is_none_or(|(t, e)| sent_after(s.xmit, s.end, t, e)) {
                newest = Some((s.xmit, s.end));
            }
        };
        let (min_rtt, mut fack, mut reord) = (r.min_rtt, r.fack, r.reord);
        while let Some(s) = r.segs.front() {
            if s.end > a {
                break;
            }
            if !s.sacked {
                deliver(s, min_rtt, &mut fack, &mut reord);
            }
            r.segs.pop_front();
        }
        crate::base::packet::reuse_ring_from_the_start(&mut r.segs);
        let mut i = 0;
        for s in r.segs.iter_mut() {
            if s.sacked {
                continue;
            }
            while i < sacked.len() && sacked[i].1 <= s.start {
                i += 1;
            }
            if i < sacked.len() && sacked[i].0 <= s.start && s.end <= sacked[i].1 {
                s.sacked = true;
                deliver(s, min_rtt, &mut fack, &mut reord);
            }
        }
        r.fack = fack;
        r.reord = reord;
        if let Some((t, e)) = newest {
            r.rtt = now - t;
            if sent_after(t, e, r.xmit_ts, r.end_seq) {
                r.xmit_ts = t;
                r.end_seq = e;
            }
        }
        // Step 4, D-SACK part: one more min_RTT/4 of window per round trip that saw a
        // D-SACK (a spurious retransmission); back to one after 16 recoveries without.
        if r.dsack_round != u64::MAX && a >= r.dsack_round {
            r.dsack_round = u64::MAX;
        }
        if r.dsack_round == u64::MAX && dsack.is_some() {
            r.dsack_round = snd_nxt;
            r.reo_wnd_mult += 1;
            r.reo_wnd_persist = 16;
        } else if exits_recovery {
            r.reo_wnd_persist = r.reo_wnd_persist.saturating_sub(1);
            if r.reo_wnd_persist == 0 {
                r.reo_wnd_mult = 1;
            }
        }
        // §7.4.2: the end of a TLP episode. A D-SACK of the probe means the original
        // arrived too; an ACK beyond a retransmitted probe without one means the probe
        // repaired a loss.
        if r.tlp_end != u64::MAX && a >= r.tlp_end {
            let dsack_probe = r.tlp_retrans && dsack.is_some_and(|(_, e)| e == r.tlp_end);
            let repaired = r.tlp_retrans && !dsack_probe && a > r.tlp_end;
            if !r.tlp_retrans || dsack_probe || repaired || pure_dup {
                r.tlp_end = u64::MAX;
            }
            if repaired {
                self.stats.tlp_recoveries += 1;
                self.snd.ssthresh = self.cc_ssthresh_on_loss(self.flight());
                self.snd.cwnd = self.snd.ssthresh;
            }
        }
        if a > self.snd.snd_una {
            self.rack().pto_rearm = true;
        }
        if let Some(sb) = self.snd.scoreboard.as_deref_mut() {
            sb.sacked = sacked; // (none: no SACK seen, `sacked` is empty)
        }
        // Step 4: the reordering window; step 5: detect losses.
        let reo = self.rack_reo_wnd();
        self.rack_detect_loss(now, reo);
    }

    /// RFC 8985 §6.2 step 5 `RACK_detect_loss`: mark lost every unSACKed segment sent more
    /// than RACK.rtt + reo_wnd before RACK.xmit_ts's segment; the earliest segment not yet
    /// due sets the reordering timer.
    fn rack_detect_loss(&mut self, now: SimTime, reo_wnd: SimTime) {
        let r = self.rack();
        let mut due = SimTime::NEVER;
        for s in r.segs.iter_mut() {
            if s.sacked || (s.lost && !s.retransmitted) {
                continue;
            }
            if !sent_after(r.xmit_ts, r.end_seq, s.xmit, s.end) {
                continue;
            }
            let at = s.xmit + r.rtt + reo_wnd;
            if at <= now {
                s.lost = true;
                s.retransmitted = false;
            } else {
                due = due.min(at);
            }
        }
        r.reo_at = due;
    }

    /// RACK has marked a segment lost that is not yet retransmitted.
    pub(super) fn rack_lost_pending(&self) -> bool {
        self.snd.rack.as_ref().is_some_and(|r| {
            r.segs
                .iter()
                .any(|s| s.lost && !s.retransmitted && !s.sacked)
        })
    }

    /// RFC 6675 `NextSeg` with RACK's loss marks: (1) the lowest segment RACK marked lost
    /// and not yet retransmitted, else (2) new data within the receiver's window.
    pub(super) fn rack_next_seg(&self) -> Option<(u64, u64, Seg)> {
        let r = self.snd.rack.as_ref()?;
        if let Some(s) = r
            .segs
            .iter()
            .find(|s| s.lost && !s.retransmitted && !s.sacked)
        {
            return Some((s.start, s.end - s.start, Seg::Rxt));
        }
        let nxt = self.snd.snd_max;
        if nxt < self.snd.app_limit {
            let len = self.cfg.mss as u64;
            let len = len.min(self.snd.app_limit - nxt);
            if nxt + len - self.snd.snd_una <= self.cfg.rwnd {
                return Some((nxt, len, Seg::New));
            }
        }
        None
    }

    /// RFC 6675 `SetPipe` with RACK's marks: octets not SACKed and either not lost or
    /// retransmitted (Linux `tcp_packets_in_flight`).
    pub(super) fn rack_pipe(&self) -> u64 {
        self.snd.rack.as_ref().map_or(0, |r| {
            r.segs
                .iter()
                .filter(|s| !s.sacked && (!s.lost || s.retransmitted))
                .map(|s| s.end - s.start)
                .sum()
        })
    }

    /// Enter fast recovery on RACK's marks (RFC 6675 §5 step 4 with RACK's `IsLost`).
    pub(super) fn rack_enter_recovery(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.recovery_point_and_window();
        // (4.3): the first lost segment goes out whatever the pipe.
        if let Some((s, len, Seg::Rxt)) = self.rack_next_seg() {
            self.emit_segment(now, s, len, out);
            let sb = self.snd.sb_mut();
            sb.high_rxt = sb.high_rxt.max(s + len);
        }
        self.sack_send(now, out);
    }

    /// RTO expiry (RFC 5681 §3.1 go-back-N from SND.UNA): the scoreboard is forgotten
    /// (RFC 2018 §8), so are RACK's marks; the probe episode ends.
    pub(super) fn rack_on_timeout(&mut self) {
        let r = self.rack();
        for s in r.segs.iter_mut() {
            s.lost = false;
            s.sacked = false;
        }
        r.reo_at = SimTime::NEVER;
        r.tlp_end = u64::MAX;
    }

    /// The flow's retransmission timer fired. For the reordering timer or the PTO, handle
    /// it and return true; for an RTO return false (the caller handles it).
    pub(super) fn rack_on_timer(&mut self, now: SimTime, out: &mut Vec<Packet>) -> bool {
        let r = self.rack();
        let (kind, rto_at) = (r.timer, r.rto_at);
        r.timer = TimerKind::Rto;
        match kind {
            TimerKind::Rto => return false,
            TimerKind::Reorder => {
                // §6.3: the RTO stays where it was; run the detection again.
                self.snd.rto_timer.set(rto_at);
                let reo = self.rack_reo_wnd();
                self.rack_detect_loss(now, reo);
                if self.rack_lost_pending() {
                    if self.snd.in_recovery {
                        self.sack_send(now, out);
                    } else if self.snd.snd_una >= self.snd.recover {
                        self.rack_enter_recovery(now, out);
                    }
                }
            }
            TimerKind::Probe => self.tlp_send_probe(now, out),
        }
        true
    }

    /// RFC 8985 §6.2 step 4: the reordering window (no DSACK adaptation).
    fn rack_reo_wnd(&self) -> SimTime {
        let r = self
            .snd
            .rack
            .as_ref()
            .expect("rack state exists when cfg.rack");
        let in_recovery = self.snd.in_recovery || self.snd.snd_una < self.snd.recover;
        let sacked = r.segs.iter().filter(|s| s.sacked).count();
        let no_reordering_yet =
            !r.reord && (in_recovery || sacked >= self.cfg.dupack_threshold as usize);
        // Before any RTT sample min_RTT is unknown: no window.
        if no_reordering_yet || r.min_rtt.is_never() {
            SimTime::ZERO
        } else {
            SimTime(r.min_rtt.0 / 4 * r.reo_wnd_mult as u64).min(self.snd.srtt)
        }
    }

    /// §7.2: whether a loss probe may be scheduled now.
    fn tlp_allowed(&self) -> bool {
        let s = &self.snd;
        self.cfg.tlp
            && s.snd_una < s.snd_max
            && !s.in_recovery
            && s.snd_una >= s.recover
            && s.snd_nxt == s.snd_max
            && s.sb().sacked.is_empty()
            && s.rack.as_ref().is_some_and(|r| r.tlp_end == u64::MAX)
    }

    /// §7.2 `TLP_calc_PTO` (without the cap at the RTO, applied by the caller).
    fn tlp_pto(&self) -> SimTime {
        if !self.snd.have_rtt {
            return PTO_NO_RTT;
        }
        let pto = SimTime(2 * self.snd.srtt.0);
        if self.flight() <= self.cfg.mss as u64 {
            pto + WC_DELACK
        } else {
            pto
        }
    }

    /// §7.3 `TLP_send_probe`, then re-arm the RTO.
    fn tlp_send_probe(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.tlp_allowed() {
            let mss = self.cfg.mss as u64;
            let nxt = self.snd.snd_max;
            let new_len = mss.min(self.snd.app_limit.saturating_sub(nxt));
            let retrans = if new_len > 0 && nxt + new_len - self.snd.snd_una <= self.cfg.rwnd {
                // One segment of new data; cwnd is not consulted.
                self.emit_segment(now, nxt, new_len, out);
                self.snd.snd_nxt = nxt + new_len;
                self.snd.snd_max = nxt + new_len;
                false
            } else if let Some(s) = self.rack().segs.back().copied() {
                // The highest-sequence segment sent so far.
                self.emit_segment(now, s.start, s.end - s.start, out);
                true
            } else {
                false
            };
            self.stats.tlp_probes += 1;
            let end = self.snd.snd_max;
            let r = self.rack();
            r.tlp_end = end;
            r.tlp_retrans = retrans;
            r.pto_rearm = false;
        }
        if self.snd.snd_una < self.snd.snd_max {
            self.snd.rto_timer.set(now + self.snd.rto);
        }
    }

    /// After each entry point: the reordering timer or the PTO takes the retransmission
    /// timer when due before the RTO (§6.3, §7.2: PTO ≤ the time left to the RTO).
    pub(super) fn rack_rearm(&mut self, now: SimTime) {
        let d = self.snd.rto_timer.deadline;
        let pto = now + self.tlp_pto();
        let tlp = self.tlp_allowed();
        let r = self.rack();
        // The RTO deadline the TCP core wants: its own, unless the timer still holds what
        // this function put there.
        let rto_at = if r.timer != TimerKind::Rto && d == r.held_at {
            r.rto_at
        } else {
            d
        };
        let (mut at, mut kind) = (rto_at, TimerKind::Rto);
        if !rto_at.is_never() {
            if r.reo_at < rto_at {
                (at, kind) = (r.reo_at, TimerKind::Reorder);
            } else if tlp && r.pto_rearm && pto < rto_at {
                (at, kind) = (pto, TimerKind::Probe);
            } else if tlp && r.timer == TimerKind::Probe && d == r.held_at {
                (at, kind) = (d, TimerKind::Probe);
            }
        }
        r.pto_rearm = false;
        r.timer = kind;
        r.rto_at = rto_at;
        r.held_at = at;
        self.snd.rto_timer.set(at);
    }

    /// The segment records agree with the sender's sequence state (tests and debug builds).
    pub fn rack_check(&self) -> bool {
        let Some(r) = self.snd.rack.as_ref() else {
            return true;
        };
        let mut at = self.snd.snd_una;
        for s in &r.segs {
            if s.start > at || s.end <= s.start {
                return false;
            }
            at = s.end;
        }
        r.segs.is_empty() || at == self.snd.snd_max
    }
}

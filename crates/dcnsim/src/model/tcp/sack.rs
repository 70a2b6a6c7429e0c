//! The SACK scoreboard and RFC 6675 loss recovery at the sender (`Update`, `IsLost` in its
//! byte form, `SetPipe`, `NextSeg` rules 1–4 with the rescue retransmission).

use super::{Seg, Sender, TcpFlow};
use crate::base::packet::Packet;
use crate::base::units::SimTime;

/// The SACK scoreboard and RFC 6675 recovery state of a sender ([`Sender::scoreboard`]).
#[derive(Clone, Debug)]
pub struct SndSack {
    /// Scoreboard: SACKed ranges above SND.UNA, sorted and disjoint.
    pub sacked: Vec<(u64, u64)>,
    /// End (exclusive) of the highest segment retransmitted in this recovery (HighRxt).
    pub high_rxt: u64,
    /// RFC 6675 `pipe` as of the last `SetPipe` plus what was sent since.
    pub pipe: u64,
    /// RFC 6675 `RescueRxt` (u64::MAX: undefined in this recovery).
    pub rescue_rxt: u64,
}

/// A sender's scoreboard before its first write.
const SND_SACK_INIT: SndSack = SndSack {
    sacked: Vec::new(),
    high_rxt: 0,
    pipe: 0,
    rescue_rxt: u64::MAX,
};
static SND_SACK_NONE: SndSack = SND_SACK_INIT;

impl Sender {
    /// The scoreboard, or its initial values when none was allocated yet.
    #[inline]
    pub fn sb(&self) -> &SndSack {
        self.scoreboard.as_deref().unwrap_or(&SND_SACK_NONE)
    }
    /// The scoreboard for writing, allocated (with its initial values) on first use.
    #[inline]
    pub fn sb_mut(&mut self) -> &mut SndSack {
        self.scoreboard
            .get_or_insert_with(|| Box::new(SND_SACK_INIT))
    }
}

impl TcpFlow {
    /// RFC 6675 `Update()`: record the ACK's SACK blocks on the scoreboard.
    /// Returns whether the ACK SACKed octets not SACKed before.
    pub(super) fn sack_update(&mut self, p: &Packet) -> bool {
        let lo = self.snd.snd_una.max(p.ack);
        let hi = self.snd.snd_max;
        let mut new = false;
        for (s, e) in p.sack.decode(p.ack) {
            let (s, e) = (s.max(lo), e.min(hi));
            if s < e {
                new |= insert_range(&mut self.snd.sb_mut().sacked, s, e);
            }
        }
        new
    }

    /// UnSACKed octets below the returned sequence are lost: RFC 6675 `IsLost(s)` is true
    /// when more than (DupThresh − 1)·SMSS bytes above `s` are SACKed.
    pub(super) fn lost_boundary(&self) -> u64 {
        let thr = (self.cfg.dupack_threshold.max(1) as u64 - 1) * self.mss();
        let mut acc = 0;
        for &(s, e) in self.snd.sb().sacked.iter().rev() {
            acc += e - s;
            if acc > thr {
                return s;
            }
        }
        0
    }

    /// Bytes of [a, b) not on the scoreboard. Its ranges are sorted and disjoint, so only
    /// those from the first that ends above `a` to the last that starts below `b` overlap
    /// [a, b): found by bisection, the rest are not visited (under the fabrics' losses a
    /// scoreboard holds hundreds of ranges, and `SetPipe` asks on every ACK).
    pub(super) fn unsacked(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        let v = &self.snd.sb().sacked;
        let mut n = b - a;
        for &(s, e) in &v[v.partition_point(|r| r.1 <= a)..] {
            if s >= b {
                break;
            }
            n -= e.min(b) - s.max(a);
        }
        n
    }

    /// RFC 6675 `SetPipe()`: unSACKed octets that are not lost, plus unSACKed octets
    /// retransmitted in this recovery (at or below HighRxt).
    pub(super) fn set_pipe(&mut self) {
        let (una, max) = (self.snd.snd_una, self.snd.snd_max);
        let lost = self.lost_boundary().max(una);
        let pipe = self.unsacked(lost, max) + self.unsacked(una, self.snd.sb().high_rxt.min(max));
        self.snd.sb_mut().pipe = pipe;
    }

    /// The first unSACKed sequence at or above `x` (below `snd_max`), and the length of the
    /// segment starting there (up to one MSS, not into SACKed data).
    pub(super) fn first_unsacked(&self, mut x: u64) -> Option<(u64, u64)> {
        // Ranges that end at or below `x` do not matter: skipped by bisection.
        let v = &self.snd.sb().sacked;
        for &(s, e) in &v[v.partition_point(|r| r.1 <= x)..] {
            if s <= x {
                x = e;
                continue;
            }
            // x < s: x is unSACKed, the segment ends at s at the latest.
            if x >= self.snd.snd_max {
                return None;
            }
            return Some((x, self.mss().min(s - x).min(self.snd.snd_max - x)));
        }
        if x >= self.snd.snd_max {
            return None;
        }
        Some((x, self.mss().min(self.snd.snd_max - x)))
    }

    /// RFC 6675 `NextSeg()` rules 1–4: (seq, len, what).
    pub(super) fn next_seg(&self) -> Option<(u64, u64, Seg)> {
        let from = self.snd.sb().high_rxt.max(self.snd.snd_una);
        let first = self.first_unsacked(from);
        // (1) the lowest unSACKed sequence above HighRxt that IsLost.
        if let Some((s, len)) = first {
            if s < self.lost_boundary() {
                return Some((s, len, Seg::Rxt));
            }
        }
        // (2) new data, if the application and the receiver window allow.
        let nxt = self.snd.snd_max;
        if nxt < self.snd.app_limit {
            let len = self.mss().min(self.snd.app_limit - nxt);
            if nxt + len - self.snd.snd_una <= self.cfg.rwnd {
                return Some((nxt, len, Seg::New));
            }
        }
        // (3) the lowest unSACKed sequence above HighRxt and below the highest SACKed
        // octet (3.b), lost or not.
        let high_sacked = self.snd.sb().sacked.last().map_or(0, |r| r.1);
        if let Some((s, len)) = first {
            if s < high_sacked {
                return Some((s, len, Seg::Rxt));
            }
        }
        // (4) one rescue retransmission per recovery (RescueRxt undefined or below
        // HighACK): a segment that holds the highest outstanding unSACKed octet.
        let r = self.snd.sb().rescue_rxt;
        if r == u64::MAX || self.snd.snd_una > r {
            let mut end = self.snd.snd_max;
            let mut floor = self.snd.snd_una;
            for &(s, e) in self.snd.sb().sacked.iter().rev() {
                if e >= end {
                    end = end.min(s);
                } else {
                    floor = e;
                    break;
                }
            }
            if end > self.snd.snd_una {
                let start = end
                    .saturating_sub(self.mss())
                    .max(floor)
                    .max(self.snd.snd_una);
                return Some((start, end - start, Seg::Rescue));
            }
        }
        None
    }

    /// RFC 6675 §5 step (4), the part before the first retransmission (shared by RACK):
    /// enter fast recovery, (4.1) RecoveryPoint = HighData, no rescue sent yet, (4.2)
    /// ssthresh = cwnd = the congestion control's reduction of FlightSize.
    pub(super) fn recovery_point_and_window(&mut self) {
        self.snd.fast_recovery_enter();
        self.stats.fast_recoveries += 1;
        self.snd.recover = self.snd.snd_max;
        self.snd.sb_mut().rescue_rxt = u64::MAX;
        self.loss_reduce();
        self.snd.cwnd = self.snd.ssthresh;
    }

    /// RFC 6675 §5 step (4): enter loss recovery.
    pub(super) fn sack_enter_recovery(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.recovery_point_and_window();
        // (4.3) retransmit HighACK + 1; HighRxt = its end.
        if let Some((s, len)) = self.first_unsacked(self.snd.snd_una) {
            self.emit_segment(now, s, len, out);
            self.snd.sb_mut().high_rxt = s + len;
        }
        // (4.4) SetPipe, (4.5) step (C).
        self.sack_send(now, out);
    }

    /// RFC 6675 §5 (B.2) SetPipe and (C): send while cwnd − pipe ≥ 1 SMSS.
    pub(super) fn sack_send(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.cfg.rack {
            let pipe = self.rack_pipe();
            self.snd.sb_mut().pipe = pipe;
        } else {
            self.set_pipe();
        }
        let mss = self.mss();
        while self.snd.cwnd >= self.snd.sb().pipe + mss {
            let next = if self.cfg.rack {
                self.rack_next_seg()
            } else {
                self.next_seg()
            };
            let Some((seq, len, what)) = next else {
                break;
            };
            self.emit_segment(now, seq, len, out);
            match what {
                Seg::Rxt => {
                    let sb = self.snd.sb_mut();
                    sb.high_rxt = sb.high_rxt.max(seq + len); // (C.2)
                }
                // (4): RescueRxt = RecoveryPoint; HighRxt is not updated.
                Seg::Rescue => self.snd.sb_mut().rescue_rxt = self.snd.recover,
                Seg::New => {
                    self.snd.snd_max = seq + len;
                    self.snd.snd_nxt = self.snd.snd_nxt.max(seq + len);
                }
            }
            self.snd.sb_mut().pipe += len; // (C.4)
        }
    }
}

/// Drop the parts of a scoreboard at or below `una`.
pub(super) fn sack_prune(v: &mut Vec<(u64, u64)>, una: u64) {
    let n = v.iter().take_while(|r| r.1 <= una).count();
    if n > 0 {
        v.drain(..n);
    }
    if let Some(first) = v.first_mut() {
        if first.0 < una {
            first.0 = una;
        }
    }
}

/// Insert [s, e) into a sorted list of disjoint ranges, merging overlaps.
/// Returns whether [s, e) held octets not in the list before (ranges never touch, so a
/// range not inside one existing range adds some).
pub(super) fn insert_range(v: &mut Vec<(u64, u64)>, s: u64, e: u64) -> bool {
    // Sorted and disjoint, so ends ascend: the ranges ending before `s` are a prefix, and
    // those starting at or before `e` after them are one run (found by binary search; a
    // scoreboard under heavy loss holds hundreds of ranges).
    let i = v.partition_point(|r| r.1 < s);
    if i < v.len() && v[i].0 <= s && e <= v[i].1 {
        return false;
    }
    let j = i + v[i..].partition_point(|r| r.0 <= e);
    let (mut s, mut e) = (s, e);
    if j > i {
        s = s.min(v[i].0);
        e = e.max(v[j - 1].1);
        v.drain(i + 1..j);
        v[i] = (s, e);
    } else {
        v.insert(i, (s, e));
    }
    true
}

//! NewReno: RFC 5681 window growth (slow start, congestion avoidance) with RFC 3465
//! appropriate byte counting as an option, RFC 5681 eq. (4) ssthresh on loss (the RFC 6582
//! loss recovery itself is the core's), and the RFC 3168 §6.1.2 reaction to ECE: the same
//! reduction as for a loss, once per window of data, with CWR on the next new segment.
//!
//! These are the defaults of [`CongestionControl`], so the controller itself only names
//! itself; the functions here are what the defaults call.

use super::{loss_ssthresh, CongestionControl};
use crate::model::tcp::{Sender, TcpConfig};

/// RFC 5681 / RFC 6582 NewReno (with `tcp.ecn`, the RFC 3168 ECN reaction).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewReno;

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
}

/// Window growth on an ACK of `acked` new bytes.
#[inline]
pub fn grow(snd: &mut Sender, cfg: &TcpConfig, acked: u64) {
    let mss = cfg.mss as u64;
    if cfg.abc_limit > 0 {
        if snd.cwnd < snd.ssthresh {
            // RFC 3465 §2.3: slow start grows by the bytes acked, at most L·SMSS.
            snd.cwnd += acked.min(cfg.abc_limit as u64 * mss);
        } else {
            // RFC 3465 §2.1: one SMSS once a full cwnd of bytes has been acked.
            snd.abc_bytes += acked;
            if snd.abc_bytes >= snd.cwnd {
                snd.abc_bytes -= snd.cwnd;
                snd.cwnd += mss;
            }
        }
    } else if snd.cwnd < snd.ssthresh {
        // Slow start: one MSS per ACK (RFC 5681 eq. 2, L = 1 SMSS).
        snd.cwnd += acked.min(mss);
    } else {
        // Congestion avoidance (RFC 5681 eq. 3).
        snd.cwnd += (mss * mss / snd.cwnd).max(1);
    }
}

/// RFC 5681 eq. (4): ssthresh = max(FlightSize / 2, 2·SMSS).
#[inline]
pub fn half_flight(cfg: &TcpConfig, flight: u64) -> u64 {
    let mss = cfg.mss as u64;
    (flight / 2).max(2 * mss)
}

/// RFC 3168 §6.1.2: on ECE, ssthresh as for a loss (from the FlightSize) and cwnd :=
/// ssthresh.
#[inline]
pub fn ece_as_loss<C: CongestionControl + ?Sized>(cc: &C, snd: &mut Sender, cfg: &TcpConfig) {
    let flight = snd.snd_max - snd.snd_una;
    snd.ssthresh = loss_ssthresh(cc, snd, cfg, flight);
    snd.cwnd = snd.ssthresh;
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cfg, sender};
    use super::*;
    use crate::model::tcp::EcnRxPolicy;

    const MSS: u64 = 1460;

    #[test]
    fn slow_start_then_congestion_avoidance_per_ack() {
        let c = cfg();
        let mut s = sender(&c, 2 * MSS, 4 * MSS);
        let mut cc = NewReno;
        // Slow start: one MSS per ACK whatever it acknowledges (L = 1 SMSS).
        cc.on_ack(&mut s, &c, 3 * MSS);
        assert_eq!(s.cwnd, 3 * MSS);
        cc.on_ack(&mut s, &c, 500);
        assert_eq!(s.cwnd, 3 * MSS + 500);
        cc.on_ack(&mut s, &c, MSS);
        assert_eq!(s.cwnd, 4 * MSS + 500);
        // Congestion avoidance: MSS²/cwnd per ACK, integer division.
        let w = 4 * MSS + 500;
        cc.on_ack(&mut s, &c, MSS);
        assert_eq!(s.cwnd, w + MSS * MSS / w);
        assert_eq!(MSS * MSS / w, 336);
    }

    #[test]
    fn byte_counting_with_limit_two() {
        let c = TcpConfig {
            abc_limit: 2,
            ..cfg()
        };
        let mut s = sender(&c, 2 * MSS, 10 * MSS);
        let mut cc = NewReno;
        // Slow start: the bytes acked, at most 2 SMSS per ACK (RFC 3465 §2.3).
        cc.on_ack(&mut s, &c, 5 * MSS);
        assert_eq!(s.cwnd, 4 * MSS);
        cc.on_ack(&mut s, &c, MSS);
        assert_eq!(s.cwnd, 5 * MSS);
        // Congestion avoidance: one SMSS once cwnd bytes are acked, the rest carried over.
        s.ssthresh = 5 * MSS;
        for _ in 0..4 {
            cc.on_ack(&mut s, &c, MSS);
        }
        assert_eq!((s.cwnd, s.abc_bytes), (5 * MSS, 4 * MSS));
        cc.on_ack(&mut s, &c, 2 * MSS);
        assert_eq!((s.cwnd, s.abc_bytes), (6 * MSS, MSS));
    }

    #[test]
    fn ece_halves_the_flight_with_a_floor_of_two_segments() {
        let c = TcpConfig {
            ecn: true,
            ecn_rx: EcnRxPolicy::Standard,
            ..cfg()
        };
        let mut cc = NewReno;
        let mut s = sender(&c, 20 * MSS, u64::MAX);
        s.snd_una = 10 * MSS;
        s.snd_max = 21 * MSS;
        cc.on_ece(&mut s, &c);
        assert_eq!((s.ssthresh, s.cwnd), (5 * MSS + MSS / 2, 5 * MSS + MSS / 2));
        s.snd_max = 12 * MSS;
        cc.on_ece(&mut s, &c);
        assert_eq!((s.ssthresh, s.cwnd), (2 * MSS, 2 * MSS));
        // ns-2's slowdown: half of cwnd in whole packets, whatever is in flight.
        let ns2 = TcpConfig {
            ssthresh_from_cwnd: true,
            ..c
        };
        s.cwnd = 9 * MSS + 100;
        cc.on_ece(&mut s, &ns2);
        assert_eq!((s.ssthresh, s.cwnd), (4 * MSS, 4 * MSS));
    }

    #[test]
    fn rfc3168_sender_defaults() {
        let cc = NewReno;
        assert!(!cc.implies_ecn() && !cc.ect_on_syn() && !cc.ect_on_retransmit());
        assert!(cc.sets_cwr() && cc.cuts_once_per_window() && cc.holds_window_after_ece());
        assert!(!cc.acts_after_idle());
        assert_eq!(cc.default_receiver(), EcnRxPolicy::Standard);
        assert_eq!(cc.alpha(), None);
    }
}

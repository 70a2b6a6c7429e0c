//! DCTCP sender (RFC 8257 §3.3–3.5): alpha, an EWMA with gain g of the fraction of bytes
//! acknowledged with ECE per observation window, and on ECE a window cut by alpha / 2
//! once per window of data. ECT(0) goes on every packet, SYN and retransmissions included,
//! and no CWR is sent (DCTCP as originally designed; the receiver's ECE follows CE,
//! `EcnRxPolicy::Dctcp`). Window growth and the reaction to loss are NewReno's (§3.4).
//!
//! The two behaviours on which the stacks differ are options ([`DctcpConfig`]):
//! - `recovery_mode`: Linux `tcp_dctcp.c` runs the cut through the CWR state, so cwnd does
//!   not grow until the window of data outstanding at the cut is acknowledged; FreeBSD
//!   `cc_dctcp.c` (and the ODCTCP thesis's modified DCTCP, §4.1 (a)) keeps growing.
//! - `reset_alpha_after_idle`: FreeBSD `cc_dctcp.c` `dctcp_after_idle` sets alpha back to
//!   its initial value and starts a new observation window after an idle period; Linux
//!   and ns-3 keep alpha.

use super::CongestionControl;
use crate::model::tcp::profile::TcpProfile;
use crate::model::tcp::{EcnRxPolicy, Sender, TcpConfig};

/// DCTCP's parameters (`tcp.dctcp_*`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpConfig {
    /// Gain g of the alpha EWMA (RFC 8257 §3.3: 1/16; Linux, FreeBSD, ns-3 and ns-2 use
    /// 1/16 too).
    pub g: f64,
    /// alpha at start, and after idle with `reset_alpha_after_idle` (RFC 8257 §3.3, Linux
    /// and ns-3: 1; FreeBSD 2016 and the ODCTCP thesis's evaluation: 0).
    pub alpha_init: f64,
    /// true: no cwnd growth until the window after an ECE cut is acked (Linux CWR state);
    /// false: growth continues (FreeBSD / ODCTCP thesis, docs/models.md §3.5 (a)).
    pub recovery_mode: bool,
    /// Reset alpha (and the observation window) after an idle period longer than the RTO
    /// (FreeBSD `dctcp_after_idle`).
    pub reset_alpha_after_idle: bool,
    /// A loss detected by duplicate ACKs in the window of an ECE cut: false ("hold",
    /// RFC 3168 §6.1.2, Linux, FreeBSD): the cut covers it, ssthresh stays; true
    /// ("halve"): the DCTCP authors' ns-2 code (`SackFullTcpAgent::dupack_action`, "cut
    /// window by half when we have 3 dup ack") halves ssthresh and cwnd again.
    pub halve_on_loss_after_ece: bool,
    /// cwnd grows on ACKs that carry ECE (Linux, FreeBSD: growth follows the ACKed bytes);
    /// false: never on those (the DCTCP authors' ns-2 code: FullTcp opens cwnd only on an
    /// ACK without ECE).
    pub grow_on_ece_ack: bool,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: 1.0 / 16.0,
            alpha_init: 1.0,
            recovery_mode: true,
            reset_alpha_after_idle: false,
            halve_on_loss_after_ece: false,
            grow_on_ece_ack: true,
        }
    }
}

impl DctcpConfig {
    /// The parameters of DCTCP as a stack profile's stack has it (`tcp.profile`).
    pub fn for_profile(p: TcpProfile) -> DctcpConfig {
        match p {
            // tcp_dctcp.c keeps the CWR state (recovery_mode), as the default.
            TcpProfile::Linux => DctcpConfig {
                recovery_mode: true,
                ..DctcpConfig::default()
            },
            // FreeBSD 11-13 `cc_dctcp.c`.
            TcpProfile::FreeBsd => DctcpConfig {
                recovery_mode: false,         // growth continues after an ECE cut
                reset_alpha_after_idle: true, // dctcp_after_idle
                alpha_init: 0.0,              // net.inet.tcp.cc.dctcp.alpha = 0
                ..DctcpConfig::default()
            },
            _ => DctcpConfig::default(),
        }
    }

    /// The keys and values the profile table shows.
    pub fn params(&self) -> Vec<(&'static str, String)> {
        let on = |b: bool| if b { "on" } else { "off" }.to_string();
        vec![
            ("dctcp_alpha_init", self.alpha_init.to_string()),
            ("dctcp_recovery_mode", on(self.recovery_mode)),
            (
                "dctcp_reset_alpha_after_idle",
                on(self.reset_alpha_after_idle),
            ),
            ("dctcp_grow_on_ece", on(self.grow_on_ece_ack)),
            (
                "dctcp_loss_after_ece",
                if self.halve_on_loss_after_ece {
                    "halve"
                } else {
                    "hold"
                }
                .to_string(),
            ),
        ]
    }
}

/// A DCTCP sender's state (RFC 8257 §3.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Dctcp {
    pub cfg: DctcpConfig,
    pub alpha: f64,
    /// DCTCP.BytesAcked and DCTCP.BytesMarked of the current observation window.
    pub acked: u64,
    pub marked: u64,
    /// DCTCP.WindowEnd.
    pub window_end: u64,
}

impl Dctcp {
    pub fn new(cfg: DctcpConfig) -> Dctcp {
        Dctcp {
            cfg,
            alpha: cfg.alpha_init,
            acked: 0,
            marked: 0,
            // RFC 8257 §3.3: DCTCP.WindowEnd starts at SND.NXT.
            window_end: 0,
        }
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    #[inline]
    fn implies_ecn(&self) -> bool {
        true
    }

    #[inline]
    fn default_receiver(&self) -> EcnRxPolicy {
        EcnRxPolicy::Dctcp
    }

    /// DCTCP: ECT on all packets (docs/models.md §3.2).
    #[inline]
    fn ect_on_syn(&self) -> bool {
        true
    }

    #[inline]
    fn ect_on_retransmit(&self) -> bool {
        true
    }

    /// DCTCP as originally designed sends no CWR (docs/models.md §3.5 problem 1).
    #[inline]
    fn sets_cwr(&self) -> bool {
        false
    }

    #[inline]
    fn holds_window_after_ece(&self) -> bool {
        self.cfg.recovery_mode
    }

    #[inline]
    fn grows_on_ece_ack(&self) -> bool {
        self.cfg.grow_on_ece_ack
    }

    #[inline]
    fn reduces_again_on_loss(&self) -> bool {
        self.cfg.halve_on_loss_after_ece
    }

    /// RFC 8257 §3.3: the observation window starts at SND.NXT.
    #[inline]
    fn on_connected(&mut self, snd: &Sender) {
        self.window_end = snd.snd_nxt;
    }

    /// RFC 8257 §3.3 steps 1–9: count acked and marked bytes; at the end of each
    /// observation window (SND.UNA passes WindowEnd) update alpha. Duplicates acknowledge
    /// 0 bytes (RFC 8257 reading).
    #[inline]
    fn on_ack_ecn(&mut self, snd: &Sender, _cfg: &TcpConfig, a: u64, ece: bool) {
        let newly = a.saturating_sub(snd.snd_una);
        self.acked += newly;
        if ece {
            self.marked += newly;
        }
        let una = a.max(snd.snd_una);
        if una > self.window_end {
            let m = if self.acked > 0 {
                self.marked as f64 / self.acked as f64
            } else {
                0.0
            };
            let g = self.cfg.g;
            self.alpha = (1.0 - g) * self.alpha + g * m;
            self.window_end = snd.snd_nxt.max(a);
            self.acked = 0;
            self.marked = 0;
        }
    }

    /// RFC 8257 §3.3: cwnd := cwnd·(1 − alpha/2), computed as FreeBSD does,
    /// cwnd − floor(cwnd·alpha/2), floor 2·SMSS; ssthresh := cwnd.
    #[inline]
    fn on_ece(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        let mss = cfg.mss as u64;
        let cut = (snd.cwnd as f64 * self.alpha / 2.0) as u64;
        snd.cwnd = snd.cwnd.saturating_sub(cut).max(2 * mss);
        snd.ssthresh = snd.cwnd;
    }

    #[inline]
    fn acts_after_idle(&self) -> bool {
        self.cfg.reset_alpha_after_idle
    }

    /// FreeBSD `dctcp_after_idle`: alpha back to its initial value, a new window.
    #[inline]
    fn after_idle(&mut self, snd: &Sender) {
        if self.cfg.reset_alpha_after_idle {
            self.alpha = self.cfg.alpha_init;
            self.acked = 0;
            self.marked = 0;
            self.window_end = snd.snd_nxt;
        }
    }

    #[inline]
    fn alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cfg, sender};
    use super::*;

    const MSS: u64 = 1460;

    /// Feed ACK `a` (with ECE or not) as the core does: the controller sees it before
    /// SND.UNA moves.
    fn ack(d: &mut Dctcp, s: &mut Sender, c: &TcpConfig, a: u64, ece: bool) {
        d.on_ack_ecn(s, c, a, ece);
        s.snd_una = s.snd_una.max(a);
    }

    #[test]
    fn alpha_is_updated_once_per_observation_window() {
        let c = cfg();
        let mut s = sender(&c, 10 * MSS, u64::MAX);
        let mut d = Dctcp::new(DctcpConfig::default());
        s.snd_nxt = 3 * MSS;
        d.on_connected(&s);
        assert_eq!(d.window_end, 3 * MSS);
        // Window [0, 3): 1 MSS ECE, 1 MSS not, a duplicate with ECE (0 bytes), 1 MSS ECE.
        ack(&mut d, &mut s, &c, MSS, true);
        ack(&mut d, &mut s, &c, 2 * MSS, false);
        ack(&mut d, &mut s, &c, 2 * MSS, true);
        ack(&mut d, &mut s, &c, 3 * MSS, true);
        assert_eq!((d.acked, d.marked, d.alpha), (3 * MSS, 2 * MSS, 1.0));
        // The next ACK (1 MSS, ECE) passes WindowEnd: M = 3/4 → alpha = 15/16 + 1/16·3/4 =
        // 63/64; the new window ends at SND.NXT.
        s.snd_nxt = 8 * MSS;
        ack(&mut d, &mut s, &c, 4 * MSS, true);
        assert_eq!(d.alpha, 63.0 / 64.0);
        assert_eq!((d.acked, d.marked, d.window_end), (0, 0, 8 * MSS));
        // A window with no marks: alpha·15/16.
        ack(&mut d, &mut s, &c, 8 * MSS, false);
        ack(&mut d, &mut s, &c, 9 * MSS, false);
        assert_eq!(d.alpha, 63.0 / 64.0 * 15.0 / 16.0);
        assert_eq!(d.alpha(), Some(945.0 / 1024.0));
    }

    #[test]
    fn gain_and_initial_alpha_are_parameters() {
        let c = cfg();
        let mut s = sender(&c, 10 * MSS, u64::MAX);
        let mut d = Dctcp::new(DctcpConfig {
            g: 0.5,
            alpha_init: 0.0,
            ..DctcpConfig::default()
        });
        assert_eq!(d.alpha, 0.0);
        s.snd_nxt = 2 * MSS;
        ack(&mut d, &mut s, &c, MSS, true); // window [0, 0) closes: M = 1
        assert_eq!((d.alpha, d.window_end), (0.5, 2 * MSS));
        s.snd_nxt = 3 * MSS;
        ack(&mut d, &mut s, &c, 2 * MSS, true);
        ack(&mut d, &mut s, &c, 3 * MSS, false); // M = 1/2
        assert_eq!(d.alpha, 0.5);
    }

    #[test]
    fn ece_cuts_by_half_alpha_with_a_floor_of_two_segments() {
        let c = cfg();
        let mut s = sender(&c, 100 * MSS, u64::MAX);
        let mut d = Dctcp::new(DctcpConfig::default());
        d.alpha = 31.0 / 32.0;
        d.on_ece(&mut s, &c);
        // 146000 − floor(146000 · 31/64) = 146000 − 70718.
        assert_eq!((s.cwnd, s.ssthresh), (75_282, 75_282));
        d.alpha = 1.0;
        s.cwnd = 2 * MSS + 1;
        d.on_ece(&mut s, &c);
        assert_eq!((s.cwnd, s.ssthresh), (2 * MSS, 2 * MSS));
        // Loss is NewReno's (RFC 8257 §3.4): half the flight, alpha not used.
        s.snd_una = 0;
        s.snd_max = 30 * MSS;
        assert_eq!(d.ssthresh_on_loss(&s, &c, 30 * MSS), 15 * MSS);
    }

    #[test]
    fn alpha_reset_after_idle_only_with_the_option() {
        let c = cfg();
        let mut s = sender(&c, 10 * MSS, u64::MAX);
        let mut keep = Dctcp::new(DctcpConfig::default());
        keep.alpha = 0.25;
        keep.acked = 7;
        s.snd_nxt = 12 * MSS;
        assert!(!keep.acts_after_idle());
        keep.after_idle(&s);
        assert_eq!((keep.alpha, keep.acked), (0.25, 7));
        let mut reset = Dctcp::new(DctcpConfig {
            reset_alpha_after_idle: true,
            alpha_init: 0.0,
            ..DctcpConfig::default()
        });
        reset.alpha = 0.25;
        reset.acked = 7;
        reset.marked = 3;
        assert!(reset.acts_after_idle());
        reset.after_idle(&s);
        assert_eq!(
            (reset.alpha, reset.acked, reset.marked, reset.window_end),
            (0.0, 0, 0, 12 * MSS)
        );
    }

    #[test]
    fn dctcp_sender_signals() {
        let d = Dctcp::new(DctcpConfig::default());
        assert!(d.implies_ecn() && d.ect_on_syn() && d.ect_on_retransmit());
        assert!(!d.sets_cwr() && d.cuts_once_per_window() && d.holds_window_after_ece());
        assert_eq!(d.default_receiver(), EcnRxPolicy::Dctcp);
        let freebsd = Dctcp::new(DctcpConfig::for_profile(TcpProfile::FreeBsd));
        assert!(!freebsd.holds_window_after_ece());
        assert_eq!(freebsd.alpha(), Some(0.0));
        assert_eq!(
            DctcpConfig::for_profile(TcpProfile::Linux),
            DctcpConfig::default()
        );
    }
}

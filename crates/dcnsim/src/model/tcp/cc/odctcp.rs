//! One-sided DCTCP (ODCTCP thesis ch. 4–5; docs/models.md §3.5): the DCTCP sender of
//! `dctcp.rs` that also sets CWR on the next new data segment after an ECE-triggered
//! reduction, so that it works with a standard RFC 3168 receiver, which latches ECE until
//! it sees CWR, as well as with its own receiver (`EcnRxPolicy::Odctcp`, which keeps the
//! delayed ACK on a CWR segment as FreeBSD's `dctcp_ecnpkt_handler` does). Everything else
//! (alpha, the cut, the options) is DCTCP's.

use super::{CongestionControl, Dctcp, DctcpConfig};
use crate::model::tcp::{EcnRxPolicy, Sender, TcpConfig};

/// An ODCTCP sender: DCTCP's state, CWR after a cut.
#[derive(Clone, Debug, PartialEq)]
pub struct Odctcp(pub Dctcp);

impl Odctcp {
    pub fn new(cfg: DctcpConfig) -> Odctcp {
        Odctcp(Dctcp::new(cfg))
    }
}

impl CongestionControl for Odctcp {
    fn name(&self) -> &'static str {
        "odctcp"
    }

    /// ODCTCP thesis ch. 5: CWR after every reduction, as an RFC 3168 sender.
    #[inline]
    fn sets_cwr(&self) -> bool {
        true
    }

    #[inline]
    fn default_receiver(&self) -> EcnRxPolicy {
        EcnRxPolicy::Odctcp
    }

    // The rest is DCTCP's.
    #[inline]
    fn on_ack(&mut self, snd: &mut Sender, cfg: &TcpConfig, acked: u64) {
        self.0.on_ack(snd, cfg, acked)
    }
    #[inline]
    fn ssthresh_on_loss(&self, snd: &Sender, cfg: &TcpConfig, flight: u64) -> u64 {
        self.0.ssthresh_on_loss(snd, cfg, flight)
    }
    #[inline]
    fn on_recovery_exit(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        self.0.on_recovery_exit(snd, cfg)
    }
    #[inline]
    fn on_rto(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        self.0.on_rto(snd, cfg)
    }
    #[inline]
    fn acts_after_idle(&self) -> bool {
        self.0.acts_after_idle()
    }
    #[inline]
    fn after_idle(&mut self, snd: &Sender) {
        self.0.after_idle(snd)
    }
    #[inline]
    fn on_connected(&mut self, snd: &Sender) {
        self.0.on_connected(snd)
    }
    #[inline]
    fn implies_ecn(&self) -> bool {
        self.0.implies_ecn()
    }
    #[inline]
    fn ect_on_syn(&self) -> bool {
        self.0.ect_on_syn()
    }
    #[inline]
    fn ect_on_retransmit(&self) -> bool {
        self.0.ect_on_retransmit()
    }
    #[inline]
    fn cuts_once_per_window(&self) -> bool {
        self.0.cuts_once_per_window()
    }
    #[inline]
    fn holds_window_after_ece(&self) -> bool {
        self.0.holds_window_after_ece()
    }
    #[inline]
    fn on_ack_ecn(&mut self, snd: &Sender, cfg: &TcpConfig, ack: u64, ece: bool) {
        self.0.on_ack_ecn(snd, cfg, ack, ece)
    }
    #[inline]
    fn on_ece(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        self.0.on_ece(snd, cfg)
    }
    #[inline]
    fn alpha(&self) -> Option<f64> {
        self.0.alpha()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cfg, sender};
    use super::*;

    const MSS: u64 = 1460;

    #[test]
    fn odctcp_is_dctcp_with_cwr() {
        let c = cfg();
        let (mut o, mut d) = (
            Odctcp::new(DctcpConfig::default()),
            Dctcp::new(DctcpConfig::default()),
        );
        assert!(o.sets_cwr() && !d.sets_cwr());
        assert_eq!(o.default_receiver(), EcnRxPolicy::Odctcp);
        assert!(o.implies_ecn() && o.ect_on_syn() && o.ect_on_retransmit());
        // The same scripted ACKs and cuts give the same alpha and windows.
        let (mut so, mut sd) = (
            sender(&c, 50 * MSS, u64::MAX),
            sender(&c, 50 * MSS, u64::MAX),
        );
        for (s, cc) in [
            (&mut so, &mut o as &mut dyn CongestionControl),
            (&mut sd, &mut d as &mut dyn CongestionControl),
        ] {
            s.snd_nxt = MSS;
            cc.on_connected(s);
            s.snd_nxt = 4 * MSS;
            for (a, ece) in [(MSS, true), (2 * MSS, false), (3 * MSS, true)] {
                cc.on_ack_ecn(s, &c, a, ece);
                s.snd_una = a;
            }
            cc.on_ece(s, &c);
        }
        // Window [0, 1) closes at the ACK of 2 MSS with M = 1/2: alpha = 31/32; the ACK of
        // 3 MSS is inside the next window (up to 4 MSS).
        assert_eq!(o.alpha(), Some(31.0 / 32.0));
        assert_eq!(o.alpha(), d.alpha());
        assert_eq!((so.cwnd, so.ssthresh), (sd.cwnd, sd.ssthresh));
        let cut = (50.0 * MSS as f64 * o.0.alpha / 2.0) as u64;
        assert_eq!(so.cwnd, 50 * MSS - cut);
        let freebsd = Odctcp::new(DctcpConfig {
            recovery_mode: false,
            ..DctcpConfig::default()
        });
        assert!(!freebsd.holds_window_after_ece());
    }
}

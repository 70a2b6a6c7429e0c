//! The contract driven through a whole sender: toy controllers defined here run through
//! [`Cc::Custom`] and the core asks them, not a built-in, at every hook; and the registry.

use super::*;
use crate::base::ids::{FlowId, NodeId};
use crate::base::packet::{flags, Ecn, Kind, Packet};
use crate::base::units::SimTime;
use crate::model::tcp::TcpFlow;

const MSS: u64 = 1460;

/// The default configuration (for the controllers' own unit tests).
pub(super) fn cfg() -> TcpConfig {
    TcpConfig::default()
}

/// A sender of configuration `c` with the given cwnd and ssthresh (nothing sent).
pub(super) fn sender(c: &TcpConfig, cwnd: u64, ssthresh: u64) -> Sender {
    let mut f = TcpFlow::new(FlowId(0), NodeId(1), NodeId(2), c.clone());
    f.snd.cwnd = cwnd;
    f.snd.ssthresh = ssthresh;
    f.snd
}

/// AIMD with β = 0.7 and one SMSS per ACK, reacting to every ECE (not once per window);
/// reports the number of ECE cuts it made as its per-flow value.
#[derive(Clone, Debug, Default)]
struct Aimd {
    cuts: u32,
}

impl CongestionControl for Aimd {
    fn name(&self) -> &'static str {
        "toy-aimd"
    }
    fn on_ack(&mut self, snd: &mut Sender, cfg: &TcpConfig, _acked: u64) {
        snd.cwnd += cfg.mss as u64;
    }
    fn ssthresh_on_loss(&self, _snd: &Sender, cfg: &TcpConfig, flight: u64) -> u64 {
        (flight * 7 / 10).max(2 * cfg.mss as u64)
    }
    fn on_ece(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        // The same cut as on a loss, from the window.
        snd.cwnd = self.ssthresh_on_loss(snd, cfg, snd.cwnd);
        snd.ssthresh = snd.cwnd;
        self.cuts += 1;
    }
    fn cuts_once_per_window(&self) -> bool {
        false
    }
    fn alpha(&self) -> Option<f64> {
        Some(self.cuts as f64)
    }
}

fn ack(a: u64, ece: bool) -> Packet {
    Packet {
        ack: a,
        flags: if ece { flags::ECE } else { 0 },
        ..Packet::new(Kind::Ack, FlowId(0), (NodeId(2), NodeId(1)), 40, 0)
    }
}

#[test]
fn a_toy_controller_runs_the_window_through_the_seam() {
    let c = TcpConfig {
        cc: CcConfig::custom("toy-aimd", || Box::new(Aimd::default())),
        ecn: true,
        ecn_rx: EcnRxPolicy::Standard,
        init_cwnd: 10,
        ..cfg()
    };
    let mut f = TcpFlow::new(FlowId(0), NodeId(1), NodeId(2), c);
    assert!(matches!(f.cc, Cc::Custom(_)));
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 100 * MSS, &mut out);
    assert_eq!(out.len(), 10);
    // ECE: cwnd 14600 → 10220; a second ECE in the same window cuts again (10220 → 7154),
    // which the RFC 3168 default would not.
    f.on_ack(SimTime::from_us(100), &ack(MSS, true), &mut out);
    assert_eq!((f.snd.cwnd, f.snd.ssthresh), (10_220, 10_220));
    f.on_ack(SimTime::from_us(101), &ack(2 * MSS, true), &mut out);
    assert_eq!((f.snd.cwnd, f.snd.ssthresh), (7_154, 7_154));
    assert_eq!(f.stats.ecn_reductions, 2);
    assert_eq!(f.alpha_or_none(), 2.0);
    // The ACK that closes the reduction window does not grow cwnd; it opens 4 segments,
    // the first with CWR (the default `sets_cwr`).
    out.clear();
    f.on_ack(SimTime::from_us(102), &ack(10 * MSS, false), &mut out);
    assert_eq!(f.snd.cwnd, 7_154);
    assert_eq!(out.len(), 4);
    assert_eq!(f.stats.cwr_sent, 1);
    // Growth is the toy's: one SMSS per ACK, in "congestion avoidance" too.
    f.on_ack(SimTime::from_us(103), &ack(11 * MSS, false), &mut out);
    assert_eq!(f.snd.cwnd, 7_154 + MSS);
    // A timeout takes the toy's ssthresh: 0.7 of the 5 MSS in flight (segments 11–15).
    assert_eq!(f.flight(), 5 * MSS);
    let t = f.snd.rto_timer.deadline;
    f.on_rto(t, &mut out);
    assert_eq!((f.snd.ssthresh, f.snd.cwnd), (5 * MSS * 7 / 10, MSS));
}

/// Counts the hooks the core calls; asks for ECT on the SYN and for the idle hook.
#[derive(Clone, Debug, Default)]
struct Probe {
    connected: u32,
    exits: u32,
    idles: u32,
    rtos: u32,
}

impl CongestionControl for Probe {
    fn name(&self) -> &'static str {
        "probe"
    }
    fn implies_ecn(&self) -> bool {
        true
    }
    fn ect_on_syn(&self) -> bool {
        true
    }
    fn on_connected(&mut self, _snd: &Sender) {
        self.connected += 1;
    }
    fn on_recovery_exit(&mut self, _snd: &mut Sender, _cfg: &TcpConfig) {
        self.exits += 1;
    }
    fn on_rto(&mut self, snd: &mut Sender, _cfg: &TcpConfig) {
        assert_eq!(snd.cwnd, MSS, "called after the loss window is set");
        self.rtos += 1;
    }
    fn acts_after_idle(&self) -> bool {
        true
    }
    fn after_idle(&mut self, _snd: &Sender) {
        self.idles += 1;
    }
}

/// Deliver packets between sender `f` and receiver `r` until none is left, one µs apart
/// from `now`; `drop` decides per data segment. Returns the time after the last.
fn pump(
    f: &mut TcpFlow,
    r: &mut TcpFlow,
    mut now: SimTime,
    first: Vec<Packet>,
    drop: &mut dyn FnMut(&Packet) -> bool,
) -> SimTime {
    let mut q: std::collections::VecDeque<Packet> = first.into();
    while let Some(p) = q.pop_front() {
        now = now + SimTime::from_us(1);
        let mut out = Vec::new();
        match p.kind {
            Kind::Data | Kind::Syn if !drop(&p) => r.on_segment(now, &p, &mut out),
            Kind::Ack | Kind::SynAck => f.on_ack(now, &p, &mut out),
            _ => {}
        }
        q.extend(out);
    }
    now
}

#[test]
fn the_core_calls_every_hook_of_a_toy_controller() {
    let c = TcpConfig {
        cc: CcConfig::custom("probe", || Box::new(Probe::default())),
        ecn_rx: EcnRxPolicy::Standard,
        handshake: true,
        ..cfg()
    };
    assert!(!c.ecn, "ECN comes from the controller");
    let (mut f, mut r) = (
        TcpFlow::new(FlowId(0), NodeId(1), NodeId(2), c.clone()),
        TcpFlow::new(FlowId(0), NodeId(1), NodeId(2), c),
    );
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 30 * MSS, &mut out);
    assert_eq!((out[0].kind, out[0].ecn), (Kind::Syn, Ecn::Ect0));
    // Segment 10 is lost once: three duplicate ACKs, fast recovery, a full ACK.
    let mut lost = false;
    let mut drop = |p: &Packet| {
        let d = p.seq == 10 * MSS && !lost;
        lost |= d;
        d
    };
    let now = pump(&mut f, &mut r, SimTime::ZERO, out, &mut drop);
    assert!(lost);
    assert_eq!((f.snd.snd_una, f.stats.fast_recoveries), (30 * MSS, 1));
    // Idle for longer than the RTO, then a write; then a write lost entirely and a timeout.
    let mut out = Vec::new();
    let now = now + SimTime::from_ms(5000);
    f.app_write(now, 2 * MSS, &mut out);
    let now = pump(&mut f, &mut r, now, out, &mut |_| false);
    let mut out = Vec::new();
    f.app_write(now, 2 * MSS, &mut out);
    let t = f.snd.rto_timer.deadline;
    f.on_rto(t, &mut out);
    assert_eq!(f.stats.timeouts, 1);
    let Cc::Custom(probe) = &f.cc else {
        panic!("not the toy")
    };
    assert_eq!(
        format!("{probe:?}"),
        "Probe { connected: 1, exits: 1, idles: 1, rtos: 1 }"
    );
}

#[test]
fn built_in_configurations_build_their_own_variant() {
    assert!(matches!(CcConfig::NewReno.build(), Cc::NewReno(_)));
    let d = DctcpConfig::default();
    assert!(matches!(CcConfig::Dctcp(d).build(), Cc::Dctcp(_)));
    assert!(matches!(CcConfig::Odctcp(d).build(), Cc::Odctcp(_)));
    assert_eq!(CcConfig::Odctcp(d).name(), "odctcp");
    assert!(CcConfig::Dctcp(d).implies_ecn() && !CcConfig::NewReno.implies_ecn());
    assert_eq!(CcConfig::Dctcp(d).default_receiver(), EcnRxPolicy::Dctcp);
    assert_eq!(CcConfig::NewReno.dctcp_mut(), None);
    assert_eq!(
        CcConfig::custom("probe", || Box::new(Probe::default())).default_receiver(),
        EcnRxPolicy::Standard
    );
}

#[test]
fn registry_maps_names_to_configurations() {
    let dctcp = lookup("dctcp").unwrap();
    assert_eq!(
        (dctcp.config)(TcpProfile::FreeBsd),
        CcConfig::Dctcp(DctcpConfig::for_profile(TcpProfile::FreeBsd))
    );
    assert!(lookup("sack").unwrap().sack && !lookup("reno").unwrap().sack);
    assert_eq!(
        (lookup("reno").unwrap().config)(TcpProfile::Ns2),
        CcConfig::NewReno
    );
    assert!(lookup("toy-registered").is_none());
    register(CcEntry {
        name: "toy-registered",
        config: |_| CcConfig::custom("toy-registered", || Box::new(Aimd::default())),
        sack: false,
    });
    let e = lookup("toy-registered").unwrap();
    assert!(matches!(
        (e.config)(TcpProfile::Dcnsim).build(),
        Cc::Custom(_)
    ));
    assert!(expected_names().starts_with("\"newreno\", \"reno\", \"sack\", \"dctcp\", \"odctcp\""));
    assert!(expected_names().contains(" or ") && expected_names().contains("\"toy-registered\""));
    // A built-in name is not replaced.
    register(CcEntry {
        name: "dctcp",
        config: |_| CcConfig::NewReno,
        sack: false,
    });
    assert!(matches!(
        (lookup("dctcp").unwrap().config)(TcpProfile::Dcnsim),
        CcConfig::Dctcp(_)
    ));
}

//! Congestion control: the one contract between the TCP loss-recovery core and the
//! algorithm that sizes the window, the built-in controllers behind it, and the registry
//! of names a scenario's `tcp.cc` chooses from.
//!
//! The core (`model/tcp/sender.rs`, `sack.rs`, `rack.rs`) owns sequence space, loss
//! detection and recovery (RFC 5681, RFC 6582, RFC 6675, RFC 8985) and the RFC 3168 ECN
//! bookkeeping (the once-per-window reduction point `recover_ecn`, the reduction window
//! `in_cwr`, CWR on the next new segment). It asks the controller, through
//! [`CongestionControl`], how the window grows on an ACK of new data, how it reacts to an
//! ECN echo, what ssthresh becomes on a loss, what happens after a timeout and after idle,
//! which packets are ECT and whether CWR is sent. The shape follows smoltcp's
//! `socket/tcp/congestion` (one `Controller` contract, an `AnyController` enum of the
//! built-ins) in this project's own terms.
//!
//! A flow holds a [`Cc`]: an enum of the built-in controllers (dispatched by `match`, no
//! virtual call per ACK) plus [`Cc::Custom`], a `Box<dyn CongestionControl>` for a
//! controller defined outside this folder (a test, a user's crate). Its configuration,
//! shared by all flows of one `[tcp]` table, is a [`CcConfig`]; [`registry`] maps the names
//! of `tcp.cc` to configurations.
//!
//! Adding a controller: a new file here implementing [`CongestionControl`] (defaults give
//! NewReno's behaviour for every method it leaves out) and one [`CcEntry`] line in
//! [`BUILTIN`] whose `config` returns `CcConfig::custom(..)`; to dispatch it without a
//! virtual call, also give it a variant of [`Cc`] and [`CcConfig`] (the `each!` list below).

use super::profile::TcpProfile;
use super::{EcnRxPolicy, Sender, TcpConfig};

pub mod dctcp;
pub mod newreno;
pub mod odctcp;

pub use dctcp::{Dctcp, DctcpConfig};
pub use newreno::NewReno;
pub use odctcp::Odctcp;

/// What the loss-recovery core asks of a congestion controller. Every method has the
/// default of NewReno with the RFC 3168 ECN reaction (`newreno.rs`), so a controller
/// writes only what it changes. `snd` is the sender's state (cwnd, ssthresh, sequence
/// numbers); `cfg` the flow's configuration (MSS, ABC limit, receiver window).
pub trait CongestionControl: CcClone + std::fmt::Debug + Send + Sync {
    /// The controller's name as `tcp.cc` spells it.
    fn name(&self) -> &'static str;

    // ------------------------------------------------------------ window

    /// An ACK of `acked` new bytes outside loss recovery and outside a frozen ECE
    /// reduction window ([`Self::holds_window_after_ece`]): grow cwnd. Default: RFC 5681
    /// slow start and congestion avoidance, or RFC 3465 byte counting with `cfg.abc_limit`.
    #[inline]
    fn on_ack(&mut self, snd: &mut Sender, cfg: &TcpConfig, acked: u64) {
        newreno::grow(snd, cfg, acked);
    }

    /// ssthresh after a loss (entering fast recovery, a timeout, a TLP-repaired loss) with
    /// `flight` bytes in flight. The core uses ns-2's `slowdown` instead when
    /// `cfg.ssthresh_from_cwnd` (see [`loss_ssthresh`]). Default: RFC 5681 eq. (4),
    /// max(FlightSize / 2, 2·SMSS).
    #[inline]
    fn ssthresh_on_loss(&self, snd: &Sender, cfg: &TcpConfig, flight: u64) -> u64 {
        let _ = snd;
        newreno::half_flight(cfg, flight)
    }

    /// Loss recovery ended with a full ACK, after the core deflated the window (RFC 6582
    /// step 3 or RFC 6675). Default: nothing more.
    #[inline]
    fn on_recovery_exit(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        let _ = (snd, cfg);
    }

    /// The retransmission timer expired with data outstanding, after the core set
    /// ssthresh ([`Self::ssthresh_on_loss`]) and the loss window (cwnd = 1 SMSS, RFC 5681
    /// §3.1). Default: nothing more.
    #[inline]
    fn on_rto(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        let _ = (snd, cfg);
    }

    /// Whether [`Self::after_idle`] has anything to do (the core then checks for idleness
    /// even without `idle_restart`). Default: no.
    #[inline]
    fn acts_after_idle(&self) -> bool {
        false
    }

    /// The sender is about to send after an idle period longer than the RTO, nothing
    /// outstanding (after the core's RFC 5681 §4.1 restart when `idle_restart`).
    /// Default: nothing.
    #[inline]
    fn after_idle(&mut self, snd: &Sender) {
        let _ = snd;
    }

    /// The handshake completed (SYN-ACK received). Default: nothing.
    #[inline]
    fn on_connected(&mut self, snd: &Sender) {
        let _ = snd;
    }

    // -------------------------------------------------------------- ECN

    /// The controller needs ECN: its flows are ECN-capable whatever `tcp.ecn` says
    /// (`ecn = false` is refused for it). Default: no (RFC 3168 ECN is opt-in).
    #[inline]
    fn implies_ecn(&self) -> bool {
        false
    }

    /// The receiver ECE policy its flows get when the scenario names none and ECN is on.
    /// Default: RFC 3168 §6.1.3, ECE latched until CWR.
    #[inline]
    fn default_receiver(&self) -> EcnRxPolicy {
        EcnRxPolicy::Standard
    }

    /// ECT(0) on the SYN. Default: no (RFC 3168 §6.1.1: SYNs are Not-ECT).
    #[inline]
    fn ect_on_syn(&self) -> bool {
        false
    }

    /// ECT(0) on retransmissions. Default: no (RFC 3168 §6.1.5).
    #[inline]
    fn ect_on_retransmit(&self) -> bool {
        false
    }

    /// CWR on the next new segment after a window reduction. Default: yes (RFC 3168
    /// §6.1.2).
    #[inline]
    fn sets_cwr(&self) -> bool {
        true
    }

    /// React to ECE at most once per window of data (RFC 3168 §6.1.2); false: on every
    /// ACK with ECE outside loss recovery. Default: once per window.
    #[inline]
    fn cuts_once_per_window(&self) -> bool {
        true
    }

    /// No cwnd growth until the window of data outstanding at an ECE reduction is acked
    /// (Linux's CWR state, FreeBSD's congestion recovery). Default: yes.
    #[inline]
    fn holds_window_after_ece(&self) -> bool {
        true
    }

    /// cwnd may grow on an ACK that carries ECE (outside a held window). false: ACKs with
    /// ECE never grow it (RFC 3168 §6.1.2 "SHOULD NOT increase the congestion window in
    /// response to the receipt of an ECN-Echo ACK", read per ACK as ns-2's FullTcp does).
    /// Default: true.
    #[inline]
    fn grows_on_ece_ack(&self) -> bool {
        true
    }

    /// A loss found by duplicate ACKs in the window of an ECE reduction reduces again
    /// (ssthresh from [`loss_ssthresh`]); false: the ECE reduction covers the window
    /// (RFC 3168 §6.1.2: once per window for drops and marks together). Default: false.
    #[inline]
    fn reduces_again_on_loss(&self) -> bool {
        false
    }

    /// Every ACK of an ECN flow, before the core decides on an ECE reaction: `ack` is its
    /// cumulative acknowledgement (`snd.snd_una` is still the previous one), `ece` its ECE
    /// flag. Default: nothing (DCTCP counts marked bytes here).
    #[inline]
    fn on_ack_ecn(&mut self, snd: &Sender, cfg: &TcpConfig, ack: u64, ece: bool) {
        let _ = (snd, cfg, ack, ece);
    }

    /// React to an ECE the core found eligible (outside loss recovery; once per window
    /// unless [`Self::cuts_once_per_window`] is false). Default: RFC 3168 §6.1.2, as for a
    /// loss: ssthresh from [`loss_ssthresh`], cwnd := ssthresh.
    #[inline]
    fn on_ece(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        newreno::ece_as_loss(self, snd, cfg);
    }

    // ----------------------------------------------------------- output

    /// The per-flow value reported in the `alpha` column of the flow tables (DCTCP's
    /// alpha); None: reported as −1. Default: None.
    #[inline]
    fn alpha(&self) -> Option<f64> {
        None
    }
}

/// ssthresh after a loss as the core sets it: ns-2's `slowdown(CLOSE_SSTHRESH_HALF)` with
/// `cfg.ssthresh_from_cwnd` ((int)(min(cwnd_, window_) / 2) packets, at least 2), else the
/// controller's [`CongestionControl::ssthresh_on_loss`].
#[inline]
pub fn loss_ssthresh<C: CongestionControl + ?Sized>(
    cc: &C,
    snd: &Sender,
    cfg: &TcpConfig,
    flight: u64,
) -> u64 {
    let mss = cfg.mss as u64;
    if cfg.ssthresh_from_cwnd {
        let w = snd.cwnd.min(cfg.rwnd) / mss;
        return (w / 2).max(2) * mss;
    }
    cc.ssthresh_on_loss(snd, cfg, flight)
}

/// Cloning a boxed controller (a flow's controller is copied with the flow). Implemented
/// for every `Clone` controller.
pub trait CcClone {
    fn clone_box(&self) -> Box<dyn CongestionControl>;
}

impl<T: CongestionControl + Clone + 'static> CcClone for T {
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn CongestionControl> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// A flow's congestion controller: one of the built-ins, or a user-defined one behind a
/// box (one virtual call per hook, for controllers outside this folder).
#[derive(Clone, Debug)]
pub enum Cc {
    NewReno(NewReno),
    Dctcp(Dctcp),
    Odctcp(Odctcp),
    Custom(Box<dyn CongestionControl>),
}

/// `$e` with `$c` bound to the controller inside whichever variant `$s` is.
macro_rules! each {
    ($s:expr, $c:ident => $e:expr) => {
        match $s {
            Cc::NewReno($c) => $e,
            Cc::Dctcp($c) => $e,
            Cc::Odctcp($c) => $e,
            Cc::Custom($c) => $e,
        }
    };
}

impl CongestionControl for Cc {
    #[inline]
    fn name(&self) -> &'static str {
        each!(self, c => c.name())
    }
    #[inline]
    fn on_ack(&mut self, snd: &mut Sender, cfg: &TcpConfig, acked: u64) {
        each!(self, c => c.on_ack(snd, cfg, acked))
    }
    #[inline]
    fn ssthresh_on_loss(&self, snd: &Sender, cfg: &TcpConfig, flight: u64) -> u64 {
        each!(self, c => c.ssthresh_on_loss(snd, cfg, flight))
    }
    #[inline]
    fn on_recovery_exit(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        each!(self, c => c.on_recovery_exit(snd, cfg))
    }
    #[inline]
    fn on_rto(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        each!(self, c => c.on_rto(snd, cfg))
    }
    #[inline]
    fn acts_after_idle(&self) -> bool {
        each!(self, c => c.acts_after_idle())
    }
    #[inline]
    fn after_idle(&mut self, snd: &Sender) {
        each!(self, c => c.after_idle(snd))
    }
    #[inline]
    fn on_connected(&mut self, snd: &Sender) {
        each!(self, c => c.on_connected(snd))
    }
    #[inline]
    fn implies_ecn(&self) -> bool {
        each!(self, c => c.implies_ecn())
    }
    #[inline]
    fn default_receiver(&self) -> EcnRxPolicy {
        each!(self, c => c.default_receiver())
    }
    #[inline]
    fn ect_on_syn(&self) -> bool {
        each!(self, c => c.ect_on_syn())
    }
    #[inline]
    fn ect_on_retransmit(&self) -> bool {
        each!(self, c => c.ect_on_retransmit())
    }
    #[inline]
    fn sets_cwr(&self) -> bool {
        each!(self, c => c.sets_cwr())
    }
    #[inline]
    fn cuts_once_per_window(&self) -> bool {
        each!(self, c => c.cuts_once_per_window())
    }
    #[inline]
    fn holds_window_after_ece(&self) -> bool {
        each!(self, c => c.holds_window_after_ece())
    }
    #[inline]
    fn grows_on_ece_ack(&self) -> bool {
        each!(self, c => c.grows_on_ece_ack())
    }
    #[inline]
    fn reduces_again_on_loss(&self) -> bool {
        each!(self, c => c.reduces_again_on_loss())
    }
    #[inline]
    fn on_ack_ecn(&mut self, snd: &Sender, cfg: &TcpConfig, ack: u64, ece: bool) {
        each!(self, c => c.on_ack_ecn(snd, cfg, ack, ece))
    }
    #[inline]
    fn on_ece(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        each!(self, c => c.on_ece(snd, cfg))
    }
    #[inline]
    fn alpha(&self) -> Option<f64> {
        each!(self, c => c.alpha())
    }
}

/// A user-defined controller: its name and how to make one for a new flow.
#[derive(Clone, Copy)]
pub struct CustomCc {
    pub name: &'static str,
    pub make: fn() -> Box<dyn CongestionControl>,
}

impl std::fmt::Debug for CustomCc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CustomCc({:?})", self.name)
    }
}

/// Two custom controllers are the same when their names are (a name is registered once).
impl PartialEq for CustomCc {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// The congestion control of a `[tcp]` table with its parameters; each flow builds its
/// own controller from it ([`CcConfig::build`]).
#[derive(Clone, Debug, PartialEq)]
pub enum CcConfig {
    /// RFC 5681 / RFC 6582; with `TcpConfig::ecn` the RFC 3168 ECN reaction.
    NewReno,
    /// DCTCP as originally designed (RFC 8257 window cut, ECT on every packet), no CWR.
    Dctcp(DctcpConfig),
    /// One-sided DCTCP: DCTCP that sets CWR (ODCTCP thesis ch. 5).
    Odctcp(DctcpConfig),
    /// A controller defined outside this folder.
    Custom(CustomCc),
}

impl CcConfig {
    /// A user-defined controller made by `make`.
    pub fn custom(name: &'static str, make: fn() -> Box<dyn CongestionControl>) -> CcConfig {
        CcConfig::Custom(CustomCc { name, make })
    }

    /// A flow's controller in its initial state.
    pub fn build(&self) -> Cc {
        match self {
            CcConfig::NewReno => Cc::NewReno(NewReno),
            CcConfig::Dctcp(c) => Cc::Dctcp(Dctcp::new(*c)),
            CcConfig::Odctcp(c) => Cc::Odctcp(Odctcp::new(*c)),
            CcConfig::Custom(c) => Cc::Custom((c.make)()),
        }
    }

    /// The controller's name ([`CongestionControl::name`]).
    pub fn name(&self) -> &'static str {
        self.build().name()
    }

    /// [`CongestionControl::implies_ecn`] of the controller this builds.
    pub fn implies_ecn(&self) -> bool {
        self.build().implies_ecn()
    }

    /// [`CongestionControl::default_receiver`] of the controller this builds.
    pub fn default_receiver(&self) -> EcnRxPolicy {
        self.build().default_receiver()
    }

    /// The DCTCP parameters (`tcp.dctcp_*` keys) of a DCTCP-family controller.
    pub fn dctcp_mut(&mut self) -> Option<&mut DctcpConfig> {
        match self {
            CcConfig::Dctcp(c) | CcConfig::Odctcp(c) => Some(c),
            _ => None,
        }
    }

    /// The controller's parameters as `tcp` keys and their values (`dcnsim schema`'s
    /// profile table): numbers as written, flags as "on" / "off".
    pub fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            CcConfig::Dctcp(c) | CcConfig::Odctcp(c) => c.params(),
            _ => Vec::new(),
        }
    }
}

/// One name `tcp.cc` accepts.
#[derive(Clone, Copy, Debug)]
pub struct CcEntry {
    pub name: &'static str,
    /// The controller and its parameters under a stack profile (`tcp.profile`).
    pub config: fn(TcpProfile) -> CcConfig,
    /// The name also turns SACK on (`"sack"`: NewReno with RFC 6675 recovery).
    pub sack: bool,
}

/// The built-in names, in the order error messages list them.
pub const BUILTIN: [CcEntry; 5] = [
    CcEntry {
        name: "newreno",
        config: |_| CcConfig::NewReno,
        sack: false,
    },
    CcEntry {
        name: "reno",
        config: |_| CcConfig::NewReno,
        sack: false,
    },
    CcEntry {
        name: "sack",
        config: |_| CcConfig::NewReno,
        sack: true,
    },
    CcEntry {
        name: "dctcp",
        config: |p| CcConfig::Dctcp(DctcpConfig::for_profile(p)),
        sack: false,
    },
    CcEntry {
        name: "odctcp",
        config: |p| CcConfig::Odctcp(DctcpConfig::for_profile(p)),
        sack: false,
    },
];

/// Names registered at run time ([`register`]).
static REGISTERED: std::sync::RwLock<Vec<CcEntry>> = std::sync::RwLock::new(Vec::new());

/// Make `entry.name` a value of `tcp.cc` for every scenario loaded after this call (a
/// controller defined outside the crate, e.g. in a test). A name registered again takes
/// the new entry; a built-in name cannot be replaced.
pub fn register(entry: CcEntry) {
    let mut v = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    v.retain(|e| e.name != entry.name);
    v.push(entry);
}

/// The entry of `tcp.cc = name`: a built-in, else a registered one.
pub fn lookup(name: &str) -> Option<CcEntry> {
    BUILTIN
        .iter()
        .find(|e| e.name == name)
        .copied()
        .or_else(|| {
            let v = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
            v.iter().find(|e| e.name == name).copied()
        })
}

/// Every accepted name, quoted, as an error message lists them ("a", "b" or "c").
pub fn expected_names() -> String {
    let mut names: Vec<String> = BUILTIN.iter().map(|e| format!("{:?}", e.name)).collect();
    let v = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
    names.extend(v.iter().map(|e| format!("{:?}", e.name)));
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

#[cfg(test)]
mod tests;

//! TCP endpoints: a sender with NewReno loss recovery and a receiver with cumulative ACKs,
//! out-of-order buffering and optional delayed ACK.
//!
//! Implements RFC 5681 (slow start, congestion avoidance, fast retransmit, optional restart
//! after idle §4.1), RFC 6582 (NewReno partial ACKs, the `recover` variable, "impatient"
//! timer restart on the first partial ACK), RFC 6298 (SRTT/RTTVAR, min/max RTO, granularity
//! G, exponential backoff, Karn's rule by timing one segment at a time), RFC 1122 §4.2.3.2
//! delayed ACK, and as per-flow options:
//! - RFC 3042 limited transmit (on by default).
//! - SACK: RFC 2018 blocks from the receiver, RFC 6675 loss recovery at the sender
//!   (scoreboard, `IsLost` with DupThresh, `SetPipe`, `NextSeg` rules 1–4 with the rescue
//!   retransmission). `IsLost` uses the byte form of RFC 6675 §4 ("more than
//!   (DupThresh − 1)·SMSS bytes SACKed above"), not the segment count form.
//! - RACK-TLP (RFC 8985, `model/tcp/rack.rs`) in place of DupThresh for SACK senders.
//! - RFC 7323 timestamps; ns-2's tick-based RTT estimator and the other ns-2/ns-3
//!   behaviours that `model/tcp/profile.rs` switches on.
//! - ECN, RFC 3168 §6.1: ECT(0) on new data only, receiver latches ECE until CWR (CE wins
//!   over CWR on the same segment), sender reduces once per window and sets CWR on the next
//!   new data segment. ECN is on for a flow when the sender is ECN-capable and the receiver
//!   policy is not `Off` (both ends are configured, so negotiation is not modelled).
//! - DCTCP (RFC 8257 §3.2–3.5, MODELS.md §3) and ODCTCP (ODCTCP thesis ch. 4–5) senders,
//!   and the standard / DCTCP / ODCTCP receiver ECE policies, chosen independently.
//!
//! Sequence numbers are byte offsets from 0 (64-bit, no wrap). As in smoltcp, the protocol
//! code never reads a clock: every entry point takes `now`, appends the packets to send to
//! `out` and leaves its timer deadlines in the endpoint for the simulation to arm.

use crate::base::ids::{FlowId, NodeId};
use crate::base::packet::{flags, Ecn, Kind, Packet, SackBlocks};
use crate::base::units::SimTime;

/// Congestion-control algorithm of a sender: hooks called by the loss-recovery core.
/// Dispatched through an enum (not `Box<dyn>`), one variant per algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcAlgo {
    /// RFC 5681 / RFC 6582; with `TcpConfig::ecn` the RFC 3168 ECN reaction.
    NewReno,
    /// DCTCP as originally designed (RFC 8257 window cut, ECT on every packet) with no CWR.
    Dctcp,
    /// One-sided DCTCP: DCTCP that sets CWR on the next new data segment after an
    /// ECE-triggered reduction (ODCTCP thesis ch. 5; MODELS.md §3.5).
    Odctcp,
}

impl CcAlgo {
    pub fn is_dctcp(self) -> bool {
        matches!(self, CcAlgo::Dctcp | CcAlgo::Odctcp)
    }
}

/// How a receiver turns CE marks into ECE feedback. Chosen apart from the sender's
/// algorithm because seed 001 mixes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnRxPolicy {
    /// Not ECN-capable: ECE is never set.
    Off,
    /// RFC 3168 §6.1.3: ECE latched from a CE segment until a CWR segment (CE wins).
    Standard,
    /// RFC 8257 §3.2: ECE = CE of the last data segment, immediate ACK when that changes
    /// (first an ACK for the earlier segments with the old value if a delayed ACK is
    /// pending — the Linux/ns-3 two-ACK scheme, MODELS.md §3.3).
    Dctcp,
    /// As `Dctcp`, but a segment carrying CWR keeps the delayed ACK (no forced ACK) even if
    /// the CE state changed (ODCTCP thesis; FreeBSD `dctcp_ecnpkt_handler`).
    Odctcp,
}

/// Per-flow TCP parameters (defaults and their sources in `scenario/mod.rs`).
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
    /// RFC 2018 SACK blocks from the receiver and RFC 6675 recovery at the sender.
    pub sack: bool,
    /// RFC 3168 ECN-capable sender (implied by DCTCP/ODCTCP).
    pub ecn: bool,
    /// DCTCP gain g of the alpha EWMA.
    pub dctcp_g: f64,
    /// DCTCP alpha at start (and after idle with `dctcp_reset_alpha_after_idle`).
    pub dctcp_alpha_init: f64,
    /// true: no cwnd growth until the window after an ECE cut is acked (Linux CWR state);
    /// false: growth continues (FreeBSD/ODCTCP thesis, MODELS.md §3.5 (a)).
    pub dctcp_recovery_mode: bool,
    /// Reset alpha (and the observation window) after an idle period longer than the RTO.
    pub dctcp_reset_alpha_after_idle: bool,
    /// RFC 5681 §4.1 restart: cwnd := min(cwnd, initial window) after an idle period
    /// longer than the RTO (idle = nothing outstanding and nothing sent for an RTO).
    pub idle_restart: bool,
    /// ns-2's restart after idle (`slow_start_restart_`, `restart_bugfix_`, both on by
    /// default): the retransmission timer is restarted by every new ACK, also the one that
    /// acknowledges everything, and when it expires with nothing outstanding cwnd becomes
    /// one segment (ssthresh kept, no backoff). Modelled without a timer event: a sender
    /// that writes after an RTO of idleness since its last new ACK starts from one segment.
    pub idle_rto_reset: bool,
    /// NewReno full ACK as ns-2's Agent/TCP/Newreno (`partial_window_deflation_ 1`,
    /// `exit_recovery_fix_ 0`): ns-2 keeps the window as cwnd_ + dupwnd_, a partial ACK
    /// takes what it acknowledges from dupwnd_ first and then from cwnd_, and the full ACK
    /// drops dupwnd_: cwnd := min(ssthresh, the lowest inflated window in this recovery
    /// − 1 SMSS). Off: RFC 6582 step 3 option 1, min(ssthresh, max(FlightSize, SMSS) + SMSS).
    pub exit_cwnd_ns2: bool,
    /// Every ACK of new data recomputes the RTO from SRTT/RTTVAR, so an exponential backoff
    /// ends at the first new ACK (ns-3 `TcpSocketBase::NewAck`, RFC 6298 (2.4) applied per
    /// ACK). Off: RFC 6298 (5.7) keeps the backed-off RTO until a valid RTT sample (Karn).
    pub rto_reset_on_ack: bool,
    /// The application's writes are sent as whole segments: a write of n bytes becomes
    /// ceil(n / MSS) full-size segments (ns-2's one-way Agent/TCP counts data in packets of
    /// `packetSize_`: `sendmsg` adds ceil(n / size_) packets). Off: the last segment of a
    /// write carries the remainder only.
    pub whole_segments: bool,
    /// NewReno fast retransmit needs an ACK beyond `recover` by a segment (ns-2's
    /// `highest_ack_ > recover_`), not just covering it (RFC 6582).
    pub recover_strict: bool,
    /// At most this many segments per ACK during NewReno fast recovery (0 = no limit; ns-2
    /// sends with `maxburst` 2 while `dupacks_` ≥ DupThresh).
    pub recovery_maxburst: u32,
    /// ssthresh on a loss or ECE from min(cwnd, rwnd) in whole segments (ns-2 `slowdown`:
    /// half of `windowd()`, at least 2) instead of RFC 5681's FlightSize / 2. After
    /// consecutive timeouts (cwnd = 1) ns-2's ssthresh is 2 segments. A fast retransmit
    /// sets cwnd (before the inflation) to that half exactly, not rounded down, as ns-2's
    /// `CLOSE_CWND_HALF` does with `precision_reduce_`.
    pub ssthresh_from_cwnd: bool,
    /// RFC 3465 appropriate byte counting with limit L = `abc_limit` segments (0 = off:
    /// one MSS per ACK in slow start and MSS²/cwnd per ACK in congestion avoidance, as
    /// ns-2). FreeBSD (seed 001) counts bytes with L = 2 (`net.inet.tcp.abc_l_var`).
    pub abc_limit: u32,
    /// RFC 3042 limited transmit: one new segment on each of the first two duplicate
    /// ACKs, cwnd unchanged (ns-2 `singledup_ 1`, ns-3 `LimitedTransmit`, Linux, FreeBSD).
    pub limited_transmit: bool,
    /// RTT estimator clock: `SimTime::ZERO` = RFC 6298 in exact arithmetic; a positive
    /// tick = ns-2's estimator (`tcpTick_`): RTT samples counted in ticks, SRTT/RTTVAR in
    /// fixed point (3 and 2 fraction bits), RTO = SRTT + 4·RTTVAR ticks, at least 2 ticks,
    /// backoff as a separate multiplier (ns-2.35 `tcp.cc`, `rtt_update`/`rtt_timeout`).
    pub rtt_tick: SimTime,
    /// RFC 7323 timestamps: 12 more header bytes per segment, the receiver echoes
    /// TS.Recent (§4.3) and the sender takes an RTT sample from every ACK that acknowledges
    /// new data, retransmitted or not (ns-3 `Timestamp`, Linux, FreeBSD); Karn's one-segment
    /// timing is not used then.
    pub timestamps: bool,
    /// RFC 8985 RACK loss detection (needs `sack`): losses by transmit time instead of
    /// DupThresh, lost retransmissions found without an RTO (Linux `tcp_recovery = 1`).
    pub rack: bool,
    /// RFC 8985 tail loss probe (needs `rack`; Linux `tcp_early_retrans = 3`).
    pub tlp: bool,
    /// RFC 2883 D-SACK: the receiver reports a duplicate segment in the first SACK block
    /// (needs `sack`; Linux `tcp_dsack = 1`). RACK-TLP uses it (RFC 8985 §6.2, §7.4).
    pub dsack: bool,
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
            sack: false,
            ecn: false,
            dctcp_g: 1.0 / 16.0,
            dctcp_alpha_init: 1.0,
            dctcp_recovery_mode: true,
            dctcp_reset_alpha_after_idle: false,
            idle_restart: false,
            idle_rto_reset: false,
            exit_cwnd_ns2: false,
            rto_reset_on_ack: false,
            whole_segments: false,
            recover_strict: false,
            recovery_maxburst: 0,
            ssthresh_from_cwnd: false,
            abc_limit: 0,
            limited_transmit: true,
            rtt_tick: SimTime::ZERO,
            timestamps: false,
            rack: false,
            tlp: false,
            dsack: false,
        }
    }
}

/// Bytes of the RFC 7323 timestamp option on every segment (10 + 2 of padding, as Linux,
/// FreeBSD and ns-3 send it).
pub const TS_OPTION_BYTES: u32 = 12;

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
    /// ACKs received with ECE set.
    pub ece_received: u64,
    /// Data segments sent with CWR set.
    pub cwr_sent: u64,
    /// Window reductions triggered by ECE.
    pub ecn_reductions: u64,
    /// Data segments received with CE (receiver side).
    pub ce_received: u64,
    /// Receiver: ACKs sent with the same cumulative ACK as the previous one (SYN-ACKs
    /// aside) — Wireshark's duplicate ACK (`tcp.analysis.duplicate_ack`) as a capture of
    /// the receiver's ACKs shows it: the ACK's sequence number and window never change.
    pub dup_acks_sent: u64,
    /// RFC 8985 loss probes sent, and probes that repaired a loss (§7.4).
    pub tlp_probes: u64,
    pub tlp_recoveries: u64,
}

#[derive(Clone, Debug)]
pub struct Sender {
    /// Bytes acknowledged in congestion avoidance not yet turned into cwnd (RFC 3465).
    pub abc_bytes: u64,
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
    /// Time of the last data segment sent (restart after idle).
    pub last_send: SimTime,
    // ECN (RFC 3168 §6.1.2)
    /// `snd_max` at the last reduction: no ECE reaction until SND.UNA reaches it.
    pub recover_ecn: u64,
    /// An ECE-triggered reduction window is open (cleared when SND.UNA ≥ `recover_ecn`).
    pub in_cwr: bool,
    /// Set CWR on the next new data segment.
    pub cwr_pending: bool,
    // DCTCP (RFC 8257 §3.3)
    pub alpha: f64,
    pub dctcp_acked: u64,
    pub dctcp_marked: u64,
    pub dctcp_window_end: u64,
    /// SACK scoreboard and RFC 6675 recovery state: the sender's cold part, allocated at
    /// its first write (a SACK block received, a recovery, a timeout) and kept from then
    /// on; read through [`Sender::sb`], which gives the initial values while it is absent.
    pub scoreboard: Option<Box<SndSack>>,
    /// RTO backoff multiplier of the ns-2 estimator (`t_backoff_`); 1 with RFC 6298.
    pub backoff: u32,
    /// ns-2 estimator state in ticks: 8·SRTT and 4·RTTVAR (`t_srtt_`, `t_rttvar_`).
    pub tick_srtt: i64,
    pub tick_rttvar: i64,
    /// Phase of this connection's tick clock, uniform in [0, tick) (ns-2 `boot_time_`).
    pub tick_phase: SimTime,
    /// ns-2 `t_rtxcur_`: the RTO before backoff and `min_rto` (the initial RTO until the
    /// first sample).
    pub tick_rtxcur: SimTime,
    /// ns-2 Agent/TCP/Newreno `cwnd_` during NewReno recovery (`exit_cwnd_ns2`).
    pub ns2_cwnd: u64,
    /// Time of the last ACK that acknowledged new data (`idle_rto_reset`).
    pub last_ack_time: SimTime,
    /// Bytes sent by limited transmit since the last new ACK: RFC 5681 §3.2 step 2 leaves
    /// them out of the FlightSize that sets ssthresh.
    pub lt_bytes: u64,
    /// RACK-TLP state (`model/tcp/rack.rs`), only for a flow with `rack`.
    pub rack: Option<Box<rack::Rack>>,
}

#[derive(Clone, Debug)]
pub struct Receiver {
    pub started: bool,
    pub rcv_nxt: u64,
    /// Out-of-order data and the SACK blocks last sent: the receiver's cold part, allocated
    /// at the first out-of-order segment (most flows never see one) and kept from then on.
    pub reorder: Option<Box<RcvReorder>>,
    /// In-order segments received since the last ACK sent.
    pub unacked_segs: u32,
    pub delack_timer: Timer,
    /// DCTCP/ODCTCP receiver: CE of the last data segment (RFC 8257 §3.2).
    pub ce_state: bool,
    /// Standard receiver: ECE latched until CWR (RFC 3168 §6.1.3).
    pub ece_latched: bool,
    /// Start of the segment that triggered the ACK being built, if it was out of order
    /// (u64::MAX: none) — its block goes first (RFC 2018 §4).
    pub sack_recent: u64,
    /// RFC 7323 §4.3 TS.Recent and Last.ACK.sent.
    pub ts_recent: SimTime,
    pub last_ack_sent: u64,
    /// A duplicate segment to report in the next ACK (RFC 2883); `(0, 0)` = none.
    pub dsack: (u64, u64),
    /// Cumulative ACK of the last ACK sent after the handshake (`dup_acks_sent`); u64::MAX:
    /// none yet (no ACK number reaches it).
    pub prev_ack: u64,
}

/// The receiver's out-of-order state ([`Receiver::reorder`]).
#[derive(Clone, Debug, Default)]
pub struct RcvReorder {
    /// Out-of-order ranges [start, end), sorted and disjoint.
    pub ooo: Vec<(u64, u64)>,
    /// The blocks of the last SACK sent, repeated in later ACKs (RFC 2018 §4).
    pub sack_last: [(u64, u64); 3],
}

impl Receiver {
    /// Out-of-order ranges [start, end), sorted and disjoint (empty: none).
    #[inline]
    pub fn ooo(&self) -> &[(u64, u64)] {
        match &self.reorder {
            Some(r) => &r.ooo,
            None => &[],
        }
    }
}

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

/// A TCP connection: the sender lives at `src`, the receiver at `dst`.
#[derive(Clone, Debug)]
pub struct TcpFlow {
    pub id: FlowId,
    pub src: NodeId,
    pub dst: NodeId,
    /// Shared by the flows built from one configuration (an app's, a workload's): the
    /// fields every segment reads stay on a few cached lines, and a flow carries a pointer
    /// instead of a 128-byte copy.
    pub cfg: std::sync::Arc<TcpConfig>,
    pub snd: Sender,
    pub rcv: Receiver,
    pub stats: TcpStats,
    pub class: u8,
}

/// What RFC 6675 `NextSeg()` chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Seg {
    New,
    Rxt,
    Rescue,
}

/// Which timer of a flow an `Event::TcpTimer` is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FlowTimer {
    /// The retransmission timer (RTO, and the RACK reordering and TLP probe timers, which
    /// share it as Linux does).
    Rto = 0,
    /// The receiver's delayed-ACK timer.
    Delack = 1,
}

impl FlowTimer {
    /// The kind stored as `k as u8`.
    #[inline(always)]
    pub fn from_u8(k: u8) -> FlowTimer {
        if k == FlowTimer::Rto as u8 {
            FlowTimer::Rto
        } else {
            FlowTimer::Delack
        }
    }
}

impl TcpFlow {
    /// Give the flow its id (the engine numbers flows as it adds them) and with it the
    /// phase of its tick clock, which ns-2 draws per agent (`boot_time_`).
    pub fn set_id(&mut self, id: FlowId) {
        self.id = id;
        self.snd.tick_phase = tick_phase(id.0, self.cfg.rtt_tick);
    }

    pub fn new(
        id: FlowId,
        src: NodeId,
        dst: NodeId,
        cfg: impl Into<std::sync::Arc<TcpConfig>>,
    ) -> TcpFlow {
        let cfg = cfg.into();
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
                abc_bytes: 0,
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
                last_send: SimTime::ZERO,
                recover_ecn: 0,
                in_cwr: false,
                cwr_pending: false,
                alpha: cfg.dctcp_alpha_init,
                dctcp_acked: 0,
                dctcp_marked: 0,
                // RFC 8257 §3.3: DCTCP.WindowEnd starts at SND.NXT.
                dctcp_window_end: 0,
                scoreboard: None,
                backoff: 1,
                tick_srtt: 0,
                tick_rttvar: 0,
                tick_phase: tick_phase(id.0, cfg.rtt_tick),
                tick_rtxcur: cfg.initial_rto,
                lt_bytes: 0,
                last_ack_time: SimTime::ZERO,
                ns2_cwnd: 0,
                rack: cfg.rack.then(|| Box::new(rack::Rack::new())),
            },
            rcv: Receiver {
                started: false,
                rcv_nxt: 0,
                reorder: None,
                unacked_segs: 0,
                delack_timer: Timer::default(),
                ce_state: false,
                ece_latched: false,
                sack_recent: u64::MAX,
                dsack: (0, 0),
                ts_recent: SimTime::ZERO,
                last_ack_sent: 0,
                prev_ack: u64::MAX,
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

    /// DCTCP alpha, or -1 when the sender is not DCTCP/ODCTCP (result tables).
    pub fn alpha_or_none(&self) -> f64 {
        if self.cfg.cc.is_dctcp() {
            self.snd.alpha
        } else {
            -1.0
        }
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
            size: self.cfg.header
                + if self.cfg.timestamps {
                    TS_OPTION_BYTES
                } else {
                    0
                },
            payload: 0,
            kind: Kind::Data,
            flags: 0,
            ecn: Ecn::NotEct,
            class: self.class,
            enq_time: now,
            sent_time: now,
            sack: SackBlocks::EMPTY,
        }
    }

    /// ECN is in use: an ECN-capable sender and a receiver that echoes CE.
    #[inline]
    pub fn ecn_active(&self) -> bool {
        (self.cfg.ecn || self.cfg.cc.is_dctcp()) && self.cfg.ecn_rx != EcnRxPolicy::Off
    }

    /// Whether the sender sets CWR after a window reduction: RFC 3168 senders and ODCTCP
    /// do; DCTCP as originally designed does not (MODELS.md §3.5 problem 1).
    #[inline]
    fn sets_cwr(&self) -> bool {
        self.cfg.cc != CcAlgo::Dctcp && self.ecn_active()
    }

    // ------------------------------------------------------------------ sender

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

    fn app_write_core(&mut self, now: SimTime, bytes: u64, out: &mut Vec<Packet>) {
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

    fn send_syn(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let mut p = self.template(now);
        p.kind = Kind::Syn;
        if self.cfg.cc.is_dctcp() && self.ecn_active() {
            p.ecn = Ecn::Ect0; // DCTCP: ECT on all packets (MODELS.md §3.2)
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
    fn send_in_recovery(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let max = match self.cfg.recovery_maxburst {
            0 => u32::MAX,
            m => m,
        };
        self.send_burst(now, out, max);
    }

    /// `try_send` with at most `max` segments.
    fn send_burst(&mut self, now: SimTime, out: &mut Vec<Packet>, max: u32) {
        if self.snd.state != SndState::Established {
            return;
        }
        if self.snd.snd_una == self.snd.snd_max
            && self.snd.snd_max > 0
            && (self.cfg.idle_restart || self.cfg.dctcp_reset_alpha_after_idle)
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
    fn after_idle(&mut self, _now: SimTime) {
        if self.cfg.idle_restart {
            // RFC 5681 §4.1: cwnd := min(cwnd, RW), RW = the initial window.
            let iw = self.cfg.init_cwnd as u64 * self.mss();
            self.snd.cwnd = self.snd.cwnd.min(iw);
        }
        if self.cfg.dctcp_reset_alpha_after_idle && self.cfg.cc.is_dctcp() {
            // FreeBSD `dctcp_after_idle`: alpha back to its initial value, a new window.
            self.snd.alpha = self.cfg.dctcp_alpha_init;
            self.snd.dctcp_acked = 0;
            self.snd.dctcp_marked = 0;
            self.snd.dctcp_window_end = self.snd.snd_nxt;
        }
    }

    fn emit_segment(&mut self, now: SimTime, seq: u64, len: u64, out: &mut Vec<Packet>) {
        let mut p = self.template(now);
        p.seq = seq;
        p.payload = len as u32;
        p.size += len as u32;
        let retx = seq < self.snd.snd_max;
        if self.ecn_active() {
            // RFC 3168 §6.1.5: no ECT on retransmissions; DCTCP: ECT on all packets.
            if !retx || self.cfg.cc.is_dctcp() {
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

    fn retransmit_una(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        let seq = self.snd.snd_una;
        let len = self.mss().min(self.snd.snd_max - seq);
        if len > 0 {
            self.emit_segment(now, seq, len, out);
        }
    }

    /// One RTT sample: a segment sent at `sent` is acknowledged at `now`.
    fn rtt_sample(&mut self, sent: SimTime, now: SimTime) {
        self.rack_on_rtt(now - sent);
        if self.cfg.rtt_tick.0 > 0 {
            self.tick_rtt_sample(sent, now);
            return;
        }
        let r = now - sent;
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

    /// ns-2's estimator (`TcpAgent::rtt_update`): the sample is the number of tick
    /// boundaries of this connection's clock crossed between send and ACK (at least 1;
    /// with timestamps the RTT rounded to ticks); 8·SRTT and 4·RTTVAR are integers in ticks
    /// updated with gains 1/8 and 1/4; RTO (`t_rtxcur_`) = SRTT + 4·RTTVAR ticks. A sample
    /// ends the backoff (`t_backoff_ = 1` in `newack`).
    fn tick_rtt_sample(&mut self, sent: SimTime, now: SimTime) {
        let tick = self.cfg.rtt_tick.0;
        let tao = now.0 - sent.0;
        let m = if self.cfg.timestamps {
            (tao + tick / 2) / tick
        } else {
            (tao + (sent.0 + self.snd.tick_phase.0) % tick) / tick
        }
        .max(1) as i64;
        let s = &mut self.snd;
        if s.tick_srtt != 0 {
            let delta = m - (s.tick_srtt >> 3);
            s.tick_srtt = (s.tick_srtt + delta).max(1);
            let dev = delta.abs() - (s.tick_rttvar >> 2);
            s.tick_rttvar = (s.tick_rttvar + dev).max(1);
        } else {
            s.tick_srtt = m << 3;
            s.tick_rttvar = m << 1;
        }
        s.have_rtt = true;
        s.backoff = 1;
        s.srtt = SimTime(s.tick_srtt as u64 * tick / 8);
        s.rttvar = SimTime(s.tick_rttvar as u64 * tick / 4);
        s.tick_rtxcur = SimTime((((s.tick_rttvar << 3) + s.tick_srtt) >> 3) as u64 * tick);
        self.snd.rto = self.tick_rto();
    }

    /// ns-2 `rtt_timeout` with `rfc2988_ true`: max(t_rtxcur_, min_rto) × backoff, at most
    /// `max_rto`, at least 2 ticks.
    fn tick_rto(&self) -> SimTime {
        let base = self.snd.tick_rtxcur.max(self.cfg.min_rto);
        let t = SimTime(base.0.saturating_mul(self.snd.backoff as u64)).min(self.cfg.max_rto);
        t.max(SimTime(2 * self.cfg.rtt_tick.0))
    }

    /// RTO expiry: exponential backoff. RFC 6298 (5.5) doubles the RTO up to `max_rto`;
    /// ns-2 (`rtt_backoff`) doubles `t_backoff_` (up to 64 or while below `max_rto`) and
    /// after the fourth doubling moves SRTT into RTTVAR so that the next sample starts the
    /// estimator afresh.
    fn backoff_rto(&mut self) {
        if self.cfg.rtt_tick.0 > 0 {
            if self.snd.backoff < 64 || self.tick_rto() < self.cfg.max_rto {
                self.snd.backoff = self.snd.backoff.saturating_mul(2);
            }
            let s = &mut self.snd;
            if s.backoff > 8 {
                s.tick_rttvar += s.tick_srtt >> 3;
                s.tick_srtt = 0;
            }
            self.snd.rto = self.tick_rto();
        } else {
            self.snd.rto = SimTime((self.snd.rto.0 * 2).min(self.cfg.max_rto.0));
        }
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
        self.on_ack_core(now, p, out);
        if self.cfg.rack {
            self.rack_rearm(now);
        }
    }

    fn on_ack_core(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        self.stats.acks_received += 1;
        if p.kind == Kind::SynAck {
            if self.snd.state == SndState::SynSent {
                if !self.snd.syn_retx {
                    self.rtt_sample(self.snd.syn_time, now);
                }
                self.snd.state = SndState::Established;
                self.snd.rto_timer.stop();
                // RFC 8257 §3.3: the observation window starts at SND.NXT.
                self.snd.dctcp_window_end = self.snd.snd_nxt;
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
            if self.cfg.cc.is_dctcp() {
                self.dctcp_update_alpha(a, ece);
            }
            // RFC 3168 §6.1.2: react to ECE at most once per window of data, and not during
            // loss recovery (loss and ECE in one window: one reduction). The check uses
            // SND.UNA before this ACK, as FreeBSD signals ECE before processing the ACK.
            if ece && !self.snd.in_recovery && self.snd.snd_una >= self.snd.recover_ecn {
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
    fn on_new_ack(&mut self, now: SimTime, p: &Packet, a: u64, out: &mut Vec<Packet>) {
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
            // Linux's CWR state and FreeBSD's congestion recovery; DCTCP with
            // `dctcp_recovery_mode`). The ACK that closes the window does not grow it.
            let frozen =
                self.snd.in_cwr && (!self.cfg.cc.is_dctcp() || self.cfg.dctcp_recovery_mode);
            if a >= self.snd.recover_ecn {
                self.snd.in_cwr = false;
            }
            if !frozen {
                self.cc_on_ack(acked);
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
    fn on_dup_ack(&mut self, now: SimTime, a: u64, new_sack: bool, out: &mut Vec<Packet>) {
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
    fn recovered(&self, a: u64) -> bool {
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
    fn limited_transmit(&mut self, now: SimTime, out: &mut Vec<Packet>) {
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

    /// RFC 8257 §3.3 steps 1–9: count acked and marked bytes; at the end of each
    /// observation window (SND.UNA passes WindowEnd) update alpha. `a` is this ACK's
    /// cumulative acknowledgement; duplicates acknowledge 0 bytes (RFC 8257 reading).
    fn dctcp_update_alpha(&mut self, a: u64, ece: bool) {
        let s = &mut self.snd;
        let newly = a.saturating_sub(s.snd_una);
        s.dctcp_acked += newly;
        if ece {
            s.dctcp_marked += newly;
        }
        let una = a.max(s.snd_una);
        if una > s.dctcp_window_end {
            let m = if s.dctcp_acked > 0 {
                s.dctcp_marked as f64 / s.dctcp_acked as f64
            } else {
                0.0
            };
            let g = self.cfg.dctcp_g;
            s.alpha = (1.0 - g) * s.alpha + g * m;
            s.dctcp_window_end = s.snd_nxt.max(a);
            s.dctcp_acked = 0;
            s.dctcp_marked = 0;
        }
    }

    /// Window reduction on ECE (once per window; the caller checks eligibility).
    fn ecn_reduce(&mut self) {
        let mss = self.mss();
        match self.cfg.cc {
            CcAlgo::NewReno => {
                // RFC 3168 §6.1.2: as for a loss, ssthresh = max(FlightSize/2, 2·SMSS).
                self.snd.ssthresh = self.cc_ssthresh_on_loss(self.flight());
                self.snd.cwnd = self.snd.ssthresh;
            }
            CcAlgo::Dctcp | CcAlgo::Odctcp => {
                // RFC 8257 §3.3: cwnd := cwnd·(1 − alpha/2), computed as FreeBSD does,
                // cwnd − floor(cwnd·alpha/2), floor 2·SMSS; ssthresh := cwnd.
                let cut = (self.snd.cwnd as f64 * self.snd.alpha / 2.0) as u64;
                self.snd.cwnd = self.snd.cwnd.saturating_sub(cut).max(2 * mss);
                self.snd.ssthresh = self.snd.cwnd;
            }
        }
        self.snd.recover_ecn = self.snd.snd_max;
        self.snd.in_cwr = true;
        self.stats.ecn_reductions += 1;
        if self.sets_cwr() {
            self.snd.cwr_pending = true;
        }
    }

    /// ssthresh on entering loss recovery: one reduction per window also across ECN — if
    /// an ECE reduction already covers this window, ssthresh stays.
    fn loss_reduce(&mut self) {
        if !self.snd.in_cwr {
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

    // ------------------------------------------------------------ SACK (RFC 6675)

    /// RFC 6675 `Update()`: record the ACK's SACK blocks on the scoreboard.
    /// Returns whether the ACK SACKed octets not SACKed before.
    fn sack_update(&mut self, p: &Packet) -> bool {
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
    fn lost_boundary(&self) -> u64 {
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
    fn unsacked(&self, a: u64, b: u64) -> u64 {
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
    fn set_pipe(&mut self) {
        let (una, max) = (self.snd.snd_una, self.snd.snd_max);
        let lost = self.lost_boundary().max(una);
        let pipe = self.unsacked(lost, max) + self.unsacked(una, self.snd.sb().high_rxt.min(max));
        self.snd.sb_mut().pipe = pipe;
    }

    /// The first unSACKed sequence at or above `x` (below `snd_max`), and the length of the
    /// segment starting there (up to one MSS, not into SACKed data).
    fn first_unsacked(&self, mut x: u64) -> Option<(u64, u64)> {
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
    fn next_seg(&self) -> Option<(u64, u64, Seg)> {
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

    /// RFC 6675 §5 step (4): enter loss recovery.
    fn sack_enter_recovery(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        self.snd.fast_recovery_enter();
        self.stats.fast_recoveries += 1;
        // (4.1) RecoveryPoint = HighData; (4.2) ssthresh = cwnd = FlightSize/2.
        self.snd.recover = self.snd.snd_max;
        self.snd.sb_mut().rescue_rxt = u64::MAX;
        self.loss_reduce();
        self.snd.cwnd = self.snd.ssthresh;
        // (4.3) retransmit HighACK + 1; HighRxt = its end.
        if let Some((s, len)) = self.first_unsacked(self.snd.snd_una) {
            self.emit_segment(now, s, len, out);
            self.snd.sb_mut().high_rxt = s + len;
        }
        // (4.4) SetPipe, (4.5) step (C).
        self.sack_send(now, out);
    }

    /// RFC 6675 §5 (B.2) SetPipe and (C): send while cwnd − pipe ≥ 1 SMSS.
    fn sack_send(&mut self, now: SimTime, out: &mut Vec<Packet>) {
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

    fn cc_on_ack(&mut self, acked: u64) {
        let mss = self.mss();
        match self.cfg.cc {
            // DCTCP grows cwnd as NewReno does (RFC 8257 §3.3).
            CcAlgo::NewReno | CcAlgo::Dctcp | CcAlgo::Odctcp if self.cfg.abc_limit > 0 => {
                if self.snd.cwnd < self.snd.ssthresh {
                    // RFC 3465 §2.3: slow start grows by the bytes acked, at most L·SMSS.
                    self.snd.cwnd += acked.min(self.cfg.abc_limit as u64 * mss);
                } else {
                    // RFC 3465 §2.1: one SMSS once a full cwnd of bytes has been acked.
                    self.snd.abc_bytes += acked;
                    if self.snd.abc_bytes >= self.snd.cwnd {
                        self.snd.abc_bytes -= self.snd.cwnd;
                        self.snd.cwnd += mss;
                    }
                }
            }
            CcAlgo::NewReno | CcAlgo::Dctcp | CcAlgo::Odctcp => {
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
        let mss = self.mss();
        if self.cfg.ssthresh_from_cwnd {
            // ns-2 `slowdown(CLOSE_SSTHRESH_HALF)`: (int)(min(cwnd_, window_) / 2) packets,
            // at least 2.
            let w = self.snd.cwnd.min(self.cfg.rwnd) / mss;
            return (w / 2).max(2) * mss;
        }
        match self.cfg.cc {
            // DCTCP does not use alpha for losses (RFC 8257 §3.4: as the standard TCP).
            CcAlgo::NewReno | CcAlgo::Dctcp | CcAlgo::Odctcp => (flight / 2).max(2 * mss),
        }
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

    fn on_rto_core(&mut self, now: SimTime, out: &mut Vec<Packet>) {
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

    // ---------------------------------------------------------------- receiver

    /// An ACK for everything received in order, with the receiver's ECE, ECT and SACK.
    /// An ACK of data (not a SYN-ACK), counted in `dup_acks_sent` when it repeats the
    /// previous one's cumulative ACK.
    fn data_ack(&mut self, now: SimTime) -> Packet {
        let a = self.ack_packet(now);
        if self.rcv.prev_ack == a.ack {
            self.stats.dup_acks_sent += 1;
        }
        self.rcv.prev_ack = a.ack;
        a
    }

    fn ack_packet(&mut self, now: SimTime) -> Packet {
        let mut p = self.template(now);
        p.kind = Kind::Ack;
        p.src = self.dst;
        p.dst = self.src;
        p.ack = self.rcv.rcv_nxt;
        let ece = match self.cfg.ecn_rx {
            EcnRxPolicy::Off => false,
            EcnRxPolicy::Standard => self.rcv.ece_latched,
            EcnRxPolicy::Dctcp | EcnRxPolicy::Odctcp => {
                p.ecn = Ecn::Ect0; // a DCTCP host sets ECT on all packets
                self.rcv.ce_state
            }
        };
        if ece {
            p.flags |= flags::ECE;
        }
        if self.cfg.sack && !self.rcv.ooo().is_empty() {
            p.sack = self.sack_blocks();
        }
        if self.rcv.dsack.1 > self.rcv.dsack.0 {
            p.sack = p.sack.with_dsack(p.ack, self.rcv.dsack);
            self.rcv.dsack = (0, 0);
        }
        if self.cfg.timestamps {
            // RFC 7323 §4.3 (3): echo TS.Recent; an ACK's `seq` carries TSecr + 1.
            p.seq = self.rcv.ts_recent.0 + 1;
            self.rcv.last_ack_sent = self.rcv.rcv_nxt;
        }
        self.rcv.unacked_segs = 0;
        self.rcv.delack_timer.stop();
        self.stats.acks_sent += 1;
        p
    }

    /// RFC 2018 §4: the block holding the segment that triggered this ACK first, then the
    /// most recently reported blocks still above RCV.NXT, then other blocks in ascending
    /// order; at most three.
    fn sack_blocks(&mut self) -> SackBlocks {
        let rcv_nxt = self.rcv.rcv_nxt;
        let sack_recent = self.rcv.sack_recent;
        let Some(r) = self.rcv.reorder.as_deref_mut() else {
            return SackBlocks::encode(rcv_nxt, &[]);
        };
        let mut b = [(0u64, 0u64); 3];
        let mut n = 0;
        // The range holding `x`: the first that ends after it, if it starts at or before
        // it (the ranges are sorted and disjoint).
        let containing = |ooo: &[(u64, u64)], x: u64| {
            let i = ooo.partition_point(|&(_, e)| e <= x);
            ooo.get(i).copied().filter(|&(s, _)| s <= x)
        };
        let push = |blk: (u64, u64), b: &mut [(u64, u64); 3], n: &mut usize| {
            if *n < 3 && !b[..*n].contains(&blk) {
                b[*n] = blk;
                *n += 1;
            }
        };
        if sack_recent != u64::MAX {
            if let Some(blk) = containing(&r.ooo, sack_recent) {
                push(blk, &mut b, &mut n);
            }
        }
        for i in 0..3 {
            let (s, e) = r.sack_last[i];
            if e > s && s >= rcv_nxt {
                if let Some(blk) = containing(&r.ooo, s) {
                    push(blk, &mut b, &mut n);
                }
            }
        }
        for &blk in &r.ooo {
            if n == 3 {
                break;
            }
            push(blk, &mut b, &mut n);
        }
        r.sack_last = b;
        SackBlocks::encode(rcv_nxt, &b[..n])
    }

    /// Process a segment arriving at the receiver; ACKs go to `out`.
    pub fn on_segment(&mut self, now: SimTime, p: &Packet, out: &mut Vec<Packet>) {
        if self.cfg.timestamps
            && p.seq <= self.rcv.last_ack_sent
            && p.sent_time >= self.rcv.ts_recent
        {
            // RFC 7323 §4.3 (2): TS.Recent from a segment at or below Last.ACK.sent, so a
            // delayed ACK echoes the earliest unacknowledged segment and an out-of-order
            // segment does not move it; a retransmission that fills the hole does.
            self.rcv.ts_recent = p.sent_time;
        }
        if p.kind == Kind::Syn {
            self.rcv.started = true;
            let mut a = self.ack_packet(now);
            a.kind = Kind::SynAck;
            a.flags = 0;
            out.push(a);
            return;
        }
        self.rcv.started = true;
        self.rcv.sack_recent = u64::MAX;
        let mut immediate = false;
        let ce = p.ecn == Ecn::Ce;
        if ce {
            self.stats.ce_received += 1;
        }
        match self.cfg.ecn_rx {
            EcnRxPolicy::Off => {}
            EcnRxPolicy::Standard => {
                // RFC 3168 §6.1.3: CWR clears the latch, CE sets it; CE wins (Linux, ns-2
                // process CE after CWR).
                if p.flags & flags::CWR != 0 {
                    self.rcv.ece_latched = false;
                }
                if ce {
                    self.rcv.ece_latched = true;
                }
            }
            EcnRxPolicy::Dctcp | EcnRxPolicy::Odctcp => {
                if ce != self.rcv.ce_state {
                    let keep_delack =
                        self.cfg.ecn_rx == EcnRxPolicy::Odctcp && p.flags & flags::CWR != 0;
                    if !keep_delack {
                        // RFC 8257 §3.2 with the two-ACK scheme: a pending delayed ACK goes
                        // out first with the old ECE value, then the new state at once.
                        if self.rcv.unacked_segs > 0 {
                            let a = self.data_ack(now);
                            out.push(a);
                        }
                        immediate = true;
                    }
                    self.rcv.ce_state = ce;
                }
            }
        }
        let start = p.seq;
        let end = p.seq + p.payload as u64;
        if start == self.rcv.rcv_nxt {
            self.rcv.rcv_nxt = end;
            if let Some(r) = self
                .rcv
                .reorder
                .as_deref_mut()
                .filter(|r| !r.ooo.is_empty())
            {
                // This segment fills (part of) a hole: ACK at once (RFC 5681 §4.2).
                immediate = true;
                // The ranges now at or below RCV.NXT are a prefix of the sorted list: a
                // range above it stays, and so do all after it.
                let mut k = 0;
                while let Some(&(s, e)) = r.ooo.get(k) {
                    if s > self.rcv.rcv_nxt {
                        break;
                    }
                    self.rcv.rcv_nxt = self.rcv.rcv_nxt.max(e);
                    k += 1;
                }
                r.ooo.drain(..k);
            }
        } else if start > self.rcv.rcv_nxt {
            // Out of order: buffer and send an immediate duplicate ACK.
            let r = self.rcv.reorder.get_or_insert_with(Default::default);
            if !insert_range(&mut r.ooo, start, end) && self.cfg.dsack {
                self.rcv.dsack = (start, end); // RFC 2883: a duplicate above RCV.NXT
            }
            self.rcv.sack_recent = start;
            immediate = true;
        } else {
            // Old or partly old data: ACK at once so the sender learns rcv_nxt.
            if self.cfg.dsack {
                self.rcv.dsack = (start, end.min(self.rcv.rcv_nxt)); // RFC 2883 §4
            }
            if end > self.rcv.rcv_nxt {
                self.rcv.rcv_nxt = end;
            }
            immediate = true;
        }
        self.rcv.unacked_segs += 1;
        if immediate || self.rcv.unacked_segs >= self.cfg.delack_count {
            let a = self.data_ack(now);
            out.push(a);
        } else if !self.rcv.delack_timer.armed() {
            self.rcv.delack_timer.set(now + self.cfg.delack_timeout);
        }
    }

    /// The delayed-ACK timer expired.
    pub fn on_delack(&mut self, now: SimTime, out: &mut Vec<Packet>) {
        if self.rcv.unacked_segs > 0 {
            self.rcv.sack_recent = u64::MAX;
            let a = self.data_ack(now);
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

/// The phase of flow `id`'s tick clock, uniform in [0, tick): ns-2 draws `boot_time_`
/// per agent from its RNG; here a fixed hash of the flow id (SplitMix64 finaliser), so a
/// run does not depend on the order flows are created in.
fn tick_phase(id: u32, tick: SimTime) -> SimTime {
    if tick.0 == 0 {
        return SimTime::ZERO;
    }
    let mut z = (id as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    SimTime(z % tick.0)
}

/// Drop the parts of a scoreboard at or below `una`.
fn sack_prune(v: &mut Vec<(u64, u64)>, una: u64) {
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
fn insert_range(v: &mut Vec<(u64, u64)>, s: u64, e: u64) -> bool {
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

#[cfg(test)]
mod tests;

pub mod profile;
mod rack;
pub use rack::{Rack, SegRec, TimerKind};

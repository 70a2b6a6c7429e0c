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
//! - The congestion controller, behind one contract in `cc/` (NewReno with the RFC 3168
//!   reaction, DCTCP of RFC 8257, ODCTCP of the ODCTCP thesis, or one defined elsewhere),
//!   and the standard / DCTCP / ODCTCP receiver ECE policies, chosen independently.
//!
//! Files: `sender.rs` (sending, ACK processing, NewReno recovery, ECN bookkeeping, RTO),
//! `sack.rs` (RFC 6675 scoreboard and recovery), `rack.rs` (RFC 8985), `rtt.rs` (RTT
//! estimator and RTO), `receiver.rs`, `cc/` (congestion control), `profile.rs` (stacks).
//!
//! Sequence numbers are byte offsets from 0 (64-bit, no wrap). As in smoltcp, the protocol
//! code never reads a clock: every entry point takes `now`, appends the packets to send to
//! `out` and leaves its timer deadlines in the endpoint for the simulation to arm.

use crate::base::ids::{FlowId, NodeId};
use crate::base::packet::{Kind, Packet};
use crate::base::units::SimTime;
use cc::{Cc, CcConfig, CongestionControl};

/// How a receiver turns CE marks into ECE feedback. Chosen apart from the sender's
/// algorithm because the ODCTCP thesis mixes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnRxPolicy {
    /// Not ECN-capable: ECE is never set.
    Off,
    /// RFC 3168 §6.1.3: ECE latched from a CE segment until a CWR segment (CE wins).
    Standard,
    /// RFC 8257 §3.2: ECE = CE of the last data segment, immediate ACK when that changes
    /// (first an ACK for the earlier segments with the old value if a delayed ACK is
    /// pending — the Linux/ns-3 two-ACK scheme, docs/models.md §3.3).
    Dctcp,
    /// As `Dctcp`, but a segment carrying CWR keeps the delayed ACK (no forced ACK) even if
    /// the CE state changed (ODCTCP thesis; FreeBSD `dctcp_ecnpkt_handler`).
    Odctcp,
}

/// Per-flow TCP parameters (defaults and their sources in `scenario/mod.rs`).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// The congestion control and its parameters (`cc/`); each flow builds its own
    /// controller from it.
    pub cc: CcConfig,
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
    /// RFC 3168 ECN-capable sender (implied by a controller that needs ECN,
    /// `CongestionControl::implies_ecn`).
    pub ecn: bool,
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
    /// ns-2). FreeBSD (the ODCTCP thesis) counts bytes with L = 2 (`net.inet.tcp.abc_l_var`).
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
            cc: CcConfig::NewReno,
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

/// TCP's retransmission and delayed-ACK timers are the transports' lazily armed timer: one
/// pending engine event per timer however often the deadline moves (docs/performance.md,
/// "How the speed is obtained").
pub type Timer = crate::base::timer::LazyTimer;

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
    /// The sender's congestion controller (`cc/`), built from `cfg.cc`.
    pub cc: Cc,
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
            cc: cfg.cc.build(),
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

    /// The controller's reported value (DCTCP's alpha), or -1 when it reports none
    /// (result tables' `alpha` column).
    pub fn alpha_or_none(&self) -> f64 {
        self.cc.alpha().unwrap_or(-1.0)
    }

    /// Bytes delivered in order to the receiving application.
    pub fn delivered(&self) -> u64 {
        self.rcv.rcv_nxt
    }

    fn template(&self, now: SimTime) -> Packet {
        let ts = if self.cfg.timestamps {
            TS_OPTION_BYTES
        } else {
            0
        };
        let size = self.cfg.header + ts;
        Packet {
            class: self.class,
            enq_time: now,
            sent_time: now,
            ..Packet::new(Kind::Data, self.id, (self.src, self.dst), size, 0)
        }
    }

    /// ECN is in use: an ECN-capable sender and a receiver that echoes CE.
    #[inline]
    pub fn ecn_active(&self) -> bool {
        (self.cfg.ecn || self.cc.implies_ecn()) && self.cfg.ecn_rx != EcnRxPolicy::Off
    }

    /// Whether the sender sets CWR after a window reduction: an ECN flow whose controller
    /// does (`CongestionControl::sets_cwr`: RFC 3168 senders and ODCTCP; not DCTCP as
    /// originally designed, docs/models.md §3.5 problem 1).
    #[inline]
    fn sets_cwr(&self) -> bool {
        self.cc.sets_cwr() && self.ecn_active()
    }
}

pub mod cc;
mod receiver;
mod rtt;
mod sack;
mod sender;

pub use receiver::{RcvReorder, Receiver};
use rtt::tick_phase;
pub use sack::SndSack;

#[cfg(test)]
mod tests;

pub mod profile;
mod rack;
pub use rack::{Rack, SegRec, TimerKind};

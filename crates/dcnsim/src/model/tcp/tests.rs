//! Packet-script tests of the TCP endpoints: each test drives a sender or receiver with
//! scripted segments and checks the exact state, packets and timers that result.

use super::cc::{Dctcp, DctcpConfig};
use super::*;
use crate::base::packet::{flags, Ecn, Kind, Packet, SackBlocks};

const MSS: u64 = 1460;

fn ms(v: u64) -> SimTime {
    SimTime::from_ms(v)
}
fn us(v: u64) -> SimTime {
    SimTime::from_us(v)
}

fn cfg() -> TcpConfig {
    TcpConfig {
        min_rto: ms(200),
        ..TcpConfig::default()
    }
}

/// A flow from node 1 to node 2 with configuration `c` (its receiver, or its sender).
fn flow(c: TcpConfig) -> TcpFlow {
    TcpFlow::new(FlowId(0), NodeId(1), NodeId(2), c)
}

/// A sender with `bytes` written and the initial window sent at t = 0.
fn sender_established(bytes: u64) -> (TcpFlow, Vec<Packet>) {
    let mut f = flow(cfg());
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, bytes, &mut out);
    (f, out)
}

/// Template of what a receiver sends back: a 40-byte pure ACK from node 2 to node 1 with
/// no SACK blocks, no flags and no ECN codepoint. Scripts fill in the rest by struct update.
const ACK: Packet = Packet::new(Kind::Ack, FlowId(0), (NodeId(2), NodeId(1)), 40, 0);

/// Template of what a sender sends: a full-sized data segment from node 1 to node 2.
const SEGMENT: Packet = Packet {
    src: NodeId(1),
    dst: NodeId(2),
    size: MSS as u32 + 40,
    payload: MSS as u32,
    kind: Kind::Data,
    ..ACK
};

/// A pure ACK of everything below `a`.
fn ack(a: u64) -> Packet {
    Packet { ack: a, ..ACK }
}

/// A data segment of `len` payload bytes at `seq`.
fn data(seq: u64, len: u32) -> Packet {
    Packet {
        seq,
        payload: len,
        size: len + 40,
        ..SEGMENT
    }
}

fn seqs(out: &[Packet]) -> Vec<u64> {
    out.iter().map(|p| p.seq).collect()
}

/// One stimulus of a packet script: a packet arriving at the flow, or one of its timers
/// expiring.
#[derive(Clone, Copy, Debug)]
enum Input {
    /// Data and SYN segments go to the receiver half, everything else to the sender half.
    Packet(Packet),
    Rto,
    Delack,
}

/// The retransmission timer (shared by RACK and TLP) expires.
const RTO: Input = Input::Rto;
/// The delayed-ACK timer expires.
const DELACK: Input = Input::Delack;

impl From<Packet> for Input {
    fn from(p: Packet) -> Input {
        Input::Packet(p)
    }
}

/// Give `input` to `f` at `now` and return every packet it emits in response.
fn drive(f: &mut TcpFlow, now: SimTime, input: Input) -> Vec<Packet> {
    let mut out = Vec::new();
    match input {
        Input::Packet(p) if matches!(p.kind, Kind::Data | Kind::Syn) => {
            f.on_segment(now, &p, &mut out)
        }
        Input::Packet(p) => f.on_ack(now, &p, &mut out),
        Input::Rto => f.on_rto(now, &mut out),
        Input::Delack => f.on_delack(now, &mut out),
    }
    out
}

/// `send!(flow, now, input)`: give the flow a packet (or `RTO`/`DELACK`) at `now`, with no
/// expectation about the reply; evaluates to the packets it emitted.
macro_rules! send {
    ($f:expr, $now:expr, $input:expr) => {
        drive(&mut $f, $now, Input::from($input))
    };
}

/// `recv!(flow, now, input => [seq, ...])`: as `send!`, and assert that the flow replies with
/// exactly the segments starting at these sequence numbers, in this order. An optional
/// message follows the list. Evaluates to the emitted packets.
macro_rules! recv {
    ($f:expr, $now:expr, $input:expr => [$($seq:expr),* $(,)?] $(, $($msg:tt)+)?) => {{
        let out = send!($f, $now, $input);
        let want: Vec<u64> = vec![$($seq),*];
        assert_eq!(seqs(&out), want $(, $($msg)+)?);
        out
    }};
}

/// `recv_nothing!(flow, now, input)`: as `send!`, and assert that the flow emits nothing. An
/// optional message follows the input.
macro_rules! recv_nothing {
    ($f:expr, $now:expr, $input:expr) => {{
        let out = send!($f, $now, $input);
        assert!(out.is_empty(), "expected nothing, got segments {:?}", seqs(&out));
    }};
    ($f:expr, $now:expr, $input:expr, $($msg:tt)+) => {{
        let out = send!($f, $now, $input);
        assert!(out.is_empty(), $($msg)+);
    }};
}

#[test]
fn test_closed_write_sends_initial_window() {
    let (f, out) = sender_established(100 * MSS);
    assert_eq!(seqs(&out), vec![0, MSS]);
    assert!(out
        .iter()
        .all(|p| p.payload as u64 == MSS && p.size == 1500));
    assert_eq!(f.snd.snd_nxt, 2 * MSS);
    assert_eq!(f.snd.cwnd, 2 * MSS);
    // RTO armed at the initial RTO (1 s, RFC 6298 2.1).
    assert_eq!(f.snd.rto_timer.deadline, ms(1000));
    assert!(f.snd.rtt_active);
}

#[test]
fn test_handshake_syn_synack_then_data() {
    let mut f = flow(TcpConfig {
        handshake: true,
        ..cfg()
    });
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 10 * MSS, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, Kind::Syn);
    assert_eq!(f.snd.state, SndState::SynSent);
    // Receiver side answers with a SYN-ACK.
    let mut r = flow(cfg());
    let mut rout = Vec::new();
    r.on_segment(us(50), &out[0], &mut rout);
    assert_eq!(rout.len(), 1);
    assert_eq!(rout[0].kind, Kind::SynAck);
    assert_eq!((rout[0].src, rout[0].dst), (NodeId(2), NodeId(1)));
    out.clear();
    f.on_ack(us(100), &rout[0], &mut out);
    assert_eq!(f.snd.state, SndState::Established);
    // First RTT sample from the SYN: SRTT = 100 us, RTTVAR = 50 us, RTO clamped to min.
    assert_eq!(f.snd.srtt, us(100));
    assert_eq!(f.snd.rttvar, us(50));
    assert_eq!(f.snd.rto, ms(200));
    assert_eq!(seqs(&out), vec![0, MSS]);
}

#[test]
fn test_syn_lost_retransmits_with_backoff() {
    let mut f = flow(TcpConfig {
        handshake: true,
        ..cfg()
    });
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, MSS, &mut out);
    out.clear();
    f.on_rto(ms(1000), &mut out);
    assert_eq!(out[0].kind, Kind::Syn);
    assert_eq!(f.snd.rto, ms(2000));
    assert_eq!(f.snd.rto_timer.deadline, ms(3000));
    assert_eq!(f.stats.timeouts, 1);
}

#[test]
fn test_slow_start_new_ack_grows_cwnd_one_mss() {
    let (mut f, _) = sender_established(100 * MSS);
    // One ACK for one segment opens room for two new segments.
    recv!(f, us(100), ack(MSS) => [2 * MSS, 3 * MSS]);
    assert_eq!(f.snd.cwnd, 3 * MSS);
    recv!(f, us(112), ack(2 * MSS) => [4 * MSS, 5 * MSS]);
    assert_eq!(f.snd.cwnd, 4 * MSS);
}

#[test]
fn test_congestion_avoidance_adds_mss_squared_over_cwnd() {
    let (mut f, _) = sender_established(100 * MSS);
    f.snd.ssthresh = 2 * MSS; // already at ssthresh
    let mut out = Vec::new();
    f.on_ack(us(100), &ack(MSS), &mut out);
    assert_eq!(f.snd.cwnd, 2 * MSS + MSS * MSS / (2 * MSS));
}

#[test]
fn test_rtt_sample_and_rto_formula() {
    let mut c = cfg();
    c.min_rto = SimTime::ZERO;
    c.rto_granularity = us(1);
    let mut f = flow(c);
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 100 * MSS, &mut out);
    out.clear();
    f.on_ack(us(100), &ack(MSS), &mut out);
    // First sample R = 100 us: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR = 300 us.
    assert_eq!(f.snd.srtt, us(100));
    assert_eq!(f.snd.rto, us(300));
    // The next timed segment is the first one sent after the sample (seq 2 MSS at 100 us).
    assert_eq!(f.snd.rtt_seq, 2 * MSS);
    f.on_ack(us(150), &ack(2 * MSS), &mut out); // does not cover rtt_seq: no sample
    assert_eq!(f.snd.srtt, us(100));
    f.on_ack(us(300), &ack(3 * MSS), &mut out); // R' = 200 us
                                                // RTTVAR = 3/4·50 + 1/4·|100 − 200| = 62.5 us; SRTT = 7/8·100 + 1/8·200 = 112.5 us.
    assert_eq!(f.snd.rttvar, SimTime(62_500_000));
    assert_eq!(f.snd.srtt, SimTime(112_500_000));
    assert_eq!(f.snd.rto, SimTime(112_500_000 + 250_000_000 + 500_000)); // rounded up to G
}

#[test]
fn test_min_rto_and_granularity_bound_rto() {
    let (mut f, _) = sender_established(100 * MSS);
    let mut out = Vec::new();
    f.on_ack(us(100), &ack(MSS), &mut out);
    assert_eq!(f.snd.rto, ms(200));
    let mut c = cfg();
    c.min_rto = SimTime::ZERO;
    c.rto_granularity = ms(10);
    let mut g = flow(c);
    g.app_write(SimTime::ZERO, 100 * MSS, &mut out);
    g.on_ack(us(100), &ack(MSS), &mut out);
    // SRTT + max(G, 4·RTTVAR) = 100 us + 10 ms, rounded up to a multiple of G = 20 ms.
    assert_eq!(g.snd.rto, ms(20));
}

/// `sender_with_window_cfg` with the default configuration.
fn sender_with_window() -> TcpFlow {
    sender_with_window_cfg(cfg())
}

/// The RFC 5681/6582 tests below run without limited transmit (RFC 3042), which has its
/// own tests.
fn no_lt(c: TcpConfig) -> TcpConfig {
    TcpConfig {
        limited_transmit: false,
        ..c
    }
}

/// `sender_with_window_cfg(c)` after three duplicate ACKs of SND.UNA (1 MSS) at 200, 201
/// and 202 us: in fast recovery, the third having retransmitted segment 1 (with limited
/// transmit the first two sent segments 11 and 12).
fn sender_in_fast_recovery(c: TcpConfig) -> TcpFlow {
    let mut f = sender_with_window_cfg(c);
    send!(f, us(200), ack(MSS));
    send!(f, us(201), ack(MSS));
    recv!(f, us(202), ack(MSS) => [MSS]);
    assert!(f.snd.in_recovery);
    f
}

#[test]
fn test_window_third_dupack_fast_retransmits_then_inflates() {
    let mut f = sender_with_window_cfg(no_lt(cfg()));
    let (una, max) = (f.snd.snd_una, f.snd.snd_max);
    recv_nothing!(f, us(200), ack(una));
    recv_nothing!(f, us(201), ack(una));
    assert!(!f.snd.in_recovery);
    // Third duplicate: ssthresh = FlightSize/2, retransmit SND.UNA, cwnd = ssthresh + 3 MSS.
    recv!(f, us(202), ack(una) => [una]);
    assert!(f.snd.in_recovery);
    assert_eq!(f.snd.ssthresh, 5 * MSS);
    assert_eq!(f.snd.cwnd, 8 * MSS);
    assert_eq!(f.snd.recover, max);
    assert_eq!(f.stats.retransmits, 1);
    assert_eq!(f.stats.fast_recoveries, 1);
    // Each further duplicate inflates cwnd by one MSS; new data flows once cwnd > flight.
    recv_nothing!(f, us(203), ack(una));
    recv_nothing!(f, us(204), ack(una));
    recv!(f, us(205), ack(una) => [max]);
    assert_eq!(f.snd.cwnd, 11 * MSS);
}

#[test]
fn test_fast_recovery_partial_ack_retransmits_next_hole_and_deflates() {
    let mut f = sender_in_fast_recovery(cfg());
    let cwnd_before = f.snd.cwnd;
    // Partial ACK covering two segments: retransmit the new SND.UNA, cwnd −= acked − MSS.
    recv!(f, us(300), ack(3 * MSS) => [3 * MSS]);
    assert!(f.snd.in_recovery);
    assert_eq!(f.snd.cwnd, cwnd_before - 2 * MSS + MSS);
    // The first partial ACK restarts the retransmission timer.
    assert_eq!(f.snd.rto_timer.deadline, us(300) + f.snd.rto);
    let d = f.snd.rto_timer.deadline;
    recv!(f, us(400), ack(4 * MSS) => [4 * MSS]);
    assert_eq!(
        f.snd.rto_timer.deadline, d,
        "later partial ACKs do not restart it"
    );
}

#[test]
fn test_fast_recovery_full_ack_leaves_with_deflated_window() {
    let mut f = sender_in_fast_recovery(cfg());
    let recover = f.snd.recover;
    // cwnd = min(ssthresh, max(FlightSize, MSS) + MSS); FlightSize is 0 here, so two new
    // segments go.
    recv!(f, us(300), ack(recover) => [recover, recover + MSS]);
    assert!(!f.snd.in_recovery);
    assert_eq!(f.snd.cwnd, 2 * MSS);
    assert_eq!(f.snd.dupacks, 0);
}

#[test]
fn test_after_rto_dupacks_below_recover_do_not_fast_retransmit() {
    let mut f = sender_with_window();
    // Timeout: recover := SND.MAX, so dupACKs for older data do not trigger fast retransmit.
    recv!(f, ms(300), RTO => [MSS]);
    let una = f.snd.snd_una;
    for i in 0..3 {
        recv_nothing!(f, ms(301) + us(i), ack(una));
    }
    assert!(!f.snd.in_recovery);
    assert_eq!(f.stats.fast_recoveries, 0);
}

#[test]
fn test_window_rto_backs_off_and_goes_back_n() {
    let mut f = sender_with_window();
    let una = f.snd.snd_una;
    let flight = f.flight();
    let rto = f.snd.rto;
    recv!(f, ms(300), RTO => [una]);
    assert_eq!(f.stats.timeouts, 1);
    assert_eq!(f.snd.cwnd, MSS);
    assert_eq!(f.snd.ssthresh, flight / 2);
    assert_eq!(f.snd.rto, SimTime(rto.0 * 2));
    assert_eq!(f.snd.snd_nxt, una + MSS);
    assert_eq!(f.snd.rto_timer.deadline, ms(300) + SimTime(rto.0 * 2));
    // A second expiry doubles again (capped at max_rto).
    send!(f, ms(700), RTO);
    assert_eq!(f.snd.rto, SimTime(rto.0 * 4));
    assert!(!f.snd.rtt_active, "Karn: retransmissions are not timed");
}

#[test]
fn test_rto_backoff_capped_at_max_rto() {
    let mut f = sender_with_window();
    std::sync::Arc::make_mut(&mut f.cfg).max_rto = ms(500);
    let mut out = Vec::new();
    f.on_rto(ms(300), &mut out);
    f.on_rto(ms(800), &mut out);
    assert_eq!(f.snd.rto, ms(500));
}

#[test]
fn test_rto_stops_when_all_acked() {
    let (mut f, _) = sender_established(2 * MSS);
    let mut out = Vec::new();
    f.on_ack(us(100), &ack(2 * MSS), &mut out);
    assert!(!f.snd.rto_timer.armed());
}

#[test]
fn test_receiver_acks_every_segment_without_delack() {
    let mut r = flow(cfg());
    let mut out = Vec::new();
    r.on_segment(us(1), &data(0, 1460), &mut out);
    r.on_segment(us(2), &data(MSS, 1460), &mut out);
    assert_eq!(
        out.iter().map(|p| p.ack).collect::<Vec<_>>(),
        vec![MSS, 2 * MSS]
    );
    assert_eq!(r.delivered(), 2 * MSS);
}

#[test]
fn test_receiver_out_of_order_dupacks_then_fill() {
    let mut r = flow(cfg());
    let mut out = Vec::new();
    r.on_segment(us(1), &data(0, 1460), &mut out);
    r.on_segment(us(2), &data(2 * MSS, 1460), &mut out);
    r.on_segment(us(3), &data(3 * MSS, 1460), &mut out);
    assert_eq!(
        out.iter().map(|p| p.ack).collect::<Vec<_>>(),
        vec![MSS, MSS, MSS]
    );
    assert_eq!(r.rcv.ooo(), [(2 * MSS, 4 * MSS)]);
    out.clear();
    r.on_segment(us(4), &data(MSS, 1460), &mut out);
    assert_eq!(out[0].ack, 4 * MSS);
    assert!(r.rcv.ooo().is_empty());
}

#[test]
fn test_delack_receiver_second_segment_or_timer_sends_the_ack() {
    let mut r = flow(TcpConfig {
        delack_count: 2,
        delack_timeout: ms(40),
        ..cfg()
    });
    recv_nothing!(r, us(1), data(0, 1460));
    assert_eq!(r.rcv.delack_timer.deadline, us(1) + ms(40));
    let out = send!(r, us(2), data(MSS, 1460));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, 2 * MSS);
    assert!(!r.rcv.delack_timer.armed());
    recv_nothing!(r, us(3), data(2 * MSS, 1460));
    let out = send!(r, us(3) + ms(40), DELACK);
    assert_eq!(out[0].ack, 3 * MSS);
    // Out-of-order data is ACKed at once even with delayed ACK.
    let out = send!(r, us(5) + ms(40), data(5 * MSS, 1460));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, 3 * MSS);
}

// ------------------------------------------------------------------ ECN (RFC 3168)

fn ce(mut p: Packet) -> Packet {
    p.ecn = Ecn::Ce;
    p
}

fn cwr(mut p: Packet) -> Packet {
    p.flags |= flags::CWR;
    p
}

fn ece(mut p: Packet) -> Packet {
    p.flags |= flags::ECE;
    p
}

fn has(p: &Packet, f: u8) -> bool {
    p.flags & f != 0
}

/// (ack number in segments, ECE) of each ACK.
fn acks_ece(out: &[Packet]) -> Vec<(u64, bool)> {
    out.iter()
        .map(|p| (p.ack / MSS, has(p, flags::ECE)))
        .collect()
}

fn ecn_cfg(cc: CcConfig, rx: EcnRxPolicy) -> TcpConfig {
    TcpConfig {
        cc,
        ecn: true,
        ecn_rx: rx,
        ..cfg()
    }
}

/// As `sender_with_window` with a given configuration: cwnd 10 MSS, segments 1..10
/// outstanding (SND.UNA = 1 MSS, SND.MAX = 11 MSS), RTO 200 ms.
fn sender_with_window_cfg(c: TcpConfig) -> TcpFlow {
    let mut f = flow(c);
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 1000 * MSS, &mut out);
    f.snd.ssthresh = 8 * MSS;
    f.on_ack(us(100), &ack(MSS), &mut out);
    f.snd.cwnd = 10 * MSS;
    f.try_send(us(100), &mut out);
    assert_eq!((f.snd.snd_una, f.snd.snd_max), (MSS, 11 * MSS));
    f
}

#[test]
fn test_standard_receiver_latches_ece_until_cwr_and_ce_wins() {
    let mut r = flow(ecn_cfg(CcConfig::NewReno, EcnRxPolicy::Standard));
    let mut out = Vec::new();
    let d = |i: u64| data(i * MSS, 1460);
    let script = [
        d(0),
        ce(d(1)),
        d(2),
        cwr(d(3)),
        d(4),
        ce(d(5)),
        cwr(ce(d(6))), // CE and CWR on one segment: CE wins, ECE stays latched
        d(7),
        cwr(d(8)),
    ];
    for (i, p) in script.iter().enumerate() {
        r.on_segment(us(i as u64), p, &mut out);
    }
    assert_eq!(
        acks_ece(&out),
        vec![
            (1, false),
            (2, true),
            (3, true),
            (4, false),
            (5, false),
            (6, true),
            (7, true),
            (8, true),
            (9, false)
        ]
    );
    // A standard receiver's pure ACKs are not ECT (RFC 3168 §6.1.4).
    assert!(out.iter().all(|p| p.ecn == Ecn::NotEct));
    assert_eq!(r.stats.ce_received, 3);
}

#[test]
fn test_standard_sender_ect_on_new_data_only() {
    let (f, out) = {
        let mut f = flow(ecn_cfg(CcConfig::NewReno, EcnRxPolicy::Standard));
        let mut out = Vec::new();
        f.app_write(SimTime::ZERO, 100 * MSS, &mut out);
        (f, out)
    };
    assert!(out.iter().all(|p| p.ecn == Ecn::Ect0 && p.flags == 0));
    // The retransmission after a timeout is Not-ECT.
    let mut f = f;
    let mut out = Vec::new();
    f.on_rto(ms(1000), &mut out);
    assert_eq!(seqs(&out), vec![0]);
    assert_eq!(out[0].ecn, Ecn::NotEct);
    // Without an ECN-capable receiver (negotiation fails) nothing is ECT.
    let mut g = flow(ecn_cfg(CcConfig::NewReno, EcnRxPolicy::Off));
    let mut out = Vec::new();
    g.app_write(SimTime::ZERO, 10 * MSS, &mut out);
    assert!(out.iter().all(|p| p.ecn == Ecn::NotEct));
}

#[test]
fn test_standard_sender_cuts_once_per_window_and_sets_cwr_on_new_data() {
    let mut f = sender_with_window_cfg(ecn_cfg(CcConfig::NewReno, EcnRxPolicy::Standard));
    let mut out = Vec::new();
    // ECE: ssthresh = max(FlightSize/2, 2 MSS) with FlightSize = 10 MSS; cwnd = ssthresh.
    f.on_ack(us(200), &ece(ack(2 * MSS)), &mut out);
    assert_eq!((f.snd.ssthresh, f.snd.cwnd), (5 * MSS, 5 * MSS));
    assert_eq!(f.snd.recover_ecn, 11 * MSS);
    assert!(f.snd.cwr_pending);
    assert!(out.is_empty(), "flight 9 MSS > cwnd 5 MSS");
    // More ECE in the same window: no second cut, and no cwnd growth.
    f.on_ack(us(201), &ece(ack(3 * MSS)), &mut out);
    assert_eq!((f.snd.ssthresh, f.snd.cwnd), (5 * MSS, 5 * MSS));
    assert_eq!(f.stats.ecn_reductions, 1);
    // A loss in the same window: fast retransmit, but ssthresh stays (one reduction).
    for i in 0..3 {
        f.on_ack(us(202 + i), &ece(ack(3 * MSS)), &mut out);
    }
    assert!(f.snd.in_recovery);
    assert_eq!(f.snd.ssthresh, 5 * MSS);
    assert_eq!(f.snd.cwnd, 8 * MSS);
    assert_eq!(seqs(&out), vec![3 * MSS]);
    // The retransmission carries neither CWR nor ECT.
    assert_eq!((out[0].flags, out[0].ecn), (0, Ecn::NotEct));
    out.clear();
    // Window inflation lets new data go: the first new segment carries CWR, once.
    f.on_ack(us(210), &ack(3 * MSS), &mut out);
    f.on_ack(us(211), &ack(3 * MSS), &mut out);
    assert_eq!(seqs(&out), vec![11 * MSS, 12 * MSS]);
    assert!(has(&out[0], flags::CWR) && !has(&out[1], flags::CWR));
    assert!(out.iter().all(|p| p.ecn == Ecn::Ect0));
    assert_eq!(f.stats.cwr_sent, 1);
    assert_eq!(f.stats.ecn_reductions, 1);
    assert_eq!(f.stats.ece_received, 5);
    // Full ACK; an ECE for data sent after the reduction triggers a new one.
    out.clear();
    f.on_ack(us(300), &ack(13 * MSS), &mut out);
    assert!(!f.snd.in_recovery);
    assert_eq!(f.snd.cwnd, 2 * MSS);
    assert_eq!(seqs(&out), vec![13 * MSS, 14 * MSS]);
    out.clear();
    f.on_ack(us(400), &ece(ack(14 * MSS)), &mut out);
    assert_eq!(f.stats.ecn_reductions, 2);
    assert_eq!((f.snd.ssthresh, f.snd.cwnd), (2 * MSS, 2 * MSS));
    assert_eq!(seqs(&out), vec![15 * MSS]);
    assert!(has(&out[0], flags::CWR));
}

// ------------------------------------------------------------ DCTCP and ODCTCP

/// A DCTCP-family controller (`CcConfig::Dctcp` or `CcConfig::Odctcp`).
type DctcpFamily = fn(DctcpConfig) -> CcConfig;

fn dctcp_cfg(cc: DctcpFamily, alpha0: f64) -> TcpConfig {
    TcpConfig {
        cc: cc(DctcpConfig {
            alpha_init: alpha0,
            ..DctcpConfig::default()
        }),
        ecn_rx: EcnRxPolicy::Dctcp,
        init_cwnd: 100,
        ..cfg()
    }
}

/// The DCTCP state of a DCTCP or ODCTCP flow.
fn dctcp(f: &TcpFlow) -> &Dctcp {
    match &f.cc {
        Cc::Dctcp(d) => d,
        Cc::Odctcp(o) => &o.0,
        other => panic!("not DCTCP: {other:?}"),
    }
}

/// Drive a DCTCP sender through three observation windows with marked fractions 1/2, 0
/// and 1 (after the first window, which RFC 8257's WindowEnd = SND.NXT = 0 closes at the
/// first ACK); returns the sender and alpha at the end of each window.
fn dctcp_mark_script(alpha0: f64, recovery_mode: bool) -> (TcpFlow, Vec<f64>, u64) {
    let mut c = dctcp_cfg(CcConfig::Dctcp, alpha0);
    c.cc.dctcp_mut().unwrap().recovery_mode = recovery_mode;
    let mut f = flow(c);
    let mut out = Vec::new();
    let mut alphas = Vec::new();
    let t = |i: u64| us(100 + i);
    // Window 0: segments 0..2 sent; the first ACK closes it. ECE iff alpha0 = 1, so M =
    // alpha0 and alpha stays at alpha0.
    f.app_write(SimTime::ZERO, 3 * MSS, &mut out);
    let a = if alpha0 == 1.0 {
        ece(ack(MSS))
    } else {
        ack(MSS)
    };
    f.on_ack(t(0), &a, &mut out);
    alphas.push(f.alpha_or_none());
    assert_eq!(dctcp(&f).window_end, 3 * MSS);
    // Window 1: ACK 3 (ECE, 2 segments), ACK 5 (no ECE, 2 segments) → M = 2/4.
    f.app_write(t(1), 2 * MSS, &mut out);
    f.on_ack(t(2), &ece(ack(3 * MSS)), &mut out);
    let cwnd_after_first_ack_of_w1 = f.snd.cwnd;
    f.on_ack(t(3), &ack(5 * MSS), &mut out);
    alphas.push(f.alpha_or_none());
    assert_eq!(dctcp(&f).window_end, 5 * MSS);
    // Window 2: ACK 6 (no ECE) → M = 0.
    f.app_write(t(4), 2 * MSS, &mut out);
    f.on_ack(t(5), &ack(6 * MSS), &mut out);
    alphas.push(f.alpha_or_none());
    assert_eq!(dctcp(&f).window_end, 7 * MSS);
    // Window 3: ACK 7 (ECE), ACK 8 (ECE) → M = 1.
    f.on_ack(t(6), &ece(ack(7 * MSS)), &mut out);
    f.app_write(t(7), MSS, &mut out);
    f.on_ack(t(8), &ece(ack(8 * MSS)), &mut out);
    alphas.push(f.alpha_or_none());
    (f, alphas, cwnd_after_first_ack_of_w1)
}

#[test]
fn test_dctcp_alpha_recursion_from_alpha0_one() {
    let (f, alphas, _) = dctcp_mark_script(1.0, true);
    // g = 1/16: 1 → 15/16·1 + 1/16·1/2 = 31/32 → 31/32·15/16 = 465/512
    //           → 465/512·15/16 + 1/16 = 7487/8192 (exact in binary floating point).
    assert_eq!(
        alphas,
        vec![1.0, 31.0 / 32.0, 465.0 / 512.0, 7487.0 / 8192.0]
    );
    // Cuts: at the first ECE (alpha 1): 100 MSS → 50 MSS. The ECE in window 1 falls in the
    // same window of data (SND.UNA 1 MSS < recover 3 MSS): no cut. Two congestion-avoidance
    // ACKs then add 29 B each (1460²/73000 and 1460²/73029); the ECE at ACK 7 cuts with
    // alpha = 465/512: cwnd − floor(cwnd·alpha/2), recover = SND.MAX = 7; ACK 8 acks data
    // sent after that cut, so its ECE cuts again, with alpha = 7487/8192.
    let cwnd = 73_058u64;
    let after7 = cwnd - cwnd * 465 / 1024;
    assert_eq!(after7, 39_883);
    let after8 = after7 - after7 * 7487 / 16384;
    assert_eq!(f.snd.cwnd, after8);
    assert_eq!(f.snd.ssthresh, after8);
    assert_eq!(f.stats.ecn_reductions, 3);
    assert_eq!(f.stats.ece_received, 4);
    assert_eq!(f.stats.cwr_sent, 0, "DCTCP as designed sets no CWR");
}

#[test]
fn test_dctcp_alpha_recursion_from_alpha0_zero() {
    let (_, alphas, _) = dctcp_mark_script(0.0, true);
    // 0 → 1/32 → 15/512 → 225/8192 + 512/8192 = 737/8192.
    assert_eq!(alphas, vec![0.0, 1.0 / 32.0, 15.0 / 512.0, 737.0 / 8192.0]);
}

#[test]
fn test_dctcp_recovery_mode_freezes_growth_freebsd_mode_does_not() {
    // After the cut to 73000 B at ACK 1, the next ACK (ACK 3) closes the reduction window:
    // frozen until then. FreeBSD style: congestion avoidance continues on the cutting ACK
    // itself (+29 B) and on ACK 3 (+29 B).
    let (_, _, frozen) = dctcp_mark_script(1.0, true);
    assert_eq!(frozen, 73_000);
    let (_, _, grows) = dctcp_mark_script(1.0, false);
    assert_eq!(grows, 73_000 + 1460 * 1460 / 73_000 + 1460 * 1460 / 73_029);
}

/// DCTCP from alpha 0 with 10 segments out: ACK 1 carries ECE (alpha becomes 1/16, the
/// cut takes floor(10 MSS / 32) = 456 B), then three duplicates of ACK 1 in the same window
/// of data. Returns the sender in fast recovery and the ssthresh the ECE cut left.
fn dctcp_loss_after_ece(halve: bool) -> (TcpFlow, u64) {
    let mut c = no_lt(dctcp_cfg(CcConfig::Dctcp, 0.0));
    c.init_cwnd = 10;
    c.cc.dctcp_mut().unwrap().halve_on_loss_after_ece = halve;
    let mut f = flow(c);
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 100 * MSS, &mut out);
    assert_eq!(out.len(), 10);
    // The ECE cut: cwnd 14600 − 456 = 14144 B, ssthresh = cwnd.
    send!(f, us(100), ece(ack(MSS)));
    let after_ece = f.snd.ssthresh;
    assert_eq!(after_ece, 10 * MSS - 10 * MSS / 32);
    assert_eq!(f.stats.ecn_reductions, 1);
    send!(f, us(101), ack(MSS));
    send!(f, us(102), ack(MSS));
    let out = send!(f, us(103), ack(MSS));
    assert_eq!(out[0].seq, MSS, "the third duplicate retransmits SND.UNA");
    assert!(f.snd.in_recovery);
    (f, after_ece)
}

#[test]
fn test_dctcp_loss_after_ece_cut_holds_or_halves() {
    // "hold" (RFC 3168 §6.1.2, Linux, FreeBSD): the ECE cut covers the window; ssthresh
    // stays at the cut's value, and cwnd = ssthresh + 3 MSS (so the retransmission goes
    // with new data).
    let (f, after_ece) = dctcp_loss_after_ece(false);
    assert_eq!(f.snd.ssthresh, after_ece);
    assert_eq!(f.snd.cwnd, after_ece + 3 * MSS);
    // "halve" (the DCTCP authors' ns-2 code): ssthresh from the loss rule, FlightSize / 2 =
    // 9 MSS out beyond SND.UNA = 1 MSS … 10 MSS: 9 · 1460 / 2.
    let (g, _) = dctcp_loss_after_ece(true);
    assert_eq!(g.snd.ssthresh, 9 * MSS / 2);
    assert_eq!(g.snd.cwnd, 9 * MSS / 2 + 3 * MSS);
    assert_eq!(g.stats.fast_recoveries, 1);
}

#[test]
fn test_dctcp_growth_on_ece_acks_is_an_option() {
    // alpha 0, no held window: ACK 1 (ECE) cuts 14600 B by floor(14600/32) to 14144 B and
    // sets ssthresh there (congestion avoidance); ACK 1 itself, ACK 2 (ECE, same window: no
    // cut) and ACK 3 (no ECE) each add floor(MSS²/cwnd) — unless ACKs with ECE do not grow
    // cwnd, when only ACK 3 does.
    let ca = |w: u64| w + 1460 * 1460 / w;
    for grow in [true, false] {
        let mut c = no_lt(dctcp_cfg(CcConfig::Dctcp, 0.0));
        c.init_cwnd = 10;
        let d = c.cc.dctcp_mut().unwrap();
        d.recovery_mode = false;
        d.grow_on_ece_ack = grow;
        let mut f = flow(c);
        let mut out = Vec::new();
        f.app_write(SimTime::ZERO, 100 * MSS, &mut out);
        send!(f, us(100), ece(ack(MSS)));
        assert_eq!(f.snd.ssthresh, 14_144);
        let w1 = if grow { ca(14_144) } else { 14_144 };
        assert_eq!(f.snd.cwnd, w1, "grow = {grow}");
        send!(f, us(101), ece(ack(2 * MSS)));
        let w2 = if grow { ca(w1) } else { w1 };
        assert_eq!(f.snd.cwnd, w2, "grow = {grow}");
        send!(f, us(102), ack(3 * MSS));
        assert_eq!(f.snd.cwnd, ca(w2));
    }
}

#[test]
fn test_dctcp_sender_sets_no_cwr_odctcp_sender_does() {
    let family: [(DctcpFamily, bool); 2] = [(CcConfig::Dctcp, false), (CcConfig::Odctcp, true)];
    for (cc, want_cwr) in family {
        let mut c = dctcp_cfg(cc, 1.0);
        c.init_cwnd = 2;
        let mut f = sender_with_window_cfg(c);
        let mut out = Vec::new();
        // The first observation window closed at ACK 1 with M = 0: alpha = 15/16. The ECE
        // then cuts cwnd by floor(cwnd·alpha/2).
        assert_eq!(f.alpha_or_none(), 15.0 / 16.0);
        f.on_ack(us(200), &ece(ack(2 * MSS)), &mut out);
        let cut = (10 * MSS) * 15 / 32;
        assert_eq!(f.snd.cwnd, 10 * MSS - cut);
        assert!(out.is_empty());
        // Everything acked: new data flows; ODCTCP marks the first new segment with CWR.
        f.on_ack(us(300), &ack(11 * MSS), &mut out);
        assert!(!out.is_empty());
        assert_eq!(
            has(&out[0], flags::CWR),
            want_cwr,
            "CWR expected: {want_cwr}"
        );
        assert!(out[1..].iter().all(|p| !has(p, flags::CWR)));
        assert_eq!(f.stats.cwr_sent, want_cwr as u64);
        // DCTCP: ECT on all packets, retransmissions included.
        assert!(out.iter().all(|p| p.ecn == Ecn::Ect0));
        out.clear();
        f.on_rto(ms(2000), &mut out);
        assert_eq!(out[0].seq, 11 * MSS);
        assert_eq!(out[0].ecn, Ecn::Ect0);
    }
}

fn dctcp_receiver(rx: EcnRxPolicy) -> TcpFlow {
    flow(TcpConfig {
        cc: CcConfig::Dctcp(DctcpConfig::default()),
        ecn_rx: rx,
        delack_count: 2,
        delack_timeout: ms(40),
        ..cfg()
    })
}

#[test]
fn test_dctcp_receiver_ack_sequence_with_delayed_ack() {
    let mut r = dctcp_receiver(EcnRxPolicy::Dctcp);
    let mut out = Vec::new();
    let marks = [false, false, false, true, true, true, false, false];
    for (i, &m) in marks.iter().enumerate() {
        let p = data(i as u64 * MSS, 1460);
        r.on_segment(us(i as u64), &if m { ce(p) } else { p }, &mut out);
    }
    // seg 1: every 2nd segment; seg 3 (CE 0→1) with seg 2 pending: ACK 3 with the old ECE
    // (0), then ACK 4 with the new (1); seg 5: every 2nd; seg 6 (CE 1→0), nothing pending:
    // one immediate ACK 7 with ECE 0; seg 7 waits for the delayed-ACK timer.
    assert_eq!(
        acks_ece(&out),
        vec![(2, false), (3, false), (4, true), (6, true), (7, false)]
    );
    assert_eq!(r.rcv.delack_timer.deadline, us(7) + ms(40));
    out.clear();
    r.on_delack(us(7) + ms(40), &mut out);
    assert_eq!(acks_ece(&out), vec![(8, false)]);
    // A DCTCP host's ACKs are ECT.
    assert!(out.iter().all(|p| p.ecn == Ecn::Ect0));
}

#[test]
fn test_odctcp_receiver_keeps_delayed_ack_on_cwr_segment() {
    // seg 2 carries CE (state 0 → 1) and CWR; seg 4 returns to CE 0 without CWR.
    let script = |r: &mut TcpFlow| {
        let mut out = Vec::new();
        r.on_segment(us(0), &data(0, 1460), &mut out);
        r.on_segment(us(1), &data(MSS, 1460), &mut out);
        r.on_segment(us(2), &cwr(ce(data(2 * MSS, 1460))), &mut out);
        let after_cwr = out.len();
        r.on_segment(us(3), &ce(data(3 * MSS, 1460)), &mut out);
        r.on_segment(us(4), &data(4 * MSS, 1460), &mut out);
        (acks_ece(&out), after_cwr)
    };
    let (dctcp, n) = script(&mut dctcp_receiver(EcnRxPolicy::Dctcp));
    assert_eq!(n, 2, "DCTCP: immediate ACK on the CE change");
    assert_eq!(dctcp, vec![(2, false), (3, true), (4, true), (5, false)]);
    let mut o = dctcp_receiver(EcnRxPolicy::Odctcp);
    let (odctcp, n) = script(&mut o);
    assert_eq!(n, 1, "ODCTCP: the CWR segment keeps the delayed ACK");
    // The delayed ACK for segments 2–3 reports the new state; seg 4 (CE 1 → 0, no CWR)
    // is ACKed at once as in DCTCP.
    assert_eq!(odctcp, vec![(2, false), (4, true), (5, false)]);
}

#[test]
fn test_idle_restart_and_dctcp_alpha_reset_after_idle() {
    let mut c = dctcp_cfg(CcConfig::Dctcp, 1.0);
    c.init_cwnd = 2;
    c.idle_restart = true;
    c.cc.dctcp_mut().unwrap().reset_alpha_after_idle = true;
    let mut f = flow(c.clone());
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 4 * MSS, &mut out);
    f.on_ack(us(100), &ack(2 * MSS), &mut out); // window 0 closes with M = 0
    assert_eq!(f.alpha_or_none(), 15.0 / 16.0);
    f.on_ack(us(200), &ack(4 * MSS), &mut out);
    assert_eq!(f.snd.cwnd, 4 * MSS);
    // Idle for less than the RTO (200 ms): nothing changes.
    out.clear();
    f.app_write(ms(100), 4 * MSS, &mut out);
    assert_eq!(f.snd.cwnd, 4 * MSS);
    assert_eq!(out.len(), 4);
    f.on_ack(ms(101), &ack(8 * MSS), &mut out);
    // Idle for more than the RTO: cwnd = min(cwnd, IW), alpha = alpha_init.
    out.clear();
    f.app_write(ms(400), 10 * MSS, &mut out);
    assert_eq!(f.snd.cwnd, 2 * MSS);
    assert_eq!(f.alpha_or_none(), 1.0);
    assert_eq!(dctcp(&f).window_end, 8 * MSS);
    assert_eq!(out.len(), 2);
    // Both options off (the default): no restart.
    c.idle_restart = false;
    c.cc.dctcp_mut().unwrap().reset_alpha_after_idle = false;
    let mut g = flow(c);
    g.app_write(SimTime::ZERO, 2 * MSS, &mut out);
    g.on_ack(us(100), &ack(2 * MSS), &mut out);
    let w = g.snd.cwnd;
    g.app_write(ms(900), 10 * MSS, &mut out);
    assert_eq!(g.snd.cwnd, w);
    assert_eq!(g.alpha_or_none(), 15.0 / 16.0);
}

// ------------------------------------------------------------ SACK (RFC 2018 / 6675)

fn sack_cfg() -> TcpConfig {
    TcpConfig {
        sack: true,
        ..cfg()
    }
}

/// Blocks of an ACK in segments, most recent first.
fn blocks(p: &Packet) -> Vec<(u64, u64)> {
    p.sack
        .decode(p.ack)
        .map(|(s, e)| (s / MSS, e / MSS))
        .collect()
}

/// A SACK ACK with blocks given in segments.
fn sack_ack(a: u64, b: &[(u64, u64)]) -> Packet {
    let abs: Vec<(u64, u64)> = b.iter().map(|&(s, e)| (s * MSS, e * MSS)).collect();
    Packet {
        sack: SackBlocks::encode(a * MSS, &abs),
        ..ack(a * MSS)
    }
}

#[test]
fn test_sack_receiver_blocks_for_hole_pattern() {
    let mut r = flow(sack_cfg());
    let mut out = Vec::new();
    // Segments 1, 4, 6, 8 lost; the rest arrive in order of sequence.
    for (i, s) in [0u64, 2, 3, 5, 7, 9].iter().enumerate() {
        r.on_segment(us(i as u64), &data(s * MSS, 1460), &mut out);
    }
    let got: Vec<(u64, Vec<(u64, u64)>)> = out.iter().map(|p| (p.ack / MSS, blocks(p))).collect();
    assert_eq!(
        got,
        vec![
            (1, vec![]),
            (1, vec![(2, 3)]),
            (1, vec![(2, 4)]),
            (1, vec![(5, 6), (2, 4)]),
            (1, vec![(7, 8), (5, 6), (2, 4)]),
            // At most three blocks: the newest first, then the most recently reported.
            (1, vec![(9, 10), (7, 8), (5, 6)]),
        ]
    );
    out.clear();
    // Segment 1 fills the first hole: cumulative ACK 4, blocks above it repeated.
    r.on_segment(us(10), &data(MSS, 1460), &mut out);
    r.on_segment(us(11), &data(4 * MSS, 1460), &mut out);
    let got: Vec<(u64, Vec<(u64, u64)>)> = out.iter().map(|p| (p.ack / MSS, blocks(p))).collect();
    assert_eq!(
        got,
        vec![
            (4, vec![(9, 10), (7, 8), (5, 6)]),
            (6, vec![(9, 10), (7, 8)])
        ]
    );
    // Without SACK the same receiver sends no blocks.
    let mut n = flow(cfg());
    out.clear();
    n.on_segment(us(0), &data(2 * MSS, 1460), &mut out);
    assert!(out[0].sack.is_empty());
}

#[test]
fn test_sack_window_three_losses_recovery_retransmits_them_in_order() {
    // Segments 1..10 outstanding, cwnd 10; segments 1, 4 and 6 are lost.
    let mut f = sender_with_window_cfg(no_lt(sack_cfg()));
    recv_nothing!(f, us(200), sack_ack(1, &[(2, 3)]));
    recv_nothing!(f, us(201), sack_ack(1, &[(2, 4)]));
    assert!(!f.snd.in_recovery);
    // Third duplicate: RecoveryPoint = 11, ssthresh = cwnd = FlightSize/2 = 5 MSS;
    // retransmit segment 1; pipe = unSACKed not-lost [4,5) + [6,11) + retransmitted [1,2).
    recv!(f, us(202), sack_ack(1, &[(5, 6), (2, 4)]) => [MSS]);
    assert!(f.snd.in_recovery);
    assert_eq!(
        (f.snd.recover, f.snd.ssthresh, f.snd.cwnd),
        (11 * MSS, 5 * MSS, 5 * MSS)
    );
    assert_eq!((f.snd.sb().high_rxt, f.snd.sb().pipe), (2 * MSS, 7 * MSS));
    recv_nothing!(f, us(203), sack_ack(1, &[(7, 8), (5, 6), (2, 4)]));
    assert_eq!(f.snd.sb().pipe, 6 * MSS);
    // 3 segments SACKed above 4 (5, 7, 8): IsLost(4); pipe = [6,7) + [9,11) + [1,2) = 4.
    recv!(f, us(204), sack_ack(1, &[(7, 9), (5, 6), (2, 4)]) => [4 * MSS]);
    assert_eq!((f.snd.sb().high_rxt, f.snd.sb().pipe), (5 * MSS, 5 * MSS));
    // IsLost(6); pipe = [10,11) + [1,2) + [4,5) = 3: retransmit 6, then (rule 2) new data.
    recv!(f, us(205), sack_ack(1, &[(7, 10), (5, 6), (2, 4)]) => [6 * MSS, 11 * MSS]);
    assert_eq!((f.snd.sb().high_rxt, f.snd.sb().pipe), (7 * MSS, 5 * MSS));
    recv!(f, us(206), sack_ack(1, &[(7, 11), (5, 6), (2, 4)]) => [12 * MSS]);
    assert_eq!(f.snd.sb().pipe, 5 * MSS);
    // Partial ACK (retransmitted 1 arrived): pipe = [4,5) + [6,7) + [11,13) = 4 → one new.
    recv!(f, us(300), sack_ack(4, &[(7, 11), (5, 6)]) => [13 * MSS]);
    assert!(f.snd.in_recovery);
    assert_eq!(f.snd.sb().pipe, 5 * MSS);
    recv!(f, us(301), sack_ack(6, &[(7, 11)]) => [14 * MSS]);
    // Cumulative ACK beyond RecoveryPoint: recovery ends with cwnd = ssthresh.
    recv!(f, us(400), ack(13 * MSS) => [15 * MSS, 16 * MSS, 17 * MSS]);
    assert!(!f.snd.in_recovery);
    assert_eq!(f.snd.cwnd, 5 * MSS);
    assert_eq!(f.stats.retransmits, 3);
    assert_eq!(f.stats.fast_recoveries, 1);
    assert!(f.snd.sb().sacked.is_empty());
}

#[test]
fn test_sack_window_rto_discards_the_scoreboard() {
    let mut f = sender_with_window_cfg(no_lt(sack_cfg()));
    recv_nothing!(f, us(200), sack_ack(1, &[(2, 3)]));
    assert_eq!(f.snd.sb().sacked, vec![(2 * MSS, 3 * MSS)]);
    recv!(f, ms(300), RTO => [MSS]);
    assert!(f.snd.sb().sacked.is_empty(), "RFC 2018 §8");
}

#[test]
fn test_abc_slow_start_counts_bytes_up_to_l() {
    let mut f = flow(TcpConfig {
        abc_limit: 2,
        init_cwnd: 4,
        ..cfg()
    });
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 100 * MSS, &mut out);
    // A delayed ACK covering two segments opens cwnd by 2 MSS (RFC 3465, L = 2) ...
    f.on_ack(us(100), &ack(2 * MSS), &mut out);
    assert_eq!(f.snd.cwnd, 6 * MSS);
    // ... and an ACK covering three segments by at most L = 2 MSS.
    f.on_ack(us(110), &ack(5 * MSS), &mut out);
    assert_eq!(f.snd.cwnd, 8 * MSS);
    // Without byte counting the same ACKs open cwnd by one MSS each.
    let mut g = flow(TcpConfig {
        init_cwnd: 4,
        ..cfg()
    });
    g.app_write(SimTime::ZERO, 100 * MSS, &mut out);
    g.on_ack(us(100), &ack(2 * MSS), &mut out);
    assert_eq!(g.snd.cwnd, 5 * MSS);
}

#[test]
fn test_abc_congestion_avoidance_one_mss_per_cwnd_acked() {
    let mut f = flow(TcpConfig {
        abc_limit: 2,
        init_cwnd: 4,
        ..cfg()
    });
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 100 * MSS, &mut out);
    f.snd.ssthresh = 4 * MSS; // in congestion avoidance from the start
    f.on_ack(us(100), &ack(2 * MSS), &mut out);
    assert_eq!((f.snd.cwnd, f.snd.abc_bytes), (4 * MSS, 2 * MSS));
    f.on_ack(us(110), &ack(3 * MSS), &mut out);
    assert_eq!((f.snd.cwnd, f.snd.abc_bytes), (4 * MSS, 3 * MSS));
    // The fourth acked segment completes a window: +1 MSS, the count restarts.
    f.on_ack(us(120), &ack(5 * MSS), &mut out);
    assert_eq!((f.snd.cwnd, f.snd.abc_bytes), (5 * MSS, MSS));
}

// ------------------------------------------------- limited transmit (RFC 3042)

#[test]
fn test_window_first_two_dupacks_limited_transmit_one_new_segment_each() {
    // Limited transmit. Segments 1..10 outstanding (cwnd 10 MSS), lots of data to send.
    let mut f = sender_with_window_cfg(cfg());
    recv!(f, us(200), ack(MSS) => [11 * MSS], "first dupack: one new segment");
    assert_eq!(f.snd.cwnd, 10 * MSS, "cwnd unchanged");
    recv!(f, us(201), ack(MSS) => [12 * MSS], "second dupack: one more");
    assert_eq!(
        (f.snd.cwnd, f.snd.snd_max, f.snd.lt_bytes),
        (10 * MSS, 13 * MSS, 2 * MSS)
    );
    assert_eq!(f.stats.retransmits, 0);
    // Third: fast retransmit; ssthresh from FlightSize without the two limited-transmit
    // segments (RFC 5681 §3.2 step 2): (12 − 2)/2 = 5 MSS, cwnd = 5 + 3.
    recv!(f, us(202), ack(MSS) => [MSS]);
    assert!(f.snd.in_recovery);
    assert_eq!((f.snd.ssthresh, f.snd.cwnd), (5 * MSS, 8 * MSS));
    // The same run without limited transmit sends nothing on the first two.
    let mut g = sender_with_window_cfg(no_lt(cfg()));
    recv_nothing!(g, us(200), ack(MSS));
    recv_nothing!(g, us(201), ack(MSS));
}

#[test]
fn test_window_dupacks_limited_transmit_stops_at_receiver_window() {
    // rwnd 11 MSS: 10 outstanding + 1 fits, a second does not.
    let mut f = sender_with_window_cfg(TcpConfig {
        rwnd: 11 * MSS,
        ..cfg()
    });
    recv!(f, us(200), ack(MSS) => [11 * MSS]);
    recv_nothing!(f, us(201), ack(MSS), "receiver window full");
}

#[test]
fn test_window_dupacks_limited_transmit_needs_new_data_and_room() {
    // Limited transmit needs new data and at most cwnd + 2 MSS outstanding.
    // No unsent data: nothing to send.
    let mut f = sender_with_window_cfg(cfg());
    f.snd.app_limit = f.snd.snd_max;
    recv_nothing!(f, us(200), ack(MSS));
    recv_nothing!(f, us(201), ack(MSS));
    // Outstanding data would exceed cwnd + 2 MSS: 10 outstanding, cwnd 8 → 11 > 10.
    let mut g = sender_with_window_cfg(cfg());
    g.snd.cwnd = 8 * MSS;
    recv_nothing!(g, us(200), ack(MSS));
    // During a go-back-N after an RTO the data below SND.MAX is not new: nothing either.
    let mut h = sender_with_window_cfg(cfg());
    send!(h, ms(300), RTO);
    recv_nothing!(h, ms(301), ack(MSS));
}

#[test]
fn test_sack_window_dupacks_limited_transmit_needs_new_sack_info_and_counts_in_pipe() {
    let mut f = sender_with_window_cfg(sack_cfg());
    recv!(f, us(200), sack_ack(1, &[(2, 3)]) => [11 * MSS]);
    // A duplicate with no new SACK information sends nothing (RFC 5681 §3.2).
    recv_nothing!(f, us(201), sack_ack(1, &[(2, 3)]));
    f.snd.dupacks = 1; // as if that ACK had not come: the next one is the second
    recv!(f, us(202), sack_ack(1, &[(2, 4)]) => [12 * MSS]);
    // Third: RFC 6675 recovery; ssthresh = (12 − 2)/2 MSS; pipe counts the two
    // limited-transmit segments: not-lost unSACKed [4,5) + [6,13) + retransmitted [1,2).
    recv!(f, us(203), sack_ack(1, &[(5, 6), (2, 4)]) => [MSS]);
    assert!(f.snd.in_recovery);
    assert_eq!((f.snd.ssthresh, f.snd.cwnd), (5 * MSS, 5 * MSS));
    assert_eq!(f.snd.sb().pipe, 9 * MSS);
}

// ------------------------------------------- SACK rescue retransmission (RFC 6675 §4)

#[test]
fn test_sack_recovery_window_opening_sends_the_rescue_once() {
    // RFC 6675 §4 rescue retransmission. Segments 1..10 outstanding and nothing more to
    // send; 1 and 10 are lost.
    let mut f = sender_with_window_cfg(sack_cfg());
    f.snd.app_limit = f.snd.snd_max;
    recv_nothing!(f, us(200), sack_ack(1, &[(2, 3)]));
    recv_nothing!(f, us(201), sack_ack(1, &[(2, 4)]));
    recv!(f, us(202), sack_ack(1, &[(2, 5)]) => [MSS]);
    assert!(f.snd.in_recovery);
    recv_nothing!(f, us(210), sack_ack(1, &[(2, 6)]), "pipe still >= cwnd");
    recv_nothing!(f, us(211), sack_ack(1, &[(2, 7)]), "pipe still >= cwnd");
    // 2..7 SACKed: pipe = [8,11) + [1,2) = 4 < cwnd 5. Rule 1: nothing lost above HighRxt;
    // rule 2: no new data; rule 3 may not retransmit 8 (not below the highest SACKed
    // octet, 3.b); rule 4 sends the rescue: the segment holding the highest unSACKed
    // octet, 10. HighRxt stays, RescueRxt = RecoveryPoint.
    recv!(f, us(220), sack_ack(1, &[(2, 8)]) => [10 * MSS]);
    assert_eq!(
        (f.snd.sb().high_rxt, f.snd.sb().rescue_rxt),
        (2 * MSS, 11 * MSS),
        "HighRxt unchanged, RescueRxt = RecoveryPoint"
    );
    // Once per recovery: a further opening of the window sends no second rescue.
    recv_nothing!(f, us(221), sack_ack(1, &[(2, 9)]));
}

// ------------------------------------------- ns-2 tick-based RTT estimator

fn ns2_cfg() -> TcpConfig {
    TcpConfig {
        rtt_tick: ms(10),
        min_rto: ms(10),
        initial_rto: ms(3000),
        ..cfg()
    }
}

#[test]
fn test_ns2_tick_estimator_sub_tick_rtt_gives_three_tick_rto() {
    let mut f = flow(ns2_cfg());
    f.snd.tick_phase = SimTime::ZERO;
    // Sent at 0, acked at 100 us: no tick boundary crossed, the sample counts as 1 tick;
    // 8·SRTT = 8, 4·RTTVAR = 2, RTO = (8 + 2·8)/8 = 3 ticks = 30 ms (above min_rto).
    f.tick_rtt_sample(SimTime::ZERO, us(100));
    assert_eq!((f.snd.tick_srtt, f.snd.tick_rttvar), (8, 2));
    assert_eq!(f.snd.rto, ms(30));
    assert_eq!((f.snd.srtt, f.snd.rttvar), (ms(10), us(5000)));
    // Steady state: the same sample keeps 3 ticks (RTTVAR's 1/4 step rounds to 0).
    f.tick_rtt_sample(ms(1), ms(1) + us(100));
    assert_eq!(
        (f.snd.tick_srtt, f.snd.tick_rttvar, f.snd.rto),
        (8, 2, ms(30))
    );
    // With min_rto 200 ms the RTO is min_rto (rfc2988_: clamp before the backoff).
    let mut g = flow(TcpConfig {
        min_rto: ms(200),
        ..ns2_cfg()
    });
    g.tick_rtt_sample(SimTime::ZERO, us(100));
    assert_eq!(g.snd.rto, ms(200));
}

#[test]
fn test_ns2_tick_estimator_counts_tick_boundaries_of_the_connection_clock() {
    let mut f = flow(ns2_cfg());
    f.snd.tick_phase = SimTime::ZERO;
    f.tick_rtt_sample(SimTime::ZERO, ms(25));
    assert_eq!(f.snd.tick_srtt, 16, "0 → 25 ms crosses 2 boundaries");
    let mut g = flow(ns2_cfg());
    g.snd.tick_phase = SimTime::ZERO;
    g.tick_rtt_sample(ms(7), ms(32));
    assert_eq!(g.snd.tick_srtt, 24, "7 → 32 ms crosses 3");
    g.snd.tick_phase = ms(5);
    let mut h = g.clone();
    h.snd.tick_srtt = 0;
    h.tick_rtt_sample(ms(7), ms(32));
    assert_eq!(
        h.snd.tick_srtt, 16,
        "phase 5 ms: 12 → 37 ms on that clock, 2 boundaries"
    );
}

#[test]
fn test_ns2_tick_phase_follows_the_flow_id() {
    // ns-2 draws `boot_time_` per agent; here the phase is a hash of the flow id, in
    // [0, tick), set again when the engine numbers the flow.
    let mut f = flow(ns2_cfg());
    let p0 = f.snd.tick_phase;
    let phases: Vec<SimTime> = (1..=4)
        .map(|i| {
            f.set_id(FlowId(i));
            assert_eq!(f.id, FlowId(i));
            f.snd.tick_phase
        })
        .collect();
    for (i, p) in phases.iter().enumerate() {
        assert!(*p < ms(10), "phase {p:?} within one tick");
        assert_ne!(*p, p0, "flow {} has flow 0's phase", i + 1);
    }
    f.set_id(FlowId(0));
    assert_eq!(f.snd.tick_phase, p0, "a pure function of the id");
    // Without a tick clock there is no phase.
    let mut g = flow(cfg());
    g.set_id(FlowId(3));
    assert_eq!(g.snd.tick_phase, SimTime::ZERO);
}

#[test]
fn test_ns2_tick_estimator_backoff_multiplier_and_srtt_reset() {
    let mut f = flow(ns2_cfg());
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 100 * MSS, &mut out);
    f.snd.tick_phase = SimTime::ZERO;
    f.tick_rtt_sample(SimTime::ZERO, us(100));
    assert_eq!(f.snd.rto, ms(30));
    let mut rtos = Vec::new();
    for i in 0..4 {
        f.on_rto(ms(100 * (i + 1)), &mut out);
        rtos.push((f.snd.backoff, f.snd.rto));
    }
    assert_eq!(
        rtos,
        vec![(2, ms(60)), (4, ms(120)), (8, ms(240)), (16, ms(480))]
    );
    // Past a backoff of 8 SRTT moves into RTTVAR: 4·RTTVAR = 2 + 1, 8·SRTT = 0.
    assert_eq!((f.snd.tick_srtt, f.snd.tick_rttvar), (0, 3));
    // The next sample starts the estimator afresh and ends the backoff.
    f.tick_rtt_sample(ms(500), ms(500) + us(100));
    assert_eq!((f.snd.backoff, f.snd.tick_srtt, f.snd.rto), (1, 8, ms(30)));
}

// ------------------------------------------- RFC 7323 timestamps

#[test]
fn test_timestamps_receiver_echoes_ts_recent_per_rfc7323() {
    let c = TcpConfig {
        timestamps: true,
        ..cfg()
    };
    let mut r = flow(c);
    let mut out = Vec::new();
    let seg = |seq: u64, sent: SimTime| Packet {
        sent_time: sent,
        ..data(seq, 1460)
    };
    r.on_segment(us(50), &seg(0, us(1)), &mut out);
    // Out of order (above Last.ACK.sent): TS.Recent does not move.
    r.on_segment(us(52), &seg(2 * MSS, us(3)), &mut out);
    // The retransmission that fills the hole sets it.
    r.on_segment(us(60), &seg(MSS, us(9)), &mut out);
    let echoes: Vec<u64> = out.iter().map(|p| p.seq).collect();
    assert_eq!(echoes, vec![us(1).0 + 1, us(1).0 + 1, us(9).0 + 1]);
    assert!(out.iter().all(|p| p.size == 40 + TS_OPTION_BYTES));
}

#[test]
fn test_timestamps_sender_samples_every_ack_even_after_retransmission() {
    let c = TcpConfig {
        timestamps: true,
        ..cfg()
    };
    let mut f = flow(c);
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 100 * MSS, &mut out);
    assert_eq!(out[0].size, 1500 + TS_OPTION_BYTES);
    // The first segment times out and is retransmitted at 1 s; its ACK echoes the
    // retransmission's timestamp: a 300 us sample, which Karn's rule would discard.
    f.on_rto(ms(1000), &mut out);
    let a = Packet {
        seq: ms(1000).0 + 1,
        ..ack(MSS)
    };
    f.on_ack(ms(1000) + us(300), &a, &mut out);
    assert!(f.snd.have_rtt);
    assert_eq!(f.snd.srtt, us(300));
    // Every further ACK of new data is a sample.
    let b = Packet {
        seq: ms(1000).0 + 1,
        ..ack(2 * MSS)
    };
    f.on_ack(ms(1000) + us(700), &b, &mut out);
    assert_eq!(f.snd.srtt, SimTime((7 * us(300).0 + us(700).0) / 8));
}

#[test]
fn test_ns2_idle_rto_reset_restarts_from_one_segment() {
    let c = TcpConfig {
        idle_rto_reset: true,
        init_cwnd: 4,
        ..cfg()
    };
    let mut f = flow(c.clone());
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 4 * MSS, &mut out);
    f.on_ack(us(100), &ack(4 * MSS), &mut out);
    let (cwnd, ssthresh) = (f.snd.cwnd, f.snd.ssthresh);
    assert_eq!(cwnd, 5 * MSS);
    // Written again just before an RTO (200 ms) after the last ACK: the window is kept.
    let mut g = f.clone();
    out.clear();
    g.app_write(us(100) + ms(200) - us(1), 10 * MSS, &mut out);
    assert_eq!((g.snd.cwnd, out.len()), (cwnd, 5));
    // One RTO or more after it: the ns-2 timer would have expired with nothing
    // outstanding: cwnd = 1 segment, ssthresh unchanged.
    out.clear();
    f.app_write(us(100) + ms(200), 10 * MSS, &mut out);
    assert_eq!((f.snd.cwnd, f.snd.ssthresh, out.len()), (MSS, ssthresh, 1));
}

#[test]
fn test_rto_reset_on_ack_ends_backoff_at_first_new_ack() {
    for reset in [false, true] {
        let mut f = flow(TcpConfig {
            rto_reset_on_ack: reset,
            ..cfg()
        });
        let mut out = Vec::new();
        f.app_write(SimTime::ZERO, 100 * MSS, &mut out);
        f.on_ack(us(100), &ack(MSS), &mut out); // a sample: RTO = min_rto 200 ms
        f.on_rto(ms(300), &mut out);
        assert_eq!(f.snd.rto, ms(400));
        // The ACK of the retransmission is not a valid sample (Karn).
        f.on_ack(ms(300) + us(100), &ack(2 * MSS), &mut out);
        let want = if reset { ms(200) } else { ms(400) };
        assert_eq!(f.snd.rto, want, "rto_reset_on_ack = {reset}");
    }
}

#[test]
fn test_ns2_newreno_exit_keeps_the_uninflated_window() {
    // cwnd 10, segments 1..10 outstanding, 1 and 3 lost: fast retransmit (ssthresh 5,
    // cwnd 8), a partial ACK for 2 segments deflates to 7, the full ACK leaves recovery.
    let run = |ns2: bool| {
        let mut f = sender_in_fast_recovery(TcpConfig {
            exit_cwnd_ns2: ns2,
            ..no_lt(cfg())
        });
        send!(f, us(300), ack(3 * MSS));
        assert!(f.snd.in_recovery);
        send!(f, us(400), ack(11 * MSS));
        assert!(!f.snd.in_recovery);
        f.snd.cwnd
    };
    // ns-2: the partial ACK took 2 from dupwnd_ (3) and gave one back: cwnd_ stays at
    // ssthresh (5); RFC 6582 option 1: min(ssthresh, FlightSize + MSS) with one segment
    // in flight (11 was sent during recovery) = 2.
    assert_eq!(run(true), 5 * MSS);
    assert_eq!(run(false), 2 * MSS);
}

#[test]
fn test_whole_segments_rounds_a_write_up_to_full_segments() {
    let c = TcpConfig {
        whole_segments: true,
        init_cwnd: 200,
        ..cfg()
    };
    let mut f = flow(c);
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 256_000, &mut out);
    // ns-2's one-way TCP: ceil(256000 / 1460) = 176 packets of 1460 B.
    assert_eq!(f.snd.app_limit, 176 * MSS);
    assert_eq!(out.len(), 176);
    assert!(out.iter().all(|p| p.payload as u64 == MSS));
    let mut g = flow(TcpConfig {
        init_cwnd: 200,
        ..cfg()
    });
    out.clear();
    g.app_write(SimTime::ZERO, 256_000, &mut out);
    assert_eq!(out.last().unwrap().payload, 256_000 - 175 * 1460);
}

#[test]
fn test_recover_strict_needs_an_ack_beyond_recover() {
    // After a timeout, recover = SND.MAX = 11 MSS. Segments up to 11 are then acked and
    // new data sent; segment 11 (the first after recover) is lost and three duplicate ACKs
    // for 11 arrive. RFC 6582: the ACK covers recover, fast retransmit. ns-2 (strict): it
    // must pass recover by a segment, so no fast retransmit (the RTO will repair it).
    let run = |strict: bool| {
        let mut f = sender_with_window_cfg(TcpConfig {
            recover_strict: strict,
            ..no_lt(cfg())
        });
        send!(f, ms(300), RTO);
        assert_eq!(f.snd.recover, 11 * MSS);
        f.snd.cwnd = 10 * MSS;
        send!(f, ms(301), ack(11 * MSS));
        for i in 0..3 {
            send!(f, ms(302) + us(i), ack(11 * MSS));
        }
        f.snd.in_recovery
    };
    assert!(run(false));
    assert!(!run(true));
}

#[test]
fn test_recovery_maxburst_limits_new_segments_per_ack() {
    // Fast retransmit with cwnd 10 → ssthresh 5, cwnd 8 after 3 dupacks; then cwnd grows by
    // one per dupack. With a much larger window (ssthresh forced high) the first dupacks
    // after recovery entry can open several segments at once; ns-2 sends at most 2.
    let run = |burst: u32| {
        let mut f = sender_in_fast_recovery(TcpConfig {
            recovery_maxburst: burst,
            ..no_lt(cfg())
        });
        f.snd.cwnd = 20 * MSS; // with this dupack's inflation: 21, room for 11 more segments
        send!(f, us(210), ack(MSS)).len()
    };
    assert_eq!(run(0), 11);
    assert_eq!(run(2), 2);
}

#[test]
fn test_ssthresh_from_cwnd_as_ns2_slowdown() {
    // cwnd 10 MSS, 10 outstanding: both rules give 5. After a timeout (cwnd = 1 MSS) a second
    // timeout gives ns-2's floor of 2 segments, while FlightSize / 2 stays at 5.
    let run = |ns2: bool| {
        let mut f = sender_with_window_cfg(TcpConfig {
            ssthresh_from_cwnd: ns2,
            ..cfg()
        });
        let mut out = Vec::new();
        f.on_rto(ms(300), &mut out);
        let first = f.snd.ssthresh;
        f.on_rto(ms(700), &mut out);
        (first, f.snd.ssthresh)
    };
    assert_eq!(run(false), (5 * MSS, 5 * MSS));
    assert_eq!(run(true), (5 * MSS, 2 * MSS));
}

#[test]
fn test_ns2_fast_retransmit_halves_cwnd_exactly() {
    // cwnd 10.5 MSS: ns-2's ssthresh_ = (int)(10.5 / 2) = 5 packets, cwnd_ = 5.25 packets
    // (+ 3 of inflation); the RFC rule uses FlightSize / 2 for both.
    let mut f = sender_with_window_cfg(TcpConfig {
        ssthresh_from_cwnd: true,
        ..no_lt(cfg())
    });
    f.snd.cwnd = 10 * MSS + MSS / 2;
    recv_nothing!(f, us(200), ack(MSS));
    recv_nothing!(f, us(201), ack(MSS));
    recv!(f, us(202), ack(MSS) => [MSS]);
    assert!(f.snd.in_recovery);
    assert_eq!(f.snd.ssthresh, 5 * MSS);
    assert_eq!(f.snd.cwnd, (10 * MSS + MSS / 2) / 2 + 3 * MSS);
    assert_eq!(f.snd.ns2_cwnd, (10 * MSS + MSS / 2) / 2);
}

// ------------------------------------------------------ RACK-TLP (RFC 8985)

fn rack_cfg(tlp: bool) -> TcpConfig {
    TcpConfig {
        sack: true,
        rack: true,
        tlp,
        ..cfg()
    }
}

/// `sender_with_window_cfg` with RACK, then segment 1 acknowledged at 200 us: segments
/// 2..10 outstanding, sent at 100 us, and 11 sent at 200 us (congestion avoidance);
/// RACK.min_RTT = SRTT = 100 us.
fn rack_sender(tlp: bool) -> TcpFlow {
    let mut f = sender_with_window_cfg(rack_cfg(tlp));
    recv!(f, us(200), ack(2 * MSS) => [11 * MSS]);
    let r = f.snd.rack.as_ref().unwrap();
    assert_eq!((r.min_rtt, f.snd.srtt), (us(100), us(100)));
    let xmit: Vec<SimTime> = r.segs.iter().map(|s| s.xmit).collect();
    assert_eq!(xmit, [vec![us(100); 9], vec![us(200)]].concat());
    assert!(f.rack_check());
    f
}

fn rack(f: &TcpFlow) -> &Rack {
    f.snd.rack.as_ref().unwrap()
}

#[test]
fn test_rack_segment_sent_long_before_a_delivered_one_is_lost_at_once() {
    // Segment 1 was sent at 0, segment 2 at 100 us; a SACK of 2 at 200 us gives RACK.rtt
    // = 100 us: 1 is due at 0 + 100 us + reo_wnd (25 us) < now, lost on the first SACK
    // (DupThresh would wait for two more).
    let mut f = sender_with_window_cfg(rack_cfg(false));
    // FlightSize 10 MSS → ssthresh = cwnd = 5 MSS; segment 1 retransmitted at once; the
    // pipe (9 MSS not SACKed and not lost) leaves no room for more.
    recv!(f, us(200), sack_ack(1, &[(2, 3)]) => [MSS]);
    assert!(f.snd.in_recovery);
    assert_eq!(f.stats.fast_recoveries, 1);
    assert_eq!((f.snd.ssthresh, f.snd.cwnd), (5 * MSS, 5 * MSS));
    assert_eq!(f.snd.sb().pipe, 9 * MSS);
    let s1 = rack(&f).segs[0];
    assert_eq!(
        (s1.start, s1.lost, s1.retransmitted, s1.xmit),
        (MSS, true, true, us(200))
    );
}

#[test]
fn test_rack_reordering_window_arms_the_timer_then_marks_lost() {
    // Segments 2..10 were sent together; a SACK of 3 at 201 us: 2 is "sent before" 3
    // (same time, lower sequence), due at 100 + 101 + min_RTT/4 = 226 us.
    let mut f = rack_sender(false);
    recv!(
        f, us(201), sack_ack(2, &[(3, 4)]) => [12 * MSS],
        "limited transmit on new SACK information"
    );
    assert!(!f.snd.in_recovery);
    assert_eq!(rack(&f).reo_at, us(226));
    assert_eq!(rack(&f).timer, TimerKind::Reorder);
    assert_eq!(f.snd.rto_timer.deadline, us(226));
    // The reordering timer fires: 2 is lost, recovery starts with its retransmission, and
    // the retransmission timer holds the RTO again (armed at 200 us).
    recv!(f, us(226), RTO => [2 * MSS]);
    assert_eq!(f.stats.timeouts, 0);
    assert!(f.snd.in_recovery);
    assert_eq!(rack(&f).timer, TimerKind::Rto);
    assert_eq!(f.snd.rto_timer.deadline, us(200) + ms(200));
}

#[test]
fn test_rack_window_is_zero_once_dupthresh_segments_are_sacked() {
    let mut f = rack_sender(false);
    let mut out = Vec::new();
    f.on_ack(us(201), &sack_ack(2, &[(3, 4)]), &mut out);
    f.on_ack(us(202), &sack_ack(2, &[(3, 5)]), &mut out);
    assert!(!f.snd.in_recovery);
    // Third SACKed segment: reo_wnd = 0, 2 is due at 100 + 103 = 203 us = now.
    f.on_ack(us(203), &sack_ack(2, &[(3, 6)]), &mut out);
    assert!(f.snd.in_recovery);
    assert_eq!(*seqs(&out).last().unwrap(), 2 * MSS);
}

#[test]
fn test_rack_finds_a_lost_retransmission_without_an_rto() {
    // As above, 2 is retransmitted at 203 us. SACKs then free the pipe and new data goes
    // out; the retransmission of 2 is lost. A SACK of a segment sent after 203 us, one
    // RACK.rtt later, marks 2 lost again and it is sent a third time — no RTO.
    let mut f = rack_sender(false);
    let mut out = Vec::new();
    for (i, top) in [4u64, 5, 6].iter().enumerate() {
        f.on_ack(us(201 + i as u64), &sack_ack(2, &[(3, *top)]), &mut out);
    }
    assert!(f.snd.in_recovery);
    out.clear();
    let mut t = 210;
    let mut top = 6;
    while out.iter().all(|p| p.seq < 12 * MSS) {
        top += 1;
        t += 1;
        f.on_ack(us(t), &sack_ack(2, &[(3, top)]), &mut out);
        assert!(top < 12, "no new data sent");
    }
    let new = out.iter().find(|p| p.seq >= 12 * MSS).unwrap().seq / MSS;
    let sent_at = us(t);
    out.clear();
    // The new segment is SACKed one RTT (100 us) after it was sent.
    f.on_ack(
        sent_at + us(100),
        &sack_ack(2, &[(new, new + 1), (3, top)]),
        &mut out,
    );
    assert_eq!(seqs(&out)[0], 2 * MSS, "2 retransmitted again");
    assert_eq!(f.stats.timeouts, 0);
    assert_eq!(f.stats.fast_recoveries, 1);
    assert!(f.rack_check());
}

#[test]
fn test_rack_timeout_forgets_marks_and_goes_back_n() {
    let mut f = rack_sender(false);
    let mut out = Vec::new();
    f.on_ack(us(201), &sack_ack(2, &[(3, 4)]), &mut out);
    out.clear();
    f.snd.rto_timer.set(ms(300));
    rack_mut(&mut f).timer = TimerKind::Rto;
    f.on_rto(ms(300), &mut out);
    assert_eq!(f.stats.timeouts, 1);
    assert!(rack(&f).segs.iter().all(|s| !s.lost && !s.sacked));
    assert_eq!(seqs(&out), vec![2 * MSS]);
    assert!(f.rack_check());
}

fn rack_mut(f: &mut TcpFlow) -> &mut Rack {
    f.snd.rack.as_mut().unwrap()
}

#[test]
fn test_tlp_probe_retransmits_the_last_segment_at_two_srtt() {
    // Nothing more to send: the PTO (2·SRTT = 200 us) replaces the RTO after the ACK of
    // new data; when it fires the highest segment (10) is retransmitted and the RTO is
    // re-armed.
    let mut f = sender_with_window_cfg(rack_cfg(true));
    f.snd.app_limit = f.snd.snd_max;
    recv_nothing!(f, us(200), ack(2 * MSS));
    assert_eq!(rack(&f).timer, TimerKind::Probe);
    assert_eq!(f.snd.rto_timer.deadline, us(400));
    recv!(f, us(400), RTO => [10 * MSS]);
    assert_eq!(
        (f.stats.tlp_probes, f.stats.timeouts, f.stats.retransmits),
        (1, 0, 1)
    );
    assert_eq!((rack(&f).tlp_end, rack(&f).tlp_retrans), (11 * MSS, true));
    assert_eq!(rack(&f).timer, TimerKind::Rto);
    assert_eq!(f.snd.rto_timer.deadline, us(400) + ms(200));
    // The ACK of everything ends nothing yet; its duplicate (the original and the probe
    // both arrived) ends the episode without a window reduction.
    send!(f, us(500), ack(11 * MSS));
    assert_eq!(rack(&f).tlp_end, 11 * MSS);
    let cwnd = f.snd.cwnd;
    send!(f, us(501), ack(11 * MSS));
    assert_eq!(rack(&f).tlp_end, u64::MAX);
    assert_eq!((f.stats.tlp_recoveries, f.snd.cwnd), (0, cwnd));
}

#[test]
fn test_tlp_probe_that_repaired_a_loss_reduces_the_window() {
    let mut f = sender_with_window_cfg(rack_cfg(true));
    f.snd.app_limit = f.snd.snd_max;
    let mut out = Vec::new();
    f.on_ack(us(200), &ack(2 * MSS), &mut out);
    f.on_rto(us(400), &mut out);
    assert_eq!(f.stats.tlp_probes, 1);
    // The probe delivered segment 10; more data is written and acknowledged beyond it.
    f.on_ack(us(500), &ack(11 * MSS), &mut out);
    f.app_write(us(500), 4 * MSS, &mut out);
    let cwnd = f.snd.cwnd;
    let flight = f.flight();
    f.on_ack(us(600), &ack(12 * MSS), &mut out);
    assert_eq!(f.stats.tlp_recoveries, 1);
    assert_eq!(rack(&f).tlp_end, u64::MAX);
    assert_eq!(f.snd.ssthresh, (flight / 2).max(2 * MSS));
    assert!(f.snd.cwnd < cwnd);
}

#[test]
fn test_tlp_probe_sends_new_data_when_the_receiver_window_allows() {
    let mut f = sender_with_window_cfg(rack_cfg(true));
    send!(f, us(200), ack(2 * MSS));
    assert_eq!(rack(&f).timer, TimerKind::Probe);
    let (max, deadline) = (f.snd.snd_max, f.snd.rto_timer.deadline);
    recv!(f, deadline, RTO => [max], "one new segment beyond cwnd");
    assert_eq!((f.stats.tlp_probes, f.stats.retransmits), (1, 0));
    assert!(!rack(&f).tlp_retrans);
}

#[test]
fn test_tlp_not_armed_in_recovery_or_when_rto_is_sooner() {
    // In recovery: no probe.
    let mut f = sender_with_window_cfg(rack_cfg(true));
    let mut out = Vec::new();
    f.on_ack(us(200), &sack_ack(1, &[(2, 3)]), &mut out);
    assert!(f.snd.in_recovery);
    assert_eq!(rack(&f).timer, TimerKind::Rto);
    // One segment outstanding: PTO = 2·SRTT + WCDelAckT (200 ms) is later than the RTO.
    let mut g = flow(rack_cfg(true));
    g.app_write(SimTime::ZERO, 2 * MSS, &mut out);
    g.on_ack(us(100), &ack(MSS), &mut out);
    assert_eq!(rack(&g).timer, TimerKind::Rto);
    assert_eq!(g.snd.rto_timer.deadline, us(100) + ms(200));
}

#[test]
fn test_rack_off_keeps_no_state() {
    let f = sender_with_window_cfg(sack_cfg());
    assert!(f.snd.rack.is_none());
}

#[test]
fn test_dsack_receiver_reports_duplicates_first_rfc2883() {
    let c = TcpConfig {
        dsack: true,
        ..sack_cfg()
    };
    let mut r = flow(c);
    let mut out = Vec::new();
    r.on_segment(us(0), &data(0, 1460), &mut out);
    r.on_segment(us(1), &data(2 * MSS, 1460), &mut out);
    out.clear();
    // A duplicate below RCV.NXT: D-SACK [0, 1) first, then the block of the hole pattern;
    // the D-SACK block is invisible to `decode` (only the regular block is seen).
    r.on_segment(us(2), &data(0, 1460), &mut out);
    let p = out[0];
    assert_eq!(p.ack, MSS);
    assert_eq!(p.sack.dsack(p.ack), Some((0, MSS)));
    assert_eq!(blocks(&p), vec![(2, 3)]);
    // A duplicate above RCV.NXT: D-SACK [2, 3) inside the second block [2, 3).
    out.clear();
    r.on_segment(us(3), &data(2 * MSS, 1460), &mut out);
    assert_eq!(out[0].sack.dsack(MSS), Some((2 * MSS, 3 * MSS)));
    // Reported once: the next ACK has no D-SACK block.
    out.clear();
    r.on_segment(us(4), &data(3 * MSS, 1460), &mut out);
    assert_eq!(out[0].sack.dsack(MSS), None);
    // Without `dsack` nothing is reported.
    let mut n = flow(sack_cfg());
    out.clear();
    n.on_segment(us(0), &data(0, 1460), &mut out);
    n.on_segment(us(1), &data(0, 1460), &mut out);
    assert_eq!(out[1].sack.dsack(MSS), None);
}

#[test]
fn test_tlp_episode_ended_by_a_dsack_of_the_probe_without_reduction() {
    let c = TcpConfig {
        dsack: true,
        ..rack_cfg(true)
    };
    let mut f = sender_with_window_cfg(c);
    f.snd.app_limit = f.snd.snd_max;
    let mut out = Vec::new();
    f.on_ack(us(200), &ack(2 * MSS), &mut out);
    f.on_rto(us(400), &mut out);
    assert_eq!((rack(&f).tlp_end, rack(&f).tlp_retrans), (11 * MSS, true));
    // The receiver had segment 10 (its ACK was delayed): the probe is a duplicate and the
    // ACK of everything carries a D-SACK of [10, 11).
    let cwnd = f.snd.cwnd;
    let mut p = ack(11 * MSS);
    p.sack = p.sack.with_dsack(11 * MSS, (10 * MSS, 11 * MSS));
    f.on_ack(us(500), &p, &mut out);
    assert_eq!(rack(&f).tlp_end, u64::MAX);
    assert_eq!(f.stats.tlp_recoveries, 0);
    assert!(f.snd.cwnd >= cwnd);
    // The D-SACK also widens RACK's reordering window by one min_RTT/4 step.
    assert_eq!(rack(&f).reo_wnd_mult, 2);
}

/// The per-flow memory budget (docs/performance.md, "Memory per flow"): a `TcpFlow` is
/// the hot state every flow carries, idle or not, in one `Vec` the datapath indexes by
/// flow id. Rarely used state lives behind pointers allocated on first use (the receiver's
/// out-of-order ranges and last SACK blocks, the sender's SACK scoreboard and RFC 6675
/// recovery state, its RACK state), so a flow that never sees reordering or loss pays 8
/// bytes for each. 608 bytes was the size when this test was written (720 before the cold
/// parts); growing past the budget needs a reason, or another field moved to a cold part.
#[test]
fn tcp_flow_size_budget() {
    use std::mem::size_of;
    assert!(
        size_of::<TcpFlow>() <= 608,
        "TcpFlow grew to {} bytes (budget 608): move rarely used state to a cold part",
        size_of::<TcpFlow>()
    );
    assert!(
        size_of::<Sender>() <= 264,
        "Sender: {} bytes",
        size_of::<Sender>()
    );
    assert!(
        size_of::<Receiver>() <= 88,
        "Receiver: {} bytes",
        size_of::<Receiver>()
    );
    eprintln!(
        "sizes: TcpFlow {} Sender {} Receiver {} TcpConfig {} TcpStats {} Packet {}",
        size_of::<TcpFlow>(),
        size_of::<Sender>(),
        size_of::<Receiver>(),
        size_of::<TcpConfig>(),
        size_of::<TcpStats>(),
        size_of::<Packet>(),
    );
}

/// `insert_range` against a model of octets: after each of many random insertions into a
/// small sequence space, the list is exactly the maximal runs of octets covered so far,
/// and the return value says whether the insertion covered an octet not covered before.
#[test]
fn insert_range_keeps_the_covered_octets_as_sorted_disjoint_runs() {
    const SPACE: u64 = 120;
    let mut rng = crate::base::rng::Rng::new(7, 0);
    for _round in 0..300 {
        let mut v: Vec<(u64, u64)> = Vec::new();
        let mut covered = [false; SPACE as usize];
        for _ in 0..rng.below(25) + 1 {
            let s = rng.below(SPACE - 1);
            let e = s + 1 + rng.below((SPACE - s).min(12));
            let fresh = (s..e).any(|x| !covered[x as usize]);
            (s..e).for_each(|x| covered[x as usize] = true);
            assert_eq!(
                super::sack::insert_range(&mut v, s, e),
                fresh,
                "[{s}, {e}) into {v:?}"
            );
            let mut runs = Vec::new();
            let mut x = 0;
            while x < SPACE {
                if covered[x as usize] {
                    let a = x;
                    while x < SPACE && covered[x as usize] {
                        x += 1;
                    }
                    runs.push((a, x));
                } else {
                    x += 1;
                }
            }
            assert_eq!(v, runs, "after inserting [{s}, {e})");
        }
    }
}

/// `unsacked` and `first_unsacked` skip the scoreboard's ranges below their start by
/// bisection and stop past their end: against scans of every range, on random scoreboards
/// (the runs `insert_range` builds) and every start and end in a small sequence space.
#[test]
fn scoreboard_queries_by_bisection_match_full_scans() {
    const SPACE: u64 = 60;
    let mut rng = crate::base::rng::Rng::new(11, 0);
    let (mut f, _) = sender_established(100 * MSS);
    std::sync::Arc::make_mut(&mut f.cfg).mss = 4;
    f.snd.snd_max = SPACE - 5;
    for _round in 0..200 {
        let mut v: Vec<(u64, u64)> = Vec::new();
        for _ in 0..rng.below(12) {
            let s = rng.below(SPACE - 1);
            super::sack::insert_range(&mut v, s, s + 1 + rng.below((SPACE - s).min(6)));
        }
        let covered = |x: u64| v.iter().any(|&(s, e)| s <= x && x < e);
        f.snd.sb_mut().sacked = v.clone();
        for a in 0..SPACE {
            for b in 0..SPACE {
                let want = (a..b).filter(|&x| !covered(x)).count() as u64;
                assert_eq!(f.unsacked(a, b), want, "[{a}, {b}) in {v:?}");
            }
            // The first octet at or above `a` not covered, below snd_max, and the segment
            // from it: up to one MSS, not into covered octets or past snd_max.
            let want = (a..f.snd.snd_max).find(|&x| !covered(x)).map(|x| {
                let end = (x..f.snd.snd_max)
                    .take(4)
                    .take_while(|&y| !covered(y))
                    .count() as u64;
                (x, end)
            });
            assert_eq!(f.first_unsacked(a), want, "from {a} in {v:?}");
        }
    }
}

//! Packet-script tests of the TCP endpoints: each test drives a sender or receiver with
//! scripted segments and checks the exact state, packets and timers that result.

use super::*;
use crate::packet::{Ecn, Kind, Packet};

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

/// A sender with `bytes` written and the initial window sent at t = 0.
fn sender_established(bytes: u64) -> (TcpFlow, Vec<Packet>) {
    let mut f = TcpFlow::new(0, 1, 2, cfg());
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, bytes, &mut out);
    (f, out)
}

fn ack(a: u64) -> Packet {
    Packet {
        flow: 0,
        src: 2,
        dst: 1,
        seq: 0,
        ack: a,
        size: 40,
        payload: 0,
        kind: Kind::Ack,
        flags: 0,
        ecn: Ecn::NotEct,
        class: 0,
        enq_time: SimTime::ZERO,
        sent_time: SimTime::ZERO,
    }
}

fn data(seq: u64, len: u32) -> Packet {
    Packet {
        seq,
        payload: len,
        size: len + 40,
        kind: Kind::Data,
        src: 1,
        dst: 2,
        ..ack(0)
    }
}

fn seqs(out: &[Packet]) -> Vec<u64> {
    out.iter().map(|p| p.seq).collect()
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
    let mut f = TcpFlow::new(
        0,
        1,
        2,
        TcpConfig {
            handshake: true,
            ..cfg()
        },
    );
    let mut out = Vec::new();
    f.app_write(SimTime::ZERO, 10 * MSS, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].kind, Kind::Syn);
    assert_eq!(f.snd.state, SndState::SynSent);
    // Receiver side answers with a SYN-ACK.
    let mut r = TcpFlow::new(0, 1, 2, cfg());
    let mut rout = Vec::new();
    r.on_segment(us(50), &out[0], &mut rout);
    assert_eq!(rout.len(), 1);
    assert_eq!(rout[0].kind, Kind::SynAck);
    assert_eq!((rout[0].src, rout[0].dst), (2, 1));
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
    let mut f = TcpFlow::new(
        0,
        1,
        2,
        TcpConfig {
            handshake: true,
            ..cfg()
        },
    );
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
fn test_slow_start_grows_one_mss_per_ack() {
    let (mut f, _) = sender_established(100 * MSS);
    let mut out = Vec::new();
    f.on_ack(us(100), &ack(MSS), &mut out);
    assert_eq!(f.snd.cwnd, 3 * MSS);
    // One ACK for one segment opens room for two new segments.
    assert_eq!(seqs(&out), vec![2 * MSS, 3 * MSS]);
    out.clear();
    f.on_ack(us(112), &ack(2 * MSS), &mut out);
    assert_eq!(f.snd.cwnd, 4 * MSS);
    assert_eq!(seqs(&out), vec![4 * MSS, 5 * MSS]);
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
    let mut f = TcpFlow::new(0, 1, 2, c);
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
    let mut g = TcpFlow::new(0, 1, 2, c);
    g.app_write(SimTime::ZERO, 100 * MSS, &mut out);
    g.on_ack(us(100), &ack(MSS), &mut out);
    // SRTT + max(G, 4·RTTVAR) = 100 us + 10 ms, rounded up to a multiple of G = 20 ms.
    assert_eq!(g.snd.rto, ms(20));
}

/// Sender with cwnd 10 MSS, segments 0..9 outstanding, RTT known (RTO 200 ms).
fn sender_with_window() -> TcpFlow {
    let (mut f, _) = sender_established(1000 * MSS);
    let mut out = Vec::new();
    f.snd.ssthresh = 8 * MSS;
    // Grow to 10 segments outstanding by acking in slow start/CA.
    f.on_ack(us(100), &ack(MSS), &mut out);
    f.snd.cwnd = 10 * MSS;
    f.try_send(us(100), &mut out);
    assert_eq!(f.snd.snd_nxt - f.snd.snd_una, 10 * MSS);
    f
}

#[test]
fn test_three_dupacks_fast_retransmit_rfc6582_window() {
    let mut f = sender_with_window();
    let una = f.snd.snd_una;
    let max = f.snd.snd_max;
    let mut out = Vec::new();
    f.on_ack(us(200), &ack(una), &mut out);
    f.on_ack(us(201), &ack(una), &mut out);
    assert!(out.is_empty());
    assert!(!f.snd.in_recovery);
    f.on_ack(us(202), &ack(una), &mut out);
    // Third duplicate: ssthresh = FlightSize/2, retransmit SND.UNA, cwnd = ssthresh + 3 MSS.
    assert!(f.snd.in_recovery);
    assert_eq!(f.snd.ssthresh, 5 * MSS);
    assert_eq!(f.snd.cwnd, 8 * MSS);
    assert_eq!(f.snd.recover, max);
    assert_eq!(seqs(&out), vec![una]);
    assert_eq!(f.stats.retransmits, 1);
    assert_eq!(f.stats.fast_recoveries, 1);
    out.clear();
    // Each further duplicate inflates cwnd by one MSS; new data flows once cwnd > flight.
    for i in 0..3 {
        f.on_ack(us(203 + i), &ack(una), &mut out);
    }
    assert_eq!(f.snd.cwnd, 11 * MSS);
    assert_eq!(seqs(&out), vec![max]);
}

#[test]
fn test_partial_ack_retransmits_next_hole_and_deflates() {
    let mut f = sender_with_window();
    let una = f.snd.snd_una;
    let mut out = Vec::new();
    for i in 0..3 {
        f.on_ack(us(200 + i), &ack(una), &mut out);
    }
    out.clear();
    let cwnd_before = f.snd.cwnd;
    // Partial ACK covering two segments: retransmit the new SND.UNA, cwnd −= acked − MSS.
    f.on_ack(us(300), &ack(una + 2 * MSS), &mut out);
    assert!(f.snd.in_recovery);
    assert_eq!(out[0].seq, una + 2 * MSS);
    assert_eq!(f.snd.cwnd, cwnd_before - 2 * MSS + MSS);
    // The first partial ACK restarts the retransmission timer.
    assert_eq!(f.snd.rto_timer.deadline, us(300) + f.snd.rto);
    let d = f.snd.rto_timer.deadline;
    f.on_ack(us(400), &ack(una + 3 * MSS), &mut out);
    assert_eq!(
        f.snd.rto_timer.deadline, d,
        "later partial ACKs do not restart it"
    );
}

#[test]
fn test_full_ack_leaves_recovery_with_deflated_window() {
    let mut f = sender_with_window();
    let una = f.snd.snd_una;
    let mut out = Vec::new();
    for i in 0..3 {
        f.on_ack(us(200 + i), &ack(una), &mut out);
    }
    let recover = f.snd.recover;
    out.clear();
    f.on_ack(us(300), &ack(recover), &mut out);
    assert!(!f.snd.in_recovery);
    // cwnd = min(ssthresh, max(FlightSize, MSS) + MSS); FlightSize is 0 here.
    assert_eq!(f.snd.cwnd, 2 * MSS);
    assert_eq!(f.snd.dupacks, 0);
}

#[test]
fn test_no_second_fast_retransmit_for_data_before_recover() {
    let mut f = sender_with_window();
    let mut out = Vec::new();
    // Timeout: recover := SND.MAX, so dupACKs for older data do not trigger fast retransmit.
    f.on_rto(ms(300), &mut out);
    let una = f.snd.snd_una;
    out.clear();
    for i in 0..3 {
        f.on_ack(ms(301) + us(i), &ack(una), &mut out);
    }
    assert!(!f.snd.in_recovery);
    assert_eq!(f.stats.fast_recoveries, 0);
}

#[test]
fn test_rto_expiry_backoff_and_go_back_n() {
    let mut f = sender_with_window();
    let una = f.snd.snd_una;
    let flight = f.flight();
    let rto = f.snd.rto;
    let mut out = Vec::new();
    f.on_rto(ms(300), &mut out);
    assert_eq!(f.stats.timeouts, 1);
    assert_eq!(f.snd.cwnd, MSS);
    assert_eq!(f.snd.ssthresh, flight / 2);
    assert_eq!(f.snd.rto, SimTime(rto.0 * 2));
    assert_eq!(seqs(&out), vec![una]);
    assert_eq!(f.snd.snd_nxt, una + MSS);
    assert_eq!(f.snd.rto_timer.deadline, ms(300) + SimTime(rto.0 * 2));
    // A second expiry doubles again (capped at max_rto).
    out.clear();
    f.on_rto(ms(700), &mut out);
    assert_eq!(f.snd.rto, SimTime(rto.0 * 4));
    assert!(!f.snd.rtt_active, "Karn: retransmissions are not timed");
}

#[test]
fn test_rto_backoff_capped_at_max_rto() {
    let mut f = sender_with_window();
    f.cfg.max_rto = ms(500);
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
    let mut r = TcpFlow::new(0, 1, 2, cfg());
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
    let mut r = TcpFlow::new(0, 1, 2, cfg());
    let mut out = Vec::new();
    r.on_segment(us(1), &data(0, 1460), &mut out);
    r.on_segment(us(2), &data(2 * MSS, 1460), &mut out);
    r.on_segment(us(3), &data(3 * MSS, 1460), &mut out);
    assert_eq!(
        out.iter().map(|p| p.ack).collect::<Vec<_>>(),
        vec![MSS, MSS, MSS]
    );
    assert_eq!(r.rcv.ooo, vec![(2 * MSS, 4 * MSS)]);
    out.clear();
    r.on_segment(us(4), &data(MSS, 1460), &mut out);
    assert_eq!(out[0].ack, 4 * MSS);
    assert!(r.rcv.ooo.is_empty());
}

#[test]
fn test_delayed_ack_every_second_segment_and_timeout() {
    let mut r = TcpFlow::new(
        0,
        1,
        2,
        TcpConfig {
            delack_count: 2,
            delack_timeout: ms(40),
            ..cfg()
        },
    );
    let mut out = Vec::new();
    r.on_segment(us(1), &data(0, 1460), &mut out);
    assert!(out.is_empty());
    assert_eq!(r.rcv.delack_timer.deadline, us(1) + ms(40));
    r.on_segment(us(2), &data(MSS, 1460), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, 2 * MSS);
    assert!(!r.rcv.delack_timer.armed());
    out.clear();
    r.on_segment(us(3), &data(2 * MSS, 1460), &mut out);
    assert!(out.is_empty());
    r.on_delack(us(3) + ms(40), &mut out);
    assert_eq!(out[0].ack, 3 * MSS);
    // Out-of-order data is ACKed at once even with delayed ACK.
    out.clear();
    r.on_segment(us(5) + ms(40), &data(5 * MSS, 1460), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, 3 * MSS);
}

#[test]
fn test_timer_lazy_rearm_semantics() {
    let mut t = Timer::default();
    t.set(ms(10));
    assert!(t.needs_event());
    t.event_at = ms(10);
    // Deadline moved later: no new event needed; the early event re-arms when it fires.
    t.set(ms(20));
    assert!(!t.needs_event());
    assert!(!t.fire(ms(10)));
    assert!(t.needs_event());
    t.event_at = ms(20);
    // Deadline moved earlier: a new event is needed; the old one becomes stale.
    t.set(ms(15));
    assert!(t.needs_event());
    t.event_at = ms(15);
    assert!(t.fire(ms(15)));
    assert!(!t.fire(ms(20)), "stale event ignored");
    assert!(!t.armed());
}

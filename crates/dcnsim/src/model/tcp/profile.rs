//! TCP stack profiles: the defaults that one real stack or simulator uses, so that a
//! scenario can say "TCP as ns-2 (or ns-3, Linux, FreeBSD, the RFCs) has it" in one key
//! (`tcp.profile`). A key set in the scenario overrides the profile's value.
//!
//! Every value is cited to the file or document that fixes it. Behaviour a profile's stack
//! has and dcnsim does not model is listed in `MISSING` and printed by `dcnsim schema`.

use crate::base::units::SimTime;
use crate::model::tcp::{cc, TcpConfig};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpProfile {
    /// dcnsim's own defaults (no `profile` key): RFC 5681/6582/6298 with the datacenter
    /// values the reproduction scenarios have always used (min RTO 200 ms, IW 2, no delayed ACK).
    Dcnsim,
    Rfc,
    Ns2,
    Ns3,
    Linux,
    FreeBsd,
}

pub const PROFILES: [(&str, TcpProfile); 6] = [
    ("dcnsim", TcpProfile::Dcnsim),
    ("rfc", TcpProfile::Rfc),
    ("ns2", TcpProfile::Ns2),
    ("ns3", TcpProfile::Ns3),
    ("linux", TcpProfile::Linux),
    ("freebsd", TcpProfile::FreeBsd),
];

fn ms(v: u64) -> SimTime {
    SimTime::from_ms(v)
}

impl TcpProfile {
    pub fn parse(s: &str) -> Option<TcpProfile> {
        PROFILES.iter().find(|(n, _)| *n == s).map(|&(_, p)| p)
    }

    pub fn name(self) -> &'static str {
        PROFILES
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("?", |(n, _)| n)
    }

    /// The profile's defaults for a sender/receiver pair with segment size `mss`.
    pub fn config(self, mss: u32) -> TcpConfig {
        let base = TcpConfig {
            mss,
            ..TcpConfig::default()
        };
        match self {
            TcpProfile::Dcnsim => base,
            // The RFCs' own values where they fix one.
            TcpProfile::Rfc => TcpConfig {
                // RFC 5681 §3.1 eq. (1): IW by SMSS (upper bound; 3 segments for 1460 B).
                init_cwnd: if mss > 2190 {
                    2
                } else if mss > 1095 {
                    3
                } else {
                    4
                },
                min_rto: ms(1000),       // RFC 6298 (2.4)
                initial_rto: ms(1000),   // RFC 6298 (2.1)
                max_rto: ms(60_000),     // RFC 6298 (2.5): at least 60 s
                delack_count: 2,         // RFC 5681 §4.2: an ACK at least every second segment
                delack_timeout: ms(500), // RFC 5681 §4.2 / RFC 1122: within 500 ms
                limited_transmit: true,  // RFC 5681 §3.2 / RFC 3042 (SHOULD)
                ..base
            },
            // ns-2.35 `tcl/lib/ns-default.tcl`, Agent/TCP (one-way Newreno, TCPSink).
            TcpProfile::Ns2 => TcpConfig {
                init_cwnd: 2,             // windowInit_ 2
                rwnd: 20 * mss as u64,    // window_ 20 (packets)
                min_rto: ms(200),         // minrto_ 0.2
                max_rto: ms(60_000),      // maxrto_ 60
                initial_rto: ms(3000),    // rtxcur_init_ 3.0
                rtt_tick: ms(10),         // tcpTick_ 0.01 (estimator in ticks, RTO >= 2 ticks)
                delack_count: 1,          // Agent/TCPSink acks every packet
                limited_transmit: true,   // singledup_ 1
                idle_rto_reset: true,     // slow_start_restart_ true, restart_bugfix_ true
                exit_cwnd_ns2: true,      // partial_window_deflation_ 1, exit_recovery_fix_ 0
                whole_segments: true,     // one-way TCP: sendmsg adds ceil(n / packetSize_) packets
                recover_strict: true,     // dupack_action: highest_ack_ > recover_ (bugFix_ true)
                recovery_maxburst: 2,     // NewReno recv: send_much(0, 0, 2) in fast recovery
                ssthresh_from_cwnd: true, // slowdown: ssthresh_ = (int)(windowd() / 2)
                handshake: true,          // syn_ true + delay_growth_ true: a 40-byte first
                // packet, data once it is acked, with cwnd = windowInit_
                sack: false,         // Agent/TCP/Newreno
                timestamps: false,   // timestamps_ false
                abc_limit: 0,        // packet counting: one segment per ACK
                dupack_threshold: 3, // numdupacks_ 3
                ..base
            },
            // ns-3.44 defaults (TcpSocket, TcpSocketBase, RttMeanDeviation attributes).
            TcpProfile::Ns3 => TcpConfig {
                init_cwnd: 10,         // TcpSocket::InitialCwnd 10
                min_rto: ms(1000),     // TcpSocketBase::MinRto 1 s
                initial_rto: ms(1000), // TcpSocket::ConnTimeout 3 s for SYN; RttEstimator
                // InitialEstimation 1 s for data
                max_rto: ms(60_000), // RFC 6298 (2.5) bound; ns-3 keeps backoff below it
                rto_granularity: ms(1), // TcpSocketBase::ClockGranularity 1 ms
                delack_count: 2,     // TcpSocket::DelAckCount 2
                delack_timeout: ms(200), // TcpSocket::DelAckTimeout 200 ms
                limited_transmit: true, // TcpSocketBase::LimitedTransmit true
                sack: true,          // TcpSocketBase::Sack true
                timestamps: true,    // TcpSocketBase::Timestamp true
                handshake: true,     // always a three-way handshake
                rto_reset_on_ack: true, // TcpSocketBase::NewAck recomputes m_rto
                abc_limit: 0,        // TcpNewReno: one segment per ACK in slow start
                ..base
            },
            // Linux (net/ipv4, include/net/tcp.h; sysctl defaults).
            TcpProfile::Linux => TcpConfig {
                init_cwnd: 10,          // TCP_INIT_CWND 10 (RFC 6928)
                min_rto: ms(200),       // TCP_RTO_MIN = HZ/5
                max_rto: ms(120_000),   // TCP_RTO_MAX = 120 s
                initial_rto: ms(1000),  // TCP_TIMEOUT_INIT = 1 s
                rto_granularity: ms(1), // jiffies at HZ = 1000
                delack_count: 2,        // __tcp_ack_snd_check: ACK every 2 full segments
                delack_timeout: ms(40), // TCP_DELACK_MIN 40 ms
                limited_transmit: true, // dupacks leave the pipe (tcp_add_reno_sack)
                sack: true,             // net.ipv4.tcp_sack = 1
                timestamps: true,       // net.ipv4.tcp_timestamps = 1
                rack: true,             // net.ipv4.tcp_recovery = 1 (RACK loss detection)
                tlp: true,              // net.ipv4.tcp_early_retrans = 3 (TLP)
                dsack: true,            // net.ipv4.tcp_dsack = 1 (RFC 2883)
                handshake: true,
                abc_limit: 16, // tcp_slow_start: cwnd += acked (no RFC 3465 L)
                // DCTCP's parameters under this profile: `cc::DctcpConfig::for_profile`.
                ..base
            },
            // FreeBSD 11-13 (sys/netinet/tcp_*.c sysctl defaults).
            TcpProfile::FreeBsd => TcpConfig {
                init_cwnd: 10,           // net.inet.tcp.initcwnd_segments = 10
                min_rto: ms(230),        // net.inet.tcp.rexmit_min 30 ms + rexmit_slop 200 ms
                max_rto: ms(64_000),     // TCPTV_REXMTMAX 64 s
                initial_rto: ms(1000),   // net.inet.tcp.rexmit_initial = 1 s
                rto_granularity: ms(1),  // hz = 1000
                delack_count: 2,         // tcp_delack_enabled: ACK every second segment
                delack_timeout: ms(100), // net.inet.tcp.delacktime = 100 ms
                limited_transmit: true,  // net.inet.tcp.rfc3042 = 1
                sack: true,              // net.inet.tcp.sack.enable = 1
                timestamps: true,        // net.inet.tcp.rfc1323 = 1
                handshake: true,
                abc_limit: 2, // net.inet.tcp.abc_l_var = 2
                // DCTCP's parameters under this profile: `cc::DctcpConfig::for_profile`.
                ..base
            },
        }
    }
}

/// What each profile's stack does that dcnsim does not model (shown by `dcnsim schema`).
pub const MISSING: [(&str, &str); 4] = [
    (
        "ns2",
        "a partial ACK covering the timed packet ends the RTO backoff without an RTT sample",
    ),
    (
        "ns3",
        "PRR recovery (ns-3 default; dcnsim uses RFC 6675 recovery), CUBIC default cc",
    ),
    (
        "linux",
        "PRR, CUBIC default cc, quick-ACK mode, HyStart, D-SACK undo of spurious cuts",
    ),
    ("freebsd", "PRR, NewReno default cc"),
];

/// One row of the profile table: its key and how to read the value from a configuration.
type Row<T> = (&'static str, fn(&TcpConfig) -> T);

/// A table of every profile's values, for `dcnsim schema`; built from `config`, so it
/// cannot disagree with what a run uses.
pub fn profile_table() -> String {
    use std::fmt::Write;
    let cfgs: Vec<TcpConfig> = PROFILES.iter().map(|&(_, p)| p.config(1460)).collect();
    let dur = |t: SimTime| -> String {
        if t.0 == 0 {
            "off".into()
        } else if t.0.is_multiple_of(SimTime::from_ms(1).0) {
            format!("{}ms", t.0 / SimTime::from_ms(1).0)
        } else {
            format!("{}us", t.0 / SimTime::from_us(1).0)
        }
    };
    let durations: [Row<SimTime>; 6] = [
        ("min_rto", |c| c.min_rto),
        ("max_rto", |c| c.max_rto),
        ("initial_rto", |c| c.initial_rto),
        ("rto_granularity", |c| c.rto_granularity),
        ("rtt_tick", |c| c.rtt_tick),
        ("delack_timeout", |c| c.delack_timeout),
    ];
    let numbers: [Row<String>; 5] = [
        ("init_cwnd", |c| c.init_cwnd.to_string()),
        ("delayed_ack", |c| c.delack_count.to_string()),
        ("recovery_maxburst", |c| c.recovery_maxburst.to_string()),
        ("abc_limit", |c| c.abc_limit.to_string()),
        ("rwnd", |c| {
            if c.rwnd == u64::MAX {
                "unlim".into()
            } else {
                c.rwnd.to_string()
            }
        }),
    ];
    let flags: [Row<bool>; 13] = [
        ("limited_transmit", |c| c.limited_transmit),
        ("rack", |c| c.rack),
        ("tlp", |c| c.tlp),
        ("dsack", |c| c.dsack),
        ("handshake", |c| c.handshake),
        ("sack", |c| c.sack),
        ("timestamps", |c| c.timestamps),
        ("idle_rto_reset", |c| c.idle_rto_reset),
        ("exit_cwnd_ns2", |c| c.exit_cwnd_ns2),
        ("rto_reset_on_ack", |c| c.rto_reset_on_ack),
        ("whole_segments", |c| c.whole_segments),
        ("recover_strict", |c| c.recover_strict),
        ("ssthresh_from_cwnd", |c| c.ssthresh_from_cwnd),
    ];
    let mut rows: Vec<(&str, Vec<String>)> = Vec::new();
    for (k, f) in numbers {
        rows.push((k, cfgs.iter().map(f).collect()));
    }
    for (k, f) in durations {
        rows.push((k, cfgs.iter().map(|c| dur(f(c))).collect()));
    }
    for (k, f) in flags {
        let on = |c: &TcpConfig| if f(c) { "on" } else { "off" }.to_string();
        rows.push((k, cfgs.iter().map(on).collect()));
    }
    // The congestion controls' own parameters under each profile, from the registry (a
    // key shared by several controllers is shown once).
    for e in cc::BUILTIN {
        let per_profile: Vec<_> = PROFILES
            .iter()
            .map(|&(_, p)| (e.config)(p).params())
            .collect();
        for (i, (k, _)) in per_profile[0].iter().enumerate() {
            if !rows.iter().any(|(r, _)| r == k) {
                rows.push((k, per_profile.iter().map(|ps| ps[i].1.clone()).collect()));
            }
        }
    }
    let mut s = String::from("tcp.profile defaults (mss = 1460):\n");
    let _ = write!(s, "  {:<29}", "key");
    for (n, _) in PROFILES {
        let _ = write!(s, "{n:>9}");
    }
    s.push('\n');
    for (key, cells) in rows {
        let _ = write!(s, "  {key:<29}");
        for c in cells {
            let _ = write!(s, "{c:>9}");
        }
        s.push('\n');
    }
    s.push_str("  not modelled:\n");
    for (p, what) in MISSING {
        let _ = writeln!(s, "    {p}: {what}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_parses_by_its_name() {
        for (n, p) in PROFILES {
            assert_eq!(TcpProfile::parse(n), Some(p));
            assert_eq!(p.name(), n);
        }
        assert_eq!(TcpProfile::parse("bsd"), None);
    }

    #[test]
    fn dcnsim_profile_is_the_engine_default() {
        assert_eq!(TcpProfile::Dcnsim.config(1460), TcpConfig::default());
    }

    #[test]
    fn rfc_initial_window_follows_rfc5681_by_mss() {
        assert_eq!(TcpProfile::Rfc.config(1460).init_cwnd, 3);
        assert_eq!(TcpProfile::Rfc.config(536).init_cwnd, 4);
        assert_eq!(TcpProfile::Rfc.config(9000).init_cwnd, 2);
    }

    #[test]
    fn profile_table_shows_each_profile_value() {
        let t = profile_table();
        let row = t
            .lines()
            .find(|l| l.trim_start().starts_with("rtt_tick"))
            .unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            cells,
            vec!["rtt_tick", "off", "off", "10ms", "off", "off", "off"]
        );
        let row = t
            .lines()
            .find(|l| l.trim_start().starts_with("min_rto"))
            .unwrap();
        assert!(row.contains("230ms") && row.contains("1000ms"));
    }

    #[test]
    fn profile_table_shows_the_congestion_controls_parameters() {
        let t = profile_table();
        let row = |k: &str| -> Vec<String> {
            let l = t.lines().find(|l| l.split_whitespace().next() == Some(k));
            l.unwrap()
                .split_whitespace()
                .skip(1)
                .map(String::from)
                .collect()
        };
        // Profiles: dcnsim, rfc, ns2, ns3, linux, freebsd (FreeBSD's `cc_dctcp.c`).
        assert_eq!(row("dctcp_alpha_init"), ["1", "1", "1", "1", "1", "0"]);
        assert_eq!(
            row("dctcp_recovery_mode"),
            ["on", "on", "on", "on", "on", "off"]
        );
        assert_eq!(
            row("dctcp_reset_alpha_after_idle"),
            ["off", "off", "off", "off", "off", "on"]
        );
    }
}

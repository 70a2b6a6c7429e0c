//! Whole-scenario tests: invariants (conservation, acked ≤ sent), determinism, and the
//! shape of TCP incast collapse (Devkota 2010, Fig. 8) on short runs.

use crate::helpers::{first_f64, run_with, set};
use dcnsim::output::{Column, Table};
use dcnsim::scenario::{build, load};

const INCAST: &str = r#"
[meta]
id = "test-incast"
[sim]
duration = "2s"
seed = 7
[topology]
kind = "star"
servers = 8
link_rate = "1Gbps"
link_delay = "25us"
switch_buffer = "256KiB"
[tcp]
min_rto = "200ms"
[[apps]]
kind = "incast"
sru = "256KB"
[measure]
silent_link = "sw->client"
silent_threshold = "100ms"
"#;

/// The incast scenario with overrides.
fn run(overrides: &[(&str, &str)]) -> Vec<Table> {
    run_with(INCAST, overrides)
}

fn summary(tables: &[Table], col: &str) -> f64 {
    first_f64(tables, "summary", col)
}

#[test]
fn conservation_and_ack_invariants_hold() {
    for (n, buf) in [("4", "\"32KiB\""), ("16", "\"64KiB\""), ("2", "\"256KiB\"")] {
        let loaded = load(
            INCAST,
            "t",
            &set(&[
                ("topology.servers", n),
                ("topology.switch_buffer", buf),
                ("sim.duration", "\"0.5s\""),
            ]),
        )
        .unwrap();
        let (mut sim, _) = build(&loaded).unwrap();
        sim.start();
        sim.run(&mut |_| true);
        sim.check_conservation()
            .expect("conservation at every port");
        let drops: u64 = sim.net.ports.iter().map(|p| p.stats.drops()).sum();
        // Every packet a host sent was absorbed by a host, dropped, or is still in the network.
        assert_eq!(
            sim.net.injected,
            sim.net.absorbed + drops + sim.net.unroutable + sim.packets_in_network()
        );
        assert_eq!(sim.net.unroutable, 0);
        for f in sim.hosts.flows.iter().map(|f| f.tcp().expect("a TCP flow")) {
            assert!(f.snd.snd_una <= f.snd.snd_max);
            assert!(f.snd.snd_max <= f.snd.app_limit);
            assert!(f.delivered() <= f.snd.snd_max);
            assert!(
                f.snd.snd_una <= f.delivered(),
                "acked bytes never exceed bytes received"
            );
        }
        for p in &sim.net.ports {
            assert!(
                p.stats.max_queue_bytes <= p.limit_bytes,
                "queue never exceeds its buffer"
            );
        }
    }
}

#[test]
fn same_seed_gives_identical_tables() {
    let strip = |mut t: Vec<Table>| {
        for tab in t.iter_mut() {
            tab.columns.retain(|(n, _)| n != "wall_s");
        }
        t
    };
    let a = strip(run(&[
        ("topology.servers", "16"),
        ("topology.switch_buffer", "\"64KiB\""),
    ]));
    let b = strip(run(&[
        ("topology.servers", "16"),
        ("topology.switch_buffer", "\"64KiB\""),
    ]));
    assert_eq!(a, b);
}

#[test]
fn incast_collapses_with_small_buffer_and_many_flows() {
    let few = run(&[
        ("topology.servers", "1"),
        ("topology.switch_buffer", "\"32KiB\""),
    ]);
    let many = run(&[
        ("topology.servers", "32"),
        ("topology.switch_buffer", "\"32KiB\""),
    ]);
    let g_few = summary(&few, "goodput_mbps");
    let g_many = summary(&many, "goodput_mbps");
    // One flow fills the link (payload share of 1 Gb/s is 973 Mb/s).
    assert!(g_few > 900.0 && g_few < 973.4, "{g_few}");
    assert!(g_many < 300.0, "incast collapse expected, got {g_many}");
    assert!(summary(&many, "timeouts") > 0.0);
    assert!(summary(&many, "silent_s") > 0.5);
    assert_eq!(summary(&few, "timeouts"), 0.0);
}

#[test]
fn large_buffer_absorbs_eight_flows() {
    // With the 20-segment window of the Devkota 2010 set-up (ns-2's default `window_`), as in
    // Table I of the thesis (0 silent seconds). With an unlimited window the synchronized
    // bursts grow until they overflow 256 KiB and a timeout can follow (as in ns-3).
    let t = run(&[("tcp.rwnd", "29200")]);
    let g = summary(&t, "goodput_mbps");
    assert!(g > 900.0 && g < 973.4, "{g}");
    assert_eq!(summary(&t, "timeouts"), 0.0);
    let rounds = summary(&t, "rounds");
    // 8 × 256 KB = 16.384 Mb per round at ≤ 973.3 Mb/s payload: at most 118 rounds in 2 s.
    assert!(rounds > 100.0 && rounds <= 118.0, "{rounds}");
}

#[test]
fn bad_scenarios_name_line_and_field() {
    let bad = INCAST.replace("\"1Gbps\"", "\"1Gbs\"");
    let e = load(&bad, "x.toml", &[]).unwrap_err();
    assert_eq!(e.line, Some(10));
    assert_eq!(e.field.as_deref(), Some("topology.link_rate"));
    assert!(e.message.contains("invalid rate \"1Gbs\""), "{e}");
    let e = load(&INCAST.replace("servers = 8", "servers = 0"), "x.toml", &[]).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("topology.servers"));
    assert_eq!(e.line, Some(9));
    let e = load(&INCAST.replace("sru = ", "sruu = "), "x.toml", &[]).unwrap_err();
    assert!(e.message.contains("unknown field `sruu`"), "{e}");
    let e = load(INCAST, "x.toml", &set(&[("apps.3.sru", "1")])).unwrap_err();
    assert!(e.message.contains("out of range"), "{e}");
    let e = load(
        INCAST,
        "x.toml",
        &set(&[("measure.silent_link", "nowhere")]),
    )
    .unwrap_err();
    assert!(e.to_string().contains("unknown port \"nowhere\""), "{e}");
    let e = load("[sim\n", "x.toml", &[]).unwrap_err();
    assert_eq!(e.line, Some(1));
}

#[test]
fn columns_have_equal_lengths() {
    for t in run(&[("topology.servers", "4")]) {
        let lens: Vec<usize> = t.columns.iter().map(|(_, c)| c.len()).collect();
        assert!(lens.windows(2).all(|w| w[0] == w[1]), "table {}", t.name);
        if t.name == "summary" {
            assert!(matches!(t.get("id"), Some(Column::Str(_))));
        }
    }
}

fn flows_f64(tables: &[Table], col: &str) -> f64 {
    first_f64(tables, "flows", col)
}

#[test]
fn tcp_profile_sets_defaults_and_scenario_keys_override_it() {
    // One flow, 100 us RTT. dcnsim's exact estimator: SRTT ~ the RTT. The ns2 profile's
    // tick estimator (tcpTick_ 10 ms): one tick, so SRTT = 10 ms.
    let base = [("topology.servers", "1"), ("sim.duration", "\"0.2s\"")];
    let exact = run(&base);
    assert!(flows_f64(&exact, "srtt_s") < 0.001);
    let mut ns2 = base.to_vec();
    ns2.push(("tcp.profile", "\"ns2\""));
    let t = run(&ns2);
    assert_eq!(flows_f64(&t, "srtt_s"), 0.01);
    // A key in the scenario wins over the profile.
    ns2.push(("tcp.rtt_tick", "\"0s\""));
    assert!(flows_f64(&run(&ns2), "srtt_s") < 0.001);
    // An unknown profile is a one-line error naming the field and the choices.
    let mut p = |_f: f64| true;
    let err = dcnsim::run_text(
        INCAST,
        "test.toml",
        &set(&[("tcp.profile", "\"bsd\"")]),
        &mut p,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("tcp.profile") && err.contains("\"freebsd\""),
        "{err}"
    );
}

#[test]
fn limited_transmit_lowers_timeouts_in_a_small_buffer_incast() {
    // Devkota 2010 incast, 4 flows, 32 KiB, 20-segment window, 2 s: without RFC 3042 the
    // small windows lose their fast retransmits and stall on RTOs.
    let base = [
        ("topology.servers", "4"),
        ("topology.switch_buffer", "\"32KiB\""),
        ("tcp.rwnd", "29200"),
    ];
    let with = run(&base);
    let mut off = base.to_vec();
    off.push(("tcp.limited_transmit", "false"));
    let without = run(&off);
    assert!(
        summary(&with, "timeouts") < summary(&without, "timeouts"),
        "{} vs {}",
        summary(&with, "timeouts"),
        summary(&without, "timeouts")
    );
    assert!(summary(&with, "goodput_mbps") > summary(&without, "goodput_mbps"));
}

#[test]
fn rack_tlp_of_the_linux_profile_replaces_timeouts_by_probes_and_fast_recovery() {
    // Devkota 2010 incast, 8 flows, 64 KiB: the Linux profile with and without RACK-TLP
    // (RFC 8985). Lost retransmissions and tail losses that cost an RTO without it are
    // found by RACK or repaired by a probe.
    let base = [
        ("topology.servers", "8"),
        ("topology.switch_buffer", "\"64KiB\""),
        ("tcp.profile", "\"linux\""),
    ];
    let with = run(&base);
    let mut off = base.to_vec();
    off.push(("tcp.rack", "false"));
    let without = run(&off);
    let (tw, to) = (summary(&with, "timeouts"), summary(&without, "timeouts"));
    assert!(tw < to, "{tw} vs {to}");
    assert!(summary(&with, "goodput_mbps") > summary(&without, "goodput_mbps"));
    // RFC 8985 needs SACK (a profile's RACK-TLP turns off quietly with sack = false) and
    // TLP needs RACK: asking for either without its base is a one-line error.
    let mut p = |_f: f64| true;
    let mut quiet = base.to_vec();
    quiet.push(("tcp.sack", "false"));
    assert!(dcnsim::run_text(INCAST, "t.toml", &set(&quiet), &mut p).is_ok());
    let cases = [
        ("tcp.rack", vec![("tcp.rack", "true")]),
        (
            "tcp.tlp",
            vec![
                ("tcp.sack", "true"),
                ("tcp.rack", "false"),
                ("tcp.tlp", "true"),
            ],
        ),
    ];
    for (field, keys) in cases {
        let e = load(INCAST, "t.toml", &set(&keys)).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
        assert!(e.message.contains("RFC 8985"), "{e}");
    }
}

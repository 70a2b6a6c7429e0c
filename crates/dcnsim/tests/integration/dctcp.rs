//! DCTCP against theory on a short run (docs/validation.md, "DCTCP against theory"): long
//! flows through a 10 Gb/s bottleneck with 100 µs base RTT and step marking at K = 65 packets keep the queue near K with no
//! drops and a busy link; plus scenario-level checks of the ECN/AQM keys.

use crate::helpers::{f64s, port_row, run_with as run, set, table};
use dcnsim::scenario::load;

/// Two hosts on the left send to one host each on the right through swL->swR. Base RTT:
/// 2 × (16 + 18 + 16) µs = 100 µs.
const DUMBBELL: &str = r#"
[sim]
duration = "60ms"
seed = 3
[topology]
kind = "dumbbell"
left = 2
right = 2
link_rate = "10Gbps"
link_delay = "16us"
bottleneck_delay = "18us"
switch_buffer = "2MB"
aqm = { kind = "step", k = "65pkts" }
[tcp]
cc = "dctcp"
min_rto = "10ms"
init_cwnd = 10
[[apps]]
kind = "bulk"
src = "left1"
dst = "right1"
[[apps]]
kind = "bulk"
src = "left2"
dst = "right2"
[measure]
queue_ports = ["swL->swR"]
queue_interval = "10us"
"#;

#[test]
fn dctcp_two_flows_hold_the_queue_near_k_without_drops() {
    let t = run(DUMBBELL, &[]);
    let q = table(&t, "queue");
    let times = f64s(q, "time_s");
    let bytes = f64s(q, "bytes");
    // Skip slow start: the last 50 ms.
    let steady: Vec<f64> = times
        .iter()
        .zip(&bytes)
        .filter(|(t, _)| **t >= 0.010)
        .map(|(_, b)| b / 1500.0)
        .collect();
    let mean = steady.iter().sum::<f64>() / steady.len() as f64;
    assert!(
        (mean - 65.0).abs() <= 0.2 * 65.0,
        "mean queue {mean:.1} packets, K = 65"
    );
    let drops = table(&t, "summary").get_f64("drops").unwrap();
    assert_eq!(drops, 0.0);
    // Utilisation of the bottleneck over the whole run (slow start included).
    let tx = port_row(&t, "swL->swR", "tx_bytes");
    let util = tx * 8.0 / (10e9 * 0.060);
    assert!(util >= 0.95, "utilisation {util:.3}");
    assert!(port_row(&t, "swL->swR", "marks") > 0.0);
    // Both flows are DCTCP: alpha is reported and small but positive in steady state.
    let alpha = f64s(table(&t, "flows"), "alpha");
    let max = steady.iter().cloned().fold(0.0, f64::max);
    let min = steady.iter().cloned().fold(f64::MAX, f64::min);
    eprintln!("queue mean {mean:.1} min {min:.1} max {max:.1} pkts, utilisation {util:.4}, alpha {alpha:?}");
    assert!(alpha.iter().all(|a| *a > 0.0 && *a < 0.5), "{alpha:?}");
    let red = f64s(table(&t, "flows"), "ecn_reductions");
    assert!(red.iter().all(|r| *r > 10.0), "{red:?}");
}

#[test]
fn dctcp_sender_with_standard_receiver_is_stuck_at_two_segments() {
    // docs/models.md §3.5 problem 1: the RFC 3168 receiver echoes ECE until CWR, which a DCTCP
    // sender never sends; ODCTCP sends CWR and keeps a larger window.
    let cwnd_of = |cc: &str| {
        let t = run(
            DUMBBELL,
            &[
                ("tcp.cc", &format!("\"{cc}\"")),
                ("tcp.receiver", "\"standard\""),
                ("sim.duration", "\"20ms\""),
            ],
        );
        f64s(table(&t, "flows"), "cwnd_bytes")
    };
    let dctcp = cwnd_of("dctcp");
    assert!(dctcp.iter().all(|c| *c == 2.0 * 1460.0), "{dctcp:?}");
    let odctcp = cwnd_of("odctcp");
    assert!(odctcp.iter().all(|c| *c > 10.0 * 1460.0), "{odctcp:?}");
}

#[test]
fn red_with_ecn_marks_and_newreno_without_ecn_is_dropped() {
    let red =
        r#"aqm = { kind = "red", min_th = "20pkts", max_th = "60pkts", max_p = 0.1, w_q = 0.002 }"#;
    let text = DUMBBELL.replace(r#"aqm = { kind = "step", k = "65pkts" }"#, red);
    let ecn = run(&text, &[("tcp.cc", "\"newreno\""), ("tcp.ecn", "true")]);
    assert!(port_row(&ecn, "swL->swR", "marks") > 0.0);
    assert_eq!(port_row(&ecn, "swL->swR", "aqm_drops"), 0.0);
    let sent: f64 = f64s(table(&ecn, "flows"), "cwr_sent").iter().sum();
    assert!(sent > 0.0);
    let plain = run(&text, &[("tcp.cc", "\"newreno\"")]);
    assert_eq!(port_row(&plain, "swL->swR", "marks"), 0.0);
    assert!(port_row(&plain, "swL->swR", "aqm_drops") > 0.0);
}

#[test]
fn aqm_and_tcp_keys_are_validated_with_field_names() {
    let e = load(DUMBBELL, "x.toml", &set(&[("topology.aqm.k", "65")])).unwrap_err();
    assert!(e.message.contains("\"65pkts\""), "{e}");
    let e = load(
        DUMBBELL,
        "x.toml",
        &set(&[("topology.aqm.kind", "\"pie\"")]),
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("topology.aqm.kind"));
    let e = load(DUMBBELL, "x.toml", &set(&[("topology.aqm.max_p", "0.5")])).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("topology.aqm.max_p"));
    let e = load(DUMBBELL, "x.toml", &set(&[("tcp.receiver", "\"rfc9999\"")])).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("tcp.receiver"));
    let e = load(DUMBBELL, "x.toml", &set(&[("tcp.ecn", "false")])).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("tcp.ecn"));
    let e = load(DUMBBELL, "x.toml", &set(&[("tcp.dctcp_g", "0")])).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("tcp.dctcp_g"));
    let e = load(
        DUMBBELL,
        "x.toml",
        &set(&[("tcp.dctcp_loss_after_ece", "\"third\"")]),
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("tcp.dctcp_loss_after_ece"));
    assert!(e.message.contains("\"hold\" or \"halve\""), "{e}");
    let e = load(
        DUMBBELL,
        "x.toml",
        &set(&[(
            "topology.aqm_ports",
            "[{ port = \"nowhere\", kind = \"step\" }]",
        )]),
    )
    .unwrap_err();
    assert!(e.message.contains("unknown port"), "{e}");
    // Per-app tables override [tcp]: an app may use another sender and receiver.
    let ok = load(
        DUMBBELL,
        "x.toml",
        &set(&[
            ("apps.1.tcp", "{ cc = \"sack\", ecn = true, receiver = \"dctcp\" }"),
            ("topology.aqm_ports", "[{ port = \"swL->swR\", kind = \"red\", queue = \"instantaneous\", at = \"dequeue\" }]"),
        ]),
    );
    assert!(ok.is_ok(), "{:?}", ok.err());
}

/// DCTCP steady state against the fluid model (Alizadeh et al., SIGCOMM'10 §3.3): with N
/// long flows, W* = (C·RTT + K)/N packets per flow and α ≈ √(2/W*) when W* ≫ 1.
fn steady_state(n: usize) -> (f64, f64, f64, f64, Vec<f64>) {
    let mut text = DUMBBELL
        .replace("left = 2", &format!("left = {n}"))
        .replace("right = 2", &format!("right = {n}"));
    let apps_at = text.find("[[apps]]").unwrap();
    let measure_at = text.find("[measure]").unwrap();
    let mut apps = String::new();
    for i in 1..=n {
        apps.push_str(&format!(
            "[[apps]]\nkind = \"bulk\"\nsrc = \"left{i}\"\ndst = \"right{i}\"\n"
        ));
    }
    text.replace_range(apps_at..measure_at, &apps);
    let t = run(&text, &[]);
    let q = table(&t, "queue");
    let steady: Vec<f64> = f64s(q, "time_s")
        .iter()
        .zip(f64s(q, "bytes"))
        .filter(|(t, _)| **t >= 0.010)
        .map(|(_, b)| b / 1500.0)
        .collect();
    let mean = steady.iter().sum::<f64>() / steady.len() as f64;
    let drops = table(&t, "summary").get_f64("drops").unwrap();
    let util = port_row(&t, "swL->swR", "tx_bytes") * 8.0 / (10e9 * 0.060);
    let bdp_pkts = 10e9 * 100e-6 / (1500.0 * 8.0);
    let w_star = (bdp_pkts + 65.0) / n as f64;
    (
        mean,
        drops,
        util,
        (2.0 / w_star).sqrt(),
        f64s(table(&t, "flows"), "alpha"),
    )
}

#[test]
fn dctcp_matches_the_fluid_model_for_2_and_20_flows() {
    for n in [2usize, 20] {
        let (mean, drops, util, alpha_model, alpha) = steady_state(n);
        let alpha_mean = alpha.iter().sum::<f64>() / alpha.len() as f64;
        eprintln!(
            "N = {n}: queue mean {mean:.1} pkts (K 65), drops {drops}, utilisation {util:.4}, \
             alpha mean {alpha_mean:.3} vs sqrt(2/W*) {alpha_model:.3}"
        );
        assert!(
            (mean - 65.0).abs() <= 0.2 * 65.0,
            "N = {n}: mean queue {mean:.1}"
        );
        assert_eq!(drops, 0.0, "N = {n}");
        assert!(util >= 0.95, "N = {n}: utilisation {util:.3}");
        if n == 2 {
            // W* = 74 packets: the fluid approximation applies.
            assert!(
                (alpha_mean - alpha_model).abs() <= 0.25 * alpha_model,
                "N = 2: {alpha_mean}"
            );
        }
    }
}

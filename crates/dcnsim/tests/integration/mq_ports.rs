//! Multi-queue switch ports end to end (docs/models.md §5): schedulers, per-port vs per-queue
//! marking, TCN at a real port, buffer admission, ping probes, DRR/SFQ selection.

use crate::helpers::{f64s, port_row, run, strs, table};
use dcnsim::output::Table;

/// Star at 1 Gb/s, DCTCP; app 0 = 1 flow in class 0, apps 1.. = `n` flows in class 1.
fn two_services(queues: &str, aqm: &str, n: u32) -> String {
    format!(
        r#"
apps = [
    {{ kind = "bulk", src = "server1", dst = "client", class = 0 }},
    {{ kind = "bulk", src = "server2", dst = "client", class = 1, count = {n} }},
]
[sim]
duration = "300ms"
[topology]
kind = "star"
servers = 2
link_rate = "1Gbps"
link_delay = "25us"
queues = {queues}
{aqm}
[tcp]
cc = "dctcp"
min_rto = "10ms"
"#
    )
}

fn service_shares(t: &[Table]) -> (f64, f64) {
    let g = f64s(table(t, "apps"), "goodput_mbps");
    (g[0], g[1..].iter().sum())
}

#[test]
fn per_port_marking_breaks_dwrr_fairness_and_tcn_keeps_it() {
    let q = r#"{ count = 2, scheduler = "dwrr", quantum = 1500 }"#;
    let (a, b) = service_shares(&run(&two_services(
        q,
        r#"aqm = { kind = "step", k = "30KB" }"#,
        8,
    )));
    // Per-port threshold: the 8-flow service takes well over its half (paper: 670 Mb/s).
    assert!(b > 600.0 && a < 350.0, "per-port: {a} / {b}");
    let q = r#"{ count = 2, scheduler = "dwrr", quantum = 1500, marking = { kind = "tcn", threshold = "240us" } }"#;
    let (a, b) = service_shares(&run(&two_services(q, "", 8)));
    assert!((a - b).abs() < 0.05 * (a + b), "TCN: {a} / {b}");
    assert!(a + b > 900.0, "TCN keeps the link busy: {}", a + b);
}

#[test]
fn queues_table_counts_each_queue() {
    let q = r#"{ count = 2, scheduler = "dwrr", quantum = 1500, marking = { kind = "tcn", threshold = "240us" } }"#;
    let t = run(&two_services(q, "", 2));
    let qt = table(&t, "queues");
    let port = strs(qt, "port");
    let i = port.iter().position(|p| p == "sw->client").unwrap();
    let payload = f64s(qt, "tx_payload_bytes");
    let marks = f64s(qt, "marks");
    let (q0, q1) = (payload[i], payload[i + 1]);
    assert!((q0 - q1).abs() < 0.05 * (q0 + q1), "{q0} vs {q1}");
    assert!(marks[i] > 0.0 && marks[i + 1] > 0.0);
    // Marks of the port equal the sum over its queues.
    assert_eq!(port_row(&t, "sw->client", "marks"), marks[i] + marks[i + 1]);
}

#[test]
fn strict_priority_serves_cbr_first_and_ping_measures_rtt() {
    let text = r#"
[sim]
duration = "200ms"
[topology]
kind = "star"
servers = 3
link_rate = "1Gbps"
link_delay = "25us"
queues = { count = 3, scheduler = "sp_wfq", strict = 1, weights = [1.0, 1.0], marking = { kind = "tcn", threshold = "240us" } }
[tcp]
cc = "dctcp"
[[apps]]
kind = "cbr"
src = "server1"
dst = "client"
rate = "500Mbps"
class = 0
[[apps]]
kind = "bulk"
src = "server2"
dst = "client"
class = 1
[[apps]]
kind = "bulk"
src = "server3"
dst = "client"
class = 2
count = 4
[[apps]]
kind = "ping"
src = "server3"
dst = "client"
class = 2
interval = "1ms"
"#;
    let t = run(text);
    let g = f64s(table(&t, "apps"), "goodput_mbps");
    let q3: f64 = g[2..6].iter().sum();
    assert!((g[0] - 500.0 * 1472.0 / 1500.0).abs() < 5.0, "cbr {}", g[0]);
    assert!((g[1] - q3).abs() < 0.1 * (g[1] + q3), "{} vs {q3}", g[1]);
    let rtt = f64s(table(&t, "pings"), "rtt_s");
    assert!(rtt.len() > 150, "{} pings", rtt.len());
    // Base RTT 100 µs plus a queue held near T = 240 µs.
    let mean = rtt.iter().sum::<f64>() / rtt.len() as f64;
    assert!(mean > 100e-6 && mean < 800e-6, "mean RTT {mean}");
}

#[test]
fn static_per_queue_limit_drops_only_in_its_queue() {
    let q = r#"{ count = 2, scheduler = "dwrr", buffer = "static", limits = ["20KB", "100MB"] }"#;
    let t = run(&two_services(q, "", 2));
    let qt = table(&t, "queues");
    let drops = f64s(qt, "drops");
    let maxb = f64s(qt, "max_bytes");
    let port = strs(qt, "port");
    let i = port.iter().position(|p| p == "sw->client").unwrap();
    assert!(drops[i] > 0.0);
    assert!(maxb[i] <= 20_000.0);
    assert_eq!(drops[i + 1], 0.0);
}

#[test]
fn drr_and_sfq_ports_run_and_dynamic_threshold_shares_a_pool() {
    for q in [
        r#"{ scheduler = "drr", blimit = "64KB" }"#,
        r#"{ scheduler = "sfq", maxqueue = 40 }"#,
        r#"{ scheduler = "sfq", maxqueue = 40, sfq_partition_flows = 4 }"#,
        r#"{ count = 2, scheduler = "dwrr", buffer = "dynamic", alpha = 1.0, pool = "100KB" }"#,
    ] {
        let t = run(&two_services(q, "", 3));
        let s = table(&t, "summary");
        assert!(s.get_f64("goodput_mbps").unwrap() > 800.0, "{q}");
        let maxb = f64s(table(&t, "ports"), "max_queue_bytes");
        if q.contains("dynamic") {
            // Two congested queues on one port, DT α = 1: each holds at most
            // α·B/(1 + 2α) = B/3, the port 2B/3 ≈ 66.7 KB (plus one packet of slack).
            let m = maxb.iter().cloned().fold(0.0, f64::max);
            assert!(m > 60_000.0 && m <= 68_200.0, "{maxb:?}");
        }
    }
}

#[test]
fn bad_queue_keys_are_errors() {
    for (q, what) in [
        (r#"{ scheduler = "fifo" }"#, "scheduler"),
        (
            r#"{ count = 2, scheduler = "dwrr", quanta = [1500] }"#,
            "quanta",
        ),
        (r#"{ buffer = "dynamic" }"#, "pool"),
        (
            r#"{ marking = { kind = "mqecn" }, scheduler = "wfq" }"#,
            "kind",
        ),
        (r#"{ count = 0 }"#, "count"),
    ] {
        let e =
            dcnsim::run_text(&two_services(q, "", 1), "mq.toml", &[], &mut |_| true).expect_err(q);
        assert!(e.to_string().contains(what), "{q}: {e}");
    }
}

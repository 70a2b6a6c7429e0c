//! Leaf-spine builder and ECMP end to end (docs/models.md §8): per-link delays give the stated base
//! RTT, ECMP spreads flows over all spines, switching it off uses one spine only.

use crate::helpers::{f64s, port_row, run, table};
use dcnsim::output::Table;

fn scenario(ecmp: &str) -> String {
    format!(
        r#"
[sim]
duration = "2s"
[topology]
kind = "leafspine"
hosts_per_leaf = 4
leaves = 2
spines = 4
link_rate = "10Gbps"
base_rtt = "85.2us"
host_delay = "80us"
switch_buffer = "300KB"
{ecmp}
[tcp]
cc = "dctcp"
min_rto = "5ms"
initial_rto = "5ms"
[[apps]]
kind = "workload"
pattern = "all-to-all"
workload = "cache"
load = 0.3
count = 300
[[apps]]
kind = "ping"
src = "host1"
dst = "host8"
interval = "100us"
"#
    )
}

fn spine_bytes(t: &[Table]) -> Vec<f64> {
    (1..=4)
        .map(|k| port_row(t, &format!("leaf1->spine{k}"), "tx_bytes"))
        .collect()
}

#[test]
fn base_rtt_and_ecmp_spread() {
    let t = run(&scenario(""));
    // Minimum ping RTT: 85.2 us of propagation + 8 serializations of 64 B at 10 Gb/s.
    let rtt = f64s(table(&t, "pings"), "rtt_s");
    let min = rtt.iter().cloned().fold(f64::INFINITY, f64::min);
    let want = 85.2e-6 + 8.0 * 64.0 * 8.0 / 10e9;
    assert!((min - want).abs() < 1e-9, "min RTT {min} want {want}");
    // Every spine carries inter-leaf traffic.
    let b = spine_bytes(&t);
    assert!(b.iter().all(|&x| x > 0.0), "{b:?}");
    assert_eq!(
        f64s(table(&t, "summary"), "messages_done")[0],
        f64s(table(&t, "summary"), "messages")[0]
    );
}

#[test]
fn without_ecmp_one_spine_carries_everything() {
    let t = run(&scenario("ecmp = false"));
    let b = spine_bytes(&t);
    assert_eq!(b.iter().filter(|&&x| x > 0.0).count(), 1, "{b:?}");
}

//! RoCEv2 queue pairs through the scenario layer (`[roce]`, `transport = "roce"`) on the
//! shipped `scenarios/rdma-incast.toml`: a lossless incast whose flows share the receiver's
//! link, the FCT slowdown of each, what DCQCN changes, and the config errors.

use crate::helpers::{f64s, first_f64, run_file, table};

const FILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scenarios/rdma-incast.toml"
);

fn text() -> String {
    std::fs::read_to_string(FILE).expect("scenarios/rdma-incast.toml")
}

fn run(overrides: &[(&str, &str)]) -> Vec<dcnsim::output::Table> {
    run_file(&text(), FILE, overrides)
}

#[test]
fn without_congestion_control_pfc_shares_the_link_losslessly_and_each_flow_is_n_times_slower() {
    for n in [4usize, 8] {
        let ns = n.to_string();
        let t = run(&[("roce.cc", "\"none\""), ("topology.servers", &ns)]);
        assert_eq!(first_f64(&t, "summary", "drops"), 0.0, "lossless");
        assert_eq!(first_f64(&t, "summary", "delivered_bytes"), n as f64 * 1e6);
        assert!(
            first_f64(&t, "summary", "pause_sent") > 0.0,
            "PFC paused the senders"
        );
        let c = table(&t, "completions");
        let (slow, ideal) = (f64s(c, "slowdown"), f64s(c, "ideal_s"));
        assert_eq!(slow.len(), n);
        // All N at line rate into one link of the same rate: the receiver's link carries
        // N · 1.062 MB (1 000 packets of 1 000 B and 62 B of headers each), so each flow ends
        // (N − 1) · 1.062 MB at 100 Gb/s after its ideal time, within 1 %.
        let rest = (n - 1) as f64 * 1.062e6 * 8.0 / 100e9;
        for (s, i) in slow.iter().zip(&ideal) {
            let want = (i + rest) / i;
            assert!(
                (s / want - 1.0).abs() < 0.01,
                "N = {n}: slowdown {s}, expected {want}"
            );
        }
    }
}

#[test]
fn dcqcn_reacts_to_marks_with_cnps_and_saves_pause_frames() {
    let none = run(&[("roce.cc", "\"none\""), ("topology.servers", "16")]);
    let dcqcn = run(&[("topology.servers", "16")]);
    for t in [&none, &dcqcn] {
        assert_eq!(first_f64(t, "summary", "drops"), 0.0);
        assert_eq!(first_f64(t, "summary", "delivered_bytes"), 16e6);
    }
    let flows = table(&dcqcn, "flows");
    assert!(f64s(flows, "cnps_received").iter().all(|&c| c > 0.0));
    assert!(f64s(flows, "rate_mbps").iter().all(|&r| r < 100_000.0));
    let (p0, p1) = (
        first_f64(&none, "summary", "pause_sent"),
        first_f64(&dcqcn, "summary", "pause_sent"),
    );
    assert!(p1 < p0 / 2.0, "pause frames: {p1} with DCQCN, {p0} without");
    // Without congestion control no CNP moves any rate.
    let f0 = table(&none, "flows");
    assert!(f64s(f0, "rate_mbps").iter().all(|&r| r == 100_000.0));
}

#[test]
fn hpcc_drains_the_first_windows_without_a_pause() {
    // 16 × 1 MB: each queue pair starts at line rate under a one-BDP window (R·T), so the
    // receiver's queue takes at most the 15 windows beyond its link's own; INT then shows
    // the queue and the rates fall before PFC's threshold: no pause, and the link stays
    // busy (the mean slowdown within 5 % of PFC alone, which keeps it full).
    let none = run(&[("roce.cc", "\"none\""), ("topology.servers", "16")]);
    let hpcc = run(&[("roce.cc", "\"hpcc-fork\""), ("topology.servers", "16")]);
    assert_eq!(first_f64(&hpcc, "summary", "drops"), 0.0);
    assert_eq!(first_f64(&hpcc, "summary", "delivered_bytes"), 16e6);
    assert_eq!(first_f64(&hpcc, "summary", "pause_sent"), 0.0);
    assert!(first_f64(&none, "summary", "pause_sent") > 0.0);
    let mean = |t: &[dcnsim::output::Table]| {
        let s = f64s(table(t, "completions"), "slowdown");
        s.iter().sum::<f64>() / s.len() as f64
    };
    let (m0, m1) = (mean(&none), mean(&hpcc));
    assert!(
        m1 / m0 < 1.05,
        "slowdown {m1} with HPCC, {m0} with PFC alone"
    );
    // The data packets carry the INT header (1 000 + 62 + 42 B) and every ACK echoes it.
    let ports = table(&hpcc, "ports");
    let tx = f64s(ports, "tx_bytes");
    let names = crate::helpers::strs(ports, "port");
    let to_client = names.iter().position(|n| n == "sw->client").unwrap();
    assert_eq!(tx[to_client], 16.0 * 1000.0 * 1104.0);
}

#[test]
fn dctcp_on_the_nic_cuts_on_echoed_marks_and_saves_pause_frames() {
    // The HPCC authors' simulator's DCTCP: a step mark at K on the data queue (its
    // KMIN = KMAX, PMAX 1; 300 KB at 100 Gb/s), CE echoed in every ACK, a cut by α/2 once
    // per window.
    let q = "{ count = 2, scheduler = \"sp\", hosts = true, marking = { kind = \"step\", \
             k = \"300KB\", on_queues = [1] } }";
    let none = run(&[("roce.cc", "\"none\""), ("topology.servers", "16")]);
    let dctcp = run(&[
        ("roce.cc", "\"dctcp-fork\""),
        ("topology.servers", "16"),
        ("topology.queues", q),
    ]);
    assert_eq!(first_f64(&dctcp, "summary", "drops"), 0.0);
    assert_eq!(first_f64(&dctcp, "summary", "delivered_bytes"), 16e6);
    // No CNPs (the echo rides on ACKs); every queue pair ended below line rate.
    let flows = table(&dctcp, "flows");
    assert!(f64s(flows, "cnps_received").iter().all(|&c| c == 0.0));
    assert!(f64s(flows, "rate_mbps").iter().all(|&r| r < 100_000.0));
    let (p0, p1) = (
        first_f64(&none, "summary", "pause_sent"),
        first_f64(&dctcp, "summary", "pause_sent"),
    );
    assert!(p1 < p0 / 2.0, "pause frames: {p1} with DCTCP, {p0} without");
}

#[test]
fn hpcc_eta_sets_the_utilisation_the_incast_converges_to() {
    // HPCC drives the bottleneck's normalised in-flight bytes to η (docs/models.md §15): at
    // η = 0.5 the receiver's link runs near half its rate once the first windows have
    // drained, so the 16 × 1 MB incast takes close to twice as long as at the profile's 0.95.
    let mean = |t: &[dcnsim::output::Table]| {
        let s = f64s(table(t, "completions"), "slowdown");
        s.iter().sum::<f64>() / s.len() as f64
    };
    let base = run(&[("roce.cc", "\"hpcc-fork\""), ("topology.servers", "16")]);
    let half = run(&[
        ("roce.cc", "\"hpcc-fork\""),
        ("roce.eta", "0.5"),
        ("topology.servers", "16"),
    ]);
    let ratio = mean(&half) / mean(&base);
    assert!((1.6..2.0).contains(&ratio), "slowdown ratio {ratio}");
    for (cc, eta, want) in [
        (
            "\"dcqcn\"",
            "0.9",
            "is HPCC's target utilisation: not for cc = \"dcqcn\"",
        ),
        (
            "\"hpcc\"",
            "1.5",
            "1.5: expected a utilisation above 0 and at most 1",
        ),
        (
            "\"hpcc-fork\"",
            "0.0",
            "0: expected a utilisation above 0 and at most 1",
        ),
    ] {
        let over = crate::helpers::set(&[("roce.cc", cc), ("roce.eta", eta)]);
        let e = match dcnsim::scenario::load(&text(), FILE, &over) {
            Err(e) => e,
            Ok(l) => dcnsim::scenario::build(&l).err().expect("refused"),
        };
        let msg = e.to_string();
        assert!(msg.contains(want) && msg.contains("eta"), "{eta}: {msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
}

#[test]
fn bad_roce_keys_get_one_line_errors() {
    for (key, value, want) in [
        (
            "roce.cc",
            "\"cubic\"",
            "expected \"dcqcn\", \"dcqcn-fork\", \"timely\", \"timely-fork\", \"swift\", \"hpcc\", \"hpcc-fork\", \"dctcp-fork\" or \"none\"",
        ),
        (
            "roce.recovery",
            "\"sack\"",
            "expected \"go-back-n\" or \"selective-repeat\"",
        ),
        (
            "roce.window",
            "\"big\"",
            "expected \"bdp\", \"rate-bdp\", \"none\" or a positive size",
        ),
        (
            "roce.cnp",
            "\"often\"",
            "expected \"per-ack\" or a duration",
        ),
        ("roce.ack_every", "0", "expected 1 to 1024 packets"),
        (
            "apps.0.transport",
            "\"quic\"",
            "expected \"tcp\" or \"roce\"",
        ),
        (
            "apps.0.srcs",
            "[\"rack*\"]",
            "no host name starts with \"rack\"",
        ),
    ] {
        let over = crate::helpers::set(&[(key, value)]);
        let e = match dcnsim::scenario::load(&text(), FILE, &over) {
            Err(e) => e,
            Ok(l) => dcnsim::scenario::build(&l).err().expect("refused"),
        };
        let msg = e.to_string();
        assert!(msg.contains(want), "{key} = {value}: {msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
}

#[test]
fn timely_and_swift_finish_the_incast_losslessly_with_a_lower_queue_than_none() {
    // 200 ms: the paper's TIMELY falls to its 10 Mb/s floor on the first surge and climbs
    // back by 10 Mb/s per 16 KB segment (docs/models.md §13), far slower than the 5 ms run.
    // The queue at the receiver's port: its peak, and its mean over 100..600 µs (after the
    // line-rate start's surge, before the run without congestion control drains).
    let queue = |cc: &str| {
        let t = run(&[
            ("roce.cc", cc),
            ("topology.servers", "8"),
            ("sim.duration", "\"200ms\""),
            ("measure.queue_ports", "[\"sw->client\"]"),
            ("measure.queue_interval", "\"10us\""),
        ]);
        assert_eq!(first_f64(&t, "summary", "drops"), 0.0, "{cc}: lossless");
        assert_eq!(first_f64(&t, "summary", "delivered_bytes"), 8e6, "{cc}");
        assert_eq!(f64s(table(&t, "completions"), "slowdown").len(), 8, "{cc}");
        let q = table(&t, "queue");
        let (at, bytes) = (f64s(q, "time_s"), f64s(q, "bytes"));
        let mid: Vec<f64> = at
            .iter()
            .zip(&bytes)
            .filter(|(&s, _)| (100e-6..=600e-6).contains(&s))
            .map(|(_, &b)| b)
            .collect();
        let mean = mid.iter().sum::<f64>() / mid.len() as f64;
        let peak = crate::helpers::port_row(&t, "sw->client", "max_queue_bytes");
        (peak, mean)
    };
    let (peak0, mean0) = queue("\"none\"");
    for cc in ["\"timely\"", "\"timely-fork\"", "\"swift\""] {
        let (peak, mean) = queue(cc);
        assert!(peak <= peak0, "{cc}: peak {peak} B, {peak0} B without");
        assert!(
            mean < mean0,
            "{cc}: mean {mean} B at sw->client, {mean0} B without congestion control"
        );
    }
    // Swift's window bounds even the start: no pause, a peak far below the PFC-held one.
    let (peak, _) = queue("\"swift\"");
    assert!(
        peak < peak0 / 4.0,
        "swift: peak {peak} B, {peak0} B without"
    );
}

#[test]
fn swift_takes_its_hop_count_from_the_path_or_from_roce_hops() {
    use dcnsim::model::roce::cc::RoceCc;
    use dcnsim::model::transport::Endpoint;
    let hops = |extra: &[(&str, &str)]| {
        let mut o = vec![("roce.cc", "\"swift\"")];
        o.extend_from_slice(extra);
        let over = crate::helpers::set(&o);
        let l = dcnsim::scenario::load(&text(), FILE, &over).expect("loads");
        let (sim, _) = dcnsim::scenario::build(&l).expect("builds");
        let Endpoint::Roce(f) = &sim.hosts.flows[0] else {
            panic!("a queue pair")
        };
        let RoceCc::Swift(s) = &*f.cc else {
            panic!("Swift")
        };
        // The star's 1 µs links at 100 Gb/s: a base RTT above 4 µs, a window of one BDP.
        assert!(s.cwnd > 4e-6 * 100e9 / 8.0 / 1062.0, "{}", s.cwnd);
        s.cfg.hops
    };
    // server -> sw -> client: one switch.
    assert_eq!(hops(&[]), 1);
    assert_eq!(hops(&[("roce.hops", "3")]), 3);
}

#[test]
fn a_one_bdp_window_keeps_the_incast_below_the_pause_threshold() {
    // Four windows of one base RTT at 100 Gb/s (a few tens of KB each) never fill an input's
    // 400 KB: no pause, where the same incast without a window pauses its senders.
    let over = |w: Option<&'static str>| {
        let mut o = vec![("roce.cc", "\"none\""), ("topology.servers", "4")];
        o.extend(w.map(|w| ("roce.window", w)));
        run(&o)
    };
    let (capped, free) = (over(Some("\"bdp\"")), over(None));
    for t in [&capped, &free] {
        assert_eq!(first_f64(t, "summary", "delivered_bytes"), 4e6);
        assert_eq!(first_f64(t, "summary", "drops"), 0.0);
    }
    assert_eq!(first_f64(&capped, "summary", "pause_sent"), 0.0);
    assert!(first_f64(&free, "summary", "pause_sent") > 0.0);
}

const FABRIC: &str = r#"
[sim]
duration = "50ms"
seed = 3
[topology]
kind = "fattree"
k = 4
link_rate = "100Gbps"
fabric_rate = "100Gbps"
link_delay = "1us"
switch_buffer = "4MB"
pause = { mode = "pfc", hi = "200KB", lo = "180KB" }
queues = { count = 2, scheduler = "sp", hosts = true, marking = { kind = "red", queue = "instantaneous", count = false, min_th = "5KB", max_th = "200KB", max_p = 0.01, gentle = false, on_queues = [1] } }
[roce]
cc = "dcqcn"
[[apps]]
kind = "workload"
pattern = "all-to-all"
workload = "websearch-bytes"
load = 0.3
count = 300
transport = "roce"
"#;

#[test]
fn a_roce_workload_on_a_fat_tree_completes_losslessly_and_no_flow_beats_its_ideal() {
    let t = crate::helpers::run(FABRIC);
    assert_eq!(first_f64(&t, "summary", "drops"), 0.0);
    assert_eq!(first_f64(&t, "summary", "messages_done"), 300.0);
    let c = table(&t, "completions");
    let slow = f64s(c, "slowdown");
    assert_eq!(slow.len(), 300);
    // The ideal is the transfer alone on its path: nothing finishes sooner (to rounding).
    let least = slow.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(least > 1.0 - 1e-9, "a slowdown below 1: {least}");
    // Every flow is a queue pair whose controller set its rate.
    let flows = table(&t, "flows");
    assert!(f64s(flows, "rate_mbps")
        .iter()
        .all(|&r| r > 0.0 && r <= 100_000.0));
    // The data went to queue 1, where marking is on; queue 0 carried the control packets
    // and marked nothing (`on_queues = [1]`).
    let q = table(&t, "queues");
    let (queue, marks, payload) = (
        f64s(q, "queue"),
        f64s(q, "marks"),
        f64s(q, "tx_payload_bytes"),
    );
    let mut data = [0.0; 2];
    for i in 0..queue.len() {
        data[queue[i] as usize] += payload[i];
        if queue[i] == 0.0 {
            assert_eq!(marks[i], 0.0);
        }
    }
    assert_eq!(data[0], 0.0);
    assert!(data[1] > 0.0);
    assert!(marks.iter().sum::<f64>() > 0.0);
}

#[test]
fn fct_at_the_last_ack_and_the_hpcc_simulators_ideal() {
    // One 1 500-byte message (two packets: 1 000 + 500 B of payload) alone on the star:
    // server1 -> sw -> client, 100 Gb/s, 1 µs links; an ACK per packet.
    let one = |fct: &str| {
        run(&[
            ("roce.cc", "\"none\""),
            ("topology.servers", "1"),
            ("apps.0.size", "\"1500B\""),
            ("measure.fct", fct),
        ])
    };
    let tx = |bytes: f64| bytes * 8.0 / 100e9;
    let (d, a) = (one("\"delivery\""), one("\"last-ack\""));
    let span = |t: &[dcnsim::output::Table]| {
        let c = table(t, "completions");
        f64s(c, "end_s")[0] - f64s(c, "start_s")[0]
    };
    // Delivery: the first packet's store and forward, then the second at line rate.
    let delivery = 2.0 * (1e-6 + tx(1062.0)) + tx(562.0);
    assert!(
        (span(&d) - delivery).abs() < 1e-12,
        "{} vs {delivery}",
        span(&d)
    );
    // The last ACK (66 B) leaves the client as the second packet arrives and crosses back.
    let last_ack = delivery + 2.0 * (1e-6 + tx(66.0));
    assert!(
        (span(&a) - last_ack).abs() < 1e-12,
        "{} vs {last_ack}",
        span(&a)
    );
    // The simulator's ideal: two propagation delays each way, an MTU of payload at each
    // hop, the message with a header per packet at the path's rate.
    let ideal = 4e-6 + 2.0 * tx(1000.0) + tx(1500.0 + 2.0 * 62.0);
    let c = table(&a, "completions");
    assert!((f64s(c, "ideal_s")[0] - ideal).abs() < 1e-12);
    assert!((f64s(c, "slowdown")[0] - last_ack / ideal).abs() < 1e-9);
    // Only RoCE apps end at an ACK; an unknown definition is named.
    for (fct, over, want) in [
        (
            "\"last-ack\"",
            ("apps.0.transport", "\"tcp\""),
            "is not transport = \"roce\"",
        ),
        (
            "\"first-byte\"",
            ("roce.cc", "\"none\""),
            "expected \"delivery\" or \"last-ack\"",
        ),
    ] {
        let o = crate::helpers::set(&[("measure.fct", fct), over]);
        let e = match dcnsim::scenario::load(&text(), FILE, &o) {
            Ok(l) => dcnsim::scenario::build(&l).err().expect("refused"),
            Err(e) => e,
        };
        assert!(e.to_string().contains(want), "{e}");
        assert_eq!(e.field.as_deref(), Some("measure.fct"), "{e}");
    }
}

//! Whole-scenario tests of the 802.1Qbb PFC glue (`engine/datapath/l2/pfc.rs`): scenario text in, result tables out.

use crate::base::packet::Packet;
use crate::base::units::SimTime;
use crate::output::{Column, Table};

use super::{col_f64 as col, get, run};
fn col_str(tables: &[Table], table: &str, c: &str) -> Vec<String> {
    match tables
        .iter()
        .find(|t| t.name == table)
        .and_then(|t| t.get(c))
    {
        Some(Column::Str(v)) => v.clone(),
        _ => panic!("{table}.{c} missing"),
    }
}
/// Value of column `c` in the row of `table` where `port` and `priority` match.
fn row(tables: &[Table], table: &str, port: &str, prio: i64, c: &str) -> f64 {
    let ports = col_str(tables, table, "port");
    let pr = col(tables, table, "priority");
    let v = col(tables, table, c);
    (0..ports.len())
        .find(|&i| ports[i] == port && pr[i] == prio as f64)
        .map(|i| v[i])
        .unwrap_or(0.0)
}

/// Nine 1 Gb/s CBR senders (classes alternating 0/1) into one 1 Gb/s receiver, with
/// two-queue DWRR ports on the switch and no buffer limit.
fn nine_to_one(mode: &str) -> String {
    let mut s = format!(
        "[sim]\nduration = \"30ms\"\n[topology]\nkind = \"star\"\nservers = 9\n\
         link_rate = \"1Gbps\"\nlink_delay = \"5us\"\nswitch_buffer = \"unlimited\"\n\
         queues = {{ count = 2, scheduler = \"dwrr\", quanta = [1500, 1500], \
         buffer = \"shared\", limit = \"1GB\" }}\n\
         pause = {{ mode = \"{mode}\", hi = \"130KB\", lo = \"110KB\" }}\n"
    );
    for i in 1..=9 {
        s.push_str(&format!(
            "[[apps]]\nkind = \"cbr\"\nsrc = \"server{i}\"\ndst = \"client\"\nrate = \"1Gbps\"\n\
             packet_size = 1500\nclass = {}\n",
            i % 2
        ));
    }
    s
}

#[test]
fn pfc_makes_a_9_to_1_overload_lossless_on_multi_queue_ports() {
    let t = run(&nine_to_one("pfc"));
    assert_eq!(get(&t, "summary", "drops"), 0.0);
    let sent = get(&t, "summary", "pause_sent");
    assert!(sent >= 9.0, "{sent}");
    assert_eq!(sent, get(&t, "summary", "pause_received"));
    // Every sender gets paused on its own priority (1 for odd servers, 0 for even).
    for i in 1..=9 {
        let port = format!("server{i}->sw");
        let p = (i % 2) as i64;
        assert!(
            row(&t, "pfc_ports", &port, p, "pfc_received") >= 1.0,
            "{port}"
        );
        assert_eq!(row(&t, "pfc_ports", &port, 1 - p, "pfc_received"), 0.0);
        assert!(row(&t, "pfc_ports", &port, p, "paused_s") > 0.01, "{port}");
    }
    // The receiver link stays busy and the switch queue stays bounded: each input holds
    // at most HI + what arrives during one round trip of the PAUSE (< 140 KB).
    let gp = get(&t, "summary", "goodput_mbps");
    assert!(gp > 900.0, "{gp}");
    let maxq = col(&t, "ports", "max_queue_bytes")
        .into_iter()
        .fold(0.0, f64::max);
    assert!(maxq > 9.0 * 100_000.0 && maxq < 9.0 * 140_000.0, "{maxq}");
    // Without PAUSE/PFC, a finite buffer overflows.
    let lossy = run(&nine_to_one("pfc")
        .replace(
            "pause = { mode = \"pfc\", hi = \"130KB\", lo = \"110KB\" }",
            "",
        )
        .replace("limit = \"1GB\"", "limit = \"1000KB\""));
    assert!(get(&lossy, "summary", "drops") > 1000.0);
}

/// The nodes and links of the Atikoglu & Prabhakar part-1 topology: switches A and B, hosts
/// n1 and n2 on A, n3 and n4 on B (`kind = "explicit"` tables, in this node order).
pub(super) fn two_switch_nodes() -> String {
    let mut s = String::new();
    for (n, k) in [("A", "switch"), ("B", "switch")]
        .into_iter()
        .chain(["n1", "n2", "n3", "n4"].map(|n| (n, "host")))
    {
        s.push_str(&format!(
            "[[topology.nodes]]\nname = \"{n}\"\nkind = \"{k}\"\n"
        ));
    }
    for (a, b) in [
        ("n1", "A"),
        ("n2", "A"),
        ("A", "B"),
        ("B", "n3"),
        ("B", "n4"),
    ] {
        s.push_str(&format!("[[topology.links]]\na = \"{a}\"\nb = \"{b}\"\n"));
    }
    s
}

/// Atikoglu & Prabhakar topology with CBR: n1 -> n3 (class 1, the culprit) and n2 -> n4 (class 0, the
/// innocent), 4 Gb/s each over 10 Gb/s links; B -> n3 serves 500 Mb/s from `slow_at`.
fn two_classes(pause: &str, slow: bool) -> String {
    let mut s = String::from(
        "[sim]\nduration = \"30ms\"\n[topology]\nkind = \"explicit\"\nlink_rate = \"10Gbps\"\n\
         link_delay = \"3us\"\nswitch_buffer = \"unlimited\"\n\
         queues = { count = 2, scheduler = \"dwrr\", quanta = [1500, 1500], limit = \"1GB\" }\n",
    );
    s.push_str(pause);
    s.push('\n');
    s.push_str(&two_switch_nodes());
    if slow {
        s.push_str(
            "[[topology.rate_changes]]\nport = \"B->n3\"\nat = \"0ms\"\nrate = \"500Mbps\"\n",
        );
    }
    for (src, dst, class) in [("n1", "n3", 1), ("n2", "n4", 0)] {
        s.push_str(&format!(
            "[[apps]]\nkind = \"cbr\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nrate = \"4Gbps\"\n\
             packet_size = 1500\nclass = {class}\n"
        ));
    }
    s
}

fn app_goodput(t: &[Table], app: usize) -> f64 {
    col(t, "apps", "goodput_mbps")[app]
}

#[test]
fn pfc_pauses_only_the_congested_priority() {
    let pfc = "pause = { mode = \"pfc\" }";
    let base = run(&two_classes(pfc, false));
    let innocent0 = app_goodput(&base, 1);
    // Uncongested: both classes carry their 4 Gb/s (minus UDP/IP headers and start-up).
    assert!(innocent0 > 3800.0 && innocent0 < 4000.0, "{innocent0}");
    assert_eq!(get(&base, "summary", "pause_sent"), 0.0);

    let t = run(&two_classes(pfc, true));
    assert_eq!(get(&t, "summary", "drops"), 0.0);
    let culprit = app_goodput(&t, 0);
    let innocent = app_goodput(&t, 1);
    // The culprit gets the 500 Mb/s service rate (tolerance 3 %: headers, start-up);
    // the innocent keeps its uncongested rate within 1 %.
    assert!(
        (culprit - 500.0 * 1472.0 / 1500.0).abs() < 15.0,
        "{culprit}"
    );
    assert!(
        (innocent - innocent0).abs() < 0.01 * innocent0,
        "{innocent} vs {innocent0}"
    );
    // Only priority 1 was paused: B paused A on priority 1 and A paused n1 on priority 1.
    assert!(row(&t, "pfc_ports", "A->B", 1, "pfc_received") >= 1.0);
    assert!(row(&t, "pfc_ports", "n1->A", 1, "pfc_received") >= 1.0);
    assert!(row(&t, "pfc_ports", "A->B", 1, "paused_s") > 0.02);
    for p in ["A->B", "n1->A", "n2->A"] {
        assert_eq!(row(&t, "pfc_ports", p, 0, "pfc_received"), 0.0, "{p}");
        assert_eq!(row(&t, "pfc_ports", p, 0, "paused_s"), 0.0, "{p}");
    }
    assert_eq!(row(&t, "pfc_ports", "n2->A", 1, "pfc_received"), 0.0);

    // 802.3x PAUSE on the same ports: A->B stops for both classes, the innocent is
    // dragged down to about the culprit's rate (DWRR serves the two queues 1:1).
    let p = run(&two_classes("pause = { mode = \"pause\" }", true));
    assert_eq!(get(&p, "summary", "drops"), 0.0);
    let dragged = app_goodput(&p, 1);
    assert!(dragged < 0.25 * innocent0, "{dragged}");
    assert!(get(&p, "summary", "paused_s") > 0.02);
}

#[test]
fn pfc_runs_are_deterministic() {
    let s = two_classes("pause = { mode = \"pfc\" }", true);
    // Compared as text (a NaN, if any, is not equal to itself). The tables carry no
    // wall-clock time, so two runs compare whole.
    let (a, b) = (run(&s), run(&s));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert!(a.iter().any(|t| t.name == "pfc_ports"));
}

#[test]
fn pfc_mode_is_checked() {
    let e = crate::run_text(
        &two_classes("pause = { mode = \"ppp\" }", false),
        "x.toml",
        &[],
        &mut |_| true,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("x.toml") && e.contains("topology.pause"), "{e}");
    assert!(e.contains("ppp") && e.contains("pfc"), "{e}");
    // QCN with multi-queue ports stays refused, naming the field.
    let e = crate::run_text(&two_classes("qcn = {}", false), "x.toml", &[], &mut |_| {
        true
    })
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("topology.qcn") && e.contains("multi-queue"),
        "{e}"
    );
}
/// h1 -> sw -> h2 at 10 Gb/s; h1's NIC has two strict-priority queues (class 0 first);
/// two 1 Gb/s CBR sources of 1500-B datagrams on h1 (class 0 and class 1, one every
/// 12 us from t = 0). A PFC frame for priority 0 with 1000 quanta (51.2 us at 10 Gb/s)
/// reaches h1 at t = 0. Returns the result tables after `dur`.
fn scripted(dur: &str, prio: Option<u8>) -> Vec<Table> {
    let mut text = format!(
        "[sim]\nduration = \"{dur}\"\n[topology]\nkind = \"explicit\"\n\
         link_rate = \"10Gbps\"\nlink_delay = \"1us\"\npause = {{ mode = \"pfc\" }}\n"
    );
    for (n, k) in [("sw", "switch"), ("h1", "host"), ("h2", "host")] {
        text.push_str(&format!(
            "[[topology.nodes]]\nname = \"{n}\"\nkind = \"{k}\"\n"
        ));
    }
    for (a, b) in [("h1", "sw"), ("sw", "h2")] {
        text.push_str(&format!("[[topology.links]]\na = \"{a}\"\nb = \"{b}\"\n"));
    }
    text.push_str("[[topology.queue_ports]]\nport = \"h1->sw\"\ncount = 2\nscheduler = \"sp\"\n");
    for class in [0, 1] {
        text.push_str(&format!(
            "[[apps]]\nkind = \"cbr\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"1Gbps\"\n\
             packet_size = 1500\nclass = {class}\n"
        ));
    }
    let loaded = crate::scenario::load(&text, "scripted.toml", &[]).expect("loads");
    let (mut sim, info) = crate::scenario::build(&loaded).expect("builds");
    let h1 = sim.node_by_name("h1").unwrap();
    let link = sim.port_by_name("sw->h1").unwrap();
    let frame = Packet::pause(
        (sim.node_by_name("sw").unwrap(), h1),
        crate::model::l2::PAUSE_FRAME_BYTES,
        1000,
        prio,
        SimTime::ZERO,
    );
    let frame = sim.net.packets.put(frame);
    assert!(crate::engine::datapath::l2::receive(
        &mut sim,
        h1,
        frame,
        crate::base::ids::PortId::NONE,
        link
    ));
    sim.start();
    sim.run(&mut |_| true);
    crate::output::collect(&loaded, &sim, &info)
}

fn queue_tx(t: &[Table], port: &str, q: i64) -> f64 {
    let ports = col_str(t, "queues", "port");
    let qs = col(t, "queues", "queue");
    let tx = col(t, "queues", "tx_pkts");
    (0..ports.len())
        .find(|&i| ports[i] == port && qs[i] == q as f64)
        .map(|i| tx[i])
        .expect("queue row")
}

#[test]
fn scripted_pfc_frame_exact_counters() {
    // During the pause (0..51.2 us) queue 0 (priority 0, strict) sends nothing and queue 1
    // is not stalled behind it: its datagrams of t = 0, 12, 24, 36 us leave at once.
    let t = scripted("40us", Some(0));
    assert_eq!(queue_tx(&t, "h1->sw", 0), 0.0);
    assert_eq!(queue_tx(&t, "h1->sw", 1), 4.0);
    assert_eq!(row(&t, "pfc_ports", "h1->sw", 0, "pfc_received"), 1.0);
    assert_eq!(row(&t, "pfc_ports", "h1->sw", 0, "paused_s"), 40e-6);
    assert_eq!(row(&t, "pfc_ports", "h1->sw", 1, "paused_s"), 0.0);
    assert_eq!(get(&t, "summary", "pause_received"), 1.0);
    assert_eq!(get(&t, "summary", "paused_s"), 40e-6);
    // After 100 us: the pause lapsed at exactly 51.2 us (1000 x 512 bit / 10 Gb/s); the 5
    // held datagrams (0..48 us) and those of 60..96 us went out: 9 per queue.
    let t = scripted("100us", Some(0));
    assert_eq!(queue_tx(&t, "h1->sw", 0), 9.0);
    assert_eq!(queue_tx(&t, "h1->sw", 1), 9.0);
    assert_eq!(row(&t, "pfc_ports", "h1->sw", 0, "paused_s"), 51.2e-6);
    let l2 = col(&t, "l2_ports", "paused_s");
    assert_eq!(l2, vec![51.2e-6]);
    // An 802.3x PAUSE on the same (PFC) port stops both queues for 51.2 us: 8
    // priority-times of 40 us in the l2 total, nothing sent.
    let t = scripted("40us", None);
    assert_eq!(queue_tx(&t, "h1->sw", 0), 0.0);
    assert_eq!(queue_tx(&t, "h1->sw", 1), 0.0);
    assert!((get(&t, "summary", "paused_s") - 8.0 * 40e-6).abs() < 1e-15);
}

//! Whole-scenario tests of the dynamic pause threshold with reserve and headroom
//! (`model/l2/pfc_dynamic.rs`, wired in `engine/datapath/l2/`), and of the tables
//! `pause_tree` and `pfc_buffer`.

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

/// (port, priority) of every row of `table`, sorted.
fn keys(t: &[Table], table: &str) -> Vec<(String, i64)> {
    let ports = col_str(t, table, "port");
    let pr = col(t, table, "priority");
    let mut k: Vec<(String, i64)> = ports
        .into_iter()
        .zip(pr)
        .map(|(p, q)| (p, q as i64))
        .collect();
    k.sort();
    k
}

/// Value of column `c` in the row of `table` where `port` and `priority` match.
fn row(t: &[Table], table: &str, port: &str, prio: i64, c: &str) -> f64 {
    let ports = col_str(t, table, "port");
    let pr = col(t, table, "priority");
    let v = col(t, table, c);
    (0..ports.len())
        .find(|&i| ports[i] == port && pr[i] == prio as f64)
        .map(|i| v[i])
        .unwrap_or_else(|| panic!("{table}: no row {port} / {prio}"))
}

/// Nine 1 Gb/s CBR senders (classes alternating 0/1) into one 1 Gb/s receiver through a
/// switch with two-queue DWRR ports and no egress limit; `pause` is the pause table.
fn nine_to_one(pause: &str) -> String {
    let mut s = format!(
        "[sim]\nduration = \"30ms\"\n[topology]\nkind = \"star\"\nservers = 9\n\
         link_rate = \"1Gbps\"\nlink_delay = \"5us\"\nswitch_buffer = \"unlimited\"\n\
         queues = {{ count = 2, scheduler = \"dwrr\", quanta = [1500, 1500], \
         buffer = \"shared\", limit = \"1GB\" }}\npause = {pause}\n"
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

const DYN: &str = "{ mode = \"pfc\", threshold = \"dynamic\", buffer = \"1MB\" }";

#[test]
fn dynamic_threshold_pauses_every_sender_and_loses_nothing() {
    let t = run(&nine_to_one(DYN));
    assert_eq!(get(&t, "summary", "drops"), 0.0);
    assert!(get(&t, "summary", "pause_sent") >= 9.0);
    let gp = get(&t, "summary", "goodput_mbps");
    assert!(gp > 900.0, "{gp}");
    // One pfc_buffer row per sender's input with its priority, and nothing else.
    let want: Vec<(String, i64)> = {
        let mut w: Vec<_> = (1..=9)
            .map(|i| (format!("sw->server{i}"), (i % 2) as i64))
            .collect();
        w.sort();
        w
    };
    assert_eq!(keys(&t, "pfc_buffer"), want);
    // Auto headroom at 1 Gb/s, 5 us, 1500 B: 2·625 + 3000 + 84 + 1024/8 = 4462 B.
    for (port, p) in &want {
        assert_eq!(row(&t, "pfc_buffer", port, *p, "headroom_bytes"), 4462.0);
        assert_eq!(row(&t, "pfc_buffer", port, *p, "drops"), 0.0);
        assert!(row(&t, "pfc_buffer", port, *p, "pauses") >= 1.0);
        let h = row(&t, "pfc_buffer", port, *p, "max_headroom_bytes");
        assert!(h <= 4462.0, "{port}: {h}");
    }
    // The switch holds at most its buffer: 9 senders share 1 MB less reserves and headrooms.
    let maxq = col(&t, "ports", "max_queue_bytes")
        .into_iter()
        .fold(0.0, f64::max);
    assert!(maxq < 1_000_000.0, "{maxq}");
    // The pause tree: the switch paused each sender's port on its priority, first hop.
    let mut tree: Vec<_> = (1..=9)
        .map(|i| (format!("sw->server{i}"), (i % 2) as i64))
        .collect();
    tree.sort();
    assert_eq!(keys(&t, "pause_tree"), tree);
    for i in 1..=9 {
        let port = format!("sw->server{i}");
        let p = (i % 2) as i64;
        assert_eq!(row(&t, "pause_tree", &port, p, "hop"), 0.0);
        assert_eq!(
            row(&t, "pause_tree", &port, p, "frames"),
            row(&t, "pfc_ports", &port, p, "pfc_sent")
        );
        let up = format!("server{i}->sw");
        assert_eq!(
            row(&t, "pause_tree", &port, p, "paused_s"),
            row(&t, "pfc_ports", &up, p, "paused_s")
        );
    }
    let ups = col_str(&t, "pause_tree", "paused_port");
    assert!(ups.iter().all(|u| u.ends_with("->sw")), "{ups:?}");
}

#[test]
fn headroom_too_small_drops_and_counts() {
    // No headroom: what arrives after the pause decision finds no room and is dropped.
    let pause = "{ mode = \"pfc\", threshold = \"dynamic\", buffer = \"1MB\", headroom = 0 }";
    let t = run(&nine_to_one(pause));
    let drops = get(&t, "summary", "drops");
    assert!(drops > 0.0, "{drops}");
    let counted: f64 = col(&t, "pfc_buffer", "drops").iter().sum();
    assert_eq!(counted, drops);
    assert!(col(&t, "pfc_buffer", "max_headroom_bytes")
        .iter()
        .all(|&h| h == 0.0));
}

/// n1 -> n3 (class 1, 4 Gb/s CBR) and n2 -> n4 (class 0) over A -> B; B -> n3 serves
/// 500 Mb/s: B pauses A on priority 1 and A, filling, pauses n1.
fn two_switches(pause: &str) -> String {
    let mut s = format!(
        "[sim]\nduration = \"20ms\"\n[topology]\nkind = \"explicit\"\nlink_rate = \"10Gbps\"\n\
         link_delay = \"3us\"\nswitch_buffer = \"unlimited\"\n\
         queues = {{ count = 2, scheduler = \"dwrr\", quanta = [1500, 1500], limit = \"1GB\" }}\n\
         pause = {pause}\n"
    );
    s.push_str(&super::pfc::two_switch_nodes());
    s.push_str("[[topology.rate_changes]]\nport = \"B->n3\"\nat = \"0ms\"\nrate = \"500Mbps\"\n");
    for (src, dst, class) in [("n1", "n3", 1), ("n2", "n4", 0)] {
        s.push_str(&format!(
            "[[apps]]\nkind = \"cbr\"\nsrc = \"{src}\"\ndst = \"{dst}\"\nrate = \"4Gbps\"\n\
             packet_size = 1500\nclass = {class}\n"
        ));
    }
    s
}

#[test]
fn pause_tree_shows_the_spreading() {
    let t = run(&two_switches(
        "{ mode = \"pfc\", threshold = \"dynamic\", buffer = \"500KB\" }",
    ));
    assert_eq!(get(&t, "summary", "drops"), 0.0);
    assert_eq!(
        keys(&t, "pause_tree"),
        vec![("A->n1".to_string(), 1), ("B->A".to_string(), 1)]
    );
    assert_eq!(row(&t, "pause_tree", "B->A", 1, "hop"), 0.0);
    assert_eq!(row(&t, "pause_tree", "A->n1", 1, "hop"), 1.0);
    assert!(row(&t, "pause_tree", "B->A", 1, "paused_s") > 0.005);
    assert!(row(&t, "pause_tree", "A->n1", 1, "paused_s") > 0.005);
    let ups = col_str(&t, "pause_tree", "paused_port");
    assert!(ups.contains(&"A->B".to_string()) && ups.contains(&"n1->A".to_string()));
    // The innocent's priority was never paused.
    assert!(col(&t, "pfc_buffer", "priority").iter().all(|&p| p == 1.0));
    // 802.3x PAUSE with the dynamic threshold: priority -1, the innocent dragged along.
    let p = run(&two_switches(
        "{ mode = \"pause\", threshold = \"dynamic\", buffer = \"500KB\" }",
    ));
    assert_eq!(get(&p, "summary", "drops"), 0.0);
    assert_eq!(
        keys(&p, "pause_tree"),
        vec![
            ("A->n1".to_string(), -1),
            ("A->n2".to_string(), -1),
            ("B->A".to_string(), -1)
        ]
    );
}

#[test]
fn static_watermarks_write_a_pause_tree_but_no_buffer_table() {
    let t = run(&nine_to_one(
        "{ mode = \"pfc\", hi = \"130KB\", lo = \"110KB\" }",
    ));
    assert!(t.iter().any(|x| x.name == "pause_tree"));
    assert!(!t.iter().any(|x| x.name == "pfc_buffer"));
    assert_eq!(keys(&t, "pause_tree").len(), 9);
}

fn load_err(pause: &str) -> String {
    crate::run_text(&nine_to_one(pause), "x.toml", &[], &mut |_| true)
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_dynamic_keys_are_one_line_errors() {
    for (pause, want) in [
        ("{ threshold = \"dyn\" }", "threshold \"dyn\": expected"),
        (
            "{ threshold = \"dynamic\", alpha_shift = 11 }",
            "alpha_shift 11: expected -3..=10",
        ),
        (
            "{ alpha_shift = 2 }",
            "alpha_shift is a key of threshold = \"dynamic\"",
        ),
        ("{ headroom = \"auto\" }", "headroom is a key of threshold"),
        (
            "{ threshold = \"dynamic\", headroom = \"10KB\", mtu = 9000 }",
            "mtu is used only with headroom = \"auto\"",
        ),
        (
            "{ threshold = \"dynamic\", mtu = 0 }",
            "mtu 0 B: expected 1..65535",
        ),
        (
            "{ threshold = \"dynamic\", buffer = \"100KB\", mode = \"pfc\" }",
            "must exceed the reserves and headrooms",
        ),
        (
            "{ threshold = \"dynamic\", headroom = \"lots\" }",
            "or \"auto\"",
        ),
        (
            "{ alpha_per_rate = \"10Gbps\" }",
            "alpha_per_rate is a key of threshold = \"dynamic\"",
        ),
        (
            "{ priorities = [1] }",
            "priorities is a key of mode = \"pfc\"",
        ),
        (
            "{ mode = \"pfc\", priorities = [] }",
            "priorities: expected at least one priority",
        ),
        (
            "{ mode = \"pfc\", priorities = [1, 8] }",
            "priorities: 8 is not a priority (expected 0..7)",
        ),
    ] {
        let e = load_err(pause);
        assert!(e.contains("x.toml") && e.contains("topology.pause"), "{e}");
        assert!(e.contains(want), "{pause}: {e}");
        assert!(!e.trim_end().contains('\n'), "{e}");
    }
}

#[test]
fn pfc_only_on_its_priorities_and_their_reserves_alone_leave_the_pool() {
    // PFC on priority 1 only: the class-0 senders are never paused and never counted, so
    // the buffer table has rows for the odd (class-1) senders alone; the even ones'
    // packets pile up at the egress without a pause.
    let pause = "{ mode = \"pfc\", threshold = \"dynamic\", buffer = \"1MB\", priorities = [1] }";
    let t = run(&nine_to_one(pause));
    let mut want: Vec<(String, i64)> = (1..=9)
        .step_by(2)
        .map(|i| (format!("sw->server{i}"), 1))
        .collect();
    want.sort();
    assert_eq!(keys(&t, "pfc_buffer"), want);
    assert_eq!(keys(&t, "pause_tree"), want);
    let (pr, paused) = (
        col(&t, "pfc_ports", "priority"),
        col(&t, "pfc_ports", "paused_s"),
    );
    assert!(pr.iter().zip(&paused).all(|(&p, &s)| p == 1.0 || s == 0.0));
    for (port, _) in &want {
        assert!(row(&t, "pfc_buffer", port, 1, "pauses") >= 1.0, "{port}");
    }
    // The same with PFC on every priority pauses the class-0 senders too.
    let all = run(&nine_to_one(DYN));
    assert!(keys(&all, "pfc_buffer").contains(&("sw->server2".to_string(), 0)));
}

#[test]
fn alpha_per_rate_lets_a_faster_input_hold_more_before_it_pauses() {
    // `two_switches`' links are 10 Gb/s: with alpha per rate from 2.5 Gb/s the shift drops
    // from 3 to 1 (10 -> 5 -> 2.5), so B's input from A may hold alpha·S/(1 + alpha) = S/3
    // of the shared pool S before it pauses A, against S/9 with one alpha of 1/8.
    let base = "{ mode = \"pfc\", threshold = \"dynamic\", buffer = \"1MB\" }";
    let per = "{ mode = \"pfc\", threshold = \"dynamic\", buffer = \"1MB\", alpha_per_rate = \"2500Mbps\" }";
    let (t0, t1) = (run(&two_switches(base)), run(&two_switches(per)));
    let peak = |t: &[Table]| row(t, "pfc_buffer", "B->A", 1, "max_shared_bytes");
    assert!(
        peak(&t1) > 2.0 * peak(&t0),
        "{} vs {}",
        peak(&t1),
        peak(&t0)
    );
}

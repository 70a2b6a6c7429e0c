//! Robustness (docs/robustness.md): out-of-range values are refused with the range (`base/limits.rs`),
//! legal but suspicious ones warned about once, and errors name the real field; each
//! message is checked exactly.

use crate::helpers::set;
use dcnsim::scenario::load;

/// A star with two servers and one incast app; `{topo}` adds lines to `[topology]` (line 7
/// on), `{more}` whole tables after the app.
const BASE: &str = r#"[sim]
duration = "10ms"
[topology]
kind = "star"
servers = 2
link_delay = "5us"
{topo}
[[apps]]
kind = "incast"
sru = "10KB"
{more}
"#;

fn scenario(topo: &str, more: &str) -> String {
    let topo = if topo.contains("link_rate") {
        topo.to_string()
    } else {
        format!("link_rate = \"1Gbps\"\n{topo}")
    };
    BASE.replace("{topo}", &topo).replace("{more}", more)
}

fn refused(topo: &str, more: &str) -> String {
    let text = scenario(topo, more);
    let e = load(&text, "x.toml", &[]).expect_err("the scenario should be refused");
    let s = e.to_string();
    assert!(!s.contains('\n') && s.len() <= 200, "{s}");
    s
}

fn warnings(topo: &str, more: &str) -> Vec<String> {
    load(&scenario(topo, more), "x.toml", &[]).unwrap().warnings
}

/// A key that only another kind of topology reads is refused, not ignored (the fuzzer
/// found `leaves = 100000000` accepted in a star).
#[test]
fn keys_of_another_topology_kind_are_refused() {
    for (line, key) in [
        ("leaves = 100000000", "leaves"),
        ("spines = 4", "spines"),
        ("base_rtt = \"10us\"", "base_rtt"),
        ("left = 3", "left"),
        ("bottleneck_rate = \"1Gbps\"", "bottleneck_rate"),
    ] {
        assert_eq!(
            refused(line, ""),
            format!(
                "x.toml: line 8, field topology.{key}: only a {} topology has it (this one \
                 is kind = \"star\")",
                if key.starts_with('b') && key != "base_rtt" || key == "left" {
                    "dumbbell"
                } else {
                    "leafspine"
                }
            )
        );
    }
}

#[test]
fn out_of_range_values_name_the_range() {
    let cases = [
        (
            "link_rate = \"1e30Gbps\"",
            "",
            "x.toml: line 7, field topology.link_rate: \"1e30Gbps\" is out of range: expected 1kbps ..= 10Tbps (limits: rates)",
        ),
        (
            "link_rate = \"0.001bps\"",
            "",
            "x.toml: line 7, field topology.link_rate: \"0.001bps\" is out of range: expected 1kbps ..= 10Tbps (limits: rates)",
        ),
        (
            "switch_buffer = \"99999999999999999999999KiB\"",
            "",
            "x.toml: line 8, field topology.switch_buffer: \"99999999999999999999999KiB\" is out of range: expected 0 ..= 1TiB (limits: sizes), or \"unlimited\"",
        ),
        (
            "queues = { count = 1000000000 }",
            "",
            "x.toml: line 8, field topology.queues.count: \"1000000000\" is out of range: expected 1 ..= 1024 (limits: queues.count)",
        ),
        (
            "queue_limit_pkts = 0",
            "",
            "x.toml: line 8, field topology.queue_limit_pkts: \"0\" is out of range: expected 1 ..= 1000000000 packets (limits: queue_limit_pkts)",
        ),
        (
            "",
            "[measure]\nqueue_interval = \"1ns\"",
            "x.toml: line 13, field measure.queue_interval: 1ns is below 1us (limits: measure intervals)",
        ),
        (
            "",
            "[tcp]\ninit_cwnd = 1000000000",
            "x.toml: line 13, field tcp.init_cwnd: \"1000000000\" is out of range: expected 1 ..= 1000000 segments (limits: tcp.init_cwnd)",
        ),
    ];
    for (topo, more, want) in cases {
        assert_eq!(refused(topo, more), want);
    }
    let long = format!("link_rate = \"{}Gbps\"", "9".repeat(5000));
    let e = refused(&long, "");
    assert!(e.contains("(5004 characters) is out of range"), "{e}");
}

/// The error of the base scenario with `--set` overrides.
fn set_error(sets: &[(&str, &str)]) -> String {
    let text = scenario("", "");
    load(&text, "x.toml", &set(sets)).unwrap_err().to_string()
}

#[test]
fn big_topologies_are_refused_before_anything_is_built() {
    let d = "[sim]\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nleft = 1000000000\nright = 1\nlink_rate = \"1Gbps\"\n[[apps]]\nkind = \"bulk\"\nsrc = \"left1\"\ndst = \"right1\"\n";
    let e = load(d, "d.toml", &[]).unwrap_err().to_string();
    assert_eq!(e, "d.toml: line 5, field topology.left: \"1000000000\" is out of range: expected 1 ..= 99998 hosts on both sides (limits: topology nodes)");
    let e = set_error(&[("topology.servers", "100000")]);
    assert_eq!(e, "x.toml, field topology.servers: \"100000\" is out of range: expected 1 ..= 99998 (limits: topology nodes)");
    let e = set_error(&[("sim.duration", "\"1e7s\"")]);
    assert_eq!(e, "x.toml, field sim.duration: \"1e7s\" is out of range: expected 0s ..= 1000000s (limits: durations) (after applying overrides)");
}

#[test]
fn suspicious_values_warn_once() {
    assert!(warnings("", "").is_empty());
    assert_eq!(
        warnings("switch_buffer = 0", ""),
        ["x.toml: line 8, field topology.switch_buffer: a switch port has a zero buffer: it drops every packet that finds it busy"]
    );
    assert_eq!(
        warnings("switch_buffer = 1", ""),
        [
            "x.toml: line 8, field topology.switch_buffer: a switch port's buffer of 1 bytes holds no 1500-byte frame: it drops every full-size packet that finds it busy",
            "x.toml, field tcp.init_cwnd: the initial window (2920 bytes) is over 1000 x the smallest switch buffer (1 bytes)"
        ]
    );
    assert!(warnings("switch_buffer = 1500", "").is_empty());
    // Two flows (two servers), one warning.
    assert_eq!(
        warnings("", "[tcp]\nrwnd = 0"),
        ["x.toml: line 13, field tcp.rwnd: rwnd = 0: the sender can never send data"]
    );
    assert_eq!(
        warnings("", "[tcp]\ninit_cwnd = 5000"),
        ["x.toml: line 13, field tcp.init_cwnd: init_cwnd = 5000 segments: far above RFC 6928's 10 (warned above 1000)"]
    );
    assert_eq!(
        warnings("switch_buffer = \"1KB\"", "[tcp]\ninit_cwnd = 1000"),
        [
            "x.toml: line 8, field topology.switch_buffer: a switch port's buffer of 1000 bytes holds no 1500-byte frame: it drops every full-size packet that finds it busy",
            "x.toml: line 13, field tcp.init_cwnd: the initial window (1460000 bytes) is over 1000 x the smallest switch buffer (1000 bytes)"
        ]
    );
}

#[test]
fn errors_name_the_real_field() {
    assert_eq!(
        set_error(&[("nosuch.key", "1")]),
        "x.toml, field nosuch.key: unknown field `nosuch`, expected one of `meta`, `sim`, `topology`, `tcp`, `apps`, `measure`, `qcn`, `roce`, `sweep`, `quick`, `report` (after applying overrides)"
    );
    let e2 = set_error(&[("topology.nosuch", "1")]);
    assert!(
        e2.starts_with(
            "x.toml, field topology.nosuch: unknown field `nosuch`, expected one of `kind`,"
        ),
        "{e2}"
    );
    let cases = [
        (
            "[sim]\nduration = \"10ms\"\n[topology]\n[[apps]]\nkind = \"incast\"\nsru = \"1KB\"\n",
            "x.toml: line 3, field topology: missing field `kind`",
        ),
        (
            "[sim]\nduration = \"10ms\"\n[[apps]]\nkind = \"incast\"\nsru = \"1KB\"\n[topology]\n",
            "x.toml: line 6, field topology: missing field `kind`",
        ),
        (
            "[sim]\nduration = \"10ms\"\n",
            "x.toml, field topology: missing field `topology`",
        ),
        (
            "[sim]\nduration = \"10ms\"\n[topology\nkind = \"star\"\n",
            "x.toml: line 3, column 10: TOML syntax error: invalid table header: expected `.`, `]`",
        ),
        (
            "[sim]\nduration = \"10ms\"\n[[apps]] # 400 Mb/s UDP CBR\nkind = \"cbr\"\nrate = = 3\n",
            "x.toml: line 5, column 8: TOML syntax error: invalid string: expected `\"`, `'`",
        ),
    ];
    for (text, want) in cases {
        let got = load(text, "x.toml", &[]).unwrap_err().to_string();
        assert_eq!(got, want);
    }
    // A header with a comment names its table.
    let text =
        "[sim]\nduration = \"10ms\"\n[[apps]] # 400 Mb/s UDP CBR\nkind = \"cbr\"\nrate = 3\n";
    let got = load(text, "x.toml", &[]).unwrap_err();
    assert_eq!(got.field.as_deref(), Some("apps.rate"), "{got}");
}

#[test]
fn memory_above_the_budget_is_refused_with_the_key_to_change() {
    use dcnsim::scenario::load_with_budget;
    let gb = Some(1_000_000_000);
    let mb50 = Some(50_000_000);
    // Routes are O(switches × nodes) on a star: the ports and flows of 2 million servers
    // are what exceed the budget.
    let text = scenario("", "").replace("servers = 2", "servers = 99998");
    let e = load_with_budget(&text, "x.toml", &[], mb50)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("x.toml: line 5, field topology.servers: the run needs about ")
            && e.ends_with(" available (--max-memory, ulimit -v): lower topology.servers"),
        "{e}"
    );
    let samples = "[measure]\nqueue_ports = [\"sw->client\"]\nqueue_interval = \"1us\"";
    let text = scenario("", samples).replace("\"10ms\"", "\"1000s\"");
    let e = load_with_budget(&text, "x.toml", &[], gb)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "x.toml: line 14, field measure.queue_interval: the run needs about 64.0 GB (queue samples 64.0 GB), 1.0 GB available (--max-memory, ulimit -v): lower measure.queue_interval");
    // Half the budget: a warning.
    let text = scenario("", "").replace("servers = 2", "servers = 60000");
    let w = load_with_budget(&text, "x.toml", &[], mb50).map(|x| x.warnings);
    let w = w.unwrap();
    assert!(
        !w.is_empty()
            && w[0].starts_with("x.toml: line 5, field topology.servers: the run needs about ")
            && w[0].ends_with(": over half of it"),
        "{w:?}"
    );
}

#[test]
fn long_runs_are_warned_about() {
    let text = scenario("link_rate = \"100Gbps\"", "").replace("\"10ms\"", "\"100000s\"");
    assert_eq!(
        warnings_of(&text),
        ["x.toml: line 2, field sim.duration: up to 1.0e13 events (6e11 port-bit/s for 100000 s): days of wall time at a few million events per second; shorten sim.duration or use --max-wall"]
    );
}

/// A workload whose load leaves the run without a message is warned about with the gap
/// (the fuzzer's `load = 5e-324` was accepted silently); a normal load is not.
#[test]
fn a_workload_too_light_for_its_run_is_warned_about() {
    let text = |load: &str| {
        scenario("", "").replace(
            "kind = \"incast\"\nsru = \"10KB\"",
            &format!("kind = \"workload\"\nload = {load}\ncount = 10"),
        )
    };
    assert_eq!(
        warnings_of(&text("5e-324")),
        ["x.toml: line 11, field apps.load: app 0 (workload): one message every more than 1e308 s on average, longer than the 0.01 s the run leaves it: the run will likely carry no message"]
    );
    let long = text("0.5").replace("\"10ms\"", "\"1s\"");
    assert_eq!(warnings_of(&long), Vec::<String>::new());
    // 10 ms is shorter than the mean gap at this load (web-search sizes on 1 Gb/s).
    assert_eq!(warnings_of(&text("0.5")).len(), 1);
}

fn warnings_of(text: &str) -> Vec<String> {
    load(text, "x.toml", &[]).unwrap().warnings
}

#[test]
fn max_events_stops_cleanly_and_marks_the_tables_partial() {
    use dcnsim::{run_text_with, RunOptions};
    let text = scenario("link_rate = \"10Gbps\"", "")
        .replace("\"10ms\"", "\"2s\"")
        .replace(
            "kind = \"incast\"\nsru = \"10KB\"",
            "kind = \"bulk\"\nsrc = \"server1\"\ndst = \"client\"",
        );
    let opts = RunOptions {
        max_events: Some(1),
        check: true,
        ..Default::default()
    };
    let out = run_text_with(&text, "x.toml", &[], &opts, &mut |_| true).unwrap();
    let stopped = out.stopped.expect("stopped early");
    assert!(
        stopped.starts_with("max_events: stopped after 1048576 events"),
        "{stopped}"
    );
    let summary = out.tables.iter().find(|t| t.name == "summary").unwrap();
    assert_eq!(summary.get_f64("partial"), Some(1.0));
    let simulated = summary.get_f64("simulated_s").unwrap();
    assert!(simulated > 0.0 && simulated < 2.0, "{simulated}");
    assert_eq!(out.check_failed, None);
}

#[test]
fn check_run_names_the_port_and_the_flow_that_fail() {
    use dcnsim::scenario::build;
    let l = load(&scenario("", ""), "x.toml", &[]).unwrap();
    let (mut sim, _) = build(&l).unwrap();
    sim.start();
    sim.run(&mut |_| true);
    assert_eq!(sim.check_run(), Ok(()));
    sim.net.ports[0].stats.arrived += 1;
    let e = sim.check_run().unwrap_err();
    assert!(e.starts_with("port client->sw: arrived "), "{e}");
    sim.net.ports[0].stats.arrived -= 1;
    sim.net.ports[1].stats.max_queue_bytes = sim.net.ports[1].limit_bytes.saturating_add(1);
    sim.net.ports[1].limit_bytes = 10;
    let e = sim.check_run().unwrap_err();
    assert!(e.starts_with("port sw->client: backlog "), "{e}");
    sim.net.ports[1].limit_bytes = u64::MAX;
    sim.net.ports[1].stats.max_queue_bytes = 0;
    let f = sim.hosts.flows[1].tcp_mut().expect("a TCP flow");
    f.rcv.rcv_nxt = f.snd.snd_max + 1;
    let e = sim.check_run().unwrap_err();
    assert!(e.starts_with("flow 1: snd_una "), "{e}");
}

/// An array where a table is read is refused: serde's derived structs take a sequence as
/// their fields in order, so `measure = []` was read as `[measure]` with its defaults and
/// `sim = ["1s", 7]` as a duration and a seed (the fuzz campaign's audit found 8 such
/// mutants accepted). Checked in the file, in an app, inside a list of tables and after
/// overrides.
#[test]
fn an_array_where_a_table_is_read_is_refused() {
    let expected = "invalid type: array, expected a table";
    let in_file = scenario("queues = []", "");
    assert_eq!(
        load(&in_file, "x.toml", &[]).unwrap_err().to_string(),
        format!("x.toml: line 8, field topology.queues: {expected}")
    );
    let in_app = scenario("", "tcp = []");
    assert_eq!(
        load(&in_app, "x.toml", &[]).unwrap_err().to_string(),
        format!("x.toml, field apps.0.tcp: {expected}")
    );
    for (key, value, field) in [
        ("measure", "[]", "measure"),
        ("topology.qcn", "[]", "topology.qcn"),
        ("sim", "[\"1s\", 7]", "sim"),
        ("apps.0", "[]", "apps.0"),
        ("apps", "[[]]", "apps.0"),
    ] {
        let e = load(&scenario("", ""), "x.toml", &set(&[(key, value)])).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("x.toml, field {field}: {expected} (after applying overrides)"),
            "{key} = {value}"
        );
    }
    // Arrays where the scenario reads arrays stay accepted (pcap ports, a list of apps).
    load(&scenario("", ""), "x.toml", &set(&[("measure.pcap", "[]")])).unwrap();
    let two_apps = "[{ kind = \"incast\", sru = \"1KB\" }, { kind = \"bulk\", src = \"server1\", dst = \"server2\" }]";
    load(&scenario("", ""), "x.toml", &set(&[("apps", two_apps)])).unwrap();
}

/// A fat-tree's `k` is required, even and within the node limit; its keys are refused in
/// another kind of topology.
#[test]
fn a_fattree_k_out_of_range_is_refused_with_the_range() {
    let fattree = |k: &str| {
        let text = format!(
            "[sim]\nduration = \"1ms\"\n[topology]\nkind = \"fattree\"\n{k}\
             link_rate = \"10Gbps\"\n[[apps]]\nkind = \"ping\"\nsrc = \"host1\"\n\
             dst = \"host2\"\n"
        );
        load(&text, "x.toml", &[])
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    let range = "is out of range: expected an even k in 2 ..= 72 (k³/4 hosts and 5k²/4 \
                 switches, at most 100000 nodes; limits: topology nodes)";
    for k in ["0", "3", "74", "4294967295"] {
        assert_eq!(
            fattree(&format!("k = {k}\n")),
            Err(format!("x.toml: line 5, field topology.k: {k} {range}"))
        );
    }
    assert_eq!(
        fattree(""),
        Err("x.toml, field topology.k: a fattree needs `k` (an even port count)".into())
    );
    fattree("k = 2\n").unwrap();
    assert_eq!(
        refused("k = 4", ""),
        "x.toml: line 8, field topology.k: only a fattree topology has it (this one is \
         kind = \"star\")"
    );
}

#[test]
fn progress_is_called_with_zero_before_the_first_event() {
    use dcnsim::{run_text_with, RunOptions};
    // A 10 Gb/s bulk flow for 0.3 s: over a million events, so the engine reports mid-run.
    let text = scenario("link_rate = \"10Gbps\"", "")
        .replace("\"10ms\"", "\"0.3s\"")
        .replace(
            "kind = \"incast\"\nsru = \"10KB\"",
            "kind = \"bulk\"\nsrc = \"server1\"\ndst = \"client\"",
        );
    let opts = RunOptions::default();
    let mut seen = Vec::new();
    let out = run_text_with(&text, "x.toml", &[], &opts, &mut |f| {
        seen.push(f);
        true
    })
    .unwrap();
    assert_eq!(out.stopped, None);
    assert_eq!(seen.first(), Some(&0.0), "{seen:?}");
    assert!(seen.len() >= 2 && seen[1..].iter().all(|&f| f > 0.0 && f <= 1.0));
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    // Stopped at that first call: no event runs, the tables say so.
    let out = run_text_with(&text, "x.toml", &[], &opts, &mut |_| false).unwrap();
    assert_eq!(out.stopped.as_deref(), Some("interrupted"));
    let summary = out.tables.iter().find(|t| t.name == "summary").unwrap();
    assert_eq!(summary.get_f64("partial"), Some(1.0));
    assert_eq!(summary.get_f64("events"), Some(0.0));
}

//! The workload app end to end (docs/models.md §6): Poisson arrival rate from the load, messages
//! queued behind each other on a persistent connection, PIAS classes, the FCT summary.

use crate::helpers::{f64s, run_file, strs, table};

/// A CDF file of message sizes uniform in [1000, 10000] B (mean 5500 B) next to the
/// scenario; returns the scenario file path.
fn setup(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("dcnsim-wl-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("sizes.txt"), "1000 0\n10000 1\n").unwrap();
    dir.join("w.toml").to_string_lossy().into_owned()
}

fn scenario(app: &str, queues: &str) -> String {
    format!(
        r#"
[sim]
duration = "10s"
seed = 3
[topology]
kind = "star"
servers = 4
link_rate = "1Gbps"
link_delay = "10us"
{queues}
[tcp]
cc = "dctcp"
min_rto = "10ms"
initial_rto = "10ms"
[[apps]]
kind = "workload"
cdf_file = "sizes.txt"
{app}
"#
    )
}

#[test]
fn poisson_rate_follows_the_load() {
    // λ = load·C/(8·mean) = 0.4 · 1e9 / (8 · 5500) = 9090.9 /s; 2000 arrivals: the mean gap
    // has a relative standard error of 1/√2000 = 2.2 %; allow 8 %.
    let file = setup("rate");
    let t = run_file(&scenario("load = 0.4\ncount = 2000", ""), &file, &[]);
    let m = table(&t, "messages");
    let start = f64s(m, "start_s");
    assert_eq!(start.len(), 2000);
    let gap = (start[1999] - start[0]) / 1999.0;
    let want = 8.0 * 5500.0 / (0.4 * 1e9);
    assert!((gap / want - 1.0).abs() < 0.08, "gap {gap} want {want}");
    let s = table(&t, "summary");
    assert_eq!(f64s(s, "messages_done")[0], 2000.0);
    // All messages are small: the small bin holds them all, the large bin is empty.
    assert!(f64s(s, "fct_small_mean_s")[0] > 0.0);
    assert!(f64s(s, "fct_large_mean_s")[0].is_nan());
    // The run stops when the last message is delivered.
    let end = f64s(m, "end_s");
    let last = end.iter().cloned().fold(0.0, f64::max);
    assert!((f64s(s, "duration_s")[0] - last).abs() < 1e-9);
    // Completions carry the service.
    let c = table(&t, "completions");
    assert_eq!(f64s(c, "service").len(), 2000);
}

#[test]
fn messages_queue_behind_each_other_on_one_connection() {
    // One server, one connection, load 0.9: messages often arrive while the connection is
    // busy and must wait; each finishes after the previous one, and its FCT counts the wait.
    let file = setup("queue");
    let app = "load = 0.9\ncount = 400\nconnections = 1\nservers = [\"server1\"]";
    let t = run_file(&scenario(app, ""), &file, &[]);
    let m = table(&t, "messages");
    let (st, en) = (f64s(m, "start_s"), f64s(m, "end_s"));
    let mut waited = 0;
    for i in 1..st.len() {
        assert!(
            en[i] >= en[i - 1],
            "message {i} finished before message {}",
            i - 1
        );
        if st[i] < en[i - 1] {
            waited += 1;
            assert!(en[i] - st[i] > en[i - 1] - st[i]);
        }
    }
    assert!(waited > 10, "only {waited} messages waited");
    assert_eq!(table(&t, "summary").get_f64("flows"), Some(1.0));
}

#[test]
fn pias_puts_the_first_bytes_in_the_strict_queue() {
    // Sizes 1000..10000 B with a 4000 B PIAS threshold: the strict queue 0 carries the first
    // ≤ 4 KB (plus one packet) of each message, the service queue 2 the rest, queue 1 nothing.
    let file = setup("pias");
    let app = "load = 0.3\ncount = 300\nservice_classes = [2]\npias_threshold = 4000";
    let q = r#"queues = { count = 3, scheduler = "sp_dwrr", strict = 1, limit = "200KB" }"#;
    let t = run_file(&scenario(app, q), &file, &[]);
    let qs = table(&t, "queues");
    let port = strs(qs, "port");
    let bytes = f64s(qs, "tx_payload_bytes");
    let queue = f64s(qs, "queue");
    let at = |qi: f64| -> f64 {
        (0..port.len())
            .filter(|&i| port[i] == "sw->client" && queue[i] == qi)
            .map(|i| bytes[i])
            .sum()
    };
    let total: f64 = f64s(table(&t, "messages"), "bytes").iter().sum();
    let (q0, q1, q2) = (at(0.0), at(1.0), at(2.0));
    assert_eq!(q1, 0.0);
    assert!(q0 > 0.0 && q2 > 0.0);
    assert!(
        (q0 + q2 - total).abs() / total < 0.02,
        "{q0}+{q2} vs {total}"
    );
    // Expected high-priority share: E[min(size, ~4 KB + 1 segment)] / E[size] ≈ 0.75–0.9.
    let share = q0 / total;
    assert!(share > 0.6 && share < 0.95, "share {share}");
}

#[test]
fn timeouts_are_counted_per_message_and_for_small_ones() {
    // Three servers answer one client through a 6 KB switch port at load 0.9: bursts overflow
    // it and some messages time out (10 ms RTO). A connection carries one message at a time,
    // so each message's count is the connection's RTOs during it: per connection the
    // messages' counts add up to at most the connection's total (RTOs after its last message,
    // e.g. for a lost final ACK, belong to no message). All sizes are ≤ 10 KB, i.e. small.
    let file = setup("timeouts");
    let app = "load = 0.9\ncount = 600\nconnections = 1\n\
               servers = [\"server1\", \"server2\", \"server3\"]";
    let t = run_file(&scenario(app, "switch_buffer = \"6KB\""), &file, &[]);
    let m = table(&t, "messages");
    let (flow, tos) = (f64s(m, "flow"), f64s(m, "timeouts"));
    let flows = table(&t, "flows");
    let (fid, ftos) = (f64s(flows, "flow"), f64s(flows, "timeouts"));
    let total: f64 = tos.iter().sum();
    assert!(total > 5.0, "only {total} message timeouts");
    for (f, ft) in fid.iter().zip(&ftos) {
        let per_msg: f64 = flow
            .iter()
            .zip(&tos)
            .filter(|(x, _)| *x == f)
            .map(|p| p.1)
            .sum();
        assert!(
            per_msg <= *ft,
            "flow {f}: messages {per_msg} > connection {ft}"
        );
    }
    let s = table(&t, "summary");
    assert_eq!(s.get_f64("timeouts_small"), Some(total));
    let with = tos.iter().filter(|&&x| x > 0.0).count();
    assert_eq!(s.get_f64("small_with_timeout"), Some(with as f64));
    // Without the tiny buffer: no drops, no timeouts anywhere.
    let t = run_file(&scenario(app, ""), &file, &[]);
    assert!(f64s(table(&t, "messages"), "timeouts")
        .iter()
        .all(|&x| x == 0.0));
    assert_eq!(table(&t, "summary").get_f64("timeouts_small"), Some(0.0));
}

#[test]
fn services_by_pair_follow_the_tcn_script() {
    // All-to-all over the star's 5 hosts (client, server1..4 in that order), services
    // "websearch" and "cache" fixed per pair as the TCN authors' script assigns them:
    // pair (i → j) has service ((j + 1)·5 + (i + 1)) mod 2. Stopped after 20 ms at load 1.5
    // of 10 Gb/s: ~170 arrivals expected (per pair λ = 1.5·10⁹/(8·mean)/4).
    let file = setup("bypair");
    let app = "load = 1.5\ncount = 100000\npattern = \"all-to-all\"\nservice_by = \"pair\"\n\
               workload = \"websearch\"\nservice_classes = [0, 0]\n\
               service_workloads = [\"websearch\", \"cache\"]";
    let text = scenario(app, "").replace("cdf_file = \"sizes.txt\"\n", "");
    let t = run_file(
        &text,
        &file,
        &[
            ("sim.duration", "\"20ms\""),
            ("topology.link_rate", "\"10Gbps\""),
        ],
    );
    let m = table(&t, "messages");
    let (flow, svc) = (f64s(m, "flow"), f64s(m, "service"));
    let fl = table(&t, "flows");
    let (src, dst) = (strs(fl, "src"), strs(fl, "dst"));
    let index = |name: &str| -> usize {
        match name {
            "client" => 0,
            s => s.trim_start_matches("server").parse().unwrap(),
        }
    };
    let mut count = [0usize; 2];
    for (f, s) in flow.iter().zip(&svc) {
        let (i, j) = (index(&src[*f as usize]), index(&dst[*f as usize]));
        assert_eq!(*s as usize, ((j + 1) * 5 + (i + 1)) % 2, "pair {i}->{j}");
        count[*s as usize] += 1;
    }
    // Pairs of service 0: 8 of 20 (i + j even, i ≠ j, over 0..5), of service 1: 12.
    let rate = |pairs: f64, mean: f64| pairs * 1.5e10 / (8.0 * mean) / 4.0;
    let means = [1.6664e6, 0.9114e6];
    let want = (rate(8.0, means[0]) + rate(12.0, means[1])) * 0.020;
    let got = (count[0] + count[1]) as f64;
    // Poisson count with mean ~170: 4 standard deviations is ~30 %.
    assert!(
        (got / want - 1.0).abs() < 0.3,
        "{got} arrivals, want {want}"
    );
    assert!(count[0] > 0 && count[1] > count[0], "{count:?}");
    // "pair" needs the all-to-all pattern; an unknown value is named.
    for (v, says) in [
        ("\"pair\"", "all-to-all"),
        ("\"flow\"", "\"message\" or \"pair\""),
    ] {
        let text = scenario(&format!("load = 0.5\nservice_by = {v}"), "")
            .replace("cdf_file = \"sizes.txt\"\n", "");
        let e = dcnsim::scenario::load(&text, "x.toml", &[]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("apps.service_by"), "{e}");
        assert!(e.message.contains(says), "{e}");
    }
}

#[test]
fn a_flow_file_replays_its_flows() {
    // The HPCC simulator's flow.txt form: count, then `src dst pg dport size start`, hosts
    // indexed in the all-to-all list (client, server1..4). Out of start order on purpose;
    // the last line is beyond the announced count and is not read.
    let file = setup("flowfile");
    let dir = std::path::Path::new(&file).parent().unwrap();
    std::fs::write(
        dir.join("flows.txt"),
        "3\n2 0 1 100 14600 0.002\n0 3 0 100 1460 0.0005\n1 0 1 100 2920 0.002\n4 1 0 100 99 0\n",
    )
    .unwrap();
    let app = "pattern = \"all-to-all\"\nflows_file = \"flows.txt\"\nstart = \"1ms\"\n\
               service_classes = [0, 1]";
    let text = scenario(app, "").replace("cdf_file = \"sizes.txt\"\n", "");
    let t = run_file(&text, &file, &[]);
    let m = table(&t, "messages");
    let (st, en, by, svc) = (
        f64s(m, "start_s"),
        f64s(m, "end_s"),
        f64s(m, "bytes"),
        f64s(m, "service"),
    );
    assert_eq!(st, vec![0.0015, 0.003, 0.003]);
    assert_eq!(by, vec![1460.0, 14600.0, 2920.0]);
    assert_eq!(svc, vec![0.0, 1.0, 1.0]);
    let fl = table(&t, "flows");
    let (src, dst) = (strs(fl, "src"), strs(fl, "dst"));
    let flow = f64s(m, "flow");
    let ends: Vec<(String, String)> = flow
        .iter()
        .map(|&f| (src[f as usize].clone(), dst[f as usize].clone()))
        .collect();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        ends,
        vec![
            pair("client", "server3"),
            pair("server2", "client"),
            pair("server1", "client")
        ]
    );
    // The lone one-packet flow: two store-and-forward hops of 1500 B at 1 Gb/s and two
    // 10 µs links.
    let fct = en[0] - st[0];
    assert!((fct - (2.0 * 12e-6 + 2.0 * 10e-6)).abs() < 1e-9, "{fct}");
    let s = table(&t, "summary");
    assert_eq!(f64s(s, "messages_done")[0], 3.0);
}

#[test]
fn a_flow_file_is_checked() {
    let file = setup("flowfile-bad");
    let dir = std::path::Path::new(&file).parent().unwrap();
    std::fs::write(dir.join("good.txt"), "1\n0 1 0 100 1000 0\n").unwrap();
    std::fs::write(dir.join("bad.txt"), "1\n0 1 0 100 1000\n").unwrap();
    std::fs::write(dir.join("pg.txt"), "1\n0 1 5 100 1000 0\n").unwrap();
    for (app, says) in [
        (
            "flows_file = \"good.txt\"",
            "needs pattern = \"all-to-all\"",
        ),
        (
            "pattern = \"all-to-all\"\nflows_file = \"bad.txt\"",
            "bad.txt:2: expected 'src dst pg dport size start' (6 fields), found 5",
        ),
        (
            "pattern = \"all-to-all\"\nflows_file = \"pg.txt\"",
            "pg 5 is not the class of a service (service_classes = [0])",
        ),
        (
            "pattern = \"all-to-all\"\nflows_file = \"none.txt\"",
            "none.txt: cannot read",
        ),
    ] {
        let text = scenario(app, "").replace("cdf_file = \"sizes.txt\"\n", "");
        let e = dcnsim::scenario::load(&text, &file, &[]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("apps.flows_file"), "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    // The Poisson keys are legal next to a flow file but unused: each given one is warned of.
    let app = "pattern = \"all-to-all\"\nflows_file = \"good.txt\"\nload = 0.5\ncount = 7";
    let text = scenario(app, "").replace("cdf_file = \"sizes.txt\"\n", "");
    let w = dcnsim::scenario::load(&text, &file, &[]).unwrap().warnings;
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].contains("apps.load") && w[0].contains("`load` is not used with `flows_file`"),
        "{w:?}"
    );
    assert!(w[1].contains("`count` is not used"), "{w:?}");
}

#[test]
fn incast_events_ride_on_the_arrivals() {
    // All-to-all over the star's 5 hosts at 1 Gb/s, 400 background messages at load 0.3,
    // and incast events of 3 senders × 12 345 B taking 10 % of the 5 hosts' edge capacity:
    // λ = 0.1 · 5e9 / (8 · 3 · 12 345) = 1 687.6 events/s.
    let file = setup("incast");
    let bg = "pattern = \"all-to-all\"\nload = 0.3\ncount = 400";
    let base = run_file(&scenario(bg, ""), &file, &[]);
    let app = format!("{bg}\nincast = {{ senders = 3, bytes = 12345, load = 0.1 }}");
    let t = run_file(&scenario(&app, ""), &file, &[]);
    let (m0, m) = (table(&base, "messages"), table(&t, "messages"));
    let (st, by) = (f64s(m, "start_s"), f64s(m, "bytes"));
    let fl = table(&t, "flows");
    let (src, dst) = (strs(fl, "src"), strs(fl, "dst"));
    let flow = f64s(m, "flow");
    // The background messages are the same ones, with or without the incast events.
    let bg_start: Vec<f64> = st
        .iter()
        .zip(&by)
        .filter(|(_, &b)| b != 12345.0)
        .map(|(&s, _)| s)
        .collect();
    assert_eq!(bg_start, f64s(m0, "start_s"));
    // Incast messages come in threes: same instant, same receiver, distinct senders.
    let inc: Vec<usize> = (0..st.len()).filter(|&i| by[i] == 12345.0).collect();
    assert_eq!(inc.len() % 3, 0);
    for g in inc.chunks(3) {
        let f: Vec<usize> = g.iter().map(|&i| flow[i] as usize).collect();
        assert!(g.iter().all(|&i| st[i] == st[g[0]]));
        assert!(f.iter().all(|&x| dst[x] == dst[f[0]]));
        assert!(f.iter().all(|&x| src[x] != dst[x]));
        assert!(src[f[0]] != src[f[1]] && src[f[1]] != src[f[2]] && src[f[0]] != src[f[2]]);
    }
    // Events over the background's span: Poisson count, 4 standard deviations.
    let span = bg_start.last().unwrap() - 0.0;
    let want = 1687.6 * span;
    let got = (inc.len() / 3) as f64;
    assert!(
        (got - want).abs() < 4.0 * want.sqrt() + 1.0,
        "{got} events, want {want}"
    );
    assert!(got > 10.0, "{got}");
    // Every message finished before the run ended.
    let s = table(&t, "summary");
    assert_eq!(f64s(s, "messages_done")[0], st.len() as f64);
    // Checked: senders below the host count, all-to-all only.
    for (app, says) in [
        (
            format!("{bg}\nincast = {{ senders = 5, bytes = 1, load = 0.1 }}"),
            "expected 1..4",
        ),
        (
            "load = 0.3\nincast = { senders = 2, bytes = 1, load = 0.1 }".to_string(),
            "all-to-all",
        ),
        (
            format!("{bg}\nincast = {{ senders = 2, bytes = 1, load = 2 }}"),
            "(0, 1]",
        ),
    ] {
        let e = dcnsim::scenario::load(&scenario(&app, ""), &file, &[]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("apps.incast"), "{e}");
        assert!(e.message.contains(says), "{e}");
    }
}

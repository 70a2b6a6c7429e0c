//! The typed `[[apps]]` tables: a key of another kind, a missing required key and a bad value
//! are each a one-line error naming the file, the line and the field.

use crate::helpers::set;
use dcnsim::scenario::load;
use dcnsim::ScenarioError;

/// A star with two servers; `{app}` is replaced by the body of one `[[apps]]` table (line 9
/// is its first key).
const TCP: &str = "\n[apps.tcp]\nmss = 1000";
const BASE: &str = r#"[sim]
duration = "10ms"
[topology]
kind = "star"
servers = 2
link_rate = "1Gbps"
link_delay = "5us"
[[apps]]
{app}
"#;

fn err(app: &str) -> ScenarioError {
    let text = BASE.replace("{app}", app);
    load(&text, "x.toml", &[]).expect_err("the scenario should be refused")
}

#[test]
fn every_kind_loads_with_its_own_keys() {
    let apps = [
        "kind = \"incast\"\nsru = \"10KB\"\nrequest_delay = \"1us\"",
        "kind = \"bulk\"\nsrc = \"server1\"\ndst = \"client\"\ncount = 2",
        "kind = \"flows\"\nsrcs = [\"server1\", \"server2\"]\ndst = \"client\"\nstagger = \"1ms\"",
        "kind = \"mix\"\nsrcs = [\"server1\"]\ndsts = [\"client\"]\ncount = 3\nsize_cdf = [[1000.0, 0.0], [2000.0, 1.0]]\ninterarrival_cdf = [[0.001, 0.0], [0.002, 1.0]]",
        "kind = \"transactions\"\nsrc = \"server1\"\ndst = \"client\"\nsize = \"10KB\"\nrate = \"10Mbps\"",
        "kind = \"workload\"\nload = 0.5\ncount = 10",
    ];
    for app in apps {
        let text = BASE.replace("{app}", &format!("{app}{TCP}"));
        load(&text, "x.toml", &[]).unwrap_or_else(|e| panic!("{app}: {e}"));
    }
    // The UDP kinds have no `[apps.tcp]`.
    for app in [
        "kind = \"cbr\"\nsrc = \"server1\"\ndst = \"client\"\nrate = \"1Mbps\"",
        "kind = \"ping\"\nsrc = \"server1\"\ndst = \"client\"",
    ] {
        let text = BASE.replace("{app}", app);
        load(&text, "x.toml", &[]).unwrap_or_else(|e| panic!("{app}: {e}"));
    }
}

#[test]
fn a_key_of_another_kind_is_named_with_its_line() {
    // `rate` is a cbr / transactions key.
    let e = err("kind = \"incast\"\nsru = \"10KB\"\nrate = \"1Gbps\"");
    assert_eq!(e.line, Some(11), "{e}");
    assert_eq!(e.field.as_deref(), Some("apps.rate"), "{e}");
    assert!(
        e.message
            .starts_with("unknown field `rate` for kind \"incast\": expected one of `client`"),
        "{e}"
    );
    // `stagger` belongs to "flows", not "mix"; the key order does not matter.
    let e = err("count = 3\nstagger = \"1ms\"\nkind = \"mix\"");
    assert_eq!(
        (e.line, e.field.as_deref()),
        (Some(10), Some("apps.stagger")),
        "{e}"
    );
    assert!(e.message.contains("for kind \"mix\""), "{e}");
    // UDP kinds take no `tcp` table.
    let e = err(&format!(
        "kind = \"cbr\"\nsrc = \"server1\"\ndst = \"client\"\nrate = \"1Mbps\"{TCP}"
    ));
    assert_eq!(
        (e.line, e.field.as_deref()),
        (Some(13), Some("apps.tcp")),
        "{e}"
    );
    assert!(
        e.message
            .starts_with("unknown field `tcp` for kind \"cbr\""),
        "{e}"
    );
    // An unknown key of the `tcp` table is the tcp table's, not the kind's.
    let e = err("kind = \"bulk\"\nsrc = \"server1\"\ndst = \"client\"\n[apps.tcp]\nmsss = 3");
    assert_eq!(e.field.as_deref(), Some("apps.tcp.msss"), "{e}");
    assert!(
        e.message
            .starts_with("unknown field `msss`, expected one of `cc`"),
        "{e}"
    );
}

#[test]
fn a_bad_value_names_its_key_and_line() {
    let e = err("kind = \"incast\"\nsru = \"10QB\"");
    assert_eq!(
        (e.line, e.field.as_deref()),
        (Some(10), Some("apps.sru")),
        "{e}"
    );
    assert!(e.message.contains("\"10QB\""), "{e}");
    let e = err("kind = \"cbr\"\nsrc = \"server1\"\ndst = \"client\"\nrate = 5");
    assert_eq!(
        (e.line, e.field.as_deref()),
        (Some(12), Some("apps.rate")),
        "{e}"
    );
    // Inside `[apps.tcp]`.
    let e = err("kind = \"bulk\"\nsrc = \"server1\"\ndst = \"client\"\n[apps.tcp]\nmss = \"x\"");
    assert_eq!(
        (e.line, e.field.as_deref()),
        (Some(13), Some("apps.tcp.mss")),
        "{e}"
    );
    // An inline entry (at the top, before any table header).
    let text = format!(
        "apps = [{{ kind = \"ping\", src = \"server1\" }},\n  {{ kind = \"ping\", src = \"server1\", dst = \"client\", interval = 3 }}]\n{}",
        BASE.replace("[[apps]]\n{app}\n", "")
    );
    let e = load(&text, "x.toml", &[]).unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("a duration string"), "{e}");
    // An unknown kind, and no kind.
    let e = err("kind = \"incasst\"\nsru = 1");
    assert_eq!(
        (e.line, e.field.as_deref()),
        (Some(9), Some("apps.kind")),
        "{e}"
    );
    assert!(
        e.message
            .contains("unknown variant `incasst`, expected one of `incast`"),
        "{e}"
    );
    let e = err("sru = 1");
    assert!(e.message.contains("missing field `kind`"), "{e}");
}

#[test]
fn a_missing_required_key_is_named() {
    let cases = [
        ("kind = \"incast\"", "apps.sru", "app 0 (incast) needs `sru`"),
        ("kind = \"bulk\"\ndst = \"client\"", "apps.src", "app 0 (bulk) needs `src`"),
        ("kind = \"bulk\"\nsrc = \"server1\"", "apps.dst", "app 0 (bulk) needs `dst`"),
        (
            "kind = \"cbr\"\nsrc = \"server1\"\ndst = \"client\"",
            "apps.rate",
            "app 0 (cbr) needs `rate`",
        ),
        ("kind = \"ping\"\ndst = \"client\"", "apps.src", "app 0 (ping) needs `src`"),
        ("kind = \"ping\"\nsrc = \"server1\"", "apps.dst", "app 0 (ping) needs `dst`"),
        (
            "kind = \"transactions\"\nsrc = \"server1\"\ndst = \"client\"\nsize = \"1KB\"",
            "apps.rate",
            "app 0 (transactions) needs `rate`",
        ),
        (
            "kind = \"transactions\"\nsrc = \"server1\"\ndst = \"client\"\nrate = \"1Mbps\"",
            "apps.size",
            "app 0 (transactions) needs a finite `size`",
        ),
        ("kind = \"flows\"\ndst = \"client\"", "apps.srcs", "app 0 (flows) needs `srcs`"),
        ("kind = \"flows\"\nsrc = \"server1\"", "apps.dst", "app 0 (flows) needs `dst`"),
        (
            "kind = \"mix\"\nsrc = \"server1\"\ndst = \"client\"\nsize_cdf = [[1.0, 1.0]]\ninterarrival_cdf = [[1.0, 1.0]]",
            "apps.count",
            "app 0 (mix) needs `count`",
        ),
        (
            "kind = \"mix\"\nsrc = \"server1\"\ndst = \"client\"\ncount = 1\ninterarrival_cdf = [[1.0, 1.0]]",
            "apps.size_cdf",
            "app 0 (mix) needs `size_cdf`",
        ),
        ("kind = \"workload\"", "apps.load", "app 0 (workload): needs `load`"),
    ];
    for (app, field, msg) in cases {
        let e = err(app);
        assert_eq!(e.field.as_deref(), Some(field), "{app}: {e}");
        assert!(e.message.contains(msg), "{app}: {e}");
        assert!(!e.to_string().contains('\n'), "{e}");
    }
}

#[test]
fn overrides_reach_the_typed_tables() {
    let text = BASE.replace("{app}", "kind = \"incast\"\nsru = \"10KB\"");
    let l = load(&text, "x.toml", &set(&[("apps.0.sru", "\"20KB\"")])).unwrap();
    match &l.scenario.apps[0] {
        dcnsim::scenario::AppCfg::Incast(c) => assert_eq!(c.sru.map(|s| s.0 .0), Some(20_000)),
        other => panic!("{other:?}"),
    }
    // A key of another kind set by an override: no line (the text is not the file's).
    let e = load(&text, "x.toml", &set(&[("apps.0.rate", "\"1Gbps\"")])).unwrap_err();
    assert_eq!(
        (e.line, e.field.as_deref()),
        (None, Some("apps.rate")),
        "{e}"
    );
    assert!(e.message.contains("for kind \"incast\""), "{e}");
    assert!(e.message.ends_with("(after applying overrides)"), "{e}");
}

#[test]
fn aqm_and_marking_list_their_keys_as_before() {
    // `aqm_tables!` declares both tables from one list of the step/RED keys; the errors
    // still list each table's keys in the order they had as two hand-written structs.
    let text = BASE.replace("{app}", "kind = \"incast\"\nsru = \"10KB\"");
    let aqm = text.replace(
        "link_delay = \"5us\"\n",
        "link_delay = \"5us\"\naqm = { kind = \"red\", threshold = \"1us\" }\n",
    );
    let e = load(&aqm, "x.toml", &[]).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("topology.aqm"), "{e}");
    assert!(e.message.ends_with(
        "expected one of `kind`, `port`, `at`, `k`, `min_th`, `max_th`, `max_p`, `w_q`, `gentle`, `wait`, `count`, `queue`, `mean_pkt_size`, `per_rate`"
    ), "{e}");
    let mark = text.replace(
        "link_delay = \"5us\"\n",
        "link_delay = \"5us\"\nqueues = { marking = { kind = \"red\", port = \"x\" } }\n",
    );
    let e = load(&mark, "x.toml", &[]).unwrap_err();
    assert!(e.message.ends_with(
        "expected one of `kind`, `at`, `k`, `min_th`, `max_th`, `max_p`, `w_q`, `gentle`, `wait`, `count`, `queue`, `mean_pkt_size`, `per_rate`, `threshold`, `t_min`, `t_max`, `p_max`, `target`, `interval`, `ecn`, `port_thresh`, `beta`, `dq_thresh`, `epsilon`, `rtt`, `lambda`, `on_queues`"
    ), "{e}");
}

//! Whole-scenario tests of the multi-queue port (`engine/net/mq_port.rs`): scenario text in, result tables out.

use crate::output::Column;

/// Every result table of the run, rendered (wall time removed).
fn run(overrides: &[(&str, &str)], pass_through: bool) -> String {
    let text = include_str!("../../../../scenarios/tcn-fig10.toml");
    let mut ov: Vec<(String, String)> = vec![
        ("topology.hosts_per_leaf".into(), "3".into()),
        ("topology.leaves".into(), "3".into()),
        ("topology.spines".into(), "2".into()),
        ("apps.0.count".into(), "60".into()),
        ("apps.0.load".into(), "0.8".into()),
    ];
    ov.extend(
        overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let loaded = crate::scenario::load(text, "tcn-fig10.toml", &ov).unwrap();
    let (mut sim, info) = crate::scenario::build(&loaded).unwrap();
    sim.net.mq_pass_through = pass_through;
    sim.start();
    sim.run(&mut |_| true);
    sim.check_conservation().expect("packet conservation");
    let mut out = String::new();
    for t in crate::output::collect(&loaded, &sim, &info) {
        for (name, col) in &t.columns {
            let v = match col {
                Column::F64(v) => format!("{v:?}"),
                Column::I64(v) => format!("{v:?}"),
                Column::OptI64(v) => format!("{v:?}"),
                Column::Str(v) => format!("{v:?}"),
            };
            out.push_str(&format!("{}.{name} = {v}\n", t.name));
        }
    }
    out
}

/// The idle-port shortcut must not change a single result, for every scheduler and
/// marking it applies to (and the ones it does not).
#[test]
fn pass_through_matches_the_queued_path() {
    let cases: [&str; 7] = [
        r#"{ count = 8, scheduler = "sp_dwrr", strict = 1, quantum = 1500, limit = "300KB", marking = { kind = "tcn", threshold = "78us" } }"#,
        r#"{ count = 8, scheduler = "sp_dwrr", strict = 1, quantum = 1500, limit = "300KB", marking = { kind = "step", k = "65pkts" } }"#,
        r#"{ count = 8, scheduler = "sp_dwrr", strict = 1, quantum = 1500, limit = "300KB", marking = { kind = "red", min_th = "20pkts", max_th = "60pkts", at = "dequeue" } }"#,
        r#"{ count = 8, scheduler = "sp", limit = "300KB", marking = { kind = "codel", target = "20us", interval = "200us" } }"#,
        r#"{ count = 8, scheduler = "dwrr", quantum = 1000, buffer = "dynamic", pool = "1MB", marking = { kind = "dqrate" } }"#,
        r#"{ count = 8, scheduler = "sp_dwrr", strict = 1, quantum = 1500, limit = "300KB", port_marking = { kind = "step", k = "65pkts", at = "dequeue" } }"#,
        r#"{ count = 8, scheduler = "sp_wfq", strict = 1, limit = "300KB", marking = { kind = "tcn", threshold = "78us" } }"#,
    ];
    for q in cases {
        let a = run(&[("topology.queues", q)], true);
        let b = run(&[("topology.queues", q)], false);
        assert!(a.contains("messages_done = [60]"), "{q}: {a}");
        assert_eq!(a, b, "pass-through changed the results for {q}");
    }
}

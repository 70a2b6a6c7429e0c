//! Whole-scenario tests of the queue-length meter (`engine/observe/queue_mean.rs`).

fn nine_to_one(extra: &str) -> String {
    let mut s = String::from(
        "[sim]\nduration = \"20ms\"\n[topology]\nkind = \"star\"\nservers = 9\n\
         link_rate = \"1Gbps\"\nlink_delay = \"5us\"\nswitch_buffer = \"150KB\"\n",
    );
    for i in 1..=9 {
        // 120 Mb/s each: 1.08 Gb/s into a 1 Gb/s port, so the queue builds and drains.
        s.push_str(&format!(
            "[[apps]]\nkind = \"cbr\"\nsrc = \"server{i}\"\ndst = \"client\"\n\
             rate = \"{}Mbps\"\npacket_size = 1500\nstart = \"{}us\"\n",
            if i == 1 { 200 } else { 110 },
            i * 7
        ));
    }
    s.push_str(extra);
    s
}

fn summary(t: &[crate::output::Table], col: &str) -> Option<f64> {
    t.iter().find(|x| x.name == "summary")?.get_f64(col)
}

#[test]
fn the_exact_mean_agrees_with_a_fine_periodic_sampler() {
    let t = crate::run_text(
        &nine_to_one(
            "[measure]\nmean_queue_port = \"sw->client\"\nqueue_ports = [\"sw->client\"]\n\
             queue_interval = \"1us\"\n",
        ),
        "q.toml",
        &[],
        &mut |_| true,
    )
    .expect("runs");
    let exact = summary(&t, "mean_queue_bytes").expect("column");
    let pkts = summary(&t, "mean_queue_pkts").expect("column");
    let q = t.iter().find(|x| x.name == "queue").expect("queue table");
    let bytes = match q.get("bytes") {
        Some(crate::output::Column::I64(v)) => v.clone(),
        other => panic!("{other:?}"),
    };
    let sampled = bytes.iter().sum::<i64>() as f64 / bytes.len() as f64;
    assert!(exact > 10_000.0, "the queue must build: {exact}");
    assert!(
        (sampled - exact).abs() < 0.01 * exact,
        "{sampled} vs {exact}"
    );
    // All frames are 1500 B.
    assert!(
        (exact / 1500.0 - pkts).abs() < 1e-6 * pkts,
        "{exact} {pkts}"
    );
}

#[test]
fn off_by_default_and_a_bad_port_names_the_field() {
    let t = crate::run_text(&nine_to_one(""), "q.toml", &[], &mut |_| true).expect("runs");
    assert!(summary(&t, "mean_queue_bytes").is_none());
    let e = crate::run_text(
        &nine_to_one("[measure]\nmean_queue_port = \"sw->nowhere\"\n"),
        "q.toml",
        &[],
        &mut |_| true,
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("mean_queue_port") && msg.contains("sw->nowhere"),
        "{msg}"
    );
}

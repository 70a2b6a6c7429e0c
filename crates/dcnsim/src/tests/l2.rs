//! Whole-scenario tests of the layer-2 glue (`engine/datapath/l2/mod.rs`): QCN, PAUSE, rate changes: scenario text in, result tables out.

use super::{col_f64, get, run};
use crate::output::{Column, Table};

/// Nine 1 Gb/s CBR senders into one 1 Gb/s receiver for 50 ms.
fn nine_to_one(pause: bool, buffer: &str) -> String {
    let mut s = format!(
        "[sim]\nduration = \"50ms\"\n[topology]\nkind = \"star\"\nservers = 9\n\
         link_rate = \"1Gbps\"\nlink_delay = \"5us\"\nswitch_buffer = \"{buffer}\"\n"
    );
    if pause {
        s.push_str("pause = { hi = \"130KB\", lo = \"110KB\" }\n");
    }
    for i in 1..=9 {
        s.push_str(&format!(
            "[[apps]]\nkind = \"cbr\"\nsrc = \"server{i}\"\ndst = \"client\"\nrate = \"1Gbps\"\n\
             packet_size = 1500\n"
        ));
    }
    s
}

#[test]
fn pause_makes_a_9_to_1_overload_lossless() {
    // Per-input watermark 130 KB + in-flight: 9 inputs need < 9 x 140 KB at the output.
    let with = run(&nine_to_one(true, "1300KB"));
    assert_eq!(get(&with, "summary", "drops"), 0.0);
    assert!(get(&with, "summary", "pause_sent") > 9.0);
    assert_eq!(
        get(&with, "summary", "pause_sent"),
        get(&with, "summary", "pause_received")
    );
    // Each sender is paused about 8/9 of the time after the first ~1.2 ms.
    let paused = get(&with, "summary", "paused_s");
    assert!(paused > 9.0 * 0.05 * 0.7 && paused < 9.0 * 0.05, "{paused}");
    // The receiver link stays busy: ~1 Gb/s of 1500-B datagrams.
    let gp = get(&with, "summary", "goodput_mbps");
    assert!(gp > 900.0, "{gp}");
    let maxq = col_f64(&with, "ports", "max_queue_bytes")
        .into_iter()
        .fold(0.0, f64::max);
    assert!(maxq < 9.0 * 140_000.0, "{maxq}");
    // Without PAUSE the same buffer overflows.
    let without = run(&nine_to_one(false, "1300KB"));
    assert!(get(&without, "summary", "drops") > 1000.0);
    // With PAUSE and an unlimited buffer: no loss and the queue stays bounded.
    let unl = run(&nine_to_one(true, "unlimited"));
    assert_eq!(get(&unl, "summary", "drops"), 0.0);
    let maxq = col_f64(&unl, "ports", "max_queue_bytes")
        .into_iter()
        .fold(0.0, f64::max);
    assert!(maxq < 9.0 * 140_000.0, "{maxq}");
}

fn two_flows(extra: &str) -> String {
    format!(
        "[sim]\nduration = \"200ms\"\n[topology]\nkind = \"star\"\nservers = 2\n\
         link_rate = \"1Gbps\"\nlink_delay = \"25us\"\nswitch_buffer = \"unlimited\"\n{extra}\n\
         [[apps]]\nkind = \"bulk\"\nsrc = \"server1\"\ndst = \"client\"\n\
         [[apps]]\nkind = \"bulk\"\nsrc = \"server2\"\ndst = \"client\"\n"
    )
}

#[test]
fn cnms_reach_the_sources_and_cut_their_limiters() {
    let t = run(&two_flows(
        "qcn = { q_eq = \"33KB\" }\n[qcn]\nrp = { scope = \"flow\" }\n[measure]\nrp_series = true",
    ));
    let sent = get(&t, "summary", "cnm_sent");
    assert!(sent > 10.0, "{sent}");
    // Every CNM crosses the network (nothing is lost with an unlimited buffer); all are
    // about data segments of flows whose source has a limiter.
    assert_eq!(get(&t, "summary", "cnm_received"), sent);
    assert_eq!(get(&t, "summary", "cnm_ignored"), 0.0);
    let cnms = col_f64(&t, "limiters", "cnms");
    assert_eq!(cnms.iter().sum::<f64>(), sent);
    assert!(cnms.iter().all(|&c| c > 0.0));
    // Allocated rates are below the line rate; the bottleneck is shared.
    let min = get(&t, "summary", "avg_minrate_mbps");
    assert!(min < 1000.0 && min > 10.0, "{min}");
    let gp = get(&t, "summary", "goodput_mbps");
    assert!(gp > 800.0, "{gp}");
    // The queue stays near Q_EQ instead of growing to the windows' worth.
    let maxq = col_f64(&t, "ports", "max_queue_bytes")
        .into_iter()
        .fold(0.0, f64::max);
    let plain = run(&two_flows(""));
    let maxq_plain = col_f64(&plain, "ports", "max_queue_bytes")
        .into_iter()
        .fold(0.0, f64::max);
    assert!(maxq < maxq_plain, "{maxq} vs {maxq_plain}");
    assert!(!col_f64(&t, "rp_rate", "rate_mbps").is_empty());
}

#[test]
fn fixed_rate_limiter_is_a_physical_limit_for_tcp() {
    let t = run(&two_flows("[qcn]\nrp = { fixed_rate = \"100Mbps\" }"));
    // Two flows at 100 Mb/s of wire rate: 200 Mb/s x 1460/1500 of goodput, no loss.
    let gp = get(&t, "summary", "goodput_mbps");
    assert!((gp - 200.0 * 1460.0 / 1500.0).abs() < 5.0, "{gp}");
    assert_eq!(get(&t, "summary", "drops"), 0.0);
    let ideal = run(&two_flows("[qcn]\nrp = { ideal = true }"));
    let gp = get(&ideal, "summary", "goodput_mbps");
    assert!(gp > 900.0 && gp < 1000.0 * 1460.0 / 1500.0 + 1.0, "{gp}");
    let maxq = col_f64(&ideal, "ports", "max_queue_bytes")
        .into_iter()
        .fold(0.0, f64::max);
    assert!(maxq <= 3000.0, "{maxq}");
}

#[test]
fn rate_change_slows_a_port_and_back() {
    let t = run(&two_flows(
        "[[topology.rate_changes]]\nport = \"sw->client\"\nat = \"50ms\"\nrate = \"100Mbps\"\n\
         [[topology.rate_changes]]\nport = \"sw->client\"\nat = \"150ms\"\nrate = \"1Gbps\"\n\
         [measure]\nflow_rate_interval = \"10ms\"",
    ));
    let time = col_f64(&t, "flow_rate", "time_s");
    let rate = col_f64(&t, "flow_rate", "rate_mbps");
    let total = |a: f64, b: f64| -> f64 {
        let mut s = 0.0;
        let mut k = 0.0;
        for (i, &x) in time.iter().enumerate() {
            if x > a + 1e-9 && x <= b + 1e-9 {
                s += rate[i];
                k += 0.5; // two flows per sample time
            }
        }
        s / k
    };
    let slow = total(70e-3, 150e-3);
    let fast = total(170e-3, 200e-3);
    assert!(slow < 100.0 && slow > 80.0, "{slow}");
    assert!(fast > 800.0, "{fast}");
}

#[test]
fn bad_keys_name_their_field() {
    let e = crate::run_text(
        &two_flows("qcn = { sampling = \"v9\" }"),
        "x.toml",
        &[],
        &mut |_| true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("topology.qcn"), "{e}");
    assert!(e.to_string().contains("v9"), "{e}");
    let e = crate::run_text(
        &two_flows("[qcn]\nrp = { scope = \"everything\" }"),
        "x.toml",
        &[],
        &mut |_| true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("qcn.rp"), "{e}");
    let e = crate::run_text(
        &two_flows("[[topology.rate_changes]]\nport = \"nope\"\nat = \"1ms\"\nrate = \"1Gbps\""),
        "x.toml",
        &[],
        &mut |_| true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
}

#[test]
fn same_seed_same_result() {
    let s = two_flows("qcn = {}\n[qcn]\nrp = {}\n[measure]\nrp_series = true");
    // The tables carry no wall-clock time, so two runs compare whole.
    assert_eq!(run(&s), run(&s));
}

/// `qcn.sample = "arrivals"` offers the frames a full queue drops to the CP: a 9-to-1
/// CBR overload of a 150 KB buffer then gets samples on dropped frames, more CNMs and
/// fewer drops; "admitted" takes none on dropped frames.
#[test]
fn cp_sample_arrivals_sees_dropped_frames() {
    let scen = |sample: &str| {
        let mut s = nine_to_one(false, "150KB");
        s = s.replace(
            "switch_buffer = \"150KB\"\n",
            &format!(
                "switch_buffer = \"150KB\"\nqcn = {{ sample = \"{sample}\" }}\n\
                 [qcn]\nrp = {{ scope = \"flow\" }}\n"
            ),
        );
        run(&s)
    };
    let adm = scen("admitted");
    let arr = scen("arrivals");
    let dropped = |t: &[Table]| {
        col_f64(t, "l2_ports", "cp_samples_dropped")
            .iter()
            .sum::<f64>()
    };
    assert_eq!(dropped(&adm), 0.0);
    assert!(dropped(&arr) > 0.0);
    assert!(get(&arr, "summary", "drops") < get(&adm, "summary", "drops"));
    // Same result as the default when the key is absent.
    let default = run(&nine_to_one(false, "150KB").replace(
        "switch_buffer = \"150KB\"\n",
        "switch_buffer = \"150KB\"\nqcn = {}\n[qcn]\nrp = { scope = \"flow\" }\n",
    ));
    assert_eq!(
        get(&default, "summary", "drops"),
        get(&adm, "summary", "drops")
    );
    assert_eq!(
        get(&default, "summary", "cnm_sent"),
        get(&adm, "summary", "cnm_sent")
    );
    let e = crate::run_text(
        &two_flows("qcn = { sample = \"some\" }"),
        "x.toml",
        &[],
        &mut |_| true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("topology.qcn"), "{e}");
    assert!(e.to_string().contains("arrivals"), "{e}");
}

/// `qcn.quantizer_shift` selects the MSB-shift quantiser: with 13 (q <= 20) the CPs send
/// a different number of CNMs than with the linear default on the same run.
#[test]
fn quantizer_shift_key_changes_the_feedback() {
    let lin = run(&two_flows("qcn = {}\n[qcn]\nrp = {}"));
    let msb = run(&two_flows("qcn = { quantizer_shift = 13 }\n[qcn]\nrp = {}"));
    assert_ne!(
        get(&lin, "summary", "cnm_sent"),
        get(&msb, "summary", "cnm_sent")
    );
    let e = crate::run_text(
        &two_flows("qcn = { quantizer_shift = 60 }"),
        "x.toml",
        &[],
        &mut |_| true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("shift"), "{e}");
}

/// A 1 Mb/s fixed limiter holds each 1500-B segment 12 ms; with a 10 ms RTO (no backoff
/// growth) the RTO fires while the segment at snd_una is still in the limiter: those
/// timeouts are counted as held. At 100 Mb/s with the 200 ms default no RTO fires.
#[test]
fn timeouts_with_snd_una_held_in_the_limiter_are_counted() {
    let t = run(&two_flows(
        "[qcn]\nrp = { fixed_rate = \"1Mbps\" }\n[tcp]\nmin_rto = \"10ms\"\nmax_rto = \"10ms\"",
    ));
    let to = get(&t, "summary", "timeouts");
    let held = get(&t, "summary", "timeouts_held_in_limiter");
    assert!(held >= 2.0 && held <= to, "{held} {to}");
    assert_eq!(
        col_f64(&t, "limiters", "rto_held").iter().sum::<f64>(),
        held
    );
    let ok = run(&two_flows("[qcn]\nrp = { fixed_rate = \"100Mbps\" }"));
    assert_eq!(get(&ok, "summary", "timeouts"), 0.0);
    assert_eq!(get(&ok, "summary", "timeouts_held_in_limiter"), 0.0);
}

#[test]
fn cbr_apps_get_a_delivered_rate_series() {
    // One 100 Mb/s CBR of 1500-B frames: one frame every 120 us, so every 6 ms window
    // holds exactly 50 arrivals (the first frame arrives well inside the first window).
    let t = run(
        "[sim]\nduration = \"40ms\"\n[topology]\nkind = \"star\"\nservers = 1\n\
         link_rate = \"1Gbps\"\nlink_delay = \"5us\"\nswitch_buffer = \"150KB\"\n\
         [[apps]]\nkind = \"cbr\"\nsrc = \"server1\"\ndst = \"client\"\nrate = \"100Mbps\"\n\
         packet_size = 1500\n[measure]\nflow_rate_interval = \"6ms\"\n",
    );
    let rate = col_f64(&t, "app_rate", "rate_mbps");
    let time = col_f64(&t, "app_rate", "time_s");
    assert!(rate.len() >= 6, "{rate:?}");
    assert!((time[0] - 0.006).abs() < 1e-12 && (time[1] - 0.012).abs() < 1e-12);
    for r in &rate {
        assert_eq!(*r, rate[0], "{rate:?}");
    }
    // 50 payloads in 6 ms: just under 100 Mb/s (headers are not payload).
    assert!(rate[0] > 95.0 && rate[0] < 100.0, "{}", rate[0]);
    let tab = t.iter().find(|x| x.name == "app_rate").expect("app_rate");
    match (tab.get("src"), tab.get("dst")) {
        (Some(Column::Str(s)), Some(Column::Str(d))) => {
            assert_eq!((s[0].as_str(), d[0].as_str()), ("server1", "client"));
        }
        other => panic!("{other:?}"),
    }
    // Without the interval: no table.
    let off = run(&nine_to_one(false, "150KB"));
    assert!(off.iter().all(|x| x.name != "app_rate"));
}

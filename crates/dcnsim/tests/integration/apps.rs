//! Applications end to end: UDP constant bit rate, a finite bulk transfer, delayed ACK in a
//! whole scenario, and the dumbbell builder.

use crate::helpers::{f64s, port_row, run, table};

const LINE: &str = r#"
[sim]
duration = "20ms"
[topology]
kind = "explicit"
link_rate = "1Gbps"
link_delay = "1us"
nodes = [
    { name = "h1", kind = "host" },
    { name = "sw", kind = "switch" },
    { name = "h2", kind = "host" },
]
links = [{ a = "h1", b = "sw" }, { a = "sw", b = "h2" }]
"#;

#[test]
fn cbr_delivers_exactly_what_it_sends() {
    let text = format!(
        "{LINE}\n[[apps]]\nkind = \"cbr\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"400Mbps\"\n\
         packet_size = 1500\nstop = \"10ms\"\n"
    );
    let t = run(&text);
    // One 1500-B datagram every 30 us for t < 10 ms: 334 datagrams of 1472 B payload.
    let g = f64s(table(&t, "apps"), "goodput_mbps")[0];
    let expect = 334.0 * 1472.0 * 8.0 / 0.020 / 1e6;
    assert!((g - expect).abs() < 1e-9, "{g} vs {expect}");
    assert_eq!(f64s(table(&t, "summary"), "drops")[0], 0.0);
}

#[test]
fn bulk_transfer_completes_near_line_rate() {
    let text = format!(
        "{LINE}\n[[apps]]\nkind = \"bulk\"\nsrc = \"h1\"\ndst = \"h2\"\nsize = \"1MB\"\n\
         start = \"1ms\"\n"
    );
    let t = run(&text);
    let c = table(&t, "completions");
    let start = f64s(c, "start_s");
    let end = f64s(c, "end_s");
    assert_eq!(start, vec![0.001]);
    assert_eq!(f64s(c, "bytes"), vec![1e6]);
    let fct = end[0] - start[0];
    // 685 segments of 1500 B at 1 Gb/s take 8.22 ms; slow start from 2 segments over a
    // ~54 us RTT adds a few RTTs.
    let wire = (1e6f64 / 1460.0).ceil() * 1500.0 * 8.0 / 1e9;
    assert!(
        fct > wire && fct < wire + 0.0005,
        "fct {fct}, serialization {wire}"
    );
    let flows = table(&t, "flows");
    assert_eq!(f64s(flows, "delivered_bytes"), vec![1e6]);
    assert_eq!(f64s(flows, "retransmits"), vec![0.0]);
}

#[test]
fn delayed_ack_halves_the_acks() {
    let base = format!(
        "{LINE}\n[[apps]]\nkind = \"bulk\"\nsrc = \"h1\"\ndst = \"h2\"\nsize = \"146000B\"\n"
    );
    let plain = run(&base);
    let delack = run(&format!(
        "{base}\n[apps.tcp]\ndelayed_ack = 2\ndelack_timeout = \"1ms\"\n"
    ));
    // Switch ports: sw->h1 carries the ACKs (100 segments → 100 ACKs, or 50 with delayed ACK).
    assert_eq!(port_row(&plain, "sw->h1", "tx_pkts"), 100.0);
    assert_eq!(port_row(&delack, "sw->h1", "tx_pkts"), 50.0);
    assert_eq!(
        f64s(table(&delack, "flows"), "delivered_bytes"),
        vec![146000.0]
    );
}

#[test]
fn dumbbell_routes_through_the_bottleneck() {
    let text = r#"
apps = [
    { kind = "bulk", src = "left1", dst = "right1" },
    { kind = "bulk", src = "left2", dst = "right2" },
]
[sim]
duration = "50ms"
[topology]
kind = "dumbbell"
left = 2
right = 2
link_rate = "10Gbps"
bottleneck_rate = "1Gbps"
link_delay = "5us"
switch_buffer = "100KB"
"#;
    let t = run(text);
    let s = table(&t, "summary");
    // Two long flows share the 1 Gb/s bottleneck: total at most the payload share.
    let g = f64s(s, "goodput_mbps")[0];
    assert!(g > 800.0 && g <= 973.4, "{g}");
    assert!(f64s(s, "bottleneck_pkts")[0] > 3000.0);
}

//! `topology.server_delay_step`: a star whose server links are spread in delay, so that no
//! two servers' packets reach the switch in the same instant (docs/validation.md, "Why: the
//! order of simultaneous arrivals").

use crate::helpers::{run, table};
use dcnsim::scenario::{build, load};

/// Four servers into a 64 KiB port with the ns-2 profile: the Devkota 2010 cell whose outcome
/// in ns-2 and ns-3 depends on the order of simultaneous arrivals.
const STAR: &str = r#"[sim]
duration = "100ms"
[topology]
kind = "star"
servers = 4
link_rate = "1Gbps"
link_delay = "25us"
switch_buffer = "64KiB"
{step}
[tcp]
profile = "ns2"
rwnd = 29200
[[apps]]
kind = "incast"
sru = "256KB"
"#;

/// The same star written out link by link, server i's link `25 us + (i - 1) * 1 ns`.
fn explicit_stepped() -> String {
    let mut s = String::from(
        "[sim]\nduration = \"100ms\"\n[topology]\nkind = \"explicit\"\nlink_rate = \"1Gbps\"\n\
         switch_buffer = \"64KiB\"\n\
         [[topology.nodes]]\nname = \"sw\"\nkind = \"switch\"\n\
         [[topology.nodes]]\nname = \"client\"\nkind = \"host\"\n",
    );
    for i in 1..=4 {
        s += &format!("[[topology.nodes]]\nname = \"server{i}\"\nkind = \"host\"\n");
    }
    s += "[[topology.links]]\na = \"client\"\nb = \"sw\"\ndelay = \"25us\"\n";
    for i in 1..=4u64 {
        let ps = 25_000_000 + (i - 1) * 1000;
        s += &format!("[[topology.links]]\na = \"server{i}\"\nb = \"sw\"\ndelay = \"{ps}ps\"\n");
    }
    s + "[tcp]\nprofile = \"ns2\"\nrwnd = 29200\n[[apps]]\nkind = \"incast\"\nsru = \"256KB\"\n"
}

#[test]
fn a_stepped_star_is_the_star_with_spread_link_delays() {
    let stepped = run(&STAR.replace("{step}", "server_delay_step = \"1ns\""));
    let explicit = run(&explicit_stepped());
    for name in ["flows", "completions"] {
        assert_eq!(table(&stepped, name), table(&explicit, name), "{name}");
    }
    let (a, b) = (table(&stepped, "summary"), table(&explicit, "summary"));
    for col in ["delivered_bytes", "timeouts", "drops", "rounds"] {
        assert_eq!(a.get(col), b.get(col), "summary.{col}");
    }
    // And the step is not a no-op: the symmetric star delivers a different history.
    let symmetric = run(&STAR.replace("{step}", ""));
    assert_ne!(table(&symmetric, "flows"), table(&stepped, "flows"));
}

/// The one-line error of a scenario that loading or building refuses.
fn build_error(text: &str) -> String {
    match load(text, "x.toml", &[]) {
        Err(e) => e.to_string(),
        Ok(loaded) => match build(&loaded) {
            Ok(_) => panic!("the scenario should be refused"),
            Err(e) => e.to_string(),
        },
    }
}

#[test]
fn server_delay_step_is_refused_off_a_star_and_beyond_the_delay_range() {
    let dumbbell =
        "[sim]\nduration = \"1ms\"\n[topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\n\
                    link_rate = \"1Gbps\"\nserver_delay_step = \"1ns\"\n";
    assert_eq!(
        build_error(dumbbell),
        "x.toml: line 8, field topology.server_delay_step: only a star topology has it (this one is kind = \"dumbbell\")"
    );
    let huge = STAR.replace("{step}", "server_delay_step = \"500000s\"");
    assert_eq!(
        build_error(&huge),
        "x.toml: line 9, field topology.server_delay_step: link_delay + (servers - 1) * step must be at most 1000000s (limits: durations)"
    );
}

#[test]
fn every_flow_has_its_own_tick_clock_phase() {
    // ns-2 draws each agent's `boot_time_` (the phase of its tick clock) on its own; the
    // engine sets the phase from the id it gives the flow.
    let text = STAR
        .replace("{step}", "")
        .replace("rwnd = 29200", "rwnd = 29200\nrtt_tick = \"0.5ms\"");
    let loaded = load(&text, "x.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    let (sim, _) = build(&loaded).unwrap_or_else(|e| panic!("{e}"));
    let phases: Vec<_> = sim
        .hosts
        .flows
        .iter()
        .map(|f| f.tcp().expect("a TCP flow").snd.tick_phase)
        .collect();
    assert_eq!(phases.len(), 4);
    for (i, a) in phases.iter().enumerate() {
        assert!(phases[i + 1..].iter().all(|b| b != a), "{phases:?}");
    }
}

//! When the event loop prefetches (`engine/sim.rs`, `prefetch_pays`): whole scenarios in,
//! the decision out. Prefetching is a hint and changes no result; what is checked here is
//! the decision itself and its inputs.

use crate::engine::sim::{parse_cache_size, prefetch_choice, prefetch_forced, prefetch_pays, Sim};

fn built(text: &str) -> Sim {
    super::build_sim(text).1
}

#[test]
fn sysfs_cache_sizes() {
    assert_eq!(parse_cache_size("48K\n"), Some(48 << 10));
    assert_eq!(parse_cache_size("2048K"), Some(2 << 20));
    assert_eq!(parse_cache_size("1M"), Some(1 << 20));
    assert_eq!(parse_cache_size("512"), Some(512));
    assert_eq!(parse_cache_size(""), None);
    assert_eq!(parse_cache_size("K"), None);
    assert_eq!(parse_cache_size("twoK"), None);
}

#[test]
fn prefetch_only_when_the_state_outgrows_l2() {
    assert!(!prefetch_pays(1 << 20, Some(2 << 20)));
    assert!(prefetch_pays(3 << 20, Some(2 << 20)));
    // Equal is not larger.
    assert!(!prefetch_pays(2 << 20, Some(2 << 20)));
    // Unknown cache: prefetch, as the loop always did before.
    assert!(prefetch_pays(1, None));
}

#[test]
fn the_environment_may_force_the_choice() {
    let (small, big, l2) = (1 << 10, 8 << 20, Some(2 << 20));
    assert!(prefetch_choice(Some("on"), small, l2));
    assert!(!prefetch_choice(Some("off"), big, l2));
    assert!(!prefetch_choice(None, small, l2) && prefetch_choice(None, big, l2));
    assert!(!prefetch_choice(Some("auto"), small, l2) && prefetch_choice(Some(""), big, l2));
    // Forced: no review during the run.
    assert_eq!(prefetch_forced(Some("on")), Some(true));
    assert_eq!(prefetch_forced(Some("off")), Some(false));
    assert_eq!(prefetch_forced(Some("auto")), None);
    assert_eq!(prefetch_forced(None), None);
}

/// The choice follows the state as it grows: a fabric whose workload opens flows as
/// messages come starts inside the L2 cache and outgrows it (the 144-host `tcn-fig10` does
/// within its first simulated milliseconds: 9 % faster over its 1 s cut with the prefetch,
/// docs/performance.md). `review_prefetch` switches it on once the flows opened since the
/// start pass the cache's size, reports the change once, and never acts when the
/// environment forced the choice.
#[test]
fn the_choice_is_reviewed_as_flows_open() {
    let mut fabric = built(include_str!("../../../../scenarios/tcn-fig10.toml"));
    fabric.start();
    let start = fabric.state_bytes();
    // An L2 a little larger than the state at the start, and no forcing.
    let l2 = start + (64 << 10);
    fabric.prefetch_review = Some(Some(l2));
    fabric.prefetch = prefetch_pays(start, Some(l2));
    assert!(!fabric.prefetch);
    assert!(!fabric.review_prefetch() && !fabric.prefetch);
    let per_flow = std::mem::size_of::<crate::model::tcp::TcpFlow>() as u64;
    // No flow is open at the start; any flow's state weighs the same.
    assert!(fabric.hosts.flows.is_empty());
    let star = built(include_str!("../../../../scenarios/bench-incast.toml"));
    let template = star.hosts.flows[0].clone();
    for _ in 0..(64 << 10) / per_flow {
        fabric.add_flow(template.clone(), crate::base::ids::AppId::NONE);
    }
    // Exactly the L2's size: not larger yet.
    assert!(fabric.state_bytes() <= l2);
    assert!(!fabric.review_prefetch());
    fabric.add_flow(template.clone(), crate::base::ids::AppId::NONE);
    assert!(fabric.review_prefetch() && fabric.prefetch);
    assert!(!fabric.review_prefetch() && fabric.prefetch);
    // Forced off (DCNSIM_PREFETCH=off): the state does not matter.
    fabric.prefetch_review = None;
    fabric.prefetch = false;
    assert!(!fabric.review_prefetch() && !fabric.prefetch);
}

/// The state estimate grows with ports, multi-queue state, flows and the calendar: an
/// 8-sender star fits any L2 with room to spare; the 144-host fabric of `tcn-fig10` (576
/// multi-queue ports and a 4 096-bucket calendar; its workload opens flows as messages come,
/// so none are counted at the start) outgrows a 512 KiB L2 (AMD EPYC) but not a 2 MiB one
/// (the Intel Xeon, where prefetching made no difference on it).
#[test]
fn the_state_of_a_star_and_of_the_fabric() {
    let mut star = built(include_str!("../../../../scenarios/bench-incast.toml"));
    let mut fabric = built(include_str!("../../../../scenarios/tcn-fig10.toml"));
    let unstarted = star.state_bytes();
    star.start();
    fabric.start();
    let (s, f) = (star.state_bytes(), fabric.state_bytes());
    assert!(s < 256 << 10, "star state {s} bytes");
    assert!(f > 512 << 10 && f < 2 << 20, "fabric state {f} bytes");
    // Starting sizes the calendar (the star's to 128 buckets): the estimate counts it as it
    // will be during the run.
    assert!(unstarted > s + (256 << 10), "{unstarted} -> {s}");
    assert!(!prefetch_pays(s, Some(512 << 10)) && prefetch_pays(f, Some(512 << 10)));
    assert!(!prefetch_pays(f, Some(2 << 20)));
    // `start` sets the loop's choice from the estimate and this machine's L2 (or from
    // DCNSIM_PREFETCH, if the test runs with it set).
    let forced = std::env::var("DCNSIM_PREFETCH").ok();
    let want = prefetch_choice(forced.as_deref(), f, crate::engine::sim::l2_cache_bytes());
    assert_eq!(fabric.prefetch, want);
    // A flow adds its `TcpFlow` to the estimate.
    let mut more = built(include_str!("../../../../scenarios/bench-incast.toml"));
    let before = more.state_bytes();
    let f0 = more.hosts.flows[0].clone();
    more.add_flow(f0, crate::base::ids::AppId::NONE);
    let per_flow = std::mem::size_of::<crate::model::tcp::TcpFlow>() as u64;
    assert_eq!(more.state_bytes(), before + per_flow);
}

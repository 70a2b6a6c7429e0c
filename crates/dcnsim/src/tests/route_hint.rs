//! Whole-scenario tests of the engine's route hint (`engine/net/mod.rs`): scenario text in, result tables out.

use crate::base::ids::Idx;
use crate::engine::net::route_hint;

/// `Port::head_out` must always be where the peer forwards the wire's head packet (the
/// arrival uses it instead of a route lookup). Leaf-spine with ECMP and flows between
/// every pair of leaves' hosts, both ways; checked for every port before every event.
#[test]
fn head_out_is_the_route_of_every_wire_head() {
    let mut text = String::from(
        "[sim]\nduration = \"2ms\"\n[topology]\nkind = \"leafspine\"\n\
         hosts_per_leaf = 2\nleaves = 3\nspines = 3\nlink_rate = \"10Gbps\"\n\
         base_rtt = \"20us\"\nhost_delay = \"10us\"\n",
    );
    for (s, d) in [(1, 3), (2, 5), (4, 1), (6, 2), (3, 6), (5, 4)] {
        text.push_str(&format!(
            "[[apps]]\nkind = \"bulk\"\nsrc = \"host{s}\"\ndst = \"host{d}\"\n"
        ));
    }
    let loaded = crate::scenario::load(&text, "t.toml", &[]).unwrap();
    let (mut sim, _) = crate::scenario::build(&loaded).unwrap();
    sim.start();
    let (mut checked, mut via_group) = (0u64, 0u64);
    for _ in 0..200_000 {
        for p in &sim.net.ports {
            if let Some((_, head)) = p.wire.front() {
                let want = route_hint(&sim.net.nodes, &sim.net.ecmp, p.peer_node, head);
                assert_eq!(p.head_out, want, "port {}", p.name);
                checked += 1;
                let n = &sim.net.nodes[p.peer_node.idx()];
                if n.kind == crate::engine::net::NodeKind::Switch
                    && crate::engine::net::ecmp::EcmpGroups::is_group(n.route[head.dst.idx()])
                {
                    via_group += 1;
                }
            }
        }
        if sim.step().is_none() {
            break;
        }
    }
    assert!(
        checked > 100_000 && via_group > 10_000,
        "{checked} {via_group}"
    );
}

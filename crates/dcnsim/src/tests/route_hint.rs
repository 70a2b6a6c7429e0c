//! Whole-scenario tests of the engine's route hint (`engine/net/mod.rs`): scenario text in, result tables out.

use crate::base::ids::NodeId;
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
                    && crate::engine::net::ecmp::EcmpGroups::is_group(crate::engine::net::route(
                        &sim.net.nodes,
                        p.peer_node,
                        head.dst,
                    ))
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

/// Route entries of every (node, destination) pair as `engine::net::route` reports them.
fn all_routes(nodes: &[crate::engine::net::Node]) -> Vec<crate::base::ids::PortId> {
    let n = nodes.len() as u32;
    (0..n)
        .flat_map(|u| (0..n).map(move |d| (NodeId(u), NodeId(d))))
        .map(|(u, d)| crate::engine::net::route(nodes, u, d))
        .collect()
}

/// The route computation by edge switch (single-homed hosts) gives the same entries as the
/// general one-search-per-destination way, on every topology builder, and it is the one
/// these topologies take (hosts keep no table).
#[test]
fn routes_by_edge_equal_routes_by_destination() {
    let topologies = [
        (
            "kind = \"star\"\nservers = 7\nlink_rate = \"1Gbps\"\nlink_delay = \"25us\"",
            ("server1", "client"),
        ),
        (
            "kind = \"dumbbell\"\nleft = 3\nright = 2\nlink_rate = \"1Gbps\"\n\
             link_delay = \"10us\"",
            ("left1", "right1"),
        ),
        (
            "kind = \"leafspine\"\nhosts_per_leaf = 3\nleaves = 4\nspines = 2\n\
             link_rate = \"10Gbps\"\nbase_rtt = \"20us\"",
            ("host1", "host9"),
        ),
        (
            "kind = \"leafspine\"\nhosts_per_leaf = 2\nleaves = 3\nspines = 3\n\
             link_rate = \"10Gbps\"\nbase_rtt = \"20us\"\necmp = false",
            ("host1", "host5"),
        ),
    ];
    for (topo, (src, dst)) in topologies {
        let text = format!(
            "[sim]\nduration = \"1ms\"\n[topology]\n{topo}\n[[apps]]\nkind = \"ping\"\n\
             src = \"{src}\"\ndst = \"{dst}\"\n"
        );
        let loaded = crate::scenario::load(&text, "t.toml", &[]).unwrap();
        let (sim, _) = crate::scenario::build(&loaded).unwrap();
        let mut fast = sim.net.nodes.clone();
        crate::engine::net::compute_routes(&mut fast, &sim.net.ports).unwrap();
        let mut general = sim.net.nodes.clone();
        crate::engine::net::routes_by_destination(&mut general, &sim.net.ports).unwrap();
        assert!(
            fast.iter()
                .filter(|n| n.kind == crate::engine::net::NodeKind::Host)
                .all(|n| n.route.is_empty() && n.uplink.is_some()),
            "{topo}: hosts keep tables"
        );
        let (a, b) = (all_routes(&fast), all_routes(&general));
        assert!(
            b.iter().filter(|p| p.is_some()).count() > 10,
            "{topo}: no routes"
        );
        assert_eq!(a, b, "{topo}");
    }
}

/// ECMP groups over the tables by edge switch name, for every (switch, host) pair, the same
/// next hops in the same order as over the general tables by destination (so the hash picks
/// the same port), on leaf-spines with several spines and a fabric without ECMP-able paths.
#[test]
fn ecmp_by_edge_equals_ecmp_by_destination() {
    use crate::base::ids::PortId;
    use crate::engine::net::ecmp::EcmpGroups;
    use crate::engine::net::{route, routes_by_destination, Node, NodeKind};
    fn hops(nodes: &[Node], g: &EcmpGroups, u: NodeId, d: NodeId) -> Vec<PortId> {
        let e = route(nodes, u, d);
        if EcmpGroups::is_group(e) {
            let (a, n) = g.groups[(e.0 & !crate::engine::net::ecmp::ECMP_BIT) as usize];
            g.members[a as usize..(a + n) as usize].to_vec()
        } else {
            vec![e]
        }
    }
    for (h, l, s) in [(3, 4, 2), (2, 3, 3), (2, 5, 4), (1, 2, 1)] {
        let text = format!(
            "[sim]\nduration = \"1ms\"\n[topology]\nkind = \"leafspine\"\nhosts_per_leaf = {h}\n\
             leaves = {l}\nspines = {s}\nlink_rate = \"10Gbps\"\nbase_rtt = \"20us\"\n\
             [[apps]]\nkind = \"ping\"\nsrc = \"host1\"\ndst = \"host2\"\n"
        );
        let loaded = crate::scenario::load(&text, "t.toml", &[]).unwrap();
        let (sim, _) = crate::scenario::build(&loaded).unwrap();
        let fast = &sim.net.nodes;
        assert!(fast.iter().any(|n| n.by_edge));
        let mut general = fast.clone();
        routes_by_destination(&mut general, &sim.net.ports).unwrap();
        let g2 = EcmpGroups::build(&mut general, &sim.net.ports).unwrap();
        let n = fast.len() as u32;
        let mut groups = 0;
        for u in (0..n)
            .map(NodeId)
            .filter(|u| fast[u.idx()].kind == NodeKind::Switch)
        {
            for d in (0..n)
                .map(NodeId)
                .filter(|d| fast[d.idx()].kind == NodeKind::Host)
            {
                let (a, b) = (hops(fast, &sim.net.ecmp, u, d), hops(&general, &g2, u, d));
                assert_eq!(a, b, "{h}x{l}x{s}: switch {u:?} to {d:?}");
                groups += usize::from(a.len() > 1);
            }
        }
        assert_eq!(
            groups > 0,
            s > 1,
            "{h}x{l}x{s}: {groups} multi-path entries"
        );
    }
}

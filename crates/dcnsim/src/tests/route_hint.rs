//! Whole-scenario tests of the engine's route hint (`engine/net/mod.rs`): scenario text in, result tables out.

use crate::base::ids::NodeId;
use crate::engine::net::routing::Routing;

/// A 6-host leaf-spine (3 leaves, 3 spines, 10 Gb/s, ECMP) running `duration`, with the
/// topology keys `extra`, and a bulk TCP transfer from host `s` to host `d` per pair.
fn leafspine_bulk(duration: &str, extra: &str, pairs: &[(u32, u32)]) -> String {
    let mut text = format!(
        "[sim]\nduration = \"{duration}\"\n[topology]\nkind = \"leafspine\"\n\
         hosts_per_leaf = 2\nleaves = 3\nspines = 3\nlink_rate = \"10Gbps\"\n\
         base_rtt = \"20us\"\nhost_delay = \"10us\"\n{extra}"
    );
    for (s, d) in pairs {
        text.push_str(&format!(
            "[[apps]]\nkind = \"bulk\"\nsrc = \"host{s}\"\ndst = \"host{d}\"\n"
        ));
    }
    text
}

/// Every packet in flight must carry where the peer forwards it (`InFlight::out`, looked
/// up at departure), and `Port::head_out` and `Port::head_h` must be the head's (the
/// arrival uses the first instead of a route lookup, the event loop's prefetch the second).
/// Leaf-spine with ECMP and flows between every pair of leaves' hosts, both ways; checked
/// for every port before every event.
#[test]
fn head_out_is_the_route_of_every_wire_head() {
    let pairs = [(1, 3), (2, 5), (4, 1), (6, 2), (3, 6), (5, 4)];
    let text = leafspine_bulk("2ms", "", &pairs);
    let loaded = crate::scenario::load(&text, "t.toml", &[]).unwrap();
    let (mut sim, _) = crate::scenario::build(&loaded).unwrap();
    sim.start();
    let (mut checked, mut via_group) = (0u64, 0u64);
    for step in 0..200_000 {
        // The whole wire every 8th event (the head at every one).
        let depth = if step % 8 == 0 { usize::MAX } else { 1 };
        for p in &sim.net.ports {
            // Every packet in flight carries the route looked up when it left, and the
            // head's is the port's `head_out`, its handle the port's `head_h`.
            if let Some(e) = p.wire.front() {
                assert_eq!((p.head_out, p.head_h), (e.out, e.h));
            }
            for e in p.wire.iter().take(depth) {
                let head = &sim.net.packets[e.h];
                let want = sim.net.routing.hint(&sim.net.ecmp, p.peer_node, head);
                assert_eq!(
                    e.out,
                    want,
                    "port {}",
                    crate::engine::net::port_name(&sim.net.nodes, p)
                );
                checked += 1;
                let n = &sim.net.nodes[p.peer_node.idx()];
                if n.kind == crate::engine::net::NodeKind::Switch
                    && crate::engine::net::ecmp::EcmpGroups::is_group(
                        sim.net.routing.route(p.peer_node, head.dst),
                    )
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

/// Route entries of every (node, destination) pair as `Routing::route` reports them, once
/// the nodes' routes are moved into a routing.
fn all_routes(nodes: &mut [crate::engine::net::Node]) -> Vec<crate::base::ids::PortId> {
    let n = nodes.len() as u32;
    let r = Routing::index(nodes).unwrap();
    (0..n)
        .flat_map(|u| (0..n).map(move |d| (NodeId(u), NodeId(d))))
        .map(|(u, d)| r.route(u, d))
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
        (
            "kind = \"fattree\"\nk = 4\nlink_rate = \"10Gbps\"\nfabric_rate = \"40Gbps\"",
            ("host1", "host16"),
        ),
        (
            "kind = \"fattree\"\nk = 6\nlink_rate = \"10Gbps\"\necmp = false",
            ("host1", "host54"),
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
        let (a, b) = (all_routes(&mut fast), all_routes(&mut general));
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
    use crate::engine::net::{routes_by_destination, NodeKind};
    fn hops(r: &Routing, g: &EcmpGroups, u: NodeId, d: NodeId) -> Vec<PortId> {
        let e = r.route(u, d);
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
        let general = Routing::index(&mut general).unwrap();
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
                let a = hops(&sim.net.routing, &sim.net.ecmp, u, d);
                let b = hops(&general, &g2, u, d);
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

/// A k-ary fat-tree has the wiring of Al-Fares et al. (SIGCOMM 2008, §3.2): k³/4 hosts,
/// k/2 per edge switch, every edge linked to every aggregation switch of its pod, each
/// aggregation switch to k/2 cores, each core to one aggregation switch per pod; with ECMP
/// an edge switch spreads traffic to another pod over its k/2 aggregation switches, an
/// aggregation switch over its k/2 cores, and the way down is a single path. Checked entry
/// for entry for k = 2, 4 and 6 against the ECMP groups built over per-destination tables.
#[test]
fn fattree_has_the_papers_wiring_and_up_down_paths() {
    use crate::base::ids::PortId;
    use crate::engine::net::ecmp::{EcmpGroups, ECMP_BIT};
    fn hops(r: &Routing, g: &EcmpGroups, u: NodeId, d: NodeId) -> Vec<PortId> {
        let e = r.route(u, d);
        if EcmpGroups::is_group(e) {
            let (a, n) = g.groups[(e.0 & !ECMP_BIT) as usize];
            g.members[a as usize..(a + n) as usize].to_vec()
        } else {
            vec![e]
        }
    }
    for k in [2usize, 4, 6] {
        let half = k / 2;
        let text = format!(
            "[sim]\nduration = \"1ms\"\n[topology]\nkind = \"fattree\"\nk = {k}\n\
             link_rate = \"10Gbps\"\nfabric_rate = \"40Gbps\"\nlink_delay = \"1us\"\n\
             [[apps]]\nkind = \"ping\"\nsrc = \"host1\"\ndst = \"host2\"\n"
        );
        let loaded = crate::scenario::load(&text, "t.toml", &[]).unwrap();
        let (sim, info) = crate::scenario::build(&loaded).unwrap();
        let (nodes, ports) = (&sim.net.nodes, &sim.net.ports);
        let id = |name: &str| NodeId(nodes.iter().position(|n| n.name == name).unwrap() as u32);
        let count = |prefix: &str| nodes.iter().filter(|n| n.name.starts_with(prefix)).count();
        assert_eq!(info.servers as usize, k * k * k / 4);
        let tiers = [
            ("host", k * k * k / 4),
            ("edge", k * half),
            ("agg", k * half),
        ];
        for (prefix, n) in tiers.into_iter().chain([("core", half * half)]) {
            assert_eq!(count(prefix), n, "k = {k}: {prefix}");
        }
        assert_eq!(nodes.len(), k * k * k / 4 + 5 * k * k / 4);
        // Links (two ports each): hosts, edge-aggregation, aggregation-core.
        assert_eq!(ports.len(), 2 * (k * k * k / 4 + 2 * k * half * half));
        let peers = |name: &str| -> Vec<String> {
            let u = id(name);
            let mut v: Vec<String> = ports
                .iter()
                .filter(|p| p.node == u)
                .map(|p| nodes[p.peer_node.idx()].name.clone())
                .collect();
            v.sort();
            v
        };
        let names = |prefix: &str, ids: Vec<usize>| -> Vec<String> {
            let mut v: Vec<String> = ids.iter().map(|i| format!("{prefix}{i}")).collect();
            v.sort();
            v
        };
        // The last pod's last edge, aggregation and core switches.
        let (e, a, pod) = (k * half, k * half, k - 1);
        let mut edge_peers = names("host", ((e - 1) * half + 1..=e * half).collect());
        edge_peers.extend(names("agg", (pod * half + 1..=a).collect()));
        edge_peers.sort();
        assert_eq!(peers(&format!("edge{e}")), edge_peers, "k = {k}");
        let mut agg_peers = names("core", ((half - 1) * half + 1..=half * half).collect());
        agg_peers.extend(names("edge", (pod * half + 1..=e).collect()));
        agg_peers.sort();
        assert_eq!(peers(&format!("agg{a}")), agg_peers, "k = {k}");
        let core_peers = names("agg", (0..k).map(|p| p * half + half).collect());
        assert_eq!(
            peers(&format!("core{}", half * half)),
            core_peers,
            "k = {k}"
        );
        for p in ports {
            let fabric = nodes[p.node.idx()].kind == nodes[p.peer_node.idx()].kind;
            assert_eq!(
                p.rate.0,
                if fabric {
                    40_000_000_000
                } else {
                    10_000_000_000
                }
            );
        }
        // Path diversity toward the last host (pod k - 1) from pod 0 and inside its pod.
        let g = &sim.net.ecmp;
        let dst = id(&format!("host{}", k * k * k / 4));
        let width = |from: &str| hops(&sim.net.routing, g, id(from), dst).len();
        if k > 2 {
            assert_eq!(width("edge1"), half, "k = {k}: edge up");
            assert_eq!(width("agg1"), half, "k = {k}: aggregation up");
            assert_eq!(width(&format!("edge{}", e - 1)), half, "k = {k}: same pod");
        }
        assert_eq!(width("core1"), 1, "k = {k}: core down");
        assert_eq!(width(&format!("agg{a}")), 1, "k = {k}: aggregation down");
        assert_eq!(width(&format!("edge{e}")), 1, "k = {k}: edge down");
        let mut general = nodes.clone();
        crate::engine::net::routes_by_destination(&mut general, ports).unwrap();
        let g2 = EcmpGroups::build(&mut general, ports).unwrap();
        let general = Routing::index(&mut general).unwrap();
        for u in (0..nodes.len() as u32).map(NodeId) {
            for d in (0..nodes.len() as u32).map(NodeId) {
                if nodes[d.idx()].kind == crate::engine::net::NodeKind::Host
                    && nodes[u.idx()].kind == crate::engine::net::NodeKind::Switch
                {
                    let fast = hops(&sim.net.routing, g, u, d);
                    assert_eq!(fast, hops(&general, &g2, u, d), "k = {k}");
                }
            }
        }
    }
}

/// Every packet waiting in a port's queue must carry its size, payload and where the peer
/// forwards it (`net::Waiting`, `mq_port::QueuedRef`, filled when it was queued): its
/// departure serves it from the entry without reading the packet. Five hosts send to one
/// (queues build at its leaf's port and the senders' NICs), on single-FIFO ports and on
/// two-queue DWRR ports, checked before every event.
#[test]
fn every_queued_packet_carries_its_route_at_the_peer() {
    for queues in [
        "",
        "queues = { count = 2, scheduler = \"dwrr\", hosts = true }\n",
    ] {
        let buffers = format!("switch_buffer = \"100KB\"\nnic_buffer = \"100KB\"\n{queues}");
        let pairs = [1, 2, 4, 5, 6].map(|s| (s, 3));
        let text = leafspine_bulk("1ms", &buffers, &pairs);
        let loaded = crate::scenario::load(&text, "t.toml", &[]).unwrap();
        let (mut sim, _) = crate::scenario::build(&loaded).unwrap();
        sim.start();
        let (mut fifo, mut classes) = (0u64, 0u64);
        for _ in 0..100_000 {
            let net = &sim.net;
            let want = |h, peer| {
                let p = &net.packets[h];
                let out = net.routing.hint(&net.ecmp, peer, p);
                crate::engine::net::Waiting::new(h, p, out)
            };
            for p in &net.ports {
                for &w in &p.queue {
                    assert_eq!(w, want(w.h, p.peer_node));
                    fifo += 1;
                }
                let Some(m) = p.mq.as_ref() else { continue };
                for q in 0..m.mq.num_queues() {
                    if let Some(e) = m.mq.queue(q).head() {
                        assert_eq!(e.waiting(), want(e.h, p.peer_node));
                        assert_eq!(e.class, net.packets[e.h].class);
                        classes += 1;
                    }
                }
            }
            if sim.step().is_none() {
                break;
            }
        }
        if queues.is_empty() {
            assert!(fifo > 100_000, "{fifo}");
        } else {
            assert!(classes > 20_000, "{classes}");
        }
    }
}

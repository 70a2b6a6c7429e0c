//! Physical sanity ranges: the one table of limits the scenario validators use
//! (docs/robustness.md). A value outside its range is refused with the range; the reason for
//! each bound is written beside it. schema.txt lists the same table ("Limits"); a test
//! below checks that it names every entry of [`TABLE`].

// Times are in picoseconds, as SimTime (whose parsers use `shown` from here).

/// Rates (links, bottlenecks, rate changes, CBR and transaction rates, QCN rates): at least
/// 1 kb/s — a 1500 B frame then takes 12 s, far below any link a packet-level datacenter
/// simulator models.
pub const RATE_MIN_BPS: u64 = 1_000;
/// At most 10 Tb/s: 12.5 x the fastest standard Ethernet (800GBASE, IEEE 802.3df-2024); a
/// 64 B frame still takes 51 ps, well above the 1 ps resolution of `SimTime`.
pub const RATE_MAX_BPS: u64 = 10_000_000_000_000;
/// Durations (simulated time, delays, timers, start and stop times): at most 10^6 s (11.6
/// days simulated). `SimTime` counts picoseconds in a u64 (1.8e7 s), so a time plus any
/// timer or delay stays far from overflow.
pub const DURATION_MAX_PS: u64 = 1_000_000 * 1_000_000_000_000;
/// Sizes (buffers, pools, flow and message sizes, thresholds): at most 1 TiB. The largest
/// switch buffers are a few GB (deep-buffer routers with HBM); 1 TiB at 10 Tb/s is 0.9 s
/// of line rate, and byte counters stay far from u64 overflow.
pub const SIZE_MAX_BYTES: u64 = 1 << 40;
/// Sampling intervals (`[measure] *_interval`): at least 1 µs. A 10 Gb/s port sends one
/// 1500 B frame in 1.2 µs; finer samples repeat the same state and each sample is a row
/// of a table that grows as duration / interval.
pub const SAMPLE_INTERVAL_MIN_PS: u64 = 1_000_000;
/// Nodes (hosts and switches) of one topology: at most 100 000. Routes take O(switches x
/// nodes) entries (`engine::net::compute_routes`); 100 000 covers a k = 64 fat tree (65 536
/// hosts, the largest simulated fabrics in the literature) with room to spare.
pub const NODES_MAX: u64 = 100_000;
/// Queues per multi-queue port: at most 1024. Switch ASICs have 8 to 64 queues per port
/// (802.1Q priorities: 8); ns-2's SFQ uses 16 buckets by default.
pub const QUEUES_MAX: u64 = 1024;
/// Initial window: at most 10^6 segments (1.46 GB at MSS 1460: above the bandwidth-delay
/// product of a 10 Tb/s path with a 1 ms RTT). RFC 6928 uses 10.
pub const INIT_CWND_MAX: u64 = 1_000_000;
/// Initial windows above this many segments are legal but warned about (100 x RFC 6928's
/// IW10).
pub const INIT_CWND_WARN: u64 = 1_000;
/// Queue limits in packets (`queue_limit_pkts`): at most 10^9 (1 TiB of 1 KiB frames, as
/// `SIZE_MAX_BYTES`).
pub const QUEUE_PKTS_MAX: u64 = 1_000_000_000;

/// One entry of the limits table: the keys it covers and the range, as schema.txt prints
/// them.
pub struct Limit {
    pub keys: &'static str,
    pub range: &'static str,
}

/// Every range above, for schema.txt and its test.
pub const TABLE: &[Limit] = &[
    Limit {
        keys: "rates",
        range: "1kbps ..= 10Tbps",
    },
    Limit {
        keys: "durations",
        range: "0s ..= 1000000s",
    },
    Limit {
        keys: "sizes",
        range: "0 ..= 1TiB",
    },
    Limit {
        keys: "measure intervals",
        range: ">= 1us",
    },
    Limit {
        keys: "topology nodes",
        range: "1 ..= 100000",
    },
    Limit {
        keys: "queues.count",
        range: "1 ..= 1024",
    },
    Limit {
        keys: "tcp.init_cwnd",
        range: "1 ..= 1000000 segments",
    },
    Limit {
        keys: "queue_limit_pkts",
        range: "1 ..= 1000000000",
    },
];

/// Longest value an error message repeats: longer ones are cut, with their length, to
/// about this many characters in all.
pub const SHOWN_MAX: usize = 80;

/// `value` as an error message shows it: quoted, cut to about [`SHOWN_MAX`] characters.
pub fn shown(value: &str) -> String {
    let n = value.chars().count();
    if n <= SHOWN_MAX {
        return format!("{value:?}");
    }
    // Room for the quotes and "... (N characters)".
    let head: String = value.chars().take(SHOWN_MAX - 24).collect();
    format!("{head:?}... ({n} characters)")
}

/// The message for `value` outside `range`.
pub fn out_of_range(value: &str, range: &str) -> String {
    format!("{} is out of range: expected {range}", shown(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_lists_every_limit() {
        let schema = include_str!("../schema.txt");
        for l in TABLE {
            let line = format!("{}: {}", l.keys, l.range);
            assert!(schema.contains(&line), "schema.txt lacks {line:?}");
        }
    }

    #[test]
    fn long_values_are_cut() {
        let s = shown(&"x".repeat(5000));
        assert!(
            s.len() <= SHOWN_MAX && s.ends_with("(5000 characters)"),
            "{s}"
        );
        assert_eq!(shown("1Gbps"), "\"1Gbps\"");
    }
}

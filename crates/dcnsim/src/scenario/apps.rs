//! `[[apps]]`: one configuration struct per app kind, the enum that `kind` selects, and the
//! builders of the kinds defined here ("flows" and "mix" are in `flows.rs`, "workload" in
//! `workload.rs`).
//!
//! Defaults: every struct takes absent keys from its `Default` impl (`#[serde(default)]`),
//! where each default has its source in a comment; the builders read the fields as they are.
//! A key that is required, or whose fallback depends on other keys or on the topology, is an
//! `Option` and its builder says what absence means. `schema.txt` lists the same defaults;
//! `tests::schema_defaults` parses the values written there and compares them with these
//! impls, so the two cannot drift apart unnoticed.

use super::{Ctx, Dur, Rate, ScenarioError, Size, SizeOrUnlimited, TcpCfgFile};
use crate::base::ids::{AppId, FlowId, NodeId, PortId};
use crate::base::rng::Rng;
use crate::base::units::{Bytes, SimTime};
use crate::engine::apps::{App, Bulk, Cbr, Incast, Ping, Transactions};
use crate::engine::net::NodeKind;
use crate::engine::sim::Sim;
use crate::model::tcp::{TcpConfig, TcpFlow};
use serde::Deserialize;
use std::ops::Range;

pub use super::flows::{FlowsCfg, MixCfg};
pub use super::workload::WorkloadCfg;

/// One `[[apps]]` entry; `kind` picks the variant and only that kind's keys are accepted.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum AppCfg {
    Incast(IncastCfg),
    Bulk(BulkCfg),
    Cbr(CbrCfg),
    Flows(FlowsCfg),
    Mix(MixCfg),
    Ping(PingCfg),
    Transactions(TransactionsCfg),
    Workload(WorkloadCfg),
}

impl AppCfg {
    /// The `kind` string of the entry.
    pub fn kind(&self) -> &'static str {
        match self {
            AppCfg::Incast(_) => "incast",
            AppCfg::Bulk(_) => "bulk",
            AppCfg::Cbr(_) => "cbr",
            AppCfg::Flows(_) => "flows",
            AppCfg::Mix(_) => "mix",
            AppCfg::Ping(_) => "ping",
            AppCfg::Transactions(_) => "transactions",
            AppCfg::Workload(_) => "workload",
        }
    }

    /// The entry's `[apps.tcp]` table (UDP kinds have none).
    pub fn tcp(&self) -> Option<&TcpCfgFile> {
        match self {
            AppCfg::Incast(a) => a.tcp.as_ref(),
            AppCfg::Bulk(a) => a.tcp.as_ref(),
            AppCfg::Flows(a) => a.tcp.as_ref(),
            AppCfg::Mix(a) => a.tcp.as_ref(),
            AppCfg::Transactions(a) => a.tcp.as_ref(),
            AppCfg::Workload(a) => a.tcp.as_ref(),
            AppCfg::Cbr(_) | AppCfg::Ping(_) => None,
        }
    }
}

/// `kind = "incast"` (`engine/apps`): the client asks every server for `sru` bytes and asks
/// again when all have answered (seed 000's synchronized reads).
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct IncastCfg {
    pub client: String,
    /// Absent: every host but the client and `topology.extra_hosts`.
    pub servers: Option<Vec<String>>,
    /// Server response unit, bytes per server per round (required).
    pub sru: Option<Size>,
    pub request_delay: Dur,
    pub response_jitter: Dur,
    /// Absent: no limit (rounds until the end of the run).
    pub max_rounds: Option<u64>,
    pub tcp: Option<TcpCfgFile>,
}

impl Default for IncastCfg {
    fn default() -> Self {
        IncastCfg {
            // The receiving host of the star topology (`build_star` names it "client").
            client: "client".to_string(),
            servers: None,
            sru: None,
            // The next request goes out at once and servers answer at once: seed 000 gives no
            // delay (its request's ~50 µs trip is < 0.3 % of a round at n = 8), and the
            // synchronized answers are what make incast collapse.
            request_delay: Dur(SimTime::ZERO),
            response_jitter: Dur(SimTime::ZERO),
            max_rounds: None,
            tcp: None,
        }
    }
}

/// `kind = "bulk"`: `count` identical TCP flows from `src` to `dst`, each sending `size` bytes
/// from `start`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct BulkCfg {
    /// Required.
    pub src: Option<String>,
    /// Required.
    pub dst: Option<String>,
    pub size: SizeOrUnlimited,
    pub start: Dur,
    pub class: u8,
    pub count: u32,
    pub tcp: Option<TcpCfgFile>,
}

impl Default for BulkCfg {
    fn default() -> Self {
        BulkCfg {
            src: None,
            dst: None,
            // A long-lived flow (the TCN papers' background "bulk" traffic).
            size: SizeOrUnlimited(u64::MAX),
            start: Dur(SimTime::ZERO),
            // Class 0: the first queue of a multi-queue port, the only one of a FIFO.
            class: 0,
            // One flow per entry unless asked for more.
            count: 1,
            tcp: None,
        }
    }
}

/// `kind = "cbr"`: a UDP source sending `packet_size`-byte datagrams at `rate`.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CbrCfg {
    /// Required.
    pub src: Option<String>,
    /// Required.
    pub dst: Option<String>,
    /// Required.
    pub rate: Option<Rate>,
    pub packet_size: Size,
    pub start: Dur,
    /// Absent: until the end of the run.
    pub stop: Option<Dur>,
    pub class: u8,
}

impl Default for CbrCfg {
    fn default() -> Self {
        CbrCfg {
            src: None,
            dst: None,
            rate: None,
            // A full Ethernet frame payload (1500 B MTU), as the seed-000 UDP source.
            packet_size: Size(Bytes(1500)),
            start: Dur(SimTime::ZERO),
            stop: None,
            class: 0,
        }
    }
}

/// `kind = "ping"`: echo requests from `src` every `interval`; `dst` answers; the RTTs go to
/// table "pings".
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct PingCfg {
    /// Required.
    pub src: Option<String>,
    /// Required.
    pub dst: Option<String>,
    pub interval: Dur,
    pub packet_size: Size,
    pub start: Dur,
    /// Absent: until the end of the run.
    pub stop: Option<Dur>,
    pub class: u8,
}

impl Default for PingCfg {
    fn default() -> Self {
        PingCfg {
            src: None,
            dst: None,
            // Seed 002 (TCN Fig. 5) does not state the probe interval; 1 ms is our choice.
            interval: Dur(SimTime::from_ms(1)),
            // 64 B: the ICMP message of a default `ping` (56 data bytes + 8-byte header).
            packet_size: Size(Bytes(64)),
            start: Dur(SimTime::ZERO),
            stop: None,
            class: 0,
        }
    }
}

/// `kind = "transactions"`: messages of `size` bytes written to one persistent TCP connection
/// with exponential gaps of mean size·8/rate.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TransactionsCfg {
    /// Required.
    pub src: Option<String>,
    /// Required.
    pub dst: Option<String>,
    /// Message size (required, finite).
    pub size: Option<SizeOrUnlimited>,
    /// Offered load (required).
    pub rate: Option<Rate>,
    pub start: Dur,
    /// Absent: until the end of the run.
    pub stop: Option<Dur>,
    pub class: u8,
    pub tcp: Option<TcpCfgFile>,
}

impl Default for TransactionsCfg {
    fn default() -> Self {
        TransactionsCfg {
            src: None,
            dst: None,
            size: None,
            rate: None,
            start: Dur(SimTime::ZERO),
            stop: None,
            class: 0,
            tcp: None,
        }
    }
}

/// A host named `name` (the error names `apps.key`).
pub(super) fn host(ctx: &Ctx, sim: &Sim, name: &str, key: &str) -> Result<NodeId, ScenarioError> {
    match sim.node_by_name(name) {
        Some(id) if sim.net.nodes[id.idx()].kind == NodeKind::Host => Ok(id),
        Some(_) => Err(ctx.err(
            "apps",
            key,
            format!("{name:?} is a switch, expected a host"),
        )),
        None => {
            let hosts: Vec<&str> = sim
                .net
                .nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Host)
                .take(5)
                .map(|n| n.name.as_str())
                .collect();
            Err(ctx.err(
                "apps",
                key,
                format!("unknown host {name:?} (hosts are e.g. {hosts:?})"),
            ))
        }
    }
}

fn reachable(sim: &Sim, src: NodeId, dst: NodeId) -> bool {
    sim.net.routing.route(src, dst) != PortId::NONE
}

/// A required `src` or `dst` key of app `ai` of kind `kind`, resolved to a host.
fn end(
    ctx: &Ctx,
    sim: &Sim,
    (ai, kind): (usize, &str),
    key: &str,
    name: &Option<String>,
) -> Result<NodeId, ScenarioError> {
    let name = name
        .as_deref()
        .ok_or_else(|| ctx.err("apps", key, format!("app {ai} ({kind}) needs `{key}`")))?;
    host(ctx, sim, name, key)
}

/// The `src` and `dst` hosts of app `ai` of kind `kind`, with a route from one to the other.
fn src_dst(
    ctx: &Ctx,
    sim: &Sim,
    (ai, kind): (usize, &str),
    src: &Option<String>,
    dst: &Option<String>,
) -> Result<(NodeId, NodeId), ScenarioError> {
    let src = end(ctx, sim, (ai, kind), "src", src)?;
    let dst = end(ctx, sim, (ai, kind), "dst", dst)?;
    if src == dst || !reachable(sim, src, dst) {
        return Err(ctx.err("apps", "dst", format!("app {ai}: no route from src to dst")));
    }
    Ok((src, dst))
}

/// What every app builder gets besides its own table.
pub(super) struct AppArgs<'a> {
    pub ctx: &'a Ctx<'a>,
    /// Index of the entry in `[[apps]]`.
    pub ai: usize,
    /// The entry's TCP configuration, shared by all its flows.
    pub tcp: &'a std::sync::Arc<TcpConfig>,
}

/// Add the app(s) of entry `ai` to `sim`.
pub(super) fn build_app(args: &AppArgs, a: &AppCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let ctx = args.ctx;
    let (file, text) = (&ctx.loaded.file, &ctx.loaded.text);
    let (ai, tcp, seed) = (args.ai, args.tcp, ctx.loaded.scenario.sim.seed);
    match a {
        AppCfg::Incast(c) => app_incast(args, c, sim),
        AppCfg::Bulk(c) => app_bulk(args, c, sim),
        AppCfg::Cbr(c) => app_cbr(args, c, sim),
        AppCfg::Flows(c) => super::flows::build_flows(file, text, sim, ai, c, tcp),
        AppCfg::Mix(c) => super::flows::build_mix(file, text, sim, ai, c, tcp, seed),
        AppCfg::Workload(c) => {
            super::workload::build_workload(file, text, sim, ai, c, tcp, seed)?;
            warn_idle_workload(ctx, ai, sim);
            Ok(())
        }
        AppCfg::Ping(c) => app_ping(args, c, sim),
        AppCfg::Transactions(c) => app_transactions(args, c, sim),
    }
}

/// A workload (the last app built) whose expected gap between messages is longer than
/// the run is legal but carries nothing (the fuzzer's `load = 5e-324` was accepted
/// silently): warn with the gap.
fn warn_idle_workload(ctx: &Ctx, ai: usize, sim: &Sim) {
    let Some(crate::engine::apps::App::Workload(w)) = sim.apps.last() else {
        return;
    };
    let gap_s = 1.0 / w.arrivals.rate_per_s();
    let end_s = ctx.loaded.scenario.sim.duration.0.as_secs_f64();
    let run_s = (end_s - w.start.as_secs_f64()).max(0.0);
    if gap_s > run_s {
        let gap = if gap_s.is_finite() {
            format!("{gap_s:.3e} s")
        } else {
            "more than 1e308 s".to_string()
        };
        let msg = format!(
            "app {ai} (workload): one message every {gap} on average, longer than the \
             {run_s} s the run leaves it: the run will likely carry no message"
        );
        ctx.warn("apps", "load", &msg);
    }
}

fn app_incast(args: &AppArgs, a: &IncastCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let (ctx, ai) = (args.ctx, args.ai);
    let s = &ctx.loaded.scenario;
    let app_id = sim.apps.len() as u32;
    let client = host(ctx, sim, &a.client, "client")?;
    let servers: Vec<NodeId> = match &a.servers {
        Some(list) => list
            .iter()
            .map(|n| host(ctx, sim, n, "servers"))
            .collect::<Result<_, _>>()?,
        None => (0..sim.net.nodes.len() as u32)
            .map(NodeId)
            .filter(|&i| i != client && sim.net.nodes[i.idx()].kind == NodeKind::Host)
            .filter(|&i| {
                !s.topology
                    .extra_hosts
                    .contains(&sim.net.nodes[i.idx()].name)
            })
            .collect(),
    };
    if servers.is_empty() {
        return Err(ctx.err("apps", "servers", "an incast needs at least one server"));
    }
    let sru = a.sru.ok_or_else(|| {
        ctx.err(
            "apps",
            "sru",
            format!("app {ai} (incast) needs `sru`, the server response unit"),
        )
    })?;
    if sru.0 .0 == 0 {
        return Err(ctx.err("apps", "sru", "must be positive"));
    }
    sim.reserve_flows(servers.len())
        .map_err(|e| ctx.alloc_err(e, "topology.servers"))?;
    let mut flows = Vec::new();
    for &srv in &servers {
        if !reachable(sim, srv, client) {
            return Err(ctx.err(
                "apps",
                "servers",
                format!(
                    "no route from {} to {}",
                    sim.net.nodes[srv.idx()].name,
                    a.client
                ),
            ));
        }
        let f = TcpFlow::new(FlowId(0), srv, client, args.tcp.clone());
        flows.push(sim.add_flow(f, AppId(app_id)));
    }
    sim.apps.push(App::Incast(Incast {
        flows,
        sru: sru.0 .0,
        request_delay: a.request_delay.0,
        response_jitter: a.response_jitter.0,
        rng: Rng::new(s.sim.seed, 0x1_0000 + ai as u64),
        rounds_done: 0,
        max_rounds: a.max_rounds.unwrap_or(u64::MAX),
        pending: 0,
        round_start: SimTime::ZERO,
        round_times: Vec::new(),
        delivered: 0,
    }));
    Ok(())
}

fn app_bulk(args: &AppArgs, a: &BulkCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let ctx = args.ctx;
    let app_id = sim.apps.len() as u32;
    let (src, dst) = src_dst(ctx, sim, (args.ai, "bulk"), &a.src, &a.dst)?;
    if a.count == 0 || a.count > 100_000 {
        return Err(ctx.err("apps", "count", "expected 1..100000 flows"));
    }
    sim.reserve_flows(a.count as usize)
        .map_err(|e| ctx.alloc_err(e, "apps.count"))?;
    for k in 0..a.count {
        let mut f = TcpFlow::new(FlowId(0), src, dst, args.tcp.clone());
        f.class = a.class;
        let fid = sim.add_flow(f, AppId(app_id + k));
        sim.apps.push(App::Bulk(Bulk {
            flow: fid,
            bytes: a.size.0,
            start: a.start.0,
            finished: None,
        }));
    }
    Ok(())
}

fn app_cbr(args: &AppArgs, a: &CbrCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let (ctx, ai) = (args.ctx, args.ai);
    let (src, dst) = src_dst(ctx, sim, (ai, "cbr"), &a.src, &a.dst)?;
    let rate = a
        .rate
        .ok_or_else(|| ctx.err("apps", "rate", format!("app {ai} (cbr) needs `rate`")))?;
    let size = a.packet_size.0 .0;
    if size <= 28 || size > 65535 {
        return Err(ctx.err("apps", "packet_size", "expected 29..65535 bytes"));
    }
    sim.apps.push(App::Cbr(Cbr {
        src,
        dst,
        rate: rate.0,
        packet_size: size as u32,
        header: 28,
        start: a.start.0,
        stop: a.stop.map(|d| d.0).unwrap_or(SimTime::NEVER),
        class: a.class,
        sent_bytes: 0,
        received_bytes: 0,
    }));
    Ok(())
}

fn app_ping(args: &AppArgs, a: &PingCfg, sim: &mut Sim) -> Result<(), ScenarioError> {
    let (ctx, ai) = (args.ctx, args.ai);
    let src = end(ctx, sim, (ai, "ping"), "src", &a.src)?;
    let dst = end(ctx, sim, (ai, "ping"), "dst", &a.dst)?;
    if src == dst || !reachable(sim, src, dst) || !reachable(sim, dst, src) {
        return Err(ctx.err(
            "apps",
            "dst",
            format!("app {ai}: no route between src and dst"),
        ));
    }
    let size = a.packet_size.0 .0;
    if !(29..=65535).contains(&size) {
        return Err(ctx.err("apps", "packet_size", "expected 29..65535 bytes"));
    }
    sim.apps.push(App::Ping(Ping {
        src,
        dst,
        interval: a.interval.0,
        packet_size: size as u32,
        start: a.start.0,
        stop: a.stop.map(|d| d.0).unwrap_or(SimTime::NEVER),
        class: a.class,
        sent: 0,
        rtts: Vec::new(),
    }));
    Ok(())
}

fn app_transactions(
    args: &AppArgs,
    a: &TransactionsCfg,
    sim: &mut Sim,
) -> Result<(), ScenarioError> {
    let (ctx, ai) = (args.ctx, args.ai);
    let app_id = sim.apps.len() as u32;
    let (src, dst) = src_dst(ctx, sim, (ai, "transactions"), &a.src, &a.dst)?;
    let rate = a.rate.ok_or_else(|| {
        ctx.err(
            "apps",
            "rate",
            format!("app {ai} (transactions) needs `rate`, the offered load"),
        )
    })?;
    if rate.0 .0 == 0 {
        return Err(ctx.err("apps", "rate", "must be positive"));
    }
    let size = match a.size {
        Some(s) if s.0 > 0 && s.0 != u64::MAX => s.0,
        _ => {
            return Err(ctx.err(
                "apps",
                "size",
                format!("app {ai} (transactions) needs a finite `size` > 0"),
            ))
        }
    };
    let mut f = TcpFlow::new(FlowId(0), src, dst, args.tcp.clone());
    f.class = a.class;
    let fid = sim.add_flow(f, AppId(app_id));
    sim.apps.push(App::Transactions(Transactions {
        flow: fid,
        size,
        rate: rate.0,
        start: a.start.0,
        stop: a.stop.map(|d| d.0).unwrap_or(SimTime::NEVER),
        rng: Rng::new(ctx.loaded.scenario.sim.seed, 0x2_0000 + ai as u64),
        written: 0,
    }));
    Ok(())
}

// ------------------------------------------------------------------ error positions

/// Where an error in a scenario's text is and what it says. serde reads an internally tagged
/// enum through a buffer that keeps no positions, so an error inside an `[[apps]]` entry
/// comes back with the span of the whole `apps` array, and a bad value without its key. For
/// such an error each entry is parsed again on its own, directly as its kind's struct, in a
/// copy of `text` with everything else and the `kind` key blanked (offsets and lines
/// unchanged); the first entry that fails is the one serde stopped at, and toml now points
/// at the key. Other errors pass through.
pub(super) fn error_position(text: &str, e: &toml::de::Error) -> (Option<Range<usize>>, String) {
    let msg = e.message().trim().to_string();
    let Some(span) = e.span() else {
        return (None, msg);
    };
    match reparse_entries(text, &span) {
        Some((sp, m)) => (Some(sp), m),
        None => (Some(span), msg),
    }
}

/// The `[[apps]]` entries inside `span`, each parsed alone: the span and message of the first
/// error found (None if `span` holds no entry or every entry parses alone).
fn reparse_entries(text: &str, span: &Range<usize>) -> Option<(Range<usize>, String)> {
    #[derive(Deserialize)]
    struct Entries {
        #[serde(default)]
        apps: Vec<toml::Spanned<Entry>>,
    }
    #[derive(Deserialize)]
    struct Entry {
        kind: Option<toml::Spanned<String>>,
    }
    let entries: Entries = toml::from_str(text).ok()?;
    let starts: Vec<usize> = entries.apps.iter().map(|a| a.span().start).collect();
    for (i, entry) in entries.apps.iter().enumerate() {
        let sp = entry.span();
        if !span.contains(&sp.start) {
            continue;
        }
        // A `[[apps]]` entry owns the text up to the next one (its `[apps.tcp]` table is
        // written after it); other tables in between are ignored by the parse below.
        let inline = !text[sp.clone()].starts_with('[');
        let end = match starts.get(i + 1) {
            _ if inline => sp.end,
            Some(&next) => next,
            None => text.len(),
        };
        let kind = entry.get_ref().kind.as_ref()?;
        if let Some(found) = reparse_entry(text, sp.start..end, inline, kind) {
            return Some(found);
        }
    }
    None
}

/// Entry `region` parsed alone as kind `kind`'s struct: the span and message of its error.
fn reparse_entry(
    text: &str,
    region: Range<usize>,
    inline: bool,
    kind: &toml::Spanned<String>,
) -> Option<(Range<usize>, String)> {
    let blank = key_value_span(text, kind.span());
    let bytes: Vec<u8> = text
        .bytes()
        .enumerate()
        .map(|(i, b)| {
            let keep = region.contains(&i) && !blank.contains(&i);
            if keep || b == b'\n' {
                b
            } else {
                b' '
            }
        })
        .collect();
    let body = String::from_utf8(bytes).ok()?;
    // An inline entry (`apps = [{ ... }]`) needs an array around it to be a document.
    let prefix = if inline { "apps=[" } else { "" };
    let doc = format!("{prefix}{body}{}", if inline { "]" } else { "" });
    let (e, own) = match kind.get_ref().as_str() {
        "incast" => probe::<IncastCfg>(&doc),
        "bulk" => probe::<BulkCfg>(&doc),
        "cbr" => probe::<CbrCfg>(&doc),
        "flows" => probe::<FlowsCfg>(&doc),
        "mix" => probe::<MixCfg>(&doc),
        "ping" => probe::<PingCfg>(&doc),
        "transactions" => probe::<TransactionsCfg>(&doc),
        "workload" => probe::<WorkloadCfg>(&doc),
        _ => return None,
    };
    let e = e?;
    let sp = e.span()?;
    let sp = sp.start.saturating_sub(prefix.len())..sp.end.saturating_sub(prefix.len());
    let mut msg = e.message().trim().to_string();
    // A key of the entry itself (not of its `tcp` table) that this kind does not have.
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some((name, expected)) = rest.split_once("`, ") {
            if own.as_deref() == Some(expected) {
                msg = format!(
                    "unknown field `{name}` for kind {:?}: {expected}",
                    kind.get_ref()
                );
            }
        }
    }
    Some((sp, msg))
}

/// The error of parsing `doc` as one `[[apps]]` entry of type `T` (None if it parses), and
/// the "expected ..." list of `T`'s keys that serde writes in its unknown-field errors.
fn probe<T: serde::de::DeserializeOwned>(doc: &str) -> (Option<toml::de::Error>, Option<String>) {
    #[derive(Deserialize)]
    struct One<T> {
        #[allow(dead_code)]
        apps: Vec<T>,
    }
    // No app struct has a `kind` field (serde takes the tag), so this is always unknown.
    let own = toml::from_str::<T>("kind = 0").err().and_then(|e| {
        let m = e.message().trim().to_string();
        m.split_once("`, ").map(|(_, x)| x.to_string())
    });
    (toml::from_str::<One<T>>(doc).err(), own)
}

/// The text of `key = value` around the value at `value`: the key before it, and for an
/// inline table one comma (after it, or before it for the last key), so that blanking it
/// leaves valid TOML.
fn key_value_span(text: &str, value: Range<usize>) -> Range<usize> {
    let b = text.as_bytes();
    let mut i = value.start;
    let skip_back = |mut i: usize| {
        while i > 0 && (b[i - 1] == b' ' || b[i - 1] == b'\t') {
            i -= 1;
        }
        i
    };
    i = skip_back(i);
    if i > 0 && b[i - 1] == b'=' {
        i = skip_back(i - 1);
    }
    if i > 0 && (b[i - 1] == b'"' || b[i - 1] == b'\'') {
        let q = b[i - 1];
        i -= 1;
        while i > 0 && b[i - 1] != q {
            i -= 1;
        }
        i = i.saturating_sub(1);
    } else {
        while i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'-') {
            i -= 1;
        }
    }
    let mut end = value.end;
    while end < b.len() && (b[end] == b' ' || b[end] == b'\t') {
        end += 1;
    }
    if end < b.len() && b[end] == b',' {
        return i..end + 1;
    }
    let before = skip_back(i);
    if before > 0 && b[before - 1] == b',' {
        return before - 1..value.end;
    }
    i..value.end
}

//! A flow's TCP configuration from `[tcp]` / `[apps.tcp]` (`TcpCfgFile`): the profile's
//! defaults, then every key the scenario sets over them.

use crate::base::limits;
use crate::base::units::SimTime;
use crate::model::tcp::profile::{TcpProfile, PROFILES};
use crate::model::tcp::{cc, EcnRxPolicy, TcpConfig};
use crate::scenario::config::TcpCfgFile;
use crate::scenario::ctx::Ctx;
use crate::scenario::error::ScenarioError;

/// Build a flow's TCP configuration from a table (already merged over `[tcp]` for
/// `[apps.tcp]`): the profile's defaults, then every key the scenario sets over them. Keys
/// are checked in a fixed order, so the first bad one is the one reported.
pub(crate) fn tcp_config(
    ctx: &Ctx,
    table: &str,
    f: &TcpCfgFile,
) -> Result<TcpConfig, ScenarioError> {
    let profile = match f.profile.as_deref() {
        None => TcpProfile::Dcnsim,
        Some(p) => TcpProfile::parse(p).ok_or_else(|| {
            let names: Vec<String> = PROFILES.iter().map(|(n, _)| format!("{n:?}")).collect();
            ctx.err(
                table,
                "profile",
                format!(
                    "unknown TCP profile {p:?}: expected one of {}",
                    names.join(", ")
                ),
            )
        })?,
    };
    let mut c = profile.config(f.mss.unwrap_or(TcpConfig::default().mss));
    // Keys taken as they are (every value is valid).
    macro_rules! copy_keys {
        ($($k:ident),*) => { $( if let Some(v) = f.$k { c.$k = v; } )* };
    }
    copy_keys!(
        limited_transmit,
        timestamps,
        idle_rto_reset,
        exit_cwnd_ns2,
        rto_reset_on_ack,
        whole_segments,
        recover_strict,
        recovery_maxburst,
        ssthresh_from_cwnd,
        rack,
        tlp,
        dsack,
        idle_restart,
        handshake
    );
    // Keys given in a unit type (a size or a duration), taken as they are.
    macro_rules! copy_units {
        ($($k:ident),*) => { $( if let Some(v) = f.$k { c.$k = v.0; } )* };
    }
    copy_units!(
        init_ssthresh,
        min_rto,
        max_rto,
        rto_granularity,
        delack_timeout,
        rwnd
    );
    if let Some(v) = f.rtt_tick {
        if v.0 > SimTime::from_ms(1000) {
            return Err(ctx.err(
                table,
                "rtt_tick",
                "expected \"0s\" (exact RFC 6298 estimator) up to \"1s\"",
            ));
        }
        c.rtt_tick = v.0;
    }
    tcp_algorithms(ctx, table, f, profile, &mut c)?;
    tcp_numbers(ctx, table, f, &mut c)?;
    Ok(c)
}

/// The congestion control (from the registry `model/tcp/cc`) and its parameters, SACK and
/// RACK-TLP, ECN and the receiver policy.
fn tcp_algorithms(
    ctx: &Ctx,
    table: &str,
    f: &TcpCfgFile,
    profile: TcpProfile,
    c: &mut TcpConfig,
) -> Result<(), ScenarioError> {
    if let Some(name) = &f.cc {
        let Some(entry) = cc::lookup(name) else {
            let expected = cc::expected_names();
            let msg = format!("unknown congestion control {name:?}: expected {expected}");
            return Err(ctx.err(table, "cc", msg));
        };
        if entry.sack {
            if f.sack == Some(false) {
                return Err(ctx.err(table, "sack", format!("cc = {name:?} needs sack = true")));
            }
            c.sack = true;
        }
        c.cc = (entry.config)(profile);
    }
    if let Some(v) = f.sack {
        c.sack = v;
    }
    // RFC 8985: RACK needs SACK, TLP needs RACK. A profile's RACK-TLP turns off quietly
    // with sack = false; a key that asks for it does not.
    if c.rack && !c.sack {
        if f.rack == Some(true) {
            return Err(ctx.err(table, "rack", "rack = true needs sack = true (RFC 8985)"));
        }
        c.rack = false;
    }
    if c.dsack && !c.sack {
        if f.dsack == Some(true) {
            return Err(ctx.err(table, "dsack", "dsack = true needs sack = true (RFC 2883)"));
        }
        c.dsack = false;
    }
    if c.tlp && !c.rack {
        if f.tlp == Some(true) {
            return Err(ctx.err(table, "tlp", "tlp = true needs rack = true (RFC 8985)"));
        }
        c.tlp = false;
    }
    c.ecn = match f.ecn {
        Some(false) if c.cc.implies_ecn() => {
            return Err(ctx.err(
                table,
                "ecn",
                format!(
                    "cc = {:?} needs ECN: remove ecn = false or use cc = \"newreno\"",
                    c.cc.name()
                ),
            ))
        }
        Some(v) => v,
        None => c.cc.implies_ecn(),
    };
    c.ecn_rx = match f.receiver.as_deref() {
        Some("none") => EcnRxPolicy::Off,
        Some("standard") | Some("rfc3168") => EcnRxPolicy::Standard,
        Some("dctcp") => EcnRxPolicy::Dctcp,
        Some("odctcp") => EcnRxPolicy::Odctcp,
        Some(other) => {
            return Err(ctx.err(
                table,
                "receiver",
                format!("unknown receiver {other:?}: expected \"standard\", \"dctcp\", \"odctcp\" or \"none\""),
            ))
        }
        // Default: the receiver that matches the sender.
        None if !c.ecn => EcnRxPolicy::Off,
        None => c.cc.default_receiver(),
    };
    if let Some(g) = f.dctcp_g {
        if !(g > 0.0 && g <= 1.0) {
            return Err(ctx.err(
                table,
                "dctcp_g",
                format!("{g} is out of range: expected 0 < g <= 1"),
            ));
        }
        if let Some(d) = c.cc.dctcp_mut() {
            d.g = g;
        }
    }
    if let Some(a) = f.dctcp_alpha_init {
        if !(0.0..=1.0).contains(&a) {
            return Err(ctx.err(
                table,
                "dctcp_alpha_init",
                format!("{a} is out of range: expected 0..1"),
            ));
        }
        if let Some(d) = c.cc.dctcp_mut() {
            d.alpha_init = a;
        }
    }
    dctcp_switches(ctx, table, f, c)
}

/// The on/off choices of DCTCP (`dctcp_recovery_mode`, `dctcp_reset_alpha_after_idle`,
/// `dctcp_grow_on_ece`, `dctcp_loss_after_ece`); checked for every algorithm, applied to
/// the DCTCP family only.
fn dctcp_switches(
    ctx: &Ctx,
    table: &str,
    f: &TcpCfgFile,
    c: &mut TcpConfig,
) -> Result<(), ScenarioError> {
    let halve = match f.dctcp_loss_after_ece.as_deref() {
        None => None,
        Some("hold") => Some(false),
        Some("halve") => Some(true),
        Some(other) => {
            return Err(ctx.err(
                table,
                "dctcp_loss_after_ece",
                format!("unknown {other:?}: expected \"hold\" or \"halve\""),
            ))
        }
    };
    if let Some(d) = c.cc.dctcp_mut() {
        if let Some(v) = f.dctcp_recovery_mode {
            d.recovery_mode = v;
        }
        if let Some(v) = f.dctcp_reset_alpha_after_idle {
            d.reset_alpha_after_idle = v;
        }
        if let Some(v) = f.dctcp_grow_on_ece {
            d.grow_on_ece_ack = v;
        }
        if let Some(v) = halve {
            d.halve_on_loss_after_ece = v;
        }
    }
    Ok(())
}

/// Sizes, windows and timers with a range to check.
fn tcp_numbers(
    ctx: &Ctx,
    table: &str,
    f: &TcpCfgFile,
    c: &mut TcpConfig,
) -> Result<(), ScenarioError> {
    if let Some(v) = f.abc_limit {
        if v > 16 {
            return Err(ctx.err(table, "abc_limit", "expected 0 (off) to 16 segments"));
        }
        c.abc_limit = v;
    }
    if let Some(v) = f.mss {
        if !(64..=9000).contains(&v) {
            return Err(ctx.err(
                table,
                "mss",
                format!("{v} is out of range: expected 64..9000 bytes"),
            ));
        }
        c.mss = v;
    }
    if let Some(v) = f.header {
        if v > 200 {
            return Err(ctx.err(table, "header", "expected at most 200 bytes"));
        }
        c.header = v;
    }
    if let Some(v) = f.init_cwnd {
        let range = (1, limits::INIT_CWND_MAX);
        ctx.in_range(
            table,
            "init_cwnd",
            v.into(),
            range,
            " segments (limits: tcp.init_cwnd)",
        )?;
        c.init_cwnd = v;
    }
    if let Some(v) = f.initial_rto {
        if v.0 == SimTime::ZERO {
            return Err(ctx.err(table, "initial_rto", "must be positive"));
        }
        c.initial_rto = v.0;
    }
    if let Some(v) = f.delayed_ack {
        if v == 0 {
            return Err(ctx.err(
                table,
                "delayed_ack",
                "expected 1 (off) or more segments per ACK",
            ));
        }
        c.delack_count = v;
    }
    if let Some(v) = f.dupack_threshold {
        if v == 0 {
            return Err(ctx.err(table, "dupack_threshold", "expected at least 1"));
        }
        c.dupack_threshold = v;
    }
    if c.max_rto < c.min_rto {
        return Err(ctx.err(table, "max_rto", "must not be below min_rto"));
    }
    Ok(())
}

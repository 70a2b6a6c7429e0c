//! Recipe: a congestion control written outside the crate (here, in this test) and run
//! through the seam of `model/tcp/cc`: implement `CongestionControl` (every method left out
//! keeps NewReno's behaviour), register a name with `cc::register`, and a scenario's
//! `tcp.cc` picks it like a built-in. A controller added to the crate instead is one file
//! in `model/tcp/cc/` and one `CcEntry` line in `cc::BUILTIN`.

use crate::helpers::{f64s, run, table};
use dcnsim::model::tcp::cc::{self, CcConfig, CcEntry, CongestionControl};
use dcnsim::model::tcp::{Sender, TcpConfig};

/// AIMD with multiplicative decrease β = 0.7 on ECE and on loss (NewReno growth). It
/// reports the number of ECE cuts it made as its per-flow value (the flows table's
/// `alpha` column), which proves that it, not a built-in, was in charge.
#[derive(Clone, Debug, Default)]
struct Aimd07 {
    cuts: u32,
}

impl CongestionControl for Aimd07 {
    fn name(&self) -> &'static str {
        "aimd07"
    }
    fn ssthresh_on_loss(&self, _snd: &Sender, cfg: &TcpConfig, flight: u64) -> u64 {
        (flight * 7 / 10).max(2 * cfg.mss as u64)
    }
    fn on_ece(&mut self, snd: &mut Sender, cfg: &TcpConfig) {
        snd.cwnd = (snd.cwnd * 7 / 10).max(2 * cfg.mss as u64);
        snd.ssthresh = snd.cwnd;
        self.cuts += 1;
    }
    fn alpha(&self) -> Option<f64> {
        Some(self.cuts as f64)
    }
}

/// 16 servers answer one client through one switch port with step ECN marking at 20
/// packets (the incast of Devkota 2010 with ECN).
fn incast(cc: &str) -> String {
    format!(
        r#"
[sim]
duration = "50ms"
seed = 1
[topology]
kind = "star"
servers = 16
link_rate = "1Gbps"
link_delay = "25us"
switch_buffer = "256KiB"
aqm = {{ kind = "step", k = "20pkts" }}
[tcp]
cc = "{cc}"
ecn = true
min_rto = "10ms"
[[apps]]
kind = "incast"
client = "client"
sru = "64KB"
"#
    )
}

#[test]
fn a_congestion_control_defined_in_a_test_runs_an_incast() {
    cc::register(CcEntry {
        name: "aimd07",
        config: |_profile| CcConfig::custom("aimd07", || Box::new(Aimd07::default())),
        sack: false,
    });
    let t = run(&incast("aimd07"));
    let flows = table(&t, "flows");
    let cuts = f64s(flows, "alpha");
    let reductions = f64s(flows, "ecn_reductions");
    assert_eq!(cuts.len(), 16);
    // Every ECE reduction the TCP core counted was made by the toy.
    assert_eq!(cuts, reductions);
    assert!(
        reductions.iter().sum::<f64>() > 0.0,
        "no ECE cut: {reductions:?}"
    );
    // NewReno reports no per-flow value (-1) and cuts by its own rule.
    let t = run(&incast("newreno"));
    let flows = table(&t, "flows");
    assert!(f64s(flows, "alpha").iter().all(|a| *a == -1.0));
    assert!(f64s(flows, "ecn_reductions").iter().sum::<f64>() > 0.0);
}

#[test]
fn an_unknown_name_lists_the_registry() {
    let e = dcnsim::scenario::load(&incast("cubic-not-here"), "x.toml", &[]).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("tcp.cc"));
    let msg = e.to_string();
    assert!(
        msg.contains(r#"expected "newreno", "reno", "sack", "dctcp", "odctcp""#),
        "{msg}"
    );
}

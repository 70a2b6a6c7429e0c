//! Workload generators: empirical flow-size distributions, Poisson flow arrivals and PIAS
//! priority tagging (docs/models.md §5.5, §6). Pure and deterministic; not yet wired
//! into the simulation.
//!
//! Sources:
//! - docs/models.md §6.1 (the packet-unit CDF tables of the TCN / MQ-ECN / PIAS ns-2
//!   code, `scripts/CDF_{dctcp,vl2,hadoop,cache}.tcl`, and the hard-coded mean flow sizes of
//!   TCN-NS2 `spine_empirical_pias_diffserv.tcl`), §6.2 (byte versions: DCTCP web search, VL2
//!   data mining, Facebook cache, HPCC's Facebook Hadoop "FbHdp"), §5.5 (PIAS tagging and the
//!   8-level PIAS thresholds of PIAS-NS2 `run_pias_dctcp.py`).
//! - ns-2 `tools/ranvar.cc`, `RandomVariable/Empirical` (behaviour re-stated below, not copied),
//!   and the flow-size line of the ns-2 `tcp-common-opt*.tcl` scripts:
//!   `size = ceil(value) × 1460`.
//! - Bai et al., *Enabling ECN over Generic Packet Scheduling* (TCN, CoNEXT'16) §6; Alizadeh et
//!   al., DCTCP (SIGCOMM'10); Greenberg et al., VL2 (SIGCOMM'09); Roy et al., *Inside the Social
//!   Network's (Datacenter) Network* (SIGCOMM'15); Bai et al., PIAS (NSDI'15).
//!
//! # Sampling semantics
//! An [`EmpiricalCdf`] is a list of points `(v_i, c_i)`, values and cdfs both non-decreasing,
//! the last cdf exactly 1. For `u ∈ [0, 1)` let `i` be the smallest index with `c_i ≥ u`
//! (ns-2's `lookup`). Then
//! - if `i = 0` (that is `u ≤ c_0`) the sample is `v_0`: a first point with `c_0 > 0` is an
//!   atom of probability `c_0` at `v_0`;
//! - else if `u < c_i` the sample is the linear interpolation
//!   `v_{i−1} + (u − c_{i−1})·(v_i − v_{i−1})/(c_i − c_{i−1})` (ns-2 `interpolation_ 1`);
//! - else (`u = c_i`) the sample is `v_i`.
//!
//! ns-2 `interpolation_ 2` ("INTER_INTEGRAL") applies `ceil` to the interpolated value only;
//! the ns-2 scripts then apply `ceil` again and multiply by 1460. We implement the composition
//! `ceil(sample(u))` ([`EmpiricalCdf::sample_ceil`]), which equals the ns-2 result for every `u`
//! (`ceil` is idempotent on the interpolated branch; on the two other branches ns-2 returns a
//! table value that the script's `ceil` rounds the same way). A flow size is then
//! `max(1, ceil(sample(u))) × unit_bytes` ([`FlowSizeDist`]); the `max(1, ·)` only matters for
//! byte tables whose first value is 0 and keeps every flow non-empty.
//!
//! The piecewise-linear mean ([`EmpiricalCdf::mean`]) is
//! `c_0·v_0 + Σ_i (c_i − c_{i−1})·(v_{i−1} + v_i)/2`, the mean of the `interpolation_ 1` sampler;
//! [`EmpiricalCdf::mean_ceil`] is the exact mean of the ceil sampler (about half a unit more
//! per segment of non-zero width).

use crate::base::packet::{Kind, Packet};
use crate::base::rng::Rng;
use crate::base::units::SimTime;

/// Payload bytes per packet in the TCN / MQ-ECN / PIAS ns-2 scripts (`pktSize 1460`).
pub const NS2_PACKET_PAYLOAD: u64 = 1460;

/// Tolerance accepted for the last cdf being 1 (it is then set to exactly 1).
const END_TOLERANCE: f64 = 1e-9;

/// An empirical cumulative distribution given by points `(value, cdf)`; see the module
/// documentation for the sampling rule.
#[derive(Clone, Debug, PartialEq)]
pub struct EmpiricalCdf {
    points: Vec<(f64, f64)>,
}

/// Validation shared by [`EmpiricalCdf::new`] and the file parser: returns the offending point
/// index and a message.
fn validate(points: &mut [(f64, f64)]) -> Result<(), (usize, String)> {
    if points.is_empty() {
        return Err((
            0,
            "no points: a CDF needs at least one (value, cdf) point".into(),
        ));
    }
    for (i, &(v, c)) in points.iter().enumerate() {
        if !v.is_finite() || v < 0.0 {
            return Err((i, format!("value {v} must be a finite number ≥ 0")));
        }
        if !c.is_finite() || !(0.0..=1.0 + END_TOLERANCE).contains(&c) {
            return Err((
                i,
                format!("cdf {c} must be in [0, 1] (divide percentages by 100)"),
            ));
        }
        if i > 0 {
            let (pv, pc) = points[i - 1];
            if v < pv {
                return Err((
                    i,
                    format!("value {v} is below the previous point's value {pv} (values must not decrease)"),
                ));
            }
            if c < pc {
                return Err((
                    i,
                    format!("cdf {c} is below the previous point's cdf {pc} (the CDF must not decrease)"),
                ));
            }
        }
    }
    let last = points.len() - 1;
    let c = points[last].1;
    if (c - 1.0).abs() > END_TOLERANCE {
        return Err((
            last,
            format!("the last point has cdf {c}; the CDF must end at 1"),
        ));
    }
    points[last].1 = 1.0;
    Ok(())
}

/// `∫_a^b ceil(x) dx` for `0 ≤ a ≤ b`, in closed form.
fn ceil_integral(a: f64, b: f64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let k = a.ceil();
    if b <= k {
        return (b - a) * k;
    }
    let m = b.floor(); // m ≥ k
    (k - a) * k + (m - k) * (m + k + 1.0) / 2.0 + (b - m) * (m + 1.0)
}

impl EmpiricalCdf {
    /// Build from `(value, cdf)` points. Values must be finite and ≥ 0, values and cdfs
    /// non-decreasing, cdfs in [0, 1], and the last cdf 1 (within 1e-9). The first cdf may be
    /// above 0: it is then the probability of exactly the first value. Errors name the
    /// offending point by its 0-based index.
    pub fn new(points: Vec<(f64, f64)>) -> Result<EmpiricalCdf, String> {
        let mut points = points;
        validate(&mut points).map_err(|(i, m)| format!("CDF point {i}: {m}"))?;
        Ok(EmpiricalCdf { points })
    }

    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    pub fn min_value(&self) -> f64 {
        self.points[0].0
    }

    pub fn max_value(&self) -> f64 {
        self.points[self.points.len() - 1].0
    }

    /// Inverse-CDF sample with linear interpolation (ns-2 `interpolation_ 1`). `u` is meant to
    /// be uniform in [0, 1); values outside [0, 1] are clamped and NaN is read as 0.
    pub fn sample(&self, u: f64) -> f64 {
        let u = if u.is_nan() { 0.0 } else { u.clamp(0.0, 1.0) };
        let p = &self.points;
        // Smallest index whose cdf is ≥ u (ns-2 `lookup`).
        let i = p.partition_point(|&(_, c)| c < u);
        if i == 0 {
            return p[0].0;
        }
        if i >= p.len() {
            return p[p.len() - 1].0; // unreachable: the last cdf is 1
        }
        let (v0, c0) = p[i - 1];
        let (v1, c1) = p[i];
        if u < c1 {
            v0 + (u - c0) * (v1 - v0) / (c1 - c0)
        } else {
            v1
        }
    }

    /// ns-2 `interpolation_ 2` followed by the scripts' `ceil`: `ceil(sample(u))`.
    pub fn sample_ceil(&self, u: f64) -> f64 {
        self.sample(u).ceil()
    }

    /// Mean of the piecewise-linear distribution (the `interpolation_ 1` sampler).
    pub fn mean(&self) -> f64 {
        let p = &self.points;
        let mut m = p[0].1 * p[0].0;
        for w in p.windows(2) {
            let ((v0, c0), (v1, c1)) = (w[0], w[1]);
            m += (c1 - c0) * (v0 + v1) / 2.0;
        }
        m
    }

    /// Variance of the piecewise-linear distribution.
    pub fn variance(&self) -> f64 {
        let p = &self.points;
        let mut m2 = p[0].1 * p[0].0 * p[0].0;
        for w in p.windows(2) {
            let ((v0, c0), (v1, c1)) = (w[0], w[1]);
            m2 += (c1 - c0) * (v0 * v0 + v0 * v1 + v1 * v1) / 3.0;
        }
        let m = self.mean();
        (m2 - m * m).max(0.0)
    }

    /// Exact mean of `max(1, ceil(sample(u)))` for uniform `u`, the quantity a
    /// [`FlowSizeDist`] multiplies by its unit.
    pub fn mean_ceil(&self) -> f64 {
        let atom = |v: f64| v.ceil().max(1.0);
        let p = &self.points;
        let mut m = p[0].1 * atom(p[0].0);
        for w in p.windows(2) {
            let ((v0, c0), (v1, c1)) = (w[0], w[1]);
            let dc = c1 - c0;
            if dc <= 0.0 {
                continue;
            }
            if v1 > v0 {
                // ceil(x) ≥ 1 for every x > 0, so the max(1, ·) never binds inside a segment
                // except at the single point x = 0.
                m += dc * ceil_integral(v0, v1) / (v1 - v0);
            } else {
                m += dc * atom(v1);
            }
        }
        m
    }
}

/// Parse a CDF file: one point per line, `value cdf` or `value count cdf` (the ns-2
/// `RandomVariable/Empirical` format, whose middle column is ignored); `#` starts a comment;
/// blank lines are skipped. `file` names the source in error messages, which have the form
/// `file:line: what was expected`.
pub fn parse_cdf_text(text: &str, file: &str) -> Result<EmpiricalCdf, String> {
    let mut points = Vec::new();
    let mut lines = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        let fields: Vec<&str> = content.split_whitespace().collect();
        if fields.len() != 2 && fields.len() != 3 {
            return Err(format!(
                "{file}:{line_no}: expected 'value cdf' or 'value count cdf' (2 or 3 numbers), found {} fields",
                fields.len()
            ));
        }
        let num = |s: &str, what: &str| -> Result<f64, String> {
            s.parse::<f64>().map_err(|_| {
                format!("{file}:{line_no}: expected a number for the {what}, found '{s}'")
            })
        };
        let v = num(fields[0], "value (column 1)")?;
        if fields.len() == 3 {
            num(fields[1], "count (column 2)")?;
        }
        let c = num(fields[fields.len() - 1], "cdf (last column)")?;
        points.push((v, c));
        lines.push(line_no);
    }
    if points.is_empty() {
        return Err(format!(
            "{file}: no CDF points found (expected lines 'value cdf')"
        ));
    }
    match validate(&mut points) {
        Ok(()) => Ok(EmpiricalCdf { points }),
        Err((i, m)) => Err(format!("{file}:{}: {m}", lines[i])),
    }
}

/// Read and parse a CDF file (see [`parse_cdf_text`]).
pub fn load_cdf_file(path: &str) -> Result<EmpiricalCdf, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: cannot read: {e}"))?;
    parse_cdf_text(&text, path)
}

/// A flow-size distribution: an empirical CDF in some unit, sampled as
/// `max(1, ceil(sample(u))) × unit_bytes` bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSizeDist {
    pub name: String,
    pub cdf: EmpiricalCdf,
    pub unit_bytes: u64,
}

/// Names accepted by [`FlowSizeDist::builtin`].
pub const BUILTIN_NAMES: [&str; 10] = [
    "websearch",
    "datamining",
    "hadoop",
    "cache",
    "websearch-bytes",
    "datamining-bytes",
    "cache-bytes",
    "hadoop-fbhdp-bytes",
    "alistorage2019-bytes",
    "googlerpc2008-bytes",
];

/// docs/models.md §6.2: two tables of the HPCC authors' traffic generator, kept as the text
/// files beside this one (their percentages as fractions).
const ALISTORAGE2019_TEXT: &str = include_str!("workload_data/alistorage2019.txt");
const GOOGLERPC2008_TEXT: &str = include_str!("workload_data/googlerpc2008.txt");

/// docs/models.md §6.1, TCN-NS2 `scripts/CDF_dctcp.tcl` (packets of 1460 B).
const WEBSEARCH_PKTS: [(f64, f64); 12] = [
    (6.0, 0.0),
    (6.0, 0.15),
    (13.0, 0.2),
    (19.0, 0.3),
    (33.0, 0.4),
    (53.0, 0.53),
    (133.0, 0.6),
    (667.0, 0.7),
    (1333.0, 0.8),
    (3333.0, 0.9),
    (6667.0, 0.97),
    (20000.0, 1.0),
];

/// docs/models.md §6.1, TCN-NS2 `scripts/CDF_vl2.tcl` (packets).
const DATAMINING_PKTS: [(f64, f64); 9] = [
    (1.0, 0.0),
    (1.0, 0.5),
    (2.0, 0.6),
    (3.0, 0.7),
    (7.0, 0.8),
    (267.0, 0.9),
    (2107.0, 0.95),
    (66667.0, 0.99),
    (666667.0, 1.0),
];

/// docs/models.md §6.1, TCN-NS2 `scripts/CDF_hadoop.tcl` (packets).
const HADOOP_PKTS: [(f64, f64); 15] = [
    (1.0, 0.0),
    (24.0, 0.1),
    (30.0, 0.2),
    (33.0, 0.3),
    (33.0, 0.4),
    (50.0, 0.5),
    (53.0, 0.6),
    (67.0, 0.7),
    (120.0, 0.8),
    (160.0, 0.9),
    (200.0, 0.95),
    (667.0, 0.96),
    (6667.0, 0.97),
    (66667.0, 0.99),
    (333333.0, 1.0),
];

/// docs/models.md §6.1, TCN-NS2 `scripts/CDF_cache.tcl` (packets; TG's older copy has 0.36 at 1).
const CACHE_PKTS: [(f64, f64); 12] = [
    (1.0, 0.0),
    (1.0, 0.35),
    (2.0, 0.4),
    (7.0, 0.46),
    (13.0, 0.5),
    (67.0, 0.6),
    (133.0, 0.7),
    (667.0, 0.78),
    (1333.0, 0.8),
    (2000.0, 0.9),
    (2667.0, 0.99),
    (33333.0, 1.0),
];

/// docs/models.md §6.2, DCTCP web search in bytes (HPCC `WebSearch_distribution.txt`, TG
/// `DCTCP_CDF.txt`).
const WEBSEARCH_BYTES: [(f64, f64); 12] = [
    (0.0, 0.0),
    (10_000.0, 0.15),
    (20_000.0, 0.2),
    (30_000.0, 0.3),
    (50_000.0, 0.4),
    (80_000.0, 0.53),
    (200_000.0, 0.6),
    (1_000_000.0, 0.7),
    (2_000_000.0, 0.8),
    (5_000_000.0, 0.9),
    (10_000_000.0, 0.97),
    (30_000_000.0, 1.0),
];

/// docs/models.md §6.2, VL2 data mining in bytes (TG `VL2_CDF.txt`; 0.98 at 100 MB, where the
/// packet table has 0.99).
const DATAMINING_BYTES: [(f64, f64); 13] = [
    (0.0, 0.0),
    (180.0, 0.1),
    (216.0, 0.2),
    (560.0, 0.3),
    (900.0, 0.4),
    (1100.0, 0.5),
    (1870.0, 0.6),
    (3160.0, 0.7),
    (10_000.0, 0.8),
    (400_000.0, 0.9),
    (3_160_000.0, 0.95),
    (100_000_000.0, 0.98),
    (1_000_000_000.0, 1.0),
];

/// docs/models.md §6.2, Facebook cache in bytes (BUFMGMT `CDF_cache.tcl`).
const CACHE_BYTES: [(f64, f64); 12] = [
    (500.0, 0.0),
    (1500.0, 0.35),
    (3000.0, 0.4),
    (10_000.0, 0.46),
    (20_000.0, 0.5),
    (100_000.0, 0.6),
    (200_000.0, 0.7),
    (1_000_000.0, 0.78),
    (2_000_000.0, 0.8),
    (3_000_000.0, 0.9),
    (4_000_000.0, 0.99),
    (50_000_000.0, 1.0),
];

/// docs/models.md §6.2, HPCC `traffic_gen/FbHdp_distribution.txt` (bytes; cdf given there in %).
const HADOOP_FBHDP_BYTES_PERCENT: [(f64, f64); 20] = [
    (0.0, 0.0),
    (100.0, 1.0),
    (200.0, 2.0),
    (300.0, 5.0),
    (350.0, 15.0),
    (400.0, 20.0),
    (500.0, 30.0),
    (600.0, 40.0),
    (700.0, 50.0),
    (1000.0, 60.0),
    (2000.0, 67.0),
    (7000.0, 70.0),
    (30_000.0, 72.0),
    (50_000.0, 82.0),
    (80_000.0, 87.0),
    (120_000.0, 90.0),
    (300_000.0, 95.0),
    (1_000_000.0, 97.5),
    (2_000_000.0, 99.0),
    (10_000_000.0, 100.0),
];

impl FlowSizeDist {
    /// A distribution from a CDF whose values are in units of `unit_bytes` (1460 for the ns-2
    /// packet tables, 1 for byte tables).
    pub fn new(name: &str, cdf: EmpiricalCdf, unit_bytes: u64) -> Result<FlowSizeDist, String> {
        if unit_bytes == 0 {
            return Err(format!(
                "flow-size distribution '{name}': unit_bytes must be ≥ 1"
            ));
        }
        Ok(FlowSizeDist {
            name: name.to_string(),
            cdf,
            unit_bytes,
        })
    }

    /// One of [`BUILTIN_NAMES`]: the packet tables of docs/models.md §6.1 (× 1460 B) and the byte
    /// tables of §6.2.
    pub fn builtin(name: &str) -> Result<FlowSizeDist, String> {
        let (pts, unit): (Vec<(f64, f64)>, u64) = match name {
            "websearch" => (WEBSEARCH_PKTS.to_vec(), NS2_PACKET_PAYLOAD),
            "datamining" => (DATAMINING_PKTS.to_vec(), NS2_PACKET_PAYLOAD),
            "hadoop" => (HADOOP_PKTS.to_vec(), NS2_PACKET_PAYLOAD),
            "cache" => (CACHE_PKTS.to_vec(), NS2_PACKET_PAYLOAD),
            "websearch-bytes" => (WEBSEARCH_BYTES.to_vec(), 1),
            "datamining-bytes" => (DATAMINING_BYTES.to_vec(), 1),
            "cache-bytes" => (CACHE_BYTES.to_vec(), 1),
            "hadoop-fbhdp-bytes" => (
                HADOOP_FBHDP_BYTES_PERCENT
                    .iter()
                    .map(|&(v, c)| (v, c / 100.0))
                    .collect(),
                1,
            ),
            "alistorage2019-bytes" => (
                parse_cdf_text(ALISTORAGE2019_TEXT, "alistorage2019.txt")?.points,
                1,
            ),
            "googlerpc2008-bytes" => (
                parse_cdf_text(GOOGLERPC2008_TEXT, "googlerpc2008.txt")?.points,
                1,
            ),
            _ => {
                return Err(format!(
                    "unknown flow-size distribution '{name}' (built-in: {})",
                    BUILTIN_NAMES.join(", ")
                ))
            }
        };
        FlowSizeDist::new(name, EmpiricalCdf::new(pts)?, unit)
    }

    /// Flow size in bytes for a given `u ∈ [0, 1)`.
    pub fn sample_bytes_at(&self, u: f64) -> u64 {
        let units = self.cdf.sample_ceil(u).max(1.0);
        (units as u64).saturating_mul(self.unit_bytes)
    }

    /// Draw a flow size in bytes.
    pub fn sample_bytes(&self, rng: &mut Rng) -> u64 {
        self.sample_bytes_at(rng.uniform())
    }

    /// Exact mean of [`FlowSizeDist::sample_bytes`].
    pub fn mean_bytes(&self) -> f64 {
        self.cdf.mean_ceil() * self.unit_bytes as f64
    }

    /// Piecewise-linear mean × unit (the figure docs/models.md quotes).
    pub fn mean_bytes_linear(&self) -> f64 {
        self.cdf.mean() * self.unit_bytes as f64
    }
}

/// Mean flow sizes (bytes) hard-coded in TCN-NS2 `spine_empirical_pias_diffserv.tcl` to set
/// the Poisson rate, for the packet tables (docs/models.md §6.1). Use them as the mean override of
/// [`PoissonArrivals::for_load`] to reproduce that script's arrival rates exactly.
pub fn tcn_script_mean_bytes(name: &str) -> Option<f64> {
    match name {
        "websearch" => Some(1_671_357.0),
        "datamining" => Some(7_495_019.0),
        "hadoop" => Some(4_149_016.0),
        "cache" => Some(913_703.0),
        _ => None,
    }
}

/// PIAS-NS2 `run_pias_dctcp.py` uses `meanFlowSize = 1138 × 1460` for web search.
pub const PIAS_SCRIPT_WEBSEARCH_MEAN_BYTES: f64 = 1138.0 * 1460.0;

/// Poisson flow arrivals: exponential inter-arrival times with rate `rate_per_s`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoissonArrivals {
    rate_per_s: f64,
}

impl PoissonArrivals {
    pub fn new(rate_per_s: f64) -> Result<PoissonArrivals, String> {
        if !rate_per_s.is_finite() || rate_per_s <= 0.0 {
            return Err(format!(
                "Poisson arrival rate must be a finite number > 0 per second, got {rate_per_s}"
            ));
        }
        Ok(PoissonArrivals { rate_per_s })
    }

    /// Rate that offers `load` of a link of `link_rate_bps` with flows of mean
    /// `mean_flow_bytes` (payload bytes, as in the ns-2 scripts): λ = load·C/(8·mean).
    /// Pass [`FlowSizeDist::mean_bytes`] or an override such as [`tcn_script_mean_bytes`].
    pub fn for_load(
        load: f64,
        link_rate_bps: f64,
        mean_flow_bytes: f64,
    ) -> Result<PoissonArrivals, String> {
        if !load.is_finite() || load <= 0.0 {
            return Err(format!("load must be a finite number > 0, got {load}"));
        }
        if !link_rate_bps.is_finite() || link_rate_bps <= 0.0 {
            return Err(format!(
                "link rate must be a finite number > 0 b/s, got {link_rate_bps}"
            ));
        }
        if !mean_flow_bytes.is_finite() || mean_flow_bytes <= 0.0 {
            return Err(format!(
                "mean flow size must be a finite number > 0 bytes, got {mean_flow_bytes}"
            ));
        }
        PoissonArrivals::new(load * link_rate_bps / (8.0 * mean_flow_bytes))
    }

    /// The process seen by one of `n` equal sources sharing this rate (the TCN script gives
    /// each sender→receiver pair λ/(S − 1)).
    pub fn split(&self, n: usize) -> Result<PoissonArrivals, String> {
        if n == 0 {
            return Err("cannot split a Poisson arrival rate among 0 sources".into());
        }
        PoissonArrivals::new(self.rate_per_s / n as f64)
    }

    pub fn rate_per_s(&self) -> f64 {
        self.rate_per_s
    }

    pub fn mean_gap_s(&self) -> f64 {
        1.0 / self.rate_per_s
    }

    /// Next inter-arrival time in seconds (exponential, `Rng::exp`).
    pub fn next_gap_s(&self, rng: &mut Rng) -> f64 {
        rng.exp(self.mean_gap_s())
    }

    /// Next inter-arrival time rounded to the nearest picosecond.
    pub fn next_gap(&self, rng: &mut Rng) -> SimTime {
        SimTime::from_secs_f64(self.next_gap_s(rng))
    }
}

/// The two-priority PIAS threshold of the TCN simulations (`pias_thresh = 100000` bytes).
pub const PIAS_TCN_THRESHOLD_BYTES: u64 = 100_000;

/// Two-priority PIAS as in TCN §6 / docs/models.md §5.5: a data packet whose flow has already sent
/// `bytes_sent ≤ threshold` bytes (before this packet) gets priority 0, the shared strict-high
/// queue; later packets get the flow's own `service_queue`. (Pure ACKs always use 0; that is
/// the caller's business.)
pub fn pias_two_priority(bytes_sent: u64, threshold: u64, service_queue: usize) -> usize {
    if bytes_sent <= threshold {
        0
    } else {
        service_queue
    }
}

/// Multi-level PIAS demotion thresholds in bytes: priority `i` for the first `i` with
/// `bytes_sent ≤ thresholds[i]`, the lowest priority `thresholds.len()` after the last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PiasThresholds {
    thresholds: Vec<u64>,
}

/// PIAS-NS2 `run_pias_dctcp.py` 8-level thresholds for web search (docs/models.md §5.5), in
/// packets of 1460 B: `(load, [α0 … α6])`.
pub const PIAS_WEBSEARCH_THRESHOLDS_PKTS: [(f64, [u64; 7]); 5] = [
    (0.9, [759, 1132, 1456, 1737, 2010, 2199, 2325]),
    (0.8, [909, 1329, 1648, 1960, 2143, 2337, 2484]),
    (0.7, [999, 1305, 1564, 1763, 1956, 2149, 2309]),
    (0.6, [956, 1381, 1718, 2028, 2297, 2551, 2660]),
    (0.5, [1059, 1412, 1643, 1869, 2008, 2115, 2184]),
];

impl PiasThresholds {
    /// Thresholds in bytes, non-decreasing (an empty list gives a single priority 0).
    pub fn new(thresholds: Vec<u64>) -> Result<PiasThresholds, String> {
        for i in 1..thresholds.len() {
            if thresholds[i] < thresholds[i - 1] {
                return Err(format!(
                    "PIAS threshold {i} ({} B) is below threshold {} ({} B); thresholds must not decrease",
                    thresholds[i],
                    i - 1,
                    thresholds[i - 1]
                ));
            }
        }
        Ok(PiasThresholds { thresholds })
    }

    /// The PIAS-NS2 web-search thresholds for `load` (one of 0.5, 0.6, 0.7, 0.8, 0.9), × 1460 B.
    pub fn websearch(load: f64) -> Result<PiasThresholds, String> {
        let row = PIAS_WEBSEARCH_THRESHOLDS_PKTS
            .iter()
            .find(|(l, _)| (l - load).abs() < 1e-9)
            .ok_or_else(|| {
                format!(
                    "no PIAS web-search thresholds for load {load} (have 0.5, 0.6, 0.7, 0.8, 0.9)"
                )
            })?;
        PiasThresholds::new(row.1.iter().map(|&p| p * NS2_PACKET_PAYLOAD).collect())
    }

    pub fn thresholds(&self) -> &[u64] {
        &self.thresholds
    }

    /// Number of priority levels (thresholds + 1).
    pub fn levels(&self) -> usize {
        self.thresholds.len() + 1
    }

    /// Priority of a packet sent after `bytes_sent` bytes of its flow (0 = highest).
    pub fn priority(&self, bytes_sent: u64) -> usize {
        self.thresholds.partition_point(|&t| bytes_sent > t)
    }
}

/// Per-flow PIAS state, indexed by flow id in `Hosts::pias` (`engine/datapath`) (empty vector: PIAS off).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PiasTag {
    pub on: bool,
    /// Bytes a message may send at high priority (class 0).
    pub threshold: u64,
    /// Sequence number of the current message's first byte.
    pub msg_start: u64,
    /// Class of the message's later packets.
    pub service_class: u8,
}

/// Classify a packet leaving a host by PIAS (called only when `Hosts::pias` is non-empty;
/// kept out of line so that `Core::host_send` stays small for scenarios without PIAS).
#[inline(never)]
pub fn pias_tag(tags: &[PiasTag], p: &mut Packet) {
    let Some(t) = tags.get(p.flow.idx()) else {
        return;
    };
    if !t.on {
        return;
    }
    match p.kind {
        Kind::Data | Kind::Syn => {
            let sent = p.seq.saturating_sub(t.msg_start);
            p.class = pias_two_priority(sent, t.threshold, t.service_class as usize) as u8;
        }
        Kind::Ack | Kind::SynAck => p.class = 0,
        // UDP and layer-2 control frames (CNM, PAUSE) keep their class.
        Kind::Udp | Kind::Cnm | Kind::Pause => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::ids::{FlowId, NodeId};

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    #[test]
    fn builtin_means_match_the_model_reference() {
        // (name, piecewise-linear mean × unit, docs/models.md figure)
        let cases = [
            ("websearch", 1.666e6),
            ("datamining", 7.470e6),
            ("hadoop", 4.135e6),
            ("cache", 0.911e6),
            ("websearch-bytes", 1.711e6),
            ("datamining-bytes", 12.7e6),
            ("hadoop-fbhdp-bytes", 120e3),
            ("alistorage2019-bytes", 40.87e3),
            ("googlerpc2008-bytes", 2.892e3),
        ];
        for (name, want) in cases {
            let d = FlowSizeDist::builtin(name).unwrap();
            let got = d.mean_bytes_linear();
            assert!(rel(got, want) < 0.01, "{name}: {got} vs {want}");
            // The ceil sampler is larger by at most one unit.
            let c = d.mean_bytes();
            assert!(
                c >= got && c - got <= d.unit_bytes as f64,
                "{name}: {c} vs {got}"
            );
        }
        // Not quoted in docs/models.md; hand value: Σ Δc·(v0+v1)/2 = 935452.5.
        let cache = FlowSizeDist::builtin("cache-bytes").unwrap();
        assert!((cache.mean_bytes_linear() - 935_452.5).abs() < 1e-6);
        // The TCN script's hard-coded means are within 0.4 % of the tables' ceil means.
        for name in ["websearch", "datamining", "hadoop", "cache"] {
            let d = FlowSizeDist::builtin(name).unwrap();
            let tcn = tcn_script_mean_bytes(name).unwrap();
            assert!(rel(d.mean_bytes(), tcn) < 0.004, "{name}");
        }
        assert!(FlowSizeDist::builtin("nope")
            .unwrap_err()
            .contains("websearch-bytes"));
    }

    #[test]
    fn sample_means_match_mean() {
        // 200 000 draws; tolerance 4 standard errors, σ from the table's exact variance of
        // the piecewise-linear distribution (the ceil adds < 1 unit, negligible here). The
        // tails of datamining/hadoop make that 6-7 % of the mean; web search about 2 %.
        // Deterministic seed, so the test cannot flake; the bound says the sampler is right.
        // Google's RPC sizes reach 15 MB at a 3·10⁻⁶ tail over a 2.9 KB mean: 2 000 000 draws
        // bring its tolerance to 6.4 % of the mean.
        for (k, name) in BUILTIN_NAMES.iter().enumerate() {
            let n = if *name == "googlerpc2008-bytes" {
                2_000_000
            } else {
                200_000
            };
            let d = FlowSizeDist::builtin(name).unwrap();
            let mut rng = Rng::new(42, k as u64);
            let sum: f64 = (0..n).map(|_| d.sample_bytes(&mut rng) as f64).sum();
            let m = sum / n as f64;
            let se = d.cdf.variance().sqrt() * d.unit_bytes as f64 / (n as f64).sqrt();
            let tol = 4.0 * se;
            assert!(tol / d.mean_bytes() < 0.08, "{name}: tolerance too loose");
            assert!(
                (m - d.mean_bytes()).abs() < tol,
                "{name}: sample {m} vs {} (tol {tol})",
                d.mean_bytes()
            );
        }
    }

    #[test]
    fn ceil_and_multiplier_rule() {
        let ws = FlowSizeDist::builtin("websearch").unwrap();
        // u ≤ 0.15: the 6-packet atom/segment.
        assert_eq!(ws.sample_bytes_at(0.0), 6 * 1460);
        assert_eq!(ws.sample_bytes_at(0.1), 6 * 1460);
        assert_eq!(ws.sample_bytes_at(0.15), 6 * 1460);
        // u = 0.175: 6 + 0.025·7/0.05 = 9.5 → 10 packets.
        assert_eq!(ws.sample_bytes_at(0.175), 10 * 1460);
        assert!((ws.cdf.sample(0.175) - 9.5).abs() < 1e-9);
        // u = 0.2 exactly: table value 13.
        assert_eq!(ws.sample_bytes_at(0.2), 13 * 1460);
        // u = 0.25: 13 + 0.05·6/0.1 = 16 (integral), must stay 16.
        assert_eq!(ws.sample_bytes_at(0.25), 16 * 1460);
        // u = 0.99: 6667 + 0.02·13333/0.03 = 15555.67 → 15556.
        assert_eq!(ws.sample_bytes_at(0.99), 15_556 * 1460);
        // Near 1: the maximum.
        assert_eq!(ws.sample_bytes_at(0.999_999_999), 20_000 * 1460);
        // Out-of-range u is clamped, NaN read as 0.
        assert_eq!(ws.sample_bytes_at(1.5), 20_000 * 1460);
        assert_eq!(ws.sample_bytes_at(f64::NAN), 6 * 1460);
        let dm = FlowSizeDist::builtin("datamining").unwrap();
        assert_eq!(dm.sample_bytes_at(0.3), 1460);
        // u = 0.55: 1 + 0.05/0.1 = 1.5 → 2 packets.
        assert_eq!(dm.sample_bytes_at(0.55), 2 * 1460);
        // Byte table starting at 0: u = 0 would give 0 bytes, clamped to 1.
        let wsb = FlowSizeDist::builtin("websearch-bytes").unwrap();
        assert_eq!(wsb.sample_bytes_at(0.0), 1);
        // u = 0.075: 10000·0.5 = 5000 exactly.
        assert_eq!(wsb.sample_bytes_at(0.075), 5000);
        // u = 0.01: 10000·0.01/0.15 = 666.67 → 667.
        assert_eq!(wsb.sample_bytes_at(0.01), 667);
    }

    #[test]
    fn atoms_and_ceil_mean() {
        // First point with cdf 0.5: an atom of 1/2 at 2, then uniform on (2, 4].
        let c = EmpiricalCdf::new(vec![(2.0, 0.5), (4.0, 1.0)]).unwrap();
        assert_eq!(c.sample(0.3), 2.0);
        assert!((c.sample(0.75) - 3.0).abs() < 1e-12);
        assert!((c.mean() - 2.5).abs() < 1e-12); // 0.5·2 + 0.5·3
                                                 // ceil over (2, 4]: 3 on (2,3], 4 on (3,4] → 3.5; atom 2 → mean 2.75.
        assert!((c.mean_ceil() - 2.75).abs() < 1e-12);
        // Uniform on [0.5, 2.5]: ceil = 1 on (0.5,1], 2 on (1,2], 3 on (2,2.5] →
        // (0.5·1 + 1·2 + 0.5·3)/2 = 2.
        let u = EmpiricalCdf::new(vec![(0.5, 0.0), (2.5, 1.0)]).unwrap();
        assert!((u.mean_ceil() - 2.0).abs() < 1e-12);
        assert!((u.variance() - 4.0 / 12.0).abs() < 1e-12);
        // Within one unit interval: (1.2, 1.8) → always 2.
        let w = EmpiricalCdf::new(vec![(1.2, 0.0), (1.8, 1.0)]).unwrap();
        assert!((w.mean_ceil() - 2.0).abs() < 1e-12);
        // A vertical jump (equal cdfs) and a flat run (equal values).
        let j = EmpiricalCdf::new(vec![(1.0, 0.0), (1.0, 0.5), (3.0, 0.5), (3.0, 1.0)]).unwrap();
        assert_eq!(j.sample(0.25), 1.0);
        assert_eq!(j.sample(0.5), 1.0);
        assert_eq!(j.sample(0.75), 3.0);
        assert!((j.mean() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn validation_names_the_point() {
        let e = EmpiricalCdf::new(vec![]).unwrap_err();
        assert!(e.contains("no points"), "{e}");
        let e = EmpiricalCdf::new(vec![(1.0, 0.0), (3.0, 0.6), (2.0, 1.0)]).unwrap_err();
        assert!(
            e.contains("point 2") && e.contains("values must not decrease"),
            "{e}"
        );
        let e =
            EmpiricalCdf::new(vec![(1.0, 0.0), (3.0, 0.6), (4.0, 0.5), (5.0, 1.0)]).unwrap_err();
        assert!(
            e.contains("point 2") && e.contains("CDF must not decrease"),
            "{e}"
        );
        let e = EmpiricalCdf::new(vec![(1.0, 0.0), (3.0, 0.9)]).unwrap_err();
        assert!(e.contains("point 1") && e.contains("end at 1"), "{e}");
        let e = EmpiricalCdf::new(vec![(1.0, 0.0), (3.0, 100.0)]).unwrap_err();
        assert!(e.contains("point 1") && e.contains("percentages"), "{e}");
        let e = EmpiricalCdf::new(vec![(-1.0, 0.0), (3.0, 1.0)]).unwrap_err();
        assert!(e.contains("point 0") && e.contains("≥ 0"), "{e}");
        let e = EmpiricalCdf::new(vec![(1.0, 0.0), (f64::NAN, 1.0)]).unwrap_err();
        assert!(e.contains("point 1"), "{e}");
        // End within 1e-9 of 1 is accepted and snapped to 1.
        let c = EmpiricalCdf::new(vec![(1.0, 0.0), (3.0, 1.0 - 1e-12)]).unwrap();
        assert_eq!(c.points()[1].1, 1.0);
        assert!(FlowSizeDist::new("x", c, 0).is_err());
    }

    #[test]
    fn cdf_file_parsing() {
        let ns2 = "# web search, ns-2 format\n6 1 0\n6 1 0.15\n\n13 1 0.2 # comment\n20000 1 1\n";
        let c = parse_cdf_text(ns2, "ws.tcl").unwrap();
        assert_eq!(
            c.points(),
            &[(6.0, 0.0), (6.0, 0.15), (13.0, 0.2), (20000.0, 1.0)]
        );
        let two = "0 0\n10000 0.15\n30000000 1\n";
        assert_eq!(parse_cdf_text(two, "b.txt").unwrap().points().len(), 3);

        let e = parse_cdf_text("6 1 0\n7 1 0.5 9\n", "f.cdf").unwrap_err();
        assert!(
            e.starts_with("f.cdf:2:") && e.contains("found 4 fields"),
            "{e}"
        );
        let e = parse_cdf_text("# c\n6 1 0\nabc 0.5\n", "f.cdf").unwrap_err();
        assert!(
            e.starts_with("f.cdf:3:") && e.contains("value (column 1)") && e.contains("'abc'"),
            "{e}"
        );
        let e = parse_cdf_text("6 x 0\n", "f.cdf").unwrap_err();
        assert!(e.starts_with("f.cdf:1:") && e.contains("count"), "{e}");
        let e = parse_cdf_text("6 0\n\n# gap\n5 0.5\n9 1\n", "f.cdf").unwrap_err();
        assert!(
            e.starts_with("f.cdf:4:") && e.contains("values must not decrease"),
            "{e}"
        );
        let e = parse_cdf_text("6 0\n9 0.9\n", "f.cdf").unwrap_err();
        assert!(e.starts_with("f.cdf:2:") && e.contains("end at 1"), "{e}");
        let e = parse_cdf_text("# only comments\n\n", "f.cdf").unwrap_err();
        assert!(
            e.starts_with("f.cdf:") && e.contains("no CDF points"),
            "{e}"
        );
        let e = load_cdf_file("/nonexistent/dir/x.cdf").unwrap_err();
        assert!(
            e.contains("/nonexistent/dir/x.cdf") && e.contains("cannot read"),
            "{e}"
        );
    }

    #[test]
    fn poisson_rate_and_gap_mean() {
        // TCN web search at 50 % of 10 Gb/s with the script's mean:
        // λ = 0.5·1e10/(8·1671357) = 373.95 flows/s.
        let p = PoissonArrivals::for_load(0.5, 10e9, tcn_script_mean_bytes("websearch").unwrap())
            .unwrap();
        assert!((p.rate_per_s() - 0.5 * 10e9 / (8.0 * 1_671_357.0)).abs() < 1e-9);
        assert!((p.rate_per_s() - 373.95).abs() < 0.01);
        let per_pair = p.split(143).unwrap();
        assert!((per_pair.rate_per_s() * 143.0 - p.rate_per_s()).abs() < 1e-9);
        // Exponential gaps: mean within 4 standard errors (σ = mean for an exponential).
        let n = 200_000;
        let mut rng = Rng::new(7, 1);
        let m: f64 = (0..n).map(|_| p.next_gap_s(&mut rng)).sum::<f64>() / n as f64;
        let tol = 4.0 * p.mean_gap_s() / (n as f64).sqrt();
        assert!(
            (m - p.mean_gap_s()).abs() < tol,
            "{m} vs {}",
            p.mean_gap_s()
        );
        let g = p.next_gap(&mut rng);
        assert!(g > SimTime::ZERO);
        assert!(PoissonArrivals::for_load(0.0, 10e9, 1e6).is_err());
        assert!(PoissonArrivals::for_load(0.5, -1.0, 1e6).is_err());
        assert!(PoissonArrivals::for_load(0.5, 10e9, f64::NAN).is_err());
        assert!(PoissonArrivals::new(f64::INFINITY).is_err());
        assert!(p.split(0).is_err());
    }

    #[test]
    fn pias_tagging() {
        let t = PIAS_TCN_THRESHOLD_BYTES;
        assert_eq!(pias_two_priority(0, t, 3), 0);
        assert_eq!(pias_two_priority(100_000, t, 3), 0);
        assert_eq!(pias_two_priority(100_001, t, 3), 3);
        let p = PiasThresholds::new(vec![100, 200, 200, 500]).unwrap();
        assert_eq!(p.levels(), 5);
        assert_eq!(p.priority(0), 0);
        assert_eq!(p.priority(100), 0);
        assert_eq!(p.priority(101), 1);
        assert_eq!(p.priority(200), 1);
        assert_eq!(p.priority(201), 3);
        assert_eq!(p.priority(500), 3);
        assert_eq!(p.priority(u64::MAX), 4);
        assert_eq!(PiasThresholds::new(vec![]).unwrap().priority(10), 0);
        let e = PiasThresholds::new(vec![100, 50]).unwrap_err();
        assert!(e.contains("threshold 1"), "{e}");
        let w = PiasThresholds::websearch(0.9).unwrap();
        assert_eq!(w.thresholds()[0], 759 * 1460);
        assert_eq!(w.levels(), 8);
        assert_eq!(w.priority(759 * 1460), 0);
        assert_eq!(w.priority(759 * 1460 + 1), 1);
        assert_eq!(w.priority(2325 * 1460), 6);
        assert_eq!(w.priority(2325 * 1460 + 1), 7);
        assert!(PiasThresholds::websearch(0.55).is_err());
        for (load, _) in PIAS_WEBSEARCH_THRESHOLDS_PKTS {
            assert!(PiasThresholds::websearch(load).is_ok());
        }
    }

    fn pias_pkt(kind: Kind, seq: u64) -> Packet {
        Packet {
            seq,
            class: 7,
            ..Packet::new(kind, FlowId(1), (NodeId(0), NodeId(1)), 1500, 1460)
        }
    }

    #[test]
    fn pias_tag_by_bytes_sent_of_the_message() {
        let on = PiasTag {
            on: true,
            threshold: 100_000,
            msg_start: 50_000,
            service_class: 3,
        };
        let tags = [PiasTag::default(), on];
        let class = |kind, seq| {
            let mut p = pias_pkt(kind, seq);
            pias_tag(&tags, &mut p);
            p.class
        };
        // 0 and exactly 100 000 bytes sent before the packet: high; one byte more: service.
        assert_eq!(class(Kind::Data, 50_000), 0);
        assert_eq!(class(Kind::Data, 150_000), 0);
        assert_eq!(class(Kind::Data, 150_001), 3);
        assert_eq!(class(Kind::Ack, 0), 0);
        assert_eq!(class(Kind::Udp, 0), 7);
        // Flow without a tag (or off) keeps its class.
        let mut p = pias_pkt(Kind::Data, 0);
        p.flow = FlowId(0);
        pias_tag(&tags, &mut p);
        assert_eq!(p.class, 7);
        p.flow = FlowId(9);
        pias_tag(&tags, &mut p);
        assert_eq!(p.class, 7);
    }
}

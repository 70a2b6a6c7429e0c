//! Measurement helpers for result tables: mean, sample standard deviation, percentiles,
//! Jain's fairness index, flow-completion-time (FCT) summaries by size bin, normalisation of
//! one scheme's FCTs by another's, and throughput over fixed intervals. Pure and deterministic;
//! not yet wired into the simulation.
//!
//! Sources:
//! - the ODCTCP thesis (throughput every 50 ms, Jain's fairness index, mean and standard
//!   deviation across flows) and the TCN paper (FCT mean and 99th percentile by size bin —
//!   small (0, 100 KB], medium, large (10 MB, ∞) — normalised to a chosen scheme).
//! - Jain, Chiu, Hawe, *A Quantitative Measure of Fairness and Discrimination for Resource
//!   Allocation in Shared Computer Systems* (DEC TR-301, 1984): J = (Σx)²/(n·Σx²).
//! - Bai et al., TCN (CoNEXT'16) §6 and PIAS (NSDI'15) §6: FCT by size bin, average and 99th
//!   percentile; PIAS-NS2 `scripts/result.py` (its conventions are noted below).
//!
//! Conventions:
//! - Functions return `Err(message)` on empty input where the statistic is undefined and on
//!   non-finite values (naming the index); they never panic.
//! - **Percentile** ([`percentile`]): nearest-rank. Sort ascending; for `p ∈ (0, 100]` the
//!   result is the value of rank `⌈p·n/100⌉` (1-based); `p = 0` gives the minimum. The result
//!   is always one of the samples (no interpolation): the p99 of 100 samples is the 99th
//!   smallest, of 1000 samples the 990th. PIAS-NS2 `result.py` instead takes the 0-based index
//!   `⌊p·n/100⌋` (one rank higher whenever p·n/100 is an integer, e.g. the maximum of 100
//!   samples); [`percentile_floor_index`] reproduces that for side-by-side comparisons.
//! - **Size bins** ([`SizeBins`]): upper-inclusive `(e_{i−1}, e_i]`, first `(0, e_0]`, last
//!   `(e_last, ∞)`; default edges 100 KB and 10 MB with KB = 1000 B, as in `units`. (PIAS-NS2
//!   `result.py` uses 100 KiB and 10 MiB with `<`/`>`; flow sizes that are multiples of 1460 B
//!   never sit on those edges, so only the KB/KiB choice matters; pass
//!   `SizeBins::new(vec![102_400, 10_485_760])` to reproduce it.)

use crate::base::units::SimTime;

fn check_finite(xs: &[f64], what: &str) -> Result<(), String> {
    match xs.iter().position(|x| !x.is_finite()) {
        Some(i) => Err(format!(
            "{what}: value at index {i} is not finite ({})",
            xs[i]
        )),
        None => Ok(()),
    }
}

/// Arithmetic mean. Errors on an empty slice or a non-finite value.
pub fn mean(xs: &[f64]) -> Result<f64, String> {
    if xs.is_empty() {
        return Err("mean of an empty sample is undefined".into());
    }
    check_finite(xs, "mean")?;
    Ok(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Sample standard deviation (divisor n − 1). Errors with fewer than 2 values.
pub fn std_dev(xs: &[f64]) -> Result<f64, String> {
    if xs.len() < 2 {
        return Err(format!(
            "sample standard deviation needs at least 2 values (got {})",
            xs.len()
        ));
    }
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    Ok((ss / (xs.len() - 1) as f64).sqrt())
}

fn sorted_checked(xs: &[f64], p: f64, what: &str) -> Result<Vec<f64>, String> {
    if xs.is_empty() {
        return Err(format!("{what} of an empty sample is undefined"));
    }
    if !(0.0..=100.0).contains(&p) {
        return Err(format!("{what}: p must be in [0, 100], got {p}"));
    }
    check_finite(xs, what)?;
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    Ok(v)
}

/// Nearest-rank percentile, `p` in [0, 100] (see the module documentation).
pub fn percentile(xs: &[f64], p: f64) -> Result<f64, String> {
    let v = sorted_checked(xs, p, "percentile")?;
    let n = v.len();
    // Multiply before dividing so that integral p·n/100 is computed exactly.
    let rank = ((p * n as f64) / 100.0).ceil().max(1.0) as usize;
    Ok(v[rank.min(n) - 1])
}

/// Percentile as PIAS-NS2 `scripts/result.py` computes it: sorted value at the 0-based index
/// `⌊p·n/100⌋` (clamped to the last).
pub fn percentile_floor_index(xs: &[f64], p: f64) -> Result<f64, String> {
    let v = sorted_checked(xs, p, "percentile")?;
    let n = v.len();
    let idx = ((p * n as f64) / 100.0).floor() as usize;
    Ok(v[idx.min(n - 1)])
}

/// Jain's fairness index (Σx)²/(n·Σx²) ∈ [1/n, 1]. Defined as 1 when every value is 0 (all
/// get the same, nothing); an error for an empty slice, a negative or a non-finite value.
pub fn jain_index(xs: &[f64]) -> Result<f64, String> {
    if xs.is_empty() {
        return Err("Jain's fairness index of no values is undefined".into());
    }
    check_finite(xs, "Jain's fairness index")?;
    if let Some(i) = xs.iter().position(|&x| x < 0.0) {
        return Err(format!(
            "Jain's fairness index: value at index {i} is negative ({})",
            xs[i]
        ));
    }
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        return Ok(1.0);
    }
    Ok(s * s / (xs.len() as f64 * s2))
}

/// Flow-size bins by upper edges in bytes: `(0, e_0]`, `(e_0, e_1]`, …, `(e_last, ∞)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeBins {
    edges: Vec<u64>,
}

fn fmt_bytes(b: u64) -> String {
    if b == 0 {
        "0".to_string()
    } else if b >= 1_000_000 && b.is_multiple_of(1_000_000) {
        format!("{}MB", b / 1_000_000)
    } else if b >= 1000 && b.is_multiple_of(1000) {
        format!("{}KB", b / 1000)
    } else {
        format!("{b}B")
    }
}

impl SizeBins {
    /// Edges must be > 0 and strictly increasing; no edges gives one bin (0, ∞).
    pub fn new(edges: Vec<u64>) -> Result<SizeBins, String> {
        if edges.first() == Some(&0) {
            return Err("size bin edge 0 must be > 0 bytes".into());
        }
        for i in 1..edges.len() {
            if edges[i] <= edges[i - 1] {
                return Err(format!(
                    "size bin edge {i} ({} B) must be above edge {} ({} B)",
                    edges[i],
                    i - 1,
                    edges[i - 1]
                ));
            }
        }
        Ok(SizeBins { edges })
    }

    /// small (0, 100 KB], medium (100 KB, 10 MB], large (10 MB, ∞).
    pub fn tcn_default() -> SizeBins {
        SizeBins {
            edges: vec![100_000, 10_000_000],
        }
    }

    pub fn len(&self) -> usize {
        self.edges.len() + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Bin of a flow of `size` bytes (`size` ≥ 1; 0 falls in the first bin's lower bound and
    /// is rejected by [`fct_by_bin`]).
    pub fn bin_of(&self, size: u64) -> usize {
        self.edges.partition_point(|&e| size > e)
    }

    /// Lower (exclusive) and upper (inclusive, `None` = ∞) bounds of bin `i`.
    pub fn bounds(&self, i: usize) -> (u64, Option<u64>) {
        let lo = if i == 0 { 0 } else { self.edges[i - 1] };
        (lo, self.edges.get(i).copied())
    }

    /// A label such as `(100KB, 10MB]` or `(10MB, inf)`.
    pub fn label(&self, i: usize) -> String {
        match self.bounds(i) {
            (lo, Some(hi)) => format!("({}, {}]", fmt_bytes(lo), fmt_bytes(hi)),
            (lo, None) => format!("({}, inf)", fmt_bytes(lo)),
        }
    }
}

/// FCT summary of one size bin. `mean` and `p99` are `None` for an empty bin.
#[derive(Clone, Debug, PartialEq)]
pub struct BinSummary {
    pub label: String,
    pub lo: u64,
    pub hi: Option<u64>,
    pub count: usize,
    pub mean: Option<f64>,
    /// Nearest-rank 99th percentile.
    pub p99: Option<f64>,
}

/// Count, mean and nearest-rank p99 of FCTs per size bin. `flows` holds (size in bytes, FCT)
/// pairs; the FCT unit is the caller's. Errors name the first flow with size 0 or a negative
/// or non-finite FCT.
pub fn fct_by_bin(flows: &[(u64, f64)], bins: &SizeBins) -> Result<Vec<BinSummary>, String> {
    let mut per_bin: Vec<Vec<f64>> = vec![Vec::new(); bins.len()];
    for (i, &(size, fct)) in flows.iter().enumerate() {
        if size == 0 {
            return Err(format!("flow {i} has size 0 bytes"));
        }
        if !fct.is_finite() || fct < 0.0 {
            return Err(format!("flow {i} has FCT {fct}; it must be finite and ≥ 0"));
        }
        per_bin[bins.bin_of(size)].push(fct);
    }
    Ok(per_bin
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let (lo, hi) = bins.bounds(i);
            BinSummary {
                label: bins.label(i),
                lo,
                hi,
                count: v.len(),
                mean: mean(v).ok(),
                p99: percentile(v, 99.0).ok(),
            }
        })
        .collect())
}

/// One bin of a scheme's FCT summary divided by a baseline scheme's.
#[derive(Clone, Debug, PartialEq)]
pub struct NormalisedBin {
    pub label: String,
    pub count: usize,
    pub base_count: usize,
    /// scheme mean / baseline mean; `None` if either bin is empty or the baseline is 0.
    pub mean_ratio: Option<f64>,
    /// scheme p99 / baseline p99; `None` likewise.
    pub p99_ratio: Option<f64>,
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// Normalise bin summaries (from [`fct_by_bin`] with the same bins) by a baseline's, as in
/// the TCN paper's "FCT normalised to per-queue ECN/RED" panels.
pub fn normalise_bins(
    scheme: &[BinSummary],
    base: &[BinSummary],
) -> Result<Vec<NormalisedBin>, String> {
    if scheme.len() != base.len() {
        return Err(format!(
            "cannot normalise {} bins by {} baseline bins",
            scheme.len(),
            base.len()
        ));
    }
    let mut out = Vec::with_capacity(scheme.len());
    for (i, (s, b)) in scheme.iter().zip(base).enumerate() {
        if s.lo != b.lo || s.hi != b.hi {
            return Err(format!(
                "bin {i}: scheme bin {} differs from baseline bin {}",
                s.label, b.label
            ));
        }
        out.push(NormalisedBin {
            label: s.label.clone(),
            count: s.count,
            base_count: b.count,
            mean_ratio: ratio(s.mean, b.mean),
            p99_ratio: ratio(s.p99, b.p99),
        });
    }
    Ok(out)
}

/// Per-flow normalisation: for each flow id present in both lists, scheme FCT / baseline FCT,
/// sorted by id (flows of the same seeded workload carry the same id in both runs). Flows
/// missing from either list are left out. Errors on a repeated id, a non-finite FCT or a
/// baseline FCT ≤ 0.
pub fn normalise_by_flow(
    scheme: &[(u64, f64)],
    base: &[(u64, f64)],
) -> Result<Vec<(u64, f64)>, String> {
    fn sorted(xs: &[(u64, f64)], who: &str) -> Result<Vec<(u64, f64)>, String> {
        let mut v = xs.to_vec();
        v.sort_by_key(|&(id, _)| id);
        for w in v.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(format!("{who}: flow id {} appears twice", w[0].0));
            }
        }
        if let Some(&(id, f)) = v.iter().find(|&&(_, f)| !f.is_finite()) {
            return Err(format!("{who}: flow {id} has non-finite FCT {f}"));
        }
        Ok(v)
    }
    let s = sorted(scheme, "scheme")?;
    let b = sorted(base, "baseline")?;
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < s.len() && j < b.len() {
        match s[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let (id, bf) = b[j];
                if bf <= 0.0 {
                    return Err(format!("baseline: flow {id} has FCT {bf}; it must be > 0"));
                }
                out.push((id, s[i].1 / bf));
                i += 1;
                j += 1;
            }
        }
    }
    Ok(out)
}

/// Bytes delivered in one interval and the resulting throughput.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalThroughput {
    pub start: SimTime,
    pub end: SimTime,
    pub bytes: u64,
    /// bytes·8 / (end − start), bits per second.
    pub bps: f64,
}

/// Throughput over consecutive intervals `[start + k·interval, start + (k+1)·interval)`
/// covering `[start, end)`; the last interval is cut at `end` and its rate uses its actual
/// length. `events` are (delivery time, bytes) in any order; events outside `[start, end)` are
/// ignored. Integer picosecond times, so an event exactly on a boundary belongs to the
/// interval it opens.
pub fn throughput_intervals(
    events: &[(SimTime, u64)],
    start: SimTime,
    end: SimTime,
    interval: SimTime,
) -> Result<Vec<IntervalThroughput>, String> {
    if interval.ps() == 0 {
        return Err("throughput interval must be > 0".into());
    }
    if end <= start {
        return Err(format!(
            "throughput window end {end} must be after its start {start}"
        ));
    }
    let span = end.ps() - start.ps();
    let n = span.div_ceil(interval.ps()) as usize;
    let mut bytes = vec![0u64; n];
    for &(t, b) in events {
        if t >= start && t < end {
            let k = ((t.ps() - start.ps()) / interval.ps()) as usize;
            bytes[k] = bytes[k].saturating_add(b);
        }
    }
    Ok(bytes
        .iter()
        .enumerate()
        .map(|(k, &b)| {
            let s = SimTime(start.ps() + k as u64 * interval.ps());
            let e = SimTime((s.ps() + interval.ps()).min(end.ps()));
            IntervalThroughput {
                start: s,
                end: e,
                bytes: b,
                bps: b as f64 * 8.0 / (e - s).as_secs_f64(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn mean_and_std_dev() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, Σ(x−5)² = 32, sample sd = √(32/7).
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs).unwrap(), 5.0);
        assert!(close(std_dev(&xs).unwrap(), (32.0f64 / 7.0).sqrt()));
        assert!(mean(&[]).is_err());
        assert!(std_dev(&[1.0]).unwrap_err().contains("at least 2"));
        assert_eq!(std_dev(&[3.0, 3.0]).unwrap(), 0.0);
        assert!(mean(&[1.0, f64::NAN]).unwrap_err().contains("index 1"));
    }

    #[test]
    fn percentiles() {
        // 1..=100: nearest-rank p99 = 99, p50 = 50, p100 = 100, p0 = 1, p99.5 → rank 100.
        let xs: Vec<f64> = (1..=100).rev().map(|i| i as f64).collect();
        assert_eq!(percentile(&xs, 99.0).unwrap(), 99.0);
        assert_eq!(percentile(&xs, 50.0).unwrap(), 50.0);
        assert_eq!(percentile(&xs, 100.0).unwrap(), 100.0);
        assert_eq!(percentile(&xs, 0.0).unwrap(), 1.0);
        assert_eq!(percentile(&xs, 99.5).unwrap(), 100.0);
        // PIAS-NS2's floor index takes index 99 → 100 here.
        assert_eq!(percentile_floor_index(&xs, 99.0).unwrap(), 100.0);
        assert_eq!(percentile_floor_index(&xs, 50.0).unwrap(), 51.0);
        // Five values 10, 20, 30, 40, 50: p99 rank ⌈4.95⌉ = 5 → 50; p40 rank 2 → 20;
        // p41 rank ⌈2.05⌉ = 3 → 30.
        let ys = [30.0, 10.0, 50.0, 20.0, 40.0];
        assert_eq!(percentile(&ys, 99.0).unwrap(), 50.0);
        assert_eq!(percentile(&ys, 40.0).unwrap(), 20.0);
        assert_eq!(percentile(&ys, 41.0).unwrap(), 30.0);
        assert_eq!(percentile(&[7.0], 99.0).unwrap(), 7.0);
        // 1000 values: p99 is the 990th.
        let zs: Vec<f64> = (1..=1000).map(|i| i as f64).collect();
        assert_eq!(percentile(&zs, 99.0).unwrap(), 990.0);
        assert!(percentile(&[], 99.0).is_err());
        assert!(percentile(&ys, 101.0).is_err());
        assert!(percentile(&ys, f64::NAN).is_err());
        assert!(percentile(&[1.0, f64::INFINITY], 50.0).is_err());
    }

    #[test]
    fn jain() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0, 5.0]).unwrap(), 1.0);
        // One of four gets everything: 1/n.
        assert_eq!(jain_index(&[8.0, 0.0, 0.0, 0.0]).unwrap(), 0.25);
        // 1, 2, 3: 36 / (3·14) = 6/7.
        assert!(close(jain_index(&[1.0, 2.0, 3.0]).unwrap(), 6.0 / 7.0));
        assert_eq!(jain_index(&[0.0, 0.0]).unwrap(), 1.0);
        assert!(jain_index(&[]).is_err());
        assert!(jain_index(&[1.0, -1.0]).unwrap_err().contains("index 1"));
    }

    #[test]
    fn size_bins() {
        let b = SizeBins::tcn_default();
        assert_eq!(b.len(), 3);
        assert_eq!(b.bin_of(1), 0);
        assert_eq!(b.bin_of(100_000), 0);
        assert_eq!(b.bin_of(100_001), 1);
        assert_eq!(b.bin_of(10_000_000), 1);
        assert_eq!(b.bin_of(10_000_001), 2);
        assert_eq!(b.label(0), "(0, 100KB]");
        assert_eq!(b.label(1), "(100KB, 10MB]");
        assert_eq!(b.label(2), "(10MB, inf)");
        assert_eq!(SizeBins::new(vec![]).unwrap().len(), 1);
        assert!(SizeBins::new(vec![0]).is_err());
        assert!(SizeBins::new(vec![5, 5]).unwrap_err().contains("edge 1"));
        assert_eq!(
            SizeBins::new(vec![102_400]).unwrap().label(0),
            "(0, 102400B]"
        );
    }

    #[test]
    fn fct_summaries_and_normalisation() {
        let bins = SizeBins::tcn_default();
        // small: 1, 2, 3 ms; medium: 10 ms; large: none.
        let a = [
            (1460, 1.0e-3),
            (100_000, 3.0e-3),
            (50_000, 2.0e-3),
            (2_000_000, 10.0e-3),
        ];
        let s = fct_by_bin(&a, &bins).unwrap();
        assert_eq!(s[0].count, 3);
        assert!(close(s[0].mean.unwrap(), 2.0e-3));
        assert_eq!(s[0].p99, Some(3.0e-3));
        assert_eq!(
            (s[1].count, s[1].mean, s[1].p99),
            (1, Some(10.0e-3), Some(10.0e-3))
        );
        assert_eq!((s[2].count, s[2].mean, s[2].p99), (0, None, None));
        assert_eq!((s[2].lo, s[2].hi), (10_000_000, None));

        // Baseline twice as slow for small flows, equal for medium.
        let base = [
            (1460, 2.0e-3),
            (100_000, 6.0e-3),
            (50_000, 4.0e-3),
            (2_000_000, 10.0e-3),
        ];
        let sb = fct_by_bin(&base, &bins).unwrap();
        let n = normalise_bins(&s, &sb).unwrap();
        assert!(close(n[0].mean_ratio.unwrap(), 0.5));
        assert!(close(n[0].p99_ratio.unwrap(), 0.5));
        assert!(close(n[1].mean_ratio.unwrap(), 1.0));
        assert_eq!(n[2].mean_ratio, None);
        assert_eq!((n[0].count, n[0].base_count), (3, 3));
        let other = fct_by_bin(&a, &SizeBins::new(vec![100_000]).unwrap()).unwrap();
        assert!(normalise_bins(&s, &other).is_err());

        assert!(fct_by_bin(&[(0, 1.0)], &bins)
            .unwrap_err()
            .contains("flow 0"));
        assert!(fct_by_bin(&[(1, 1.0), (5, -1.0)], &bins)
            .unwrap_err()
            .contains("flow 1"));

        // Per flow: ids 1, 2 matched, 3 only in the scheme, 4 only in the baseline.
        let sf = [(2, 3.0), (1, 1.0), (3, 9.0)];
        let bf = [(1, 2.0), (4, 1.0), (2, 1.5)];
        assert_eq!(
            normalise_by_flow(&sf, &bf).unwrap(),
            vec![(1, 0.5), (2, 2.0)]
        );
        assert!(normalise_by_flow(&[(1, 1.0), (1, 2.0)], &bf)
            .unwrap_err()
            .contains("appears twice"));
        assert!(normalise_by_flow(&sf, &[(1, 0.0)])
            .unwrap_err()
            .contains("> 0"));
    }

    #[test]
    fn throughput_per_interval() {
        let ms = SimTime::from_ms;
        // 50 ms intervals over [0, 120 ms): [0,50), [50,100), [100,120).
        let ev = [
            (ms(0), 1000),
            (ms(49), 250),
            (ms(50), 500), // on the boundary: second interval
            (ms(100), 100),
            (ms(119), 50),
            (ms(120), 9999), // at end: ignored
        ];
        let r = throughput_intervals(&ev, SimTime::ZERO, ms(120), ms(50)).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].bytes, 1250);
        assert!(close(r[0].bps, 1250.0 * 8.0 / 0.05)); // 200 kb/s
        assert_eq!(r[1].bytes, 500);
        assert!(close(r[1].bps, 80_000.0));
        assert_eq!((r[2].start, r[2].end, r[2].bytes), (ms(100), ms(120), 150));
        assert!(close(r[2].bps, 150.0 * 8.0 / 0.02)); // 60 kb/s over the 20 ms tail
                                                      // A later start drops earlier events.
        let r = throughput_intervals(&ev, ms(50), ms(150), ms(50)).unwrap();
        assert_eq!(
            r.iter().map(|x| x.bytes).collect::<Vec<_>>(),
            vec![500, 100 + 50 + 9999]
        );
        assert!(throughput_intervals(&ev, ms(10), ms(10), ms(50)).is_err());
        assert!(throughput_intervals(&ev, SimTime::ZERO, ms(10), SimTime::ZERO).is_err());
    }
}

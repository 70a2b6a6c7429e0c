//! Units: integer picosecond time, bit rates, byte sizes, and the parsing of unit strings
//! such as `"1Gbps"`, `"25us"`, `"256KiB"`, `"32KB"` (KB = 1000 B, KiB = 1024 B).
//!
//! Time is kept as integer picoseconds so that serialization is exact at every common
//! line rate (one byte at 100 Gb/s is 80 ps).

use crate::base::limits::shown;
use std::fmt;

/// Simulated time in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const NEVER: SimTime = SimTime(u64::MAX);
    pub const PS_PER_S: u64 = 1_000_000_000_000;

    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime((s * Self::PS_PER_S as f64).round() as u64)
    }
    pub const fn from_us(us: u64) -> SimTime {
        SimTime(us * 1_000_000)
    }
    pub const fn from_ms(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000_000)
    }
    pub const fn from_ns(ns: u64) -> SimTime {
        SimTime(ns * 1_000)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / Self::PS_PER_S as f64
    }
    pub fn ps(self) -> u64 {
        self.0
    }
    pub fn is_never(self) -> bool {
        self.0 == u64::MAX
    }
}

impl std::ops::Add for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, o: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(o.0))
    }
}
impl std::ops::Sub for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, o: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(o.0))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", self.as_secs_f64())
    }
}

/// A bit rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct RateBps(pub u64);

impl RateBps {
    /// Time to serialize `bytes` at this rate, rounded up to the next picosecond.
    #[inline]
    pub fn tx_time(self, bytes: u32) -> SimTime {
        // bytes * 8e12 fits in a u64 for any frame below 2.3 MB: a 64-bit division is
        // much cheaper than the 128-bit one (a library call) on the per-packet path.
        if bytes < 2_000_000 {
            let bits = bytes as u64 * 8 * SimTime::PS_PER_S;
            return SimTime(bits.div_ceil(self.0));
        }
        let bits = bytes as u128 * 8 * SimTime::PS_PER_S as u128;
        let r = self.0 as u128;
        SimTime(bits.div_ceil(r) as u64)
    }
    pub fn mbps(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Bytes(pub u64);

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_' || *c == 'e' || *c == '+'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // Guard against an exponent swallowing a unit like "e" — units here never start with 'e'.
    let num: String = s[..end].chars().filter(|c| *c != '_').collect();
    if num.is_empty() {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    // An overlong number parses as infinity: kept, so that the caller refuses it as out of
    // range rather than as not a number.
    if v.is_nan() || v < 0.0 {
        return None;
    }
    Some((v, s[end..].trim()))
}

/// A byte count for messages, in decimal units with one decimal: "5.8 kB", "64.0 MB",
/// "7.8 GB" (the memory estimate and refused allocations).
pub fn size_text(bytes: f64) -> String {
    if bytes < 1e6 {
        format!("{:.1} kB", bytes / 1e3)
    } else if bytes < 1e9 {
        format!("{:.1} MB", bytes / 1e6)
    } else {
        format!("{:.1} GB", bytes / 1e9)
    }
}

/// Parse a duration like `"25us"`, `"200ms"`, `"20s"`, `"1.5ms"`, `"80ps"`, `"10ns"`.
pub fn parse_time(s: &str) -> Result<SimTime, String> {
    let expected = "expected a number followed by ps, ns, us, ms or s (e.g. \"25us\")";
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("invalid duration {}: {expected}", shown(s)))?;
    let mult: f64 = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        _ => return Err(format!("invalid duration {}: {expected}", shown(s))),
    };
    let ps = v * mult;
    if ps > 1.8e19 {
        return Err(format!("duration {} is too large", shown(s)));
    }
    Ok(SimTime(ps.round() as u64))
}

/// Parse a rate like `"1Gbps"`, `"500Mbps"`, `"8.5Gbps"`, `"100Kbps"`, `"9600bps"`.
pub fn parse_rate(s: &str) -> Result<RateBps, String> {
    let expected = "expected a number followed by bps, Kbps, Mbps, Gbps or Tbps (e.g. \"10Gbps\")";
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("invalid rate {}: {expected}", shown(s)))?;
    let mult: f64 = match unit {
        "bps" => 1.0,
        "Kbps" | "kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        "Tbps" => 1e12,
        _ => return Err(format!("invalid rate {}: {expected}", shown(s))),
    };
    let r = (v * mult).round();
    if r < 1.0 {
        return Err(format!(
            "invalid rate {}: a rate must be positive",
            shown(s)
        ));
    }
    Ok(RateBps(r as u64))
}

/// Parse a size like `"256KiB"`, `"32KB"`, `"1500B"`, `"1MB"`, `"2MiB"`; a bare integer is bytes.
pub fn parse_bytes(s: &str) -> Result<Bytes, String> {
    let expected =
        "expected a number followed by B, KB, KiB, MB, MiB, GB or GiB (KB = 1000 B, KiB = 1024 B)";
    let (v, unit) =
        split_number(s).ok_or_else(|| format!("invalid size {}: {expected}", shown(s)))?;
    let mult: f64 = match unit {
        "" | "B" => 1.0,
        "KB" | "kB" => 1e3,
        "KiB" => 1024.0,
        "MB" => 1e6,
        "MiB" => 1048576.0,
        "GB" => 1e9,
        "GiB" => 1073741824.0,
        _ => return Err(format!("invalid size {}: {expected}", shown(s))),
    };
    let b = v * mult;
    if b.fract() != 0.0 && (b - b.round()).abs() > 1e-6 {
        return Err(format!(
            "invalid size {}: not a whole number of bytes",
            shown(s)
        ));
    }
    Ok(Bytes(b.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_times() {
        assert_eq!(parse_time("25us").unwrap(), SimTime(25_000_000));
        assert_eq!(parse_time("200ms").unwrap(), SimTime::from_ms(200));
        assert_eq!(parse_time("20s").unwrap(), SimTime(20 * SimTime::PS_PER_S));
        assert_eq!(parse_time("1.5ms").unwrap(), SimTime(1_500_000_000));
        assert_eq!(parse_time("80ps").unwrap(), SimTime(80));
        assert!(parse_time("25").is_err());
        assert!(parse_time("fast").is_err());
        assert!(parse_time("-1s").is_err());
    }

    #[test]
    fn parses_rates() {
        assert_eq!(parse_rate("1Gbps").unwrap(), RateBps(1_000_000_000));
        assert_eq!(parse_rate("8.5Gbps").unwrap(), RateBps(8_500_000_000));
        assert_eq!(parse_rate("500Mbps").unwrap(), RateBps(500_000_000));
        assert!(parse_rate("10Gbs").is_err());
        assert!(parse_rate("0bps").is_err());
    }

    #[test]
    fn parses_sizes() {
        assert_eq!(parse_bytes("256KiB").unwrap(), Bytes(262_144));
        assert_eq!(parse_bytes("32KB").unwrap(), Bytes(32_000));
        assert_eq!(parse_bytes("1500B").unwrap(), Bytes(1500));
        assert_eq!(parse_bytes("1500").unwrap(), Bytes(1500));
        assert_eq!(parse_bytes("2MiB").unwrap(), Bytes(2 * 1048576));
        assert!(parse_bytes("1.5B").is_err());
        assert!(parse_bytes("3kb").is_err());
    }

    #[test]
    fn serialization_is_exact() {
        // 1500 B at 1 Gb/s = 12 us; at 100 Gb/s one byte is 80 ps.
        assert_eq!(RateBps(1_000_000_000).tx_time(1500), SimTime(12_000_000));
        assert_eq!(RateBps(100_000_000_000).tx_time(1), SimTime(80));
        // 8.5 Gb/s does not divide: rounded up.
        assert_eq!(RateBps(8_500_000_000).tx_time(1500), SimTime(1_411_765));
    }

    #[test]
    fn tx_time_fast_path_matches_exact_division() {
        let exact = |r: u64, b: u32| (b as u128 * 8_000_000_000_000).div_ceil(r as u128) as u64;
        let rates = [
            1u64,
            7,
            999_983,
            1_000_000_000,
            8_500_000_000,
            10_000_000_000,
            u64::MAX,
        ];
        for &r in &rates {
            for b in [
                0u32,
                1,
                64,
                1500,
                9000,
                65_535,
                1_999_999,
                2_000_000,
                u32::MAX,
            ] {
                assert_eq!(
                    RateBps(r).tx_time(b).0,
                    exact(r, b).min(u64::MAX as u128 as u64)
                );
            }
        }
    }
}

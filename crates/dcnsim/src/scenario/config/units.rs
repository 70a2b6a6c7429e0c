//! Value types of scenario keys: durations, rates, sizes, queue thresholds and
//! "unlimited" sizes, each read from its TOML text and checked against `base::limits`.

use crate::base::limits;
use crate::base::units::{parse_bytes, parse_rate, parse_time, Bytes, RateBps, SimTime};
use crate::model::aqm::{parse_threshold, QueueUnit};
use serde::de::{self, Deserializer};
use serde::Deserialize;
use std::fmt;

/// A duration within `limits::DURATION_MAX_PS`.
fn parse_time_checked(s: &str) -> Result<SimTime, String> {
    let t = parse_time(s)?;
    if t.0 > limits::DURATION_MAX_PS {
        return Err(limits::out_of_range(
            s,
            "0s ..= 1000000s (limits: durations)",
        ));
    }
    Ok(t)
}

/// A rate within `limits::RATE_MIN_BPS ..= RATE_MAX_BPS`.
fn parse_rate_checked(s: &str) -> Result<RateBps, String> {
    const RANGE: &str = "1kbps ..= 10Tbps (limits: rates)";
    // A rate below 0.5 b/s rounds to 0, which `parse_rate` refuses as not positive.
    let r = parse_rate(s).map_err(|e| {
        if e.ends_with("must be positive") {
            limits::out_of_range(s, RANGE)
        } else {
            e
        }
    })?;
    if !(limits::RATE_MIN_BPS..=limits::RATE_MAX_BPS).contains(&r.0) {
        return Err(limits::out_of_range(s, RANGE));
    }
    Ok(r)
}

/// A size within `limits::SIZE_MAX_BYTES`.
fn parse_bytes_checked(s: &str) -> Result<Bytes, String> {
    let b = parse_bytes(s)?;
    check_size(b.0, s)?;
    Ok(b)
}

fn check_size(bytes: u64, shown: &str) -> Result<(), String> {
    if bytes > limits::SIZE_MAX_BYTES {
        return Err(limits::out_of_range(shown, "0 ..= 1TiB (limits: sizes)"));
    }
    Ok(())
}

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:ident, $what:expr) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

unit_type!(
    Dur,
    SimTime,
    parse_time_checked,
    "a duration string such as \"25us\""
);
unit_type!(
    Rate,
    RateBps,
    parse_rate_checked,
    "a rate string such as \"10Gbps\""
);

/// A size: a string with a unit ("256KiB", "32KB") or a plain integer number of bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size(pub Bytes);
impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Size;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"256KiB\", \"32KB\" or a number of bytes")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Size, E> {
                parse_bytes_checked(s).map(Size).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
                if v < 0 {
                    return Err(E::custom("a size cannot be negative"));
                }
                self.visit_u64(v as u64)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
                check_size(v, &v.to_string()).map_err(E::custom)?;
                Ok(Size(Bytes(v)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A queue threshold with its unit: "65pkts" or a size such as "30KB".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Threshold(pub u64, pub QueueUnit);
impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Threshold;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a threshold such as \"65pkts\" or \"30KB\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Threshold, E> {
                let (v, u) = parse_threshold(s).map_err(E::custom)?;
                match u {
                    QueueUnit::Bytes => check_size(v, s).map_err(E::custom)?,
                    QueueUnit::Packets if v > limits::QUEUE_PKTS_MAX => {
                        return Err(E::custom(limits::out_of_range(
                            s,
                            "0 ..= 1000000000 packets (limits: queue_limit_pkts)",
                        )))
                    }
                    QueueUnit::Packets => {}
                }
                Ok(Threshold(v, u))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Threshold, E> {
                Err(E::custom(format!(
                    "write the unit: \"{v}pkts\" or a size such as \"{v}KB\""
                )))
            }
        }
        d.deserialize_any(V)
    }
}

/// A size or the word "auto" (`None`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeOrAuto(pub Option<u64>);
impl<'de> Deserialize<'de> for SizeOrAuto {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = SizeOrAuto;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"16KB\" or \"auto\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<SizeOrAuto, E> {
                if s == "auto" {
                    return Ok(SizeOrAuto(None));
                }
                parse_bytes_checked(s)
                    .map(|b| SizeOrAuto(Some(b.0)))
                    .map_err(|e| E::custom(format!("{e}, or \"auto\"")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SizeOrAuto, E> {
                if v < 0 {
                    return Err(E::custom("a size cannot be negative"));
                }
                check_size(v as u64, &v.to_string()).map_err(E::custom)?;
                Ok(SizeOrAuto(Some(v as u64)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A size or the word "unlimited".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeOrUnlimited(pub u64);
impl<'de> Deserialize<'de> for SizeOrUnlimited {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = SizeOrUnlimited;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"256KiB\" or \"unlimited\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<SizeOrUnlimited, E> {
                if s == "unlimited" {
                    return Ok(SizeOrUnlimited(u64::MAX));
                }
                parse_bytes_checked(s)
                    .map(|b| SizeOrUnlimited(b.0))
                    .map_err(|e| E::custom(format!("{e}, or \"unlimited\"")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SizeOrUnlimited, E> {
                if v < 0 {
                    return Err(E::custom("a size cannot be negative"));
                }
                check_size(v as u64, &v.to_string()).map_err(E::custom)?;
                Ok(SizeOrUnlimited(v as u64))
            }
        }
        d.deserialize_any(V)
    }
}

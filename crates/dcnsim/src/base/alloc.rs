//! Allocations whose size comes from the input (route tables, flows, per-port state):
//! made with `try_reserve`, so an allocator that refuses (a memory limit, `ulimit -v`, a
//! cgroup) gives an `AllocError` that the scenario layer turns into a one-line
//! `ScenarioError` naming the key to lower, instead of aborting the process
//! (`handle_alloc_error`). The memory estimate (`scenario::estimate`) refuses most such
//! runs before anything is allocated; this is the net under it.
//!
//! Fault injection for tests (`tests/test_robust_engine.py`): the environment variable
//! `DCNSIM_FAULT` set to `alloc-above=BYTES` makes every allocation made here that is
//! larger than BYTES fail as if the allocator had refused it, and set to `panic` makes
//! `scenario::build` panic (the path of an engine bug, which the Python binding reports as
//! `EngineError`). Unset, these cost one load of a cached value per allocation made here.

use std::fmt;
use std::sync::OnceLock;

/// An input-sized allocation that could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocError {
    /// What it was for, e.g. "route tables".
    pub what: &'static str,
    /// How many bytes were asked for (saturated at `usize::MAX`).
    pub bytes: usize,
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let size = crate::base::units::size_text(self.bytes as f64);
        write!(
            f,
            "out of memory: cannot allocate {size} for the {}",
            self.what
        )
    }
}

impl std::error::Error for AllocError {}

/// A fault injected by `DCNSIM_FAULT` (tests only; see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Allocations made here above this many bytes fail.
    AllocAbove(usize),
    /// `scenario::build` panics.
    Panic,
}

/// The fault `DCNSIM_FAULT` asks for, read once per process.
pub fn fault() -> Option<Fault> {
    static FAULT: OnceLock<Option<Fault>> = OnceLock::new();
    *FAULT.get_or_init(|| {
        let v = std::env::var("DCNSIM_FAULT").ok()?;
        if v == "panic" {
            return Some(Fault::Panic);
        }
        v.strip_prefix("alloc-above=")?
            .parse()
            .ok()
            .map(Fault::AllocAbove)
    })
}

/// Reserve room for `additional` more items in `v`.
pub fn try_reserve<T>(
    v: &mut Vec<T>,
    additional: usize,
    what: &'static str,
) -> Result<(), AllocError> {
    let bytes = additional.saturating_mul(std::mem::size_of::<T>());
    if let Some(Fault::AllocAbove(max)) = fault() {
        if bytes > max {
            return Err(AllocError { what, bytes });
        }
    }
    v.try_reserve(additional)
        .map_err(|_| AllocError { what, bytes })
}

/// `vec![value; n]`, or an `AllocError` if the allocator refuses.
pub fn try_filled<T: Clone>(n: usize, value: T, what: &'static str) -> Result<Vec<T>, AllocError> {
    let mut v = Vec::new();
    try_reserve(&mut v, n, what)?;
    v.resize(n, value);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        let e = try_filled(usize::MAX / 2, 0u64, "route tables").unwrap_err();
        assert_eq!(e.what, "route tables");
        assert_eq!(e.bytes, usize::MAX);
        assert!(e.to_string().starts_with("out of memory: cannot allocate "));
        let mut v: Vec<u32> = vec![1];
        assert!(try_reserve(&mut v, usize::MAX / 8, "flows").is_err());
        assert_eq!(v, [1], "a refused reservation leaves the vector as it was");
    }

    #[test]
    fn a_possible_size_is_filled() {
        assert_eq!(try_filled(3, 7u8, "x").unwrap(), [7, 7, 7]);
    }
}

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

use std::alloc::{GlobalAlloc, Layout, System};
use std::fmt;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

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

/// Reserve room for `additional` more items in `v`. Refused as well once the emergency
/// reserve of a run has been spent (`WithReserve`): the system has refused memory already,
/// and the reserve is what the run needs to stop cleanly.
pub fn try_reserve<T>(
    v: &mut Vec<T>,
    additional: usize,
    what: &'static str,
) -> Result<(), AllocError> {
    let bytes = additional.saturating_mul(std::mem::size_of::<T>());
    if reserve_spent() {
        return Err(AllocError { what, bytes });
    }
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

// ---------------------------------------------------------------- emergency reserve

/// The global allocator of the engine binary and of the Python extension: the system
/// allocator with an emergency reserve. Rust aborts the process when an allocation fails
/// (`handle_alloc_error`), which `try_reserve` avoids only for the allocations made
/// through it; under an address-space limit (`ulimit -v`, `RLIMIT_AS`) any small
/// allocation of the run can be the one refused. So each run sets `RESERVE_BYTES` aside
/// (`enter_run`); the first allocation the system refuses gives the reserve back and is
/// tried again, and the run, which looks at `exhausted` with its other limits about every
/// million events, stops there with its partial tables, as for `--max-wall`. A second
/// refusal before the run stops still aborts: the reserve is sized for the events between
/// two looks and the result tables. An untouched reserve costs address space, not
/// resident memory. On the allocation path the cost is one test of the returned pointer.
pub struct WithReserve;

/// Room for a million events' worth of allocations and the result tables of a large run.
pub const RESERVE_BYTES: usize = 192 << 20;

static RESERVE: AtomicPtr<u8> = AtomicPtr::new(ptr::null_mut());
static EXHAUSTED: AtomicU64 = AtomicU64::new(0);
static SPENT: AtomicBool = AtomicBool::new(false);

fn reserve_layout() -> Layout {
    // At page alignment: always a valid layout.
    Layout::from_size_align(RESERVE_BYTES, 4096).expect("valid reserve layout")
}

// SAFETY: every method forwards to `System` with the caller's arguments; the reserve is a
// block of `System` memory freed with the layout it was allocated with.
unsafe impl GlobalAlloc for WithReserve {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if p.is_null() {
            return give_back_and_retry(|| System.alloc(layout));
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            return give_back_and_retry(|| System.alloc_zeroed(layout));
        }
        p
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            return give_back_and_retry(|| System.realloc(ptr, layout, new_size));
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

/// The system refused an allocation: free the reserve (if it is still set aside), count
/// it, and try once more.
#[cold]
#[inline(never)]
fn give_back_and_retry(retry: impl FnOnce() -> *mut u8) -> *mut u8 {
    let r = RESERVE.swap(ptr::null_mut(), Ordering::AcqRel);
    if r.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: `r` came from `System.alloc(reserve_layout())` in `arm_reserve` and was
    // taken out of `RESERVE` by this swap alone.
    unsafe { System.dealloc(r, reserve_layout()) };
    SPENT.store(true, Ordering::Release);
    EXHAUSTED.fetch_add(1, Ordering::AcqRel);
    retry()
}

/// Runs under way in this process (a sweep runs several on its threads).
static RUNS: Mutex<usize> = Mutex::new(0);

/// A run under way: made by `enter_run`, which sets the reserve aside; when the last run
/// of the process ends, the reserve goes back to the system, so that what follows (the
/// Python layer writing the tables) has that memory too.
pub struct RunGuard(());

/// Start a run: set the reserve aside unless it already is; None when the system refuses
/// even that much (the run would have no room to stop cleanly).
pub fn enter_run() -> Option<RunGuard> {
    let mut runs = RUNS.lock().unwrap_or_else(|e| e.into_inner());
    if !arm_reserve() {
        return None;
    }
    *runs += 1;
    Some(RunGuard(()))
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        let mut runs = RUNS.lock().unwrap_or_else(|e| e.into_inner());
        *runs -= 1;
        if *runs == 0 {
            let r = RESERVE.swap(ptr::null_mut(), Ordering::AcqRel);
            if !r.is_null() {
                // SAFETY: as in `give_back_and_retry`.
                unsafe { System.dealloc(r, reserve_layout()) };
            }
        }
    }
}

/// Set the reserve aside unless it already is; false when the system refuses it.
fn arm_reserve() -> bool {
    if !RESERVE.load(Ordering::Acquire).is_null() {
        return true;
    }
    // SAFETY: a non-zero-sized layout.
    let p = unsafe { System.alloc(reserve_layout()) };
    if p.is_null() {
        return false;
    }
    SPENT.store(false, Ordering::Release);
    if RESERVE
        .compare_exchange(ptr::null_mut(), p, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        // Another run set one aside meanwhile.
        // SAFETY: allocated just above with this layout, never published.
        unsafe { System.dealloc(p, reserve_layout()) };
    }
    true
}

/// Whether the reserve has been given back to a refused allocation and not set aside again
/// since. (Not "no reserve while a run is under way": a scenario is also built outside a
/// run, to check it, and a run starting meanwhile would make that look spent.)
pub fn reserve_spent() -> bool {
    SPENT.load(Ordering::Acquire)
}

/// How many times the reserve has been given back in this process: a run that sees it
/// change ran out of memory.
pub fn exhausted() -> u64 {
    EXHAUSTED.load(Ordering::Acquire)
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

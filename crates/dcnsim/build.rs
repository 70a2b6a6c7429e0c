//! Optimised builds of this crate read a profile-guided optimisation profile through the
//! rustc wrapper `scripts/rustc-pgo` (docs/performance.md, "Profile-guided optimisation").
//! Cargo does not see the wrapper's inputs, so this script names them: a new profile, a new
//! wrapper or a change of its switches rebuilds the crate.
fn main() {
    for f in [
        "pgo/dcnsim.profdata",
        "pgo/llvm-version",
        "../../scripts/rustc-pgo",
    ] {
        println!("cargo::rerun-if-changed={f}");
    }
    for v in ["DCNSIM_PGO", "DCNSIM_PGO_GENERATE"] {
        println!("cargo::rerun-if-env-changed={v}");
    }
}

//! Records the git commit of the source tree the extension is built from, for `run.json`
//! (`dcnsim.provenance.git_commit` falls back to it when the Python package is not loaded
//! from a checkout, e.g. after `pip install .` from a clone).
//!
//! Sets `DCNSIM_BUILD_COMMIT` (`<sha>` or `<sha>+dirty`) and `DCNSIM_BUILD_TREE` (the work
//! tree's top folder), both empty when there is no git or no repository (an sdist): the
//! build never fails for it. Cargo reruns this script when HEAD moves (the HEAD file, the
//! branch it points to, packed refs), when the index changes, and when a source file of the
//! workspace changes (for the `+dirty` mark).

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}

/// Watch `path` (a file or folder; a path that does not exist yet is watched as well: cargo
/// reruns the script when it appears).
fn watch(path: &Path) {
    println!("cargo::rerun-if-changed={}", path.display());
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    // The workspace's own files, whatever git says: a change there may make the tree dirty.
    let workspace = manifest.join("..").join("..");
    for part in [
        "crates",
        "python",
        "Cargo.toml",
        "Cargo.lock",
        "pyproject.toml",
    ] {
        watch(&workspace.join(part));
    }
    let (commit, tree) = describe(&manifest).unwrap_or_default();
    println!("cargo::rustc-env=DCNSIM_BUILD_COMMIT={commit}");
    println!("cargo::rustc-env=DCNSIM_BUILD_TREE={tree}");
}

/// The commit of the work tree holding `dir` (with `+dirty` when a tracked file differs
/// from it) and the tree's top folder; None without git or outside a repository.
fn describe(dir: &Path) -> Option<(String, String)> {
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    // HEAD, the ref it points to (absent while detached), packed refs and the index, each
    // where git keeps it (a linked worktree has its own HEAD and index, shared refs).
    let mut watched = vec!["HEAD".to_string(), "packed-refs".into(), "index".into()];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in &watched {
        if let Some(path) = git(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-path", name],
        ) {
            watch(Path::new(&path));
        }
    }
    let commit = git(dir, &["rev-parse", "HEAD"])?;
    let dirty = git(dir, &["status", "--porcelain", "--untracked-files=no"])?;
    let mark = if dirty.is_empty() { "" } else { "+dirty" };
    Some((format!("{commit}{mark}"), top))
}

//! The layer rule of `lib.rs`, checked on the source text: a file names only its own layer
//! and the layers before it (base → model → engine → scenario → output). `scenario` and
//! `output` may use everything before them, so only the first three are checked; serde (the
//! scenario format) and result tables stay out of `model` and `engine` as well.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("source folder") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every (file, forbidden name) pair found in the files of `layer`.
fn violations(layer: &str, forbidden: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(layer);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(!files.is_empty(), "no files under {}", root.display());
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable");
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for name in forbidden {
                if code.contains(name) {
                    bad.push(format!("{}:{}: names {name}", f.display(), i + 1));
                }
            }
        }
    }
    bad
}

const ABOVE_ENGINE: [&str; 6] = [
    "crate::scenario",
    "crate::output",
    "crate::run_text",
    "crate::Table",
    "table::Table",
    "serde",
];

#[test]
fn base_names_no_other_layer() {
    let v = violations(
        "base",
        &[
            "crate::model",
            "crate::engine",
            "crate::scenario",
            "crate::output",
        ],
    );
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn model_names_neither_engine_nor_scenario_nor_output() {
    let mut forbidden = ABOVE_ENGINE.to_vec();
    forbidden.push("crate::engine");
    let v = violations("model", &forbidden);
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn engine_names_neither_scenario_nor_output() {
    let v = violations("engine", &ABOVE_ENGINE);
    assert!(v.is_empty(), "{v:#?}");
}

#[test]
fn the_check_finds_a_forbidden_name() {
    // The checker itself: `scenario` names `serde`, so it would fail the engine's rule.
    assert!(!violations("scenario", &["serde"]).is_empty());
}

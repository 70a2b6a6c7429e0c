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

/// The functions of `text` (outside `#[cfg(test)]` items) longer than `max` lines, as
/// (first line, name, lines). Braces are counted per character, which is exact for this
/// code base's formatting (rustfmt) and its balanced `{}` in format strings.
fn long_functions(text: &str, max: usize) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim_start();
        if l.starts_with("#[cfg(test)]") {
            break; // test modules close every file here
        }
        let head = l
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ")
            .trim_start_matches("pub ")
            .trim_start_matches("const ");
        if let Some(rest) = head.strip_prefix("fn ") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let (mut depth, mut opened, mut j) = (0i32, false, i);
            while j < lines.len() {
                for c in lines[j].chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                if (opened && depth == 0) || (!opened && lines[j].trim_end().ends_with(';')) {
                    break;
                }
                j += 1;
            }
            if j + 1 - i > max {
                out.push((i + 1, name, j + 1 - i));
            }
            i = j + 1;
            continue;
        }
        i += 1;
    }
    out
}

#[test]
fn no_function_over_120_lines_outside_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut long = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(&root)
            .expect("under src")
            .to_string_lossy()
            .to_string();
        if rel.starts_with("tests") || rel.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("readable");
        for (line, name, n) in long_functions(&text, 120) {
            long.push(format!("{rel}:{line}: fn {name} has {n} lines"));
        }
    }
    assert!(long.is_empty(), "{long:#?}");
}

#[test]
fn the_length_check_counts_a_long_function() {
    let body = "    x += 1;\n".repeat(130);
    let text = format!("fn short() {{\n}}\npub fn long() {{\n{body}}}\n");
    assert_eq!(
        long_functions(&text, 120),
        vec![(3, "long".to_string(), 132)]
    );
}

/// The module path of a source file (`engine/net/mod.rs` → `engine::net`), or `None` for
/// files that hold only tests or a binary.
fn module_of(rel: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().to_string())
        .collect();
    let file = parts.pop()?;
    if parts.first().is_some_and(|p| p == "tests" || p == "bin") || file == "tests.rs" {
        return None;
    }
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    Some(parts)
}

/// The modules a file's code (before its `#[cfg(test)]` module, outside comments) names
/// by `crate::…` or `super::…` paths, as absolute paths.
fn named_modules(text: &str, me: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::").or_else(|| rest.find("super::")) {
            let tail = &rest[i..];
            let (mut path, body) = if let Some(b) = tail.strip_prefix("crate::") {
                (Vec::new(), b)
            } else {
                // `super` of module `f::x` (file `f/x.rs` or `f/x/mod.rs`) is `f`.
                (
                    me[..me.len().saturating_sub(1)].to_vec(),
                    &tail["super::".len()..],
                )
            };
            for seg in body.split("::") {
                let name: String = seg
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if name.is_empty() || !name.starts_with(|c: char| c.is_lowercase()) {
                    break;
                }
                path.push(name.clone());
                if name.len() != seg.len() {
                    break;
                }
            }
            out.push(path);
            rest = &tail[7..];
        }
    }
    out
}

/// Edges between sibling modules: `a → b` under `parent` when a file inside `a` names
/// something inside `b`. A module naming its own ancestors or descendants adds no edge:
/// the files of a folder module are one unit.
fn sibling_edges() -> Vec<(Vec<String>, String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut modules = std::collections::BTreeSet::new();
    let mut texts = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&root).expect("under src").to_path_buf();
        if let Some(m) = module_of(&rel) {
            modules.insert(m.clone());
            texts.push((m, std::fs::read_to_string(&f).expect("readable")));
        }
    }
    let mut edges = Vec::new();
    for (me, text) in &texts {
        for mut target in named_modules(text, me) {
            // Cut the path to the longest prefix that is a module (the rest names items).
            while !target.is_empty() && !modules.contains(&target) {
                target.pop();
            }
            let common = me.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common < me.len() && common < target.len() {
                let edge = (
                    me[..common].to_vec(),
                    me[common].clone(),
                    target[common].clone(),
                );
                if !edges.contains(&edge) {
                    edges.push(edge);
                }
            }
        }
    }
    edges
}

/// A cycle among the sibling edges, if any (as the modules along it).
fn find_cycle(edges: &[(Vec<String>, String, String)]) -> Option<Vec<String>> {
    fn visit(
        n: &(Vec<String>, String),
        edges: &[(Vec<String>, String, String)],
        stack: &mut Vec<(Vec<String>, String)>,
        done: &mut Vec<(Vec<String>, String)>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            return Some(
                stack[i..]
                    .iter()
                    .map(|s| [&s.0[..], std::slice::from_ref(&s.1)].concat().join("::"))
                    .collect(),
            );
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.clone());
        for (p, a, b) in edges {
            if *p == n.0 && *a == n.1 {
                if let Some(c) = visit(&(p.clone(), b.clone()), edges, stack, done) {
                    return Some(c);
                }
            }
        }
        stack.pop();
        done.push(n.clone());
        None
    }
    let mut done = Vec::new();
    for (p, a, _) in edges {
        let mut stack = Vec::new();
        if let Some(c) = visit(&(p.clone(), a.clone()), edges, &mut stack, &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_import_cycle_among_sibling_modules() {
    let edges = sibling_edges();
    assert!(
        edges
            .iter()
            .any(|(p, a, b)| p == &["engine"] && a == "sim" && b == "datapath"),
        "the edge finder misses sim → datapath"
    );
    assert_eq!(find_cycle(&edges), None);
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let e = |a: &str, b: &str| (vec!["engine".to_string()], a.to_string(), b.to_string());
    assert_eq!(find_cycle(&[e("a", "b"), e("b", "c")]), None);
    assert_eq!(
        find_cycle(&[e("a", "b"), e("b", "c"), e("c", "a")]),
        Some(vec![
            "engine::a".into(),
            "engine::b".into(),
            "engine::c".into()
        ])
    );
}

//! Errors in a scenario: `ScenarioError` (file, line, column, field, message), and how a
//! TOML or serde error and a semantic error find their line and field in the file's text.

mod apps;

use std::fmt;

/// An error in a scenario: which file, where, which field, and what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub file: String,
    pub line: Option<usize>,
    /// Column of a TOML syntax error (1-based, in characters), with its line.
    pub column: Option<usize>,
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ": line {l}")?;
        }
        if let Some(c) = self.column {
            write!(f, ", column {c}")?;
        }
        if let Some(k) = &self.field {
            write!(f, ", field {k}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

/// The table a header line names: "apps" for `[[apps]] # a comment`, "apps.tcp" for
/// `[apps.tcp]`; None for other lines.
fn header_name(line: &str) -> Option<String> {
    let t = line.trim();
    if !t.starts_with('[') {
        return None;
    }
    let inner = t.trim_start_matches('[');
    let name = inner.split(']').next().unwrap_or(inner);
    Some(name.trim().to_string())
}

/// Find the dotted field name for a byte offset: the nearest `[table]` header above the
/// line and the key on the line itself.
fn field_at(text: &str, offset: usize) -> (usize, Option<String>) {
    let line_no = text[..offset.min(text.len())].matches('\n').count() + 1;
    let lines: Vec<&str> = text.lines().collect();
    let mut table = String::new();
    // The headers above the line, and the line itself when it is one (an error at a
    // `[table]` header is about that table).
    for l in lines.iter().take(line_no) {
        if let Some(h) = header_name(l) {
            table = h;
        }
    }
    let key = lines.get(line_no - 1).and_then(|l| {
        let t = l.trim();
        if t.starts_with('[') || t.starts_with('#') {
            return None;
        }
        t.split_once('=')
            .map(|(k, _)| k.trim().trim_matches('"').to_string())
    });
    let field = match (key, table.is_empty()) {
        (Some(k), true) => Some(k),
        (Some(k), false) => Some(format!("{table}.{k}")),
        (None, false) => Some(table),
        (None, true) => None,
    };
    (line_no, field)
}

pub(crate) fn from_toml_error(file: &str, text: &str, e: &toml::de::Error) -> ScenarioError {
    let (span, msg) = apps::error_position(text, e);
    // toml's messages may span lines ("invalid table header\nexpected `.`, `]`").
    let msg = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ");
    match span {
        // A required top-level table is missing: name it, not the table the span starts in.
        Some(_)
            if ["sim", "topology"]
                .iter()
                .any(|t| msg == format!("missing field `{t}`")) =>
        {
            let missing = msg
                .trim_start_matches("missing field `")
                .trim_end_matches('`');
            ScenarioError {
                file: file.to_string(),
                line: None,
                column: None,
                field: Some(missing.to_string()),
                message: msg,
            }
        }
        Some(sp) => {
            let (line, field) = field_at(text, sp.start);
            ScenarioError {
                file: file.to_string(),
                line: Some(line),
                column: None,
                field,
                message: msg,
            }
        }
        None => ScenarioError {
            file: file.to_string(),
            line: None,
            column: None,
            field: None,
            message: msg,
        },
    }
}

/// The error for an array at `at` (a dotted path) where a table is read
/// (`json_schema::array_for_table`); `overridden`: found after `--set` overrides.
pub(crate) fn array_for_table(file: &str, text: &str, at: &str, overridden: bool) -> ScenarioError {
    let (table, key) = at.rsplit_once('.').unwrap_or(("", at));
    let line = if overridden {
        None
    } else {
        line_of(text, table, key)
    };
    let mut message = "invalid type: array, expected a table".to_string();
    if overridden {
        message.push_str(" (after applying overrides)");
    }
    ScenarioError {
        file: file.to_string(),
        line,
        column: None,
        field: Some(at.to_string()),
        message,
    }
}

/// Line of `key = ...` inside `[table]` (best effort, for semantic errors).
pub(crate) fn line_of(text: &str, table: &str, key: &str) -> Option<usize> {
    let mut cur = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if let Some(h) = header_name(l) {
            cur = h;
            continue;
        }
        if cur == table {
            if let Some((k, _)) = t.split_once('=') {
                if k.trim().trim_matches('"') == key {
                    return Some(i + 1);
                }
            }
        }
    }
    None
}

/// A TOML syntax error (the text is not TOML at all): its line and column, no field (the
/// line cannot be trusted to name one).
pub(crate) fn syntax_error(file: &str, text: &str, e: &toml::de::Error) -> ScenarioError {
    let msg = e.message().lines().map(str::trim).filter(|l| !l.is_empty());
    let msg = msg.collect::<Vec<_>>().join(": ");
    let (line, column) = match e.span() {
        Some(sp) => {
            let before = &text[..sp.start.min(text.len())];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let col = before[line_start..].chars().count() + 1;
            (Some(before.matches('\n').count() + 1), Some(col))
        }
        None => (None, None),
    };
    ScenarioError {
        file: file.to_string(),
        line,
        column,
        field: None,
        message: format!("TOML syntax error: {msg}"),
    }
}

//! Where an error inside an `[[apps]]` entry is: serde reads the entries through a buffer
//! without positions, so each entry is parsed again on its own (`error_position`).

use crate::scenario::config::apps::{
    BulkCfg, CbrCfg, FlowsCfg, IncastCfg, MixCfg, PingCfg, TransactionsCfg, WorkloadCfg,
};
use serde::Deserialize;
use std::ops::Range;

/// Where an error in a scenario's text is and what it says. serde reads an internally tagged
/// enum through a buffer that keeps no positions, so an error inside an `[[apps]]` entry
/// comes back with the span of the whole `apps` array, and a bad value without its key. For
/// such an error each entry is parsed again on its own, directly as its kind's struct, in a
/// copy of `text` with everything else and the `kind` key blanked (offsets and lines
/// unchanged); the first entry that fails is the one serde stopped at, and toml now points
/// at the key. Other errors pass through.
pub(super) fn error_position(text: &str, e: &toml::de::Error) -> (Option<Range<usize>>, String) {
    let msg = e.message().trim().to_string();
    let Some(span) = e.span() else {
        return (None, msg);
    };
    match reparse_entries(text, &span) {
        Some((sp, m)) => (Some(sp), m),
        None => (Some(span), msg),
    }
}

/// The `[[apps]]` entries inside `span`, each parsed alone: the span and message of the first
/// error found (None if `span` holds no entry or every entry parses alone).
fn reparse_entries(text: &str, span: &Range<usize>) -> Option<(Range<usize>, String)> {
    #[derive(Deserialize)]
    struct Entries {
        #[serde(default)]
        apps: Vec<toml::Spanned<Entry>>,
    }
    #[derive(Deserialize)]
    struct Entry {
        kind: Option<toml::Spanned<String>>,
    }
    let entries: Entries = toml::from_str(text).ok()?;
    let starts: Vec<usize> = entries.apps.iter().map(|a| a.span().start).collect();
    for (i, entry) in entries.apps.iter().enumerate() {
        let sp = entry.span();
        if !span.contains(&sp.start) {
            continue;
        }
        // A `[[apps]]` entry owns the text up to the next one (its `[apps.tcp]` table is
        // written after it); other tables in between are ignored by the parse below.
        let inline = !text[sp.clone()].starts_with('[');
        let end = match starts.get(i + 1) {
            _ if inline => sp.end,
            Some(&next) => next,
            None => text.len(),
        };
        let kind = entry.get_ref().kind.as_ref()?;
        if let Some(found) = reparse_entry(text, sp.start..end, inline, kind) {
            return Some(found);
        }
    }
    None
}

/// Entry `region` parsed alone as kind `kind`'s struct: the span and message of its error.
fn reparse_entry(
    text: &str,
    region: Range<usize>,
    inline: bool,
    kind: &toml::Spanned<String>,
) -> Option<(Range<usize>, String)> {
    let blank = key_value_span(text, kind.span());
    let bytes: Vec<u8> = text
        .bytes()
        .enumerate()
        .map(|(i, b)| {
            let keep = region.contains(&i) && !blank.contains(&i);
            if keep || b == b'\n' {
                b
            } else {
                b' '
            }
        })
        .collect();
    let body = String::from_utf8(bytes).ok()?;
    // An inline entry (`apps = [{ ... }]`) needs an array around it to be a document.
    let prefix = if inline { "apps=[" } else { "" };
    let doc = format!("{prefix}{body}{}", if inline { "]" } else { "" });
    let (e, own) = match kind.get_ref().as_str() {
        "incast" => probe::<IncastCfg>(&doc),
        "bulk" => probe::<BulkCfg>(&doc),
        "cbr" => probe::<CbrCfg>(&doc),
        "flows" => probe::<FlowsCfg>(&doc),
        "mix" => probe::<MixCfg>(&doc),
        "ping" => probe::<PingCfg>(&doc),
        "transactions" => probe::<TransactionsCfg>(&doc),
        "workload" => probe::<WorkloadCfg>(&doc),
        _ => return None,
    };
    let e = e?;
    let sp = e.span()?;
    let sp = sp.start.saturating_sub(prefix.len())..sp.end.saturating_sub(prefix.len());
    let mut msg = e.message().trim().to_string();
    // A key of the entry itself (not of its `tcp` table) that this kind does not have.
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some((name, expected)) = rest.split_once("`, ") {
            if own.as_deref() == Some(expected) {
                msg = format!(
                    "unknown field `{name}` for kind {:?}: {expected}",
                    kind.get_ref()
                );
            }
        }
    }
    Some((sp, msg))
}

/// The error of parsing `doc` as one `[[apps]]` entry of type `T` (None if it parses), and
/// the "expected ..." list of `T`'s keys that serde writes in its unknown-field errors.
fn probe<T: serde::de::DeserializeOwned>(doc: &str) -> (Option<toml::de::Error>, Option<String>) {
    #[derive(Deserialize)]
    struct One<T> {
        #[allow(dead_code)]
        apps: Vec<T>,
    }
    // No app struct has a `kind` field (serde takes the tag), so this is always unknown.
    let own = toml::from_str::<T>("kind = 0").err().and_then(|e| {
        let m = e.message().trim().to_string();
        m.split_once("`, ").map(|(_, x)| x.to_string())
    });
    (toml::from_str::<One<T>>(doc).err(), own)
}

/// The text of `key = value` around the value at `value`: the key before it, and for an
/// inline table one comma (after it, or before it for the last key), so that blanking it
/// leaves valid TOML.
fn key_value_span(text: &str, value: Range<usize>) -> Range<usize> {
    let b = text.as_bytes();
    let mut i = value.start;
    let skip_back = |mut i: usize| {
        while i > 0 && (b[i - 1] == b' ' || b[i - 1] == b'\t') {
            i -= 1;
        }
        i
    };
    i = skip_back(i);
    if i > 0 && b[i - 1] == b'=' {
        i = skip_back(i - 1);
    }
    if i > 0 && (b[i - 1] == b'"' || b[i - 1] == b'\'') {
        let q = b[i - 1];
        i -= 1;
        while i > 0 && b[i - 1] != q {
            i -= 1;
        }
        i = i.saturating_sub(1);
    } else {
        while i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'-') {
            i -= 1;
        }
    }
    let mut end = value.end;
    while end < b.len() && (b[end] == b' ' || b[end] == b'\t') {
        end += 1;
    }
    if end < b.len() && b[end] == b',' {
        return i..end + 1;
    }
    let before = skip_back(i);
    if before > 0 && b[before - 1] == b',' {
        return before - 1..value.end;
    }
    i..value.end
}

//! `Ctx`: what the builders share while they build a `Sim` from a loaded scenario: the
//! scenario itself, and the semantic errors and warnings, shaped with the file, line and
//! field of the key they are about.

use crate::base::limits;
use crate::base::units::SimTime;
use crate::scenario::error::{line_of, ScenarioError};
use crate::scenario::Loaded;

pub(crate) struct Ctx<'a> {
    pub(crate) loaded: &'a Loaded,
    /// Legal but suspicious settings found while building (`suspicious`), each once.
    pub(crate) warnings: std::cell::RefCell<Vec<String>>,
}

impl Ctx<'_> {
    /// `v` within `lo ..= hi` (`what`: the unit and the limits entry, for the message).
    pub(crate) fn in_range(
        &self,
        table: &str,
        key: &str,
        v: u64,
        (lo, hi): (u64, u64),
        what: &str,
    ) -> Result<(), ScenarioError> {
        if (lo..=hi).contains(&v) {
            return Ok(());
        }
        let range = format!("{lo} ..= {hi}{what}");
        Err(self.err(table, key, limits::out_of_range(&v.to_string(), &range)))
    }

    /// A `[measure]` sampling interval: at least `limits::SAMPLE_INTERVAL_MIN_PS`.
    pub(crate) fn interval(&self, key: &str, d: SimTime) -> Result<(), ScenarioError> {
        if d.0 >= limits::SAMPLE_INTERVAL_MIN_PS {
            return Ok(());
        }
        let msg = format!(
            "{}ns is below 1us (limits: measure intervals)",
            d.0 as f64 / 1e3
        );
        Err(self.err("measure", key, msg))
    }

    /// Record a warning (once: the same text twice is kept once), shaped as an error.
    pub(crate) fn warn(&self, table: &str, key: &str, message: &str) {
        let text = self.err(table, key, message).to_string();
        let mut w = self.warnings.borrow_mut();
        if !w.contains(&text) {
            w.push(text);
        }
    }

    pub(crate) fn err(&self, table: &str, key: &str, message: impl Into<String>) -> ScenarioError {
        let field = if table.is_empty() {
            key.to_string()
        } else {
            format!("{table}.{key}")
        };
        let line = if self.loaded.overridden.contains(&field) {
            None
        } else {
            line_of(&self.loaded.text, table, key)
        };
        ScenarioError {
            file: self.loaded.file.clone(),
            line,
            column: None,
            field: Some(field),
            message: message.into(),
        }
    }

    /// The error for an input-sized allocation the allocator refused (`base::alloc`),
    /// naming `key` (dotted) as the one to lower.
    pub(crate) fn alloc_err(&self, e: crate::base::alloc::AllocError, key: &str) -> ScenarioError {
        let (table, k) = key.rsplit_once('.').unwrap_or(("", key));
        self.err(table, k, format!("{e}: lower {key}"))
    }
}

//! Scenario files (TOML): schema, validation with errors that name the file, line and field,
//! `--set key=value` overrides, and construction of a `Sim`.
//!
//! The top-level tables `[sweep]`, `[quick]` and `[report]` belong to the Python front end
//! (sweep axes, quick-mode overrides, report kind); the engine accepts them unread.
//!
//! The parts: `config/` (the tables' structs and their defaults, one file per section),
//! `error/` (`ScenarioError` and the line and field of an error), `overrides.rs` (`--set`),
//! `ctx.rs` (errors and warnings while building), `build/` (one builder per section and
//! `build`, which calls them in order), `json_schema.rs` (`dcnsim schema --json`). This file
//! reads a scenario (`load`): TOML, overrides, the structs, then one build for the checks.

mod build;
pub mod config;
mod ctx;
mod error;
pub mod json_schema;
mod overrides;

pub use build::estimate::budget as estimate_budget;
pub use build::{build, BuildInfo};
pub use config::{
    AppCfg, AqmCfg, Dur, LinkCfg, MarkCfg, MarkDefaults, MeasureCfg, Meta, NodeCfg, QueuesCfg,
    Rate, Scenario, SimCfg, Size, SizeOrUnlimited, TcpCfgFile, Threshold, TopoKind, TopologyCfg,
};
pub use error::ScenarioError;
pub use overrides::apply_overrides;

use error::{array_for_table, from_toml_error, syntax_error};
use overrides::{overridden_keys, override_field};

/// A parsed scenario with the name of the file it came from (for later error messages).
#[derive(Clone, Debug)]
pub struct Loaded {
    pub file: String,
    /// The file's text (line numbers in errors refer to it).
    pub text: String,
    pub scenario: Scenario,
    /// The dotted keys `--set` overrides, list indices left out ("apps.0.sru" is
    /// "apps.sru"): an error about one of them has no line (the value is not the file's).
    pub overridden: Vec<String>,
    /// Legal but suspicious settings (`BuildInfo::warnings`), found by `load`'s build.
    pub warnings: Vec<String>,
    /// Memory the run may take (`estimate::budget`); None: not checked.
    pub budget: Option<u64>,
}

/// Parse and validate a scenario. Errors name the file, line and field. The memory the run
/// would take is checked against what is available (`estimate::budget`).
pub fn load(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
) -> Result<Loaded, ScenarioError> {
    load_with_budget(text, file, overrides, estimate_budget(None))
}

/// As `load`, with the memory the run may take (None: not checked).
pub fn load_with_budget(
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    budget: Option<u64>,
) -> Result<Loaded, ScenarioError> {
    let parsed = match toml::from_str::<toml::Table>(text) {
        Ok(t) => t,
        Err(e) => return Err(syntax_error(file, text, &e)),
    };
    let overridden = overridden_keys(overrides);
    if let Some(at) = json_schema::array_for_table(&parsed) {
        return Err(array_for_table(file, text, &at, false));
    }
    let base: Scenario = toml::from_str(text).map_err(|e| from_toml_error(file, text, &e))?;
    let scenario = if overrides.is_empty() {
        base
    } else {
        let mut table = parsed;
        apply_overrides(&mut table, overrides).map_err(|m| ScenarioError {
            file: file.to_string(),
            line: None,
            column: None,
            field: None,
            message: m,
        })?;
        if let Some(at) = json_schema::array_for_table(&table) {
            return Err(array_for_table(file, text, &at, true));
        }
        let merged = toml::to_string(&table).map_err(|e| ScenarioError {
            file: file.to_string(),
            line: None,
            column: None,
            field: None,
            message: format!("cannot apply overrides: {e}"),
        })?;
        let s: Scenario = toml::from_str(&merged).map_err(|e| {
            let mut err = from_toml_error(file, &merged, &e);
            err.line = None;
            if let Some(k) = override_field(err.field.as_deref(), &err.message, &overridden) {
                err.field = Some(k);
            }
            err.message = format!("{} (after applying overrides)", err.message);
            err
        })?;
        s
    };
    let mut loaded = Loaded {
        file: file.to_string(),
        text: text.to_string(),
        scenario,
        overridden,
        warnings: Vec::new(),
        budget,
    };
    // Build once to run every semantic check.
    loaded.warnings = build(&loaded)?.1.warnings;
    Ok(loaded)
}

//! Unit tests that need whole scenarios (they build a `Sim` from TOML and read the result
//! tables), so they sit above every layer instead of inside `engine/`, which may not name
//! `scenario` or `output`. The helpers below are shared by them.

mod l2;
mod layers;
mod mq_port;
mod pfc;
mod queue_mean;
mod route_hint;

use crate::output::{Column, Table};

/// Run a scenario given as TOML text (no overrides); panics with the error if it fails.
pub fn run(text: &str) -> Vec<Table> {
    crate::run_text(text, "test.toml", &[], &mut |_| true).expect("scenario runs")
}

/// The single value of `table.col` as f64.
pub fn get(tables: &[Table], table: &str, col: &str) -> f64 {
    tables
        .iter()
        .find(|t| t.name == table)
        .and_then(|t| t.get_f64(col))
        .unwrap_or_else(|| panic!("{table}.{col} missing"))
}

/// A numeric column of `table` as f64 values.
pub fn col_f64(tables: &[Table], table: &str, col: &str) -> Vec<f64> {
    match tables
        .iter()
        .find(|t| t.name == table)
        .and_then(|t| t.get(col))
    {
        Some(Column::F64(v)) => v.clone(),
        Some(Column::I64(v)) => v.iter().map(|&x| x as f64).collect(),
        _ => panic!("{table}.{col} missing"),
    }
}

//! Minimal engine-only runner (no Python): `dcnsim-engine FILE [key=value ...]`.
//! Prints the summary table; used for profiling and quick checks.

use std::process::ExitCode;

/// The system allocator with an emergency reserve: a run that runs out of memory stops with
/// its partial tables instead of aborting (`dcnsim::base::alloc::WithReserve`).
#[global_allocator]
static ALLOC: dcnsim::base::alloc::WithReserve = dcnsim::base::alloc::WithReserve;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: dcnsim-engine FILE [key=value ...]");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("dcnsim-engine: error: cannot read {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut overrides = Vec::new();
    for a in &args[1..] {
        match a.split_once('=') {
            Some((k, v)) => overrides.push((k.to_string(), v.to_string())),
            None => {
                eprintln!("dcnsim-engine: error: override {a:?} is not key=value");
                return ExitCode::from(2);
            }
        }
    }
    let mut progress = |_f: f64| true;
    match dcnsim::run_text(&text, path, &overrides, &mut progress) {
        Ok(tables) => {
            for t in tables
                .iter()
                .filter(|t| t.name == "summary" || t.name == "apps")
            {
                for (name, col) in &t.columns {
                    let v = match col {
                        dcnsim::Column::F64(v) => format!("{v:?}"),
                        dcnsim::Column::I64(v) => format!("{v:?}"),
                        dcnsim::Column::OptI64(v) => format!("{v:?}"),
                        dcnsim::Column::Str(v) => format!("{v:?}"),
                    };
                    println!("{}.{name} = {v}", t.name);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("dcnsim-engine: error: {e}");
            ExitCode::from(2)
        }
    }
}

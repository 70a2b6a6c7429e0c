//! Thin PyO3 bindings over the dcnsim engine: run or validate a scenario and hand the result
//! tables to Python as dicts of column lists. The GIL is released while simulating.

use dcnsim::{Column, Table};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// The system allocator with an emergency reserve: a run that runs out of memory stops with
/// its partial tables instead of aborting the Python process
/// (`dcnsim::base::alloc::WithReserve`).
#[global_allocator]
static ALLOC: dcnsim::base::alloc::WithReserve = dcnsim::base::alloc::WithReserve;

create_exception!(_core, ScenarioError, PyValueError, "A scenario is invalid.");
create_exception!(
    _core,
    EngineError,
    PyRuntimeError,
    "The engine failed on a scenario (a bug: an internal panic, caught)."
);

/// Run `f`, turning a Rust panic into an `EngineError` naming the scenario `path` (the
/// release profile unwinds, so no panic aborts the interpreter).
fn no_panic<T>(path: &str, f: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        let msg = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        let line = msg.lines().next().unwrap_or("");
        EngineError::new_err(format!("{path}: internal engine error: {line}"))
    })
}

fn to_py_err(e: dcnsim::ScenarioError) -> PyErr {
    ScenarioError::new_err(e.to_string())
}

fn tables_to_py<'py>(py: Python<'py>, tables: Vec<Table>) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for t in tables {
        let d = PyDict::new(py);
        for (name, col) in t.columns {
            let list = match col {
                Column::F64(v) => PyList::new(py, v)?,
                Column::I64(v) => PyList::new(py, v)?,
                Column::OptI64(v) => PyList::new(py, v)?,
                Column::Str(v) => PyList::new(py, v)?,
            };
            d.set_item(name, list)?;
        }
        out.set_item(t.name, d)?;
    }
    Ok(out)
}

/// Simulate a scenario with the GIL released; about every million events, let Python
/// handle signals (Ctrl-C in the main thread) and report progress.
fn simulate(
    py: Python<'_>,
    text: String,
    path: String,
    overrides: Vec<(String, String)>,
    progress: Option<Py<PyAny>>,
    opts: dcnsim::RunOptions,
) -> PyResult<dcnsim::RunOutput> {
    let mut interrupted: Option<PyErr> = None;
    let res = py.allow_threads(|| {
        let mut progress = |f: f64| {
            Python::with_gil(|py| {
                let r = py.check_signals().and_then(|()| match &progress {
                    Some(cb) => cb.call1(py, (f,)).map(|_| ()),
                    None => Ok(()),
                });
                match r {
                    Ok(()) => true,
                    Err(e) => {
                        interrupted = Some(e);
                        false
                    }
                }
            })
        };
        no_panic(&path, || {
            dcnsim::run_text_with(&text, &path, &overrides, &opts, &mut progress)
        })
    })?;
    if let Some(e) = interrupted {
        return Err(e);
    }
    res.map_err(to_py_err)
}

/// Run one scenario (TOML text); returns {table name: {column: list}}. `progress`, if
/// given, is called with 0.0 when the simulation starts, then with the fraction of
/// simulated time done about every million events.
#[pyfunction]
#[pyo3(signature = (text, path, overrides=Vec::new(), progress=None))]
fn run<'py>(
    py: Python<'py>,
    text: String,
    path: String,
    overrides: Vec<(String, String)>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let _reserve = dcnsim::base::alloc::enter_run();
    let out = simulate(py, text, path, overrides, progress, Default::default())?;
    tables_to_py(py, out.tables)
}

/// As `run`, and the packet captures of `[measure] pcap` and what the run reports beside
/// its tables: returns (tables, {port name: libpcap file bytes}, {"warnings": [lines],
/// "stopped": why the run stopped early or None, "check_failed": the failed self-checks or
/// None}). `check`: the end-of-run self-checks (`Sim::check_run`); `max_events`, `max_wall` (seconds): stop cleanly, tables marked
/// partial; `max_memory` (bytes): refuse a run estimated above it.
#[pyfunction]
#[pyo3(signature = (text, path, overrides=Vec::new(), progress=None, *, check=false,
                    max_events=None, max_wall=None, max_memory=None))]
#[allow(clippy::too_many_arguments)]
fn run_captured<'py>(
    py: Python<'py>,
    text: String,
    path: String,
    overrides: Vec<(String, String)>,
    progress: Option<Py<PyAny>>,
    check: bool,
    max_events: Option<u64>,
    max_wall: Option<f64>,
    max_memory: Option<u64>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let max_wall = match max_wall {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            return Err(PyValueError::new_err(format!(
                "max_wall must be a positive number of seconds, not {s}"
            )))
        }
        w => w.map(std::time::Duration::from_secs_f64),
    };
    // The emergency reserve (`base::alloc::WithReserve`) stays set aside until the tables
    // are Python lists: a refusal while converting them (PyO3's own error path allocates)
    // takes it instead of aborting; Python's refusals are `MemoryError`s. Found under
    // `ulimit -v` 460-470 MB on a 99 998-server star (SIGABRT after the run).
    let _reserve = dcnsim::base::alloc::enter_run();
    let opts = dcnsim::RunOptions {
        check,
        max_events,
        max_wall,
        max_memory,
    };
    let out = simulate(py, text, path, overrides, progress, opts)?;
    let caps = PyDict::new(py);
    for (port, bytes) in out.captures {
        caps.set_item(port, PyBytes::new(py, &bytes))?;
    }
    let info = PyDict::new(py);
    info.set_item("warnings", PyList::new(py, out.warnings)?)?;
    info.set_item("stopped", out.stopped)?;
    info.set_item("check_failed", out.check_failed)?;
    Ok((tables_to_py(py, out.tables)?, caps, info))
}

/// Parse and check a scenario without running it; returns the warnings about legal but
/// suspicious settings (one line each).
#[pyfunction]
#[pyo3(signature = (text, path, overrides=Vec::new()))]
fn validate(
    py: Python<'_>,
    text: String,
    path: String,
    overrides: Vec<(String, String)>,
) -> PyResult<Vec<String>> {
    py.allow_threads(|| no_panic(&path, || dcnsim::validate_text(&text, &path, &overrides)))?
        .map_err(to_py_err)
}

#[pyfunction]
fn schema() -> String {
    dcnsim::schema()
}

#[pyfunction]
fn schema_json() -> String {
    dcnsim::scenario::json_schema::json_schema()
}

#[pyfunction]
fn version() -> &'static str {
    dcnsim::version()
}

/// `Some(text)` for a non-empty build-time value, else `None`.
fn non_empty(text: &'static str) -> Option<&'static str> {
    (!text.is_empty()).then_some(text)
}

/// The git commit of the source tree this extension was built from (`<sha>+dirty` when a
/// tracked file differed from it), or None when built without git or outside a repository
/// (`build.rs`).
#[pyfunction]
fn build_commit() -> Option<&'static str> {
    non_empty(env!("DCNSIM_BUILD_COMMIT"))
}

/// The top folder of the git work tree this extension was built from, or None (`build.rs`).
#[pyfunction]
fn build_tree() -> Option<&'static str> {
    non_empty(env!("DCNSIM_BUILD_TREE"))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A caught panic becomes an `EngineError` (`no_panic`) carrying its message: the default
    // hook's multi-line report on stderr is kept for RUST_BACKTRACE only.
    if std::env::var_os("RUST_BACKTRACE").is_none() {
        std::panic::set_hook(Box::new(|_| {}));
    }
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_captured, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build_commit, m)?)?;
    m.add_function(wrap_pyfunction!(build_tree, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    Ok(())
}

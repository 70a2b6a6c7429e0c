//! Thin PyO3 bindings over the dcnsim engine: run or validate a scenario and hand the result
//! tables to Python as dicts of column lists. The GIL is released while simulating.

use dcnsim::{Column, Table};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

create_exception!(_core, ScenarioError, PyValueError, "A scenario is invalid.");

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
        dcnsim::run_text_captured(&text, &path, &overrides, &mut progress)
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    res.map_err(to_py_err)
}

/// Run one scenario (TOML text); returns {table name: {column: list}}. `progress`, if
/// given, is called with the fraction of simulated time done about every million events.
#[pyfunction]
#[pyo3(signature = (text, path, overrides=Vec::new(), progress=None))]
fn run<'py>(
    py: Python<'py>,
    text: String,
    path: String,
    overrides: Vec<(String, String)>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = simulate(py, text, path, overrides, progress)?;
    tables_to_py(py, out.tables)
}

/// As `run`, and the packet captures of `[measure] pcap`: returns (tables,
/// {port name: libpcap file bytes}).
#[pyfunction]
#[pyo3(signature = (text, path, overrides=Vec::new(), progress=None))]
fn run_captured<'py>(
    py: Python<'py>,
    text: String,
    path: String,
    overrides: Vec<(String, String)>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let out = simulate(py, text, path, overrides, progress)?;
    let caps = PyDict::new(py);
    for (port, bytes) in out.captures {
        caps.set_item(port, PyBytes::new(py, &bytes))?;
    }
    Ok((tables_to_py(py, out.tables)?, caps))
}

/// Parse and check a scenario without running it.
#[pyfunction]
#[pyo3(signature = (text, path, overrides=Vec::new()))]
fn validate(
    py: Python<'_>,
    text: String,
    path: String,
    overrides: Vec<(String, String)>,
) -> PyResult<()> {
    py.allow_threads(|| dcnsim::validate_text(&text, &path, &overrides))
        .map_err(to_py_err)
}

#[pyfunction]
fn schema() -> String {
    dcnsim::schema()
}

#[pyfunction]
fn version() -> &'static str {
    dcnsim::version()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_captured, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    Ok(())
}

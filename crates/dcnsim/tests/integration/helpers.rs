//! What the topic modules share: running scenario text, reading the result tables, and a
//! template for scripted packets.

use dcnsim::base::ids::{FlowId, NodeId};
use dcnsim::base::packet::{Kind, Packet};
use dcnsim::engine::sim::Sim;
use dcnsim::output::{Column, Table};

/// `("key", "value")` pairs as the owned overrides `run_text` and `load` take.
pub fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Run scenario text to the end; `file` is the name errors cite and the directory relative
/// paths (a workload's `cdf_file`) are resolved against. Checks packet conservation at
/// every port after the run (`Sim::check_conservation`).
pub fn run_file(text: &str, file: &str, overrides: &[(&str, &str)]) -> Vec<Table> {
    let (loaded, sim, info) = run_sim(text, file, overrides);
    dcnsim::output::collect(&loaded, &sim, &info)
}

/// Load, build and run scenario text as `run_text` does, check packet conservation at every
/// port, and return the finished simulation (for tests that read its counters).
pub fn run_sim(
    text: &str,
    file: &str,
    overrides: &[(&str, &str)],
) -> (dcnsim::scenario::Loaded, Sim, dcnsim::scenario::BuildInfo) {
    let loaded = dcnsim::scenario::load(text, file, &set(overrides)).expect("scenario loads");
    let (mut sim, info) = dcnsim::scenario::build(&loaded).expect("scenario builds");
    sim.start();
    sim.run(&mut |_| true);
    if let Err(e) = sim.check_conservation() {
        panic!("packet conservation fails after the run: {e}");
    }
    (loaded, sim, info)
}

/// Run scenario text with overrides under the file name `test.toml`.
pub fn run_with(text: &str, overrides: &[(&str, &str)]) -> Vec<Table> {
    run_file(text, "test.toml", overrides)
}

/// Run scenario text as written.
pub fn run(text: &str) -> Vec<Table> {
    run_with(text, &[])
}

/// The result table called `name`.
pub fn table<'a>(tables: &'a [Table], name: &str) -> &'a Table {
    tables
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no table {name}"))
}

/// A numeric column as floats (integer columns converted).
pub fn f64s(t: &Table, col: &str) -> Vec<f64> {
    match t.get(col).unwrap_or_else(|| panic!("no column {col}")) {
        Column::F64(v) => v.clone(),
        Column::I64(v) => v.iter().map(|x| *x as f64).collect(),
        Column::OptI64(v) => v.iter().map(|x| x.map_or(f64::NAN, |x| x as f64)).collect(),
        Column::Str(_) => panic!("{col} is a string column"),
    }
}

/// A string column.
pub fn strs(t: &Table, col: &str) -> Vec<String> {
    match t.get(col).unwrap_or_else(|| panic!("no column {col}")) {
        Column::Str(v) => v.clone(),
        _ => panic!("{col} is not a string column"),
    }
}

/// The first value of column `col` of table `name`.
pub fn first_f64(tables: &[Table], name: &str, col: &str) -> f64 {
    table(tables, name)
        .get_f64(col)
        .unwrap_or_else(|| panic!("no value in {name}.{col}"))
}

/// Column `col` of the `ports` table in the row of port `port`.
pub fn port_row(tables: &[Table], port: &str, col: &str) -> f64 {
    let ports = table(tables, "ports");
    let i = strs(ports, "port")
        .iter()
        .position(|n| n == port)
        .unwrap_or_else(|| panic!("no port {port}"));
    f64s(ports, col)[i]
}

/// A UDP datagram of `size` bytes on the wire (28 of them headers) from node 0 to `dst`,
/// not ECN-capable and outside any flow; fill other fields by struct update.
pub fn udp(seq: u64, size: u32, dst: NodeId) -> Packet {
    Packet {
        seq,
        ..Packet::new(Kind::Udp, FlowId::NONE, (NodeId(0), dst), size, size - 28)
    }
}

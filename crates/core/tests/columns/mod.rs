//! Running a scenario to its end and reading its report, in the integration tests of the
//! designs that report by name (Ethernet, Stardust).

use cellfabric_core::Report;

/// Runs the scenario `json` to its end; the run's invariants must hold.
pub fn run(json: &str) -> Report {
    let mut sim = cellfabric_core::build(json).expect("valid scenario");
    sim.advance(u64::MAX);
    sim.finish().expect("run keeps its invariants")
}

/// Summary key `key` as a number.
pub fn f(report: &Report, key: &str) -> f64 {
    report.summary[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key}"))
}

/// Column `name` of table `table` as numbers.
pub fn column(report: &Report, table: &str, name: &str) -> Vec<f64> {
    report.tables[table][name]
        .as_array()
        .unwrap_or_else(|| panic!("{table}.{name}"))
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

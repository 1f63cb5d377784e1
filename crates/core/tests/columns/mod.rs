//! Reading a report's tables in the integration tests of designs with transport hosts.

use cellfabric_core::Report;

/// Column `name` of table `table` as numbers.
pub fn column(report: &Report, table: &str, name: &str) -> Vec<f64> {
    report.tables[table][name]
        .as_array()
        .unwrap_or_else(|| panic!("{table}.{name}"))
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

//! Helpers shared by the integration tests.

use cellfabric_core::{Scenario, Summary, Tables};

/// Runs a scenario given as JSON text; every run checks conservation on the way out.
pub fn run(json: &str) -> (Summary, Tables) {
    let scenario = Scenario::from_json(json).expect("valid scenario");
    let (summary, tables) = cellfabric_core::designs::single_switch::build(&scenario)
        .expect("a star")
        .run()
        .expect("run keeps its invariants");
    assert_eq!(
        summary.cells.cells_injected,
        summary.cells.cells_delivered + summary.cells.cells_dropped + summary.cells.cells_in_flight,
        "conservation"
    );
    (summary, tables)
}

/// A single-switch scenario with `ports` ports, `scheduler`, Bernoulli uniform `load`, run for
/// `cells` cell times with a tenth of warm-up.
pub fn switch(ports: u32, scheduler: &str, load: f64, cells: u64, extra: &str) -> String {
    format!(
        r#"{{"run": {{"seed": 7, "duration_ns": {duration_ns}, "warmup_ns": {warmup_ns}}},
            "switch": {{"ports": {ports}, "scheduler": "{scheduler}" {extra}}},
            "traffic": {{"load": {load}}}}}"#,
        duration_ns = cells_ns(cells),
        warmup_ns = cells_ns(cells / 10),
    )
}

/// `cells` cell times of 64 bytes at 100 Gbit/s (the default cell and link), in nanoseconds.
pub fn cells_ns(cells: u64) -> f64 {
    cells as f64 * 5.12
}

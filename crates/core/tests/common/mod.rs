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
        summary.cells_injected,
        summary.cells_delivered + summary.cells_dropped + summary.cells_in_flight,
        "conservation"
    );
    (summary, tables)
}

/// A single-switch scenario with `ports` ports, `scheduler`, Bernoulli uniform `load`, run for
/// `cells` cell times with a tenth of warm-up.
pub fn switch(ports: u32, scheduler: &str, load: f64, cells: u64, extra: &str) -> String {
    format!(
        r#"{{"run": {{"seed": 7, "duration_cells": {cells}, "warmup_cells": {warmup}}},
            "switch": {{"ports": {ports}, "scheduler": "{scheduler}" {extra}}},
            "traffic": {{"load": {load}}}}}"#,
        warmup = cells / 10
    )
}

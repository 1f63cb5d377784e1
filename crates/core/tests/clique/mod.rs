//! Helpers shared by the Aquila Clique tests: build or run a cell-fabric scenario given as JSON,
//! and the four sampled routing modes.

use cellfabric_core::designs::cell_fabric;
use cellfabric_core::{Scenario, Summary};

/// Builds the scenario, or the key at fault and its message.
pub fn build(json: &str) -> Result<cell_fabric::CellFabric, String> {
    let scenario = Scenario::from_json(json).map_err(|e| format!("{}: {}", e.key, e.message))?;
    cell_fabric::build(&scenario).map_err(|e| format!("{}: {}", e.key, e.message))
}

/// Runs the scenario; the run must end without a deadlock and with every cell accounted for.
pub fn run(json: &str) -> Summary {
    let (summary, _) = build(json)
        .expect("buildable Clique")
        .run()
        .expect("no deadlock, every cell accounted for");
    summary
}

/// Aquila's four routing modes (§3.2, §6).
pub const MODES: [&str; 4] = [
    "aquila_fully_adaptive",
    "aquila_minimal_adaptive",
    "aquila_deterministic",
    "aquila_minimal_deterministic",
];

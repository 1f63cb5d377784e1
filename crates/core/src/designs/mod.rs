//! Whole systems wired from the building blocks: one module per design, each behind the same
//! [`Simulation`] interface so front ends run any of them alike.

pub mod rifl;
pub mod single_switch;

use serde::Serialize;

use crate::engine::time::TimePs;
use crate::scenario::{Scenario, ScenarioError};

/// The designs a scenario may name in its `design` key.
pub const DESIGNS: &[&str] = &["single_switch"];

/// A run's failure to keep its own invariants.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// Cells were created or lost outside the account.
    #[error("conservation violated: injected {injected} != delivered {delivered} + dropped {dropped} + in flight {in_flight}")]
    Conservation {
        /// Cells generated.
        injected: u64,
        /// Cells sunk.
        delivered: u64,
        /// Cells dropped.
        dropped: u64,
        /// Cells alive at the end.
        in_flight: u64,
    },
    /// A configuration that promises no loss dropped cells.
    #[error("lossless configuration dropped {0} cells")]
    LossInLosslessRun(u64),
    /// Nothing could move any more while cells were in flight.
    #[error("deadlock: {0}")]
    Deadlock(String),
}

/// What a finished run reports: its summary and its tables, as JSON values (each design has
/// its own summary fields and tables; front ends render whatever is there).
#[derive(Clone, Debug)]
pub struct Report {
    /// Headline numbers.
    pub summary: serde_json::Value,
    /// Named tables, each an object of equally long columns.
    pub tables: serde_json::Value,
}

impl Report {
    /// A report from a design's own summary and tables types.
    pub fn new(summary: &impl Serialize, tables: &impl Serialize) -> Report {
        Report {
            summary: serde_json::to_value(summary).expect("summaries serialize"),
            tables: serde_json::to_value(tables).expect("tables serialize"),
        }
    }
}

/// One run of any design, advanced in steps of simulated time so front ends can show progress.
pub trait Simulation: Send + Sync {
    /// Runs every event due at or before `until_ps` (capped at the end of the run); returns true
    /// once the run is complete.
    fn advance(&mut self, until_ps: TimePs) -> bool;
    /// Current simulated time.
    fn now_ps(&self) -> TimePs;
    /// Simulated time at which the run ends.
    fn end_ps(&self) -> TimePs;
    /// Events processed so far.
    fn events(&self) -> u64;
    /// Checks the run's invariants (conservation, no loss where lossless, no deadlock) and
    /// reports.
    fn finish(self: Box<Self>) -> Result<Report, RunError>;
}

/// Validates a scenario (JSON text) and builds the design its `design` key names.
pub fn build(json: &str) -> Result<Box<dyn Simulation>, ScenarioError> {
    let value: serde_json::Value = serde_json::from_str(json).map_err(|e| ScenarioError {
        key: "scenario".into(),
        message: format!("not valid JSON: {e}"),
    })?;
    let design = match value.get("design") {
        None => "single_switch",
        Some(serde_json::Value::String(name)) => name.as_str(),
        Some(_) => "",
    };
    match design {
        "single_switch" => Ok(Box::new(single_switch::SingleSwitch::new(
            &Scenario::from_json(json)?,
        ))),
        other => Err(ScenarioError {
            key: "design".into(),
            message: format!("expected one of {}, got {other:?}", DESIGNS.join(", ")),
        }),
    }
}

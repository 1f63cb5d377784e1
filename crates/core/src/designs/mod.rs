//! Whole systems wired from the building blocks: one module per design, each behind the same
//! [`Simulation`] interface so front ends run any of them alike.

pub mod cell_fabric;
pub mod clint;
pub mod rifl;
pub mod single_switch;

use serde::Serialize;

use crate::blocks::network::Network;
pub use crate::blocks::network::RunError;
use crate::blocks::routing::Router;

use crate::engine::time::TimePs;
use crate::scenario::{Scenario, ScenarioError, TopologyName};

/// The designs a scenario may name in its `design` key.
pub const DESIGNS: &[&str] = &["single_switch", "cell_fabric", "rifl", "rifl_link", "clint"];

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

impl<R: Router + Send + Sync> Simulation for Network<R> {
    fn advance(&mut self, until_ps: TimePs) -> bool {
        Network::advance(self, until_ps)
    }

    fn now_ps(&self) -> TimePs {
        Network::now_ps(self)
    }

    fn end_ps(&self) -> TimePs {
        Network::end_ps(self)
    }

    fn events(&self) -> u64 {
        Network::events(self)
    }

    fn finish(self: Box<Self>) -> Result<Report, RunError> {
        let (summary, tables) = Network::finish(*self)?;
        Ok(Report::new(&summary, &tables))
    }
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
        "single_switch" => {
            let scenario = Scenario::from_json(json)?;
            if scenario.topology.kind != TopologyName::Star {
                return Err(ScenarioError {
                    key: "topology.kind".into(),
                    message:
                        "single_switch is one switch (\"star\"); racks are built by design \"rifl\""
                            .into(),
                });
            }
            Ok(Box::new(single_switch::build(&scenario)))
        }
        "cell_fabric" => Ok(Box::new(cell_fabric::build(&Scenario::from_json(json)?)?)),
        "rifl" => Ok(Box::new(rifl::build(&Scenario::from_json(json)?)?)),
        "rifl_link" => Ok(Box::new(rifl::link::build(json)?)),
        "clint" => Ok(Box::new(clint::build(json)?)),
        other => Err(ScenarioError {
            key: "design".into(),
            message: format!("expected one of {}, got {other:?}", DESIGNS.join(", ")),
        }),
    }
}
